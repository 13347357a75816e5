"""A host function reached by a name folded from constants (docs/analysis.md, "Names folded
from constants"): recorded as a direct call or read of it, RA112 kept; what cannot be
folded stays a dynamic lookup only."""

from __future__ import annotations

import time
from typing import Any

import pytest

from risutools.analysis import analyze
from risutools.analysis.lua import scan_lua
from risutools.analysis.luafold import MAX_FOLD_CHARS, fold_argument, fold_index
from risutools.analysis.model import Analysis
from risutools.formats.model import Module

URL = '"https://a.example/x"'


def lua(code: str, *, lla: bool = True) -> Analysis:
    data: dict[str, Any] = {"name": "T", "id": "t", "lowLevelAccess": lla, "trigger": [
        {"type": "start", "conditions": [], "effect": [{"type": "triggerlua", "code": code}]}]}
    return analyze(Module(data))


def rules(a: Analysis) -> set[str]:
    return {f.rule for f in a.findings}


def hosts(a: Analysis) -> set[str]:
    return {h.name for h in a.network_hosts}


#: spellings of the name "request"
REQUEST_KEYS = [
    '"req" .. "uest"',
    "'re'..'qu'..'est'",
    '("req") .. ("uest")',
    '(("tseuqer")):reverse()',
    '("tseuqer"):reverse()',
    'string.reverse("tseuqer")',
    'string.reverse "tseuqer"',
    "string.char(114, 101, 113, 117, 101, 115, 116)",
    "string.char(0x72, 0x65, 0x71, 0x75, 0x65, 0x73, 0x74)",
    '("").char(114, 101, 113, 117, 101, 115, 116)',
    'table.concat({"req", "uest"})',
    'table.concat({"r", "e", "q", "u", "e", "s", "t"}, "")',
    'table.concat{"req", "uest"}',
    'string.format("%s%s", "req", "uest")',
    '("%s%s"):format("req", "uest")',
    '("re"):rep(1) .. "quest"',
    'string.rep("re", 1) .. "quest"',
    '("REQUEST"):lower()',
    'string.lower("ReQuEsT")',
    '("xrequestx"):sub(2, -2)',
    'string.sub("__request", 3)',
    '("tse"):reverse() .. "uqer"',  # not request: tested as quiet below
]
REQUEST_KEYS_OK = REQUEST_KEYS[:-1]


@pytest.mark.parametrize("key", REQUEST_KEYS_OK)
@pytest.mark.parametrize("table", ["_G", "_ENV"])
def test_a_folded_key_called_is_a_request_with_its_address(key: str, table: str) -> None:
    a = lua(f"function onStart(id) {table}[{key}](id, {URL}) end", lla=False)
    assert "network.request" in a.requires_names()
    assert "a.example" in hosts(a)
    assert {"RA101", "RA103", "RA112"} <= rules(a)
    assert "request" in {p.name for p in a.privileged}


@pytest.mark.parametrize("code", [
    # a folded key read into a local: an alias
    *(f"local f = _G[{key}]\nfunction onStart(id) f(id, URL) end"
      for key in REQUEST_KEYS_OK[:8]),
    'local n = "request"\nfunction onStart(id) _G[n](id, URL) end',
    'local n <const> = "request"\nfunction onStart(id) _G[n](id, URL) end',
    'local a = "req"\nlocal b = "uest"\nfunction onStart(id) _G[a .. b](id, URL) end',
    'local r = "tseuqer"\nfunction onStart(id) _ENV[r:reverse()](id, URL) end',
    'local G = _G\nfunction onStart(id) G["req" .. "uest"](id, URL) end',
])
def test_constants_and_aliases_of_the_table_fold(code: str) -> None:
    a = lua(code.replace("URL", URL))
    assert "network.request" in a.requires_names()
    assert "a.example" in hosts(a)
    assert {"RA103", "RA112"} <= rules(a)


@pytest.mark.parametrize("code", [
    'local f = rawget(_G, "req" .. "uest")\nfunction onStart(id) f(id) end',
    'rawget(_ENV, ("tseuqer"):reverse())(id)',
    'rawget(_G, string.char(114, 101, 113, 117, 101, 115, 116))(id)',
    'rawget(_G, table.concat({"req", "uest"}))(id)',
    'load("return " .. "req" .. "uest")()(id)',
    'loadstring(string.format("return %s", "request"))()(id)',
    'pcall(_G["req" .. "uest"], id)',
    'local f = _G["request"]',
])
def test_folded_reads_are_uses(code: str) -> None:
    a = lua(code, lla=False)
    assert "network.request" in a.requires_names()
    assert "RA101" in rules(a)
    assert rules(a) & {"RA112", "RA110"}


def test_privileged_llm_through_a_folded_name() -> None:
    a = lua('function onStart(id) _G[("MLLelpmis"):reverse()](id, "hi") end', lla=False)
    assert "llm.call" in a.requires_names()
    assert "simpleLLM" in {p.name for p in a.privileged}
    assert {"RA101", "RA112"} <= rules(a)


def test_an_entry_point_set_through_a_folded_name() -> None:
    a = lua('_G["on" .. "Start"] = function(id) end')
    assert "hook.chat_start" in a.requires_names()


@pytest.mark.parametrize("code", [
    'function onStart(id) _G["pri" .. "nt"](id, "https://a.example/") end',
    'function onStart(id) _G[("gol"):reverse()](id) end',
])
def test_a_folded_name_that_is_no_host_function_is_quiet(code: str) -> None:
    a = lua(code)
    assert "network.request" not in a.requires_names()
    assert not hosts(a) - {"a.example"}
    assert "RA103" not in rules(a) and "RA112" in rules(a)


@pytest.mark.parametrize("key", [
    "x .. 'uest'", "name", "string.char(n)", "('x'):rep(k)", "string.format('%q', 'request')",
    "('request'):gsub('x', '')", "f('request')", "t.request", "'req' .. 'uest' .. x",
    "string.char(114.5)", "('req' .. 'uest') + 1",
])
def test_a_key_that_cannot_be_folded_stays_a_lookup(key: str) -> None:
    a = lua(f"function onStart(id, x, n, k) _G[{key}](id, {URL}) end")
    assert "RA112" in rules(a)
    assert "network.request" not in a.requires_names()
    assert "RA103" not in rules(a) and "RA104" not in rules(a)


def test_the_quiet_old_cases_are_unchanged() -> None:
    a = lua('function onStart(id) rawget(_G, x .. "y") end')
    assert "RA112" in rules(a) and "network.request" not in a.requires_names()
    a = lua('function onStart(id) load(x .. "y") end')
    assert "RA110" in rules(a) and "network.request" not in a.requires_names()


# -- the folder itself, and its bounds -----------------------------------------------------
def test_folder_values() -> None:
    consts = {"a": "req", "b": "uest"}
    assert fold_index('[a .. b]', 0, consts) == ("request", 8)
    assert fold_index('[("ab"):rep(3, "-")]', 0, {})[0] == "ab-ab-ab"  # type: ignore[index]
    assert fold_index('[("abc"):sub(-2)]', 0, {})[0] == "bc"  # type: ignore[index]
    assert fold_index('["a" .. 1 .. 2]', 0, {})[0] == "a12"  # type: ignore[index]
    assert fold_index('[("%d%%"):format(5)]', 0, {})[0] == "5%"  # type: ignore[index]
    assert fold_index('[("x"):rep(0)]', 0, {})[0] == ""  # type: ignore[index]
    assert fold_argument('f(g(1, 2), "a" .. "b")', 0, 1, {}) == "ab"
    assert fold_index('[x]', 0, {}) is None


def test_bounds_a_huge_concatenation_or_rep() -> None:
    parts = " .. ".join(['"a"'] * 100_000)
    big = f'function onStart(id) _G[{parts}](id, {URL}) end'
    t = time.perf_counter()
    a = lua(big)
    assert time.perf_counter() - t < 20
    assert "RA112" in rules(a) and "network.request" not in a.requires_names()
    assert fold_index(f"[{parts}]", 0, {}) is None
    for rep in ['("a"):rep(1e300)', '("a"):rep(10^9)', '("a"):rep(999999999)',
                f'("a"):rep({MAX_FOLD_CHARS + 1})', 'string.rep("ab", 2^62)']:
        assert fold_index(f"[{rep}]", 0, {}) is None
        a = lua(f"function onStart(id) _G[{rep}](id) end")
        assert "RA112" in rules(a)


def test_bounds_many_folds_in_one_script() -> None:
    code = "\n".join(['_G["pri" .. "nt"](1)'] * 5000) + f'\n_G["req" .. "uest"](id, {URL})'
    t = time.perf_counter()
    scan = scan_lua(code, frozenset({"request"}))
    assert time.perf_counter() - t < 20
    assert not any(c.name == "request" for c in scan.calls)  # past MAX_FOLDS: not folded


def test_a_key_that_runs_past_the_span_is_not_folded() -> None:
    code = '_G["req" .. "' + "x" * 10_000 + '"](id)'
    assert fold_index(code, 2, {}) is None


@pytest.mark.parametrize("code", [
    "package.loaded._G.request(id, URL)",
    "local g = package.loaded._G\ng.request(id, URL)",
    "local g = package.loaded['_G']\ng.request(id, URL)",
])
def test_the_globals_through_package_loaded(code: str) -> None:
    a = lua(code.replace("URL", URL))
    assert "RA112" in rules(a)
    assert "network.request" in a.requires_names()
    assert "a.example" in hosts(a)


def test_package_without_the_globals_is_still_a_lookup_only() -> None:
    a = lua('local p = package\nfunction onStart(id) end')
    assert "RA112" in rules(a) and "network.request" not in a.requires_names()


def test_the_lookup_warning_names_the_function_it_resolved() -> None:
    a = lua(f'function onStart(id) _G["req" .. "uest"](id, {URL}) end')
    [msg] = [f.message for f in a.findings if f.rule == "RA112"]
    assert "here request" in msg
    a = lua('function onStart(id) rawget(_G, ("tseuqer"):reverse())(id) end')
    [msg] = [f.message for f in a.findings if f.rule == "RA112"]
    assert "here request" in msg
    a = lua("function onStart(id, x) _G[x](id) end")
    [msg] = [f.message for f in a.findings if f.rule == "RA112"]
    assert "here" not in msg


@pytest.mark.parametrize("code", [
    'package.preload["./m"] = function(...) return {} end\nlocal m = require("./m")',
    'package.path = "x"',
    "local p = package . preload",
])
def test_package_fields_that_reach_no_global_are_quiet(code: str) -> None:
    assert "RA112" not in rules(lua(code))


# --- the folder works on a string's bytes, as Lua does ---------------------------------

@pytest.mark.parametrize(("expr", "name"), [
    ('string.char(237, 149, 156)', "한"),                  # bytes of one character
    ('("\\237\\149\\156\\234\\184\\128"):sub(1, 3)', "한"),  # sub counts bytes
    ('("한글"):sub(4)', "글"),
    ('("한"):reverse()', "\ufffd\ufffd\ufffd"),          # 9C 95 ED: not UTF-8
    ('("ÀB"):lower()', "Àb"),                             # ASCII letters only
    ('("àb"):upper()', "àB"),
    ('"\\226\\128" .. "\\174x"', "\u202ex"),               # bytes joined across a ..
    ('K .. "\\234\\184\\128"', "한글"),                 # a constant's bytes, then more
])
def test_folded_strings_are_bytes(expr: str, name: str) -> None:
    got = fold_index(f"_G[{expr}]", 2, {"K": "한"})
    assert got is not None and got[0] == name, got
