"""Findings of an audit of the trigger reading against RisuAI's source (triggers.ts
runTrigger, command.ts processMultiCommand, scripts.ts processScriptFull, parser.svelte.ts)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from risutools.analysis import analyze
from risutools.analysis.model import Analysis
from risutools.analysis.walk_command import MAX_COMMANDS, split_commands
from risutools.formats.model import Module

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures/analysis/triggers2.module.json"
EVERY = {"hook.chat_start", "hook.edit_input", "hook.edit_output", "hook.edit_request",
         "hook.edit_display", "hook.manual"}


def module(*, lla: bool = False, trigger: list[Any] | None = None,
           regex: list[Any] | None = None) -> Analysis:
    data: dict[str, Any] = {"name": "T", "id": "t", "lowLevelAccess": lla,
                            "trigger": trigger or [], "regex": regex or []}
    return analyze(Module(data))


def trig(*effects: dict[str, Any], ttype: str = "output", comment: str = "c",
         conditions: list[Any] | None = None) -> dict[str, Any]:
    return {"comment": comment, "type": ttype, "conditions": conditions or [],
            "effect": list(effects)}


def requires(a: Analysis) -> set[str]:
    return {c.name for c in a.requires}


def hooks(a: Analysis) -> set[str]:
    return {h.name for h in a.hooks}


def chat(a: Analysis, mode: str) -> set[str]:
    return {k.key for k in a.state if k.scope == "chat" and getattr(k, mode)}


def rules(a: Analysis) -> list[str]:
    return [f.rule for f in a.findings]


# -- 1. a code-first trigger runs on every event ---------------------------------------------

@pytest.mark.parametrize("first", ["triggercode", "triggerlua"])
def test_code_first_trigger_effects_run_on_every_event(first: str) -> None:
    a = module(trigger=[trig({"type": first, "code": ""},
                             {"type": "cutchat", "start": "0", "end": "-1"}, ttype="manual")])
    assert hooks(a) >= EVERY
    assert a.counts.get("every_event_triggers") == 1


def test_code_only_trigger_gets_no_type_hook() -> None:
    a = module(trigger=[trig({"type": "triggerlua", "code": ""}, ttype="manual")])
    assert "hook.manual" not in hooks(a)


# -- 2. slash commands -----------------------------------------------------------------------

def test_literal_commands() -> None:
    a = module(trigger=[trig({"type": "command",
                              "value": "/popup Hi|/setvar key=mood happy|/multisend go"})])
    assert {"ui.alert", "llm.call", "chat.write"} <= requires(a)
    assert "mood" in chat(a, "writes")
    assert not a.computed_state


def test_v2_command_value_and_unknown_command_stops() -> None:
    a = module(trigger=[trig({"type": "v2Command", "valueType": "value",
                              "value": "/input pw?|/setvar key=pw|/nosuch|/multisend x"})])
    assert "ui.alert" in requires(a) and "pw" in chat(a, "writes")
    assert "llm.call" not in requires(a)  # RisuAI stops at /nosuch


@pytest.mark.parametrize("effect", [
    {"type": "command", "value": "/pass {{lastmessage}}"},
    {"type": "v2Command", "value": "cmdvar"},  # the text is a variable's value
])
def test_computed_command_text_reports_every_command(effect: dict[str, Any]) -> None:
    a = module(trigger=[trig(effect)])
    assert {"ui.alert", "llm.call", "chat.write"} <= requires(a)
    assert any(k.scope == "chat" and k.writes for k in a.computed_state)
    assert "RA107" in rules(a)


def test_trigger_command_runs_triggers() -> None:
    a = module(trigger=[trig({"type": "command", "value": "/trigger other"}),
                        trig({"type": "cutchat"}, ttype="manual", comment="other")])
    assert "RA107" in rules(a)
    assert [f.name for f in a.manual_entries] == ["other"]


def test_split_commands_quotes_and_bound() -> None:
    assert split_commands('/echo "a|b"|/pass c') == ['/echo "a|b"', "/pass c"]
    assert len(split_commands("|" * 1000)) == MAX_COMMANDS


# -- 4. runtrigger: lowLevelAccess lifts its recursion limit ---------------------------------

@pytest.mark.parametrize("effect", [{"type": "runtrigger", "value": "loop"},
                                    {"type": "v2RunTrigger", "target": "loop"}])
def test_runtrigger_needs_lla_no_ra102(effect: dict[str, Any]) -> None:
    a = module(lla=True, trigger=[trig(effect, ttype="manual", comment="loop")])
    assert "RA102" not in rules(a)
    assert "RA107" in rules(a)


def test_ra102_still_given_without_runtrigger() -> None:
    a = module(lla=True, trigger=[trig({"type": "cutchat"})])
    assert "RA102" in rules(a)


def test_fixture() -> None:
    a = analyze(Module(json.loads(FIXTURE.read_text(encoding="utf-8"))))
    assert hooks(a) >= EVERY
    assert {"ui.alert", "llm.call"} <= requires(a)
    assert "RA102" not in rules(a) and "RA107" in rules(a)


# -- 3. regex @@inject and <inject> write the stored message; directives need ableFlag ------

@pytest.mark.parametrize("script,writes", [
    ({"in": "S", "out": "@@inject", "type": "editprocess", "flag": "g"}, True),
    ({"in": "S", "out": "", "type": "editoutput", "flag": "g<inject>", "ableFlag": True}, True),
    ({"in": "S", "out": "", "type": "editoutput", "flag": "g<inject>", "ableFlag": False},
     False),
    ({"in": "S", "out": "@@emo happy", "type": "editoutput", "flag": "g"}, False),
])
def test_regex_inject_writes_chat(script: dict[str, Any], writes: bool) -> None:
    assert ("chat.write" in requires(module(regex=[script]))) is writes


@pytest.mark.parametrize("able,reads", [(True, True), (False, False), (None, False)])
def test_cbs_directive_needs_ableflag(able: bool | None, reads: bool) -> None:
    script = {"in": "{{getvar::pat}}", "out": "y", "type": "editoutput", "flag": "g<cbs>",
              "ableFlag": able}
    assert ("pat" in chat(module(regex=[script]), "reads")) is reads


# -- 5. CBS {{#when}} operators that read variables ------------------------------------------

def test_when_operators_read_variables() -> None:
    out = ("{{#when::var::flagA}}A{{/when}}{{#when::keyB::vis::yes}}B{{/when}}"
           "{{#when::keyC::visnot::no}}C{{/when}}{{#when::togD::tis::on}}D{{/when}}"
           "{{#when::togE::tisnot::on}}E{{/when}}{{#when::toggle::togF}}F{{/when}}")
    a = module(regex=[{"in": "x", "out": out, "type": "editdisplay", "flag": "g"}])
    assert {"flagA", "keyB", "keyC"} <= chat(a, "reads")
    assert {f.name for f in a.required_toggles} == {"togD", "togE", "togF"}


# -- 6. conditions' CBS, triggercode, runAxLLM -----------------------------------------------

def test_condition_cbs_is_read() -> None:
    a = module(trigger=[trig({"type": "cutchat"}, conditions=[
        {"type": "var", "var": "a", "value": "{{getvar::b}}", "operator": "="},
        {"type": "value", "var": "{{getglobalvar::toggle_mode}}{{getvar::c}}", "value": "1",
         "operator": "="}])])
    assert {"a", "b", "c"} <= chat(a, "reads")
    assert {f.name for f in a.required_toggles} == {"mode"}


def test_triggercode_never_runs() -> None:
    code = "function onStart(id)\n  request(id, 'https://a.example/x')\nend\n"
    a = module(lla=True, trigger=[trig({"type": "triggercode", "code": code}, ttype="start")])
    assert not a.network_hosts and "network.request" not in requires(a)
    assert "RA803" in rules(a) and "RA103" not in rules(a)


def test_run_ax_llm_does_nothing() -> None:
    a = module(trigger=[trig({"type": "runAxLLM", "value": "x", "inputVar": "out"})])
    assert "llm.call" not in requires(a) and "RA101" not in rules(a)
