"""What the Lua call scanner (:func:`risutools.analysis.lua.scan_lua`) records of one script:
:class:`LuaScan`, with its function definitions (:class:`FuncDef`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from risutools.analysis.luaargs import Call


@dataclass
class FuncDef:
    """A function definition: its name, line and whether it is ``local``; ``at`` the offset
    of its name, ``kw`` of its ``function`` keyword; ``dotted`` for ``function a.b`` (the
    name is then ``a``, a table, not the function)."""

    name: str
    line: int
    local: bool
    at: int = -1
    kw: int = -1
    dotted: bool = False


@dataclass
class LuaScan:
    """What :func:`~risutools.analysis.lua.scan_lua` found in one script."""

    calls: list[Call] = field(default_factory=list)
    defs: list[FuncDef] = field(default_factory=list)
    dynamic_index: list[tuple[str, int]] = field(default_factory=list)  # (_ENV|_G, line)
    url_hosts: list[tuple[str, int]] = field(default_factory=list)
    #: names assigned exactly one string literal (``local URL = "https://..."``)
    constants: dict[str, str] = field(default_factory=dict)
    #: names assigned several short string literals (a branch chain ``if a then k = "x"
    #: elseif b then k = "y" end``): each of them, at most ``MAX_CHOICES``
    choices: dict[str, tuple[str, ...]] = field(default_factory=dict)
    #: how many times each name of ``choices`` is assigned a literal (a reader checks that
    #: the name is assigned nothing else: :func:`risutools.analysis.lualex.assignment_counts`)
    literal_assigns: dict[str, int] = field(default_factory=dict)
    errors: list[tuple[int, str]] = field(default_factory=list)  # (line, message)
    params: frozenset[str] = frozenset()  # every parameter name of the script's functions
    #: watched names (the kept calls and ``_G``/``_ENV``) read as a value: not called, not a
    #: field of another table, not the name declared (``f(request)``, ``{__index = _G}``,
    #: ``(request)(url)``): (name, line, offset)
    values: list[tuple[str, int, int]] = field(default_factory=list)
    #: ``x = name`` (also ``local x``; a field ``{x = name}``, ``t.x = name`` is ``.x``)
    #: with ``name`` watched and the whole value: (x, name, line, offset of ``name``)
    aliases: list[tuple[str, str, int, int]] = field(default_factory=list)
    #: watched names declared (``local request``, a parameter) or assigned (``request =``,
    #: ``a, request =``: then ``True``, a declaration only if a ``local`` or ``for`` list
    #: holds it): (name, offset, whether to check)
    decls: list[tuple[str, int, bool]] = field(default_factory=list)
    #: ``_G[k]`` with ``k`` one literal or one name: (table, line, the literal or None, the
    #: name or None, what follows: "call", "assign" or "")
    env_keys: list[tuple[str, int, str | None, str | None, str]] = field(default_factory=list)
    tokens: int = 0  # tokens read one by one (runs passed over by the skip path not counted)
    lines: int = 0
