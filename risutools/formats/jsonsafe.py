"""Bounded JSON parsing for untrusted module text.

``loads_object`` refuses, in this order and each with a stable code and a precise
``where``:
- a block whose parse would cost too much memory (``too-large``): before parsing, one
  C-speed pass counts the bytes that can start a value (``,`` ``[`` ``{``, inside
  strings too, so the count only over-estimates) and the estimated peak
  ``3 x bytes + ITEM_COST x that count`` must stay within ``MAX_PARSE_COST``;
- text that is not UTF-8 (``not-utf8``, with the byte offset);
- nesting deeper than ``MAX_DEPTH`` (``json-too-deep``, with the character offset);
- ``NaN``/``Infinity`` and anything else that is not JSON (``not-json``);
- a top level that is not an object (``not-an-object``).

The nesting bound is kept without a pass in Python over the text: ``json.loads`` bounds
its own recursion (a ``RecursionError`` far below the C stack), and a walk over the
parsed containers (cheap: containers only, by level) checks ``MAX_DEPTH``.  Only a
refusal re-scans the text, to name the character offset.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

from risutools.errors import Code, FormatError
from risutools.formats.jsonscan import BYTE_COST, ITEM_COST, MAX_PARSE_COST, precheck
from risutools.formats.model import Anomaly
from risutools.jsonplaces import PARSE_INT, int_too_long, scan
from risutools.jsontypes import finite_float, json_type_name, nests_deeper

#: deepest nesting of arrays/objects accepted (RisuAI files are < 20 deep)
MAX_DEPTH = 200
# every byte but the three that can start a value: ``translate`` deletes them in one pass
_NOT_ITEM = bytes(b for b in range(256) if b not in b",[{")

# After the escape pairs are neutralised (see ``max_depth_exceeded``) a string literal is
# a quote, non-quotes and a quote: one character class, walked without backtracking state
# (a group repeated per escape keeps a mark per repetition: memory linear in the string).
_TOKEN = re.compile(r'"[^"]*"?|[\[\]{}]')


def max_depth_exceeded(text: str, limit: int = MAX_DEPTH) -> int | None:
    """Return the character offset where nesting first exceeds ``limit``, else None.

    Strings are skipped so brackets inside them do not count.  An unterminated
    string simply ends the scan (``json.loads`` reports it precisely afterwards).
    """
    if text.count("[") + text.count("{") <= limit:
        return None  # cannot possibly be deeper than the limit
    # escape pairs (``\\\\`` and ``\\"``) become two neutral characters, offsets unchanged,
    # so every quote left delimits a string
    plain = text.replace("\\\\", "__").replace('\\"', "__")
    depth = 0
    for m in _TOKEN.finditer(plain):
        c = plain[m.start()]  # never m.group(): a long string would be copied
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


#: the longest text :func:`_number_place` scans for a place (the pointer scan is Python)
PLACE_SCAN_CHARS = 1 << 20


def _number_place(text: str) -> str:
    """`` at line N (pointer)`` of the first NaN, Infinity or number that reads as an
    infinity in ``text``, when the text is short enough to scan for it (else nothing)."""
    if len(text) > PLACE_SCAN_CHARS:
        return ""
    found = scan(text).nonfinite
    return f" at line {found[1]} ({found[0] or '/'})" if found is not None else ""


def decode_utf8(raw: bytes, *, where: str, what: str = "text") -> str:
    """UTF-8 (a leading BOM is tolerated) or ``not-utf8`` naming the first bad byte's offset
    in ``raw`` as given (a BOM counted: the offset is the file's or the member's own)."""
    skip = 3 if raw.startswith(b"\xef\xbb\xbf") else 0
    try:
        return raw[skip:].decode("utf-8") if skip else raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        at = exc.start + skip
        raise FormatError(
            Code.NOT_UTF8, f"{what} is not UTF-8 (byte 0x{raw[at]:02x} at byte {at})",
            where=where,
        ) from None


def as_risuai_decodes(raw: bytes, notes: list[Anomaly]) -> bytes:
    """``card.json`` as RisuAI decodes it (``new TextDecoder().decode``): a sequence that
    is not UTF-8 becomes U+FFFD (one for each maximal bad part, as Python's ``replace``
    does too) and the card loads, so it is read so here, with the warning ``card-not-utf8``
    naming the first bad byte; UTF-8 text is returned as is (no copy)."""
    if raw.isascii():
        return raw
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        notes.append(Anomaly(
            "card-not-utf8", "card.json",
            f"text is not UTF-8 (byte 0x{raw[exc.start]:02x} at byte {exc.start}); RisuAI "
            "decodes it with U+FFFD in place of each bad sequence and loads the card: read as "
            "it reads it"))
        return raw.decode("utf-8", errors="replace").encode("utf-8")
    return raw


def parse_cost(raw: bytes | bytearray | memoryview, items: int | None = None) -> int:
    """The estimated peak memory of parsing ``raw``, in bytes (see the module docstring).

    Counting is skipped when even a block made only of ``,``/``[``/``{`` stays within the
    bound (the answer is then that worst case), or when ``items`` (that count, made by
    the caller's own pass) is given."""
    n = len(raw)
    if items is not None:
        return BYTE_COST * n + ITEM_COST * items
    if (BYTE_COST + ITEM_COST) * n <= MAX_PARSE_COST:
        return (BYTE_COST + ITEM_COST) * n
    items = len(bytes(raw).translate(None, _NOT_ITEM) if not isinstance(raw, bytes)
                else raw.translate(None, _NOT_ITEM))
    return BYTE_COST * n + ITEM_COST * items


def _parser_bounds_depth() -> bool:
    """``json.loads`` refuses deep nesting itself, long before the C stack runs out:
    Python 3.12+ bounds C recursion on its own; 3.10/3.11 by the recursion limit, so only
    while nobody raised it far."""
    return sys.version_info >= (3, 12) or sys.getrecursionlimit() <= 10_000


def _too_deep(what: str, at: int, where: str) -> FormatError:
    return FormatError(
        Code.JSON_TOO_DEEP,
        f"{what} nests deeper than {MAX_DEPTH} levels (at character {at}); refusing to parse",
        where=where,
    )


def loads_object(raw: bytes, *, where: str, what: str = "JSON") -> dict[str, Any]:
    """Parse ``raw`` (UTF-8 JSON) into a dict, safely; see the module docstring (the
    container/value bounds of :func:`risutools.formats.jsonscan.precheck` come first)."""
    cost = parse_cost(raw, precheck(raw, where=where, what=what))
    if cost > MAX_PARSE_COST:
        raise FormatError(
            Code.TOO_LARGE,
            f"{what} of {len(raw)} bytes holds too many values to parse within the memory "
            f"bound (estimated {cost >> 20} MiB, bound {MAX_PARSE_COST >> 20} MiB)",
            where=where,
        )
    text = decode_utf8(raw, where=where, what=what)
    if not _parser_bounds_depth():
        at = max_depth_exceeded(text)
        if at is not None:
            raise _too_deep(what, at, where)
    try:
        value = json.loads(text, parse_constant=_no_constants, parse_float=finite_float,
                           parse_int=PARSE_INT)
    except json.JSONDecodeError as exc:
        at = max_depth_exceeded(text)
        if at is not None:
            raise _too_deep(what, at, where) from None
        raise FormatError(
            Code.NOT_JSON,
            # json's "Unterminated string starting at" already ends in "at"
            f"{what} is not valid JSON: {exc.msg.removesuffix(' at')} at line {exc.lineno} "
            f"column {exc.colno}",
            where=where,
        ) from None
    except (ValueError, RecursionError) as exc:
        at = max_depth_exceeded(text)
        if at is not None:
            raise _too_deep(what, at, where) from None
        why = int_too_long(exc) or exc
        raise FormatError(Code.NOT_JSON, f"{what} is not valid JSON: {why}{_number_place(text)}",
                          where=where) from None
    if nests_deeper(value, MAX_DEPTH):
        at = max_depth_exceeded(text)
        raise _too_deep(what, at if at is not None else 0, where)
    if not isinstance(value, dict):
        raise FormatError(
            Code.NOT_AN_OBJECT,
            f"{what} must be a JSON object, found {json_type_name(value)}",
            where=where,
        )
    return value
