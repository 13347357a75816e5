"""Classes of misses found on real attachments, each with fixtures of the project's own
(positive and negative; nothing is taken from the real corpus): what RisuAI actually runs,
what it merges across modules, what it ignores, and how text is shown."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

from harness import run_cli

from risutools.analysis import analyze
from risutools.formats import read_path
from risutools.formats.card import card_module_data, has_active_content
from risutools.formats.model import Module
from risutools.formats.risum import write_risum
from risutools.printable import display


def ids(m: Module) -> list[str]:
    return [f.rule for f in analyze(m).findings]


def trigger(ttype: str, *effects: dict[str, Any]) -> dict[str, Any]:
    return {"type": ttype, "conditions": [], "effect": list(effects)}


# -- a trigger made only of a v2Header marker does nothing -----------------------------------

def test_header_only_and_empty_triggers_are_not_entry_points() -> None:
    for effects in ([{"type": "v2Header", "indent": 0}], [],
                    [{"type": "v2Header", "indent": 0}, {"type": "v2Comment", "value": "todo"}]):
        a = analyze(Module({"name": "T", "trigger": [trigger("manual", *effects)]}))
        assert a.hook_names() == [], effects
        assert a.counts["inert_triggers"] == 1


def test_a_header_with_a_real_effect_is_an_entry_point() -> None:
    m = Module({"name": "T", "trigger": [
        trigger("manual", {"type": "v2Header", "indent": 0},
                {"type": "v2SetVar", "var": "n", "operator": "=", "valueType": "value",
                 "value": "1", "indent": 0}),
        trigger("start", {"type": "v2Header", "indent": 0})]})
    a = analyze(m)
    assert a.hook_names() == ["hook.manual"]  # the start trigger is a bare header
    assert a.counts["inert_triggers"] == 1
    assert a.state_key("n") is not None


def test_an_unreadable_effect_type_is_not_a_marker() -> None:
    m = Module({"name": "T", "trigger": [trigger("manual", {"type": ["v2Header"]})]})
    a = analyze(m)
    assert "hook.manual" in a.hook_names() and "RA801" in ids(m)


# -- a field RisuAI never reads holds code: dead, said once, never analysed as code ------------

LUA = "local n = 0\nfunction onOutput(id)\n  n = n + 1\n  LLM(id, {})\nend\n"


def test_lua_field_is_dead_code() -> None:
    a = analyze(Module({"name": "T", "lua": LUA}))
    assert [f.name for f in a.unused_code_fields] == ["lua"]
    assert a.unused_code_fields[0].evidence == ["/lua"]
    [f] = [f for f in a.findings if f.rule == "RA803"]
    assert f.severity == "info" and f.pointer == "/lua" and "never runs" in f.message
    assert "LLM" not in f.message  # never code
    # not analysed as running code: no entry point, no privileged call, no Lua counted
    assert a.entry_points == [] and a.privileged == [] and a.counts["lua_bytes"] == 0
    assert "RA101" not in ids(Module({"name": "T", "lua": LUA}))


def test_the_same_code_in_a_trigger_runs() -> None:
    m = Module({"name": "T", "trigger": [trigger("output", {"type": "triggerlua",
                                                           "code": LUA})]})
    a = analyze(m)
    assert a.unused_code_fields == [] and "RA803" not in ids(m)
    assert [e.name for e in a.entry_points] == ["onOutput"] and "RA101" in ids(m)


def test_unknown_fields_without_code_and_known_fields_are_quiet() -> None:
    for data in ({"changelog": "v2: fixed the status window"}, {"lua": "   "},
                 {"lua": 3}, {"cjs": ""}, {"namespace": "ns"}, {"displayOrder": 2}):
        m = Module({"name": "T", **data})
        assert "RA803" not in ids(m), data
    # a card or preset is not a module: its view has no stray fields to judge
    assert analyze(Module({"name": "P", "lua": LUA}, component_type="preset")) \
        .unused_code_fields == []


# -- toggles are global: a toggle another module declares is a requirement, not a finding ------

def _reads(*keys: str, declared: str) -> Module:
    code = "\n".join(f'local v{i} = getGlobalVar(id, "toggle_{k}")' for i, k in enumerate(keys))
    return Module({"name": "T", "customModuleToggle": declared,
                   "trigger": [trigger("start", {"type": "triggerlua", "code": code})]})


def test_toggle_of_a_sibling_module_is_a_requirement() -> None:
    a = analyze(_reads("base.active", "base.lang", declared="mine.mode=Mode\nmine.lazy=Lazy"))
    assert "RA704" not in [f.rule for f in a.findings]
    assert [f.name for f in a.required_toggles] == ["base.active", "base.lang"]
    assert a.required_toggles[0].evidence == ["trigger[0].effect[0] line 1"]
    assert a.to_dict()["required_toggles"][1]["name"] == "base.lang"


def test_toggle_mistakes_of_the_module_itself_still_fire() -> None:
    a = analyze(_reads("mine.Mode", "mine.depth", "mine.mode", declared="mine.mode=Mode"))
    found = [f for f in a.findings if f.rule == "RA704"]
    assert len(found) == 2
    assert "near miss" in found[0].message and "'mine.mode'" in found[0].message
    assert "own prefix 'mine.'" in found[1].message
    assert a.required_toggles == []


def test_own_option_under_another_prefix_is_a_leftover() -> None:
    a = analyze(_reads("old.privacy", "base.active", declared="mine.mode=M\nmine.privacy=P"))
    [f] = [f for f in a.findings if f.rule == "RA704"]
    assert "'toggle_old.privacy'" in f.message and "'mine.privacy'" in f.message
    assert [t.name for t in a.required_toggles] == ["base.active"]
    # an option the module does not have itself is another module's
    b = analyze(_reads("old.diversity", declared="mine.mode=M\nmine.privacy=P"))
    assert "RA704" not in [f.rule for f in b.findings]


def test_toggles_read_by_a_module_that_declares_none_are_requirements() -> None:
    a = analyze(_reads("base.active", declared=""))
    assert "RA704" not in ids(_reads("base.active", declared=""))
    assert [f.name for f in a.required_toggles] == ["base.active"]
    declared = analyze(_reads("a", declared="a=A"))
    assert declared.required_toggles == []


# -- a .charx with module.risum: the module's trigger, regex and lorebook replace the card's ---

BOOK = [{"keys": ["night"], "name": "Night", "content": "{{getvar::hour}} o'clock"}]
TRIG = [trigger("manual", {"type": "setvar", "var": "hour", "operator": "=", "value": "1"})]


def _card(**risuai: Any) -> dict[str, Any]:
    return {"spec": "chara_card_v3", "spec_version": "3.0", "data": {
        "name": "Veil", "first_mes": "Welcome, {{user}}. {{setvar::met::1}}",
        "character_book": {"entries": BOOK},
        "extensions": {"risuai": {"triggerscript": TRIG, **risuai}}}}


def _charx(tmp: Path, card: dict[str, Any], module: dict[str, Any] | None) -> Path:
    p = tmp / "veil.charx"
    with zipfile.ZipFile(p, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("card.json", json.dumps(card))
        if module is not None:
            z.writestr("module.risum", write_risum(module, []))
    return p


def test_charx_module_states_lorebook_and_triggers_once(tmp_path: Path) -> None:
    module = {"name": "Veil", "id": "veil-1", "trigger": TRIG,
              "lorebook": [{"key": "night", "comment": "Night",
                            "content": "{{getvar::hour}} o'clock"}]}
    card, mod = read_path(_charx(tmp_path, _card(), module))
    assert (card.component_type, mod.component_type) == ("character", "module")
    ca, ma = analyze(card), analyze(mod)
    assert ca.counts["lorebook"] == 0 and ca.counts["triggers"] == 0
    assert ma.counts["lorebook"] == 1 and ma.counts["triggers"] == 1
    assert ca.state_key("hour") is None and ma.state_key("hour") is not None
    # what is the card's own stays on the card
    # (a greeting's setvar: a group-chat write, issue 22)
    assert [(f.name, f.evidence) for f in ca.group_chat_writes] == [
        ("met", ["card.first_mes line 1"])]
    out = run_cli("analyze", str(tmp_path / "veil.charx")).stdout
    assert "trigger, lorebook: replaced on import by the module.risum it carries" in out


def test_charx_module_without_lorebook_leaves_the_card_lorebook(tmp_path: Path) -> None:
    card, _mod = read_path(_charx(tmp_path, _card(), {"name": "Veil", "id": "v", "trigger": []}))
    ca = analyze(card)
    assert ca.counts["lorebook"] == 1 and ca.state_key("hour") is not None
    assert ca.counts["triggers"] == 0  # triggers are always the module's (even none)


def test_charx_without_module_keeps_everything(tmp_path: Path) -> None:
    [card] = read_path(_charx(tmp_path, _card(), None))
    ca = analyze(card)
    assert ca.counts["lorebook"] == 1 and ca.counts["triggers"] == 1


def test_card_view_with_a_carried_module() -> None:
    view = card_module_data(_card(customScripts=[{"in": "a", "out": "b",
                                                  "type": "editoutput"}]),
                            {"lorebook": [], "trigger": [], "regex": []})
    assert "trigger" not in view and "regex" not in view and "lorebook" not in view
    assert view["replacedByModule"] == ["trigger", "regex", "lorebook"]
    assert has_active_content(view)  # CBS in the greeting is the card's own
    alone = card_module_data(_card(customScripts=[{"in": "a", "out": "b"}]))
    assert alone["trigger"] == TRIG and len(alone["regex"]) == 1 and len(alone["lorebook"]) == 1
    assert "replacedByModule" not in alone


# -- CBS everywhere RisuAI evaluates it --------------------------------------------------------

def test_cbs_in_card_description_and_background_html() -> None:
    view = card_module_data({"spec": "chara_card_v3", "data": {
        "name": "C", "description": "{{getvar::mood}}",
        "extensions": {"risuai": {"backgroundHTML": "<div>{{setvar::seen::1}}</div>"}}}})
    a = analyze(Module(view, component_type="character"))
    assert a.state_key("mood").reads == ["card.description line 1"]
    assert a.state_key("seen").writes == ["backgroundEmbedding line 1"]
    plain = card_module_data({"spec": "chara_card_v3", "data": {
        "name": "C", "description": "calm", "extensions": {"risuai": {"backgroundHTML": "<p>"}}}})
    assert analyze(Module(plain, component_type="character")).state == []


def test_cbs_in_more_v1_effects_and_exists_conditions() -> None:
    m = Module({"name": "T", "trigger": [{
        "type": "input",
        "conditions": [{"type": "exists", "value": "{{getvar::word}}", "type2": "loose",
                        "depth": 3}],
        "effect": [{"type": "systemprompt", "location": "start", "value": "{{getvar::rule}}"},
                   {"type": "command", "value": "/echo {{setvar::said::1}}"}]}]})
    a = analyze(m)
    assert a.state_key("word").reads == ["trigger[0].conditions[0].value line 1"]
    assert a.state_key("rule").reads == ["trigger[0].effect[0].value line 1"]
    assert a.state_key("said").writes == ["trigger[0].effect[1].value line 1"]
    quiet = Module({"name": "T", "trigger": [{
        "type": "input", "conditions": [{"type": "exists", "value": "word", "depth": 3}],
        "effect": [{"type": "systemprompt", "location": "start", "value": "plain"}]}]})
    assert analyze(quiet).state == []


# -- text is shown as written; only what could spoof the output is escaped ---------------------

def test_display_keeps_spaces_and_escapes_spoofing_characters() -> None:
    assert display("모\u3000드") == "모\u3000드"
    assert display("a\u00a0b\u2003c") == "a\u00a0b\u2003c"
    assert display("x\ny") == "x\\ny" and display("esc\x1b[31m") == "esc\\x1b[31m"
    assert display("ab\u202ecd") == "ab\\u202ecd" and display("a\u2066b") == "a\\u2066b"
    assert display("zero\u200bwidth") == "zero\\u200bwidth"


def test_text_report_prints_ideographic_space_as_is(tmp_path: Path) -> None:
    p = tmp_path / "m.json"
    p.write_text(json.dumps({"type": "risuModule", "name": "T\u202e", "id": "t",
                             "customModuleToggle": "mode=모\u3000드\nx=\u202eevil"}),
                 encoding="utf-8")
    out = run_cli("analyze", str(p)).stdout
    assert "모\u3000드" in out and "\\u3000" not in out
    assert "\u202e" not in out and "\\u202e" in out


# -- no false alarms on normal RisuAI (issue 11 item 7), end to end ---------------------------

def test_png_declared_webp_asset_in_a_risum_is_normal(tmp_path: Path) -> None:
    webp = b"RIFF\x1a\x00\x00\x00WEBPVP8 " + bytes(14)
    html = b"<!doctype html><script>x()</script>"
    for payload, fires in ((webp, False), (html, True)):
        p = tmp_path / "a.risum"
        p.write_bytes(write_risum({"name": "A", "id": "a", "assets": [["bg", "", "png"]]},
                                  [payload]))
        [m] = read_path(p)
        assert ("RA401" in ids(m)) is fires


def test_require_stubs_are_one_note_per_module_across_scripts() -> None:
    stubs = "\n".join(f"local m{i} = require('./m{i}')" for i in range(3))
    # the trigger loads the helper entry (an entry nothing loads never runs: issue 22)
    stubs += "\nlocal h = load(getLoreBooks(id, 'helper.lua')[1].content)()"
    helper = "local M = {}\nfunction M.go(id)\n  return require('./util')\nend\nreturn M\n"
    m = Module({"name": "T", "lowLevelAccess": False,
                "trigger": [trigger("start", {"type": "triggerlua", "code": stubs})],
                "lorebook": [{"comment": "helper.lua", "content": helper}]})
    found = [f for f in analyze(m).findings if f.rule == "RA111"]
    assert len(found) == 1 and "4 calls" in found[0].message
    one = Module({"name": "T", "trigger": [trigger("start", {"type": "triggerlua",
                                                            "code": "require('./m')"})]})
    [note] = [f for f in analyze(one).findings if f.rule == "RA111"]
    assert "stubs" not in note.message  # one call is not a bundler's set of stubs


def test_disabled_regex_is_neither_hook_nor_finding() -> None:
    a = analyze(Module({"name": "T", "regex": [
        {"in": "(a+)+", "out": "{{getvar::x}}", "type": "disabled"}]}))
    assert a.hook_names() == [] and a.findings == [] and a.counts["regex_disabled"] == 1
    live = analyze(Module({"name": "T", "regex": [
        {"in": "(a+)+", "out": "{{getvar::x}}", "type": "editdisplay"}]}))
    assert live.hook_names() == ["hook.edit_display"] and "RA201" in ids(
        Module({"name": "T", "regex": [{"in": "(a+)+", "type": "editdisplay"}]}))


def test_cbs_calculation_reads_dollar_variables() -> None:
    text = "{{#if {{? ($mood=1)&($lang=0)}}}}hi{{/if}} {{calc::$turn + 1}} {{? 2*3}}"
    a = analyze(Module({"name": "T", "lorebook": [{"key": "k", "content": text}]}))
    assert sorted(s.key for s in a.state) == ["lang", "mood", "turn"]
    assert a.state_key("mood").reads == ["lorebook[0].content line 1"]
    assert a.state_key("mood").writes == []
    quiet = analyze(Module({"name": "T", "lorebook": [
        {"key": "k", "content": "costs $5 {{? 1+2}} {{getvar::x}}"}]}))
    assert [s.key for s in quiet.state] == ["x"]  # "$5" outside a calculation is text


def test_load_of_an_entry_read_before_is_code_from_the_lorebook() -> None:
    code = ("local src = getLoreBooks(id, 'shared-prelude')\n"
            "load(src[1].content, '@prelude', 't')()\n")
    a = analyze(Module({"name": "T", "trigger": [trigger("start", {"type": "triggerlua",
                                                                  "code": code})]}))
    [f] = [f for f in a.findings if f.rule in ("RA110", "RA113")]
    assert f.rule == "RA113" and "'shared-prelude'" in f.message
    # a field named content of something that is not a lorebook read stays unknown code
    other = "local t = http_result()\nload(t.content)()\n"
    b = analyze(Module({"name": "T", "trigger": [trigger("start", {"type": "triggerlua",
                                                                  "code": other})]}))
    assert [f.rule for f in b.findings if f.rule in ("RA110", "RA113")] == ["RA110"]


def test_concise_report_keeps_ideographic_space(tmp_path: Path) -> None:
    p = tmp_path / "m.json"
    p.write_text(json.dumps({"type": "risuModule", "name": "T", "id": "t",
                             "customModuleToggle": "a\u3000b=A\na\u3000b=B\nc\u202e=C\nc\u202e=D"}),
                 encoding="utf-8")
    out = run_cli("analyze", "-f", "concise", str(p)).stdout
    assert "'a\u3000b'" in out and "\\u3000" not in out
    assert "\u202e" not in out and "'c\\u202e'" in out


# -- one hook table ------------------------------------------------------------------------------

def test_one_hook_table_for_analyser_and_projection() -> None:
    from risutools.analysis.model import (
        HOOK_TAGS,
        HOOK_WORDS,
        HOOKS,
        LISTEN_EDIT_HOOKS,
        REGEX_TYPE_HOOKS,
        TRIGGER_TYPE_HOOKS,
    )
    from risutools.projection import project
    from risutools.resources import load_data_yaml

    vocab = load_data_yaml("capabilities.yaml")["capabilities"]
    assert sorted(HOOKS) == sorted(n for n in vocab if n.startswith("hook."))
    assert sorted(TRIGGER_TYPE_HOOKS) == ["display", "input", "manual", "output", "request",
                                          "start"]
    assert sorted(REGEX_TYPE_HOOKS) == ["editdisplay", "editinput", "editoutput",
                                        "editprocess", "edittrans"]
    assert sorted(LISTEN_EDIT_HOOKS) == ["editDisplay", "editInput", "editOutput",
                                         "editRequest"]
    for ttype, hook in TRIGGER_TYPE_HOOKS.items():
        m = Module({"name": "T", "trigger": [trigger(ttype, {"type": "stop"})]})
        assert analyze(m).hook_names() == [hook]
        doc = project(m)
        assert HOOK_TAGS[hook] in doc["projection"]["tags"]
        assert HOOK_WORDS[hook] in doc["projection"]["summary"]


def test_buttons_written_by_lua_are_a_manual_hook() -> None:
    code = ("listenEdit('editDisplay', function(tid, data)\n"
            "  local html = ''\n"
            "  for i = 1, 3 do html = html .. '{{button::Pick ' .. i .. '::pick' .. i .. '}}' end\n"
            "  return data .. html\nend)\n")
    m = Module({"name": "T", "trigger": [trigger("start", {"type": "triggerlua", "code": code})]})
    a = analyze(m)
    assert a.hook_names() == ["hook.edit_display", "hook.manual"]
    assert a.hooks[1].evidence == ["trigger[0].effect[0] line 3"]
    assert a.button_callbacks == []  # callbacks are the buttons of text RisuAI shows
    # a name built at run time in Lua is a pattern: its computed part is `*` (issue 22)
    assert [(b.name, b.evidence) for b in a.code_buttons] == [
        ("pick*", ["trigger[0].effect[0] line 3"])]
    plain = code.replace("{{button::Pick ' .. i .. '::pick' .. i .. '}}", "<b>' .. i .. '</b>")
    quiet = Module({"name": "T", "trigger": [trigger("start", {"type": "triggerlua",
                                                              "code": plain})]})
    assert analyze(quiet).hook_names() == ["hook.edit_display"]
