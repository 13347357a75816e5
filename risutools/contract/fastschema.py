"""A small compiler from a JSON Schema (the subset our schema uses) to a boolean check.

``compile_schema(schema)`` returns ``is_valid(instance) -> bool`` whose answer is
the same as ``jsonschema.Draft202012Validator(schema).is_valid(instance)`` for
every JSON value: it implements the same keyword semantics (``properties`` and
``patternProperties`` both apply to a key; ``additionalProperties`` to keys
matched by neither; ``pattern`` is ``re.search``; booleans are not numbers;
equality in ``const``/``enum``/``uniqueItems`` tells ``true`` from ``1``).  It
refuses, at compile time, any keyword it does not implement, so a schema
change can never make the two disagree silently.  The equivalence is tested
against jsonschema on generated documents (``tests/test_contract_fastschema.py``).

It is the fast path only: when it says "invalid", ``jsonschema``'s
``iter_errors`` runs to list every error with its JSON pointer.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

Check = Callable[[Any], bool]

# Keywords that only annotate (no effect on validity).
_ANNOTATIONS = frozenset(
    {"$schema", "$id", "$comment", "$defs", "title", "description", "examples", "default",
     "deprecated", "readOnly", "writeOnly"}
)
_SUPPORTED = frozenset(
    {"type", "const", "enum", "required", "properties", "patternProperties",
     "additionalProperties", "propertyNames", "items", "minItems", "maxItems", "uniqueItems",
     "pattern", "minLength", "maxLength", "$ref"}
)


class UnsupportedSchema(ValueError):
    """The schema uses a keyword this compiler does not implement."""


def json_equal(a: Any, b: Any) -> bool:
    """JSON equality as jsonschema defines it (``true`` is not ``1``; ``1 == 1.0``)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, str) or isinstance(b, str):
        return isinstance(a, str) and isinstance(b, str) and a == b
    if isinstance(a, dict):
        if not isinstance(b, dict) or len(a) != len(b):
            return False
        return all(k in b and json_equal(v, b[k]) for k, v in a.items())
    if isinstance(a, list):
        if not isinstance(b, list) or len(a) != len(b):
            return False
        return all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    return bool(a == b)


def _is_type(name: str) -> Check:
    if name == "object":
        return lambda x: isinstance(x, dict)
    if name == "array":
        return lambda x: isinstance(x, list)
    if name == "string":
        return lambda x: isinstance(x, str)
    if name == "boolean":
        return lambda x: isinstance(x, bool)
    if name == "null":
        return lambda x: x is None
    if name == "number":
        return lambda x: isinstance(x, (int, float)) and not isinstance(x, bool)
    if name == "integer":
        return lambda x: (isinstance(x, int) and not isinstance(x, bool)) or (
            isinstance(x, float) and x.is_integer()
        )
    raise UnsupportedSchema(f"type {name!r}")


class _Compiler:
    def __init__(self, root: dict[str, Any]) -> None:
        self.root = root
        self.refs: dict[str, Check] = {}

    def ref(self, ref: str) -> Check:
        if ref in self.refs:
            return self.refs[ref]
        if not ref.startswith("#/$defs/") or "/" in ref[len("#/$defs/"):]:
            raise UnsupportedSchema(f"$ref {ref!r} (only #/$defs/<name>)")
        target = self.root.get("$defs", {}).get(ref[len("#/$defs/"):])
        if target is None:
            raise UnsupportedSchema(f"$ref {ref!r} does not resolve")
        cell: list[Check] = []
        self.refs[ref] = lambda x: cell[0](x)  # allows recursion
        compiled = self.compile(target)
        cell.append(compiled)
        self.refs[ref] = compiled
        return compiled

    def compile(self, schema: Any) -> Check:
        if schema is True:
            return lambda x: True
        if schema is False:
            return lambda x: False
        if not isinstance(schema, dict):
            raise UnsupportedSchema(f"schema node {schema!r}")
        unknown = set(schema) - _SUPPORTED - _ANNOTATIONS
        if unknown:
            raise UnsupportedSchema(f"keywords {sorted(unknown)}")
        checks: list[Check] = []
        if "$ref" in schema:
            checks.append(self.ref(schema["$ref"]))
        if "type" in schema:
            t = schema["type"]
            if isinstance(t, list):
                parts = [_is_type(n) for n in t]
                checks.append(lambda x: any(p(x) for p in parts))
            else:
                checks.append(_is_type(t))
        if "const" in schema:
            c = schema["const"]
            if isinstance(c, str):
                checks.append(lambda x: isinstance(x, str) and x == c)
            else:
                checks.append(lambda x: json_equal(x, c))
        if "enum" in schema:
            values = schema["enum"]
            if all(isinstance(v, str) for v in values):
                sv = frozenset(values)
                checks.append(lambda x: isinstance(x, str) and x in sv)
            else:
                checks.append(lambda x: any(json_equal(x, v) for v in values))
        if "pattern" in schema:
            rx = re.compile(schema["pattern"])
            checks.append(lambda x: not isinstance(x, str) or rx.search(x) is not None)
        if "minLength" in schema:
            n_min = schema["minLength"]
            checks.append(lambda x: not isinstance(x, str) or len(x) >= n_min)
        if "maxLength" in schema:
            n_max = schema["maxLength"]
            checks.append(lambda x: not isinstance(x, str) or len(x) <= n_max)
        checks.extend(self._array(schema))
        obj = self._object(schema)
        if obj is not None:
            checks.append(obj)
        if not checks:
            return lambda x: True
        if len(checks) == 1:
            return checks[0]
        tup = tuple(checks)
        return lambda x: all(c(x) for c in tup)

    def _array(self, schema: dict[str, Any]) -> list[Check]:
        out: list[Check] = []
        if "items" in schema:
            item = self.compile(schema["items"])
            out.append(lambda x: not isinstance(x, list) or all(item(v) for v in x))
        if "minItems" in schema:
            lo = schema["minItems"]
            out.append(lambda x: not isinstance(x, list) or len(x) >= lo)
        if "maxItems" in schema:
            hi = schema["maxItems"]
            out.append(lambda x: not isinstance(x, list) or len(x) <= hi)
        if schema.get("uniqueItems") is True:
            out.append(lambda x: not isinstance(x, list) or _unique(x))
        return out

    def _object(self, schema: dict[str, Any]) -> Check | None:
        keys = ("required", "properties", "patternProperties", "additionalProperties",
                "propertyNames")
        if not any(k in schema for k in keys):
            return None
        required = tuple(schema.get("required", ()))
        props = {k: self.compile(v) for k, v in schema.get("properties", {}).items()}
        patterns = tuple(
            (re.compile(p), self.compile(v))
            for p, v in schema.get("patternProperties", {}).items()
        )
        additional = (
            self.compile(schema["additionalProperties"])
            if "additionalProperties" in schema else None
        )
        names = self.compile(schema["propertyNames"]) if "propertyNames" in schema else None
        # key -> (property check or None, pattern checks): keys repeat across documents.
        cache: dict[str, tuple[Check | None, tuple[Check, ...], bool]] = {}

        def plan(key: str) -> tuple[Check | None, tuple[Check, ...], bool]:
            got = cache.get(key)
            if got is None:
                matched = tuple(c for rx, c in patterns if rx.search(key))
                got = (props.get(key), matched, key in props or bool(matched))
                if len(cache) < 4096:
                    cache[key] = got
            return got

        def check(x: Any) -> bool:
            if not isinstance(x, dict):
                return True
            for r in required:
                if r not in x:
                    return False
            for k, v in x.items():
                if names is not None and not names(k):
                    return False
                prop, pats, known = plan(k)
                if prop is not None and not prop(v):
                    return False
                for p in pats:
                    if not p(v):
                        return False
                if not known and additional is not None and not additional(v):
                    return False
            return True

        return check


def _unique(items: list[Any]) -> bool:
    if all(isinstance(v, str) for v in items):
        return len(set(items)) == len(items)
    for i, a in enumerate(items):
        for b in items[i + 1:]:
            if json_equal(a, b):
                return False
    return True


def compile_schema(schema: dict[str, Any]) -> Check:
    """Compile ``schema`` into ``is_valid(instance) -> bool`` (UnsupportedSchema if it can't)."""
    return _Compiler(schema).compile(schema)
