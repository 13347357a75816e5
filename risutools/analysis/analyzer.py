"""``analyze(module) -> Analysis``: facts and findings, without running anything.

See ``docs/analysis.md`` for the findings table (ids are stable).  The
analyser never raises on module content: fields of the wrong type are read as
empty and reported (RA801); code that does not lex is read as far as it goes
and reported (RA601).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache
from typing import Any
from urllib.parse import urlsplit

from risutools.analysis.assets import (
    OVERSIZED_ASSET_BYTES,
    compatible,
    declared_type,
    sniff,
)
from risutools.analysis.cbs import CbsTag, scan_cbs, scan_html
from risutools.analysis.datatables import data_table
from risutools.analysis.lorecode import (
    LOADERS,
    LoreReads,
    is_lua_file_name,
    looks_like_lua,
    lore_flow,
    lore_reads,
    show_pattern,
)
from risutools.analysis.lua import NAME, OP, Call, LineIndex, iter_tokens, scan_lua
from risutools.analysis.luaapi import lua_api
from risutools.analysis.model import (
    LISTEN_EDIT_HOOKS,
    REGEX_TYPE_HOOKS,
    TRIGGER_TYPE_HOOKS,
    Analysis,
    Capability,
    Condition,
    Fact,
    StateKey,
)
from risutools.checks.analysis import (
    RA101,
    RA102,
    RA103,
    RA104,
    RA105,
    RA110,
    RA111,
    RA112,
    RA113,
    RA114,
    RA201,
    RA202,
    RA203,
    RA204,
    RA301,
    RA302,
    RA303,
    RA401,
    RA402,
    RA403,
    RA501,
    RA502,
    RA503,
    RA601,
    RA602,
    RA603,
    RA701,
    RA702,
    RA703,
    RA704,
    RA801,
    RA802,
    RA803,
    RA900,
)
from risutools.checks.registry import Check
from risutools.findings import Finding, Severity, sorted_findings
from risutools.formats.model import Module
from risutools.formats.toggles import ToggleParse, parse_toggles
from risutools.jsontypes import json_type_name
from risutools.printable import quoted

# -- vocabularies ------------------------------------------------------------------

_API = lua_api()
#: Lua host function -> (capability or None, privileged): from risutools/data/lua_api.yaml
HOST_APIS: dict[str, tuple[str | None, bool]] = {
    f.name: (f.capability, f.privileged) for f in _API.functions.values()}
STATE_CALLS: dict[str, tuple[str, str]] = {  # name -> (scope, read|write); key = 2nd arg
    f.name: f.state for f in _API.functions.values() if f.state is not None}
ENTRY_POINTS: dict[str, str] = dict(_API.entry_points)
CODE_EFFECTS = frozenset({"triggerlua", "triggercode"})
#: effects RisuAI's trigger runner passes over (triggers.ts: "Header for V2 triggers", a
#: comment): a trigger made only of these (or of nothing) does nothing when it runs
INERT_EFFECTS = frozenset({"v2Header", "v2Comment"})
#: the fields of a module RisuAI reads (modules.ts ``RisuModule``; ``type`` and
#: ``displayOrder`` are written by RisuAI's exports and editors); any other field never runs
MODULE_FIELDS = frozenset({
    "name", "description", "lorebook", "regex", "cjs", "trigger", "id", "lowLevelAccess",
    "hideIcon", "backgroundEmbedding", "assets", "namespace", "customModuleToggle", "mcp",
    "type", "displayOrder"})
#: field names that say "code" (a field RisuAI does not read, named so, is dead code)
CODE_FIELD_NAMES = frozenset({"lua", "luacode", "code", "script", "scripts", "js",
                              "javascript", "triggerlua", "triggercode"})
EFFECT_CAPS: dict[str, str] = {
    "setvar": "chat_state_kv", "v2SetVar": "chat_state_kv", "v2IfVar": "chat_state_kv",
    "v2MakeArrayVar": "chat_state_kv", "v2GetVar": "chat_state_kv",
    "cutchat": "chat.write", "modifychat": "chat.write", "v2CutChat": "chat.write",
    "v2ModifyChat": "chat.write", "v2UpdateChatAt": "chat.write",
    "runLLM": "llm.call", "runAxLLM": "llm.call", "sendAIprompt": "llm.call",
    "v2RunLLM": "llm.call", "v2SendAIprompt": "llm.call",
    "runImgGen": "image.generate", "v2ImgGen": "image.generate",
    "showAlert": "ui.alert", "v2ShowAlert": "ui.alert",
    "v2GetLastMessage": "chat.read", "v2GetMessageAtIndex": "chat.read",
    "v2GetMessageCount": "chat.read", "v2GetLastUserMessage": "chat.read",
    "v2GetLastCharMessage": "chat.read", "v2GetFirstMessage": "chat.read",
    "v2GetLorebook": "lorebook.read", "v2GetLorebookCount": "lorebook.read",
    "v2GetLorebookEntry": "lorebook.read", "v2GetLorebookIndexViaName": "lorebook.read",
    "v2ModifyLorebook": "lorebook.write", "v2SetLorebookActivation": "lorebook.write",
    "v2SetCharacterDesc": "character.write", "v2SetPersonaDesc": "character.write",
}
#: trigger effects RisuAI runs only with lowLevelAccess (triggers.ts: "low level access only")
PRIVILEGED_EFFECTS = frozenset({
    "runLLM", "runAxLLM", "runImgGen", "checkSimilarity", "showAlert", "sendAIprompt",
    "extractRegex", "v2RunLLM", "v2ImgGen", "v2CheckSimilarity",
})
VAR_WRITE_EFFECTS = frozenset({"setvar", "v2SetVar", "v2MakeArrayVar"})
CBS_STATE: dict[str, tuple[str, str]] = {
    "getvar": ("chat", "read"), "setvar": ("chat", "write"), "addvar": ("chat", "write"),
    "setdefaultvar": ("chat", "write"), "getglobalvar": ("global", "read"),
}
#: CBS calculations (``{{? expr}}``, ``{{calc::expr}}``): ``$name`` reads a chat variable
CBS_CALC = frozenset({"?", "calc"})
_CALC_VAR = re.compile(r"\$([A-Za-z0-9_]{1,200})")
#: preset prompt-item fields and preset text fields RisuAI runs through CBS
PROMPT_ITEM_FIELDS = ("text", "innerFormat", "defaultText")
PRESET_TEXT_FIELDS = ("mainPrompt", "jailbreak", "globalNote", "autoSuggestPrompt",
                      "templateDefaultVariables", "groupTemplate", "JinjaTemplate")
#: the "trigger" of code kept in lorebook entries (run by the module's triggers)
LOREBOOK_CODE = -1
#: the "trigger" of a call inside an edit listener: RisuAI runs listeners without
#: lowLevelAccess (runLuaEditTrigger), whatever the module or trigger asks for
LISTENER = -2
_KEEP_CALLS = frozenset(HOST_APIS) | {"rawget", "rawset", "pcall", "xpcall"}
_BAD_CHARS = re.compile("[\x00\ud800-\udfff]")
_BAD_CHARS_CHUNK = 1 << 20


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


def vocabulary() -> dict[str, dict[str, Any]]:
    """The capability vocabulary (``risutools/data/capabilities.yaml``)."""
    data = data_table("capabilities.yaml")
    caps = data.get("capabilities") if isinstance(data, dict) else None
    return caps if isinstance(caps, dict) else {}


class _Builder:
    def __init__(self, module: Module) -> None:
        self.m = module
        self.findings: list[Finding] = []
        self.caps: dict[str, list[str]] = {}
        self.hooks: dict[str, Fact] = {}
        self.state: dict[tuple[str, str], StateKey] = {}
        self.host_apis: dict[str, Fact] = {}
        self.privileged: dict[str, Fact] = {}
        self.dynamic: dict[str, Fact] = {}
        self.entries: dict[str, Fact] = {}
        self.buttons: dict[str, Fact] = {}
        self.net: dict[str, Fact] = {}
        self.urls: dict[str, Fact] = {}
        self.conditions: list[Condition] = []
        self.counts: dict[str, int] = {}
        self.reads_lorebook_at_runtime = False
        self.pending_loads: list[tuple[str, Call, str]] = []  # (evidence, call, where)
        self.lua_sources: dict[str, str] = {}  # where -> Lua code (for lore_flow)
        self.current_code = ""  # the Lua being read
        self.privileged_uses: list[tuple[str, int | None, str]] = []  # (api, trigger, where)
        self.global_defs: set[str] = set()
        self.dynamic_keys: dict[str, Fact] = {}
        self.trigger_lla: list[int] = []
        self.effect_types: dict[str, int] = {}
        self.constants: dict[str, str] = {}
        self.lorebook_code: list[int] = []
        self.required_toggles: dict[str, Fact] = {}  # toggle keys read, declared elsewhere
        self.risu_btn_seen: list[str] = []  # where risu-btn attributes are
        self.unused_fields: dict[str, Fact] = {}  # fields RisuAI never reads holding code

    # -- recording -------------------------------------------------------------------
    def finding(self, check: Check, message: str, evidence: str = "", pointer: str = "",
                severity: Severity | None = None) -> None:
        """Record a finding of ``check`` (at its default severity unless one is given)."""
        if len(self.findings) < 5000:
            self.findings.append(Finding(check.id, severity or check.severity, message,
                                         pointer=pointer, evidence=evidence))

    def cap(self, name: str, where: str) -> None:
        ev = self.caps.setdefault(name, [])
        if len(ev) < 20 and where not in ev:
            ev.append(where)

    def hook(self, name: str, where: str) -> None:
        self.hooks.setdefault(name, Fact(name)).add(where)
        self.cap(name, where)

    def fact(self, table: dict[str, Fact], name: str, where: str) -> None:
        table.setdefault(name, Fact(name)).add(where)

    def state_use(self, scope: str, key: str, mode: str, where: str) -> None:
        sk = self.state.setdefault((scope, key), StateKey(key, scope))
        if mode == "read":
            sk.add_read(where)
        else:
            sk.add_write(where)

    def wrong_type(self, pointer: str, expected: str, value: Any) -> None:
        self.finding(RA801, f"{pointer} should be {expected} but is {json_type_name(value)}; "
                     "it was read as empty", evidence=pointer, pointer=pointer)

    # -- top-level shape -----------------------------------------------------------------
    def check_shape(self) -> None:
        d = self.m.data
        for key in ("lorebook", "regex", "trigger", "assets"):
            if key in d and not isinstance(d[key], list) and d[key] is not None:
                self.wrong_type(f"/{key}", "a list", d[key])
        for key in ("name", "description", "cjs", "backgroundEmbedding", "customModuleToggle",
                    "namespace"):
            if key in d and not isinstance(d[key], str) and d[key] is not None:
                self.wrong_type(f"/{key}", "a string", d[key])
        if "lowLevelAccess" in d and not isinstance(d["lowLevelAccess"], bool) \
                and d["lowLevelAccess"] is not None:
            self.wrong_type("/lowLevelAccess", "a boolean", d["lowLevelAccess"])
        if "mcp" in d and d["mcp"] is not None and not isinstance(d["mcp"], dict):
            self.wrong_type("/mcp", "an object", d["mcp"])

    # -- Lua ---------------------------------------------------------------------------
    def lua(self, code: Any, where: str, trigger: int | None) -> None:
        pointer = "/" + where.replace("[", "/").replace("].", "/").replace("]", "")
        if not isinstance(code, str):
            if code is not None:
                self.finding(RA602,
                             f"the code field is {json_type_name(code)}, not text; it was not read",
                             evidence=where, pointer=pointer + "/code")
            return
        if not code.strip():
            return
        if _has_bad_chars(code):
            self.finding(RA603,
                         "the code holds NUL or unpaired surrogate characters (binary junk?)",
                         evidence=where)
        self.counts["lua_bytes"] = self.counts.get("lua_bytes", 0) + len(code)
        self.current_code = code
        scan = scan_lua(code, _KEEP_CALLS)
        self.counts["lua_lines"] = self.counts.get("lua_lines", 0) + scan.lines
        if scan.errors:
            first_line, first_msg = scan.errors[0]
            serious = any("unterminated long" in msg for _, msg in scan.errors)
            self.finding(RA601,
                         f"the code could not be read completely ({first_msg}; "
                         f"{len(scan.errors)} problem(s)); the analysis covers what was read",
                         evidence=f"{where} line {first_line}",
                         severity=None if serious else "info")
        local_defs = {d.name for d in scan.defs}
        assigned = entry_assignments(code) if _ENTRY_ASSIGN.search(code) else None
        for d in scan.defs:
            # ``onX = function`` is judged by entry_assignments (which knows ``local``)
            if not d.local and d.name in ENTRY_POINTS and (
                    assigned is None or not _assigned_on(code, d.name, d.line)):
                ev = f"{where} line {d.line}"
                self.fact(self.entries, d.name, ev)
                self.hook(ENTRY_POINTS[d.name], ev)
        for name, line in assigned or []:
            ev = f"{where} line {line}"
            self.fact(self.entries, name, ev)
            self.hook(ENTRY_POINTS[name], ev)
        self.global_defs.update(d.name for d in scan.defs if not d.local)
        for name, line in scan.dynamic_index:
            ev = f"{where} line {line}"
            self.fact(self.dynamic, f"{name}[...]", ev)
            self.cap("script.dynamic_load", ev)
            self.finding(RA112, f"names are looked up dynamically through {name}[...], so the "
                         "functions it reaches cannot be known statically", evidence=ev)
        for host, line in scan.url_hosts:
            self.fact(self.urls, host, f"{where} line {line}")
        self.constants = scan.constants
        self.buttons_in_code(code, where)
        for call in scan.calls:
            if call.name in ("rawget", "rawset"):
                self.rawget_check([call], where)
            elif call.name in ("pcall", "xpcall"):
                inner = through_pcall(call)
                if inner is not None:
                    self.lua_call(inner, where, trigger, local_defs)
            else:
                self.lua_call(call, where, trigger, local_defs)

    def lua_call(self, call: Call, where: str, trigger: int | None,
                 local_defs: set[str]) -> None:
        name = call.name
        if call.qualifier and not (call.qualifier == "." and call.base in ("_G", "_ENV")):
            return
        if name not in HOST_APIS or (name in local_defs and not call.qualifier):
            return
        ev = f"{where} line {call.line}"
        cap, privileged = HOST_APIS[name]
        self.fact(self.host_apis, name, ev)
        if cap:
            self.cap(cap, ev)
        if privileged:
            self.fact(self.privileged, name, ev)
            self.privileged_uses.append((name, LISTENER if call.in_listener else trigger, ev))
        args = call.args
        a0 = args[0] if args else None
        if name == "listenEdit":
            kind = a0.literal if a0 else None
            if kind in LISTEN_EDIT_HOOKS:
                self.hook(LISTEN_EDIT_HOOKS[kind], ev)
            else:
                self.finding(RA105, "listenEdit is called with an event name that is not a literal "
                             "the analyser knows; the hook it sets is unknown", evidence=ev)
        elif name in STATE_CALLS:
            scope, mode = STATE_CALLS[name]
            a1 = args[1] if len(args) > 1 else None
            key = a1.literal if a1 else None
            if key is None and a1 is not None and (a1.name or a1.path_end):
                # local K = "name" ... getChatVar(id, K); C = {K = "name"} ... (id, C.K)
                key = self.constants.get(a1.name or a1.path_end or "")
            if key is not None and key.strip():
                self.state_use(scope, key, mode, ev)
            else:
                self.fact(self.dynamic_keys, f"{scope}:{mode}", ev)
        elif name in ("getLoreBooks", "loadLoreBooks"):
            self.reads_lorebook_at_runtime = True
        elif name == "request":
            url = a0.literal if a0 else None
            if url is None and a0 is not None and a0.name:
                url = self.constants.get(a0.name)
            host = _host(url) if url else None
            if host:
                self.fact(self.net, host, ev)
                self.finding(RA103, f"makes a network request to {host}", evidence=ev)
            else:
                self.fact(self.net, "(computed at run time)", ev)
                self.finding(RA104, "makes a network request to an address computed at run time",
                             evidence=ev)
        elif name in ("load", "loadstring", "require", "dofile"):
            self.fact(self.dynamic, name, ev)
            self.pending_loads.append((ev, call, where))
            self.lua_sources.setdefault(where, self.current_code)

    def rawget_check(self, scan_calls: Iterable[Call], where: str) -> None:
        for call in scan_calls:
            if call.name in ("rawget", "rawset") and not call.qualifier and call.args \
                    and call.args[0].name in ("_G", "_ENV"):
                ev = f"{where} line {call.line}"
                self.fact(self.dynamic, f"{call.name}({call.args[0].name}, ...)", ev)
                self.cap("script.dynamic_load", ev)
                self.finding(RA112, f"names are looked up dynamically through {call.name} on "
                             f"{call.args[0].name}, so the functions it reaches cannot be "
                             "known statically", evidence=ev)

    def finish_loads(self) -> None:
        literal: dict[str, list[str]] = {}  # loader -> evidence (one note per loader)
        from_lore: list[tuple[str, str]] = []
        code_entries = ", ".join(f"lorebook[{i}]" for i in self.lorebook_code[:8])
        flows = {where: lore_flow(self.lua_sources[where]) for where in
                 sorted({w for _, c, w in self.pending_loads if c.name in LOADERS})}
        for ev, call, where in self.pending_loads:
            a0 = call.args[0] if call.args else None
            if a0 is not None and a0.literal is not None:
                literal.setdefault(call.name, []).append(ev)
            elif a0 is not None and (
                    any(n in ("getLoreBooks", "loadLoreBooks") for n in a0.names)
                    or ((self.lorebook_code or self.reads_lorebook_at_runtime)
                        and "content" in a0.names)  # x.content of an entry read before
                    or (where in flows and call.line in flows[where].lore_loads)):
                from_lore.append((call.name, ev))
            else:
                extra = ""
                if self.lorebook_code:
                    extra = ("; the module keeps Lua in its lorebook (analysed as code: "
                             f"{code_entries}), which may be what it loads")
                elif self.reads_lorebook_at_runtime:
                    extra = ("; the module also reads lorebook entries at run time, so the code "
                             "may be kept in a lorebook")
                self.finding(RA110, f"{call.name} runs code built at run time, which this analysis "
                             f"cannot see{extra}", evidence=ev)
        for name, evs in sorted(literal.items()):
            self.finding(RA111, f"{name} is called with a literal argument "
                         f"({len(evs)} call{'s' if len(evs) != 1 else ''}"
                         + ("; a bundler's module stubs" if name == "require" and len(evs) > 1
                            else "") + ")", evidence=evs[0])
        if from_lore:
            self.lore_load_finding(from_lore, lore_reads(sorted(flows.items())), code_entries)

    def lore_load_finding(self, from_lore: list[tuple[str, str]], reads: LoreReads,
                          code_entries: str) -> None:
        """RA113: code read from lorebook entries, with the entry names its lookups ask for
        (``*`` where a name is computed) and those it could not resolve."""
        name, ev = from_lore[0]
        own = [str(e.get("comment")) for e in self.m.lorebook if isinstance(e, dict)]
        foreign = reads.foreign(own)
        matched = reads.matching(own)
        notes = ""
        if reads.patterns and matched:
            shown = ", ".join(f"`{show_pattern(p)}`" for p in reads.patterns[:4])
            notes += f"; the names it reads ({shown}) fit {len(matched)} entr" + (
                "y" if len(matched) == 1 else "ies")
        if reads.unresolved:
            notes += (f"; {len(reads.unresolved)} lookup(s) use names computed at run time "
                      f"(first at {reads.unresolved[0]}), which this analysis cannot resolve")
        head = f"{name} runs code read from lorebook entries at run time ({len(from_lore)} call(s))"
        if foreign:
            shown = ", ".join(quoted(n[:40]) for n in foreign[:5])
            self.finding(RA113, f"{head}; it reads entries this module does not carry "
                         f"({shown}): code kept in another module's lorebook, not covered by "
                         f"this analysis{notes}", evidence=ev)
        elif self.lorebook_code:
            self.finding(RA113, f"{head}; the entries that hold Lua ({code_entries}) are "
                         f"analysed as code{notes}", evidence=ev, severity="info")
        else:
            self.finding(RA113, f"{head}; no entry reads as Lua, so that code is not covered "
                         f"by this analysis{notes}", evidence=ev)

    # -- CBS / HTML --------------------------------------------------------------------------
    def cbs(self, text: str, where: str) -> None:
        scan = scan_cbs(text)
        self.counts["cbs_tags"] = self.counts.get("cbs_tags", 0) + len(scan.tags)
        for t in scan.tags:
            self.cbs_tag(t, where)

    def cbs_tag(self, t: CbsTag, where: str) -> None:
        ev = f"{where} line {t.line}"
        if t.name in CBS_STATE:
            scope, mode = CBS_STATE[t.name]
            key = t.literal_arg(0)
            self.cap("chat_state_kv" if scope == "chat" else "global_state_kv", ev)
            if key:
                self.state_use(scope, key, mode, ev)
        elif t.name.startswith("#when") and "toggle" in (a.strip().lower() for a in t.args):
            # {{#when::toggle::key}} reads the global toggle_<key>
            args = [a.strip().lower() for a in t.args]
            key = t.literal_arg(args.index("toggle") + 1)
            self.cap("global_state_kv", ev)
            if key:
                self.state_use("global", f"toggle_{key}", "read", ev)
        elif t.name in CBS_CALC:
            # RisuAI's calcString reads ``$name`` as the chat variable ``name``
            for m in _CALC_VAR.finditer(" ".join(t.args)[:10_000]):
                self.cap("chat_state_kv", ev)
                self.state_use("chat", m.group(1), "read", ev)
        elif t.name == "button":
            fn = t.literal_arg(1)
            self.hook("hook.manual", ev)
            if fn:
                self.fact(self.buttons, fn, ev)

    def html(self, text: str, where: str) -> None:
        scan = scan_html(text)
        for line in scan.script_lines[:1]:
            self.finding(RA301, f"HTML with a <script> element ({len(scan.script_lines)} in all)",
                         evidence=f"{where} line {line}")
        for line in scan.handler_lines[:1]:
            self.finding(RA302,
                         f"HTML with on* event-handler attributes ({len(scan.handler_lines)} "
                         "element(s))", evidence=f"{where} line {line}")
        for line in scan.js_url_lines[:1]:
            self.finding(RA303, f"HTML with javascript: URLs ({len(scan.js_url_lines)} in all)",
                         evidence=f"{where} line {line}")
        self.risu_buttons(text, where)
        for fn, line in scan.risu_triggers:
            ev = f"{where} line {line}"
            self.hook("hook.manual", ev)
            self.fact(self.buttons, fn, ev)
        for host, line in scan.url_hosts:
            self.fact(self.urls, host, f"{where} line {line}")

    def buttons_in_code(self, code: str, where: str) -> None:
        """Buttons that code writes into what RisuAI shows (a ``{{button::`` CBS tag, a
        ``risu-btn``/``risu-trigger`` attribute in a string it returns from editDisplay):
        hook.manual.  Their names are usually built at run time, so none is listed."""
        at = _first_code_button(code)
        if at >= 0:
            self.hook("hook.manual", f"{where} line {LineIndex(code).line(at)}")

    def risu_buttons(self, text: str, where: str) -> None:
        """``risu-btn="value"`` attributes: a button RisuAI hands to the Lua global
        ``onButtonClick(id, value)`` of whichever enabled module defines it (an entry point
        of this module only when its own Lua defines it: see :func:`_button_entry`)."""
        if "risu-btn" in text:
            lines = None
            for m in _RISU_BTN.finditer(text):
                if lines is None:
                    lines = LineIndex(text)
                ev = f"{where} line {lines.line(m.start())}"
                self.hook("hook.manual", ev)
                self.risu_btn_seen.append(ev)
                value = _CBS_IN_VALUE.sub("*", m.group(1)).strip()
                if value:
                    self.fact(self.buttons, value[:80], ev)

    # -- sections ------------------------------------------------------------------------
    def triggers(self) -> list[str]:
        types: list[str] = []
        trig = self.m.trigger
        self.counts["triggers"] = len(trig)
        module_lla = self.m.low_level_access
        for i, t in enumerate(trig):
            base = f"trigger[{i}]"
            if not isinstance(t, dict):
                self.wrong_type(f"/trigger/{i}", "an object", t)
                types.append("")
                continue
            ttype = t.get("type")
            types.append(ttype if isinstance(ttype, str) else "")
            if t.get("lowLevelAccess") is True:
                self.trigger_lla.append(i)
            effects = t.get("effect")
            if effects is None:
                effects = []
            if not isinstance(effects, list):
                self.wrong_type(f"/trigger/{i}/effect", "a list", effects)
                effects = []
            conds = t.get("conditions")
            if conds is None:
                conds = []
            if not isinstance(conds, list):
                self.wrong_type(f"/trigger/{i}/conditions", "a list", conds)
                conds = []
            all_code = bool(effects) and all(
                isinstance(e, dict) and _is_code_effect(e.get("type")) for e in effects)
            inert = all(isinstance(e, dict) and isinstance(e.get("type"), str)
                        and e["type"] in INERT_EFFECTS for e in effects)
            if inert:  # only a v2Header marker (or nothing): running it does nothing
                self.counts["inert_triggers"] = self.counts.get("inert_triggers", 0) + 1
            elif isinstance(ttype, str) and ttype in TRIGGER_TYPE_HOOKS and not all_code:
                self.hook(TRIGGER_TYPE_HOOKS[ttype], f"{base}.type")
            for j, c in enumerate(conds):
                self.condition(i, j, c)
            for j, e in enumerate(effects):
                self.effect(i, j, e, module_lla)
        return types

    def condition(self, i: int, j: int, c: Any) -> None:
        where = f"trigger[{i}].conditions[{j}]"
        if not isinstance(c, dict):
            self.wrong_type(f"/trigger/{i}/conditions/{j}", "an object", c)
            return
        ctype = c.get("type")
        ctype_s = ctype if isinstance(ctype, str) else "other"
        var = c.get("var")
        var_s = var if isinstance(var, str) else ""
        op = c.get("operator")
        val = c.get("value")
        if ctype_s == "var" and var_s:
            self.state_use("chat", var_s, "read", where)
            self.cap("chat_state_kv", where)
        elif ctype_s == "exists" and isinstance(val, str) and "{{" in val:
            self.cbs(val, f"{where}.value")  # RisuAI runs the searched text through CBS
        self.conditions.append(Condition(
            i, ctype_s if ctype_s in ("var", "exists", "chatindex", "value") else "other",
            var_s[:80], op[:8] if isinstance(op, str) else "",
            str(val)[:80] if isinstance(val, (str, int, float)) and not isinstance(val, bool)
            else ""))

    def effect(self, i: int, j: int, e: Any, module_lla: bool) -> None:
        where = f"trigger[{i}].effect[{j}]"
        if not isinstance(e, dict):
            self.wrong_type(f"/trigger/{i}/effect/{j}", "an object", e)
            return
        etype = e.get("type")
        if not isinstance(etype, str):
            self.wrong_type(f"/trigger/{i}/effect/{j}/type", "a string", etype)
            return
        self.effect_types[etype] = self.effect_types.get(etype, 0) + 1
        if etype in CODE_EFFECTS:
            self.lua(e.get("code"), where, i)
            return
        cap = EFFECT_CAPS.get(etype)
        if cap is None and etype.startswith("v2SetRequestState"):
            cap = "request.write"
        if cap:
            self.cap(cap, where)
        if etype in PRIVILEGED_EFFECTS:
            self.fact(self.privileged, etype, where)
            self.privileged_uses.append((etype, i, where))
        for key in sorted(e):  # RisuAI runs effect values through CBS (risuChatParser)
            text = e[key]
            if key not in ("type", "code") and isinstance(text, str) and "{{" in text:
                self.cbs(text, f"{where}.{key}")
        var = e.get("var")
        if isinstance(var, str) and var.strip() and ("var" in etype.lower()):
            mode = "write" if etype in VAR_WRITE_EFFECTS or etype.startswith("v2Set") else "read"
            self.state_use("chat", var, mode, where)
            self.cap("chat_state_kv", where)

    def regex_scripts(self) -> None:
        scripts = self.m.regex
        self.counts["regex"] = len(scripts)
        for i, r in enumerate(scripts):
            if not isinstance(r, dict):
                self.wrong_type(f"/regex/{i}", "an object", r)
            elif r.get("type") == "disabled":  # documented: RisuAI keeps it, never runs it
                self.counts["regex_disabled"] = self.counts.get("regex_disabled", 0) + 1
            else:
                self.regex_script(i, r)

    def regex_script(self, i: int, r: dict[str, Any]) -> None:
        """One regex script RisuAI runs: its hook, flags, pattern and output."""
        rtype = r.get("type")
        if isinstance(rtype, str) and rtype in REGEX_TYPE_HOOKS:
            self.hook(REGEX_TYPE_HOOKS[rtype], f"regex[{i}].type")
        elif rtype is not None:
            self.finding(RA203, f"regex script type {quoted(str(rtype)[:40])} is not one "
                         "RisuAI documents", evidence=f"regex[{i}].type")
        flag = r.get("flag")
        letters = ""
        if isinstance(flag, str) and flag:
            from risutools.analysis.regexcheck import parse_flags  # (see regex_pattern)

            letters, _directives, unknown = parse_flags(flag)
            if unknown:
                self.finding(RA204, "regex flag field has unknown letters "
                             f"{quoted(''.join(unknown)[:20])}", evidence=f"regex[{i}].flag")
        pattern = r.get("in")
        if pattern is not None and not isinstance(pattern, str):
            self.wrong_type(f"/regex/{i}/in", "a string", pattern)
        elif isinstance(pattern, str) and pattern:
            self.regex_pattern(pattern, letters, f"regex[{i}].in")
        out = r.get("out")
        if out is not None and not isinstance(out, str):
            self.wrong_type(f"/regex/{i}/out", "a string", out)
        elif isinstance(out, str) and out:
            self.cbs(out, f"regex[{i}].out")
            self.html(out, f"regex[{i}].out")

    def regex_pattern(self, pattern: str, letters: str, where: str) -> None:
        """The backtracking check of one pattern (parsed as data, never compiled)."""
        # imported here: a module without regex scripts never loads the checker
        from risutools.analysis.regexcheck import RegexParseError, backtracking_risks

        try:
            risks = backtracking_risks(pattern, letters)
        except RegexParseError as exc:
            self.finding(RA202, f"the pattern could not be parsed ({exc.why} at offset "
                         f"{exc.offset}); it was not checked for backtracking", evidence=where)
            return
        except RecursionError:
            self.finding(RA202, "the pattern is nested too deeply to check", evidence=where)
            return
        for risk in risks:
            what = ("nested unbounded quantifiers that can split the same text in many ways"
                    if risk.shape == "nested-quantifier" else
                    "a repeated alternation whose branches can match the same text")
            self.finding(RA201, f"the pattern risks catastrophic backtracking ({what}); "
                         "RisuAI runs it on every message", evidence=where)

    def lorebook(self) -> None:
        entries = self.m.lorebook
        self.counts["lorebook"] = len(entries)
        loads_code = bool(self.pending_loads)
        for i, e in enumerate(entries):
            if not isinstance(e, dict):
                self.wrong_type(f"/lorebook/{i}", "an object", e)
                continue
            content = e.get("content")
            if content is not None and not isinstance(content, str):
                self.wrong_type(f"/lorebook/{i}/content", "a string", content)
                continue
            if not isinstance(content, str):
                continue
            if (loads_code or _named_lua(e.get("comment"))) and looks_like_lua(content):
                self.lorebook_code.append(i)
                self.lua(content, f"lorebook[{i}]", LOREBOOK_CODE)
            if "{{" in content:
                self.cbs(content, f"lorebook[{i}].content")
            if "risu-btn" in content or "risu-trigger" in content:
                scan = scan_html(content)
                self.risu_buttons(content, f"lorebook[{i}].content")
                for fn, line in scan.risu_triggers:
                    ev = f"lorebook[{i}].content line {line}"
                    self.hook("hook.manual", ev)
                    self.fact(self.buttons, fn, ev)
        if self.lorebook_code:
            self.counts["lorebook_code"] = len(self.lorebook_code)
            shown = ", ".join(f"lorebook[{i}]" for i in self.lorebook_code[:8])
            more = len(self.lorebook_code) - 8
            self.finding(RA114, f"runs Lua kept in {len(self.lorebook_code)} lorebook "
                         f"entr{'y' if len(self.lorebook_code) == 1 else 'ies'} ({shown}"
                         f"{f' and {more} more' if more > 0 else ''}), loaded at run time; "
                         "analysed as code", evidence=f"lorebook[{self.lorebook_code[0]}]")

    def preset_prompts(self) -> None:
        """CBS in a preset's prompt items and prompt fields (RisuAI evaluates them all)."""
        d = self.m.data
        items = d.get("promptTemplate")
        if isinstance(items, list):
            self.counts["prompt_items"] = len(items)
            for i, item in enumerate(items):
                if not isinstance(item, dict):
                    continue
                for key in PROMPT_ITEM_FIELDS:
                    text = item.get(key)
                    if isinstance(text, str) and "{{" in text:
                        self.cbs(text, f"promptTemplate[{i}].{key}")
        for key in PRESET_TEXT_FIELDS:
            text = d.get(key)
            if isinstance(text, str) and "{{" in text:
                self.cbs(text, key)

    def card_fields(self) -> None:
        """CBS in a card's greetings, description and prompt fields (``cardFields``)."""
        fields = self.m.data.get("cardFields")
        if not isinstance(fields, dict):
            return
        for key in sorted(fields):
            value = fields[key]
            texts = list(enumerate(value)) if isinstance(value, list) else [(None, value)]
            for i, text in texts:
                if isinstance(text, str) and "{{" in text:
                    where = f"card.{key}" if i is None else f"card.{key}[{i}]"
                    self.cbs(text, where)
                    if key not in ("first_mes", "alternate_greetings", "group_only_greetings"):
                        continue
                    self.html(text, where)

    def assets(self) -> None:
        infos = self.m.assets
        raw = self.m.data.get("assets")
        self.counts["assets"] = max(len(infos), len(raw) if isinstance(raw, list) else 0)
        for a in infos:
            where = f"assets[{a.index}]"
            dt = declared_type(a.ext, a.name)
            st = sniff(a.head or b"")
            if st is not None and dt is not None and not compatible(dt, st):
                self.finding(RA401, f"asset declared as {dt} but its bytes are {st}"
                             + (" (HTML saved under an image or sound name)"
                                if st == "html" else ""), evidence=where)
            elif st == "html" and dt is None:
                self.finding(RA401, "asset bytes are HTML", evidence=where)
            if a.size is not None and a.size > OVERSIZED_ASSET_BYTES:
                self.finding(RA402,
                             f"asset is {a.size} bytes, above the {OVERSIZED_ASSET_BYTES} byte "
                             "bound for one asset", evidence=where)
        if self.counts["assets"]:
            self.cap("asset.bundle", "assets")
        for an in self.m.anomalies:
            code = str(an.code)
            if code.startswith("asset"):
                self.finding(RA403,
                             f"asset frames are out of step with module.assets: {an.message}",
                             evidence=str(an.where))
            else:
                self.finding(RA900, f"reader note ({code}): {an.message}",
                             evidence=str(an.where))


#: ``risu-btn="value"``: RisuAI calls the Lua global onButtonClick(id, value)
_RISU_BTN = re.compile(r"""risu-btn\s*=\s*["']([^"'<>\n]{0,200})["']""", re.IGNORECASE)
#: a button written by code (our own fixed pattern, one linear search)
_CODE_BUTTON = re.compile(r"\{\{button::|risu-btn|risu-trigger", re.IGNORECASE)
#: its first branch alone (a literal prefix: the regex engine searches it at C speed)
_BUTTON_TAG = re.compile(r"\{\{[bB][uU][tT][tT][oO][nN]::")


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


_CBS_IN_VALUE = re.compile(r"\{\{[^{}]{0,100}\}\}")
#: a pre-filter for entry_assignments (without a leading \b, so the search is fast)
_ENTRY_ASSIGN = re.compile(r"(?:" + "|".join(ENTRY_POINTS) + r")\s*=[^=]")


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


def _is_code_effect(etype: Any) -> bool:
    """Only text can name an effect type (a list or object is data, never a set key)."""
    return isinstance(etype, str) and etype in CODE_EFFECTS


def _host(url: str) -> str | None:
    url = url.strip()
    if not url.lower().startswith(("http://", "https://", "ws://", "wss://")):
        return None
    try:
        host = urlsplit(url).hostname
    except ValueError:
        return None
    return host.rstrip(".") if host else None


def analyze(module: Module) -> Analysis:
    """Static facts and findings about ``module`` (never executes, never raises on content).

    One step per section, in RisuAI's terms; each step records into the builder."""
    b = _Builder(module)
    b.check_shape()
    trigger_types = b.triggers()
    b.lorebook()
    b.finish_loads()
    b.regex_scripts()
    b.card_fields()
    if module.component_type == "preset":
        b.preset_prompts()
    _background(b)
    toggles = _toggles(b)
    _legacy_js(b)
    _mcp(b)
    _low_level_access(b)
    _structure(b)
    b.assets()
    _unused_code_fields(b)
    _button_entry(b)
    return _result(b, trigger_types, toggles)


def _background(b: _Builder) -> None:
    """The background HTML: CBS and HTML, offered as ``ui.background``."""
    bg = b.m.background_embedding
    if bg.strip():
        b.cap("ui.background", "backgroundEmbedding")
        b.cbs(bg, "backgroundEmbedding")
        b.html(bg, "backgroundEmbedding")


def _toggles(b: _Builder) -> ToggleParse:
    """The toggle declarations (a preset keeps them in customPromptTemplateToggle), their
    problems (RA701-RA703) and the toggle globals read without a declaration (RA704)."""
    module = b.m
    toggle_field = "customModuleToggle"
    toggle_text = module.custom_module_toggle
    if module.component_type == "preset" and not toggle_text.strip():
        raw_toggles = module.data.get("customPromptTemplateToggle")
        if isinstance(raw_toggles, str):
            toggle_field, toggle_text = "customPromptTemplateToggle", raw_toggles
    tp = parse_toggles(toggle_text)
    for key, line in tp.duplicates:
        b.finding(RA701,
                  f"toggle key {quoted(key[:60])} is declared more than once; RisuAI keeps one "
                  "value for both", evidence=f"{toggle_field} line {line}")
    for line in tp.malformed:
        b.finding(RA702, "a toggle line has no key=label form and was skipped",
                  evidence=f"{toggle_field} line {line}")
    if tp.over_limit:
        b.finding(RA702, f"{tp.over_limit} toggle line(s) past the first "
                  f"{len(tp.toggles)} toggles were not read", evidence=toggle_field)
    for kind, line in tp.unknown_types:
        b.finding(RA703, f"unknown toggle type {quoted(kind)}; read as a text field",
                  evidence=f"{toggle_field} line {line}")
    if toggle_text.strip():
        b.cap("ui.toggles", toggle_field)
    declared = {t.key for t in tp.toggles}
    for (scope, key), sk in sorted(b.state.items()):
        name = key[len("toggle_"):]
        if scope != "global" or not key.startswith("toggle_") or name in declared:
            continue
        uses = sk.reads or sk.writes
        why = _undeclared_toggle_problem(name, declared)
        if why:
            b.finding(RA704, f"the global variable {quoted(key[:60])} is read but no toggle "
                      f"declares it ({why})", evidence=uses[0] if uses else "?")
        else:  # RisuAI merges every enabled module's toggles: another one may declare it
            for where in uses:
                b.fact(b.required_toggles, name, where)
    return tp


def _toggle_prefix(key: str) -> str:
    """The namespace of a toggle key: the text up to its first ``.`` (``lb-mini.mode`` ->
    ``lb-mini.``), or "" when it has none."""
    dot = key.find(".")
    return key[:dot + 1] if dot > 0 else ""


def _fold(key: str) -> str:
    return key.strip().lower().replace("_", "-")


def _undeclared_toggle_problem(name: str, declared: set[str]) -> str:
    """Why reading the undeclared toggle ``name`` is a mistake of this module, or "" when it
    is a toggle another module may declare (RisuAI's toggles are global: the declarations of
    every enabled module are merged).  A mistake: a near miss of a key this module declares
    (case, spaces, ``-``/``_``), a key under a namespace its own keys use, or one of its own
    options under another namespace (``base.privacy`` read, ``mine.privacy`` declared)."""
    folded = {_fold(k): k for k in declared}
    if _fold(name) in folded:
        return f"a near miss of the declared key {quoted(folded[_fold(name)][:60])}"
    prefix = _toggle_prefix(name)
    if prefix and any(_toggle_prefix(k) == prefix for k in declared):
        return f"it uses this module's own prefix {quoted(prefix[:40])}"
    option = _fold(name[len(prefix):])
    twins = sorted(k for k in declared if _toggle_prefix(k) and _toggle_prefix(k) != prefix
                   and _fold(k[len(_toggle_prefix(k)):]) == option)
    if prefix and twins:
        return (f"the option of its own key {quoted(twins[0][:60])} under another prefix: a "
                "leftover of a copy or a rename, unless another module declares it")
    return ""


_JS_DYNAMIC = ("eval", "Function", "importScripts", "import")
_JS_NETWORK = ("fetch", "XMLHttpRequest", "WebSocket", "sendBeacon", "EventSource", "risuFetch")


def _legacy_js(b: _Builder) -> None:
    """Legacy custom JavaScript (``cjs``): names it uses, code built at run time, network."""
    cjs = b.m.cjs
    if not cjs.strip():
        return
    b.counts["cjs_bytes"] = len(cjs)
    b.cap("script.legacy_js", "cjs")
    b.finding(RA501, f"carries legacy custom JavaScript ({len(cjs)} characters)", evidence="cjs")
    from risutools.analysis.js import scan_js  # only a module with legacy JavaScript

    js = scan_js(cjs)
    for name, lines in sorted(js.names.items()):
        for line in lines:
            b.fact(b.host_apis, f"js:{name}", f"cjs line {line}")
    dyn = sorted(n for n in js.names if n in _JS_DYNAMIC)
    if dyn:
        b.cap("script.dynamic_load", f"cjs line {js.names[dyn[0]][0]}")
        for n in dyn:
            b.fact(b.dynamic, f"cjs:{n}", f"cjs line {js.names[n][0]}")
        b.finding(RA502, f"legacy JavaScript builds code at run time ({', '.join(dyn)})",
                  evidence=f"cjs line {js.names[dyn[0]][0]}")
    netn = sorted(n for n in js.names if n in _JS_NETWORK)
    if netn:
        hosts = sorted({h for h, _ in js.url_hosts})
        b.finding(RA503, f"legacy JavaScript uses the network ({', '.join(netn)})"
                  + (f"; literal hosts: {', '.join(hosts[:10])}" if hosts else ""),
                  evidence=f"cjs line {js.names[netn[0]][0]}")
    for host, line in js.url_hosts:
        b.fact(b.urls, host, f"cjs line {line}")


def _mcp(b: _Builder) -> None:
    """An MCP server address (RA802)."""
    mcp = b.m.mcp_url
    if mcp.strip():
        b.cap("mcp.server", "mcp.url")
        host = _host(mcp) or "(unparsed address)"
        b.fact(b.net, host, "mcp.url")
        b.finding(RA802, f"connects to an MCP server at {host}", evidence="mcp.url")


def _low_level_access(b: _Builder) -> None:
    """lowLevelAccess against the privileged calls seen: refused calls (RA101), over-asking
    (RA102)."""
    module_lla = b.m.low_level_access
    if module_lla:
        b.cap("low_level_access", "lowLevelAccess")
    for i in b.trigger_lla:
        b.cap("low_level_access", f"trigger[{i}].lowLevelAccess")
    reported: set[tuple[str, bool]] = set()
    for api, trig, where in b.privileged_uses:
        allowed = trig != LISTENER and (module_lla or (trig is not None and trig in b.trigger_lla)
                                        or (trig == LOREBOOK_CODE and bool(b.trigger_lla)))
        if allowed or (api, trig == LISTENER) in reported:
            continue
        reported.add((api, trig == LISTENER))
        if trig == LISTENER:
            b.finding(RA101, f"uses the privileged API {api} inside a listenEdit callback; RisuAI "
                      "runs edit listeners without lowLevelAccess and will refuse it silently "
                      "(call it from onStart/onOutput/onButtonClick instead)", evidence=where)
        else:
            b.finding(RA101, f"uses the privileged API {api} without lowLevelAccess; RisuAI will "
                      "refuse it silently (set lowLevelAccess or remove the call)",
                      evidence=where)
    if (module_lla or b.trigger_lla) and not b.privileged_uses:
        unseen = any(f.rule in (RA110.id, RA112.id, RA113.id) for f in b.findings)
        b.finding(RA102, "asks for lowLevelAccess but uses no privileged API "
                  + ("in the code this analysis can read; it also runs code built at run time, "
                     "which may need it" if unseen else "(over-asking); turn lowLevelAccess off"),
                  evidence="lowLevelAccess" if module_lla else f"trigger[{b.trigger_lla[0]}]"
                  ".lowLevelAccess")


def _structure(b: _Builder) -> None:
    """What the module provides by carrying it: lorebook entries, regex transforms."""
    if b.m.lorebook:
        b.cap("lorebook.entries", "lorebook")
    if b.m.regex:
        b.cap("regex.transform", "regex")


def _button_entry(b: _Builder) -> None:
    """``onButtonClick`` is this module's entry point when its own Lua defines it; its
    ``risu-btn`` buttons are then where it is reached.  Without a definition the buttons
    reach the handler of another enabled module (hook.manual and the callbacks stay)."""
    if "onButtonClick" in b.entries:
        for ev in b.risu_btn_seen:
            b.fact(b.entries, "onButtonClick", ev)


def _unused_code_fields(b: _Builder) -> None:
    """Fields RisuAI never reads that hold code (a module's ``lua`` text, say): dead code,
    reported once each (RA803) and never analysed as code that runs."""
    if b.m.component_type != "module":
        return
    for key in sorted(k for k in b.m.data if isinstance(k, str) and k not in MODULE_FIELDS):
        value = b.m.data[key]
        if not isinstance(value, str) or not value.strip():
            continue
        if key.lower() not in CODE_FIELD_NAMES and not looks_like_lua(value):
            continue
        b.fact(b.unused_fields, key, f"/{key}")
        b.finding(RA803, f"the field {quoted(key[:40])} holds code ({len(value)} characters) "
                  "but RisuAI never reads this field, so it never runs; it was not analysed "
                  "as running code", evidence=f"/{key}", pointer=f"/{key}")


@cache
def _vocabulary_order() -> dict[str, int]:
    """Capability name -> its place in the vocabulary (built once: the file is read once)."""
    return {name: i for i, name in enumerate(vocabulary())}


def _capabilities(b: _Builder) -> tuple[list[Capability], list[Capability], dict[str, int]]:
    """The capabilities seen, split into requires and provides, in vocabulary order (only
    vocabulary names are ever emitted); and the vocabulary order itself."""
    vocab = vocabulary()
    order = _vocabulary_order()
    requires: list[Capability] = []
    provides: list[Capability] = []
    for name in sorted(b.caps, key=lambda n: (order.get(n, 10**6), n)):
        entry = vocab.get(name)
        if not isinstance(entry, dict):
            continue
        capability = Capability(name, str(entry.get("kind", "requires")), list(b.caps[name]))
        (provides if capability.kind == "provides" else requires).append(capability)
    return requires, provides, order


def _result(b: _Builder, trigger_types: list[str], tp: ToggleParse) -> Analysis:
    """The :class:`Analysis` of what the builder recorded (sorted, deterministic)."""
    requires, provides, order = _capabilities(b)
    hooks = [b.hooks[n] for n in sorted(b.hooks, key=lambda n: (order.get(n, 10**6), n))]
    counts = dict(b.counts)
    counts["toggles"] = len(tp.toggles)
    for k in ("lorebook", "regex", "triggers", "assets", "lua_bytes", "cjs_bytes", "cbs_tags"):
        counts.setdefault(k, 0)
    return Analysis(
        name=b.m.name,
        component_type=str(b.m.component_type),
        hooks=hooks,
        state=[b.state[k] for k in sorted(b.state)],
        host_apis=_sorted_facts(b.host_apis),
        privileged=_sorted_facts(b.privileged),
        dynamic_code=_sorted_facts(b.dynamic),
        entry_points=_sorted_facts(b.entries),
        button_callbacks=_sorted_facts(b.buttons),
        toggles=list(tp.toggles),
        requires=requires,
        provides=provides,
        network_hosts=_sorted_facts(b.net),
        url_hosts=_sorted_facts(b.urls),
        conditions=list(b.conditions),
        trigger_types=trigger_types,
        low_level_access=b.m.low_level_access,
        low_level_triggers=list(b.trigger_lla),
        lorebook_code=list(b.lorebook_code),
        required_toggles=_sorted_facts(b.required_toggles),
        unused_code_fields=_sorted_facts(b.unused_fields),
        counts=counts,
        findings=sorted_findings(b.findings),
    )


def _sorted_facts(table: dict[str, Fact]) -> list[Fact]:
    return [table[k] for k in sorted(table)] if table else []


def _named_lua(comment: Any) -> bool:
    """A lorebook entry named like a Lua file (``*.lua``)."""
    return isinstance(comment, str) and is_lua_file_name(comment)
