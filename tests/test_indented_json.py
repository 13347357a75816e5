"""``canonical.indented`` (the replay report's writer) gives exactly the bytes of
``json.dumps(value, ensure_ascii=False, indent=1, sort_keys=True) + "\\n"``, whether orjson
writes them or ``json`` does (floats it would spell otherwise, keys that are not strings,
big integers, NaN, subclasses)."""

from __future__ import annotations

import enum
import json
import math
import os
import random
import struct
from typing import Any

import pytest

from risutools import canonical
from risutools.canonical import indented, indented_text


def _reference(value: Any) -> bytes:
    return (json.dumps(value, ensure_ascii=False, indent=1, sort_keys=True) + "\n").encode()


_FLOATS = [0.0, -0.0, 0.5, -1.25, 1e-4, 9.99e-5, 1e-5, 1e15, 9.999e15, 1e16, 1.5e300, 0.1,
           1 / 3, 123456.789, -2.5e-7, 100.0]
_STRINGS = ["", "a", "키 값", "\u2028", "\x7f", "\x00\x1f\b\f\n\r\t", '"\\', "😀", "e1", "/"]


def _value(rng: random.Random, depth: int) -> Any:
    k = rng.random()
    if depth > 5 or k < 0.4:
        return rng.choice([*_FLOATS, *_STRINGS, 0, -7, 2**63 - 1, True, False, None])
    if k < 0.75:
        return {rng.choice(_STRINGS) + str(rng.randrange(4)): _value(rng, depth + 1)
                for _ in range(rng.randrange(6))}
    return [_value(rng, depth + 1) for _ in range(rng.randrange(6))]


def test_indented_is_json_dumps_on_random_values() -> None:
    rng = random.Random(23)
    for _ in range(3000):
        v = _value(rng, 0)
        assert indented(v) == _reference(v), v
        two = (json.dumps(v, ensure_ascii=False, indent=2, sort_keys=True) + "\n").encode()
        assert indented(v, indent=2) == two, v
        assert indented_text(v, indent=2) == two.decode(), v


def test_indented_takes_one_or_two_spaces_only() -> None:
    with pytest.raises(ValueError):
        indented({}, indent=4)


def test_canonical_with_floats_is_the_json_encoder() -> None:
    """Floats are written by orjson too now (when ``repr`` has no exponent for them)."""
    enc = json.JSONEncoder(ensure_ascii=False, allow_nan=False, sort_keys=True,
                           separators=(",", ":"))
    rng = random.Random(2323)
    for _ in range(3000):
        v = _value(rng, 0)
        assert canonical.canonical(v) == enc.encode(v).encode("utf-8"), v
    for bad in (math.nan, [math.inf], {"x": -math.inf}):
        with pytest.raises(ValueError):
            canonical.canonical(bad)


def test_float_spelling_of_orjson_is_repr_where_it_is_used() -> None:
    """The premise of the float test in ``_spelled_alike``: from 1e-4 up to 1e16, orjson
    spells a float as ``repr`` does (random magnitudes and random bit patterns)."""
    orjson = pytest.importorskip("orjson")
    rng = random.Random(5)
    checked = 0
    for _ in range(200_000):
        x = 10 ** rng.uniform(-4, 16) * rng.choice((1, -1))
        y = struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0]
        for f in (x, y):
            if 1e-4 <= abs(f) < 1e16:
                assert orjson.dumps(f) == repr(f).encode(), f
                checked += 1
    assert checked > 200_000


class _Level(enum.IntEnum):
    ONE = 1


@pytest.mark.parametrize("odd", [
    2**64, -(2**70), math.nan, math.inf, -math.inf, 1e-5, 1e16, {1: "int key"},
    {True: "bool key"}, {None: 1}, {1.5: 2}, _Level.ONE, [[[[]]]], {"a": ()}, (1, 2),
])
def test_indented_is_json_dumps_where_orjson_would_differ(odd: Any) -> None:
    for v in (odd, {"x": [odd, 1.5]}, [{"k": {"z": odd}}]):
        assert indented(v) == _reference(v)
        for n in (1, 2):
            text = json.dumps(v, ensure_ascii=False, indent=n, sort_keys=True) + "\n"
            assert indented_text(v, indent=n) == text
            assert indented(v, indent=n) == text.encode()


@pytest.mark.parametrize("n", [1, 2])
def test_indented_text_keeps_an_unpaired_surrogate_as_json_does(n: int) -> None:
    """A file name of undecodable bytes (``os.fsdecode``) holds lone surrogates: orjson
    refuses them, the text is ``json``'s."""
    name = os.fsdecode(b"bad-\xff\xfe.json")
    for v in (name, {"file": name, "n": [1, 2.5]}, [{"k": name}]):
        text = json.dumps(v, ensure_ascii=False, indent=n, sort_keys=True) + "\n"
        assert indented_text(v, indent=n) == text
        with pytest.raises(UnicodeEncodeError):  # (the bytes form cannot hold one)
            indented(v, indent=n)


def test_orjson_writes_the_plain_reports(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fast path is taken for a report-like value (the test would pass on ``json``
    alone otherwise): orjson's output, halved, is returned."""
    calls = []
    real = canonical.halved
    monkeypatch.setattr(canonical, "halved", lambda out, n: calls.append(n) or real(out, n))
    v = {"requests": [{"n": i, "pct": i / 7, "state": {"on": True, "ids": ["a", "b"]}}
                      for i in range(50)], "summary": {"verdict": "passed"}}
    assert indented(v) == _reference(v)
    assert calls == [5]  # container levels: the report, requests, a row, state, ids
