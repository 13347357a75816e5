"""Linear scans over untrusted JSON text: export detection and a pre-parse bound.

Every scan here is linear in its input, whatever the input: a string literal is
matched by a pattern that *always* succeeds once it has seen the opening quote
(it ends at the closing quote, or at the end of the text when the string is
unterminated), so the regex engine never retries from inside a string.  This is
what makes an unterminated string full of ``\\"`` cost one pass instead of one
pass per quote (the quadratic case of issue 8).

* :func:`top_level_keys` — the top-level keys (and string values) of a possibly
  truncated object text; used by detection on a bounded peek.
* :func:`precheck` — run before every ``json.loads`` of untrusted text in
  ``risutools.formats``: refuses an unterminated string at the end of the text
  (one line, ``not-json``) and more than :data:`MAX_JSON_CONTAINERS` containers
  or :data:`MAX_JSON_VALUES` values (``too-large``), so the objects
  ``json.loads`` builds stay within a known memory bound.
"""

from __future__ import annotations

import json
import re

from risutools.errors import FormatError

#: most arrays + objects accepted in one JSON text (real modules: < 20 000)
MAX_JSON_CONTAINERS = 1_000_000
#: most values (and keys) accepted in one JSON text (real modules: < 100 000)
MAX_JSON_VALUES = 2_000_000

# A string literal: always matches from its opening quote, to the closing quote or
# to the end of the text (unterminated; a lone trailing backslash included).
_STRING = r'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\\?\Z)'
_STRING_RE_B = re.compile(_STRING.encode("ascii"), re.DOTALL)
_TOKEN_RE = re.compile(_STRING + r"|[\[\]{}:,]", re.DOTALL)


def _terminated(tok: str | bytes) -> bool:
    """True if a matched string token ends with its own closing quote."""
    b = tok.encode("utf-8", "surrogatepass") if isinstance(tok, str) else tok
    if len(b) < 2 or not b.endswith(b'"'):
        return False
    # the closing quote is escaped when an odd run of backslashes precedes it
    body = b[1:-1]
    run = len(body) - len(body.rstrip(b"\\"))
    return run % 2 == 0


def top_level_keys(text: str, limit: int = 64) -> dict[str, str | None]:
    """The top-level keys of a (possibly truncated) JSON object text, in one pass.

    Values that are strings are returned (e.g. ``"type"``); other values map to
    None.  Nothing is parsed beyond single string tokens; the scan stops at the
    end of the top-level object, at ``limit`` keys, or at an unterminated string.
    """
    out: dict[str, str | None] = {}
    start = text.find("{")
    if start < 0:
        return out
    depth = 0
    key: str | None = None  # the depth-1 key whose value comes next
    state = "key"  # depth 1: expecting "key" -> "colon" -> "value" -> "comma"
    for m in _TOKEN_RE.finditer(text, start):
        tok = m.group()
        c = tok[0]
        if c == "{" or c == "[":
            depth += 1
            if depth == 2 and state == "value":
                state = "comma"
            continue
        if c == "}" or c == "]":
            depth -= 1
            if depth <= 0:
                break
            continue
        if depth != 1:
            if c == '"' and not _terminated(tok):
                break
            continue
        if c == '"':
            if not _terminated(tok):
                break
            if state == "key":
                key = _unquote(tok)
                out[key] = None
                state = "colon"
                if len(out) >= limit:
                    break
            elif state == "value" and key is not None:
                out[key] = _unquote(tok)
                state = "comma"
        elif c == ":":
            state = "value" if state == "colon" else state
        elif c == ",":
            state = "key"
            key = None
    return out


def _unquote(tok: str) -> str:
    if len(tok) > 4096:
        return ""
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


def precheck(raw: bytes, *, where: str, what: str = "JSON") -> None:
    """Refuse, in linear time, JSON text that would make parsing slow or huge.

    ``raw`` is the UTF-8 text as bytes (``"`` and ``\\`` never occur inside a
    multi-byte sequence, so no decoding is needed).  Raises ``not-json`` for a
    string left unterminated at the end of the text (the only place one can be),
    and ``too-large`` past the container or value bound.  Text that passes is
    handed to the safe loader unchanged.
    """
    if raw.count(b'"') == 0:
        stripped = raw
    else:
        stripped = _STRING_RE_B.sub(b'""', raw)
        if stripped.rstrip(b" \t\r\n").endswith(b'"'):  # ends on a string: terminated?
            last = None
            for m in _STRING_RE_B.finditer(raw):
                last = m
            if last is not None and not _terminated(last.group()):
                line, col = _line_col(raw, last.start())
                raise FormatError(
                    "not-json",
                    f"{what} is not valid JSON: Unterminated string starting at "
                    f"line {line} column {col}",
                    where=where,
                )
    containers = stripped.count(b"[") + stripped.count(b"{")
    if containers > MAX_JSON_CONTAINERS:
        raise FormatError(
            "too-large",
            f"{what} holds {containers} arrays/objects; the bound is {MAX_JSON_CONTAINERS}",
            where=where,
        )
    values = containers + stripped.count(b",") + stripped.count(b":") + 1
    if values > MAX_JSON_VALUES:
        raise FormatError(
            "too-large",
            f"{what} holds about {values} values; the bound is {MAX_JSON_VALUES}",
            where=where,
        )
