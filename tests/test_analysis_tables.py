"""Table-driven: every capability of the vocabulary from each of its listed evidence forms,
and every finding id fired by one module and kept quiet by a near-identical one."""

from __future__ import annotations

from typing import Any

import pytest

from risutools.analysis import analyze
from risutools.formats.model import AssetInfo, Module
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
    "request.write": [effect("v2SetRequestState"), effect("v2SetRequestStateRole"),
                      data(lorebook=[{"key": "k", "content": "@@inject_at main\nx"}])],
    "lorebook.read": [lua("getLoreBooks(id, 'x')"), lua("loadLoreBooks(id)")],
    "lorebook.write": [lua("upsertLocalLoreBook(id, 'a', 'b', {})"), effect("v2ModifyLorebook"),
                       data(lorebook=[{"key": "k", "content": "@@inject_lore Other\nx"}])],
    "character.write": [lua("setDescription(id, 'x')"), lua("setName(id, 'x')"),
                        lua("setCharacterFirstMessage(id, 'x')"), effect("v2SetCharacterDesc"),
                        effect("v2SetPersonaDesc")],
    "llm.call": [lua(f"{n}(id, {{}})") for n in ("LLM", "simpleLLM", "axLLM")]
    + [effect(e) for e in ("runLLM", "v2RunLLM", "sendAIprompt")],
    "network.request": [lua('request("https://a.example")'), lua("request(u)")],
    "image.generate": [lua("generateImage(id, 'p')"), effect("runImgGen"), effect("v2ImgGen")],
    "ui.alert": [lua(f"{n}(id, 'x')") for n in ("alertNormal", "alertError", "alertInput",
                                                 "alertSelect", "alertConfirm")]
    + [effect("showAlert"), effect("v2ShowAlert")],
    # the container's flag: a module's, or the card's for a .charx's module.risum (a
    # trigger's own flag is replaced by it: tests/test_analysis_audit.py)
    "low_level_access": [data(lowLevelAccess=True), Module({"name": "T", "trigger": [
        {"type": "manual", "effect": []}]}, card={"low_level_access": True})],
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


# The findings' firing and quiet modules are data now (risutools/checks/cases/RA*.yaml,
# run by tests/test_checks_cases.py); docs/analysis.md's table is generated from the
# registry (tests/test_checks_registry.py).


# -- the data files as the analyser reads them (risutools.datatables) ----------------


def test_generated_tables_are_up_to_date() -> None:
    """``datatables_snapshot.py`` is what ``python -m risutools.datatables`` writes now (run it
    after editing risutools/data/*.yaml)."""
    from pathlib import Path

    from risutools import datatables

    page = Path(datatables.__file__).with_name("datatables_snapshot.py")
    assert page.read_text(encoding="utf-8") == datatables.render()


@pytest.mark.parametrize("name", ["capabilities.yaml", "lua_api.yaml"])
def test_data_table_is_the_yaml_in_order(name: str) -> None:
    import json

    from risutools.datatables import data_table

    assert json.dumps(data_table(name)) == json.dumps(load_data_yaml(name))


def test_data_table_reads_the_yaml_when_the_file_changed(monkeypatch: pytest.MonkeyPatch,
                                                         tmp_path: Any) -> None:
    """A table made from other bytes than the file's is never used: the file is parsed."""
    from risutools import datatables, datatables_snapshot, resources

    (tmp_path / "lua_api.yaml").write_text("functions: {}\nentry_points: {onStart: x}\n",
                                           encoding="utf-8")
    monkeypatch.setattr(datatables, "data_dir", lambda: tmp_path)
    monkeypatch.setattr(datatables, "load_data_yaml", lambda name: ("parsed", name))
    read = datatables.data_table.__wrapped__  # as read the first time (then kept)
    assert read("lua_api.yaml") == ("parsed", "lua_api.yaml")
    (tmp_path / "lua_api.yaml").unlink()  # unreadable: parsed (and the parser reports it)
    assert read("lua_api.yaml") == ("parsed", "lua_api.yaml")
    monkeypatch.setattr(datatables, "data_dir", lambda: tmp_path.parent / "missing")
    assert read("lua_api.yaml") == ("parsed", "lua_api.yaml")
    # the same bytes as the table was made from: the table
    (tmp_path / "lua_api.yaml").write_bytes(
        (resources.data_dir() / "lua_api.yaml").read_bytes())
    monkeypatch.setattr(datatables, "data_dir", lambda: tmp_path)
    assert read("lua_api.yaml") is datatables_snapshot.DATA["lua_api.yaml"]
    assert datatables.data_table("lua_api.yaml") is datatables.data_table("lua_api.yaml")

