"""The walk's reading of Lua (part of :func:`risutools.analysis.walk.walk`).

One script is scanned once (:func:`risutools.analysis.lua.scan_lua`, keeping the host
calls); :class:`_Script` records what it defines and calls: entry points, hooks, state keys,
host APIs, privileged calls, network requests, dynamic lookups and loads.  When every
script has been read, :func:`sort_loads` decides where the code of each load comes from
(written as a literal, read from a lorebook, or built at run time).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from typing import Any

from risutools.analysis.lorecode import LOADERS, lore_flow, lore_reads
from risutools.analysis.lua import ENV_NAMES, Arg, Call, LuaScan
from risutools.analysis.luaapi import lua_api
from risutools.analysis.luabuttons import lua_buttons, may_hold_buttons
from risutools.analysis.luaentries import (
    ENTRY_POINTS,
    async_target,
    entry_assignments,
    may_assign_entries,
)
from risutools.analysis.luaflow import (
    Fn,
    FunctionTable,
    Spans,
    Templates,
    at_top_level,
    function_table,
    helper_keys,
    plain_defs,
    unreached,
)
from risutools.analysis.luafold import MAX_FOLD_SPAN, MAX_FOLDS, fold_argument
from risutools.analysis.luahtml import may_hold_html, read_lua_html
from risutools.analysis.lualex import LineIndex, assignment_counts, names_in
from risutools.analysis.lualisten import listener_calls
from risutools.analysis.lualoops import loop_literals
from risutools.analysis.luanames import alias_roots, scan_script
from risutools.analysis.luaurls import address
from risutools.analysis.model import LISTEN_EDIT_HOOKS
from risutools.analysis.seen import (
    LISTENER,
    Loads,
    Seen,
)
from risutools.analysis.walk_text import read_cbs_reads
from risutools.jsontypes import json_type_name

_API = lua_api()
#: Lua host function -> (capability or None, privileged): from risutools/data/lua_api.yaml
HOST_APIS: dict[str, tuple[str | None, bool]] = {
    f.name: (f.capability, f.privileged) for f in _API.functions.values()}
STATE_CALLS: dict[str, tuple[str, str]] = {  # name -> (scope, read|write); key = 2nd arg
    f.name: f.state for f in _API.functions.values() if f.state is not None}
#: calls that reach any global (the environment of a function, Lua 5.1)
_ENV_CALLS = frozenset({"getfenv", "setfenv"})
#: a name read at an offset is declared there (``for a, NAME in``, ``local a, NAME``):
#: the text before it, from a ``for``/``local`` on (one match tried from each of the last
#: ``_DECL_TRIES`` of them in the ``_DECL_WINDOW`` characters before the name)
_DECL_BEFORE = re.compile(r"(?:for|local)\s+(?:[A-Za-z_]\w*(?:\s*<\s*\w+\s*>)?\s*,\s*)*\Z")
_DECL_WINDOW = 120
_DECL_TRIES = 4
#: at most this many names read as values are checked for a declaration per script (past
#: it, each is a use: reported, never hidden)
MAX_DECL_CHECKS = 20_000
#: names whose use reaches any global (a dynamic lookup, RA112), besides the table of
#: globals itself: the debug library (``debug.getregistry()``; ``debug.traceback`` reaches
#: nothing), Lua 5.1's environment functions and ``package`` (``package.loaded._G``)
REACH_ALL = frozenset({"debug", "getfenv", "setfenv", "package"})
#: the calls the scanner keeps (every other call is passed over); their names, and
#: ``_G``/``_ENV``, read as values are recorded too
KEEP_CALLS = frozenset(HOST_APIS) | {"rawget", "rawset", "pcall", "xpcall"} | REACH_ALL
#: trigger effects that hold code (RisuAI runs a trigger whose first effect is one of them
#: on every event, with the event's name as its mode)
CODE_EFFECTS = frozenset({"triggerlua", "triggercode"})
_BAD_CHARS = re.compile("[\x00\ud800-\udfff]")
_BAD_CHARS_CHUNK = 1 << 20
#: host calls RisuAI refuses in every edit listener (they need lowLevelAccess, which
#: runLuaEditTrigger never gives), and those it refuses in an ``editDisplay`` listener (it
#: gives it a display key, not a safe id: scriptings.ts ``runScripted``)
REFUSED_IN_DISPLAY = frozenset(f.name for f in _API.functions.values() if f.needs_safe_id)
REFUSED_IN_LISTENERS = frozenset(n for n, (_, p) in HOST_APIS.items() if p) | \
    REFUSED_IN_DISPLAY


def read_lua(s: Seen, code: Any, where: str, trigger: int | None, *,
             callback: bool = False, entries: frozenset[str] | None = None) -> None:
    """Read one Lua field (``where`` as evidence shows it; ``trigger``: the index of the
    trigger that runs it, or ``LOREBOOK_CODE``; ``callback``: code another module loads and
    calls, which gives this module no hook or entry point; ``entries``: the only entry
    points RisuAI calls in it, and no edit listener (a Lua effect after the first))."""
    if not isinstance(code, str):
        if code is not None:
            pointer = "/" + where.replace("[", "/").replace("].", "/").replace("]", "")
            s.code_not_text.append((s.tick(), where, pointer + "/code", json_type_name(code)))
        return
    if not code.strip():
        return
    if _has_bad_chars(code):
        s.binary_code.append((s.tick(), where))
    s.counts["lua_bytes"] = s.counts.get("lua_bytes", 0) + len(code)
    scan = s.scans.pop(where, None) or scan_script(code, KEEP_CALLS)
    s.counts["lua_lines"] = s.counts.get("lua_lines", 0) + scan.lines
    if scan.errors:
        s.unlexed.append((s.tick(), where, scan.errors))
    if trigger is not None and trigger >= 0:
        s.trigger_lua.append(code)
    _Script(s, code, where, trigger, scan, callback, entries).read()


def calls_load(s: Seen, where: str, code: str) -> bool:
    """Whether the script calls ``load``/``loadstring`` (also through ``pcall``), from its
    scan (made here and kept for :func:`read_lua`)."""
    scan = s.scans.get(where)
    if scan is None:
        scan = s.scans[where] = scan_script(code, KEEP_CALLS)
    loaders = {"load", "loadstring"}
    loaders |= {a for a, rs in alias_roots(scan.aliases, KEEP_CALLS).items() if rs & loaders}
    return any(c.name in loaders or (
        c.name in ("pcall", "xpcall") and c.args and c.args[0].name in loaders)
        for c in scan.calls) or any(n in loaders for n, _l, _o in scan.values)


class _Script:
    """One Lua script being read into ``seen``."""

    def __init__(self, seen: Seen, code: str, where: str, trigger: int | None,
                 scan: LuaScan, callback: bool = False,
                 entries: frozenset[str] | None = None) -> None:
        self.seen = seen
        self.only = entries  # the entry points RisuAI calls here (None: all, and listeners)
        self.code = code
        self.where = where
        self.trigger = trigger
        self.scan = scan
        self.callback = callback
        #: what each alias stands for (``local fetch = request``: fetch -> request)
        self.roots = alias_roots(scan.aliases, KEEP_CALLS | ENV_NAMES)
        #: the names that stand for the table of globals (``_G``, ``_ENV``, their aliases)
        self.env = ENV_NAMES | {a for a, rs in self.roots.items()
                                if rs & ENV_NAMES and a[0] != "."}
        self.shadow = self.shadows()
        #: the script looks names up at run time: any global may be reached, and any call
        #: of a field named like a host function may be one
        self.decl_sites: set[int] = set()  # names read where they are declared
        self.decls: dict[tuple[str, int], int] | None = None  # decl_index
        self.decl_names: set[str] = set()  # the names in it
        self.table: FunctionTable | None = None  # made when first needed (looks_up_names)
        self.loop_values: dict[str, tuple[str, ...]] | None = None  # (loops)
        self.reach_all = self.looks_up_names()
        self.dead: list[Fn] = []  # functions nothing reaches
        self.dead_spans: Spans | None = None  # their extents (is_dead)
        self.dead_lines: tuple[list[int], list[int]] | None = None  # their lines (is_dead_line)
        self.pending: list[tuple[Call, str, str]] = []  # state calls with a key to follow
        self.assigns: dict[str, int] | None = None  # ``name =`` of each chain (choices_of)
        self.folds = 0  # arguments folded (folded)
        self.templates = Templates(code, scan)  # ``local url = "https://h/" .. q`` (request)
        #: the buttons the code writes in its strings (read before what they reach)
        self.code_buttons = lua_buttons(code) if may_hold_buttons(code) else []

    def read(self) -> None:
        s, where, scan = self.seen, self.where, self.scan
        self.find_unreached()
        self.entry_points()
        named = {(t, ln): k for t, ln, k, _n, _w in scan.env_keys if k in HOST_APIS}
        for name, line in scan.dynamic_index:  # (a key that names a host function: said)
            got = named.get((name, line))
            self.lookup(f"{name}[...]" + (f" (here {got})" if got else ""), line)
        self.tables_as_values()
        for host, line in scan.url_hosts:
            s.fact(s.urls, host, f"{where} line {line}")
        self.buttons()
        if may_hold_html(self.code):  # (HTML its strings write: what RisuAI shows)
            s.script_html.extend((s.tick(), where, h) for h in read_lua_html(
                self.code, scan.constants, self.templates))
        self.named_listeners()
        for call in scan.calls:
            for c in self.resolved(call):
                if self.dead and self.is_dead(c.start):
                    self.unreached_call(c)
                elif c.name in ("rawget", "rawset"):
                    self.rawget(c)
                else:
                    self.call(c)
        self.values()
        if self.pending:
            self.keys_through_helpers()
        if not self.callback:
            self.lua_globals()

    def loops(self) -> dict[str, tuple[str, ...]]:
        """Each loop variable's strings (:func:`.lualoops.loop_literals`), made once."""
        if self.loop_values is None:
            self.loop_values = loop_literals(self.code)
        return self.loop_values

    def functions(self) -> FunctionTable:
        """The script's function table (made once, when a reading needs it)."""
        if self.table is None:
            self.table = function_table(self.code)
        return self.table

    # -- what RisuAI reaches -----------------------------------------------------------------
    def find_unreached(self) -> None:
        """The named functions nothing reaches (:func:`luaflow.unreached`); the calls in
        them count only as ``unreached``."""
        scan = self.scan
        if not scan.calls or not scan.defs:
            return
        defs = plain_defs(scan.defs)
        if defs:
            self.dead = unreached(self.code, defs, self.reached_from_outside)
            self.dead_spans = Spans(self.dead) if self.dead else None
            for fn in self.dead:  # listed, the calls in it added to its evidence
                key = f"function {fn.name}"
                if key not in self.seen.unreached:
                    self.seen.fact(self.seen.unreached, key, f"{self.where} line {fn.line}")

    def reached_from_outside(self, name: str) -> bool:
        """An entry point RisuAI calls, or any global function: RisuAI calls a Lua global
        by name from outside the script whenever a manual trigger of that name runs (a
        user's ``/trigger name``, any enabled component's ``runtrigger``, a button in any
        message shown, the model's own replies included: ``triggers.ts``, ``command.ts``),
        so only a ``local`` function can be one nothing reaches."""
        return name in ENTRY_POINTS or not all(d.local for d in self.scan.defs if d.name == name)

    def is_dead(self, offset: int) -> bool:
        return self.dead_spans is not None and self.dead_spans.holds(offset)

    def unreached_call(self, call: Call) -> None:
        """A host call (or a host function read as a value) inside a function nothing
        reaches: listed under its function only."""
        if call.name not in HOST_APIS:
            return
        fn = self.dead_spans.innermost(call.start) if self.dead_spans else None
        if fn is None:
            return
        self.seen.fact(self.seen.unreached, f"function {fn.name}", f"{self.where} line {call.line}")

    def entry_points(self) -> None:
        """The global functions RisuAI calls (``onStart`` ...), however they are set (not
        in code another module calls, nor in a function nothing reaches)."""
        if self.callback:
            return
        s, code, where = self.seen, self.code, self.where
        assigned = entry_assignments(code, self.env) if may_assign_entries(code) else None
        for d in self.scan.defs:
            # ``onX = function`` is judged by entry_assignments (which knows ``local``)
            if not d.local and self.called(d.name) and not self.is_dead(d.at) and (
                    assigned is None or d.kw < d.at):
                ev = f"{where} line {d.line}"
                s.fact(s.entries, d.name, ev)
                s.hook_all(ENTRY_POINTS[d.name], ev)
        for name, line in assigned or []:
            if self.is_dead_line(line) or not self.called(name):
                continue
            ev = f"{where} line {line}"
            s.fact(s.entries, name, ev)
            s.hook_all(ENTRY_POINTS[name], ev)

    def called(self, name: str) -> bool:
        """Whether RisuAI calls the global ``name`` of this script as an entry point."""
        return name in ENTRY_POINTS and (self.only is None or name in self.only)

    def buttons(self) -> None:
        """Buttons the code writes into what RisuAI shows (:func:`lua_buttons`: risu-btn,
        risu-trigger, CBS buttons, LightBoard's ``risu_btn``): hook.manual at each, the value
        a button callback (``*`` where computed), a name a button calls by name."""
        s = self.seen
        for b in self.code_buttons:
            if self.dead and self.is_dead(b.offset):
                continue
            ev = f"{self.where} line {b.line}"
            if not self.callback:
                s.hook("hook.manual", ev)
            if b.value != "*":
                s.fact(s.code_buttons, b.value, ev)
            if b.kind == "btn":
                s.risu_btn_seen.append(ev)
            elif b.value != "*":
                s.named_buttons.append((b.value, ev))

    def named_listeners(self) -> None:
        """The calls that run as an edit listener besides those written in its arguments:
        in a handler it names, in the functions these call (:mod:`lualisten`; RisuAI runs
        them without lowLevelAccess)."""
        if any(c.name in REFUSED_IN_LISTENERS for c in self.scan.calls):
            listener_calls(self.code, self.scan.calls, self.functions())

    def lua_globals(self) -> None:
        """The global functions this script defines (a button calls them by name), the last
        definition of each (``f = async(function ...)`` defined twice: the later wins)."""
        found: list[tuple[int, str]] = []
        for d in self.scan.defs:
            if not d.local and not d.dotted:
                if self.is_dead(d.at):
                    self.seen.dead_globals.add(d.name)
                else:
                    found.append((d.line, d.name))
        for c in self.scan.calls:
            if c.name == "async" and not c.qualifier:
                name = async_target(self.code, c.start)
                if name is not None:
                    found.append((c.line, name))
        last: dict[str, int] = {}
        for line, name in sorted(found):
            last[name] = line
        for name, line in last.items():
            self.seen.lua_globals.setdefault(name, []).append(f"{self.where} line {line}")

    # -- names: shadows, aliases, the table of globals as a value ------------------------------
    def shadows(self) -> dict[str, int]:
        """Host functions the script defines again (``local function request``, ``function
        request``): name -> the offset after which a call of it is the script's own.  Only
        a definition outside every block and function counts (one inside shadows nothing
        outside it, and a global defined in a function only once that function runs)."""
        defs = [d for d in self.scan.defs if (d.name in HOST_APIS or d.name in REACH_ALL)
                and not d.dotted]
        if not defs:
            return {}
        where = [(d.name, min(p for p in (d.at, d.kw) if p >= 0)) for d in defs]
        top = at_top_level(self.code, (at for _n, at in where))
        out: dict[str, int] = {}
        for name, at in where:
            if at in top and at < out.get(name, len(self.code)):
                out[name] = at
        return out

    def shadowed(self, name: str, offset: int) -> bool:
        at = self.shadow.get(name)
        return at is not None and offset > at

    def looks_up_names(self) -> bool:
        """Whether the script looks names up at run time (``_G[k]``, the table of globals
        as a value or an alias of it, ``rawget(_G, k)``, ``debug``, ``getfenv``)."""
        scan, env = self.scan, self.env
        return bool(scan.dynamic_index) or len(env) > len(ENV_NAMES) \
            or any(t in env or t in REACH_ALL for _a, t, _l, _o in scan.aliases) \
            or any((n in env or n in REACH_ALL) and not self.local_value(n, at)
                   for n, _l, at in scan.values) \
            or any((c.name in _ENV_CALLS and not c.qualifier) or (
                c.name in ("rawget", "rawset") and c.args and c.args[0].name in env)
                for c in scan.calls)

    def lookup(self, through: str, line: int) -> None:
        """A dynamic lookup (RA112) through ``through``."""
        s = self.seen
        ev = f"{self.where} line {line}"
        s.fact(s.dynamic, through, ev)
        s.cap("script.dynamic_load", ev)
        s.dynamic_lookups.append((s.tick(), through, ev))

    def tables_as_values(self) -> None:
        """``_G``/``_ENV`` read as a value (assigned, passed, in a table: every global is
        reachable through it), ``debug``, ``getfenv``/``setfenv``: dynamic lookups."""
        scan, env = self.scan, self.env
        for value, line, at in scan.values:
            if (value in env or value in REACH_ALL) and not self.local_value(value, at):
                self.lookup(f"{value} (as a value)" if value in env else value, line)
        for _alias, target, line, _at in scan.aliases:
            if target in env or target in REACH_ALL:
                self.lookup(f"{target} (as a value)" if target in env else target, line)
        for c in scan.calls:
            if c.name in _ENV_CALLS and not c.qualifier:
                self.lookup(c.name, c.line)
        self.env_keys()

    def env_keys(self) -> None:
        """``_G["onOutput"] = f`` (also ``_G[K]`` with ``K`` a constant): an entry point;
        ``_G[K](...)``: a use of the host function ``K`` names."""
        for _table, line, literal, name, then in self.scan.env_keys:
            key = literal if literal is not None else self.scan.constants.get(name or "")
            if key is None or self.callback:
                continue
            if then == "assign" and self.called(key) and not self.is_dead_line(line):
                ev = f"{self.where} line {line}"
                self.seen.fact(self.seen.entries, key, ev)
                self.seen.hook_all(ENTRY_POINTS[key], ev)
            elif then == "call" and literal is None and key in HOST_APIS:
                self.value(key, line, -1, True)  # ``_G[K](...)``: its arguments not read

    def is_dead_line(self, line: int) -> bool:
        """Whether line ``line`` is in a function nothing reaches (their lines merged once,
        then a binary search)."""
        if not self.dead:
            return False
        if self.dead_lines is None:
            lines = LineIndex(self.code)
            merged: list[list[int]] = []
            for a, b in sorted((fn.line, lines.line(fn.end)) for fn in self.dead):
                if merged and a <= merged[-1][1]:
                    merged[-1][1] = max(merged[-1][1], b)
                else:
                    merged.append([a, b])
            self.dead_lines = ([a for a, _ in merged], [b for _, b in merged])
        starts, ends = self.dead_lines
        i = bisect_right(starts, line) - 1
        return i >= 0 and line <= ends[i]

    def literal_of(self, arg: Arg) -> str | None:
        """An argument's literal value: a literal, or a name assigned one literal."""
        if arg.literal is not None:
            return arg.literal
        return self.scan.constants.get(arg.name) if arg.name else None

    def reaches(self, call: Call) -> list[str]:
        """The kept names (host functions, ``rawget`` ...) a recorded call is a call of:
        its own name (unless a definition of the script shadows it, or it is a field of
        another table than the globals'), what an alias of that name stands for, and, once
        the script looks names up at run time, a field named like a host function."""
        name, q = call.name, call.qualifier
        roots = self.roots.get(name, frozenset())
        if q:  # ``t.go()`` with ``{go = simpleLLM}``
            roots |= self.roots.get("." + name, frozenset())
        out = sorted(r for r in roots if r not in ENV_NAMES)
        if q == "[" or (q == "." and call.base in self.env):  # ``_G["x"](...)``, ``_G.x()``
            own = name in KEEP_CALLS
        elif q:
            own = self.reach_all and name in HOST_APIS
        else:
            own = name in KEEP_CALLS and not self.shadowed(name, call.start)
        if own and name not in out:
            out.append(name)
        return out

    def resolved(self, call: Call) -> list[Call]:
        """The calls of kept names ``call`` makes (:meth:`reaches`), unqualified (a method
        call through an alias loses its arguments: the first one is the table), and
        ``pcall(f, ...)`` as a call of ``f``."""
        out: list[Call] = []
        for name in self.reaches(call):
            c = _as_call(call, name)
            if name not in ("pcall", "xpcall"):
                out.append(c)
                continue
            inner = through_pcall(c)
            if inner is not None:
                out.extend(_as_call(inner, n) for n in self.reaches(inner)
                           if n not in ("pcall", "xpcall"))
        return out

    def values(self) -> None:
        """Host functions read as values: ``f(request)`` (loose: a use whose calls are not
        seen) and aliases (``local fetch = request``: their calls are followed)."""
        for name, line, at in self.scan.values:
            self.value(name, line, at, True)
        for _alias, target, line, at in self.scan.aliases:
            self.value(target, line, at, False)

    def value(self, name: str, line: int, at: int, loose: bool) -> None:
        """``name`` read as a value at ``at``: a use of each host function it stands for
        (capability, privilege); a loose ``request`` is a request to an address not known
        (RA104), a loose loader a load of code built at run time (RA110)."""
        roots = {name} if name in KEEP_CALLS else self.roots.get(name, frozenset())
        for r in sorted(roots & HOST_APIS.keys()):
            if at >= 0 and (self.shadowed(r, at) or self.local_value(name, at)):
                continue
            call = Call(r, line, start=at)
            if at >= 0 and self.dead and self.is_dead(at):
                self.unreached_call(call)
                continue
            ev = f"{self.where} line {line}"
            self.host_use(r, ev, self.trigger)
            if loose and r == "request":
                self.request(call, ev)
            elif loose and _CALL_STEPS.get(r) is _Script.load:
                self.load(call, ev)

    def local_value(self, name: str, at: int) -> bool:
        """Whether ``name`` read at ``at`` is a variable of the script, not the host
        function or table: declared right there (``for k, name in``, ``local a, name``), or
        declared before it (a parameter, ``local name``, a loop's variable) in the function
        around it or one around that (an approximation: a declaration in a block that has
        ended still counts)."""
        if at < 0:
            return False
        index = self.decl_index()
        if at in self.decl_sites:
            return True
        if name not in self.decl_names:
            return False
        table = self.functions()
        fn = table.enclosing(at)
        for _ in range(64):
            first = index.get((name, fn))
            if first is not None and first < at:
                return True
            if fn < 0:
                break
            fn = table.fns[fn].parent
        return False

    def declared_at(self, at: int) -> bool:
        code = self.code
        start = max(0, at - _DECL_WINDOW)
        end = at
        for _ in range(_DECL_TRIES):
            k = max(code.rfind("for", start, end), code.rfind("local", start, end))
            if k < 0:
                return False
            if (k == 0 or not (code[k - 1].isalnum() or code[k - 1] in "_.:")) \
                    and _DECL_BEFORE.match(code, k, at):
                return True
            end = k
        return False

    def decl_index(self) -> dict[tuple[str, int], int]:
        """(name, the function around it) -> the first offset a watched name is declared
        at there (made once): the declarations the scanner saw, and the names read as
        values where they are declared (the first ``MAX_DECL_CHECKS``)."""
        if self.decls is None:
            self.decls = {}
            found = [(n, at) for n, at, check in self.scan.decls
                     if not check or self.declared_at(at)]
            for name, _line, at in self.scan.values[:MAX_DECL_CHECKS]:
                if self.declared_at(at):
                    self.decl_sites.add(at)
                    found.append((name, at))
            table = self.functions() if found else None
            for name, at in found:
                key = (name, table.enclosing(at) if table is not None else -1)
                self.decls[key] = min(at, self.decls.get(key, at))
                self.decl_names.add(name)
        return self.decls

    # -- host calls ---------------------------------------------------------------------------
    def rawget(self, call: Call) -> None:
        """``rawget(_G, name)`` / ``rawset(_ENV, ...)``: a dynamic lookup; a literal (or
        constant) name is that name: a host function read, an entry point set."""
        if not call.args or call.args[0].name not in self.env:
            return
        s = self.seen
        table = call.args[0].name
        ev = f"{self.where} line {call.line}"
        key = self.literal_of(call.args[1]) if len(call.args) > 1 else None
        if key is None and len(call.args) > 1:  # ``rawget(_G, "req" .. "uest")``
            key = self.folded(call, 1)
        s.fact(s.dynamic, f"{call.name}({table}, ...)", ev)
        s.cap("script.dynamic_load", ev)
        s.dynamic_lookups.append((s.tick(), f"{call.name} on {table}" + (
            f" (here {key})" if key in HOST_APIS else ""), ev))
        if key is None:
            return
        if call.name == "rawget":
            self.value(key, call.line, call.start, True)
        elif self.called(key) and not self.callback:
            s.fact(s.entries, key, ev)
            s.hook_all(ENTRY_POINTS[key], ev)

    def host_use(self, name: str, ev: str, trigger: int | None) -> bool:
        """One use of host function ``name`` (a call, or a read as a value): its fact, its
        capability, and its privilege (for ``trigger``: who runs it); whether privileged."""
        s = self.seen
        cap, privileged = HOST_APIS[name]
        s.fact(s.host_apis, name, ev)
        if cap:
            s.cap(cap, ev)
        if privileged:
            s.fact(s.privileged, name, ev)
            s.privileged_uses.append((name, trigger, ev))
        return bool(privileged)

    def call(self, call: Call) -> None:
        """A call of a host function (resolved: :meth:`resolved`): its capability,
        privilege, and what its kind records."""
        name = call.name
        if name not in HOST_APIS:
            return
        s = self.seen
        ev = f"{self.where} line {call.line}" + (  # (where a listener reaches a refused one)
            f" via line {call.via}" if call.via and name in REFUSED_IN_LISTENERS else "")
        if not self.host_use(name, ev, LISTENER if call.in_listener else self.trigger) \
                and name in REFUSED_IN_DISPLAY and self.in_display(call):
            s.display_refused.append((s.tick(), name, ev))
        step = _CALL_STEPS.get(name)
        if step is not None:
            step(self, call, ev)

    # -- one step per kind of host call (see _CALL_STEPS) ------------------------------------
    def listen_edit(self, call: Call, ev: str) -> None:
        """``listenEdit(kind, f)``: the hook of a literal kind, a constant's (``K.req``: a
        path's last field, as a state call's key), each of a branch chain or of a loop over
        a table of literals, or the kind folded from literals and constants (luafold: in
        parentheses, ``..``, ``string.format``); else RA105."""
        if self.callback or self.only is not None:  # (a listener RisuAI never calls)
            return
        kinds = self.listener_kinds(call)
        if kinds and all(k in LISTEN_EDIT_HOOKS for k in kinds):
            for k in kinds:
                self.seen.hook(LISTEN_EDIT_HOOKS[k], ev)
        else:
            self.seen.unknown_listeners.append((self.seen.tick(), ev))

    def in_display(self, call: Call) -> bool:
        """Whether ``call`` is made in a listener that may be ``editDisplay``: the kind of a
        handler named (literal), or any kind :meth:`listener_kinds` reads of the
        ``listenEdit`` it is written in."""
        return call.listener == "editDisplay" or (
            call.outer is not None and "editDisplay" in self.listener_kinds(call.outer))

    def listener_kinds(self, call: Call) -> tuple[str, ...]:
        """The kinds ``listenEdit``'s first argument may be (see :meth:`listen_edit`)."""
        a0 = call.args[0] if call.args else None
        if a0 is None:
            return ()
        kind = self.literal_of(a0)
        if kind is None and a0.path_end:
            kind = self.scan.constants.get(a0.path_end)
        kinds = (kind,) if kind is not None else self.choices_of(a0.name or "")
        if not kinds and a0.name:
            kinds = self.loops().get(a0.name, ())  # ``for _, k in ipairs({...})``
        if not kinds:  # ``("editOutput")``, ``"edit" .. "Output"``
            folded = self.folded(call, 0)
            kinds = (folded,) if folded is not None else ()
        return kinds

    def state_call(self, call: Call, ev: str) -> None:
        """A key given as a literal, a constant or a branch chain of literals is a key here;
        any other is followed through helpers (or reported computed) at the end."""
        scope, mode = STATE_CALLS[call.name]
        a1 = call.args[1] if len(call.args) > 1 else None
        if a1 is None:
            return
        key = a1.literal
        if key is None and (a1.name or a1.path_end):
            # local K = "name" ... getChatVar(id, K); C = {K = "name"} ... (id, C.K)
            key = self.scan.constants.get(a1.name or a1.path_end or "")
        keys = (key,) if key is not None else self.choices_of(a1.name or "")
        if keys:
            for k in keys:
                if k.strip():
                    self.seen.state_use(scope, k, mode, ev)
        elif a1.path_end is None:
            self.pending.append((call, scope, mode))

    def choices_of(self, name: str) -> tuple[str, ...]:
        """The literals of a branch chain (``if a then k = "x" elseif b then k = "y"``):
        the literals the scanner saw assigned to ``name``, when it is assigned nothing else
        (every chain's ``name =`` counted in one pass, when first needed)."""
        got = self.scan.choices.get(name, ())
        if got:
            if self.assigns is None:
                self.assigns = assignment_counts(self.code, self.scan.choices)
            if self.assigns.get(name, 0) > self.scan.literal_assigns.get(name, 0):
                return ()
        return got

    def keys_through_helpers(self) -> None:
        """The keys of the state calls left: through helper functions, else computed."""
        params = self.scan.params
        needs_table = any(  # (a name of the key a parameter: ``k``, ``"p" .. k``, a format)
            (a.name in params) or any(n in params for n in a.names)
            for a in (c.args[1] for c, _, _ in self.pending))
        table = self.functions() if needs_table else FunctionTable()
        s, where = self.seen, self.where
        for u in helper_keys(self.code, self.scan, table, self.pending, self.choices_of):
            if u.offset >= 0 and self.dead and self.is_dead(u.offset):
                continue
            ev = f"{where} line {u.line}" + (f" via line {u.via}" if u.via != u.line else "")
            if u.computed:
                s.computed_use(u.scope, u.key, u.mode, ev)
            elif u.key.strip():
                s.state_use(u.scope, u.key, u.mode, ev)

    def lore_read(self, call: Call, ev: str) -> None:
        self.seen.reads_lorebook_at_runtime = True

    def request(self, call: Call, ev: str) -> None:
        """RisuAI's ``request(id, url)``: the address is the second argument (a first
        that is a literal address, ``request("https://...")``, is named too: RisuAI refuses
        that call, a reader still sees where it points)."""
        s = self.seen
        for i in (1, 0):  # (an argument built as a template: ``string.format(...)``)
            a = call.args[i] if i < len(call.args) else Arg()
            host = address(a, self.scan.constants, self.templates, (call, i))
            if host:
                break
        s.fact(s.net, host or "(computed at run time)", ev)
        s.requests.append((s.tick(), host, ev))

    def load(self, call: Call, ev: str) -> None:
        """A load (sorted by :func:`sort_loads`); the host functions the code it loads names
        when it is a literal or folded from constants: a use of each, read as a value."""
        s = self.seen
        s.fact(s.dynamic, call.name, ev)
        s.pending_loads.append((ev, call, self.where))
        s.lua_sources.setdefault(self.where, self.code)
        a0 = call.args[0] if call.args and call.name in ("load", "loadstring") else None
        code = self.literal_of(a0) or self.folded(call, 0) if a0 is not None else None
        for name in names_in(code or "", HOST_APIS, MAX_FOLD_SPAN):
            self.value(name, call.line, -1, True)

    def cbs_text(self, call: Call, ev: str) -> None:
        """``cbs(text)``: the variables the CBS of a literal or folded text reads."""
        a0 = call.args[0] if call.args else None
        read_cbs_reads(self.seen, self.literal_of(a0) or self.folded(call, 0) if a0 else None, ev)

    def folded(self, call: Call, index: int) -> str | None:
        """Argument ``index`` of ``call`` folded from literals and constants (luafold), at
        most ``MAX_FOLDS`` per script."""
        self.folds += 1
        if self.folds > MAX_FOLDS or call.start < 0 or call.form != "paren":
            return None
        return fold_argument(self.code, call.start, index, self.scan.constants)


#: host function -> what a call of it records besides its capability and privilege (a name
#: of two kinds takes the step written last: listenEdit, then the state calls, then the rest)
_CALL_STEPS = {
    **{name: _Script.load for name in ("load", "loadstring", "require", "dofile")},
    "request": _Script.request,
    "getLoreBooks": _Script.lore_read, "loadLoreBooks": _Script.lore_read, "cbs": _Script.cbs_text,
    **{name: _Script.state_call for name in STATE_CALLS},
    "listenEdit": _Script.listen_edit,
}


def sort_loads(s: Seen) -> None:
    """Where the code of every load comes from (after every script was read): a literal
    (RA111), a lorebook read, followed back through the script (RA113), or built at run
    time (RA110)."""
    if not s.pending_loads:
        return
    loads = s.loads = Loads(s.tick())
    loads.code_entries = ", ".join(f"lorebook[{i}]" for i in s.lorebook_code[:8])
    flows = {where: s.flows.get(where) or lore_flow(s.lua_sources[where]) for where in
             sorted({w for _, c, w in s.pending_loads if c.name in LOADERS})}
    lore_known = bool(s.lorebook_code) or s.reads_lorebook_at_runtime
    for ev, call, where in s.pending_loads:
        a0 = call.args[0] if call.args else None
        if a0 is not None and a0.literal is not None:
            loads.literal.setdefault(call.name, []).append(ev)
        elif a0 is not None and (
                any(n in ("getLoreBooks", "loadLoreBooks") for n in a0.names)
                or (lore_known and "content" in a0.names)  # x.content of an entry read before
                or (where in flows and call.line in flows[where].lore_loads)):
            loads.from_lore.append((call.name, ev))
        else:
            loads.built.append((call.name, ev))
    if loads.from_lore:
        loads.reads = lore_reads(sorted(flows.items()))


def _has_bad_chars(code: str) -> bool:
    """``_BAD_CHARS.search(code)``, in C: a NUL, or a surrogate (UTF-8 cannot encode one),
    checked in pieces of a million characters so the bytes made stay bounded."""
    if "\x00" in code:
        return True
    if code.isascii():
        return False
    for i in range(0, len(code), _BAD_CHARS_CHUNK):
        try:
            code[i:i + _BAD_CHARS_CHUNK].encode("utf-8")
        except UnicodeEncodeError:
            return True
    return False


def _as_call(call: Call, name: str) -> Call:
    """``call`` as an unqualified call of ``name`` (a method call's arguments dropped: the
    first one the function gets is the table)."""
    if name == call.name and not call.qualifier:
        return call
    return Call(name, call.line, "", "", call.args if call.qualifier != ":" else [],
                call.form, call.in_listener, call.start, call.listener, call.outer, call.via)


def through_pcall(call: Call) -> Call | None:
    """``pcall(f, a, b)`` as the call ``f(a, b)`` (``xpcall(f, handler, a)`` as ``f(a)``),
    when ``f`` is a plain name; None otherwise."""
    if call.qualifier or not call.args:
        return None
    fn = call.args[0].name
    if not fn:
        return None
    rest = call.args[1:] if call.name == "pcall" else call.args[2:]
    return Call(fn, call.line, "", "", list(rest), "paren", call.in_listener, call.start,
                call.listener, call.outer, call.via)
