"""MC100: schema validation, with a compiled fast path and jsonschema as the reference.

The check itself is :func:`mc100` (a document rule like those of
:mod:`risutools.contract.rules`, which runs it first); :func:`schema_issues` lists the
errors of a JSON object.

The fast path is jsonschema-rs (a compiled JSON Schema 2020-12 validator): a document it
finds valid is valid, and the errors it lists for one it finds invalid are worded here as
``jsonschema``'s would be (the subschema and the value each error names are read from the
schema and the document themselves, never from a converted copy).  ``jsonschema``, the
reference implementation, lists them instead when the fast path cannot: a value it cannot
take (a string with an unpaired surrogate), a key its error paths misname (an empty key, a
key of digits), an error at a keyword not worded here.  Regex classes differ: Python's
``\\s`` is every character for which ``str.isspace()`` holds, the regex crate's is Unicode
White_Space (``\\x1c``-``\\x1f`` are only the former), so the fast path is given the schema
with ``\\s``/``\\S`` written out as Python reads them; a pattern with another class escape
whose meaning could differ (``\\d \\w \\b``) turns the fast path off.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from functools import cache
from typing import Any

from risutools.checks.registry import check
from risutools.findings import MAX_LISTED
from risutools.jsonplaces import escape_pointer_token, pointer_of
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


#: Python's end of text in a pattern (``$`` would also match before a final newline)
_PY_END = "$(?!\\n)"


def python_pattern(p: str) -> str:
    """``p`` with ``\\s``/``\\S`` (outside ``[...]``) as classes of Python's whitespace,
    and Python's end of text, ``$(?!\\n)`` (outside ``[...]``), as the regex crate's
    ``$``, which matches at the end of the text only: the lookahead asks nothing more
    there, and without it the whole pattern goes to the regex crate's own engine (not
    the backtracking one lookarounds need: the schema's check 4.4 -> 2.6 us a document).
    A pattern with another group of ``(?`` (a flag, which could make ``$`` match at
    each line's end, or another lookaround) keeps its lookahead."""
    ends = "(?" not in p.replace(_PY_END, "")
    out: list[str] = []
    i = 0
    in_class = False
    while i < len(p):
        c = p[i]
        if ends and c == "$" and not in_class and p.startswith(_PY_END, i):
            out.append("$")
            i += len(_PY_END)
            continue
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


@cache
def jsonschema_validator() -> Any:
    """The jsonschema validator, built once (the reference: what the fast path's error
    list answers as, and the list itself for a value the fast path cannot take).  No format
    checker: the schema uses no ``format`` keyword (digests, names and versions are patterns
    or rules)."""
    from jsonschema import Draft202012Validator

    return Draft202012Validator(schema())  # the schema itself: checked by the tests


_ARTICLE = {"object": "an object", "array": "an array", "string": "a string",
            "boolean": "a boolean", "integer": "an integer", "number": "a number"}


def _show(v: Any, n: int = 50) -> str:
    if isinstance(v, (dict, list)):
        return json_type_name(v)
    s = repr(v)
    return s if len(s) <= n else s[: n - 1] + "…"


def _message(kw: str, sub: dict[str, Any], inst: Any) -> str | None:
    """One sentence for a schema error of keyword ``kw`` (of the subschema ``sub``) on the
    value ``inst``: what is wrong; what to write instead.  None for a keyword this does not
    word (the caller words it)."""
    val = sub[kw]
    if kw == "type":
        names = [val] if isinstance(val, str) else list(val)
        want = " or ".join(_ARTICLE.get(n, n) for n in names)
        return f"expected {want}, got {json_type_name(inst)}; change the value to {want}"
    if kw == "enum":
        return f"{_show(inst)} is not allowed; use one of: {', '.join(map(str, val))}"
    if kw == "const":
        return f"{_show(inst)} is not allowed; write {val!r}"
    if kw == "pattern":
        desc = sub.get("description") or sub.get("title") or f"/{val}/"
        return f"{_show(inst)} does not have the expected form; write it as: {desc}"
    if kw == "minItems":
        return f"needs at least {val} item(s), has {len(inst)}; add the missing item(s)"
    if kw == "minLength":
        if val == 1:
            return "must not be empty; write a value"
        return f"needs at least {val} characters; write a longer value"
    if kw == "uniqueItems":
        return "items must be unique; remove the repeated item"
    return None


def _issues_of(kw: str, sub: dict[str, Any], ptr: str, inst: Any
               ) -> list[tuple[str, str]] | None:
    """The (pointer, message) pairs of one schema error: keyword ``kw`` of the subschema
    ``sub`` failed on the value ``inst`` at ``ptr``; None for a keyword not worded here."""
    if kw == "additionalProperties" and isinstance(inst, dict):
        known = sub.get("properties", {})
        return [(f"{ptr}/{escape_pointer_token(k)}",
                 f"unknown property {k!r}; remove it or rename it with an 'x-' prefix "
                 "(extension)")
                for k in sorted(inst) if k not in known and not k.startswith("x-")]
    if kw == "required" and isinstance(inst, dict):
        return [(ptr, f"missing required property {k!r}; add it")
                for k in sub[kw] if k not in inst]
    message = _message(kw, sub, inst)
    return None if message is None else [(ptr, message)]


def _subschema(path: Any) -> dict[str, Any] | None:
    """The subschema at ``path`` (keys and indices from the schema's root; a ``$ref`` step
    follows the reference within the schema), or None when the path leads elsewhere."""
    root = schema()
    node: Any = root
    for step in path:
        if step == "$ref" and isinstance(node, dict) and isinstance(node.get("$ref"), str):
            ref = node["$ref"]
            if not ref.startswith("#/"):
                return None
            node = root
            for token in ref[2:].split("/"):
                node = node.get(token) if isinstance(node, dict) else None
        elif isinstance(node, dict) and isinstance(step, str):
            node = node.get(step)
        elif isinstance(node, list) and isinstance(step, int) and 0 <= step < len(node):
            node = node[step]
        else:
            return None
    return node if isinstance(node, dict) else None


_MISSING = object()


def _value_at(doc: Any, path: Any) -> Any:
    """The value of ``doc`` at ``path`` (the document's own, never a converted copy), or
    ``_MISSING`` when the path does not lead to one."""
    for step in path:
        try:
            doc = doc[step]
        except (KeyError, IndexError, TypeError):
            return _MISSING
    return doc


def _keys_named_plainly(doc: Any) -> bool:
    """No object key in ``doc`` that the fast path's error paths misname: it drops an empty
    key from a path and gives a key of digits as an array index (and a key that is no
    string, which only a value built in code holds, is left to jsonschema too)."""
    stack = [doc]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            for k, x in v.items():
                if type(k) is not str or not k or k.isdigit():
                    return False
                if isinstance(x, (dict, list)):
                    stack.append(x)
        elif isinstance(v, list):
            stack.extend(x for x in v if isinstance(x, (dict, list)))
    return True


def _fast_issues(doc: Any) -> list[tuple[str, str]] | None:
    """The schema errors of ``doc`` as the fast path lists them (each worded as
    :func:`_reference_issues` words jsonschema's), or None when jsonschema must list them:
    no fast path, a value it cannot take, a key its error paths misname, an error at a
    keyword not worded here.  The two lists are equal (tests/test_contract_schema.py checks
    it on mutated documents)."""
    rs = _compiled()
    if rs is None or not _keys_named_plainly(doc):
        return None
    out: list[tuple[str, str]] = []
    try:
        for err in rs.iter_errors(doc):
            where, at = err.schema_path, err.instance_path
            sub = _subschema(where[:-1]) if where else None
            value = _value_at(doc, at)
            found = None if sub is None or where[-1] not in sub or value is _MISSING \
                else _issues_of(where[-1], sub, pointer_of(at), value)
            if found is None:
                return None
            out += found
    except (ValueError, TypeError, OverflowError):  # a value it cannot take
        return None
    return out


def _reference_issues(doc: Any) -> list[tuple[str, str]]:
    """jsonschema's errors of ``doc``, worded (the reference list)."""
    out: list[tuple[str, str]] = []
    for err in jsonschema_validator().iter_errors(doc):
        out += _worded(err)
    return out


def _worded(err: Any) -> list[tuple[str, str]]:
    """The issues of one of jsonschema's errors."""
    ptr = pointer_of(err.absolute_path)
    if err.validator == "propertyNames":
        return [(ptr, f"a key is not allowed here ({err.message}); rename or remove it")]
    found = _issues_of(err.validator, err.schema, ptr, err.instance)
    return found if found is not None else [
        (ptr, f"{err.message}; fix the value to match the schema")]


#: a document the schema refuses that holds more values than this has its errors read by
#: jsonschema's own validator, one at a time, and only the first ones listed
#: (:func:`_first_issues`): the compiled validator makes every error at once, at about
#: 2.5 KB each (3.5 million integers among the capabilities: 47 s and 8 GB before its first
#: error), so it is handed only documents whose errors are bounded by their values
FAST_VALUES = 20_000


def schema_issues(doc: Any) -> list[tuple[str, str]]:
    """Every schema error as (pointer, message), in a stable order; empty when valid.  A
    document of more than :data:`FAST_VALUES` values: the first errors jsonschema finds,
    as :func:`_first_issues` lists them."""
    if fast_check()(doc):
        return []
    if _values_past(doc, FAST_VALUES):
        return _first_issues(doc)
    found = _fast_issues(doc)
    return sorted(set(found if found is not None else _reference_issues(doc)))


def _values_past(doc: Any, limit: int) -> bool:
    """Whether ``doc`` holds more than ``limit`` values below it, counted a level at a time
    (``gc.get_referents`` lists a level's values in one C call; a dict's keys are not
    counted when they are all strings) and no further than the limit."""
    level, count = [doc], 0
    while level:
        below = gc.get_referents(*level)
        count += len(below)
        if count > limit:
            return True
        level = [v for v in below if type(v) is dict or type(v) is list]
    return False


def _first_issues(doc: Any) -> list[tuple[str, str]]:
    """The first schema errors jsonschema finds in ``doc`` (its walk's order, which is the
    same for the same document), worded and sorted, at most
    :data:`~risutools.findings.MAX_LISTED` less one, and when it finds more, one more
    issue at the document that says its errors are not all listed."""
    out: set[tuple[str, str]] = set()
    more = False
    for err in jsonschema_validator().iter_errors(doc):
        if len(out) >= MAX_LISTED - 1:
            more = True
            break
        out.update(_worded(err))
    issues = sorted(out)[:MAX_LISTED - 1]
    if more or len(out) > len(issues):
        issues.insert(0, ("", f"the schema finds more errors than the first {len(issues):,} "
                              f"listed in a document of more than {FAST_VALUES:,} values; "
                              "fix these and validate again"))
    return issues


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
