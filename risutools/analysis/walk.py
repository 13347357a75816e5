"""The walk: one pass over a module, section by section in RisuAI's terms, recording what it
sees into a :class:`~risutools.analysis.seen.Seen` (facts, and the events the checks read).

:func:`walk` runs the steps in a fixed order (the order is the walk's clock: see
``risutools.analysis.seen``).  It never raises on module content: a field of the wrong type
is read as empty and recorded (RA801); code that does not lex is read as far as it goes
(RA601).  Lua is read by :mod:`risutools.analysis.walk_lua`, CBS and HTML by
:mod:`risutools.analysis.walk_text`.
"""

from __future__ import annotations

import re
from typing import Any

from risutools.analysis.assets import declared_type, sniff
from risutools.analysis.cbs import evaluated
from risutools.analysis.checks.toggles import DeclaredToggles
from risutools.analysis.js import DYNAMIC_CODE, scan_js
from risutools.analysis.lorecode import looks_like_lua
from risutools.analysis.model import (
    REGEX_TYPE_HOOKS,
    TRIGGER_TYPE_HOOKS,
    Condition,
    Fact,
)
from risutools.analysis.regexcheck import parse_flags
from risutools.analysis.seen import Seen, entry_seen
from risutools.analysis.walk_command import run_trigger_entries
from risutools.analysis.walk_effects import read_effect
from risutools.analysis.walk_fields import charx_view, ignored_fields, mcp, namespace, preset_fields
from risutools.analysis.walk_lore import lorebook
from risutools.analysis.walk_lua import CODE_EFFECTS, read_lua, sort_loads
from risutools.analysis.walk_text import GREETINGS, read_cbs, read_html, read_pattern
from risutools.formats.card import CREATOR_NOTES
from risutools.formats.model import Module
from risutools.formats.toggles import parse_toggles
from risutools.jsontypes import js_truthy
from risutools.pathnames import fits_wildcard as pattern_fits

#: effects RisuAI's trigger runner passes over (triggers.ts: "Header for V2 triggers", a
#: comment): a trigger made only of these (or of nothing) does nothing when it runs
INERT_EFFECTS = frozenset({"v2Header", "v2Comment"})
#: the hooks of every event RisuAI runs triggers on (a code-first trigger's other effects)
EVERY_EVENT_HOOKS = tuple(sorted(set(TRIGGER_TYPE_HOOKS.values())))
#: the fields of a module RisuAI reads (modules.ts ``RisuModule``; ``type`` and
#: ``displayOrder`` are written by RisuAI's exports and editors); any other field never runs
MODULE_FIELDS = frozenset({
    "name", "description", "lorebook", "regex", "cjs", "trigger", "id", "lowLevelAccess",
    "hideIcon", "backgroundEmbedding", "assets", "namespace", "customModuleToggle", "mcp",
    "type", "displayOrder"})
#: field names that say "code" (a field RisuAI does not read, named so, is dead code)
CODE_FIELD_NAMES = frozenset({"lua", "luacode", "code", "script", "scripts", "js",
                              "javascript", "triggerlua", "triggercode"})
#: preset prompt-item fields and preset text fields RisuAI runs through CBS (not
#: ``templateDefaultVariables``: ``key=value`` lines whose values ``getvar`` returns as text,
#: never evaluated: parseKeyValue in RisuAI's parser.svelte.ts)
PROMPT_ITEM_FIELDS = ("text", "innerFormat", "defaultText")
PRESET_TEXT_FIELDS = ("mainPrompt", "jailbreak", "globalNote", "autoSuggestPrompt",
                      "groupTemplate", "JinjaTemplate")


def walk(module: Module) -> Seen:
    """Read ``module`` once, every section in turn, into a new :class:`Seen` (a ``.charx``'s
    module.risum as RisuAI imports it: :func:`~risutools.analysis.walk_fields.charx_view`)."""
    view, dropped = charx_view(module)
    s = Seen(view)
    ignored_fields(s, dropped)
    shape(s)
    triggers(s)
    lorebook(s)
    sort_loads(s)
    regex_scripts(s)
    card_fields(s)
    if module.component_type == "preset":
        preset_prompts(s)
        preset_fields(s)
    background(s)
    toggles(s)
    legacy_js(s)
    mcp(s)
    namespace(s)
    low_level_access(s)
    structure(s)
    assets(s)
    unused_code_fields(s)
    button_entry(s)
    run_trigger_entries(s, manual_triggers(s))
    return s


def shape(s: Seen) -> None:
    """The top-level fields' types."""
    d = s.module.data
    for key in ("lorebook", "regex", "trigger", "assets"):
        if key in d and not isinstance(d[key], list) and d[key] is not None:
            s.wrong_type(f"/{key}", "a list", d[key])
    for key in ("name", "description", "cjs", "backgroundEmbedding", "customModuleToggle",
                "namespace"):
        if key in d and not isinstance(d[key], str) and d[key] is not None:
            s.wrong_type(f"/{key}", "a string", d[key])
    lla = d.get("lowLevelAccess")
    if lla is not None and not isinstance(lla, bool):  # (RisuAI tests it as JavaScript does)
        s.wrong_type("/lowLevelAccess", "a boolean", lla, "granted, as JavaScript reads it "
                     "(not empty, not 0)" if js_truthy(lla) else "not granted, as JavaScript "
                     "reads it")
    if "mcp" in d and d["mcp"] is not None and not isinstance(d["mcp"], dict):
        s.wrong_type("/mcp", "an object", d["mcp"])


# -- triggers --------------------------------------------------------------------------------

def triggers(s: Seen) -> None:
    """Every trigger: its type (a hook, unless its effects are all code or inert), its
    lowLevelAccess, conditions and effects."""
    trig = s.module.trigger
    s.counts["triggers"] = len(trig)
    for i, t in enumerate(trig):
        if not isinstance(t, dict):
            s.wrong_type(f"/trigger/{i}", "an object", t)
            s.trigger_types.append("")
            continue
        ttype = t.get("type")
        s.trigger_types.append(ttype if isinstance(ttype, str) else "")
        if js_truthy(t.get("lowLevelAccess")):
            s.trigger_lla.append(i)
        effects = _list_field(s, t, "effect", f"/trigger/{i}/effect")
        conds = _list_field(s, t, "conditions", f"/trigger/{i}/conditions")
        _trigger_hook(s, i, ttype, effects)
        for j, c in enumerate(conds):
            condition(s, i, j, c)
        later = later_lua_entries(ttype, effects)
        for j, e in enumerate(effects):
            effect(s, i, j, e, later if j else None)


def _list_field(s: Seen, obj: dict[str, Any], key: str, pointer: str) -> list[Any]:
    """``obj[key]`` when it is a list; [] when it is missing or null, or (recorded) of
    another type."""
    value = obj.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        s.wrong_type(pointer, "a list", value)
        return []
    return value


def _trigger_hook(s: Seen, i: int, ttype: Any, effects: list[Any]) -> None:
    """The hooks a trigger's effects run in.  A trigger whose first effect is code
    (``triggerlua``/``triggercode``) is run by RisuAI on every event whatever its type
    (triggers.ts ``runTrigger`` skips the type and manual-name filter for it): its other
    effects run in every trigger hook (start, input, output, request, display, manual)."""
    all_code = bool(effects) and all(
        isinstance(e, dict) and _is_code_effect(e.get("type")) for e in effects)
    inert = all(isinstance(e, dict) and isinstance(e.get("type"), str)
                and e["type"] in INERT_EFFECTS for e in effects)
    if inert:  # only a v2Header marker (or nothing): running it does nothing
        s.counts["inert_triggers"] = s.counts.get("inert_triggers", 0) + 1
    elif isinstance(effects[0], dict) and _is_code_effect(effects[0].get("type")):
        if any(isinstance(e, dict) and not _is_code_effect(e.get("type"))
               and not _is_inert(e.get("type")) for e in effects[1:]):
            s.counts["every_event_triggers"] = s.counts.get("every_event_triggers", 0) + 1
            for hook in EVERY_EVENT_HOOKS:
                s.hook(hook, f"trigger[{i}].effect[0]")
    elif isinstance(ttype, str) and ttype in TRIGGER_TYPE_HOOKS and not all_code:
        s.hook(TRIGGER_TYPE_HOOKS[ttype], f"trigger[{i}].type")


def _is_inert(etype: Any) -> bool:
    """An effect type that does nothing when run (a list or an object is none: no key of
    a set)."""
    return isinstance(etype, str) and etype in INERT_EFFECTS


def _is_code_effect(etype: Any) -> bool:
    """Only text can name an effect type (a list or object is data, never a set key)."""
    return isinstance(etype, str) and etype in CODE_EFFECTS


def condition(s: Seen, i: int, j: int, c: Any) -> None:
    where = f"trigger[{i}].conditions[{j}]"
    if not isinstance(c, dict):
        s.wrong_type(f"/trigger/{i}/conditions/{j}", "an object", c)
        return
    ctype = c.get("type")
    ctype_s = ctype if isinstance(ctype, str) else "other"
    var = c.get("var")
    var_s = var if isinstance(var, str) else ""
    op = c.get("operator")
    val = c.get("value")
    if ctype_s == "var" and var_s:
        s.state_use("chat", var_s, "read", where)
        s.cap("chat_state_kv", where)
    elif ctype_s == "value" and "{{" in var_s:
        read_cbs(s, var_s, f"{where}.var")  # a value condition's var is text run as CBS
    if ctype_s in ("var", "exists", "chatindex", "value") and isinstance(val, str) and (
            "{{" in val):
        read_cbs(s, val, f"{where}.value")  # RisuAI runs the compared text through CBS
    if ctype_s == "exists" and c.get("type2") == "regex" and isinstance(val, str) and val:
        # triggers.ts: ``new RegExp(value).test(messages)``, no flags, after CBS (a tag
        # may be evaluated to nothing: ``(a+)+{{blank}}``)
        read_pattern(s, f"{where}.value", evaluated(val), "")
    s.conditions.append(Condition(
        i, ctype_s if ctype_s in ("var", "exists", "chatindex", "value") else "other",
        var_s[:80], op[:8] if isinstance(op, str) else "",
        str(val)[:80] if isinstance(val, (str, int, float)) and not isinstance(val, bool)
        else ""))


#: the entry points a ``triggerlua`` after the first effect reaches, by the trigger's type:
#: runTrigger runs it with the event as its mode (calling onStart/onInput/onOutput, or for
#: a manual run the global of the trigger's name), never for edit listeners or buttons
#: (runLuaEditTrigger/runLuaButtonTrigger read only effect[0]); display and request runs
#: skip it (not in their allow lists), and a trigger of another type never runs
LATER_LUA_ENTRIES: dict[str, frozenset[str]] = {
    "start": frozenset({"onStart"}), "input": frozenset({"onInput"}),
    "output": frozenset({"onOutput"}), "manual": frozenset()}
#: ... in a trigger whose first effect is code (run in every mode, whatever its type)
CODE_FIRST_LATER_ENTRIES = frozenset({"onStart", "onInput", "onOutput"})


def later_lua_entries(ttype: Any, effects: list[Any]) -> frozenset[str] | None:
    """The entry points a ``triggerlua`` after the first effect of this trigger reaches
    (None: it never runs)."""
    first = effects[0] if effects else None
    if isinstance(first, dict) and _is_code_effect(first.get("type")):
        return CODE_FIRST_LATER_ENTRIES
    return LATER_LUA_ENTRIES.get(ttype) if isinstance(ttype, str) else None


def effect(s: Seen, i: int, j: int, e: Any, later: frozenset[str] | None = None) -> None:
    """One effect (``later``: for an effect after the first, the entry points a Lua effect
    there reaches; None when it never runs)."""
    where = f"trigger[{i}].effect[{j}]"
    if not isinstance(e, dict):
        s.wrong_type(f"/trigger/{i}/effect/{j}", "an object", e)
        return
    etype = e.get("type")
    if not isinstance(etype, str):
        s.wrong_type(f"/trigger/{i}/effect/{j}/type", "a string", etype)
        return
    if etype == "triggercode":  # triggers.ts runTrigger has no case for it: never runs
        code = e.get("code")
        if isinstance(code, str) and code.strip():
            s.unused.append((s.tick(), f"trigger/{i}/effect/{j}/code", len(code)))
        return
    if etype in CODE_EFFECTS:
        code = e.get("code")
        if j and later is None:  # a display or request trigger skips it: it never runs
            if isinstance(code, str) and code.strip():
                s.unused.append((s.tick(), f"trigger/{i}/effect/{j}/code", len(code)))
            return
        read_lua(s, code, where, i, entries=later if j else None)
        return
    read_effect(s, i, where, etype, e)


# -- regex scripts ---------------------------------------------------------------------------

#: regex script types whose output no page shows: ``editprocess`` rewrites the request sent
#: to the model only (RisuAI's prompt building; its Lua edit trigger returns at once for it),
#: so the CBS of its output runs, but its HTML is never rendered (no RA301-RA305 of it)
UNSHOWN_REGEX_TYPES = frozenset({"editprocess"})


def regex_scripts(s: Seen) -> None:
    scripts = s.module.regex
    s.counts["regex"] = len(scripts)
    for i, r in enumerate(scripts):
        if not isinstance(r, dict):
            s.wrong_type(f"/regex/{i}", "an object", r)
        elif r.get("type") == "disabled":  # documented: RisuAI keeps it, never runs it
            s.counts["regex_disabled"] = s.counts.get("regex_disabled", 0) + 1
        elif r.get("in") == "":  # scripts.ts executeScript: ``if(script.in === '') return``
            s.counts["regex_empty"] = s.counts.get("regex_empty", 0) + 1
        else:
            regex_script(s, i, r)


def regex_script(s: Seen, i: int, r: dict[str, Any]) -> None:
    """One regex script RisuAI runs: its hook, flags, pattern and output."""
    rtype = r.get("type")
    if isinstance(rtype, str) and rtype in REGEX_TYPE_HOOKS:
        s.hook(REGEX_TYPE_HOOKS[rtype], f"regex[{i}].type")
    elif rtype is not None:
        s.regex_types.append((s.tick(), i, rtype))
    letters, directive_items = _regex_flags(s, i, r)
    pattern = r.get("in")
    if pattern is not None and not isinstance(pattern, str):
        s.wrong_type(f"/regex/{i}/in", "a string", pattern)
    elif isinstance(pattern, str) and pattern:
        cbs = "cbs" in directive_items and "{{" in pattern  # ``<cbs>``: RisuAI runs the
        # pattern through CBS first, and a tag may give nothing: ``({{blank}}a+)+``
        read_pattern(s, f"regex[{i}].in", evaluated(pattern) if cbs else pattern, letters)
        if cbs:
            read_cbs(s, pattern, f"regex[{i}].in")
    out = r.get("out")
    _regex_out(s, i, out, shown=not (isinstance(rtype, str) and rtype in UNSHOWN_REGEX_TYPES))
    out_s = out if isinstance(out, str) else ""
    if out_s.startswith("@@inject") or ("inject" in directive_items
                                         and not out_s.startswith("@@emo ")):
        # scripts.ts processScriptFull: the matched message's stored text is rewritten
        s.cap("chat.write", f"regex[{i}].out" if out_s.startswith("@@inject")
              else f"regex[{i}].flag")


def _regex_out(s: Seen, i: int, out: Any, *, shown: bool) -> None:
    """A regex script's output: CBS RisuAI evaluates, and HTML a page shows (``shown``)."""
    if out is not None and not isinstance(out, str):
        s.wrong_type(f"/regex/{i}/out", "a string", out)
    elif isinstance(out, str) and out:
        read_cbs(s, out, f"regex[{i}].out")
        if shown:
            read_html(s, shown_out(out), f"regex[{i}].out")


def shown_out(out: str) -> str:
    """A regex script's output as RisuAI uses it (scripts.ts ``executeScript``: every
    ``$n`` is a line break, ``replaceAll("$n", "\\n")``, before the replacement is made),
    the line break written ``\\r``: the same to a browser (HTML reads a carriage return as
    a line break, a URL drops it) and not counted as a line of the field, so that lines
    stay those of the text as written.  (Its ``{{data}}`` -> ``$&`` does nothing: a ``$&``
    in a replacement text is the text matched, ``{{data}}`` itself.)"""
    return out.replace("$n", "\r") if "$n" in out else out


#: the directives RisuAI takes out of a flag (scripts.ts: ``/<(.+?)>/g``)
_DIRECTIVES = re.compile(r"<(.+?)>")


def _regex_flags(s: Seen, i: int, r: dict[str, Any]) -> tuple[str, set[str]]:
    """A regex script's flag letters and ``<directives>`` (``<cbs>``, ``<inject>``,
    ``<order n>`` ...) as RisuAI runs it (scripts.ts): its ``flag`` only when its
    ``ableFlag`` is true (else ``g``, whatever the field holds: no letter of it is
    unknown then); ``g`` for a flag left empty once its directives are taken out, ``u``
    for one with no letter RisuAI keeps; the directives as written (``<Inject>`` is none)."""
    flag = r.get("flag")
    if not js_truthy(r.get("ableFlag")):
        return "g", set()  # as JavaScript reads it: not truthy
    if not isinstance(flag, str) or not flag:
        return "g", set()
    letters, directives, unknown = parse_flags(flag)
    if unknown:
        s.regex_flags.append((s.tick(), i, unknown))
    rest = _DIRECTIVES.sub("", flag) if "<" in flag else flag
    return (letters or ("u" if rest else "g"),
            {m.strip() for d in directives for m in d.split(",")})


# -- text RisuAI shows -----------------------------------------------------------------------

def card_fields(s: Seen) -> None:
    """CBS in a card's greetings, description and prompt fields (``cardFields``); the HTML
    of its greetings and of its creator's notes (``creatorNotes``: shown as written, their
    CBS never evaluated)."""
    notes = s.module.data.get(CREATOR_NOTES)
    if isinstance(notes, str):
        read_html(s, notes, "card.creator_notes")
    fields = s.module.data.get("cardFields")
    if not isinstance(fields, dict):
        return
    for key in sorted(fields):
        value = fields[key]
        texts = list(enumerate(value)) if isinstance(value, list) else [(None, value)]
        for i, text in texts:
            if not isinstance(text, str):
                continue
            where = f"card.{key}" if i is None else f"card.{key}[{i}]"
            if "{{" in text:
                read_cbs(s, text, where, greeting=key in GREETINGS)
            if key in GREETINGS:  # shown in the chat as HTML, CBS or not
                read_html(s, text, where, visualize=True)


def preset_prompts(s: Seen) -> None:
    """CBS in a preset's prompt items and prompt fields (RisuAI evaluates them all)."""
    d = s.module.data
    items = d.get("promptTemplate")
    if isinstance(items, list):
        s.counts["prompt_items"] = len(items)
        for i, item in enumerate(items):
            if not isinstance(item, dict):
                continue
            for key in PROMPT_ITEM_FIELDS:
                text = item.get(key)
                if isinstance(text, str) and "{{" in text:
                    read_cbs(s, text, f"promptTemplate[{i}].{key}")
    for key in PRESET_TEXT_FIELDS:
        text = d.get(key)
        if isinstance(text, str) and "{{" in text:
            read_cbs(s, text, key)


def background(s: Seen) -> None:
    """The background HTML: CBS and HTML, offered as ``ui.background``."""
    bg = s.module.background_embedding
    if bg.strip():
        s.cap("ui.background", "backgroundEmbedding")
        read_cbs(s, bg, "backgroundEmbedding")
        read_html(s, bg, "backgroundEmbedding", chat=False)


# -- declarations ----------------------------------------------------------------------------

def toggles(s: Seen) -> None:
    """The toggle declarations (a preset keeps them in customPromptTemplateToggle), and the
    toggle globals read that another module may declare (``required_toggles``)."""
    module = s.module
    toggle_field = "customModuleToggle"
    toggle_text = module.custom_module_toggle
    if module.component_type == "preset" and not toggle_text.strip():
        raw_toggles = module.data.get("customPromptTemplateToggle")
        if isinstance(raw_toggles, str):
            toggle_field, toggle_text = "customPromptTemplateToggle", raw_toggles
    tp = parse_toggles(toggle_text)
    s.declared_toggles = tp.toggles
    if toggle_text.strip():
        s.toggles = (s.tick(), toggle_field, tp)
        s.cap("ui.toggles", toggle_field)
    declared = {t.key for t in tp.toggles}
    index = DeclaredToggles(declared)
    for (scope, key), sk in sorted(s.state.items()):
        name = key[len("toggle_"):]
        if scope != "global" or not key.startswith("toggle_") or name in declared:
            continue
        # RisuAI merges every enabled module's toggles: another one may declare it (a
        # mistake of this module's own is RA704 instead)
        if not index.problem(name):
            for where in sk.reads or sk.writes:
                s.fact(s.required_toggles, name, where)


def legacy_js(s: Seen) -> None:
    """Legacy custom JavaScript (``cjs``): names it uses, code built at run time, hosts."""
    cjs = s.module.cjs
    if not cjs.strip():
        return
    s.counts["cjs_bytes"] = len(cjs)
    s.cap("script.legacy_js", "cjs")
    js = scan_js(cjs)
    s.legacy_js = (s.tick(), len(cjs), js)
    for name, lines in sorted(js.names.items()):
        for line in lines:
            s.fact(s.host_apis, f"js:{name}", f"cjs line {line}")
    dyn = sorted(n for n in js.names if n in DYNAMIC_CODE)
    if dyn:
        s.cap("script.dynamic_load", f"cjs line {js.names[dyn[0]][0]}")
        for n in dyn:
            s.fact(s.dynamic, f"cjs:{n}", f"cjs line {js.names[n][0]}")
    for host, line in js.url_hosts:
        s.fact(s.urls, host, f"cjs line {line}")
    for pattern, flags, line in js.patterns:  # (RA201 only: JavaScript's own syntax)
        read_pattern(s, f"cjs line {line}", pattern, flags, risks_only=True)


def low_level_access(s: Seen) -> None:
    """lowLevelAccess asked for; RA101 and RA102 weigh it against the privileged calls seen.

    RisuAI overwrites every trigger's own flag with its container's before running it
    (modules.ts ``getModuleTriggers``: the module's; triggers.ts ``runTrigger``: the
    card's for a card's triggers, and a ``.charx``'s module.risum triggers are imported as
    the card's): a trigger's own ``lowLevelAccess`` grants nothing and asks for nothing
    (kept as the ``low_level_triggers`` fact)."""
    s.lla_at = s.tick()
    if granted_lla(s):
        where = "card.lowLevelAccess" if _embedded(s) else "lowLevelAccess"
        s.cap("low_level_access", where)
        s.lla_asked = (s.lla_at, where)


def _embedded(s: Seen) -> bool:
    """A ``.charx``'s module.risum: its triggers run as the card's."""
    return s.module.component_type == "module" and s.module.card is not None


def granted_lla(s: Seen) -> bool:
    """The lowLevelAccess RisuAI runs this component's triggers and Lua with."""
    if _embedded(s):
        card = s.module.card or {}
        return card.get("low_level_access") is True
    return s.module.low_level_access


def structure(s: Seen) -> None:
    """What the module provides by carrying it: lorebook entries, regex transforms."""
    if s.module.lorebook:
        s.cap("lorebook.entries", "lorebook")
    if s.module.regex:
        s.cap("regex.transform", "regex")


def assets(s: Seen) -> None:
    """Every asset (declared and sniffed types, size) and the reader's anomalies."""
    infos = s.module.assets
    raw = s.module.data.get("assets")
    s.counts["assets"] = max(len(infos), len(raw) if isinstance(raw, list) else 0)
    for a in infos:
        s.assets.append((s.tick(), f"assets[{a.index}]", declared_type(a.ext, a.name),
                         sniff(a.head or b""), a.size))
    if s.counts["assets"]:
        s.cap("asset.bundle", "assets")
    for an in s.module.anomalies:
        s.anomalies.append((s.tick(), str(an.code), an.message, str(an.where)))


def unused_code_fields(s: Seen) -> None:
    """Fields RisuAI never reads that hold code (a module's ``lua`` text, say): dead code,
    never analysed as code that runs."""
    data = s.module.data
    if s.module.component_type != "module":
        return
    for key in sorted(k for k in data if isinstance(k, str) and k not in MODULE_FIELDS):
        value = data[key]
        if not isinstance(value, str) or not value.strip():
            continue
        if key.lower() not in CODE_FIELD_NAMES and not looks_like_lua(value):
            continue
        s.fact(s.unused_fields, key, f"/{key}")
        s.unused.append((s.tick(), key, len(value)))


def button_entry(s: Seen) -> None:
    """``onButtonClick`` is this module's entry point when its own Lua defines it; its
    ``risu-btn`` buttons are then where it is reached.  Without a definition the buttons
    reach the handler of another enabled module (hook.manual and the callbacks stay).

    A button that names a trigger or a function (``risu-trigger="Name"``, CBS
    ``{{button::label::Name}}``) reaches, when clicked, the module's manual trigger of that
    name and the Lua global of that name (Chat.svelte runs ``runTrigger(char, 'manual',
    {manualName})``; triggers.ts runs the triggers whose comment is the name and every Lua
    trigger with the name as its mode, which calls the global of that name): an entry
    point named so, with the button and the trigger or definition as evidence."""
    if "onButtonClick" in s.entries:
        for ev in s.risu_btn_seen:
            s.fact(s.entries, "onButtonClick", ev)
    if not s.named_buttons:
        return
    manual = manual_triggers(s)
    buttons: dict[str, list[str]] = {}  # each name's targets found once, however many buttons
    for name, ev in s.named_buttons:
        buttons.setdefault(name, []).append(ev)
    fits = MAX_PATTERN_FITS
    for name, evs in buttons.items():
        if "*" in name:  # a pattern (``CHOICE_*``): every trigger and global it fits
            fits -= len(manual) + len(s.lua_globals)
            targets = [] if fits < 0 else [
                w for known in (manual, s.lua_globals) for n, ws in known.items()
                if pattern_fits(name, n) for w in ws]
        else:
            targets = manual.get(name, []) + s.lua_globals.get(name, [])
        if targets:
            entry_seen(s.manual_entries.setdefault(name, Fact(name)), evs, targets)


#: at most this many (button pattern, trigger or global name) pairs are tried per module
#: (past them a pattern's targets are not looked for: its buttons stay hook.manual)
MAX_PATTERN_FITS = 200_000


def manual_triggers(s: Seen) -> dict[str, list[str]]:
    """Trigger comment -> the triggers of that name that are not Lua (``trigger[i]``)."""
    out: dict[str, list[str]] = {}
    for i, t in enumerate(s.module.trigger):
        if not isinstance(t, dict) or not isinstance(t.get("comment"), str):
            continue
        effects = t.get("effect")
        first = effects[0] if isinstance(effects, list) and effects else None
        if isinstance(first, dict) and _is_code_effect(first.get("type")):
            continue  # a Lua trigger runs with the name as its mode (a global)
        out.setdefault(t["comment"], []).append(f"trigger[{i}]")
    return out
