"""MC100's fast path (jsonschema-rs) never calls an invalid document valid, and calls
every valid ordinary document valid, as jsonschema decides; the error list, worded, is
jsonschema's."""

from __future__ import annotations

import copy
import json
import math
from typing import Any

import pytest
from harness import SEED
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from risutools.contract import schema as schema_mod
from risutools.contract.schema import (
    UnsupportedPattern,
    fast_check,
    python_pattern,
    schema,
    schema_issues,
)

VALIDATOR = Draft202012Validator(schema())
FAST = fast_check()

json_leaf = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 3), st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(["", "x", "module", "risu.module", "sha256:" + "a" * 64, "Token Budget",
                     "token-budget", "candidate", "1.0.0", "v1", "risu:1", "x-ext", "한국어",
                     # whitespace to Python's re and not to the regex crate, and the reverse
                     "risu:a\x1cb", "risu:a\x1f", "risu:a\xa0b", "risu:a\u180eb", "risu:a b",
                     "risu:a\u2028", "\ud800", "risu:\ud800"]),
    st.just(10**20), st.just(float("inf")),
)
# object keys: an empty key and one of digits are those jsonschema-rs misnames in its paths
KEYS = ["a", "x-a", "", "title", "7", "a/b~c"]
json_value = st.recursive(
    json_leaf,
    lambda inner: st.one_of(st.lists(inner, max_size=3),
                            st.dictionaries(st.sampled_from(KEYS), inner, max_size=3)),
    max_leaves=6,
)


def seed() -> dict[str, Any]:
    return json.loads(SEED.read_text(encoding="utf-8"))


def _paths(v: Any, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(v, dict):
        for k, x in v.items():
            out += _paths(x, (*prefix, k))
    elif isinstance(v, list):
        for i, x in enumerate(v):
            out += _paths(x, (*prefix, i))
    return out


SEED_PATHS = _paths(seed())


@st.composite
def mutated(draw: st.DrawFn) -> Any:
    doc = seed()
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(SEED_PATHS))
        op = draw(st.sampled_from(["replace", "delete", "add", "dup"]))
        if not path:
            continue
        parent = doc
        try:
            for k in path[:-1]:
                parent = parent[k]
            last = path[-1]
            if op == "replace":
                parent[last] = draw(json_value)
            elif op == "delete":
                del parent[last]
            elif op == "add" and isinstance(parent, dict):
                parent[draw(st.sampled_from(["x-new", "unknown", "title", "tags"]))] = draw(
                    json_value)
            elif op == "dup" and isinstance(parent, list) and parent:
                parent.append(copy.deepcopy(parent[0]))
        except (KeyError, IndexError, TypeError):
            continue
    return doc




def ordinary(v: Any) -> bool:
    """No value jsonschema-rs cannot take (then it says "invalid" and jsonschema decides)."""
    if isinstance(v, dict):
        return all(ordinary(k) and ordinary(x) for k, x in v.items())
    if isinstance(v, list):
        return all(ordinary(x) for x in v)
    if isinstance(v, float):
        return math.isfinite(v)
    if isinstance(v, int) and not isinstance(v, bool):
        return -(2**63) <= v < 2**64
    if isinstance(v, str):
        return not any(0xD800 <= ord(c) <= 0xDFFF for c in v)
    return True


def agrees(doc: Any) -> None:
    valid = VALIDATOR.is_valid(doc)
    fast = FAST(doc)
    assert not fast or valid  # never a false "valid"
    if ordinary(doc):
        assert fast == valid


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_fast_path_agrees_with_jsonschema_on_mutations(doc: Any) -> None:
    agrees(doc)


@settings(max_examples=200, deadline=None)
@given(json_value)
def test_fast_path_agrees_on_arbitrary_values(v: Any) -> None:
    agrees(v)


def test_seed_valid_both_ways() -> None:
    assert FAST(seed()) and VALIDATOR.is_valid(seed())


@pytest.mark.parametrize("source_id", [
    "risu:1", "risu:a\x1cb", "risu:a\x1f", "risu:a\xa0b", "risu:a\u180eb", "risu:a b",
    "risu:a\n", "risu:\u3000", "risu:\ud800"])
def test_whitespace_as_python_reads_it(source_id: str) -> None:
    doc = seed()
    doc["provenance"]["source_refs"][0]["source_id"] = source_id
    agrees(doc)
    assert (schema_issues(doc) == []) == VALIDATOR.is_valid(doc)


def test_python_pattern() -> None:
    assert python_pattern("^a\\S+$") == "^a[^" + schema_mod._PY_SPACE + "]+$"
    assert python_pattern("\\\\S") == "\\\\S"  # an escaped backslash, then S
    assert python_pattern("[a\\]]\\s") == "[a\\]][" + schema_mod._PY_SPACE + "]"
    for p in ("[\\S]", "\\d", "\\w+", "\\bx"):
        with pytest.raises(UnsupportedPattern):
            python_pattern(p)
    # Python's end of text becomes the regex crate's $; an escaped $, one in a class, and
    # a pattern with another group of (? keep the lookahead
    assert python_pattern("^a+$(?!\\n)") == "^a+$"
    assert python_pattern("^(a$(?!\\n)|b$(?!\\n))") == "^(a$|b$)"
    for kept in ("a\\$(?!\\n)", "[$(?!\\n)]", "(?m)^a$(?!\\n)", "(?=a)a$(?!\\n)",
                 "a$(?!\\n)(?<!b)"):
        assert python_pattern(kept) == kept


def test_a_key_that_is_no_string_is_left_to_jsonschema() -> None:
    """A dict built in code may hold a key that is no string (a loaded document never
    does): the fast path's error list steps aside for it, and no traceback."""
    doc = seed()
    doc["payload"]["boundaries"] = {7: "x"}
    assert not schema_mod._keys_named_plainly(doc)
    assert schema_mod._fast_issues(doc) is None
    assert schema_issues(doc) == _reference(doc)


def _patterns(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [*([value["pattern"]] if isinstance(value.get("pattern"), str) else []),
                *[p for k, v in value.items() if k == "patternProperties" for p in v],
                *[p for v in value.values() for p in _patterns(v)]]
    return [p for v in value for p in _patterns(v)] if isinstance(value, list) else []


def test_the_fast_paths_patterns_match_what_pythons_do() -> None:
    """Each of the schema's patterns (and a few of the same kinds), as the fast path gives
    them to jsonschema-rs, matches exactly the strings Python's ``re`` matches with the
    pattern as written: a final newline, a newline inside, a ``$`` and whitespace
    included."""
    import re

    import jsonschema_rs

    patterns = [*sorted(set(_patterns(schema()))),
                "^a+$(?!\\n)", "^(a$(?!\\n)|b)", "a\\$(?!\\n)", "(?m)^a$(?!\\n)", "^x-"]
    assert any(p.endswith("$(?!\\n)") for p in _patterns(schema()))
    texts = ["", "a", "aa", "a\n", "a\n\n", "\na", "a\nb", "b", "a$", "a$\n", "x-a", "x-\n",
             "module.risu.1.x", "module.risu.1.x\n", "1.0.0", "1.0.0\n", "risu.module",
             "risu.module\n", "risu:1", "risu:1\n", "risu:a b", "tag-a", "tag-a\n", "abc_1"]
    for p in patterns:
        fast = jsonschema_rs.Draft202012Validator({"type": "string",
                                                   "pattern": python_pattern(p)})
        for t in texts:
            assert fast.is_valid(t) == (re.search(p, t) is not None), (p, t)


def test_without_the_fast_path_jsonschema_decides(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(schema_mod, "fast_check", lambda: (lambda doc: False))
    doc = seed()
    assert schema_issues(doc) == []
    doc["component_type"] = 7
    assert schema_issues(doc) and schema_issues(doc)[0][0] == "/component_type"


def _reference(doc: Any) -> list[tuple[str, str]]:
    """The error list as jsonschema (the reference implementation) gives it, worded."""
    return sorted(set(schema_mod._reference_issues(doc)))


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_fast_error_list_is_jsonschemas(doc: Any) -> None:
    """The fast path's error list, worded, is jsonschema's: the same pointers and messages
    (or it steps aside: None, and jsonschema lists them)."""
    fast = schema_mod._fast_issues(doc)
    if ordinary(doc) and schema_mod._keys_named_plainly(doc):
        assert fast is not None
    assert schema_issues(doc) == _reference(doc)
    if fast is not None:
        assert sorted(set(fast)) == _reference(doc)


def _broken_everywhere() -> dict[str, Any]:
    """The seed with one error for each keyword the schema uses (but ``propertyNames``,
    broken only by an empty key: see the next tests)."""
    doc = seed()
    doc["contract"] = "matrix-component-v0"  # const
    doc["component_type"] = "widget"  # enum
    del doc["component_id"]  # required
    doc["unknown"] = 1  # additionalProperties (top level)
    doc["x-mine"] = 1  # an extension: allowed
    doc["provenance"]["source_refs"] = []  # minItems
    doc["payload"]["state_effects"] = {"k": 5, "j": ""}  # type, minLength
    doc["projection"]["tags"] = ["a", "a"]  # uniqueItems
    doc["projection"]["flagship"] = "yes"  # type
    return doc


def test_every_keyword_worded() -> None:
    """Each keyword's sentence, written out here by hand."""
    doc = _broken_everywhere()
    issues = schema_issues(doc)
    assert schema_mod._fast_issues(doc) is not None  # the fast path listed them
    assert issues == _reference(doc)
    got = dict(issues)
    assert got["/contract"] == ("'matrix-component-v0' is not allowed; write "
                                "'matrix-component-v1'")
    assert got["/component_type"].startswith("'widget' is not allowed; use one of: ")
    assert ("", "missing required property 'component_id'; add it") in issues
    assert got["/unknown"] == ("unknown property 'unknown'; remove it or rename it with an "
                               "'x-' prefix (extension)")
    assert "/x-mine" not in got
    assert got["/provenance/source_refs"] == ("needs at least 1 item(s), has 0; add the "
                                              "missing item(s)")
    assert got["/payload/state_effects/j"] == "must not be empty; write a value"
    assert got["/payload/state_effects/k"] == ("expected a string, got an integer; change "
                                               "the value to a string")
    assert got["/projection/tags"] == "items must be unique; remove the repeated item"
    assert got["/projection/flagship"] == ("expected a boolean, got a string; change the "
                                           "value to a boolean")


def test_pattern_worded_by_its_description() -> None:
    doc = seed()
    doc["provenance"]["source_refs"][0]["source_id"] = "no colon"
    issues = schema_issues(doc)
    assert issues == _reference(doc) and len(issues) == 1
    ptr, message = issues[0]
    assert ptr == "/provenance/source_refs/0/source_id"
    assert message.startswith("'no colon' does not have the expected form; write it as: ")


def test_a_value_the_fast_path_cannot_take_goes_to_jsonschema() -> None:
    doc = seed()
    doc["projection"]["flagship"] = "risu:\ud800"  # an unpaired surrogate
    assert schema_mod._fast_issues(doc) is None
    assert schema_issues(doc) == _reference(doc) != []


@pytest.mark.parametrize("value", [10**20, -(10**30), 2**64, float("inf"), 1e300])
def test_numbers_past_64_bits_and_not_finite_worded_alike(value: Any) -> None:
    doc = seed()
    doc["projection"]["flagship"] = value
    assert schema_issues(doc) == _reference(doc) != []


def test_a_keyword_not_worded_goes_to_jsonschema(monkeypatch: pytest.MonkeyPatch) -> None:
    """An error at a keyword the wording does not know (a schema grown since) is listed
    by jsonschema, with its own message."""
    monkeypatch.setattr(schema_mod, "_message", lambda kw, sub, inst: None)
    doc = seed()
    doc["projection"]["flagship"] = "yes"
    assert schema_mod._fast_issues(doc) is None
    assert schema_issues(doc) == [("/projection/flagship",
                                   "'yes' is not of type 'boolean'; fix the value to match "
                                   "the schema")]


@pytest.mark.parametrize("key", ["", "0", "12"])
def test_a_key_the_fast_paths_paths_misname_goes_to_jsonschema(key: str) -> None:
    """jsonschema-rs drops an empty key from an error's path and gives a key of digits as
    an array index: such a document's errors are jsonschema's own."""
    doc = seed()
    doc["payload"]["state_effects"] = {key: None, "a": None}
    assert schema_mod._fast_issues(doc) is None
    issues = schema_issues(doc)
    assert (f"/payload/state_effects/{key}",
            "expected a string, got null; change the value to a string") in issues
    empty_key = ("/payload/state_effects", "must not be empty; write a value")  # propertyNames
    assert (empty_key in issues) == (key == "")


def test_subschema_paths() -> None:
    assert schema_mod._subschema([]) is schema_mod.schema()
    assert schema_mod._subschema(["$defs", "sentence"]) == schema_mod.schema()["$defs"]["sentence"]
    assert schema_mod._subschema(["properties", "nope"]) is None
    assert schema_mod._subschema(["required", 99]) is None
    assert schema_mod._subschema(["properties", 3]) is None


def test_the_schema_is_a_valid_2020_12_schema() -> None:
    """The schema is checked here, not at run time (it is the package's own file)."""
    Draft202012Validator.check_schema(schema_mod.schema())
