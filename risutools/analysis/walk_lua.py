"""The walk's reading of Lua (part of :func:`risutools.analysis.walk.walk`).

One script is scanned once (:func:`risutools.analysis.lua.scan_lua`, keeping the host
calls); :class:`_Script` records what it defines and calls: entry points, hooks, state keys,
host APIs, privileged calls, network requests, dynamic lookups and loads.  When every
script has been read, :func:`sort_loads` decides where the code of each load comes from
(written as a literal, read from a lorebook, or built at run time).
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from risutools.analysis.lorecode import LOADERS, lore_flow, lore_reads
from risutools.analysis.lua import Call, LuaScan, scan_lua
from risutools.analysis.luaapi import lua_api
from risutools.analysis.lualex import NAME, OP, LineIndex, iter_tokens
from risutools.analysis.model import LISTEN_EDIT_HOOKS
from risutools.analysis.seen import (
    LISTENER,
    Loads,
    Seen,
)
from risutools.jsontypes import json_type_name

_API = lua_api()
#: Lua host function -> (capability or None, privileged): from risutools/data/lua_api.yaml
HOST_APIS: dict[str, tuple[str | None, bool]] = {
    f.name: (f.capability, f.privileged) for f in _API.functions.values()}
STATE_CALLS: dict[str, tuple[str, str]] = {  # name -> (scope, read|write); key = 2nd arg
    f.name: f.state for f in _API.functions.values() if f.state is not None}
ENTRY_POINTS: dict[str, str] = dict(_API.entry_points)
#: the calls the scanner keeps (every other call is passed over)
KEEP_CALLS = frozenset(HOST_APIS) | {"rawget", "rawset", "pcall", "xpcall"}
_BAD_CHARS = re.compile("[\x00\ud800-\udfff]")
_BAD_CHARS_CHUNK = 1 << 20
#: a button written by code (our own fixed pattern, one linear search)
_CODE_BUTTON = re.compile(r"\{\{button::|risu-btn|risu-trigger", re.IGNORECASE)
#: its first branch alone (a literal prefix: the regex engine searches it at C speed)
_BUTTON_TAG = re.compile(r"\{\{[bB][uU][tT][tT][oO][nN]::")
#: a pre-filter for entry_assignments (without a leading \b, so the search is fast)
_ENTRY_ASSIGN = re.compile(r"(?:" + "|".join(ENTRY_POINTS) + r")\s*=[^=]")


def read_lua(s: Seen, code: Any, where: str, trigger: int | None) -> None:
    """Read one Lua field (``where`` as evidence shows it; ``trigger``: the index of the
    trigger that runs it, or ``LOREBOOK_CODE``)."""
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
    scan = scan_lua(code, KEEP_CALLS)
    s.counts["lua_lines"] = s.counts.get("lua_lines", 0) + scan.lines
    if scan.errors:
        s.unlexed.append((s.tick(), where, scan.errors))
    _Script(s, code, where, trigger, scan).read()


class _Script:
    """One Lua script being read into ``seen``."""

    def __init__(self, seen: Seen, code: str, where: str, trigger: int | None,
                 scan: LuaScan) -> None:
        self.seen = seen
        self.code = code
        self.where = where
        self.trigger = trigger
        self.scan = scan
        self.local_defs = {d.name for d in scan.defs}

    def read(self) -> None:
        s, where, scan = self.seen, self.where, self.scan
        self.entry_points()
        for name, line in scan.dynamic_index:
            ev = f"{where} line {line}"
            s.fact(s.dynamic, f"{name}[...]", ev)
            s.cap("script.dynamic_load", ev)
            s.dynamic_lookups.append((s.tick(), f"{name}[...]", ev))
        for host, line in scan.url_hosts:
            s.fact(s.urls, host, f"{where} line {line}")
        self.buttons()
        for call in scan.calls:
            if call.name in ("rawget", "rawset"):
                self.rawget(call)
            elif call.name in ("pcall", "xpcall"):
                inner = through_pcall(call)
                if inner is not None:
                    self.call(inner)
            else:
                self.call(call)

    def entry_points(self) -> None:
        """The global functions RisuAI calls (``onStart`` ...), however they are set."""
        s, code, where = self.seen, self.code, self.where
        assigned = entry_assignments(code) if _ENTRY_ASSIGN.search(code) else None
        for d in self.scan.defs:
            # ``onX = function`` is judged by entry_assignments (which knows ``local``)
            if not d.local and d.name in ENTRY_POINTS and (
                    assigned is None or not _assigned_on(code, d.name, d.line)):
                ev = f"{where} line {d.line}"
                s.fact(s.entries, d.name, ev)
                s.hook(ENTRY_POINTS[d.name], ev)
        for name, line in assigned or []:
            ev = f"{where} line {line}"
            s.fact(s.entries, name, ev)
            s.hook(ENTRY_POINTS[name], ev)

    def buttons(self) -> None:
        """Buttons that code writes into what RisuAI shows (a ``{{button::`` CBS tag, a
        ``risu-btn``/``risu-trigger`` attribute in a string it returns from editDisplay):
        hook.manual.  Their names are usually built at run time, so none is listed."""
        at = _first_code_button(self.code)
        if at >= 0:
            self.seen.hook("hook.manual", f"{self.where} line {LineIndex(self.code).line(at)}")

    def rawget(self, call: Call) -> None:
        """``rawget(_G, name)`` / ``rawset(_ENV, ...)``: a dynamic lookup."""
        if not call.qualifier and call.args and call.args[0].name in ("_G", "_ENV"):
            s = self.seen
            table = call.args[0].name
            ev = f"{self.where} line {call.line}"
            s.fact(s.dynamic, f"{call.name}({table}, ...)", ev)
            s.cap("script.dynamic_load", ev)
            s.dynamic_lookups.append((s.tick(), f"{call.name} on {table}", ev))

    def call(self, call: Call) -> None:
        """A call of a host function (``name(...)``, ``_G.name(...)``; a local function of
        the same name shadows it): its capability, privilege, and what its kind records."""
        name = call.name
        if call.qualifier and not (call.qualifier == "." and call.base in ("_G", "_ENV")):
            return
        if name not in HOST_APIS or (name in self.local_defs and not call.qualifier):
            return
        s = self.seen
        ev = f"{self.where} line {call.line}"
        cap, privileged = HOST_APIS[name]
        s.fact(s.host_apis, name, ev)
        if cap:
            s.cap(cap, ev)
        if privileged:
            s.fact(s.privileged, name, ev)
            s.privileged_uses.append((name, LISTENER if call.in_listener else self.trigger,
                                      ev))
        step = _CALL_STEPS.get(name)
        if step is not None:
            step(self, call, ev)

    # -- one step per kind of host call (see _CALL_STEPS) ------------------------------------
    def listen_edit(self, call: Call, ev: str) -> None:
        kind = call.args[0].literal if call.args else None
        if kind in LISTEN_EDIT_HOOKS:
            self.seen.hook(LISTEN_EDIT_HOOKS[kind], ev)
        else:
            self.seen.unknown_listeners.append((self.seen.tick(), ev))

    def state_call(self, call: Call, ev: str) -> None:
        scope, mode = STATE_CALLS[call.name]
        a1 = call.args[1] if len(call.args) > 1 else None
        key = a1.literal if a1 else None
        if key is None and a1 is not None and (a1.name or a1.path_end):
            # local K = "name" ... getChatVar(id, K); C = {K = "name"} ... (id, C.K)
            key = self.scan.constants.get(a1.name or a1.path_end or "")
        if key is not None and key.strip():
            self.seen.state_use(scope, key, mode, ev)

    def lore_read(self, call: Call, ev: str) -> None:
        self.seen.reads_lorebook_at_runtime = True

    def request(self, call: Call, ev: str) -> None:
        s = self.seen
        a0 = call.args[0] if call.args else None
        url = a0.literal if a0 else None
        if url is None and a0 is not None and a0.name:
            url = self.scan.constants.get(a0.name)
        host = url_host(url) if url else None
        s.fact(s.net, host or "(computed at run time)", ev)
        s.requests.append((s.tick(), host, ev))

    def load(self, call: Call, ev: str) -> None:
        s = self.seen
        s.fact(s.dynamic, call.name, ev)
        s.pending_loads.append((ev, call, self.where))
        s.lua_sources.setdefault(self.where, self.code)


#: host function -> what a call of it records besides its capability and privilege (a name
#: of two kinds takes the step written last: listenEdit, then the state calls, then the rest)
_CALL_STEPS = {
    **{name: _Script.load for name in ("load", "loadstring", "require", "dofile")},
    "request": _Script.request,
    "getLoreBooks": _Script.lore_read, "loadLoreBooks": _Script.lore_read,
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
    flows = {where: lore_flow(s.lua_sources[where]) for where in
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


def _first_code_button(code: str) -> int:
    """Where ``_CODE_BUTTON`` first matches in ``code`` (-1: nowhere), found fast: a
    case-insensitive search tries every position in Python's regex engine, so the
    ``{{button::`` branch is searched by its literal prefix and ``risu-...`` only where
    ``u-``/``U-`` stands (every match of that branch has one, 3 characters in)."""
    m = _BUTTON_TAG.search(code)
    best = m.start() if m is not None else -1
    for dash in ("u-", "U-"):
        i = code.find(dash, 3)
        while i >= 0 and (best < 0 or i - 3 < best):
            if _CODE_BUTTON.match(code, i - 3):
                best = i - 3
                break
            i = code.find(dash, i + 1)
    return best


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


def _assigned_on(code: str, name: str, line: int) -> bool:
    """True when line ``line`` of ``code`` assigns ``name`` (``[local] name =``)."""
    start = 0
    for _ in range(line - 1):
        start = code.find("\n", start) + 1
        if start == 0:
            return False
    end = code.find("\n", start)
    text = code[start:end if end >= 0 else len(code)]
    return re.search(r"\b" + re.escape(name) + r"\s*=[^=]", text) is not None


def through_pcall(call: Call) -> Call | None:
    """``pcall(f, a, b)`` as the call ``f(a, b)`` (``xpcall(f, handler, a)`` as ``f(a)``),
    when ``f`` is a plain name; None otherwise."""
    if call.qualifier or not call.args:
        return None
    fn = call.args[0].name
    if not fn:
        return None
    rest = call.args[1:] if call.name == "pcall" else call.args[2:]
    return Call(fn, call.line, "", "", list(rest), "paren", call.in_listener)


def url_host(url: str) -> str | None:
    """The host of an ``http(s)``/``ws(s)`` URL, or None."""
    url = url.strip()
    if not url.lower().startswith(("http://", "https://", "ws://", "wss://")):
        return None
    try:
        host = urlsplit(url).hostname
    except ValueError:
        return None
    return host.rstrip(".") if host else None
