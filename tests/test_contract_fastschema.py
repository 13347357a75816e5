"""The compiled fast path agrees with jsonschema on valid and mutated documents."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from risutools.contract.fastschema import UnsupportedSchema, compile_schema, json_equal
from risutools.contract.schema import fast_check, schema

SEED = Path(__file__).resolve().parents[1] / "fixtures" / "documents" / "seed-000-context-cutter.json"  # noqa: E501
VALIDATOR = Draft202012Validator(schema())
FAST = fast_check()

json_leaf = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 3), st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(["", "x", "module", "risu.module", "sha256:" + "a" * 64, "Token Budget",
                     "token-budget", "candidate", "1.0.0", "v1", "risu:1", "x-ext", "한국어"]),
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


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_fast_path_agrees_with_jsonschema_on_mutations(doc: Any) -> None:
    assert FAST(doc) == VALIDATOR.is_valid(doc)


@settings(max_examples=200, deadline=None)
@given(json_value)
def test_fast_path_agrees_on_arbitrary_values(v: Any) -> None:
    assert FAST(v) == VALIDATOR.is_valid(v)


def test_seed_valid_both_ways() -> None:
    assert FAST(seed()) and VALIDATOR.is_valid(seed())


@pytest.mark.parametrize(("schema_", "value"), [
    ({"enum": [1, True]}, 1), ({"enum": [1, True]}, True), ({"enum": [1]}, True),
    ({"const": 0}, False), ({"const": 1}, 1.0), ({"type": "integer"}, 1.0),
    ({"type": "integer"}, True), ({"type": "number"}, False),
    ({"uniqueItems": True}, [1, True]), ({"uniqueItems": True}, [1, 1.0]),
    ({"uniqueItems": True}, [{"a": 1}, {"a": 1}]), ({"uniqueItems": True}, [[1], [True]]),
    ({"properties": {"x-a": {"type": "string"}}, "patternProperties": {"^x-": {"minLength": 2}}},
     {"x-a": "a"}),
    ({"minLength": 2}, "한"), ({"pattern": "^a$"}, "a\n"),
])
def test_edge_semantics_match(schema_: dict, value: Any) -> None:
    assert compile_schema(schema_)(value) == Draft202012Validator(schema_).is_valid(value)


def test_unknown_keyword_refused_at_compile_time() -> None:
    with pytest.raises(UnsupportedSchema):
        compile_schema({"oneOf": [{"type": "string"}]})
    with pytest.raises(UnsupportedSchema):
        compile_schema({"$ref": "https://example.com/x"})


def test_json_equal() -> None:
    assert json_equal(1, 1.0) and not json_equal(1, True) and not json_equal(0, False)
    assert json_equal({"a": [1]}, {"a": [1.0]}) and not json_equal("1", 1)
