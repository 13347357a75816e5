"""Table-driven: every capability of the vocabulary from each of its listed evidence forms,
and every finding id fired by one module and kept quiet by a near-identical one."""

from __future__ import annotations

from typing import Any

import pytest

from risutools.analysis import analyze
from risutools.formats.model import Anomaly, AssetInfo, Module
from risutools.resources import load_data_yaml

VOCAB: dict[str, dict[str, Any]] = load_data_yaml("capabilities.yaml")["capabilities"]


def lua(code: str, ttype: str = "start", **extra: Any) -> Module:
    data: dict[str, Any] = {"name": "T", "trigger": [
        {"type": ttype, "conditions": [], "effect": [{"type": "triggerlua", "code": code}]}]}
    data.update(extra)
    return Module(data)


def effect(etype: str, **fields: Any) -> Module:
    return Module({"name": "E", "trigger": [
        {"type": "manual", "conditions": [], "effect": [{"type": etype, **fields}]}]})


def trig(ttype: str) -> Module:
    return Module({"name": "T", "trigger": [
        {"type": ttype, "conditions": [], "effect": [{"type": "stop"}]}]})


def rx(rtype: str) -> Module:
    return Module({"name": "R", "regex": [{"in": "x", "out": "y", "type": rtype}]})


def data(**fields: Any) -> Module:
    return Module({"name": "D", **fields})


# capability -> the evidence forms static-analysis.md lists for it
CASES: dict[str, list[Module]] = {
    "hook.edit_request": [lua('listenEdit("editRequest", f)'), trig("request"),
                          rx("editprocess")],
    "hook.edit_display": [lua('listenEdit("editDisplay", f)'), trig("display"),
                          rx("editdisplay")],
    "hook.edit_input": [lua('listenEdit("editInput", f)'), trig("input"), rx("editinput"),
                        lua("function onInput(id) end")],
    "hook.edit_output": [lua('listenEdit("editOutput", f)'), trig("output"), rx("editoutput"),
                         lua("onOutput = function(id) end")],
    "hook.chat_start": [trig("start"), lua("function onStart(id) end")],
    "hook.manual": [trig("manual"), data(lorebook=[{"content": "{{button::Go::fire}}"}]),
                    data(backgroundEmbedding='<button risu-trigger="fire">x</button>')],
    "hook.translation": [rx("edittrans")],
    "chat_state_kv": [lua('getChatVar(id, "a")'), lua('setChatVar(id, "a", 1)'),
                      lua('getState(id, "a")'), lua('setState(id, "a", 1)'),
                      data(lorebook=[{"content": "{{getvar::a}}"}]),
                      data(lorebook=[{"content": "{{setvar::a::1}}"}]),
                      data(lorebook=[{"content": "{{addvar::a::1}}"}]),
                      effect("setvar", var="a", value="1"), effect("v2SetVar", var="a")],
    "global_state_kv": [lua('getGlobalVar(id, "toggle_x")'),
                        data(backgroundEmbedding="{{getglobalvar::toggle_x}}")],
    "chat.read": [lua("getChat(id, 1)"), lua("getFullChat(id)"), lua("getChatLength(id)"),
                  lua("getCharacterLastMessage(id)"), lua("getUserLastMessage(id)"),
                  effect("v2GetLastMessage")],
    "chat.write": [lua(f"{n}(id)") for n in ("setChat", "setFullChat", "cutChat", "removeChat",
                                              "addChat", "insertChat", "setChatRole")]
    + [effect(e) for e in ("cutchat", "modifychat", "v2CutChat", "v2ModifyChat",
                           "v2UpdateChatAt")],
    "request.write": [effect("v2SetRequestState"), effect("v2SetRequestStateRole")],
    "lorebook.read": [lua("getLoreBooks(id, 'x')"), lua("loadLoreBooks(id)")],
    "lorebook.write": [lua("upsertLocalLoreBook(id, 'a', 'b', {})"), effect("v2ModifyLorebook")],
    "character.write": [lua("setDescription(id, 'x')"), lua("setName(id, 'x')"),
                        lua("setCharacterFirstMessage(id, 'x')"), effect("v2SetCharacterDesc"),
                        effect("v2SetPersonaDesc")],
    "llm.call": [lua(f"{n}(id, {{}})") for n in ("LLM", "simpleLLM", "axLLM")]
    + [effect(e) for e in ("runLLM", "runAxLLM", "v2RunLLM", "sendAIprompt")],
    "network.request": [lua('request("https://a.example")'), lua("request(u)")],
    "image.generate": [lua("generateImage(id, 'p')"), effect("runImgGen"), effect("v2ImgGen")],
    "ui.alert": [lua(f"{n}(id, 'x')") for n in ("alertNormal", "alertError", "alertInput",
                                                 "alertSelect", "alertConfirm")]
    + [effect("showAlert"), effect("v2ShowAlert")],
    "low_level_access": [data(lowLevelAccess=True), Module({"name": "T", "trigger": [
        {"type": "manual", "effect": [], "lowLevelAccess": True}]})],
    "script.dynamic_load": [lua("load(s)"), lua("loadstring(s)"), lua("require('m')"),
                            lua("dofile('f')")],
    "script.legacy_js": [data(cjs="console.log(1)")],
    "mcp.server": [data(mcp={"url": "https://mcp.example/sse"})],
    "lorebook.entries": [data(lorebook=[{"key": "k", "content": "c"}])],
    "regex.transform": [rx("editoutput")],
    "ui.toggles": [data(customModuleToggle="a=A")],
    "ui.background": [data(backgroundEmbedding="<style>p{}</style>")],
    "asset.bundle": [Module({"name": "A", "assets": [["a", "", "png"]]},
                            assets=[AssetInfo(0, "a", "", "png", size=8,
                                              head=b"\x89PNG\r\n\x1a\n")])],
}


def test_table_covers_every_inferable_capability() -> None:
    inferable = {n for n, e in VOCAB.items() if not e.get("semantic")}
    assert set(CASES) == inferable


@pytest.mark.parametrize(("cap", "idx"), [(c, i) for c, ms in CASES.items()
                                          for i in range(len(ms))])
def test_capability_from_each_evidence_form(cap: str, idx: int) -> None:
    a = analyze(CASES[cap][idx])
    got = a.provides_names() if VOCAB[cap]["kind"] == "provides" else a.requires_names()
    assert cap in got
    ev = next(c for c in (a.requires + a.provides) if c.name == cap).evidence
    assert ev and all(isinstance(e, str) and "(" not in e for e in ev)  # locations only


def test_names_in_comments_strings_or_on_objects_set_nothing() -> None:
    quiet = lua('-- LLM(x)\nlocal s = "request(u)"\nobj:load(s)\nM.setChat(id)')
    assert analyze(quiet).requires_names() == []


# rule -> (a module that fires it, a near-identical module that does not)
FINDINGS: dict[str, tuple[Module, Module]] = {
    "RA101": (lua("LLM(id, {})"), lua("LLM(id, {})", lowLevelAccess=True)),
    "RA102": (lua("getChat(id)", lowLevelAccess=True), lua("LLM(id)", lowLevelAccess=True)),
    "RA103": (lua('request("https://a.example/x")', lowLevelAccess=True),
              lua('-- request("https://a.example/x")', lowLevelAccess=True)),
    "RA104": (lua("request(base .. path)", lowLevelAccess=True),
              lua('local U = "https://a.example"\nrequest(U)', lowLevelAccess=True)),
    "RA105": (lua("listenEdit(kind, f)"), lua('listenEdit("editDisplay", f)')),
    "RA110": (lua("load(src)()"), lua("load('return 1')")),
    "RA111": (lua("load('return 1')"), lua("x = 'load(1)'")),
    "RA112": (lua("_ENV[name]()"), lua("_ENV.print(1)")),
    "RA113": (lua("load(getLoreBooks(id, 'c')[1].content)()"), lua("load(src)()")),
    "RA201": (data(regex=[{"in": "(a+)+$", "type": "editoutput"}]),
              data(regex=[{"in": "(a+b)*$", "type": "editoutput"}])),
    "RA202": (data(regex=[{"in": "[abc", "type": "editoutput"}]),
              data(regex=[{"in": "[abc]", "type": "editoutput"}])),
    "RA203": (data(regex=[{"in": "a", "type": "mystery"}]),
              data(regex=[{"in": "a", "type": "editdisplay"}])),
    "RA204": (data(regex=[{"in": "a", "type": "editoutput", "flag": "gQ"}]),
              data(regex=[{"in": "a", "type": "editoutput", "flag": "g<order 1>"}])),
    "RA301": (data(backgroundEmbedding="<script>x</script>"),
              data(backgroundEmbedding="<p>script</p>")),
    "RA302": (data(regex=[{"in": "a", "out": "<b onclick='x'>a</b>", "type": "editdisplay"}]),
              data(regex=[{"in": "a", "out": "<b class='onclick'>a</b>",
                           "type": "editdisplay"}])),
    "RA303": (data(backgroundEmbedding='<a href="javascript:x">a</a>'),
              data(backgroundEmbedding='<a href="https://x.example">javascript</a>')),
    "RA401": (Module({"name": "A"}, assets=[AssetInfo(0, "a", "", "png", size=20,
                                                      head=b"<!DOCTYPE html><html>")]),
              Module({"name": "A"}, assets=[AssetInfo(0, "a", "", "png", size=8,
                                                      head=b"\x89PNG\r\n\x1a\n")])),
    "RA402": (Module({"name": "A"}, assets=[AssetInfo(0, "a", "", "png", size=17 * 2**20,
                                                      head=b"\x89PNG\r\n\x1a\n")]),
              Module({"name": "A"}, assets=[AssetInfo(0, "a", "", "png", size=15 * 2**20,
                                                      head=b"\x89PNG\r\n\x1a\n")])),
    "RA403": (Module({"name": "A"}, anomalies=[Anomaly("asset-count-mismatch", "/assets",
                                                       "2 frames, 1 entry")]),
              Module({"name": "A"}, anomalies=[Anomaly("missing-id", "/id", "no id")])),
    "RA501": (data(cjs="x"), data(cjs="   ")),
    "RA502": (data(cjs="eval(a)"), data(cjs="// eval(a)\nconst s = 'eval(a)'")),
    "RA503": (data(cjs="fetch(u)"), data(cjs="/* fetch(u) */")),
    "RA601": (lua("x = [[ open"), lua("x = [[ closed ]]")),
    "RA602": (lua(12), lua("")),  # type: ignore[arg-type]
    "RA603": (lua("x = 1\x00"), lua("x = 1")),
    "RA701": (data(customModuleToggle="a=A\na=B"), data(customModuleToggle="a=A\nb=B")),
    "RA702": (data(customModuleToggle="a=A\njunk"), data(customModuleToggle="a=A\n")),
    "RA703": (data(customModuleToggle="a=A=weird"), data(customModuleToggle="a=A=text")),
    "RA704": (lua('getGlobalVar(id, "toggle_b")', customModuleToggle="a=A"),
              lua('getGlobalVar(id, "toggle_a")', customModuleToggle="a=A")),
    "RA801": (data(lorebook={"a": 1}), data(lorebook=[])),
    "RA802": (data(mcp={"url": "https://m.example"}), data(mcp={"url": ""})),
    "RA900": (Module({"name": "A"}, anomalies=[Anomaly("missing-id", "/id", "no id")]),
              Module({"name": "A"})),
}


def test_findings_table_matches_the_documented_list() -> None:
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[1] / "docs" / "analysis.md").read_text("utf-8")
    documented = {ln.split("|")[1].strip() for ln in doc.splitlines()
                  if ln.startswith("| RA")}
    assert documented == set(FINDINGS)


@pytest.mark.parametrize("rule", sorted(FINDINGS))
def test_finding_fires_and_stays_quiet(rule: str) -> None:
    fire, quiet = FINDINGS[rule]
    fired = [f for f in analyze(fire).findings if f.rule == rule]
    assert fired, rule
    assert all(f.evidence for f in fired)
    assert not [f for f in analyze(quiet).findings if f.rule == rule], rule
