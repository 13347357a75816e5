"""What JavaScript's ``RegExp`` refuses in a pattern with the ``u`` or ``v`` flag that it
accepts without one (ECMAScript's grammar without Annex B), read as data in one pass
(:func:`unicode_mode_error`); never compiled.

RisuAI builds each pattern with ``new RegExp(pattern, flags)`` (a regex script, a lorebook
key, a trigger's regex); a pattern it refuses throws there instead of matching.  Without
``u``/``v`` the web's lenient grammar reads ``\\-``, ``[\\w-a]`` or ``\\2`` with one group as
text; with them each is a syntax error, as are the flags ``u`` and ``v`` together:

* an escape of a character that is not a syntax character (``\\-`` outside a class, ``\\a``,
  ``\\_``; in a class ``\\-`` is one, and with ``v`` the class punctuators ``&!#%,:;<=>@`~``);
* ``\\c`` without a letter, ``\\x`` without two hex digits, ``\\u`` without four or
  ``{hex}`` at most ``10FFFF``, ``\\p``/``\\P`` without ``{...}``, ``\\k`` without a
  ``<name>`` the pattern defines, ``\\B`` in a class;
* a back reference past the pattern's groups (``\\2`` with one group), a digit after
  ``\\0``, any back reference in a class;
* a class escape at either end of a class range (``[\\w-a]``, ``[a-\\d]``; ``u`` only);
* a ``]``, ``{`` or ``}`` that opens or closes nothing;
* a quantified lookaround (``(?=a)*``; a lookbehind is refused without the flags too);
* with ``v``, a class character that must be escaped there (``( ) { } / |``) or a doubled
  class punctuator (``[a&&&b]``, ``[a!!]``).

Property names (``\\p{...}``) are not judged.
"""

from __future__ import annotations

import re

_SYNTAX = frozenset("^$\\.*+?()[]{}|/")
#: what an escape may name in a class besides the syntax characters (``v``: also these)
_V_PUNCTUATORS = frozenset("&-!#%,:;<=>@`~")
_SIMPLE = frozenset("dDwWsSfnrtv")
_CLASS_ESCAPES = frozenset("dDwWsSpP")
_HEX = frozenset("0123456789abcdefABCDEF")
_V_MUST_ESCAPE = frozenset("(){}/|")
_V_DOUBLES = frozenset("&!#$%*+,.:;<=>?@^`~")
_QUANTIFIER = re.compile(r"[*+?]|\{\d+(?:,\d*)?\}")
#: a group name past this many characters is taken on trust (``\\k<...>`` of it not judged)
_MAX_NAME = 256
_MAX_CP = 0x10FFFF


def unicode_mode_error(pattern: str, letters: str) -> tuple[str, int] | None:
    """(why, offset) when ``RegExp`` refuses ``pattern`` with the flag letters ``letters``
    for a reason of its ``u``/``v`` mode (see the module); None otherwise, and always for a
    pattern without those flags (offset -1: the flags themselves)."""
    u, v = "u" in letters, "v" in letters
    if u and v:
        return "RegExp refuses the flags u and v together", -1
    if not (u or v):
        return None
    return _Reader(pattern, v).run()


class _Reader:
    """One pass over a pattern with the ``u`` or ``v`` flag."""

    def __init__(self, pattern: str, v: bool) -> None:
        self.p = pattern
        self.v = v
        self.groups, self.names = _groups(pattern)
        self.opens: list[bool] = []  # per open group: whether it is a lookaround

    def run(self) -> tuple[str, int] | None:
        p, n, i = self.p, len(self.p), 0
        while i < n:
            c = p[i]
            if c == "\\":
                why, j = self.escape(i + 1, False)
            elif c == "[":
                why, j = self.klass(i + 1)
            else:
                why, j = self.outside(c, i)
            if why:
                return why, i
            i = j
        return None

    def outside(self, c: str, i: int) -> tuple[str | None, int]:
        """One character outside a class (not an escape): (why, where the next starts)."""
        if c == "(":
            self.opens.append(self.p.startswith(("(?=", "(?!", "(?<=", "(?<!"), i))
        elif c == ")" and self.opens:
            if self.opens.pop() and _QUANTIFIER.match(self.p, i + 1):
                return "a quantified lookaround", i + 1
        elif c in "]}":
            return f"a lone {c!r}", i + 1
        elif c == "{":
            m = _QUANTIFIER.match(self.p, i)
            return (None, m.end()) if m else ("a lone '{'", i + 1)
        return None, i + 1

    def escape(self, i: int, in_class: bool) -> tuple[str | None, int]:
        """The escape whose letter is at ``i``: (why it is refused or None, where the next
        token starts)."""
        p = self.p
        if i >= len(p):
            return None, i  # (the backtracking check's parser says it)
        c = p[i]
        if c in _SYNTAX or c in _SIMPLE or (in_class and c == "-") or (
                in_class and self.v and c in _V_PUNCTUATORS) or (c == "b") or (
                c == "B" and not in_class):
            return None, i + 1
        if c == "0":
            ok = i + 1 >= len(p) or not p[i + 1].isdigit()
            return (None if ok else "a digit after \\0"), i + 1
        if c in "123456789":
            j = i
            while j < len(p) and p[j].isdigit():
                j += 1
            if in_class:
                return "a back reference in a class", j
            return (None if int(p[i:j]) <= self.groups else "a back reference past the groups"), j
        return self.letter_escape(c, i + 1, in_class)

    def letter_escape(self, c: str, i: int, in_class: bool) -> tuple[str | None, int]:
        """``\\c``, ``\\x``, ``\\u``, ``\\p``, ``\\k``, ``\\q`` (with ``v``, in a class) or
        an escape of nothing (refused)."""
        p = self.p
        if c == "c":
            ok = i < len(p) and p[i].isascii() and p[i].isalpha()
            return (None if ok else "\\c without a letter"), i + 1
        if c == "x":
            ok = len(p) >= i + 2 and all(ch in _HEX for ch in p[i:i + 2])
            return (None if ok else "\\x without two hex digits"), i + 2
        if c == "u":
            return _unicode(p, i)
        if c in "pPk" or (c == "q" and in_class and self.v):
            return self.braced(c, i)
        return f"an escape of {c!r}, which is no syntax character", i

    def braced(self, c: str, i: int) -> tuple[str | None, int]:
        """After ``\\p``, ``\\P``, ``\\q``: ``{...}``; after ``\\k``: ``<name>`` of a group."""
        p = self.p
        close = ">" if c == "k" else "}"
        j = p.find(close, i)
        if not p.startswith("<" if c == "k" else "{", i) or j <= i:
            return f"\\{c} without its {'<name>' if c == 'k' else '{...}'}", i
        if c == "k" and j - i - 1 <= _MAX_NAME and p[i + 1:j] not in self.names:
            return "\\k naming no group", j + 1
        return None, j + 1

    def klass(self, i: int) -> tuple[str | None, int]:
        """A class from just after its ``[``: (why, its end)."""
        if self.p.startswith("^", i):
            i += 1
        return self.v_class(i) if self.v else self.u_class(i)

    def v_class(self, i: int) -> tuple[str | None, int]:
        """A class with ``v`` (classes nest there)."""
        p, n, depth = self.p, len(self.p), 1
        while i < n:
            c = p[i]
            if c == "]":
                depth -= 1
                if depth == 0:
                    return None, i + 1
                i += 1
                continue
            why, i = self.escape(i + 1, True) if c == "\\" else (self.v_char(c, i), i + 1)
            if why:
                return why, i
            depth += c == "["
        return None, i  # (unterminated: the backtracking check's parser says it)

    def u_class(self, i: int) -> tuple[str | None, int]:
        """A class with ``u``: its escapes, and no class escape at an end of a range."""
        p, n = self.p, len(self.p)
        # the last atom, when a ``-`` after it may make a range: whether it is a class
        # escape (``\\d``, ``\\w`` ...); None after a range or at the start
        last: bool | None = None
        ranging = False  # a ``-`` after ``last`` makes a range
        while i < n:
            c = p[i]
            if c == "]":
                return None, i + 1
            if c == "-" and last is not None and not ranging and i + 1 < n and p[i + 1] != "]":
                ranging, i = True, i + 1
                continue
            is_class = c == "\\" and i + 1 < n and p[i + 1] in _CLASS_ESCAPES
            why, i = self.escape(i + 1, True) if c == "\\" else (None, i + 1)
            if why:
                return why, i
            if ranging and (is_class or last):
                return "a class escape at an end of a class range", i
            last, ranging = (None if ranging else is_class), False
        return None, i  # (unterminated: the backtracking check's parser says it)

    def v_char(self, c: str, i: int) -> str | None:
        """With ``v``: a class character that must be escaped, or a doubled punctuator."""
        p = self.p
        if c in _V_MUST_ESCAPE:
            return f"{c!r} unescaped in a class (v)"
        if c in _V_DOUBLES and p.startswith(c * 2, i) and (c != "&" or p.startswith("&&&", i)):
            return f"{c * 2!r} in a class (v)"
        return None


def _unicode(p: str, i: int) -> tuple[str | None, int]:
    """After ``\\u`` (unicode mode): four hex digits or ``{hex}`` at most ``10FFFF``."""
    if p.startswith("{", i):
        j = p.find("}", i)
        body = p[i + 1:j] if j > 0 else ""
        if body and len(body) <= 16 and all(ch in _HEX for ch in body) \
                and int(body, 16) <= _MAX_CP:
            return None, j + 1
        return "\\u{...} that is no code point", i
    if len(p) >= i + 4 and all(ch in _HEX for ch in p[i:i + 4]):
        return None, i + 4
    return "\\u without four hex digits", i


def _groups(p: str) -> tuple[int, frozenset[str]]:
    """The capturing groups of ``p`` (counted outside classes and escapes) and their
    names (each read up to ``_MAX_NAME`` characters)."""
    count, i, n, in_class = 0, 0, len(p), False
    names: set[str] = set()
    while i < n:
        c = p[i]
        if c == "\\":
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
        elif c == "(" and not p.startswith("(?", i):
            count += 1
        elif c == "(" and p.startswith("(?<", i) and not p.startswith(("(?<=", "(?<!"), i):
            count += 1
            j = p.find(">", i + 3, i + 4 + _MAX_NAME)
            if j > 0:
                names.add(p[i + 3:j])
        i += 1
    return count, frozenset(names)
