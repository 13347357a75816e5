"""Idioms real RisuAI modules use (issue 11): each with a positive and a negative case of
the project's own (never taken from the real corpus)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from risutools.analysis import analyze
from risutools.analysis.luaapi import lua_api, render_docs
from risutools.formats.model import Module

ROOT = Path(__file__).resolve().parents[1]


def lua_module(code: str, *, lla: bool = False, lorebook: list[dict[str, Any]] | None = None,
               **extra: Any) -> Module:
    data: dict[str, Any] = {"name": "T", "id": "t", "lowLevelAccess": lla,
                            "trigger": [{"type": "start", "conditions": [],
                                         "effect": [{"type": "triggerlua", "code": code}]}],
                            "lorebook": lorebook or []}
    data.update(extra)
    return Module(data)


def ids(m: Module) -> list[str]:
    return [f.rule for f in analyze(m).findings]


# -- A. the privileged API ---------------------------------------------------------------

def test_lua_api_table_in_docs_is_generated() -> None:
    page = (ROOT / "docs" / "analysis.md").read_text(encoding="utf-8")
    assert render_docs(page) == page, "run `python -m risutools.analysis.luaapi`"


def test_privileged_set_is_risuais() -> None:
    api = lua_api().functions
    privileged = {n for n, f in api.items() if f.privileged}
    assert {"loadLoreBooks", "LLM", "axLLM", "simpleLLM", "request", "generateImage",
            "similarity"} <= privileged
    assert not api["hash"].privileged and not api["getLoreBooks"].privileged


def test_load_lore_books_is_privileged() -> None:
    a = analyze(lua_module("local b = loadLoreBooks(id, 100)"))
    assert [p.name for p in a.privileged] == ["loadLoreBooks"]
    assert "RA101" in [f.rule for f in a.findings]
    quiet = analyze(lua_module("local b = getLoreBooks(id, 'x')"))
    assert quiet.privileged == []


# -- C. Lua kept in lorebook entries -----------------------------------------------------

HELPER = ("--- a helper kept as lore\nlocal M = {}\nfunction M.ask(id)\n"
          "  return axLLM(id, {})\nend\nsetChatVar(id, 'helper_ran', '1')\nreturn M\n")
LOADER = "local src = getLoreBooks(id, 'helper')\nlocal f = load(src[1].content)\nf()"


def test_lorebook_code_is_analysed_as_code() -> None:
    a = analyze(lua_module(LOADER, lla=True, lorebook=[
        {"comment": "world", "content": "Hanyang, 1600.\nThe walls are old."},
        {"comment": "helper", "content": HELPER}]))
    assert [p.name for p in a.privileged] == ["axLLM"]
    assert a.privileged[0].evidence == ["lorebook[1] line 4"]
    assert a.state_key("helper_ran") is not None
    assert a.counts["lorebook_code"] == 1
    got = {f.rule: f for f in a.findings}
    assert "RA114" in got and "lorebook[1]" in got["RA114"].message
    assert "RA102" not in got  # lowLevelAccess is used, by the lorebook code
    assert got["RA113"].severity == "info"


def test_lorebook_code_with_only_trigger_lla_is_refused() -> None:
    """RisuAI replaces a module trigger's own lowLevelAccess with the module's
    (modules.ts getModuleTriggers): the trigger's flag grants nothing."""
    m = lua_module(LOADER, lorebook=[{"comment": "helper", "content": HELPER}])
    m.data["trigger"][0]["lowLevelAccess"] = True
    assert "RA101" in ids(m)
    m.data["lowLevelAccess"] = True
    assert "RA101" not in ids(m)


def test_prose_lorebook_is_not_code() -> None:
    """Prose is not code unless the module loads it by its exact name (then it is code by
    construction, whatever it reads like: see test_an_entry_loaded_by_its_exact_name...)."""
    loader = LOADER.replace("'helper'", "'help' .. part")
    a = analyze(lua_module(loader, lla=True, lorebook=[
        {"comment": "helper", "content": "local lore: the end\nfunction hall\nreturn home"}]))
    assert "RA114" not in [f.rule for f in a.findings]
    assert a.privileged == []


def test_an_entry_loaded_by_its_exact_name_is_code_whatever_it_reads_like() -> None:
    one_line = 'return function(id) request("https://lore.example/a") end'
    a = analyze(lua_module(LOADER, lla=True, lorebook=[
        {"comment": "helper", "content": one_line},
        {"comment": "other", "content": one_line}]))
    assert a.lorebook_code == [0]
    assert [p.name for p in a.privileged] == ["request"]
    assert any(f.rule == "RA103" and "lore.example" in f.message for f in a.findings)
    assert "RA102" not in [f.rule for f in a.findings]


def test_lua_entry_without_loader_needs_a_lua_name() -> None:
    entry = {"comment": "helper", "content": HELPER}
    assert "RA114" not in ids(Module({"name": "T", "lorebook": [entry]}))
    named = {"comment": "helper.lua", "content": HELPER}
    # issue 22: a *.lua entry that nothing loads is listed as unreached, never run
    a = analyze(Module({"name": "T", "lorebook": [named]}))
    assert "RA114" not in [f.rule for f in a.findings] and a.lorebook_code == []
    assert [f.name for f in a.unreached] == ["lorebook[0]"]
    loaded = analyze(lua_module("local f = load(getLoreBooks(id, 'helper.lua')[1].content)",
                                lla=True, lorebook=[named]))
    assert loaded.lorebook_code == [0] and "RA114" in [f.rule for f in loaded.findings]


def test_require_stubs_are_one_note() -> None:
    code = "\n".join(f"local m{i} = require('./m{i}')" for i in range(6))
    found = [f for f in analyze(lua_module(code)).findings if f.rule == "RA111"]
    assert len(found) == 1 and "6 calls" in found[0].message


# -- F. documents a curator can use ------------------------------------------------------

def test_korean_particles_follow_the_final_consonant() -> None:
    from risutools.projection.naming import fix_particles
    assert fix_particles("트리거 1은(는) x") == "트리거 1은 x"
    assert fix_particles("트리거 2은(는) x") == "트리거 2는 x"
    assert fix_particles("트리거 10은(는) x") == "트리거 10은 x"
    assert fix_particles("모듈이(가) 토글을(를)") == "모듈이 토글을"
    assert fix_particles("카드이(가) 보드을(를)") == "카드가 보드를"
    assert fix_particles("#은(는)") == "#은(는)"  # unknown: the fallback stays


def test_slug_romanizes_and_drops_emoji_and_version() -> None:
    from risutools.projection.naming import slugify, split_version
    assert slugify("🔦보드 - 3.4.0") == "bodeu"
    assert split_version("🔦보드 - 3.4.0") == ("🔦보드", "3.4.0")
    assert split_version("생성기(v0.3)")[1] == "0.3.0"
    assert split_version("Plain name") == ("Plain name", None)
    assert slugify("Mood Tracker v2") == "mood-tracker"


def test_version_goes_to_component_version() -> None:
    from risutools.projection import project
    doc = project(Module({"name": "🔦보드 3.2.1", "id": "x"}))
    assert doc["component_version"] == "3.2.1"
    assert doc["component_id"].endswith(".bodeu")
    assert project(Module({"name": "Board", "id": "x"}))["component_version"] == "1.0.0"


# -- B. hooks in every form RisuAI reaches; pcall ----------------------------------------

def hooks_of(code: str) -> dict[str, list[str]]:
    a = analyze(lua_module(code))
    return {e.name: e.evidence for e in a.entry_points}


def test_entry_points_in_every_form() -> None:
    assert hooks_of("function onStart(id) end") == {"onStart": ["trigger[0].effect[0] line 1"]}
    assert "onStart" in hooks_of("onStart = function(id) end")
    assert "onOutput" in hooks_of("onOutput = async(function(id) end)")
    assert "onInput" in hooks_of("local function h(id) end\nonInput = h")
    assert "onButtonClick" in hooks_of("_G.onButtonClick = async(function(id, data) end)")
    a = analyze(lua_module("onButtonClick = async(function(id, data) end)"))
    assert "hook.manual" in a.hook_names()


def test_entry_points_that_risuai_does_not_reach() -> None:
    assert hooks_of("local onStart = function(id) end") == {}
    assert hooks_of("local M = {}\nM.onOutput = function(id) end") == {}
    assert hooks_of("-- onStart = function() end\nlocal s = 'onOutput = x'") == {}
    assert hooks_of("if onStart == nil then end") == {}


def test_pcall_counts_as_a_call_of_its_function() -> None:
    a = analyze(lua_module("local ok, v = pcall(getChatVar, id, 'score')\n"
                           "pcall(setState, id, 'board', {})\nlocal ok2, f = pcall(load, src)"))
    assert a.state_key("score") is not None and a.state_key("score").reads
    assert a.state_key("board") is not None and a.state_key("board").writes
    assert [d.name for d in a.dynamic_code] == ["load"]
    assert "RA110" in [f.rule for f in a.findings]
    b = analyze(lua_module("pcall(LLM, id, {})", lla=False))
    assert [p.name for p in b.privileged] == ["LLM"] and "RA101" in [f.rule for f in b.findings]


def test_pcall_of_a_field_or_a_closure_is_not_a_host_call() -> None:
    a = analyze(lua_module("pcall(obj.getChatVar, id, 'k')\npcall(function() end)"))
    assert a.state == [] and a.host_apis == []


def test_risu_btn_is_a_button_and_reaches_the_modules_own_handler() -> None:
    html = '<div><button risu-btn="roll-dice">Roll</button><a risu-btn="gen/{{chat_index}}">'
    for field in ({"regex": [{"type": "editdisplay", "in": "x", "out": html}]},
                  {"backgroundEmbedding": html},
                  {"lorebook": [{"comment": "ui", "content": html}]}):
        a = analyze(Module({"name": "T", **field}))
        assert "hook.manual" in a.hook_names(), field
        assert a.entry_points == []  # the handler is another module's: not an entry point here
        assert [b.name for b in a.button_callbacks] == ["gen/*", "roll-dice"]
        own = analyze(Module({"name": "T", **field, "trigger": [
            {"type": "manual", "conditions": [], "effect": [
                {"type": "triggerlua", "code": "function onButtonClick(id, v) end"}]}]}))
        [entry] = own.entry_points
        assert entry.name == "onButtonClick" and entry.count == 3  # the def and two buttons


def test_no_risu_btn_no_button() -> None:
    a = analyze(Module({"name": "T", "backgroundEmbedding": "<div class='risu-btn'>x</div>"}))
    assert a.entry_points == [] and "hook.manual" not in a.hook_names()


# -- D. CBS everywhere; presets; cards ---------------------------------------------------

PRESET: dict[str, Any] = {
    "name": "My Preset", "mainPrompt": "Write {{getvar::style}}.", "jailbreak": "",
    "promptTemplate": [
        {"type": "plain", "role": "system", "text": "{{#when::toggle::nsfw}}x{{/when}}"},
        {"type": "plain", "role": "system", "text": "{{getglobalvar::toggle_tone}}"},
        {"type": "chat", "rangeStart": 0, "rangeEnd": "end"},
        {"type": "plain", "role": "user", "text": "{{setvar::turn::1}}"}],
    "customPromptTemplateToggle": "nsfw=NSFW\ntone=Tone=select=Soft,Hard",
    "regex": [{"comment": "r", "in": "a", "out": "{{getvar::style}}", "type": "editoutput",
               "flag": "g"}],
}


def test_preset_prompt_items_toggles_and_regex() -> None:
    a = analyze(Module(dict(PRESET), component_type="preset"))
    assert [t.key for t in a.toggles] == ["nsfw", "tone"]
    assert a.state_key("toggle_nsfw", "global") is not None
    assert a.state_key("toggle_tone", "global") is not None
    assert a.state_key("turn").writes == ["promptTemplate[3].text line 1"]
    assert sorted(a.state_key("style").reads) == ["mainPrompt line 1", "regex[0].out line 1"]
    assert "hook.edit_output" in a.hook_names() and "ui.toggles" in a.provides_names()
    assert "RA704" not in [f.rule for f in a.findings]  # every toggle read is declared


def test_preset_toggle_field_is_not_read_for_modules() -> None:
    a = analyze(Module({"name": "M", "customPromptTemplateToggle": "x=X"}))
    assert a.toggles == []


def test_json_preset_and_card_exports_are_read(tmp_path: Path) -> None:
    import json

    from risutools.formats import read_path
    p = tmp_path / "preset.json"
    p.write_text(json.dumps(PRESET), encoding="utf-8")
    [m] = read_path(p)
    assert m.component_type == "preset" and m.source is not None
    assert m.source.format == "json-preset"
    card = {"spec": "chara_card_v3", "spec_version": "3.0", "data": {
        "name": "Hero", "first_mes": "Hi {{user}}! {{setvar::met::1}}",
        "alternate_greetings": ["Yo {{getvar::met}}"],
        "extensions": {"risuai": {"lowLevelAccess": True, "triggerscript": [
            {"type": "start", "conditions": [], "effect": [
                {"type": "triggerlua", "code": "function onStart(id) LLM(id, {}) end"}]}],
            "customScripts": [{"in": "a", "out": "b", "type": "disabled"}]}},
        "character_book": {"entries": [{"keys": ["k"], "content": "lore", "name": "n"}]}}}
    p = tmp_path / "card.json"
    p.write_text(json.dumps(card), encoding="utf-8")
    [c] = read_path(p)
    assert c.component_type == "character" and c.name == "Hero"
    a = analyze(c)
    assert "hook.chat_start" in a.hook_names() and [x.name for x in a.privileged] == ["LLM"]
    # issue 22: a greeting's setvar runs in group chats only (a group-chat write)
    assert a.state_key("met").writes == []
    assert [(f.name, f.evidence) for f in a.group_chat_writes] == [
        ("met", ["card.first_mes line 1"])]
    assert a.state_key("met").reads == ["card.alternate_greetings[0] line 1"]
    assert a.counts["lorebook"] == 1 and a.counts["regex_disabled"] == 1
    assert "RA203" not in [f.rule for f in a.findings]


def test_card_view_without_active_content() -> None:
    from risutools.formats.card import card_module_data, has_active_content
    quiet = card_module_data({"spec": "chara_card_v3",
                              "data": {"name": "A", "first_mes": "Hello."}})
    assert not has_active_content(quiet)
    loud = card_module_data({"spec": "chara_card_v3", "data": {
        "name": "A", "extensions": {"risuai": {"triggerscript": [{"type": "start"}]}}}})
    assert has_active_content(loud)


def test_regex_disabled_is_documented_and_unknown_is_not() -> None:
    assert "RA203" not in ids(Module({"name": "T", "regex": [{"in": "a", "type": "disabled"}]}))
    assert "RA203" in ids(Module({"name": "T", "regex": [{"in": "a", "type": "sometimes"}]}))


def test_webp_under_an_image_name_is_normal() -> None:
    from risutools.formats.model import AssetInfo
    webp = b"RIFF\x00\x00\x00\x00WEBPVP8 "
    ok = Module({"name": "T", "assets": [["a", "", "png"]]},
                assets=[AssetInfo(0, "a", "", "png", size=20, head=webp)])
    assert "RA401" not in ids(ok)
    html = Module({"name": "T", "assets": [["a", "", "png"]]},
                  assets=[AssetInfo(0, "a", "", "png", size=20, head=b"<html><script>")])
    assert "RA401" in ids(html)


def test_same_module_as_json_and_risum_is_one_component(tmp_path: Path) -> None:
    import json

    from risutools.formats import read_path
    from risutools.formats.risum import write_risum
    from risutools.projection import project
    module = {"name": "Counter", "id": "5f0c-counter", "description": "counts turns",
              "lorebook": [], "regex": [], "trigger": [{"type": "start", "conditions": [],
                                                        "effect": [{"type": "setvar",
                                                                    "var": "n", "value": "1",
                                                                    "operator": "+="}]}]}
    (tmp_path / "c.json").write_text(json.dumps({**module, "type": "risuModule"}), "utf-8")
    (tmp_path / "c.risum").write_bytes(write_risum(module, []))
    [a] = read_path(tmp_path / "c.json")
    [b] = read_path(tmp_path / "c.risum")
    da, db = project(a), project(b)
    assert da["component_id"] == db["component_id"]
    assert da["provenance"]["source_refs"][0]["sha256"] != \
        db["provenance"]["source_refs"][0]["sha256"]
    other = project(Module({**module, "description": "counts turns twice"}))
    assert other["component_id"] != da["component_id"]


def test_document_says_lorebook_code_runs_en_and_ko() -> None:
    from risutools.projection import project
    m = lua_module(LOADER, lla=True, lorebook=[{"comment": "helper", "content": HELPER}])
    en = project(m)["payload"]["activation_rules"]
    assert any("runs Lua kept in its lorebook" in r and "lorebook[0]" in r for r in en)
    assert any(r.startswith("Static analysis finding RA114") for r in en)
    ko = project(m, lang="ko")["payload"]["activation_rules"]
    assert any("로어북 항목 1개(lorebook[0])에 담긴 Lua 코드" in r for r in ko)
    for rules in (en, ko):
        assert not any("axLLM(" in r or "load(" in r for r in rules)  # never code
    plain = project(lua_module("setChatVar(id, 'a', '1')"))["payload"]["activation_rules"]
    assert not any("lorebook" in r for r in plain)


def test_cbs_in_v1_effect_values() -> None:
    m = Module({"name": "T", "trigger": [{"type": "manual", "conditions": [], "effect": [
        {"type": "impersonate", "role": "char", "value": "{{getvar::mood}} says hi"},
        {"type": "modifychat", "index": "{{lastmessageid}}", "value": "{{setvar::seen::1}}"},
        {"type": "setvar", "var": "n", "operator": "=", "value": "{{getglobalvar::toggle_x}}"}]}]})
    a = analyze(m)
    assert a.state_key("mood").reads == ["trigger[0].effect[0].value line 1"]
    assert a.state_key("seen").writes == ["trigger[0].effect[1].value line 1"]
    assert a.state_key("toggle_x", "global") is not None
    quiet = analyze(Module({"name": "T", "trigger": [{"type": "manual", "conditions": [],
                                                      "effect": [{"type": "impersonate",
                                                                  "value": "plain"}]}]}))
    assert quiet.state == []


def test_low_level_only_effects_are_privileged() -> None:
    m = Module({"name": "T", "trigger": [{"type": "manual", "conditions": [], "effect": [
        {"type": "showAlert", "alertType": "normal", "value": "hi"}]}]})
    assert "RA101" in ids(m)
    m.data["trigger"][0]["lowLevelAccess"] = True  # replaced by the module's: still refused
    assert "RA101" in ids(m) and "RA102" not in ids(m)
    m.data["lowLevelAccess"] = True
    assert "RA101" not in ids(m) and "RA102" not in ids(m)


def test_no_turn_off_advice_when_code_is_loaded_from_a_lorebook() -> None:
    code = "local s = getLoreBooks(id, 'prelude')\nload(s[1].content)()"
    found = {f.rule: f for f in analyze(lua_module(code, lla=True)).findings}
    assert "turn lowLevelAccess off" not in found["RA102"].message
    found = {f.rule: f for f in analyze(lua_module("setChatVar(id, 'a', '1')",
                                                   lla=True)).findings}
    assert "turn lowLevelAccess off" in found["RA102"].message


def test_slug_prefers_the_latin_name_and_drops_copies_and_hanja() -> None:
    from risutools.projection.naming import slugify
    assert slugify("기분 추적기 (Mood Tracker) v2.1") == "mood-tracker"
    assert slugify("도괴 (倒壞) 한양 (1)") == "dogoe-hanyang"
    assert slugify("상태창 fix2") == "sangtaechang-fix2"  # too little Latin to stand alone


def test_code_loaded_from_another_modules_lorebook_is_named() -> None:
    code = "local src = getLoreBooks(id, 'shared-prelude')\nload(src[1].content)()"
    own = [{"comment": "helper", "content": HELPER}]
    f = {x.rule: x for x in analyze(lua_module(code, lla=True, lorebook=own)).findings}
    assert "'shared-prelude'" in f["RA113"].message and f["RA113"].severity == "warning"
    mine = [{"comment": "shared-prelude", "content": HELPER}]
    f = {x.rule: x for x in analyze(lua_module(code, lla=True, lorebook=mine)).findings}
    assert "another module" not in f["RA113"].message and f["RA113"].severity == "info"


def test_state_key_through_a_constant() -> None:
    a = analyze(lua_module("local K = 'hp'\nlocal ok, v = pcall(getChatVar, id, K)"))
    assert a.state_key("hp") is not None


def _charx(tmp: Path, card: dict[str, Any]) -> Path:
    import json
    import zipfile
    p = tmp / "c.charx"
    with zipfile.ZipFile(p, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("card.json", json.dumps(card))
    return p


def test_charx_card_with_triggers_and_no_module_is_a_component(tmp_path: Path) -> None:
    from risutools.formats import read_path
    card = {"spec": "chara_card_v3", "spec_version": "3.0", "data": {
        "name": "Train", "first_mes": "All aboard.",
        "extensions": {"risuai": {"lowLevelAccess": True, "triggerscript": [
            {"type": "start", "conditions": [], "effect": [
                {"type": "triggerlua", "code": "local s = getLoreBooks(id, 'boot.lua')\n"
                                               "load(s[1].content)()"}]}]}},
        "character_book": {"entries": [{"name": "boot.lua", "keys": [],
                                        "content": HELPER}]}}}
    [m] = read_path(_charx(tmp_path, card))
    assert m.component_type == "character" and m.source is not None
    assert m.source.member == "card.json"
    a = analyze(m)
    assert a.lorebook_code == [0] and [p.name for p in a.privileged] == ["axLLM"]
    plain = {"spec": "chara_card_v3", "data": {"name": "Quiet", "first_mes": "Hello."}}
    assert read_path(_charx(tmp_path, plain)) == []
