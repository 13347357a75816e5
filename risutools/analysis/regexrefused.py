"""Quantifiers JavaScript's ``RegExp`` refuses in every mode that the backtracking check's
parser reads as text (:func:`quantifier_error`), read as data in one pass; never compiled.

* a braced quantifier with nothing to repeat: ``{2}``, ``a|{1,3}``, ``({2,})`` (Annex B
  reads a ``{`` that starts no quantifier as text, ``{a}``, ``{,2}``, but a whole quantifier
  there is an early error, "nothing to repeat");
* a quantified lookbehind: ``(?<=a)*``, ``(?<!a){2}`` (a lookahead may be quantified without
  the ``u``/``v`` flags, never a lookbehind).
"""

from __future__ import annotations

import re

_BRACED = re.compile(r"\{\d+(?:,\d*)?\}")
#: what a group's opening is written with, longest first: (text, it is a lookbehind)
_OPENERS = (("(?<=", True), ("(?<!", True), ("(?=", False), ("(?!", False), ("(?:", False))
_NAMED = re.compile(r"\(\?<[^=!>][^>]{0,255}>")


def quantifier_error(pattern: str, v: bool = False) -> tuple[str, int] | None:
    """(why, offset) of the first quantifier ``RegExp`` refuses in ``pattern`` (see the
    module), None when there is none (``v``: classes nest)."""
    p, n, i = pattern, len(pattern), 0
    prev = ""  # "": nothing to repeat; "atom"; "behind": a lookbehind just closed
    opens: list[bool] = []  # per open group: whether it is a lookbehind
    while i < n:
        c = p[i]
        if c == "\\":
            i, prev = i + 2, "atom"
            continue
        if c == "[":
            i, prev = _class_end(p, i + 1, v), "atom"
            continue
        if c == "(":
            behind, i = _opener(p, i)
            opens.append(behind)
            prev = ""
            continue
        m = _BRACED.match(p, i) if c == "{" else None
        if (m is not None or c in "*+?") and prev in ("", "behind"):
            if prev == "behind":
                return "a quantified lookbehind", i
            if m is not None:
                return "a braced quantifier with nothing to repeat", i
        if c == ")":
            prev = "behind" if opens and opens.pop() else "atom"
        elif c == "|":
            prev = ""
        elif m is not None:
            i, prev = m.end(), "atom"
            continue
        else:
            prev = "atom"
        i += 1
    return None


def _opener(p: str, i: int) -> tuple[bool, int]:
    """The group opening at ``i``: (it is a lookbehind, where its body starts)."""
    for text, behind in _OPENERS:
        if p.startswith(text, i):
            return behind, i + len(text)
    m = _NAMED.match(p, i)
    return False, m.end() if m else i + 1


def _class_end(p: str, i: int, v: bool) -> int:
    """Where the class whose body starts at ``i`` ends (after its ``]``; classes nest with
    ``v``); the pattern's end when it is not closed."""
    depth, n = 1, len(p)
    while i < n:
        c = p[i]
        if c == "\\":
            i += 2
            continue
        if c == "]":
            depth -= 1
            if depth == 0:
                return i + 1
        elif c == "[" and v:
            depth += 1
        i += 1
    return n
