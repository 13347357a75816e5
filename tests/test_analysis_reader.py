"""Following values the way a reader does (issue 22): every idiom of the issue and every
trap has a fixture of our own in fixtures/analysis/reader/*.yaml with the facts a careful
reader writes down for it (by hand, from the code and RisuAI's source; never from the
analyser's output).  Each fact type listed in ``FACT_TYPES`` is compared as a set: what a
fixture does not list is expected to be absent, so every fixture scores precision and
recall 1.0 on every fact type, and a trap (a comment naming a hook, a function named
``load...``, a damaged regex) is a fixture whose expected facts are empty where the trap
would put one.  ``evidence:`` pins the evidence of some facts (both lines of a key found
through a helper, the button and the function a button calls ...)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest
import yaml

from risutools.analysis import analyze
from risutools.analysis.model import Analysis, Fact
from risutools.formats import read_path
from risutools.formats.model import Module

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "analysis" / "reader"
CASES = sorted(FIXTURES.glob("*.yaml"))


def _names(facts: Iterable[Fact]) -> set[str]:
    return {f.name for f in facts}


#: fact type -> how it is read from an analysis
FACT_TYPES: dict[str, Callable[[Analysis], set[str]]] = {
    "hooks": lambda a: set(a.hook_names()),
    "entry_points": lambda a: _names(a.entry_points),
    "buttons": lambda a: _names(a.button_callbacks),
    "code_buttons": lambda a: _names(a.code_buttons),
    "manual_entries": lambda a: _names(a.manual_entries),
    "chat_read": lambda a: {s.key for s in a.state if s.scope == "chat" and s.reads},
    "chat_write": lambda a: {s.key for s in a.state if s.scope == "chat" and s.writes},
    "global_read": lambda a: {s.key for s in a.state if s.scope == "global" and s.reads},
    "computed": lambda a: {f"{s.scope} {'r' if s.reads else '-'}{'w' if s.writes else '-'} "
                           f"{s.key}" for s in a.computed_state},
    "group_chat_writes": lambda a: _names(a.group_chat_writes),
    "callbacks": lambda a: {c.name for c in a.callbacks},
    "unreached": lambda a: _names(a.unreached),
    "privileged": lambda a: _names(a.privileged),
    "dynamic_code": lambda a: _names(a.dynamic_code),
    "lorebook_code": lambda a: {str(i) for i in a.lorebook_code},
    "toggles": lambda a: {t.key for t in a.toggles},
    "findings": lambda a: {f.rule for f in a.findings},
    "requires": lambda a: set(a.requires_names()),
    "url_hosts": lambda a: _names(a.url_hosts),
    "network_hosts": lambda a: _names(a.network_hosts),
}


def _load(path: Path, tmp_path: Path) -> tuple[dict[str, Any], list[Module]]:
    case = yaml.safe_load(path.read_text(encoding="utf-8"))
    if "card" in case:  # a card export: read as the reader reads a file
        p = tmp_path / "card.json"
        p.write_text(json.dumps(case["card"]), encoding="utf-8")
        return case, read_path(p)
    data = {"name": "T", "id": "t", **case["module"]}
    return case, [Module(data)]


def test_every_idiom_has_a_fixture() -> None:
    names = {p.stem for p in CASES}
    assert {"helper-keys", "branch-chain", "replayed-state", "lua-buttons", "button-names",
            "lightboard", "unreached", "greeting", "entry-forms", "retry-helper",
            "cbs-idioms", "listeners", "trap-comments", "trap-load-names",
            "trap-damaged-regex", "trap-mixed-names", "list-assign", "url-forms",
            "regex-split-once"} <= names


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_fixture_facts(path: Path, tmp_path: Path) -> None:
    case, modules = _load(path, tmp_path)
    [a] = [analyze(m) for m in modules]
    expect = case.get("expect") or {}
    assert set(expect) <= set(FACT_TYPES), set(expect) - set(FACT_TYPES)
    for fact_type, read in FACT_TYPES.items():
        want = {str(x) for x in expect.get(fact_type) or []}
        got = read(a)
        # precision (nothing reported that is not expected) and recall (nothing missed)
        assert got == want, (fact_type, sorted(got - want), sorted(want - got))
    facts = {"state": a.state, "computed": a.computed_state}
    for key, where in (case.get("evidence") or {}).items():
        kind, _, name = key.partition(" ")
        if kind in facts:
            [sk] = [s for s in facts[kind] if s.key == name]  # type: ignore[attr-defined]
            assert {"reads": sk.reads, "writes": sk.writes} == where, key
        else:
            [f] = [f for f in getattr(a, kind) if f.name == name]
            assert f.evidence == where, key


# -- bounds (docs/analysis.md: "Following values through helpers") ---------------------------

def _lua(code: str) -> Analysis:
    return analyze(Module({"name": "T", "trigger": [{"type": "start", "conditions": [],
                                                     "effect": [{"type": "triggerlua",
                                                                 "code": code}]}]}))


def test_helpers_are_followed_to_the_documented_depth() -> None:
    from risutools.analysis.luaflow import MAX_HELPER_DEPTH
    assert MAX_HELPER_DEPTH == 4
    lines = ["local function h1(id, k) setChatVar(id, k, '1') end"]
    lines += [f"local function h{n}(id, k) h{n - 1}(id, k) end" for n in range(2, 7)]
    lines += ["function onStart(id)", "  h4(id, 'four')", "  h5(id, 'five')", "end"]
    a = _lua("\n".join(lines))
    assert [s.key for s in a.state] == ["four"]  # h5 is a fifth level: not followed
    assert [(s.key, s.writes) for s in a.computed_state] == [
        ("*", ["trigger[0].effect[0] line 5 via line 1"])]


def test_a_branch_chain_past_its_bound_is_computed() -> None:
    from risutools.analysis.lua import MAX_CHOICES
    arms = "\n".join(f"elseif r == {i} then k = 'k{i}'" for i in range(MAX_CHOICES + 1))
    a = _lua(f"function onStart(id)\n  local k\n  if r == -1 then k = 'first'\n{arms}\n"
             "  end\n  setChatVar(id, k, '1')\nend")
    assert a.state == [] and [s.key for s in a.computed_state] == ["*"]
    few = _lua("function onStart(id)\n  local k\n  if r then k = 'a' else k = 'b' end\n"
               "  setChatVar(id, k, '1')\nend")
    assert [s.key for s in few.state] == ["a", "b"] and few.computed_state == []


def test_a_helper_called_with_a_computed_key_is_computed_not_guessed() -> None:
    a = _lua("local function put(id, k, v) setChatVar(id, 'p_' .. k, v) end\n"
             "function onStart(id)\n  put(id, getName(id), '1')\n  put(id, 'x', '2')\nend")
    assert [s.key for s in a.state] == ["p_x"]
    assert [s.key for s in a.computed_state] == ["p_*"]


def test_each_concatenation_of_a_helper_is_its_own_key() -> None:
    """Equal-looking arguments (the same names) with different literal parts stay apart."""
    a = _lua("local function h(id, k)\n  setChatVar(id, k .. '_a', '1')\n"
             "  setChatVar(id, k .. '_b', '1')\nend\nfunction onStart(id)\n  h(id, 'x')\nend")
    assert [s.key for s in a.state] == ["x_a", "x_b"]


def test_a_button_inside_a_computed_part_is_read_too() -> None:
    a = _lua("listenEdit('editDisplay', function(t, d)\n"
             "  return d .. '<b risu-btn=\"go;' .. x .. '\">' .. "
             "string.format('<i risu-trigger=\"F%s\">', y)\nend)")
    assert [(b.name, b.evidence) for b in a.code_buttons] == [
        ("F*", ["trigger[0].effect[0] line 2"]), ("go;*", ["trigger[0].effect[0] line 2"])]


def test_every_unreached_function_is_listed_with_the_calls_in_it() -> None:
    a = _lua("local function f0(id) return getChatVar(id, 'x') end\n"
             "local function f1(id) return f0(id) end\n"
             "function onStart(id) setChatVar(id, 'y', '1') end")
    assert [(f.name, f.evidence) for f in a.unreached] == [
        ("function f0", ["trigger[0].effect[0] line 1"]),
        ("function f1", ["trigger[0].effect[0] line 2"])]
    assert [s.key for s in a.state] == ["y"]
