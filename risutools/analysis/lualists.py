"""Lists of names being assigned in Lua (``a, b = v1, v2``, ``local a <const>, b = ...``):
where one starts, the names before a name, whether its values may hold a string.  Read from
the source text around a token the scanner (:mod:`risutools.analysis.lua`) is at, each a
bounded number of characters (``_LIST_REACH`` back, 400 ahead, ``_QUOTES_REACH`` for the
values), every character looked at once."""

from __future__ import annotations

import re

_ATTRIB = r"(?:\s*<\s*(?:const|close)\s*>)?"
#: after a name's ``,``: more names of a list being assigned, then its ``=`` (looked for in
#: the next 400 characters, as :func:`name_list` looks back: ``f(a, b)`` is no list)
_LIST_GOES_ON = re.compile(rf"\s*[A-Za-z_]\w*{_ATTRIB}(?:\s*,\s*[A-Za-z_]\w*{_ATTRIB})*\s*=(?!=)")
_SPACE = " \t\r\n\f\v"
#: a string's opening (a list's values hold no string literal when none is in the next
#: ``_QUOTES_REACH`` characters: they are not read)
_QUOTE_AHEAD = re.compile(r"[\"'\[]")
_QUOTES_REACH = 256
#: how far back a list of names is read
_LIST_REACH = 400


def _space_before(text: str, i: int, lo: int) -> int:
    """The start of the run of spaces that ends at ``i`` (not before ``lo``)."""
    while i > lo and text[i - 1] in _SPACE:
        i -= 1
    return i


def _name_before(text: str, i: int, lo: int) -> tuple[str, int] | None:
    """The name (and its start) that ends at ``i``, after an optional ``<const>`` /
    ``<close>`` attribute; None when there is none."""
    if i > lo and text[i - 1] == ">":
        k = text.rfind("<", max(lo, i - 24), i)
        if k < 0 or text[k + 1:i - 1].strip(_SPACE) not in ("const", "close"):
            return None
        i = _space_before(text, k, lo)
    e = i
    while i > lo and (text[i - 1].isalnum() or text[i - 1] == "_"):
        i -= 1
    name = text[i:e]
    if not name or not (name[0] == "_" or (name[0].isascii() and name[0].isalpha())):
        return None
    return name, i


def name_list(text: str, at: int) -> list[str] | None:
    """The names before the name at ``at``, after a ``,``, when it ends a list of names
    being assigned (``a, b =``, ``local a, b =``: ``["a"]``) rather than naming a table's
    field (``{k = v, b =``): only names and commas before it, back to what ends a statement
    (not ``=``, ``{``, ``(`` or ``,``); None when it does not.  A first name after ``.`` or
    ``:`` (``t.a, b =``) is a field, not a name: it is given as ``""`` (and the list may
    start before it).  Steps back a comma and a name at a time (at most
    ``_LIST_REACH`` characters, each looked at once): a table's next field stops at its
    previous value at once."""
    lo = max(0, at - _LIST_REACH)
    names: list[str] = []
    i = _space_before(text, at, lo)
    while i > lo and text[i - 1] == ",":
        got = _name_before(text, _space_before(text, i - 1, lo), lo)
        if got is None:
            return None
        names.append(got[0])
        i = _space_before(text, got[1], lo)
    if not names:
        return None
    last = text[i - 1:i]
    if last in ("=", "{", "(", ","):
        return None
    names.reverse()
    if last in (".", ":"):
        names[0] = ""
    return names


def list_goes_on(text: str, comma: int) -> bool:
    """Whether more names of a list being assigned, then its ``=``, follow the ``,`` at
    ``comma`` (looked for in the next 400 characters, as :func:`name_list` looks back:
    ``f(a, b)`` is no list)."""
    return _LIST_GOES_ON.match(text, comma + 1, comma + 401) is not None


def strings_ahead(text: str, eq: int) -> bool:
    """Whether a string may open within ``_QUOTES_REACH`` characters of a list's ``=`` at
    ``eq`` (none: no value of the list is a string literal, and its values are not read)."""
    return _QUOTE_AHEAD.search(text, eq, eq + _QUOTES_REACH) is not None
