"""Code a module keeps in its lorebook and loads at run time (issue 11): which ``load`` calls
run lorebook text, the entry names their lookups ask for (literal, concatenated, from a
table of names, computed), and what the analysis reports for each.  Fixture:
fixtures/analysis/lore-loader-idioms.module.json (our own)."""

from __future__ import annotations

import json

import pytest
from harness import FIXTURES
from hypothesis import given, settings
from hypothesis import strategies as st

from risutools.analysis import analyze
from risutools.analysis.lorecode import (
    WILD,
    LoreFlow,
    looks_like_lua,
    lore_flow,
    pattern_matches,
    show_pattern,
)
from risutools.formats.model import Module

IDIOMS = FIXTURES / "analysis" / "lore-loader-idioms.module.json"


def _names(flow: LoreFlow) -> list[list[str]]:
    return [[show_pattern(p) for p in lk.patterns] for lk in flow.lookups]


def _module(code: str, entries: dict[str, str] | None = None) -> Module:
    return Module({"name": "T", "trigger": [{"type": "start", "conditions": [], "effect": [
        {"type": "triggerlua", "code": code}]}],
        "lorebook": [{"comment": k, "content": v, "key": ""}
                     for k, v in (entries or {}).items()]})


@pytest.mark.parametrize(("code", "names"), [
    # a constant prefix and suffix around a computed part
    ("local s = getLoreBooks(id, 'lib/' .. mod .. '.lua')\nload(s[1].content)()",
     [["lib/*.lua"]]),
    # the name built in a local first
    ("local n = mod .. '.lua'\nlocal m = getLoreBooks(id, n)\nfor _, e in ipairs(m) do\n"
     "  local c = e.content\n  load('return ' .. c)()\nend", [["*.lua"]]),
    # a table of file names iterated over
    ("local FILES = {'a.lua', 'b.lua'}\nfor _, f in ipairs(FILES) do\n"
     "  local got = getLoreBooks(id, f)\n  load(got[1].content)()\nend", [["a.lua", "b.lua"]]),
    # through pcall and a helper function's return value
    ("local function read(id, n)\n  local ok, r = pcall(getLoreBooks, id, n .. '.lua')\n"
     "  return r[1].content\nend\nlocal src = read(id, 'x')\nload(src)()", [["*.lua"]]),
    # a name that is only a parameter: not resolved, said so
    ("local function run(id, name)\n  local r = getLoreBooks(id, name)\n"
     "  load(r[1].content)()\nend", [[]]),
])
def test_lookups_that_feed_a_load_and_their_names(code: str, names: list[list[str]]) -> None:
    flow = lore_flow(code)
    assert flow.lore_loads, code
    assert _names(flow) == names


def test_a_lookup_read_as_data_and_a_load_of_other_text_are_not_lore_loads() -> None:
    code = ("local data = getLoreBooks(id, 'manifest')\nprint(data)\n"
            "local typed = getChatVar(id, 'typed')\nload(typed)()")
    flow = lore_flow(code)
    assert flow.lore_loads == set() and flow.lookups == []


@pytest.mark.parametrize(("pattern", "name", "fits"), [
    (("lib/", WILD, ".lua"), "lib/a.lua", True), (("lib/", WILD, ".lua"), "lib/.lua", True),
    (("lib/", WILD, ".lua"), "lib/a.lu", False), (("lib/", WILD, ".lua"), "x/lib/a.lua", False),
    ((WILD, ".lua"), "a.lua", True), ((WILD, ".lua"), "a.luax", False),
    (("a", WILD, "b", WILD, "c"), "a-b-c", True), (("a", WILD, "b", WILD, "c"), "a-c-b", False),
    (("ab", WILD, "ba"), "aba", False), (("exact",), "exact", True), (("exact",), "exact2", False),
])
def test_pattern_matching_is_plain_string_work(pattern: tuple[str, ...], name: str,
                                               fits: bool) -> None:
    assert pattern_matches(pattern, name) is fits


def test_the_fixture_resolves_concatenated_and_tabled_names_and_reports_the_rest() -> None:
    data = json.loads(IDIOMS.read_text(encoding="utf-8"))
    a = analyze(Module(data["module"]))
    assert a.lorebook_code == [0, 1]  # lib/a.lua, lib/b.lua; "notes" is prose
    by_rule: dict[str, list[str]] = {}
    for f in a.findings:
        by_rule.setdefault(f.rule, []).append(f.message)
    [ra113] = by_rule["RA113"]
    assert "`lib/*.lua`" in ra113 and "`lib/b.lua`" in ra113 and "fit 2 entries" in ra113
    assert "'shared-prelude'" in ra113  # kept in another module: said plainly
    [ra110] = by_rule["RA110"]  # load(typed): text from a chat variable, not a lorebook
    assert ra110.startswith("load runs code built at run time")
    assert {"onStart", "onOutput"} <= {e.name for e in a.entry_points}


def test_a_resolved_own_entry_is_info_and_no_ra110() -> None:
    lib = "local M = {}\nfunction M.f(id)\n  return getChatVar(id, 'k')\nend\nreturn M\n"
    code = ("local name = 'util'\nlocal got = getLoreBooks(id, 'lib/' .. name .. '.lua')\n"
            "local f = load(got[1].content)()")
    a = analyze(_module(code, {"lib/util.lua": lib}))
    rules = {f.rule: f for f in a.findings}
    assert "RA110" not in rules and rules["RA113"].severity == "info"
    assert "`lib/util.lua`" in rules["RA113"].message and a.lorebook_code == [0]


def test_an_unresolved_name_is_said_plainly() -> None:
    code = ("local function run(id, name)\n  local r = getLoreBooks(id, name)\n"
            "  load(r[1].content)()\nend\nrun(id, getChatVar(id, 'book'))")
    a = analyze(_module(code))
    [f] = [f for f in a.findings if f.rule == "RA113"]
    assert "1 lookup(s) use names computed at run time (first at trigger[0].effect[0] line 2)" \
        in f.message and f.severity == "warning"


def test_a_wrapped_module_file_reads_as_lua() -> None:
    assert looks_like_lua("(function(id, action, ...)\n  return run(id, 'x', action, ...)\nend)\n")
    assert not looks_like_lua("(an aside)\nreturn to the inn\nend of the tale")


_PIECES = ["load(", "getLoreBooks(", "pcall(", "local ", "x", "y", " = ", "..", "'a.lua'", "{",
           "}", ",", ")", "(", "for _, e in ipairs(", ") do ", "end", "function f(", "return ",
           "\n", ".content", "[1]", "if ", " then ", "--", '"', "[[", "]]", "loadstring("]


@settings(max_examples=300)
@given(st.lists(st.sampled_from(_PIECES), max_size=60))
def test_lore_flow_never_raises_and_answers_only_what_it_saw(pieces: list[str]) -> None:
    code = "".join(pieces)
    flow = lore_flow(code)
    lines = code.count("\n") + 1
    assert all(1 <= line <= lines for line in flow.lore_loads)
    assert all(1 <= lk.line <= lines for lk in flow.lookups)
    if "getLoreBooks" not in code and "loadLoreBooks" not in code:
        assert flow.lore_loads == set() and flow.lookups == []
