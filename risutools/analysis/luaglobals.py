"""The table of globals reached through ``package.loaded`` (``package.loaded._G`` is
``_G``): what the Lua scanner (:mod:`risutools.analysis.lua`) reads as an alias of it."""

from __future__ import annotations

import re

#: ``package.loaded._G`` after ``package`` (or an alias of it): its ``_G`` (group 1) is the
#: table of globals (``package.loaded["_G"]`` is read so too: ``lualex.globals_fields``)
_LOADED_G = re.compile(r"[ \t]*\.[ \t]*loaded[ \t]*\.[ \t]*(_G)(?![A-Za-z0-9_])")


def loaded_globals(text: str, name: tuple[str, int, str, str], packages: frozenset[str],
                   env: frozenset[str], alias: str) -> tuple[int, str] | None:
    """``x = package.loaded._G`` (``name``: ``package`` or an alias of it, unqualified or a
    field of the table of globals, with its offset): the offset of the ``_G`` and ``x``,
    which the scanner reads as ``x = _G`` (an alias of the table of globals); else None."""
    pname, pstart, pq, pbase = name
    if pname not in packages or (pq and pbase not in env):
        return None
    m = _LOADED_G.match(text, pstart + len(pname))
    return (m.start(1), alias) if m is not None else None
