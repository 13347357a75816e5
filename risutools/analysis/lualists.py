"""Lists of targets being assigned in Lua (``a, b = v1, v2``, ``local a <const>, b = ...``,
``t[k], b = ...``): where one starts, the targets before a name, whether its values may
hold a string.  Read from
the source text around a token the scanner (:mod:`risutools.analysis.lua`) is at, each a
bounded number of characters (``_LIST_REACH`` back, 400 ahead, ``_QUOTES_REACH`` for the
values), every character looked at once."""

from __future__ import annotations

import re

from risutools.analysis.lualex import KEYWORDS

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
#: a target of a list that is not read back (:func:`name_list`): where the names after it
#: stand in the list is not known
UNKNOWN = "\x00?"
_OPENERS = "([{"
_CLOSERS = ")]}"
_PAIRS = {"(": ")", "[": "]", "{": "}"}
#: the quotes of a short string inside a target's brackets (``t["k"]``: read back to the
#: same quote when nothing between is a backslash or a line break)
_QUOTES = frozenset("\"'")
#: the last characters of what may end a statement before a list (besides a name's or a
#: number's): ``f(x) a, b =``, ``t[1] a, b =``, ``"s" a, b =``
_STATEMENT_ENDS = frozenset("_)]};\"'")
_NOT_KNOWN = -1
_NOT_TARGET = -2


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


def _opener_before(text: str, close: int, lo: int) -> int:
    """The offset of the bracket that opens the one at ``close`` (``]`` or ``)``), or -1
    when it is not found back to ``lo`` or what lies between cannot be read back without
    lexing (a long bracket, a comment, a string with an escape: ``t["\\"]"]``)."""
    depth = 0
    i = close
    while i >= lo:
        c = text[i]
        if c in _CLOSERS:
            depth += 1
        elif c in _OPENERS:
            depth -= 1
            if depth == 0:
                return i if _PAIRS[c] == text[close] else -1
        elif c in _QUOTES:  # a short string without escapes or line breaks: passed over
            k = text.rfind(c, lo, i)
            if k < 0 or any(x in text[k + 1:i] for x in "\\\n"):
                return -1
            i = k
        if i > lo and c in "[]-" and text[i - 1] in (c, "="):  # ``[[``, ``]=]``, ``--``
            return -1
        i -= 1
    return -1


def _target_before(text: str, i: int, lo: int) -> tuple[str, int] | None:
    """The assignment target that ends at ``i`` and its start: its name when it is a plain
    name (``a``, ``a <const>``), ``""`` when it is a field or an index (``t.a``,
    ``t[k][j]``, ``f(x).a``), ``UNKNOWN`` when it cannot be read back (then its start is
    ``i``); None when what ends there is no target (a value: ``{f(x), b = v}``)."""
    got = _name_before(text, i, lo)
    if got is not None:
        k = _space_before(text, got[1], lo)
        if not (text[k - 1:k] == "." and text[k - 2:k] != ".."):
            return None if got[0] in KEYWORDS else got
    elif text[i - 1:i] != "]":
        return None
    start = _prefix_start(text, i, lo)
    return ("", start) if start >= 0 else None if start == _NOT_TARGET else (UNKNOWN, i)


def _prefix_start(text: str, i: int, lo: int) -> int:
    """Where the field or index that ends at ``i`` starts (its table's expression read
    back: names, ``.``, ``[...]``, ``(...)``); ``_NOT_KNOWN`` when it cannot be read back,
    ``_NOT_TARGET`` when a keyword stands in it (a value, not a target)."""
    while True:
        i = _space_before(text, i, lo)
        c = text[i - 1:i]
        if c in ("]", ")"):
            j = _opener_before(text, i - 1, lo)
            if j < 0:
                return _NOT_KNOWN
            i = j
            k = _space_before(text, j, lo)
            before = text[k - 1:k]
            if c == ")" and not (before.isalnum() or before in ("_", "]", ")")):
                return j  # ``(expr)``: the start of the prefix
            continue
        got = _name_before(text, i, lo)
        if got is None or got[0] in KEYWORDS:
            return _NOT_KNOWN if got is not None or i <= lo else _NOT_TARGET
        k = _space_before(text, got[1], lo)
        if not (text[k - 1:k] == "." and text[k - 2:k] != ".."):
            return got[1]
        i = k - 1


def _in_comment(text: str, i: int, lo: int) -> bool:
    """Whether the character at ``i`` may be in a line comment (``--`` before it on its
    line, back to ``lo``): ``-- hp,`` or ``-- x =`` on the line before a list is no
    target, nor what stands before one (a ``--`` in a string is taken for one too)."""
    line = max(text.rfind("\n", lo, i), text.rfind("\r", lo, i)) + 1  # (either ends one)
    return text.find("--", max(lo, line), i) >= 0


def name_list(text: str, at: int) -> list[str] | None:
    """The targets before the name at ``at``, after a ``,``, when it ends a list of
    targets being assigned (``a, b =``, ``local a, b =``, ``t[k], b =``: ``["a"]``,
    ``[""]``), in order: a plain name as itself, a field or an index (``t.a``,
    ``t[k][j]``, ``f(x).a``) as ``""``; ``[UNKNOWN]`` when a target cannot be read back
    (a string or a comment inside its brackets, past ``_LIST_REACH``): where the name
    stands in the list is then not known, and when an operator stands before the first
    target (``{x = a + b, c =``: ``b`` is no target).  None when the name is a table's
    field (``{k = v, b =``, ``{f(x), b =``): ``=``, ``{``, ``(`` or ``,`` stands before
    the first target.  Steps back a target at a time (at most
    ``_LIST_REACH`` characters, each looked at a bounded number of times)."""
    lo = max(0, at - _LIST_REACH)
    names: list[str] = []
    i = _space_before(text, at, lo)
    while i > lo and text[i - 1] == ",":
        got = _target_before(text, _space_before(text, i - 1, lo), lo)
        if got is None:
            return None
        if got[0] == UNKNOWN or _in_comment(text, i - 1, lo):
            return [UNKNOWN]
        names.append(got[0])
        i = _space_before(text, got[1], lo)
    if not names:
        return None
    if i <= lo and lo > 0:
        return [UNKNOWN]  # (the reach ends before the list's start is seen)
    last = text[i - 1:i]
    if last in ("=", "{", "(", ","):
        return [UNKNOWN] if _in_comment(text, i - 1, lo) else None
    if last and not (last.isalnum() or last in _STATEMENT_ENDS):
        return [UNKNOWN]  # (an operator: ``{x = a + b, c =``, or a comment's end)
    names.reverse()
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
