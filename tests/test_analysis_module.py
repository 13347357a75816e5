"""analyze(): facts, capabilities, findings, and bad input of every kind."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from harness import ROOT
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from risutools.analysis import analyze
from risutools.analysis.lua import MAX_CALLS
from risutools.formats.model import Anomaly, AssetInfo, Module
from risutools.resources import load_data_yaml

sys.path.insert(0, str(ROOT / "fixtures" / "analysis"))
from make_fixtures import context_cutter

VOCAB = set(load_data_yaml("capabilities.yaml")["capabilities"])


def lua_module(code: str, **extra: Any) -> Module:
    data: dict[str, Any] = {"name": "T", "id": "x", "trigger": [
        {"type": "start", "conditions": [], "effect": [{"type": "triggerlua", "code": code}]}]}
    data.update(extra)
    return Module(data)


def rules(m: Module) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for f in analyze(m).findings:
        out.setdefault(f.rule, []).append(f.evidence)
    return out


def test_context_cutter_facts() -> None:
    a = analyze(Module(context_cutter()))
    assert a.requires_names() == ["hook.edit_request", "chat_state_kv", "global_state_kv"]
    assert a.provides_names() == ["ui.toggles"]
    assert a.hook_names() == ["hook.edit_request"]  # the comment's editDisplay is ignored
    keys = {(s.scope, s.key): s for s in a.state}
    assert keys[("chat", "omitted_count")].reads == ["trigger[0].effect[0] line 45"]
    assert keys[("chat", "omitted_count")].writes == ["trigger[0].effect[0] line 57"]
    assert keys[("chat", "anchor")].writes == ["trigger[0].effect[0] line 60"]
    assert ("global", "toggle_enabled") in keys
    assert [t.key for t in a.toggles] == ["enabled", "tokenizer_profile", "max_context",
                                          "preserve_latest", "trim_percent"]
    assert a.toggles[1].options == ("tiktoken", "claude", "gemini", "deepseek")
    assert a.findings == []
    # hash( in a comment and the local helper named like host APIs are not host calls
    assert "hash" not in [p.name for p in a.privileged]


def test_to_dict_is_deterministic_json() -> None:
    m = Module(context_cutter())
    one = json.dumps(analyze(m).to_dict(), sort_keys=True)
    two = json.dumps(analyze(Module(context_cutter())).to_dict(), sort_keys=True)
    assert one == two


def test_privileged_without_low_level_access_and_over_asking() -> None:
    r = rules(lua_module('local r = LLM(id, {})\nrequest("https://api.example.com/v1")'))
    assert "RA101" in r and "RA103" in r
    a = analyze(lua_module('request("https://api.example.com/v1")', lowLevelAccess=True))
    assert not any(f.rule == "RA101" for f in a.findings)
    assert [f.message for f in a.findings if f.rule == "RA103"] == [
        "makes a network request to api.example.com"]
    assert "network.request" in a.requires_names() and "low_level_access" in a.requires_names()
    assert "RA102" in rules(lua_module('getChatVar(id, "a")', lowLevelAccess=True))
    # a trigger-level lowLevelAccess is replaced by the module's (modules.ts): still refused
    m = lua_module("LLM(id, {})")
    m.data["trigger"][0]["lowLevelAccess"] = True
    assert "RA101" in rules(m)


def test_local_function_shadows_host_api() -> None:
    a = analyze(lua_module("local function request(x) return x end\nrequest(1)"))
    assert a.privileged == [] and "network.request" not in a.requires_names()


def test_dynamic_code_findings() -> None:
    r = rules(lua_module("local f = load(src)\n_ENV['x']()\nrawget(_G, 'y')\nload('return 1')"))
    assert "RA110" in r and "RA112" in r and "RA111" in r
    r = rules(lua_module("load(getLoreBooks(id, 'code')[1].content)()"))
    assert "RA113" in r
    # a load of lorebook text through a local is followed (RA113, tests/test_lorecode.py)
    assert "RA113" in rules(lua_module("local s = getLoreBooks(id, 'c')\nload(s)"))
    a = analyze(lua_module("local d = getLoreBooks(id, 'c')\nload(getChatVar(id, 'k'))"))
    msg = next(f.message for f in a.findings if f.rule == "RA110")
    assert "lorebook" in msg
    assert "script.dynamic_load" in a.requires_names()


def test_regex_scripts_hooks_backtracking_and_html() -> None:
    m = Module({"name": "R", "regex": [
        {"comment": "a", "in": r"(\w+\s?)*$", "out": "<b onclick='x()'>{{getvar::mood}}</b>",
         "type": "editdisplay", "flag": "g<order 1>"},
        {"in": "[unclosed", "out": "<script>1</script>", "type": "editprocess", "flag": "gQ",
         "ableFlag": True},
        {"in": "x", "out": '<a href="javascript:void(0)">{{button::Go::doIt}}</a>',
         "type": "edittrans"},
        {"in": "y", "out": "", "type": "mystery"},
    ]})
    a = analyze(m)
    r = {f.rule: f for f in a.findings}
    assert r["RA201"].evidence == "regex[0].in"
    assert r["RA202"].evidence == "regex[1].in"
    assert r["RA204"].evidence == "regex[1].flag"
    assert r["RA203"].evidence == "regex[3].type"
    assert {"RA302", "RA303"} <= set(r)
    # (regex[1]'s <script> is an editprocess output: it rewrites the request sent to the
    # model, no page shows it, so it is no RA301; stop 62, eighth pass)
    assert "RA301" not in r
    assert a.hook_names() == ["hook.edit_request", "hook.edit_display", "hook.manual",
                              "hook.translation"]
    assert [b.name for b in a.button_callbacks] == ["doIt"]
    assert a.state_key("mood") is not None
    assert a.provides_names() == ["regex.transform"]
    # no finding carries the pattern itself
    for f in a.findings:
        assert r"(\w+\s?)*" not in f.message + f.evidence
        assert "[unclosed" not in f.message + f.evidence


def test_v1_v2_effects_and_conditions() -> None:
    m = Module({"name": "V", "trigger": [
        {"type": "output", "conditions": [{"type": "var", "var": "hp", "value": "0",
                                           "operator": "="}],
         "effect": [{"type": "setvar", "var": "hp", "value": "1", "operator": "+="},
                    {"type": "cutchat", "start": "0", "end": "1"},
                    {"type": "runLLM", "value": "x", "inputVar": "o"},
                    {"type": "v2SetRequestState", "index": 0}]},
        {"type": "manual", "conditions": [], "effect": [{"type": "v2ImgGen"}]},
    ]})
    a = analyze(m)
    req = a.requires_names()
    for cap in ("hook.edit_output", "hook.manual", "chat_state_kv", "chat.write", "llm.call",
                "image.generate", "request.write"):
        assert cap in req
    hp = a.state_key("hp")
    # (``+=`` reads the old value too: triggers.ts makes the new one from it)
    assert hp is not None and hp.reads == ["trigger[0].conditions[0]", "trigger[0].effect[0]"]
    assert hp.writes == ["trigger[0].effect[0]"]
    assert a.conditions[0].var == "hp"
    assert sum(1 for f in a.findings if f.rule == "RA101") == 2


def test_code_only_trigger_type_does_not_imply_hook() -> None:
    a = analyze(lua_module('setChatVar(id, "a", 1)'))
    assert "hook.chat_start" not in a.requires_names()
    a = analyze(lua_module("function onStart(id) end"))
    assert a.hook_names() == ["hook.chat_start"]


def test_legacy_js_mcp_background_assets() -> None:
    m = Module({"name": "J", "cjs": "eval(x); fetch('https://t.example.net/a')",
                "mcp": {"url": "https://mcp.example.com/sse"},
                "backgroundEmbedding": "<style>a{}</style>{{getglobalvar::toggle_x}}",
                "lorebook": [{"content": "{{setvar::seen::1}}"}]},
               assets=[AssetInfo(0, "a", "p", "png", size=10, head=b"<!DOCTYPE html><html>"),
                       AssetInfo(1, "b", "p", "webp", size=20 * 2**20,
                                 head=b"RIFF\0\0\0\0WEBPVP8 ")],
               anomalies=[Anomaly("asset-count-mismatch", "/module/assets", "3 frames, 2 entries"),
                          Anomaly("missing-id", "/module/id", "no id")])
    a = analyze(m)
    r = {f.rule: f for f in a.findings}
    assert {"RA501", "RA502", "RA503", "RA802", "RA401", "RA402", "RA403", "RA900"} <= set(r)
    assert r["RA401"].evidence == "assets[0]" and r["RA402"].evidence == "assets[1]"
    assert "mcp.example.com" in r["RA802"].message
    for cap in ("script.legacy_js", "mcp.server", "global_state_kv", "chat_state_kv",
                "script.dynamic_load"):
        assert cap in a.requires_names()
    assert a.provides_names() == ["lorebook.entries", "ui.background", "asset.bundle"]
    assert a.state_key("seen") is not None
    assert a.state_key("toggle_x", "global") is not None


def test_duplicate_toggles_are_a_finding() -> None:
    a = analyze(Module({"name": "D", "customModuleToggle": "a=One\na=Two\nb=B"}))
    dup = [f for f in a.findings if f.rule == "RA701"]
    assert len(dup) == 1 and dup[0].evidence == "customModuleToggle line 2"
    assert [t.label for t in a.toggles] == ["One", "B"]


def test_all_capabilities_are_vocabulary_names() -> None:
    for m in (Module(context_cutter()), lua_module("LLM(1) request(u) load(x) alertNormal(1)")):
        a = analyze(m)
        assert set(a.requires_names()) | set(a.provides_names()) <= VOCAB


# -- bad input -------------------------------------------------------------------------

def test_no_triggers_and_empty_strings() -> None:
    a = analyze(Module({"name": "", "id": "", "lorebook": [], "regex": [], "trigger": [],
                        "cjs": "", "backgroundEmbedding": "", "customModuleToggle": "",
                        "mcp": {"url": ""}}))
    assert a.requires == [] and a.provides == [] and a.findings == []
    empty = Module({"name": "E", "trigger": [{"type": "", "conditions": [], "effect": [
        {"type": "triggerlua", "code": ""}]}], "regex": [{"in": "", "out": "", "type": ""}],
        "lorebook": [{"content": "", "key": ""}]})
    got = analyze(empty)  # (a regex script with an empty pattern never runs: no RA203)
    assert got.findings == [] and got.counts["regex_empty"] == 1
    assert analyze(Module({})).requires == []


def test_wrong_types_everywhere() -> None:
    m = Module({"name": 5, "trigger": 7, "lorebook": "x", "regex": {"a": 1}, "cjs": ["x"],
                "customModuleToggle": {"k": "v"}, "backgroundEmbedding": 3,
                "lowLevelAccess": "yes", "mcp": "url"})
    a = analyze(m)
    ptrs = sorted(f.pointer for f in a.findings if f.rule == "RA801")
    assert ptrs == ["/backgroundEmbedding", "/cjs", "/customModuleToggle", "/lorebook",
                    "/lowLevelAccess", "/mcp", "/name", "/regex", "/trigger"]
    m = Module({"name": "W", "trigger": [
        5, {"type": 3, "effect": {"type": "x"}, "conditions": "no"},
        {"type": "start", "effect": [None, {"type": None}, {"type": "triggerlua", "code": 12},
                                     {"type": "triggerlua", "code": {"a": 1}},
                                     {"type": "setvar", "var": 5}]}],
        "lorebook": [3, {"content": ["x"]}], "regex": [None, {"in": 5, "out": {"x": 1}}]})
    a = analyze(m)
    evid = {f.pointer for f in a.findings if f.rule == "RA801"}
    assert {"/trigger/0", "/trigger/1/effect", "/trigger/1/conditions", "/trigger/2/effect/0",
            "/trigger/2/effect/1/type", "/lorebook/0", "/lorebook/1/content", "/regex/0",
            "/regex/1/in", "/regex/1/out"} <= evid
    assert sum(1 for f in a.findings if f.rule == "RA602") == 2


def test_binary_junk_in_code() -> None:
    junk = "\x00\x01\ud800\udfff" + bytes(range(256)).decode("latin-1") + '\ngetChatVar(id, "k")'
    a = analyze(lua_module(junk))
    assert any(f.rule == "RA603" for f in a.findings)
    assert a.state_key("k") is not None


def test_unterminated_long_string_is_a_warning() -> None:
    a = analyze(lua_module('setChatVar(id, "a", 1)\nlocal s = [[ open'))
    f = next(f for f in a.findings if f.rule == "RA601")
    assert f.severity == "warning" and f.evidence == "trigger[0].effect[0] line 2"
    assert a.state_key("a") is not None


def test_ten_thousand_lorebook_entries() -> None:
    entries = [{"key": f"k{i}", "content": f"text {{{{getvar::v{i % 7}}}}} more"}
               for i in range(10_000)]
    a = analyze(Module({"name": "L", "lorebook": entries}))
    assert a.counts["lorebook"] == 10_000
    v0 = a.state_key("v0")
    assert v0 is not None and v0.read_count == len(range(0, 10_000, 7))
    assert len(v0.reads) == 20  # evidence capped; the count is exact


def test_five_megabytes_of_lua_on_one_line() -> None:
    code = 'x = getChatVar(id, "k") ' * (5 * 1024 * 1024 // 25)
    a = analyze(lua_module(code))
    k = a.state_key("k")
    # (the reads counted are the calls kept: up to the scanner's bound, RA601 past it)
    assert k is not None and k.read_count == min(5 * 1024 * 1024 // 25, MAX_CALLS)
    assert any(f.rule == "RA601" for f in a.findings)
    assert a.counts["lua_lines"] == 1


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True)
    | st.text(max_size=30) | st.sampled_from(["\ud800x", "a\x00b", "{{getvar::\udfff}}"]),
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=8), kids,
                                                              max_size=4),
    max_leaves=20,
)
_code = st.lists(st.sampled_from([*"abc()[]=-\"'\\{}:.,;\n \x00#~<>/",
    "request", "load", "getChatVar", "listenEdit", "--[[", "]]", "[==[", "_ENV", "function",
    "\ud800", "가"]), max_size=60).map("".join)
_effect = st.fixed_dictionaries({"type": st.sampled_from(
    ["triggerlua", "triggercode", "setvar", "v2SetVar", "runLLM", "x", 3]), "code": _code,
    "var": st.one_of(st.text(max_size=5), st.integers())})
_module = st.fixed_dictionaries({}, optional={
    "name": _json, "id": _json, "cjs": st.one_of(_code, _json),
    "lorebook": st.one_of(_json, st.lists(st.one_of(_json, st.fixed_dictionaries(
        {"content": st.one_of(st.text(max_size=40), _json)})), max_size=3)),
    "regex": st.one_of(_json, st.lists(st.fixed_dictionaries({
        "in": st.one_of(st.text(alphabet="()[]{}*+?|.\\^$a1,-<", max_size=20), _json),
        "out": st.one_of(st.text(max_size=30), _json), "type": _json, "flag": _json}),
        max_size=3)),
    "trigger": st.one_of(_json, st.lists(st.fixed_dictionaries({
        "type": _json, "conditions": st.one_of(_json, st.lists(_json, max_size=2)),
        "effect": st.one_of(_json, st.lists(_effect, max_size=3)),
        "lowLevelAccess": _json}), max_size=3)),
    "customModuleToggle": st.one_of(st.text(alphabet="ab=\n,selct", max_size=40), _json),
    "backgroundEmbedding": st.one_of(st.text(max_size=40), _json),
    "lowLevelAccess": _json, "mcp": _json, "assets": _json,
})


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_module)
def test_random_module_shaped_dicts_never_crash(data: dict[str, Any]) -> None:
    from risutools.canonical import canonical
    from risutools.projection import project

    a = analyze(Module(data))
    json.dumps(a.to_dict())
    for lang in ("en", "ko"):
        canonical(project(Module(data), lang=lang, analysis=a))


def test_cli_analyze_json_and_exit_codes(tmp_path: Path) -> None:
    src = ROOT / "fixtures" / "analysis" / "context-cutter.module.json"
    env = {"PYTHONPATH": str(ROOT)}
    run = subprocess.run([sys.executable, "-m", "risutools", "analyze", str(src), "--json"],
                         capture_output=True, text=True, env=env, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    doc = json.loads(run.stdout)
    assert doc["modules"][0]["analysis"]["hooks"][0]["name"] == "hook.edit_request"
    bad = tmp_path / "bad.json"
    bad.write_text("{nope", encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "risutools", "analyze", str(bad)],
                         capture_output=True, text=True, env=env, cwd=tmp_path)
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert run.stderr.count("\n") == 1
    run = subprocess.run([sys.executable, "-m", "risutools", "analyze", str(src),
                          "--fail-on", "bogus"], capture_output=True, text=True, env=env,
                         cwd=tmp_path)
    assert run.returncode == 2


def test_assigned_entry_point_is_found_with_call_filter() -> None:
    a = analyze(lua_module("onOutput = function(id) setChatVar(id, 'x', 1) end"))
    assert [e.name for e in a.entry_points] == ["onOutput"]
    assert a.hook_names() == ["hook.edit_output"]


def test_text_report_escapes_control_characters() -> None:
    from risutools.report.analysis import render_analysis_text as render_text

    m = Module({"name": "N", "customModuleToggle": "k=La\x1bbel",
                "trigger": [{"type": "start", "effect": [
                    {"type": "triggerlua", "code": 'setChatVar(id, "a\\nb\\27[2J", 1)'}]}]})
    text = render_text("f.json", [(m, analyze(m))])
    assert "\x1b" not in text
    assert "a\\nb\\x1b[2J" in text  # one line, visibly escaped
