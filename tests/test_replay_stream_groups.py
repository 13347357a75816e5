"""A streamed NDJSON fixture's turns taken a group of lines at a time, a column at a time
(``fixture._group`` / ``_group_turns``): the same turns, ids, notes and refusals as the
reference path (each line parsed, checked and taken alone: ``_turn``), and as the whole
file read (``load_fixture``)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from risutools.errors import ConfigError
from risutools.replay import fixture
from risutools.replay.fixture import load_fixture, stream_fixture

HEAD = ('{"fixture": "conversation-v1", "name": "n", '
        '"messages": [{"id": "h0", "role": "system", "content": "s"}]}')


def _append(*ids: str, content: str = "x") -> str:
    return json.dumps({"append": [{"id": i, "role": "user", "content": content} for i in ids]})


def _good(n: int, start: int = 0) -> list[str]:
    return [_append(f"a{start + i}", f"b{start + i}", content=f"c: {i}") for i in range(n)]


def _write(tmp_path: Path, lines: list[str], name: str = "f.ndjson") -> Path:
    p = tmp_path / name
    p.write_text("\n".join([HEAD, *lines]) + "\n", encoding="utf-8")
    return p


def _read(p: Path, *, grouped: bool, monkeypatch: pytest.MonkeyPatch
          ) -> tuple[list[Any], str, list[Any], Any]:
    """(the turns read, the error's one line or "", the notes, the ids) of ``p`` streamed,
    its groups taken a column at a time or (``grouped=False``) every turn alone."""
    with monkeypatch.context() as m:
        if not grouped:
            m.setattr(fixture, "_group", lambda *a: None)
        fx = stream_fixture(p)
        got: list[Any] = []
        error = ""
        try:
            for t in fx.iter_turns():
                got.append(t)
        except ConfigError as exc:
            error = exc.one_line()
        assert fx.stream is not None
        ids = fx.stream._ids
        return got, error, fx.notes(), (ids.counter, ids.ever, ids.live)


def _same_both_ways(p: Path, monkeypatch: pytest.MonkeyPatch, *, whole: bool = True
                    ) -> tuple[list[Any], str]:
    """(``whole``: the file has one problem at most, which the whole read names too.)"""
    grouped = _read(p, grouped=True, monkeypatch=monkeypatch)
    alone = _read(p, grouped=False, monkeypatch=monkeypatch)
    assert grouped[:3] == alone[:3]
    if not whole:
        return grouped[0], grouped[1]
    if not grouped[1]:
        assert grouped[3] == alone[3]
        whole = load_fixture(p)
        assert grouped[0] == whole.turns and grouped[2] == whole.notes()
    else:
        with pytest.raises(ConfigError) as exc:
            load_fixture(p)
        assert exc.value.one_line() == grouped[1]
    return grouped[0], grouped[1]


def _spy(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether each group was taken a column at a time (``_group`` not None)."""
    taken: list[bool] = []
    real = fixture._group

    def spy(*a: Any) -> Any:
        got = real(*a)
        taken.append(got is not None)
        return got
    monkeypatch.setattr(fixture, "_group", spy)
    return taken


def test_the_usual_shape_is_taken_by_columns(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    lines = _good(600)
    lines[10] = json.dumps({"append": [], "edit": {"id": "a3", "content": "e"}})
    lines[300] = json.dumps({"delete": [{"id": "a3"}, {"id": "h0"}], "toggle": False})
    lines[301] = json.dumps({"metrics": {"used_pct": 10, "remaining_percentage": 50}})
    lines[302] = "{}"
    p = _write(tmp_path, lines)
    monkeypatch.setattr(fixture, "_CHECK_CHUNK", 1 << 20)  # (one block: groups of 256)
    taken = _spy(monkeypatch)
    turns, error = _same_both_ways(p, monkeypatch)
    assert error == "" and len(turns) == 600 and taken == [True, True, True]
    assert turns[10].edit == [("a3", "e")] and turns[300].delete == ["a3", "h0"]
    assert turns[300].toggle is False and turns[301].metrics is not None
    assert turns[599].append[1] == fixture.Message("b599", "user", "c: 599")


BAD_LINES = [
    '{"append": [{"id": "z1", "role": "us',  # truncated
    '{"append": [{"id": "z1", "role": "user", "content": "x"}]',  # truncated
    '{"append": {"id": "z1", "role": "user", "content": "x"}}',  # a mapping, no list
    '{"append": null}',
    '{"append": [["z1", "user", "x"]]}',
    '{"append": ["z1"]}',
    '{"append": [{"id": 5, "role": "user", "content": "x"}]}',
    '{"append": [{"id": "z1", "role": ["user"], "content": "x"}]}',
    '{"append": [{"id": "z1", "role": {"a": 1}, "content": "x"}]}',
    '{"append": [{"id": "z1", "role": true, "content": "x"}]}',
    '{"append": [{"id": "z1", "role": "wizard", "content": "x"}]}',
    '{"append": [{"id": "z1", "role": "user", "content": null}]}',
    '{"append": [{"id": "z1", "role": "user", "content": ["x"]}]}',
    '{"append": [{"id": "z1", "role": "user"}]}',
    '{"append": [{"id": "z1", "role": "user", "content": "x", "extra": 1}]}',
    '{"append": [{"id": "", "role": "user", "content": "x"}]}',
    '{"append": [{"id": "' + "z" * 65 + '", "role": "user", "content": "x"}]}',
    '{"append": [{"id": "z 1", "role": "user", "content": "x"}]}',
    '{"append": [{"id": "z1", "role": "user", "content": "x"}, '
    '{"id": "z1", "role": "user", "content": "y"}]}',  # an id twice in one turn
    '{"append": [{"id": "a5", "role": "user", "content": "x"}]}',  # an id of a turn before
    '{"append": [{"id": "h0", "role": "user", "content": "x"}]}',  # the header's
    '{"append": [{"id": "a299", "role": "user", "content": "x"}]}',  # one of a line after
    '{"append": [{"id": "z1", "role": "user", "content": "x", "id": "z2"}]}',
    '{"append": [{"id": "z1", "role": "user", "content": "x", "\\u0069d": "z2"}]}',
    '{"append": [{"id": "z1", "role": "user", "\\u0063ontent": "x", "content": "y"}]}',
    '{"append": [], "append": [{"id": "z1", "role": "user", "content": "x"}]}',
    '{"append": [{"id": "z1", "role": "user", "content": "a:b"}], "\\u0061ppend": []}',
    '{"append": [{"id": "z1", "role": "user", "content": "a\\u003ab"}]}',  # an escaped colon
    '{"append": [{"id": "z1", "role": "user", "content": "\\ud800"}]}',  # a lone surrogate
    '{"append": [{"id": "z1", "role": "user", "content": "x"}], "bogus": 1}',
    '{"append": [], "edit": {"id": "nope", "content": "x"}}',
    '{"append": [], "edit": {"id": "a299", "content": "x"}}',  # appended on a later line
    '{"delete": {"id": "a3"}, "edit": {"id": "a3", "content": "x"}}',  # edit, then delete
    '{"delete": [{"id": "a3"}, {"id": "a3"}]}',
    '{"toggle": 1}',
    '{"metrics": {"used_pct": 1.5}}',  # a float: the exact path
    '{"metrics": {"used_pct": 5000}}',
    '{"metrics": {"used_pct": NaN}}',
    '{"append": [{"id": "z1", "role": "user", "content": "x"}], "toggle": 1e400}',
    "[1, 2]",
    '"text"',
    "{}",
    "  ",
    "\t",
    "\u3000",  # blank, though no JSON whitespace (orjson refuses it)
    ' {"append": [{"id": "z1", "role": "user", "content": "x"}]} ',  # spaces around
    "",
    '{"append": [{"id": "z.1", "role": "tool", "content": "x"}]}',  # an id of the pattern
    '{"append": [{"role": "user", "content": "x"}]}',  # an id given by its place
    '{"append": [{"id": "z:1", "role": "user", "content": "x"}]}',  # a colon in the id
    # letters and digits that are no ASCII ones (str.isalnum takes them; an id may not hold
    # them): as they are, and escaped
    '{"append": [{"id": "z\u0661", "role": "user", "content": "x"}]}',
    '{"append": [{"id": "\u00b2", "role": "user", "content": "x"}]}',
    '{"append": [{"id": "\uff4d1", "role": "user", "content": "x"}]}',
    '{"append": [{"id": "z\\u0661", "role": "user", "content": "x"}]}',
]


@pytest.mark.parametrize("bad", BAD_LINES)
@pytest.mark.parametrize("at", [0, 100, 255, 256, 299])
def test_a_line_off_the_usual_shape(tmp_path: Path, bad: str, at: int,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """One line off the usual shape (or bad) among 300 usual ones, at the start, the middle
    or the end of a group, or the start of the next: the same turns before it, the same
    refusal (or the same turns) as each line taken alone and as the whole file read."""
    lines = _good(300)
    lines[at] = bad
    turns, error = _same_both_ways(_write(tmp_path, lines), monkeypatch)
    if error:
        assert len(turns) >= at and ("line " in error or "turn " in error)


@pytest.mark.parametrize("first", [250, 255, 256])
def test_an_id_repeated_across_groups(tmp_path: Path, first: int,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """An id appended again in the next group (or in the same one), each group of the
    usual shape on its own: refused at the second, every turn before it read."""
    lines = _good(600)
    lines[first] = _append("dup1")
    lines[first + 10] = _append("dup1")
    taken = _spy(monkeypatch)
    turns, error = _same_both_ways(_write(tmp_path, lines), monkeypatch)
    assert len(turns) == first + 10 and "duplicate message id 'dup1'" in error
    assert taken[0] is True


def test_a_deleted_id_is_not_appended_again(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    lines = _good(20)
    lines[5] = json.dumps({"append": [], "delete": {"id": "a1"}})
    lines[6] = _append("a1")
    turns, error = _same_both_ways(_write(tmp_path, lines), monkeypatch)
    assert len(turns) == 6 and "duplicate message id 'a1'" in error


def test_an_edit_sees_its_own_turns_append(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    lines = _good(20)
    lines[7] = json.dumps({"append": [{"id": "n7", "role": "user", "content": "x"}],
                           "edit": {"id": "n7", "content": "y"}, "delete": {"id": "n7"}})
    lines[8] = json.dumps({"edit": {"id": "n7", "content": "z"}})
    taken = _spy(monkeypatch)
    turns, error = _same_both_ways(_write(tmp_path, lines), monkeypatch)
    assert len(turns) == 8 and "turn 9: edit: unknown-id: no message with id n7" in error
    assert turns[7].edit == [("n7", "y")] and turns[7].delete == ["n7"] and taken == [True]


@pytest.mark.parametrize("seed", range(40))
def test_random_fixtures(tmp_path: Path, seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Random mixes of usual turns, edits, deletes, toggles, metrics and an occasional bad
    line: the group path answers as each line alone and as the whole file read."""
    rng = random.Random(seed)
    live: list[str] = ["h0"]
    lines: list[str] = []
    n = bad = 0
    for _ in range(rng.randrange(1, 700)):
        turn: dict[str, Any] = {}
        r = rng.random()
        if r < 0.85:
            k = rng.randrange(0, 4)
            turn["append"] = [{"id": f"m{n + i}", "role": rng.choice(["user", "assistant"]),
                               "content": rng.choice(["a", "b:c", "가:나", "", "x\u2028y"])}
                              for i in range(k)]
            live += [f"m{n + i}" for i in range(k)]
            n += k
        if r > 0.8 and live:
            turn["edit"] = {"id": rng.choice(live), "content": "e:"}
        if r > 0.9 and len(live) > 1:
            gone = live.pop(rng.randrange(len(live)))
            turn["delete"] = [{"id": gone}]
        if r > 0.95:
            turn["metrics"] = rng.choice([None, {"used_pct": rng.randrange(100)},
                                          {"used_pct": 10, "remaining_percentage": 50}])
        line = json.dumps(turn, ensure_ascii=rng.random() < 0.5)
        if rng.random() < 0.003:
            line = rng.choice(BAD_LINES)
            bad += 1
        lines.append(line)
    _same_both_ways(_write(tmp_path, lines), monkeypatch, whole=bad < 2)


@pytest.mark.parametrize("seed", range(30))
@pytest.mark.parametrize("chunk", [1, 5, 64, 1 << 20])
def test_turns_counted_as_lines_less_blank_ones(seed: int, chunk: int,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """``_count_turns`` (a block whose every line opens with ``{`` counted by its ``\\n{``)
    is the lines less the blank ones, whatever the lines and line ends."""
    monkeypatch.setattr(fixture, "_CHECK_CHUNK", chunk)
    rng = random.Random(seed)
    kinds = [b'{"append": []}', b"{}", b"", b" ", b"\t", b" {}", b"[1]", b"\xe3\x80\x80",
             b'{"a": "x\n{"}'[:9], b"{\r", b"x"]
    weights = [40, 10, 3, 2, 1, 2, 1, 1, 1, 1, 1] if seed % 2 else [1] * 11
    lines = rng.choices(kinds, weights, k=rng.randrange(1, 400))
    end = rng.choice([b"\n", b"\r\n"])
    data = end.join(lines) + rng.choice([b"", end, end + end])
    want = sum(len(ls) - sum(1 for x in ls if fixture._blank(x))
               for _, ls, _, _ in fixture._line_groups(data, 0, 1))
    assert fixture._count_turns(data, 0) == fixture._count_lines(data, 0) == want
    # from a line's start further in (the header's end), or past the bytes
    start = rng.choice([i + 1 for i, b in enumerate(data) if b == 10] or [0])
    want = sum(len(ls) - sum(1 for x in ls if fixture._blank(x))
               for _, ls, _, _ in fixture._line_groups(data, start, 1))
    assert fixture._count_turns(data, start) == fixture._count_lines(data, start) == want


@pytest.mark.parametrize("tail", [b"", b"\n", b"\r\n", b"\n\n", b"\n \n", b"\r\n\r\n", b"\n{}"])
@pytest.mark.parametrize("body", [b"{}", b"{}\n{}", b"{}\r\n{}", b"{}\n\n{}", b"{}\n {}",
                                  b" {}", b"", b"{}\n\xe3\x80\x80\n{}", b"{\n{"])
def test_turns_counted_at_once_as_line_by_line(body: bytes, tail: bytes) -> None:
    """The count taken by two searches (every line opens with ``{``) is the lines less the
    blank ones, as counted line by line, at the file's end and after a header."""
    for data, start in ((body + tail, 0), (b"{}\n" + body + tail, 3)):
        assert fixture._count_turns(data, start) == fixture._count_lines(data, start)
        lines = data[start:].split(b"\n")
        if data.endswith(b"\n"):
            lines.pop()
        assert fixture._count_turns(data, start) == sum(not fixture._blank(x) for x in lines)



@pytest.mark.parametrize("seed", range(20))
@pytest.mark.parametrize("chunk", [1, 5, 64, 1 << 16])
def test_line_groups_are_the_lines_in_bounded_groups(seed: int, chunk: int,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """``_line_groups``: every line from ``start`` once, in order, with its line break, its
    number and its place in the bytes; a group of at most ``_PARSED_TOGETHER`` lines, whose
    lines but its last hold fewer than ``_CHECK_CHUNK`` bytes (the values parsed at once
    stay a block's, however many lines the file has)."""
    monkeypatch.setattr(fixture, "_CHECK_CHUNK", chunk)
    rng = random.Random(seed)
    end = rng.choice([b"\n", b"\r\n"])
    lines = [rng.choice([b"{}", b"", b" ", b'{"append": []}', b"x" * rng.randrange(300)])
             for _ in range(rng.randrange(1, 900))]
    tail = rng.choice([b"", end])
    data = b"{}" + end + end.join(lines) + tail
    if not tail and not lines[-1]:  # (the file's last line break ends a line: none after it)
        lines.pop()
    start = 2 + len(end)
    got: list[bytes] = []
    for lineno, group, at, stop in fixture._line_groups(data, start, 2):
        assert lineno == 2 + len(got) and at == start + sum(map(len, got))
        assert b"".join(group) == data[at:stop] and 0 < len(group) <= fixture._PARSED_TOGETHER
        assert sum(map(len, group[:-1])) < chunk and all(x.endswith(b"\n") for x in group[:-1])
        got += group
    assert b"".join(got) == data[start:] and [x.rstrip(b"\r\n") for x in got] == lines
