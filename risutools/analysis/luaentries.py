"""Where a Lua script sets a global entry point RisuAI calls by name (``onStart``,
``onInput`` ...) by assignment, and the global a call of ``async`` defines: token and text
readings for :mod:`risutools.analysis.walk_lua`."""

from __future__ import annotations

import re

from risutools.analysis.luaapi import lua_api
from risutools.analysis.lualex import (
    KEYWORDS,
    NAME,
    NUM,
    OP,
    STR,
    LineIndex,
    decode_lua_string,
    iter_tokens,
)

#: the global functions RisuAI calls -> the hooks each one is (risutools/data/lua_api.yaml)
ENTRY_POINTS: dict[str, tuple[str, ...]] = dict(lua_api().entry_points)
#: ``name =`` (or ``local name =``) just before a call of ``async``, and ``(function`` after it
_ASYNC_NAME = re.compile(r"(?<![\w.:])(local\s+)?([A-Za-z_]\w*)\s*=\s*$")
_ASYNC_FUNCTION = re.compile(r"async\s*\(\s*function\b")
_ENTRIES = "(?:" + "|".join(sorted(ENTRY_POINTS)) + ")"
#: a pre-filter for entry_assignments, one pattern that opens with the names (so the search
#: is fast: a pattern opening with ``[.:]`` was tried at every character, 12 % of a real
#: corpus's analysis): an entry point's name before ``=`` or ``,``, before ``(`` (then only
#: after ``.``/``:``, ``function _G.onX(``: looked at here), or a key ``["onX"]`` before
#: ``=`` or ``,``
_ENTRY_ASSIGN = re.compile(rf"{_ENTRIES}(?:\s*(?:=[^=]|,|(\())|[\"']\s*\]\s*(?:=[^=]|,))")


def may_assign_entries(code: str) -> bool:
    """Whether ``code`` may set an entry point by assignment (a pre-filter)."""
    for m in _ENTRY_ASSIGN.finditer(code):
        if m.start() and (code[m.start() - 1].isalnum() or code[m.start() - 1] == "_"):
            continue  # (the end of another name: ``sessionInput,``)
        if m.group(1) is None:
            return True
        i = m.start() - 1  # (the blanks before it: each run read once, for one name after it)
        while i >= 0 and code[i] in " \t\r\n\f\v":
            i -= 1
        if i >= 0 and code[i] in ".:":
            return True
    return False


def async_target(code: str, start: int) -> str | None:
    """The global a call of ``async`` at ``start`` defines: ``name = async(function``
    (None for a local, a field, or another use of ``async``)."""
    if _ASYNC_FUNCTION.match(code, start) is None:
        return None
    m = _ASYNC_NAME.search(code, max(0, start - 200), start)
    if m is None or m.group(1) or m.group(2) in KEYWORDS:
        return None
    before = code[max(0, m.start() - 200):m.start()].rstrip()[-1:]
    return None if before in ("{", ",", "(") else m.group(2)


def entry_assignments(code: str, env: frozenset[str]) -> list[tuple[str, int]]:
    """Global entry points set by assignment, whatever the value: ``onStart = function``,
    ``onOutput = async(function ...)``, ``onInput = handler``, each name of a list
    (``onStart, onInput = f, f``), a field of the table of globals (``G.onStart = f`` for
    ``G`` in ``env``: ``_G``, ``_ENV``, their aliases; ``_G._G``, ``package.loaded._G``,
    ``package.loaded["_G"]``) also defined there (``function _G.onInput(id)``), not
    ``local onStart``, a field of another table or of a table constructor.

    One pass over the tokens (memory: the current list of names, at most 100 kept)."""
    reader = _Targets(env)
    for kind, start, _end, value, b0, b1 in iter_tokens(code, []):
        if kind == STR and value is None and reader.expect == "key":
            value = decode_lua_string(code, b0, b1)
        reader.step(kind, value, start)
        if len(reader.found) >= MAX_ENTRY_ASSIGNMENTS:
            break
    lines = LineIndex(code)
    return [(name, lines.line(at)) for name, at in reader.found]


#: at most this many entry points set by assignment are read per script
MAX_ENTRY_ASSIGNMENTS = 100
#: at most this many names of a list of targets are kept (``a, b, onStart = ...``)
_MAX_TARGETS = 64
#: tokens after which a list of targets starts a statement (an expression or a block ends)
_STATEMENT_AFTER = frozenset({"end", "do", "then", "else", "break", "repeat", ";", ")",
                              "]", "}", "::"})
#: what a path of fields yields the table of globals through (``_G._G``, ``package.loaded._G``)
_GLOBALS_STEPS = (("_G",), ("package", "loaded", "_G"))


def globals_path(keys: list[str], env: frozenset[str]) -> bool:
    """Whether the path ``keys`` (``["package", "loaded", "_G"]``) yields the table of
    globals: a name of ``env`` or ``package.loaded._G``, then any number of ``._G`` or
    ``.package.loaded._G``."""
    if not keys:
        return False
    i = 1 if keys[0] in env else 3 if tuple(keys[:3]) == _GLOBALS_STEPS[1] else 0
    if not i:
        return False
    while i < len(keys):
        step = next((st for st in _GLOBALS_STEPS if tuple(keys[i:i + len(st)]) == st), None)
        if step is None:
            return False
        i += len(step)
    return True


class _Targets:
    """The list of assignment targets being read (paths of names and fields), and the
    entry points found set: (name, offset)."""

    def __init__(self, env: frozenset[str]) -> None:
        self.env = env
        self.found: list[tuple[str, int]] = []
        #: the complete paths of the list, where each last key starts, and whether it is
        #: ``[k]`` (``_G["onX"] =`` is the scanner's: ``LuaScan.env_keys``)
        self.items: list[tuple[list[str], int, bool]] = []
        self.path: list[str] = []  # the path being read
        self.at = -1  # where its last key starts
        self.bracket = False  # it is ``[k]``
        self.expect = "name"  # "name", "more" (after a key), "key" ([), "close" (])
        self.statement = True  # the list starts a statement
        self.function = False  # the path is a function's name (``function _G.onX(``)

    def reset(self, kind: int, v: str) -> None:
        """A token that ends the list: whether a list after it starts a statement
        (``function`` starts a function's name)."""
        self.items, self.path, self.expect = [], [], "name"
        self.function = kind == NAME and v == "function"
        self.statement = self.function or kind in (STR, NUM) or v in _STATEMENT_AFTER

    def target(self, path: list[str], bracket: bool) -> bool:
        return path[-1] in ENTRY_POINTS and (len(path) == 1 or (
            globals_path(path[:-1], self.env) and not (bracket and len(path) == 2)))

    def step(self, kind: int, value: str | None, start: int) -> None:
        v = value or ""
        if (kind == NAME and v not in KEYWORDS and self.expect == "name") or (
                kind == STR and self.expect == "key"):
            self.path.append(v)
            self.at, self.bracket = start, kind == STR
            self.expect = "more" if kind == NAME else "close"
        elif kind == OP and ((self.expect == "more" and v in (".", ":", "["))
                             or (self.expect == "close" and v == "]")):
            self.expect = "key" if v == "[" else "more" if v == "]" else "name"
        elif self.expect == "more":
            self.after_path(kind, v, start)
        else:
            self.reset(kind, v)

    def after_path(self, kind: int, v: str, start: int) -> None:
        """The token after a complete path: ``,`` (the next target), ``=`` (the list
        assigned), ``(`` (a function named), another name (a new statement), else none."""
        if kind == OP and v == "," and not self.function and len(self.items) < _MAX_TARGETS:
            self.items.append((self.path, self.at, self.bracket))
            self.path, self.expect = [], "name"
            return
        if self.statement and ((kind == OP and v == "=" and not self.function)
                               or (self.function and v == "(" and len(self.path) > 1)):
            for path, at, bracket in [*self.items, (self.path, self.at, self.bracket)]:
                if self.target(path, bracket):
                    self.found.append((path[-1], at))
        self.reset(kind, v)
        if kind == NAME and v not in KEYWORDS:  # ``x = y onStart = f``: a new statement
            self.statement = True
            self.step(kind, v, start)
