"""Linear scans over untrusted JSON text: export detection and a pre-parse bound.

Every scan here is linear in its input, with bounded memory, whatever the input.
Escape pairs (``\\\\`` and ``\\"``) are first replaced by two neutral bytes (a
C-speed ``replace``, offsets unchanged); what is left of the quotes then delimits
strings exactly, so a string is matched as quote, non-quotes, quote: no regex
ever retries from inside a string (the quadratic case of issue 8: an
unterminated string full of ``\\"``), and none keeps backtracking state per
escape (a 2 MiB string of escapes cost 160 MB that way).

* :func:`top_level_keys` — the top-level keys (and string values) of a possibly
  truncated object text; used by detection on a bounded peek.
* :func:`precheck` — run before every ``json.loads`` of untrusted text in
  ``risutools.formats``: refuses more than :data:`MAX_JSON_CONTAINERS` containers
  or :data:`MAX_JSON_VALUES` values (``too-large``), so the objects
  ``json.loads`` builds stay within a known memory bound; one C pass in the common
  case, an exact count outside strings only near the bounds.
"""

from __future__ import annotations

import json
import re

from risutools.errors import Code, FormatError

#: bound on the estimated memory of one parse (text + decoded text + Python values)
MAX_PARSE_COST = 256 * 1024 * 1024
#: estimated bytes of Python objects per ``,``/``[``/``{`` byte (a value, a key, a slot)
ITEM_COST = 128
#: estimated bytes per byte of JSON text besides its values: the bytes, their decoded
#: ``str`` and the strings built from them
BYTE_COST = 3
#: most arrays + objects accepted in one JSON text (the real corpus: < 200 in a file)
MAX_JSON_CONTAINERS = 500_000
#: most values (and keys) accepted in one JSON text (the real corpus: < 1 000 in a file)
MAX_JSON_VALUES = 1_000_000

# After :func:`_neutral` every remaining quote is a string delimiter, so a string is
# a quote, a run of non-quotes and a quote: one character class, which the regex
# engine walks without backtracking state (a group repeated per escape keeps a
# backtracking mark per repetition: memory linear in the string, with a large
# constant), and splitting on quotes separates strings from the rest.
_TOKEN = re.compile(r'"[^"]*"?|[\[\]{}:,]')
_CHUNK = 1 << 20
# every byte but the four structural ones that start a value or a member
_NOT_STRUCT = bytes(b for b in range(256) if b not in b"[{,:")


def _neutral(text: bytes) -> bytes:
    """``text`` with every escape pair ``\\\\`` and ``\\"`` replaced by two neutral bytes.

    Escapes pair up left to right, exactly as ``bytes.replace`` scans, so what is
    left of the quotes delimits strings; offsets are unchanged.
    """
    return text.replace(b"\\\\", b"__").replace(b'\\"', b"__")


def _neutral_str(text: str) -> str:
    return text.replace("\\\\", "__").replace('\\"', "__")


def top_level_keys(text: str, limit: int = 64) -> dict[str, str | None]:
    """The top-level keys of a (possibly truncated) JSON object text, in one pass.

    Values that are strings are returned (e.g. ``"type"``); other values map to
    None.  Nothing is parsed beyond single string tokens; the scan stops at the
    end of the top-level object, at ``limit`` keys, or at an unterminated string.
    """
    return top_level_scan(text, limit)[0]


def top_level_scan(text: str, limit: int = 64) -> tuple[dict[str, str | None], bool]:
    """:func:`top_level_keys`, and whether the scan saw the whole top-level object (False:
    it stopped at ``limit`` keys, or the text ends inside the object: a key after the
    ones returned may still come)."""
    out: dict[str, str | None] = {}
    start = text.find("{")
    if start < 0:  # (a peek of blanks: the object starts past it)
        return out, False
    plain = _neutral_str(text)
    depth = 0
    key: str | None = None  # the depth-1 key whose value comes next
    state = "key"  # depth 1: expecting "key" -> "colon" -> "value" -> "comma"
    for m in _TOKEN.finditer(plain, start):
        c = plain[m.start()]
        if c == '"':
            if m.end() - m.start() < 2 or plain[m.end() - 1] != '"':
                break  # unterminated: the peek ends inside a string
            if depth != 1:
                continue
            tok = text[m.start() : m.end()]
            if state == "key":
                key = _unquote(tok)
                out[key] = None
                state = "colon"
                if len(out) >= limit:
                    return out, False
            elif state == "value" and key is not None:
                out[key] = _unquote(tok)
                state = "comma"
        elif c in "{[":
            depth += 1
            if depth == 2 and state == "value":
                state = "comma"
        elif c in "}]":
            depth -= 1
            if depth <= 0:
                return out, True
        elif depth == 1:
            if c == ":":
                state = "value" if state == "colon" else state
            else:  # ","
                state = "key"
                key = None
    return out, False


def _unquote(tok: str) -> str:
    if len(tok) > 4096:
        return ""
    if "\\" not in tok and tok.isprintable():  # (no escape, no control character: the
        return tok[1:-1]  # text between the quotes is the string, as json.loads gives it)
    try:
        s = json.loads(tok)
    except ValueError:
        return ""
    return s if isinstance(s, str) else ""


def _line_col(raw: bytes, at: int) -> tuple[int, int]:
    """1-based line and column (in characters) of byte offset ``at``."""
    line = raw.count(b"\n", 0, at) + 1
    start = raw.rfind(b"\n", 0, at) + 1
    col = len(raw[start:at].decode("utf-8", errors="replace")) + 1
    if line == 1 and raw.startswith(b"\xef\xbb\xbf"):
        col -= 1  # the loader drops a leading BOM
    return line, col


def _outside_strings(plain: bytes) -> tuple[int, int, int]:
    """(containers, values, items) counted outside strings, 1 MiB at a time (bounded
    memory); items are the ``,`` ``[`` ``{`` bytes (the memory estimate's count).

    Stops early once a bound is passed.  ``plain`` has an even number of quotes.
    """
    containers = values = items = 0
    pos, n = 0, len(plain)
    while pos < n:  # ``pos`` is always outside a string
        end = min(n, pos + _CHUNK)
        if plain.count(b'"', pos, end) % 2:  # the chunk ends inside a string: finish it
            end = plain.find(b'"', end) + 1
        part = b"".join(plain[pos:end].split(b'"')[0::2])  # the even pieces: outside strings
        c = part.count(b"[") + part.count(b"{")
        commas = part.count(b",")
        containers += c
        items += c + commas
        values += c + commas + part.count(b":")
        if containers > MAX_JSON_CONTAINERS or values >= MAX_JSON_VALUES:
            break
        pos = end
    return containers, values + 1, items


def _over_cost(n: int, items: int) -> bool:
    """Whether the upper-bound count (brackets and commas inside strings too: Lua or JS
    code kept in a string has many) would refuse the text on memory; such text is then
    counted exactly, outside strings, so code in strings is never taken for values."""
    return BYTE_COST * n + ITEM_COST * items > MAX_PARSE_COST


def precheck(raw: bytes, *, where: str, what: str = "JSON") -> int | None:
    """Refuse, in linear time and bounded memory, JSON that would parse slowly or huge.

    ``raw`` is the UTF-8 text as bytes (``"`` and ``\\`` never occur inside a
    multi-byte sequence, so no decoding is needed).  The common case costs one C pass
    (``translate`` keeps the structural bytes, strings included: upper bounds); only
    text whose upper bounds pass a bound is counted exactly, outside strings, and
    refused ``too-large`` past :data:`MAX_JSON_CONTAINERS` or :data:`MAX_JSON_VALUES`
    (or ``not-json`` for a string left unterminated, which leaves no exact count).
    An unterminated string in text within the bounds is left to ``json.loads``,
    which reports it in linear time (and every later scan is linear too).

    Returns the number of ``,`` ``[`` ``{`` bytes (strings included) when it counted
    them, for the safe loader's memory estimate (``jsonsafe.parse_cost``), else None.
    """
    if len(raw) < MAX_JSON_CONTAINERS:
        return None  # fewer bytes than the bounds: nothing to count
    # upper bounds in one C pass (strings included): the structural bytes alone
    struct = raw.translate(None, _NOT_STRUCT)
    containers = struct.count(b"[") + struct.count(b"{")
    values = len(struct) + 1
    items = len(struct) - struct.count(b":")
    del struct
    if (containers <= MAX_JSON_CONTAINERS and values <= MAX_JSON_VALUES
            and not _over_cost(len(raw), items)):
        return items
    plain = _neutral(raw)
    if plain.count(b'"') % 2:
        at = plain.rfind(b'"')
        line, col = _line_col(raw, at)
        raise FormatError(
            Code.NOT_JSON,
            f"{what} is not valid JSON: Unterminated string starting at line {line} column {col}",
            where=where,
        )
    containers, values, items = _outside_strings(plain)  # the exact counts
    del plain
    if containers > MAX_JSON_CONTAINERS:
        raise FormatError(
            Code.TOO_LARGE,
            f"{what} holds more than {MAX_JSON_CONTAINERS} arrays/objects (the bound)",
            where=where,
        )
    if values > MAX_JSON_VALUES:
        raise FormatError(
            Code.TOO_LARGE,
            f"{what} holds more than {MAX_JSON_VALUES} values (the bound)",
            where=where,
        )
    return items
