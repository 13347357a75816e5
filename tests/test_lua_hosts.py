"""Host calls as RisuAI runs them (issue 11): privileged calls inside ``listenEdit`` callbacks
(RisuAI runs edit listeners without lowLevelAccess), ``pcall(f, ...)`` as a call of ``f``,
entry points set through ``async``, a local or ``_G``; the privileged table against RisuAI's
own list."""

from __future__ import annotations

import pytest

from risutools.analysis import analyze
from risutools.analysis.lua import scan_lua
from risutools.analysis.luaapi import lua_api
from risutools.analysis.walk_lua import KEEP_CALLS
from risutools.formats.model import Module


def _analyze(code: str, lla: bool = False) -> tuple[set[str], list[tuple[str, str]]]:
    a = analyze(Module({"name": "T", "lowLevelAccess": lla, "trigger": [
        {"type": "start", "conditions": [], "effect": [{"type": "triggerlua", "code": code}]}]}))
    return {p.name for p in a.privileged}, [(f.rule, f.message) for f in a.findings]


LISTENER = """listenEdit("editDisplay", function(id, data)
  local r = LLM(id, {})
  local ok, img = pcall(generateImage, id, "a cat")
  return data
end)
"""


def test_privileged_calls_in_a_listener_are_privileged_and_refused_even_with_lla() -> None:
    privileged, findings = _analyze(LISTENER, lla=True)
    assert privileged == {"LLM", "generateImage"}
    ra101 = [m for r, m in findings if r == "RA101"]
    assert len(ra101) == 2 and all("inside a listenEdit callback" in m for m in ra101)


def test_the_same_calls_outside_a_listener_are_allowed_with_lla() -> None:
    code = ("listenEdit('editDisplay', function(id, data) return data end)\n"
            "onOutput = async(function(id)\n  LLM(id, {})\n  pcall(generateImage, id, 'x')\nend)")
    privileged, findings = _analyze(code, lla=True)
    assert privileged == {"LLM", "generateImage"}
    assert not [r for r, _ in findings if r in ("RA101", "RA102")]


def test_the_listener_ends_at_its_closing_parenthesis() -> None:
    code = "listenEdit('editInput', function(id, d) if d then f({1}) end return d end) LLM(id)"
    calls = {c.name: c.in_listener for c in scan_lua(code, KEEP_CALLS).calls}
    assert calls == {"listenEdit": False, "LLM": False}
    inner = "listenEdit('editInput', function(id, d) local t = {x = LLM(id)} return d end)"
    assert [c.in_listener for c in scan_lua(inner, KEEP_CALLS).calls] == [False, True]


@pytest.mark.parametrize(("code", "key"), [
    ("local ok, v = pcall(getChatVar, id, 'mood')", "mood"),
    ("xpcall(setChatVar, handler, id, 'mood', '1')", "mood"),
])
def test_pcall_counts_as_a_call_of_its_function(code: str, key: str) -> None:
    a = analyze(Module({"name": "T", "trigger": [{"type": "start", "conditions": [], "effect": [
        {"type": "triggerlua", "code": code}]}]}))
    assert a.state_key(key) is not None


@pytest.mark.parametrize(("code", "entries"), [
    ("onOutput = async(function(id) end)", {"onOutput"}),
    ("local function start(id) end\nonStart = start", {"onStart"}),
    ("_G.onButtonClick = function(id, v) end", {"onButtonClick"}),
    ("local onStart = function(id) end", set()),  # a local is not what RisuAI calls
    ("local M = {}\nM.onStart = function(id) end\nreturn M", set()),  # a field of a table
])
def test_entry_points_however_they_are_set(code: str, entries: set[str]) -> None:
    a = analyze(Module({"name": "T", "trigger": [{"type": "start", "conditions": [], "effect": [
        {"type": "triggerlua", "code": code}]}]}))
    assert {e.name for e in a.entry_points} == entries


def test_the_privileged_table_is_risuais_low_level_list() -> None:
    # RisuAI checks ScriptingLowLevelIds in exactly these host functions (and its Lua
    # wrappers LLM, axLLM, loadLoreBooks call the *Main ones); nothing else needs it
    privileged = {f.name for f in lua_api().functions.values() if f.privileged}
    assert privileged == {"similarity", "request", "generateImage", "LLMMain", "LLM",
                          "simpleLLM", "axLLMMain", "axLLM", "loadLoreBooksMain",
                          "loadLoreBooks"}


def test_a_parameter_is_never_a_constant() -> None:
    # ``name`` is assigned one literal in one place and is a parameter in another: the key
    # read through the parameter is not known (it was taken for "label")
    code = ('local name = "label"\nsetChatVar(id, name, "x")\n'
            "local function read(id, name)\n  return getChatVar(id, name)\nend\n"
            "local get = function(id, key, ...) return getChatVar(id, key) end\n"
            'local key = "other"')
    scan = scan_lua(code, KEEP_CALLS)
    assert scan.constants == {}
    assert scan_lua('local name = "label"\ngetChatVar(id, name)', KEEP_CALLS).constants == {
        "name": "label"}


def test_a_state_key_named_through_a_table_of_constants() -> None:
    code = ("local C = { CONFIG = { MODE = 'toggle_demo.mode', LIMIT = 'toggle_demo.limit' } }\n"
            "local mode = getGlobalVar(id, C.CONFIG.MODE)\n"
            "local n = getGlobalVar(id, C.CONFIG.LIMIT .. '2')\n"  # built: not a known key
            "local m = getGlobalVar(id, other.CONFIG.MISSING)")   # no constant: not known
    a = analyze(Module({"name": "T", "trigger": [{"type": "start", "conditions": [], "effect": [
        {"type": "triggerlua", "code": code}]}]}))
    assert {(s.scope, s.key) for s in a.state} == {("global", "toggle_demo.mode")}
