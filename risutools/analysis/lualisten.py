"""The code an edit listener runs: its own body, a handler it names, and the script's
functions these call, and those they call in turn (:func:`listener_calls`).

RisuAI runs a ``listenEdit`` callback with an access key that never has lowLevelAccess, and
in an ``editDisplay`` listener one that is no safe id (scriptings.ts ``runScripted``,
``runLuaEditTrigger``); a function called from the callback gets that key too, so a
privileged call in a helper the listener calls is refused as one in its body is.  Calls are
matched to functions by name (a plain name, ``pcall(f, ...)`` too), as a reader would; the
whole script is scanned once for the calls of its named functions.
"""

from __future__ import annotations

from risutools.analysis.lua import Call, scan_lua
from risutools.analysis.luaflow import FunctionTable, Spans, listener_handler

#: levels of calls followed from a listener's code into the script's functions
MAX_LISTENER_DEPTH = 8
#: functions reached from listeners, at most, per script (past them none more is followed)
MAX_LISTENER_FUNCTIONS = 2000
#: at most this many ``listenEdit(kind, handler)`` calls are read for a handler's name
MAX_NAMED_LISTENERS = 1000


def listener_calls(code: str, calls: list[Call], table: FunctionTable) -> None:
    """Mark the calls of ``calls`` that run as an edit listener: those in the body of a
    handler ``listenEdit`` names (``in_listener``, ``outer`` the ``listenEdit`` call), and
    those in a function listener code calls, at any level up to ``MAX_LISTENER_DEPTH``
    (``via`` also: the line of the call in the listener's code that reaches it)."""
    found = [c for c in calls if c.name == "listenEdit" and not c.qualifier]
    handlers = {name: c for c in found[:MAX_NAMED_LISTENERS]
                if (name := listener_handler(code, c.start)) is not None}
    named: dict[str, list[int]] = {}
    for i, fn in enumerate(table.fns):
        if fn.name is not None:
            named.setdefault(fn.name, []).append(i)
    if not named:
        return
    # (every function a handler's name may stand for: its body is listener code)
    reach: dict[int, tuple[Call, int]] = {
        i: (handlers[n], 0) for n in handlers for i in named.get(n, ())}
    if found:
        _follow(code, table, named, reach)
    _mark(calls, table, reach)


def _callee(c: Call) -> str | None:
    """The script function ``c`` calls by a plain name (``f(...)``, ``pcall(f, ...)``)."""
    if c.qualifier:
        return None
    if c.name in ("pcall", "xpcall") and c.args and c.args[0].name:
        return c.args[0].name
    return c.name


def _follow(code: str, table: FunctionTable, named: dict[str, list[int]],
            reach: dict[int, tuple[Call, int]]) -> None:
    """Add to ``reach`` the functions listener code calls, level by level: function index
    -> (the ``listenEdit`` call it runs under, the line of the call that reached it first
    from the listener's own code)."""
    sites = [(c, n) for c in scan_lua(code, None, to_calls=frozenset(named) | {
        "pcall", "xpcall"}).calls if (n := _callee(c)) in named]
    level = [(n, c.outer, c.line) for c, n in sites if c.in_listener and c.outer is not None]
    level += _inside(sites, table, dict(reach))
    for _ in range(MAX_LISTENER_DEPTH):
        new: dict[int, tuple[Call, int]] = {}
        for name, outer, via in level:
            for i in named[name]:
                if i not in reach and i not in new and len(reach) + len(new) \
                        < MAX_LISTENER_FUNCTIONS:
                    new[i] = (outer, via)
        if not new:
            return
        reach.update(new)
        level = _inside(sites, table, new)


def _inside(sites: list[tuple[Call, str]], table: FunctionTable,
            fns: dict[int, tuple[Call, int]]) -> list[tuple[str, Call, int]]:
    """The calls of named functions made in the functions ``fns`` (index -> (listenEdit
    call, via line)), each with the listener and the line it runs under."""
    if not fns:
        return []
    by_kw = {table.fns[i].kw: got for i, got in fns.items()}
    spans = Spans(table.fns[i] for i in fns)
    out = []
    for c, name in sites:
        fn = spans.innermost(c.start) if spans.holds(c.start) else None
        if fn is not None:
            outer, via = by_kw[fn.kw]
            out.append((name, outer, via or c.line))
    return out


def _mark(calls: list[Call], table: FunctionTable, reach: dict[int, tuple[Call, int]]) -> None:
    """Mark each call of ``calls`` made in a function of ``reach`` as made in a listener."""
    if not reach:
        return
    by_kw = {table.fns[i].kw: got for i, got in reach.items()}
    spans = Spans(table.fns[i] for i in reach)
    for c in calls:
        if c.in_listener or not spans.holds(c.start):
            continue
        fn = spans.innermost(c.start)
        if fn is not None:
            c.in_listener = True
            c.outer, c.via = by_kw[fn.kw]
