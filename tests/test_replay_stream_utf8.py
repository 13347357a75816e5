"""A streamed NDJSON fixture is not decoded ahead: each line is checked to be UTF-8 as it is
read (parsed by orjson, or decoded), and a file that is not UTF-8 is refused as the whole
read refuses it (``fixture._refusal``), whatever else is wrong with it."""

from __future__ import annotations

import json
import random
from pathlib import Path

import orjson
import pytest

from risutools.errors import ConfigError
from risutools.replay.fixture import load_fixture, stream_fixture

HEAD = b'{"fixture": "conversation-v1", "name": "n", "messages": []}'


def _turn(i: int, content: bytes = b"x") -> bytes:
    return b'{"append": [{"id": "a%d", "role": "user", "content": "%s"}]}' % (i, content)


def _refused_alike(p: Path) -> str:
    with pytest.raises(ConfigError) as whole:
        load_fixture(p)
    with pytest.raises(ConfigError) as got:
        for _ in stream_fixture(p).iter_turns():
            pass
    assert got.value.one_line() == whole.value.one_line()
    assert "not UTF-8: byte 0x" in got.value.one_line()
    return got.value.one_line()


BAD = [b"\xff", b"\xc0\x80", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xe0\x80", b"\x80"]


@pytest.mark.parametrize("bad", BAD)
@pytest.mark.parametrize("where", ["header", "before", "blank", "first", "middle", "last",
                                   "alone", "after-bad-edit", "too-many"])
def test_a_file_that_is_not_utf8(tmp_path: Path, bad: bytes, where: str,
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Bytes that are not UTF-8 in the header, a line before it, a blank-looking line, a
    line of a group (first, middle, last), a group's one line, or after another problem
    (an edit of no message; more turns than a replay takes): the whole read's refusal."""
    lines = [HEAD] + [_turn(i) for i in range(600)]
    if where == "header":
        lines[0] = HEAD.replace(b'"n"', b'"n' + bad + b'"')
    elif where == "before":
        lines.insert(0, b"  " + bad)
    elif where == "blank":
        lines.insert(300, b" \t" + bad)
    elif where == "alone":
        lines = [HEAD, _turn(0, bad)]
    else:
        at = {"first": 257, "middle": 400, "last": 600}.get(where, 590)
        lines[at] = _turn(at, b"y" + bad + b"z")
    if where == "after-bad-edit":
        lines[3] = b'{"edit": {"id": "nope", "content": "x"}}'
    if where == "too-many":
        monkeypatch.setattr("risutools.replay.fixture.MAX_TURNS", 10)
    p = tmp_path / "f.ndjson"
    p.write_bytes(b"\n".join(lines) + b"\n")
    _refused_alike(p)


def test_orjson_refuses_what_is_not_utf8() -> None:
    """The premise: orjson refuses a text holding bytes that are not UTF-8 exactly when
    ``bytes.decode`` does (random bytes in a JSON string, and the sequences at UTF-8's
    edges)."""
    rng = random.Random(7)
    pool = [bytes([b]) for b in range(0x20, 0x100) if b not in (0x22, 0x5C)]
    edges = [b"\xc2\x80", b"\xdf\xbf", b"\xe0\xa0\x80", b"\xef\xbf\xbf", b"\xed\x9f\xbf",
             b"\xee\x80\x80", b"\xf0\x90\x80\x80", b"\xf4\x8f\xbf\xbf", *BAD,
             b"\xc1\xbf", b"\xe0\x9f\xbf", b"\xf0\x8f\xbf\xbf", b"\xf8\x88\x80\x80\x80"]
    for i in range(20000):
        body = b"".join(rng.choice(pool + edges) for _ in range(rng.randrange(1, 6)))
        text = b'{"a": "' + body + b'"}'
        try:
            body.decode("utf-8")
            utf8 = True
        except UnicodeDecodeError:
            utf8 = False
        try:
            orjson.loads(text)
            taken = True
        except orjson.JSONDecodeError:
            taken = False
        assert taken == utf8, (i, body)


def test_a_utf8_file_streams_as_before(tmp_path: Path) -> None:
    lines = [HEAD] + [_turn(i, "가:é\u2028".encode()) for i in range(300)]
    p = tmp_path / "f.ndjson"
    p.write_bytes(b"\n".join(lines))
    turns = list(stream_fixture(p).iter_turns())
    assert turns == load_fixture(p).turns
    assert json.loads(lines[1])["append"][0]["content"] == turns[0].append[0].content
