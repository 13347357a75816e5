"""Bounded JSON parsing for untrusted module text.

``loads_object`` decodes UTF-8, refuses absurd nesting *before* ``json.loads``
could recurse (a linear bracket-depth scan that skips string literals), refuses
``NaN``/``Infinity`` (not JSON), and requires a top-level object.  Every failure is
a :class:`FormatError` with a stable code and a precise ``where``.
"""

from __future__ import annotations

import json
import re
from typing import Any

from risutools.errors import FormatError

#: deepest nesting of arrays/objects accepted (RisuAI files are < 20 deep)
MAX_DEPTH = 200

# A JSON string literal (unrolled loop: linear, no backtracking blow-up) or a bracket.
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.DOTALL)


def max_depth_exceeded(text: str, limit: int = MAX_DEPTH) -> int | None:
    """Return the character offset where nesting first exceeds ``limit``, else None.

    Strings are skipped so brackets inside them do not count.  An unterminated
    string simply ends the scan (``json.loads`` reports it precisely afterwards).
    """
    if text.count("[") + text.count("{") <= limit:
        return None  # cannot possibly be deeper than the limit
    depth = 0
    for m in _TOKEN.finditer(text):
        c = m.group()
        if c == "[" or c == "{":
            depth += 1
            if depth > limit:
                return m.start()
        elif c == "]" or c == "}":
            depth -= 1
        # string literals: nothing to do
    return None


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def decode_utf8(raw: bytes, *, where: str) -> str:
    """UTF-8 (a leading BOM is tolerated) or ``not-utf8`` with the byte offset."""
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FormatError(
            "not-utf8",
            f"text is not UTF-8 (byte 0x{raw[exc.start]:02x} at byte {exc.start} of the block)",
            where=where,
        ) from None


def loads_object(raw: bytes, *, where: str, what: str = "JSON") -> dict[str, Any]:
    """Parse ``raw`` (UTF-8 JSON) into a dict, safely; see the module docstring."""
    text = decode_utf8(raw, where=where)
    at = max_depth_exceeded(text)
    if at is not None:
        raise FormatError(
            "json-too-deep",
            f"{what} nests deeper than {MAX_DEPTH} levels (at character {at}); refusing to parse",
            where=where,
        )
    try:
        value = json.loads(text, parse_constant=_no_constants)
    except json.JSONDecodeError as exc:
        raise FormatError(
            "not-json",
            f"{what} is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}",
            where=where,
        ) from None
    except (ValueError, RecursionError) as exc:
        raise FormatError("not-json", f"{what} is not valid JSON: {exc}", where=where) from None
    if not isinstance(value, dict):
        raise FormatError(
            "not-an-object",
            f"{what} must be a JSON object, found {json_type_name(value)}",
            where=where,
        )
    return value


_TYPE_NAMES = {dict: "an object", list: "an array", str: "a string", bool: "a boolean",
               int: "an integer", float: "a number", type(None): "null"}


def json_type_name(value: object) -> str:
    """The JSON name of a value's type, with an article ("an array", "null"): the one
    spelling error messages use (schema errors, readers)."""
    return _TYPE_NAMES.get(type(value), type(value).__name__)
