"""The fast path of JSON loading (orjson) and of the canonical hash: same values, same
refusals (duplicate keys, NaN, depth, surrogates, numbers), same bytes as the exact path."""

from __future__ import annotations

import enum
import importlib
import json
import math

import pytest

from risutools.contract.loaders import load_bytes
from risutools.values import (
    MAX_DEPTH,
    fast_json,
    fast_json_many,
    parse_json_exact,
    parse_json_text,
)

canon_mod = importlib.import_module("risutools.canonical")


def _json_canonical(value: object) -> bytes:
    return canon_mod._ENCODER.encode(value).encode("utf-8")


def _same_as_exact(text: str) -> None:
    """parse_json_text answers exactly as the hook-based parser."""
    got = parse_json_text(text, line=3)
    want = parse_json_exact(text, line=3)
    assert got[1] == want[1], text
    if want[1] is None:
        assert got[0] == want[0], text
        assert json.dumps(got[0]) == json.dumps(want[0])  # same types (1 vs 1.0 vs True)


DUPLICATES = [
    ('{"a": 1, "a": 2}', "/a"),
    ('{"x": {"y": {"z": [1, {"k": 1, "k": 1}]}}}', "/x/y/z/1/k"),
    ('{"list": [{"a": 1}, {"b": 2, "c": 3, "b": 4}]}', "/list/1/b"),
    ('{"a": 1, "\\u0061": 2}', "/a"),  # equal once decoded
    ('{"o": {"\\u0061b": 1, "a\\u0062": 2}}', "/o/ab"),
    ('{"k:1": "v:2", "k:1": "v"}', "/k:1"),  # colons in keys and values
    ('{"a\\u003ab": 1, "a:b": 2}', "/a:b"),  # a colon spelled as an escape
    ('{"a": "x\\u003ay", "a": "z"}', "/a"),
    ('{"": 1, "": 2}', "/"),
    ('{"t~/": 1, "t~/": 2}', "/t~0~1"),
]


@pytest.mark.parametrize(("text", "pointer"), DUPLICATES)
def test_duplicate_keys_refused_with_the_same_pointer_and_line(text: str, pointer: str) -> None:
    assert fast_json(text.encode()) is None
    doc, problem = parse_json_text(text, line=None)
    assert doc is None and problem is not None
    assert problem.pointer == pointer
    assert "duplicate key" in problem.message
    _same_as_exact(text)


def test_duplicate_key_line_in_a_file_and_in_ndjson() -> None:
    text = '{\n  "a": 1,\n  "b": [\n    {"c": 1,\n     "c": 2}\n  ]\n}\n'
    out = load_bytes(text.encode(), "f.json", fmt="json")
    assert not out.documents
    (p,) = out.problems
    assert (p.line, p.pointer) == (5, "/b/0/c")
    nd = b'{"a": 1}\n{"a": 1, "\\u0061": 2}\n{"b": 2}\n'
    out = load_bytes(nd, "c.ndjson", fmt="ndjson")
    assert [d.line for d in out.documents] == [1, 3]
    (p,) = out.problems
    assert (p.line, p.pointer) == (2, "/a")


@pytest.mark.parametrize("text", [
    '{"a": NaN}', '{"a": -Infinity}', '[Infinity]',
    '{"a": "\\ud800"}', '{"\\udc00": 1}',  # unpaired surrogates
    '{"a": 12345678901234567890123}', '{"a": -9999999999999999999}',  # past 64 bits
    '{"a": 1e400}', '{"a": 1.5}', '{"a": 1E2}', '{"a": -0.0}', '[0.1, 2e-7]',
    '\ufeff{"a": 1}', '{"a": 1} x', '{"a": [1, 2,]}', '{"a": 01}', "",
    " 1.5", "[\n 2E3]", '{"a":[1,\t-0.5]}', '{"a": "1", "b": 3.0}',
    "18446744073709551616", "[-9223372036854775809]", '{"a": 1, "b": [2, 1e0]}',
])
def test_what_the_fast_path_leaves_to_the_exact_one(text: str) -> None:
    assert fast_json(text.encode("utf-8", "surrogatepass")) is None
    _same_as_exact(text)


@pytest.mark.parametrize(("text", "value"), [
    ("-1234567890123456789", -1234567890123456789),
    ('{"a": 9223372036854775807}', {"a": 9223372036854775807}),
    ("[18446744073709551615, -9223372036854775808]", [18446744073709551615, -(2**63)]),
    ('{"a": [0, -0, 10000000000000000000]}', {"a": [0, 0, 10**19]}),
])
def test_integers_of_64_bits_are_taken_with_their_exact_value(text: str, value: object) -> None:
    """Integers up to 64 bits, however many digits, are read by orjson exactly as by
    ``json`` (only a float, or an integer past 64 bits, which orjson reads as a float,
    is left to the exact path)."""
    fast = fast_json(text.encode())
    assert fast is not None
    assert fast[0] == value == json.loads(text)
    assert json.dumps(fast[0]) == json.dumps(value)  # integers, not floats
    assert fast[1] == _json_canonical(value)
    _same_as_exact(text)


def test_depth_bound_is_the_same() -> None:
    ok = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    deep = "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1)
    assert fast_json(ok.encode()) is not None
    assert fast_json(deep.encode()) is None
    wide = '{"a": [' + ", ".join(["[1]"] * 200) + "]}"  # many brackets, shallow
    assert fast_json(wide.encode()) is not None
    for text in (ok, deep, wide, '{"a":' * 70 + "1" + "}" * 70):
        _same_as_exact(text)
    assert "nested deeper" in (parse_json_text(deep, line=None)[1] or _nope()).message


def _nope() -> object:
    raise AssertionError("expected a finding")


def test_fast_path_takes_ordinary_documents_with_the_same_value_and_hash() -> None:
    text = ('{"contract": "matrix-component-v1", '
            '"n": [1, -2, 0, 999999999999999999, -999999999999999999], '
            '"s": "한국어 \\" \\\\ \\n \\u0000 \\ud83d\\ude00 sha256:3e5.", '
            '"t": true, "f": false, "z": null, "e": {}, "l": [], '
            '"x": "a: 1.5, [2e3, 12345678901234567890"}')
    fast = fast_json(text.encode())
    assert fast is not None
    value, canon = fast
    assert value == json.loads(text)
    assert canon == _json_canonical(value)
    doc, problem = parse_json_text(text, line=None)
    assert problem is None and doc == value


def test_load_records_the_hash_the_exact_path_would_compute() -> None:
    lines = [b'{"a": 1, "b": ["x", {"c": "d"}]}', b'{"a": 1.5}', b'{"k": "\\u003a"}']
    out = load_bytes(b"\n".join(lines) + b"\n", "c.ndjson", fmt="ndjson")
    assert len(out.documents) == 3
    assert out.documents[0].sha256 == canon_mod.doc_sha256(out.documents[0].doc)
    assert out.documents[1].sha256 is None  # a float: the exact path, hashed later
    assert out.documents[2].sha256 is None  # an escaped colon: the exact path
    js = load_bytes(lines[0], "a.json", fmt="json")
    assert js.documents[0].sha256 == canon_mod.doc_sha256(json.loads(lines[0]))


def test_fuzz_fast_path_answers_as_the_exact_path() -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    # pieces of JSON, well formed or not: duplicates, escapes, numbers, nesting
    pieces = st.sampled_from([
        "{", "}", "[", "]", ",", ":", " ", "\n", '"a"', '"b"', '"\\u0061"', '"a:b"',
        '"a\\u003ab"', '"\\""', '"\\\\"', '"x\\\\"', "1", "-2", "0", "1.5", "2e3", "NaN",
        "true", "null", "12345678901234567890", '"\\ud800"', '"한:글"', '"\\n"',
    ])

    @given(st.lists(pieces, max_size=30).map("".join))
    @settings(max_examples=3000, deadline=None)
    def run(text: str) -> None:
        _same_as_exact(text)

    run()

    values = st.recursive(
        st.none() | st.booleans() | st.integers(-(2**70), 2**70)
        | st.floats(allow_nan=False, allow_infinity=False)
        | st.text(alphabet=st.sampled_from("ab:\\\"\n\x00\x1f\x7f한😀\u2028"), max_size=6),
        lambda inner: st.lists(inner, max_size=4) | st.lists(
            st.tuples(st.text(alphabet=st.sampled_from("aab:\\"), max_size=3), inner),
            max_size=4),
        max_leaves=20)

    def render(v: object) -> str:
        # a list of pairs becomes an object that may repeat keys; keys spelled plainly
        # or escaped
        if isinstance(v, list) and v and all(isinstance(x, tuple) for x in v):
            return "{" + ", ".join(
                f"{json.dumps(k) if i % 2 else json.dumps(k, ensure_ascii=False)}: {render(x)}"
                for i, (k, x) in enumerate(v)) + "}"
        if isinstance(v, list):
            return "[" + ", ".join(render(x) for x in v) + "]"
        return json.dumps(v, ensure_ascii=bool(isinstance(v, str) and len(v) % 2))

    @given(values)
    @settings(max_examples=2000, deadline=None)
    def run_values(v: object) -> None:
        text = render(v)
        _same_as_exact(text)
        fast = fast_json(text.encode("utf-8"))
        if fast is not None:
            assert fast[1] == _json_canonical(fast[0])

    run_values()


# --------------------------------------------------------------------------- canonical


def test_canonical_fast_path_is_byte_identical() -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    text = st.text(st.characters(exclude_categories=("Cs",)), max_size=8)
    values = st.recursive(
        st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | text,
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(text, inner, max_size=4),
        max_leaves=25)

    @given(values)
    @settings(max_examples=2000, deadline=None)
    def run(v: object) -> None:
        assert canon_mod.plain_levels(v) is not None
        assert canon_mod.plain_canonical(v) == _json_canonical(v)
        assert canon_mod.canonical(v) == _json_canonical(v)

    run()


class _Color(enum.Enum):
    RED = 1


class _Int(int):
    pass


@pytest.mark.parametrize("value", [
    {"a": 1.0}, [1e16], {"a": [0.1]}, {"big": 2**64}, {"neg": -(2**63) - 1},
    {1: "int key"}, {"a": _Int(3)}, {"a": _Color.RED}, (1, 2),
])
def test_canonical_leaves_the_rest_to_json(value: object) -> None:
    assert canon_mod.plain_levels(value) is None or canon_mod.plain_canonical(value) is None
    try:
        want: object = _json_canonical(value)
    except (TypeError, ValueError) as exc:
        want = type(exc)
    try:
        got: object = canon_mod.canonical(value)
    except (TypeError, ValueError) as exc:
        got = type(exc)
    assert got == want


def test_canonical_refusals_unchanged() -> None:
    with pytest.raises(ValueError):
        canon_mod.canonical({"a": math.nan})
    with pytest.raises(UnicodeEncodeError):
        canon_mod.canonical({"a": "\ud800"})
    cyc: list[object] = []
    cyc.append(cyc)
    with pytest.raises((ValueError, RecursionError)):
        canon_mod.canonical(cyc)
    deep: object = 1
    for _ in range(300):
        deep = [deep]
    assert canon_mod.canonical(deep) == _json_canonical(deep)


FAST_MANY = ['{"a": 1}', '{"a": [1, {"b": "x:y"}]}', '[]', '"s"', '{"k": "\\u0041"}',
             '{"a": 1, "b": {"c": null, "d": true}}', '{"가": "나"}',
             "[" * MAX_DEPTH + "]" * MAX_DEPTH]
SLOW_ONE = ['{"a": 1, "a": 2}', '{"a": 1, "\\u0061": 2}', '{"a": 1.5}', '{"a": "\\u003a"}',
            '{"a": "\\u003A", "b": 1}', '{"a": NaN}', '{"a": 1', '{"a": 1} {"a": 2}',
            '{"a": 12345678901234567890123}', "[" * 70 + "]" * 70, '{"a": 1, "a": 1}']


@pytest.mark.parametrize("slow", SLOW_ONE)
def test_the_fast_path_over_many_texts_is_the_fast_path_over_each(slow: str) -> None:
    """``fast_json_many`` gives each text's value when ``fast_json`` gives every one of
    them, else None: one text the fast path leaves to the exact one, among many it takes
    (its duplicate key counted against the others' colons), makes the whole group None."""
    texts = [t.encode() for t in FAST_MANY]
    many = fast_json_many(texts)
    assert many is not None
    assert many == [fast_json(t)[0] for t in texts]  # type: ignore[index]
    assert fast_json(slow.encode()) is None
    for at in (0, 3, len(texts)):
        assert fast_json_many([*texts[:at], slow.encode(), *texts[at:]]) is None
    assert fast_json_many([]) == []


@pytest.mark.parametrize(("text", "line", "pointer"), [
    ('{\n  "a": 1,\n  "b": 1E400\n}\n', 3, "/b"),
    ('{"a": [1, 2,\n -2.5e308]}', 2, "/a/2"),
    ('{"a": "1e400",\n "b": {"c": 1e999}}', 2, "/b/c"),
])
def test_a_number_that_reads_as_an_infinity_is_refused_where_it_is(
        text: str, line: int, pointer: str) -> None:
    """JSON has no infinity: a number past a float's range is refused like NaN/Infinity
    (MC000, its line and pointer), in a file and as an NDJSON line; a string that looks
    like one is a string."""
    out = load_bytes(text.encode(), "f.json", fmt="json")
    assert not out.documents
    (p,) = out.problems
    assert (p.line, p.pointer) == (line, pointer)
    assert "out of a JSON number's range" in p.message
    one_line = text.replace("\n", " ")
    out = load_bytes(f'{{"ok": 1}}\n{one_line}\n'.encode(), "c.ndjson", fmt="ndjson")
    assert [d.line for d in out.documents] == [1]
    (p,) = out.problems
    assert (p.line, p.pointer) == (2, pointer)


def test_a_number_that_underflows_is_read_as_json_reads_it() -> None:
    out = load_bytes(b'{"a": 1e-400, "b": 1e308}', "f.json", fmt="json")
    assert not out.problems and out.documents[0].doc == {"a": 0.0, "b": 1e308}
