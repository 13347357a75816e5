"""What module text may be copied into a document (titles, labels, keys, values).

A projection copies a few short strings from the module: its name (the title),
toggle keys, labels, groups and options, variable names and condition values.
A hostile or careless module can put code or a regex pattern in any of them,
so every copied string passes :meth:`CopyGuard.allow` first.  It is refused
when, after folding whitespace to single spaces, it

* contains one of the module's regex patterns that uses regex syntax (or equals
  any pattern),
* contains a line of the module's code (Lua trigger code or legacy JS) of more
  than 10 characters, or
* calls a Lua/RisuAI/JS function by name (``request(``, ``load(``, ``eval(`` ...), or
* looks like code or a pattern to the contract's MC500 detector.

Names (toggle keys, variable names) must also look like names: letters of any
script, digits, spaces and ``_ - . : /`` only.

Refused strings are replaced by neutral words chosen by the caller (a toggle's
key or ordinal, "(withheld)"), never shortened into something that might
still be code.  Curator notes are not filtered: they are the curator's words
(``validate``'s MC500 still checks them).
"""

from __future__ import annotations

import re

from risutools.contract.activecode import find_active_code
from risutools.formats.model import Module
from risutools.projection.naming import fold

_REGEX_SYNTAX = re.compile(r"[\\^$.|?*+()\[\]{}]")
_MIN_CODE_LINE = 11
_CALL = re.compile(
    r"(?<![\w.])(?:request|load|loadstring|require|dofile|hash|similarity|LLM|print|pcall|"
    r"xpcall|error|assert|rawget|rawset|rawequal|setmetatable|getmetatable|select|type|next|"
    r"unpack|eval|fetch|alert|setTimeout|Function|import)\s*\(")
_NAME = re.compile(r"[\w .:/-]+")


class CopyGuard:
    """Decides whether a string from ``module`` may be copied into its document."""

    def __init__(self, module: Module) -> None:
        patterns: set[str] = set()
        for r in module.regex:
            if isinstance(r, dict) and isinstance(r.get("in"), str) and r["in"].strip():
                patterns.add(r["in"])
        self._exact = frozenset(fold(p) for p in patterns)
        self._patterns = tuple(sorted(p for p in patterns
                                      if len(p) >= 3 and _REGEX_SYNTAX.search(p)))
        lines: set[str] = set()
        codes: list[str] = [module.cjs]
        for t in module.trigger:
            effects = t.get("effect") if isinstance(t, dict) else None
            for e in effects if isinstance(effects, list) else []:
                if isinstance(e, dict) and isinstance(e.get("code"), str):
                    codes.append(e["code"])
        for code in codes:
            for ln in code.splitlines():
                if len(ln) >= _MIN_CODE_LINE:  # folding never lengthens a line
                    s = fold(ln)
                    if len(s) >= _MIN_CODE_LINE:
                        lines.add(s)
        # longest first is not needed; sort for determinism of any future reporting
        self._lines = tuple(sorted(lines, key=len))
        self._cache: dict[str, bool] = {}

    def allow(self, text: str) -> bool:
        """True when ``text`` may be copied (after :func:`fold`)."""
        got = self._cache.get(text)
        if got is None:
            got = self._check(text)
            self._cache[text] = got
        return got

    def _check(self, text: str) -> bool:
        s = fold(text)
        if not s:
            return True
        if s in self._exact or any(p in text or p in s for p in self._patterns):
            return False
        for ln in self._lines:
            if len(ln) > len(s):
                break
            if ln in s:
                return False
        if _CALL.search(s):
            return False
        return find_active_code(s) is None and (s == text or find_active_code(text) is None)

    def allow_name(self, text: str) -> bool:
        """True when ``text`` may be copied as a name (a key or a variable)."""
        return _NAME.fullmatch(fold(text)) is not None and self.allow(text)

