"""loads_object: the fast path (json.loads's own depth limit + a walk of the parsed
containers) refuses and accepts exactly what the reference (a bracket scan before
json.loads) did, with the same codes and messages; the memory bound is a number."""

from __future__ import annotations

import json
import math
import os
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from risutools.errors import FormatError
from risutools.formats import jsonsafe
from risutools.formats.jsonsafe import (
    BYTE_COST,
    ITEM_COST,
    MAX_DEPTH,
    MAX_PARSE_COST,
    loads_object,
    max_depth_exceeded,
    parse_cost,
)
from risutools.jsonplaces import int_too_long, scan
from risutools.jsontypes import nests_deeper

FUZZ = settings(
    max_examples=int(os.environ.get("RISU_FUZZ_EXAMPLES", "300")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    database=None,
)


def _finite(token: str) -> float:
    """A float that overflows is refused: JSON has no number for an infinity."""
    value = float(token)
    if math.isinf(value):
        raise ValueError(f"{token[:40]} is out of a JSON number's range (it reads as Infinity)")
    return value


def reference(raw: bytes, what: str = "JSON") -> tuple[str, Any]:
    """What loads_object answered before the fast path: ("ok", value) or (code, message)."""
    try:
        text = jsonsafe.decode_utf8(raw, where="w", what=what)
    except FormatError as exc:
        return exc.code, exc.why
    at = max_depth_exceeded(text)
    if at is not None:
        return "json-too-deep", (f"{what} nests deeper than {MAX_DEPTH} levels (at character "
                                 f"{at}); refusing to parse")
    try:
        value = json.loads(text, parse_constant=jsonsafe._no_constants, parse_float=_finite)
    except json.JSONDecodeError as exc:
        # (json's messages that end in "at" are not followed by a second "at")
        return "not-json", (f"{what} is not valid JSON: {exc.msg.removesuffix(' at')} at line "
                            f"{exc.lineno} column {exc.colno}")
    except (ValueError, RecursionError) as exc:
        found = scan(text).nonfinite  # (NaN, Infinity, a number that overflows: its place)
        place = f" at line {found[1]} ({found[0] or '/'})" if found else ""
        # (Python's words for an integer past its digit bound: the reader's own instead)
        why = int_too_long(exc) or exc
        return "not-json", f"{what} is not valid JSON: {why}{place}"
    if not isinstance(value, dict):
        found = jsonsafe.json_type_name(value)
        return "not-an-object", f"{what} must be a JSON object, found {found}"
    return "ok", value


def actual(raw: bytes) -> tuple[str, Any]:
    try:
        return "ok", loads_object(raw, where="w")
    except FormatError as exc:
        return exc.code, exc.why


def nested(depth: int, leaf: str = "1", tail: str = "") -> bytes:
    opens = "".join('{"k":' if i % 2 else "[" for i in range(depth))
    closes = "".join("}" if i % 2 else "]" for i in reversed(range(depth)))
    return ('{"a":' + opens + leaf + closes + tail + "}").encode()


@pytest.mark.parametrize("raw", [
    nested(MAX_DEPTH - 1),  # deepest accepted (the wrapper object is one level)
    nested(MAX_DEPTH),  # one too deep
    nested(MAX_DEPTH + 50),  # deeper than the limit, within json.loads's own
    nested(5000),  # past json.loads's recursion limit
    nested(100_000),
    nested(MAX_DEPTH + 1, tail=", oops"),  # too deep and a syntax error after it
    nested(MAX_DEPTH + 1, leaf="NaN"),  # too deep and a NaN
    b'{"a": [' + b'"[[[[",' * 500 + b"1]}",  # brackets in strings do not count
    b'{"a": "\\"' + b"[" * 1000 + b'"}',
    b'{"a": [' + b"[" * 300 + b"1, oops",  # too deep and unterminated
    b'{"a": NaN}', b'{"a": -Infinity}', b'{"a": 1e400}', b'{"a": "\\ud800"}',
    b'{"a": [1, {"b": -1.5E309}]}', b'{"a": 1e-400}', b'{"a": "1e400", "b": 2e308}',
    b'{"a": 1, "a": 2}', b'{"a": ' + b"1" * 5000 + b"}", b"[1, 2]", b'"s"', b"null",
    b"\xef\xbb\xbf{}", b'{"a": "\xff"}', b'{"a": "\xed\xa0\x80"}', b"{", b"", b"{} x",
    b'{"a": "\x00"}', b'{"a": 18446744073709551616}', b'{"a": -0.0}',
])
def test_same_answer_as_the_reference(raw: bytes) -> None:
    assert actual(raw) == reference(raw)


def test_deep_refusals_name_the_character() -> None:
    code, why = actual(nested(MAX_DEPTH))
    assert code == "json-too-deep"
    # the wrapper '{"a":' (5), then 100 '[' and 99 '{"k":' before the 201st container
    assert f"at character {5 + 100 * 1 + 99 * 5}" in why


def test_without_the_parsers_own_bound_the_scan_runs_first(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jsonsafe, "_parser_bounds_depth", lambda: False)
    for raw in (nested(MAX_DEPTH - 1), nested(MAX_DEPTH), nested(100_000), b"{}"):
        assert actual(raw) == reference(raw)


def test_nests_deeper_counts_levels_of_dicts_and_lists() -> None:
    v: Any = 1
    for i in range(MAX_DEPTH):
        v = {"k": v} if i % 2 else [v]
    assert not nests_deeper(v, MAX_DEPTH)
    assert nests_deeper([v], MAX_DEPTH)
    assert not nests_deeper("[[[[", MAX_DEPTH)
    # keys that are strings, and values of every other type, are not containers
    assert not nests_deeper({"a": "[", "b": 1.5, "c": None, "d": True}, MAX_DEPTH)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False,
                                                          allow_infinity=False)
    | st.text(alphabet="[]{}\",\\:ab가😀 \n", max_size=8),
    lambda kids: st.lists(kids, max_size=4)
    | st.dictionaries(st.text(alphabet="[]{}\"ab", max_size=3), kids, max_size=4),
    max_leaves=30,
)


@FUZZ
@given(json_values, st.integers(0, 250), st.binary(max_size=4), st.integers(0, 1000))
def test_fuzz_same_answer_as_the_reference(value: Any, depth: int, junk: bytes,
                                           cut: int) -> None:
    for _ in range(depth):
        value = [value]
    raw = json.dumps({"v": value}, ensure_ascii=bool(cut % 2)).encode()
    for sample in (raw, raw[: len(raw) - cut] + junk, raw[:cut] + junk + raw[cut:]):
        assert actual(sample) == reference(sample)


def test_memory_bound_counts_values_before_parsing() -> None:
    assert parse_cost(b"{}") == (BYTE_COST + ITEM_COST) * 2  # small: the worst case
    n = MAX_PARSE_COST // ITEM_COST  # so many empty lists cannot pass
    raw = b'{"a":[' + b"[]," * n + b"[]]}"
    assert parse_cost(raw) > MAX_PARSE_COST
    code, why = actual(raw)
    assert code == "too-large"  # the container bound of jsonscan.precheck comes first
    assert "arrays/objects (the bound)" in why
    # within the count bounds, the memory estimate decides: 1 M values of ~40 bytes each
    many = b'{"a":[' + b",".join([b'"' + b"x" * 48 + b'"'] * 999_000) + b"]}"
    code, why = actual(many)
    assert code == "too-large"
    assert "holds too many values" in why and f"bound {MAX_PARSE_COST >> 20} MiB" in why
    # the same bytes as one string cost only their size: accepted
    text = b'{"a":"' + b"a" * len(raw) + b'"}'
    assert parse_cost(text) == BYTE_COST * len(text) + ITEM_COST
    assert actual(text)[0] == "ok"


def test_memory_bound_counts_every_value_starting_byte() -> None:
    big = (MAX_PARSE_COST // (BYTE_COST + ITEM_COST)) + 10
    for ch in b",[{":
        raw = bytes([ch]) * big
        assert parse_cost(raw) == (BYTE_COST + ITEM_COST) * big
    assert parse_cost(b"]" * big) == BYTE_COST * big


def test_code_in_strings_is_not_taken_for_values() -> None:
    """Lua kept in a string has commas and braces galore: the upper-bound count would
    refuse it on memory, so it is counted again outside strings, and accepted."""
    lua = b"local t = {1, 2, {3, 4}, [5] = {6}}\\n" * 400_000  # ~14 MB, ~4 M ',{['
    raw = b'{"type": "risuModule", "trigger": [{"code": "' + lua + b'"}]}'
    assert parse_cost(raw, raw.count(b",") + raw.count(b"[") + raw.count(b"{")) > MAX_PARSE_COST
    code, value = actual(raw)
    assert code == "ok" and value["trigger"][0]["code"].startswith("local t")
