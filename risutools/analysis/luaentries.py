"""Where a Lua script sets a global entry point RisuAI calls by name (``onStart``,
``onInput`` ...) by assignment, and the global a call of ``async`` defines: token and text
readings for :mod:`risutools.analysis.walk_lua`."""

from __future__ import annotations

import re

from risutools.analysis.luaapi import lua_api
from risutools.analysis.lualex import KEYWORDS, NAME, OP, LineIndex, iter_tokens

#: the global functions RisuAI calls (from risutools/data/lua_api.yaml)
ENTRY_POINTS = frozenset(lua_api().entry_points)
#: ``name =`` (or ``local name =``) just before a call of ``async``, and ``(function`` after it
_ASYNC_NAME = re.compile(r"(?<![\w.:])(local\s+)?([A-Za-z_]\w*)\s*=\s*$")
_ASYNC_FUNCTION = re.compile(r"async\s*\(\s*function\b")
#: a pre-filter for entry_assignments (without a leading \b, so the search is fast)
_ENTRY_ASSIGN = re.compile(r"(?:" + "|".join(sorted(ENTRY_POINTS)) + r")\s*=[^=]")


def may_assign_entries(code: str) -> bool:
    """Whether ``code`` may set an entry point by assignment (a pre-filter)."""
    return _ENTRY_ASSIGN.search(code) is not None


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


def entry_assignments(code: str) -> list[tuple[str, int]]:
    """Global entry points set by assignment, whatever the value: ``onStart = function``,
    ``onOutput = async(function ...)``, ``onInput = handler``, ``_G.onStart = f``
    (``local onStart = ...`` and fields of other tables are not globals RisuAI reads).

    One pass over the tokens with a window of four (constant memory)."""
    lines = LineIndex(code)
    out: list[tuple[str, int]] = []
    # window: (kind, value, start) of the last four tokens; the candidate is window[-2]
    w: list[tuple[int, str | None, int]] = [(0, None, 0)] * 4
    for kind, start, _end, value, _b0, _b1 in iter_tokens(code, []):
        w = [w[1], w[2], w[3], (kind, value, start)]
        (k0, v0, _), (k1, v1, _), (k2, v2, s2), (k3, v3, _) = w
        if not (k2 == NAME and v2 in ENTRY_POINTS and k3 == OP and v3 == "="):
            continue
        if k1 == OP and v1 in (".", ":"):
            if not (k0 == NAME and v0 in ("_G", "_ENV")):
                continue
        elif (k1 == NAME and v1 == "local") or (k1 == OP and v1 == ","):
            continue  # a local, or part of a list of names: not followed
        if len(out) < 100:
            out.append((str(v2), lines.line(s2)))
    return out
