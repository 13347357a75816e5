"""Text from untrusted files made safe to show: one line, nothing that moves the cursor,
reorders the line or breaks the encoding (module names and strings, catalog values in every
report)."""

from __future__ import annotations

import unicodedata
from typing import Any


def scrub(value: Any) -> Any:
    """A copy of a JSON-like value whose strings are valid UTF-8 (lone surrogates -> "?")."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
            return value
        except UnicodeEncodeError:
            return value.encode("utf-8", "replace").decode("utf-8")
    if isinstance(value, dict):
        return {scrub(k): scrub(v) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub(v) for v in value]
    return value


#: character categories escaped when module text is shown: controls (line breaks, ESC),
#: format characters (bidi overrides and isolates, zero-width joiners), line and paragraph
#: separators, surrogates and unassigned code points; spaces of every script print as is
_SPOOFING = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs", "Cn"})


def display(text: str) -> str:
    """``text`` safe to print on one line: the characters that could break or reorder the
    output (controls, bidi and other format characters) escaped as ``\\uXXXX``; every other
    character, ideographic space (U+3000) included, kept as it is."""
    if text.isprintable():
        return text
    out: list[str] = []
    for ch in text:
        if ch == " " or unicodedata.category(ch) not in _SPOOFING:
            out.append(ch)
        else:
            out.append(ch.encode("unicode_escape").decode("ascii"))
    return "".join(out)


def quoted(text: str) -> str:
    """``text`` in single quotes for a message, shown as :func:`display` shows it."""
    return "'" + display(text) + "'"
