"""An NDJSON fixture streamed (``stream_fixture``): the same fixture, turns and errors as the
whole file read (``load_fixture``), its turns read once as the replay goes."""

from __future__ import annotations

from pathlib import Path

import pytest
from harness import FIXTURES

from risutools.errors import ConfigError
from risutools.replay import api, fixture
from risutools.replay.fixture import Fixture, load_fixture, stream_fixture

HEAD = '{"fixture": "conversation-v1", "name": "n", "messages": [{"role": "user", "content": "a"}]}'
T1 = '{"append": [{"role": "assistant", "content": "b"}]}'
T2 = ('{"edit": {"id": "m0", "content": "c"}, '
      '"metrics": {"used_pct": 10, "remaining_percentage": 50}}')
T3 = '{"delete": {"id": "m1"}, "toggle": false}'
COMP = FIXTURES / "documents" / "seed-000-context-cutter.json"


def _write(tmp_path: Path, data: str | bytes, name: str = "f.ndjson") -> Path:
    p = tmp_path / name
    p.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return p


def _same(a: Fixture, b: Fixture) -> None:
    assert b.stream is not None and b.turns == []
    assert b.turn_count() == len(a.turns)
    turns = list(b.iter_turns())
    assert turns == a.turns
    assert (b.name, b.messages, b.config, b.sha256, b.file) == (
        a.name, a.messages, a.config, a.sha256, a.file)
    assert b.notes() == a.notes()


@pytest.mark.parametrize(
    "text",
    [
        "\n".join((HEAD, T1, T2, T3)) + "\n",
        "\n".join((HEAD, T1, T2, T3)),  # no newline at the end
        "\r\n".join((HEAD, T1, T2, T3)) + "\r\n",
        "\n \n" + "\n\n\t\n".join((HEAD, T1, T2, T3)) + "\n\n",
        "\ufeff" + "\n".join((HEAD, T1, "\u3000", T2, T3)),  # a BOM, a line of a wide space
    ],
)
@pytest.mark.parametrize("chunk", [1, 7, 64, 1 << 20])
def test_streamed_is_the_whole_read(tmp_path: Path, text: str, chunk: int,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """(``chunk``: the bytes a block of lines is cut after, so lines straddle blocks.)"""
    monkeypatch.setattr(fixture, "_CHECK_CHUNK", chunk)
    p = _write(tmp_path, text)
    whole, streamed = load_fixture(p), stream_fixture(p)
    _same(whole, streamed)
    assert len(whole.notes()) == 1
    with pytest.raises(RuntimeError, match="once"):
        list(streamed.iter_turns())


@pytest.mark.parametrize(
    "text",
    [
        "\n".join((HEAD, T1, '{"append": [{"role": "user", "content": "x\u2028y"}]}')),
        "\n".join((HEAD, T1, '{"append": [{"role": "user", "content": "x\u0085y"}]}')),
        HEAD + "\r" + T1 + "\n" + T1,  # a lone carriage return ends a line too
        # each other break str.splitlines knows, in a string and between two lines
        *("\n".join((HEAD, T1, '{"append": [{"role": "user", "content": "x' + c + 'y"}]}'))
          for c in "\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"),
        *(HEAD + "\n" + T1 + c + T1 for c in "\x0b\x1e\u2029"),
    ],
)
def test_other_line_breaks_read_whole(tmp_path: Path, text: str) -> None:
    """A file with a lone carriage return is read whole; the characters ``str.splitlines``
    breaks at besides (U+2028 ...) end no line of an NDJSON fixture, streamed or not (a
    JSON string may hold U+2028, U+2029 and U+0085 as they are)."""
    p = _write(tmp_path, text)
    try:
        whole = load_fixture(p)
    except ConfigError as exc:  # the same refusal either way (a streamed line's: when read)
        with pytest.raises(ConfigError) as got:
            list(stream_fixture(p).iter_turns())
        assert got.value.one_line() == exc.one_line()
        return
    streamed = stream_fixture(p)
    if "\r" in text:
        assert streamed.stream is None and streamed == whole
    else:
        _same(whole, streamed)


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (HEAD + "\n" + T1 + '\n{"append": [{"role": "us', "line 3: bad-fixture: not valid JSON"),
        (HEAD + "\n" + T1 + "\n{edit}\n" + T1, "line 3: bad-fixture: not valid JSON"),
        (T1 + "\n" + T1, "line 1: bad-fixture: the first line must be the fixture header"),
        (HEAD[:-1] + ', "turns": []}\n' + T1, "line 1: bad-fixture: an NDJSON header carries"),
        ("", "bad-fixture: empty file: no fixture in it"),
        ("\ufeff \n\t\n", "bad-fixture: empty file: no fixture in it"),
        (HEAD + "\n\n \n", "turns: bad-fixture: the fixture has no turns"),
        (HEAD + "\n" + T1 + '\n{"delete": {"id": "zz"}}\n', "turn 2: delete: unknown-id: no "),
        (HEAD + '\n{"append": [], "append": []}\n', "line 2: bad-fixture: duplicate key"),
        (HEAD + '\n{"metrics": {"used_pct": NaN}}\n', "line 2: bad-fixture: NaN is not"),
        (HEAD + "\n" + "[" * 2000 + "]" * 2000 + "\n", "line 2: bad-fixture: nested deeper"),
        (HEAD + "\n[1, 2]\n", "turn 1: bad-fixture: a turn must be a mapping"),
        (HEAD + '\n{"bogus": 1}\n', "turn 1: bad-fixture: unknown operation 'bogus'"),
        ('{"fixture": "conversation-v1", "name": "../x"}\n' + T1, "name: bad-fixture: must be"),
        (HEAD + '\n{"metrics": {"age_s": 123456789012345678901234567890}}',
         "turn 1: metrics.age_s: bad-fixture: must be a number"),
        ((HEAD + "\n").encode() + b'{"append": [{"role": "user", "content": "\xff"}]}\n',
         "bad-fixture: not UTF-8: byte 0xff at byte offset"),
        ((HEAD + "\n" + T1).encode("utf-16"), "bad-fixture: file is UTF-16 encoded"),
        (HEAD + "\n" + T1 + "\n" + T1 + "\x00\n", "line 3: bad-fixture: not valid JSON"),
    ],
)
def test_bad_lines_refused_as_when_read_whole(tmp_path: Path, data: str | bytes, why: str,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fixture, "_CHECK_CHUNK", 5)
    p = _write(tmp_path, data)
    with pytest.raises(ConfigError) as whole:
        load_fixture(p)
    with pytest.raises(ConfigError) as got:
        fx = stream_fixture(p)
        list(fx.iter_turns())  # a bad turn is met when the replay reaches it
    assert got.value.one_line() == whole.value.one_line()
    assert why in got.value.one_line() and str(p) in got.value.one_line()


def test_a_bad_late_line_writes_no_report(tmp_path: Path) -> None:
    lines = [HEAD] + [T1.replace('"b"', f'"b{i}"') for i in range(50)] + ['{"append": [{"ro']
    p = _write(tmp_path, "\n".join(lines))
    out = tmp_path / "r.json"
    with pytest.raises(ConfigError, match="line 52: bad-fixture: not valid JSON"):
        api.run_component(COMP, p, output=out)
    assert not out.exists()


def test_streamed_run_writes_the_whole_reads_report(tmp_path: Path) -> None:
    text = "\n".join([HEAD, T1, T2, T3, T1.replace("assistant", "tool")]) + "\n"
    p = _write(tmp_path, text)
    streamed = api.run_component(COMP, p, output=tmp_path / "a.json")
    y = tmp_path / "f.json"  # the same fixture as one JSON mapping: read whole
    y.write_text('{"fixture": "conversation-v1", "name": "n", "messages": [{"role": "user", '
                 '"content": "a"}], "turns": [' + ", ".join([T1, T2, T3, T1.replace(
                     "assistant", "tool")]) + "]}")
    whole = api.run_component(COMP, y, output=tmp_path / "b.json")
    assert streamed.report is not None and whole.report is not None
    assert streamed.report["requests"] and streamed.report["monitor_notes"]
    for k in ("requests", "alerts", "invariants", "summary", "monitor_notes"):
        assert list(streamed.report[k]) == list(whole.report[k]), k


def test_yaml_and_json_read_whole(tmp_path: Path) -> None:
    p = _write(tmp_path, "fixture: conversation-v1\nname: n\nturns: [{}]\n", "f.yaml")
    fx = stream_fixture(p)
    assert fx.stream is None and fx.turn_count() == 1 and fx == load_fixture(p)


@pytest.mark.parametrize("bad", ['{"append": [], "append": []}', '{"metrics": {"used_pct": 1.5}}',
                                 '{"append": [{"role": "user", "content": "\\u003a"}]}',
                                 '{"append": [{"ro', '{"delete": {"id": "nope"}}', " \t"])
@pytest.mark.parametrize("at", [0, 100, 299])
@pytest.mark.parametrize("end", ["\n", "\r\n"])
def test_one_line_of_a_group_read_alone(tmp_path: Path, bad: str, at: int, end: str) -> None:
    """The lines' values are parsed a group at a time (``_PARSED_TOGETHER``): a line the
    fast path leaves to the exact one (a duplicate key, a float, an escaped colon, bad
    JSON), or a bad turn, among hundreds of good ones: the same turns, notes and refusal
    as the whole file read, whatever the line breaks (a group's lines are read with theirs:
    a line read alone is read without, or a ``\\r`` left in it ends the string it cuts)."""
    lines = [T1.replace('"b"', f'"b{i}"') for i in range(300)]
    lines[at] = bad
    p = _write(tmp_path, end.join([HEAD, *lines]) + end)
    try:
        whole = load_fixture(p)
    except ConfigError as exc:
        streamed = stream_fixture(p)
        got = []
        with pytest.raises(ConfigError) as err:
            for t in streamed.iter_turns():
                got.append(t)
        assert err.value.one_line() == exc.one_line()
        assert len(got) == at  # every turn before the bad line, none after
        return
    _same(whole, stream_fixture(p))


def test_ids_taken_without_the_pattern_are_ids_the_pattern_takes() -> None:
    """A message id of ASCII letters and digits alone (at most 64) is taken without the
    pattern; every such id is one the pattern takes, and the others still go to it."""
    import random
    import string

    from risutools.replay.fixture import _ID, _Ids

    alpha = string.ascii_letters + string.digits + "._:- \n\t" + "é가١"
    rng = random.Random(1)
    for _ in range(20000):
        mid = "".join(rng.choice(alpha) for _ in range(rng.randrange(0, 70)))
        if mid.isascii() and mid.isalnum() and len(mid) <= 64:
            assert _ID.match(mid), mid
        ids = _Ids()
        try:
            got = ids.take({"id": mid, "role": "user", "content": ""}, 1, 0).id
        except ConfigError:
            assert not _ID.match(mid), mid
        else:
            assert got == mid and _ID.match(mid), mid
    for bad in ("", "a" * 65, "-a", "a b", "가", "١"):
        with pytest.raises(ConfigError, match="bad message id"):
            _Ids().take({"id": bad, "role": "user", "content": ""}, 1, 0)


@pytest.mark.parametrize("raw", [
    [{"id": "a1", "role": "user", "content": "x"}, {"role": "assistant", "content": "y"},
     {"id": "b.2", "role": "tool", "content": "z"}, {"id": "c3", "role": "user", "content": ""}],
    [{"id": "a1", "role": "user", "content": "x"}, {"id": "a1", "role": "user", "content": "y"}],
    [{"id": "a1", "role": "user", "content": 5}],
    [{"id": "a1", "role": "wizard", "content": "x"}],
    [{"id": "a1", "role": ["user"], "content": "x"}],
    [{"id": "a1", "role": "user", "zz": "x"}],
    [{"id": "a1", "role": "user", "content": None}],
    [{"id": "x" * 65, "role": "user", "content": "x"}],
    [{"id": "ä1", "role": "user", "content": "x"}],
    [["a1", "user", "x"]],
])
def test_take_all_is_take_one_by_one(raw: list[object]) -> None:
    """A turn's messages taken together (``take_all``: the usual shape in one loop) are
    those :meth:`take` gives one by one, ids counted alike; the first bad one refused in
    the same words."""
    def outcome(together: bool) -> object:
        ids = fixture._Ids()
        ids.take({"role": "system", "content": "s"}, 0, 0)  # (one id counted before)
        try:
            if together:
                got = ids.take_all(list(raw), 3)
            else:
                got = [ids.take(m, 3, i) for i, m in enumerate(raw)]
        except ConfigError as exc:
            return str(exc)
        return got, ids.counter, ids.ever, ids.live
    assert outcome(True) == outcome(False)
