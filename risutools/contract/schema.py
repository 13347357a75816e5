"""MC100: schema validation, with a compiled fast path and jsonschema for the error list.

The check itself is :func:`mc100` (a document rule like those of
:mod:`risutools.contract.rules`, which runs it first); :func:`schema_issues` lists the
errors of a JSON object.

The fast path is jsonschema-rs (a compiled JSON Schema 2020-12 validator): a document it
finds valid is valid.  Anything else — a document it finds invalid, or one it cannot take
(a string with an unpaired surrogate, an integer past 64 bits) — goes to ``jsonschema``,
the reference implementation, whose ``iter_errors`` lists every error (and finds none
where the two disagree).  Regex classes differ: Python's ``\\s`` is every character for
which ``str.isspace()`` holds, the regex crate's is Unicode White_Space (``\\x1c``-``\\x1f``
are only the former), so the fast path is given the schema with ``\\s``/``\\S`` written
out as Python reads them; a pattern with another class escape whose meaning could differ
(``\\d \\w \\b``) turns the fast path off.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import cache
from typing import Any

from risutools.checks.registry import check
from risutools.jsonlines import escape_pointer_token
from risutools.jsontypes import json_type_name
from risutools.resources import load_schema
from risutools.settings.config import Settings

Check = Callable[[Any], bool]

SCHEMA_NAME = "matrix-component-v1.schema.json"


@cache
def schema() -> dict[str, Any]:
    return load_schema(SCHEMA_NAME)


# Every character Python's ``re`` counts as whitespace in a str pattern.
_PY_SPACE = "".join(c for c in map(chr, range(0x3001)) if c.isspace())
_UNSURE = frozenset("dDwWbB")


class UnsupportedPattern(ValueError):
    """A pattern whose meaning could differ between Python's re and the regex crate."""


def python_pattern(p: str) -> str:
    """``p`` with ``\\s``/``\\S`` (outside ``[...]``) as classes of Python's whitespace."""
    out: list[str] = []
    i = 0
    in_class = False
    while i < len(p):
        c = p[i]
        if c == "\\" and i + 1 < len(p):
            e = p[i + 1]
            if e in "sS":
                if in_class:
                    raise UnsupportedPattern(p)
                out.append(("[" if e == "s" else "[^") + _PY_SPACE + "]")
            elif e in _UNSURE:
                raise UnsupportedPattern(p)
            else:
                out.append(p[i : i + 2])
            i += 2
            continue
        if c == "[" and not in_class:
            in_class = True
        elif c == "]" and in_class:
            in_class = False
        out.append(c)
        i += 1
    return "".join(out)


def _for_fast_path(v: Any) -> Any:
    if isinstance(v, dict):
        out: dict[str, Any] = {}
        for k, x in v.items():
            if k == "patternProperties" and isinstance(x, dict):
                out[k] = {python_pattern(pk): _for_fast_path(px) for pk, px in x.items()}
            elif k == "pattern" and isinstance(x, str):
                out[k] = python_pattern(x)
            else:
                out[k] = _for_fast_path(x)
        return out
    if isinstance(v, list):
        return [_for_fast_path(x) for x in v]
    return v


@cache
def _compiled() -> Any:
    """The jsonschema-rs validator of the fast path, or None when there is none."""
    try:
        import jsonschema_rs

        return jsonschema_rs.Draft202012Validator(_for_fast_path(schema()))
    except (ImportError, UnsupportedPattern):  # no fast path: jsonschema alone
        return None


@cache
def fast_check() -> Check:
    """``is_valid(doc)``: True only when ``doc`` is valid (False may be wrong: then
    ``jsonschema`` decides)."""
    rs = _compiled()
    if rs is None:
        return lambda doc: False

    def check(doc: Any) -> bool:
        try:
            return bool(rs.is_valid(doc))
        except (ValueError, TypeError, OverflowError):  # a value it cannot take
            return False

    return check


def _failing_properties(doc: dict[str, Any]) -> list[str] | None:
    """The top-level properties under which the fast path finds an error, or None when the
    whole document must go to ``jsonschema`` (an error at the top level itself, a property
    the schema does not name, no fast path, a value it cannot take).

    Exact because the schema's top level relates no property to another (``type``,
    ``required``, ``properties``, ``patternProperties``, ``additionalProperties``: no
    ``if``/``dependent*``/``unevaluated*``), so the errors under one property are those of
    its own subschema alone; and a property's subtree that the fast path finds valid is
    valid, as a whole document is (the fast path's one promise)."""
    rs = _compiled()
    if rs is None:
        return None
    known = schema()["properties"]
    keys: set[str] = set()
    try:
        for err in rs.iter_errors(doc):
            path = err.instance_path
            if not path or not isinstance(path[0], str) or path[0] not in known:
                return None
            keys.add(path[0])
    except (ValueError, TypeError, OverflowError):
        return None
    return sorted(keys) if keys else None


@cache
def jsonschema_validator() -> Any:
    """The jsonschema validator, built once.  No format checker: the schema uses no
    ``format`` keyword (digests, names and versions are patterns or rules)."""
    from jsonschema import Draft202012Validator

    return Draft202012Validator(schema())  # the schema itself: checked by the tests


def _pointer(path: Any) -> str:
    return "".join("/" + escape_pointer_token(str(p)) for p in path)


_ARTICLE = {"object": "an object", "array": "an array", "string": "a string",
            "boolean": "a boolean", "integer": "an integer", "number": "a number"}


def _show(v: Any, n: int = 50) -> str:
    if isinstance(v, (dict, list)):
        return json_type_name(v)
    s = repr(v)
    return s if len(s) <= n else s[: n - 1] + "…"


def _message(err: Any) -> str:
    """One sentence for a schema error: what is wrong; what to write instead."""
    kw = err.validator
    inst = err.instance
    val = err.validator_value
    if kw == "type":
        names = [val] if isinstance(val, str) else list(val)
        want = " or ".join(_ARTICLE.get(n, n) for n in names)
        return f"expected {want}, got {json_type_name(inst)}; change the value to {want}"
    if kw == "enum":
        return f"{_show(inst)} is not allowed; use one of: {', '.join(map(str, val))}"
    if kw == "const":
        return f"{_show(inst)} is not allowed; write {val!r}"
    if kw == "pattern":
        desc = err.schema.get("description") or err.schema.get("title") or f"/{val}/"
        return f"{_show(inst)} does not have the expected form; write it as: {desc}"
    if kw == "minItems":
        return f"needs at least {val} item(s), has {len(inst)}; add the missing item(s)"
    if kw == "minLength":
        if val == 1:
            return "must not be empty; write a value"
        return f"needs at least {val} characters; write a longer value"
    if kw == "uniqueItems":
        return "items must be unique; remove the repeated item"
    return f"{err.message}; fix the value to match the schema"


def _errors(doc: Any) -> Iterator[Any]:
    """jsonschema's errors of ``doc``: those under the properties the fast path names
    (:func:`_failing_properties`), else of the whole document."""
    validator = jsonschema_validator()
    keys = _failing_properties(doc) if isinstance(doc, dict) else None
    if keys is None:
        yield from validator.iter_errors(doc)
        return
    props = schema()["properties"]
    for k in keys:
        yield from validator.descend(doc[k], props[k], path=k, schema_path=k)


def schema_issues(doc: Any) -> list[tuple[str, str]]:
    """Every schema error as (pointer, message); empty when valid."""
    if fast_check()(doc):
        return []
    out: list[tuple[str, str]] = []
    for err in _errors(doc):
        ptr = _pointer(err.absolute_path)
        if err.validator == "propertyNames":
            out.append((ptr, f"a key is not allowed here ({err.message}); rename or remove it"))
            continue
        if err.validator == "additionalProperties" and isinstance(err.instance, dict):
            known = err.schema.get("properties", {})
            for k in sorted(err.instance):
                if k not in known and not k.startswith("x-"):
                    out.append((f"{ptr}/{escape_pointer_token(k)}",
                                f"unknown property {k!r}; remove it or rename it with an "
                                "'x-' prefix (extension)"))
            continue
        if err.validator == "required" and isinstance(err.instance, dict):
            for k in err.validator_value:
                if k not in err.instance:
                    out.append((ptr, f"missing required property {k!r}; add it"))
            continue
        out.append((ptr, _message(err)))
    # a stable, de-duplicated order
    return sorted(set(out))


def not_object_message(doc: Any) -> str:
    """MC100's message for a document that is not a JSON object."""
    return (f"the document is {json_type_name(doc)}, not a JSON object; write one "
            "matrix-component-v1 object per file (or per NDJSON line)")


@check("MC100", "error", "document", "schema")
def mc100(doc: Any, cfg: Settings) -> Iterator[tuple[str, str]]:
    """The document satisfies schemas/matrix-component-v1.schema.json (JSON Schema
    2020-12); every schema error is listed with its JSON pointer.

    Why: Every consumer of the catalog reads documents by the schema; a field of the wrong
    type or name is lost or misread downstream.

    Fix: Add the missing field, fix the type or enum value, or remove the unknown property
    (extensions use an `x-` prefix).
    """
    if not isinstance(doc, dict):
        yield ("", not_object_message(doc))  # the other rules read objects only
        return
    yield from schema_issues(doc)
