"""Host functions reached through aliases and the table of globals, scoped shadowing,
constants in more places, lorebook code loaded by its exact name (docs/analysis.md, "What a
reader follows": "Names read as values")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from risutools.analysis import analyze
from risutools.analysis.model import Analysis
from risutools.formats import read_path
from risutools.formats.model import Module

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "analysis"


def lua(code: str, *, lla: bool = True, **extra: Any) -> Analysis:
    data: dict[str, Any] = {"name": "T", "id": "t", "lowLevelAccess": lla, "trigger": [
        {"type": "start", "conditions": [], "effect": [{"type": "triggerlua", "code": code}]}]}
    data.update(extra)
    return analyze(Module(data))


def fixture(name: str) -> Analysis:
    [m] = read_path(FIXTURES / f"{name}.module.json")
    return analyze(m)


def rules(a: Analysis) -> list[str]:
    return [f.rule for f in a.findings]


def privileged(a: Analysis) -> set[str]:
    return {p.name for p in a.privileged}


def hosts(a: Analysis) -> set[str]:
    return {h.name for h in a.network_hosts}


def test_calls_through_aliases_are_host_calls_with_their_arguments() -> None:
    a = fixture("lua-aliases")
    assert privileged(a) == {"request", "simpleLLM", "generateImage"}
    assert hosts(a) == {"alias.example", "pcall.example"}
    assert "RA102" not in rules(a)
    assert {"network.request", "llm.call", "image.generate"} <= set(a.requires_names())


@pytest.mark.parametrize("code", [
    "local fetch = request\nfunction onStart(id) fetch(u) end",
    "fetch = request\nfunction onStart(id) fetch(u) end",
    "function onStart(id) (request)(u) end",
    "local t = {go = request}\nfunction onStart(id) t.go(u) end",
    "local t = {}\nt.go = request\nfunction onStart(id) t.go(u) end",
    "function onStart(id) run(request, u) end",
    "local a = request\nlocal b = a\nfunction onStart(id) b(u) end",
    "local env = _ENV\nfunction onStart(id) env.request(u) end",
    "local G = _G\nfunction onStart(id) G.request(u) end",
    "local G = _G\nfunction onStart(id) G['request'](u) end",
    "function onStart(id) _G['request'](u) end",
    "function onStart(id) setmetatable({}, {__index = _G}).request(u) end",
    "function onStart(id) return rawget(_G, 'request')(u) end",
    "local f <const> = request\nfunction onStart(id) f(u) end",
])
def test_every_way_to_reach_a_host_function_counts(code: str) -> None:
    a = lua(code)
    assert "request" in privileged(a), code
    assert "network.request" in a.requires_names()
    assert "RA102" not in rules(a)  # never "turn lowLevelAccess off"


@pytest.mark.parametrize("code", [
    "local G = _G", "f(_G)", "for k, v in pairs(_G) do end", "x = {_G}",
    "local t = setmetatable({}, {__index = _ENV})", "return _G[name]",
    "debug.getregistry()", "local d = debug", "getfenv(1)", "setfenv(f, t)",
])
def test_the_table_of_globals_as_a_value_is_a_dynamic_lookup(code: str) -> None:
    a = lua(code)
    assert "RA112" in rules(a), code
    assert "RA102" in rules(a)
    [msg] = [f.message for f in a.findings if f.rule == "RA102"]
    assert "turn lowLevelAccess off" not in msg and "may need it" in msg


@pytest.mark.parametrize("code", [
    "_G.x = 1", "print(_G.x)", "xpcall(f, debug.traceback)", "if type(_G) then end",
    "local function debug(m) print(m) end\ndebug('x')",
])
def test_static_uses_of_the_globals_are_not_lookups(code: str) -> None:
    assert "RA112" not in rules(lua(code)), code


def test_a_dynamic_lookup_reaches_every_global() -> None:
    a = fixture("lua-globals-table")
    assert "function hidden" not in {u.name for u in a.unreached}
    assert privileged(a) == {"request", "axLLM", "LLM"}
    assert hosts(a) == {"hidden.example"}


def test_a_nested_local_shadows_nothing_outside_it() -> None:
    a = fixture("lua-scoped-shadow")
    assert privileged(a) == {"request"}
    assert hosts(a) == {"scoped.example"}
    # a top-level local shadows the calls after it, not those before
    a = lua("request('https://before.example/')\nlocal function request(u) end\nrequest(1)")
    assert hosts(a) == {"before.example"}
    a = lua("local function request(u) end\nrequest('https://after.example/')")
    assert privileged(a) == set() and "RA102" in rules(a)


@pytest.mark.parametrize("code", [
    "function f(request) return type(request) == 'table' and request.x end",
    "for _, request in ipairs(queue) do print(request.id) end",
    "local a, request = 1, 2\nprint(request)",
    "if type(request) ~= 'function' then return end",
])
def test_the_scripts_own_variables_named_like_host_functions_are_not_uses(code: str) -> None:
    a = lua(code)
    assert privileged(a) == set(), code
    assert "RA104" not in rules(a)


def test_constants_name_listeners_entry_points_and_hosts() -> None:
    a = fixture("lua-constants-forms")
    assert {h.name for h in a.hooks} >= {"hook.edit_input", "hook.edit_output",
                                         "hook.chat_start"}
    assert {e.name for e in a.entry_points} == {"onOutput", "onStart"}
    assert hosts(a) == {"const.example"}
    assert "RA105" not in rules(a) and "RA104" not in rules(a)
    a = lua('local K = "editDisplay"\nlistenEdit(K, function(id, d) return d end)')
    assert "hook.edit_display" in {h.name for h in a.hooks}
    a = lua('local N = "onStart"\n_G[N] = function(id) end')
    assert "onStart" in {e.name for e in a.entry_points}


def test_an_entry_loaded_by_exact_name_is_code() -> None:
    a = fixture("lua-lore-exact-name")
    assert a.lorebook_code == [0]
    assert hosts(a) == {"lorepayload.example"}
    assert "RA114" in rules(a) and "RA102" not in rules(a)


def test_scans_with_aliases_stay_within_their_bounds() -> None:
    from risutools.analysis.luanames import MAX_ALIASES, scan_script
    from risutools.analysis.walk_lua import KEEP_CALLS
    code = "".join(f"local a{i} = request\n" for i in range(MAX_ALIASES + 10))
    code += "".join(f"a{i}('https://h{i}.example/')\n" for i in range(MAX_ALIASES + 10))
    scan = scan_script(code, KEEP_CALLS)
    kept = {c.name for c in scan.calls}
    assert len(kept) == MAX_ALIASES
    assert any(f"more than {MAX_ALIASES} aliases" in m for _, m in scan.errors)
    a = lua(code)
    assert "RA601" in rules(a) and "request" in privileged(a)


def test_aliases_deeper_than_followed_are_loose_uses_and_said() -> None:
    """A chain of aliases longer than the scans follow: the calls through its end are not
    seen, so the host function counts as used at an address not known (RA104), and RA601
    says the chain was cut (before: nothing but the use, no finding)."""
    chain = ["local a0 = request"] + [f"local a{i} = a{i - 1}" for i in range(1, 40)]
    a = lua("\n".join([*chain, "function onStart(id) a39('https://deep.example') end"]))
    assert "request" in privileged(a)
    assert "RA104" in rules(a)
    assert any(f.rule == "RA601" and "aliases of aliases" in f.message for f in a.findings)
