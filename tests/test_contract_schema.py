"""MC100's fast path (jsonschema-rs) never calls an invalid document valid, and calls
every valid ordinary document valid, as jsonschema decides; the error list is jsonschema's."""

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
json_value = st.recursive(
    json_leaf,
    lambda inner: st.one_of(st.lists(inner, max_size=3),
                            st.dictionaries(st.sampled_from(["a", "x-a", "", "title"]), inner,
                                            max_size=3)),
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


def test_without_the_fast_path_jsonschema_decides(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(schema_mod, "fast_check", lambda: (lambda doc: False))
    doc = seed()
    assert schema_issues(doc) == []
    doc["component_type"] = 7
    assert schema_issues(doc) and schema_issues(doc)[0][0] == "/component_type"


def _whole_document_issues(doc: Any) -> list[tuple[str, str]]:
    """schema_issues with jsonschema run over the whole document (no property narrowing)."""
    with pytest.MonkeyPatch.context() as m:
        m.setattr(schema_mod, "_failing_properties", lambda doc: None)
        return schema_issues(doc)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_errors_under_failing_properties_are_the_whole_documents(doc: Any) -> None:
    """jsonschema is run only under the top-level properties the fast path names: the
    issues are exactly those of a run over the whole document."""
    assert schema_issues(doc) == _whole_document_issues(doc)


def test_failing_properties_named_or_whole_document() -> None:
    doc = seed()
    doc["projection"]["flagship"] = "yes"
    doc["payload"]["idea_layers"] = 3
    assert schema_mod._failing_properties(doc) == ["payload", "projection"]
    doc["unknown"] = 1  # an error at the top level itself: the whole document
    assert schema_mod._failing_properties(doc) is None
    del doc["unknown"]
    del doc["capabilities"]  # a missing required property: the top level again
    assert schema_mod._failing_properties(doc) is None


def test_the_schema_is_a_valid_2020_12_schema() -> None:
    """The schema is checked here, not at run time (it is the package's own file)."""
    Draft202012Validator.check_schema(schema_mod.schema())
