"""The static analyser's audit fixes (issues 5, 6, 7, 9, 10), each as a class: HTML read as
a browser reads it, the trigger-effect table, lowLevelAccess by container, patterns RisuAI
runs, CBS RisuAI does not evaluate.  Modules are our own (fixtures/analysis/audit-fixes)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from risutools.analysis import analyze
from risutools.analysis.cbs import scan_cbs, strip_cbs
from risutools.analysis.htmlscan import decode_refs, scan_html
from risutools.analysis.model import Analysis
from risutools.analysis.regexcheck import backtracking_risks
from risutools.analysis.walk_effects import effect_table, privileged_effects
from risutools.datatables import data_table
from risutools.formats.model import Module

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "fixtures" / "analysis" / "audit-fixes.module.json"


def fixture() -> Analysis:
    return analyze(Module(json.loads(FIXTURE.read_text(encoding="utf-8"))))


def rules(a: Analysis) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for f in a.findings:
        out.setdefault(f.rule, []).append(str(f.evidence))
    return out


def keys(a: Analysis, mode: str) -> set[str]:
    return {s.key for s in a.state if (s.writes if mode == "w" else s.reads)}


# -- 5. HTML ------------------------------------------------------------------------------

@pytest.mark.parametrize("html", [
    '<img alt=">" src=x onerror=go()>',
    "<img title='{{? 1>0}}' src=x onerror=go()>",
    "<img src=x o{{blank}}nerror=go()>",
    '<img src=x on{{#if 1}}{{/if}}error="go()">',
])
def test_handlers_past_quotes_and_cbs(html: str) -> None:
    assert scan_html(html).handler_lines == [1]


@pytest.mark.parametrize("url", [
    "java&#115;cript:go()", "&#106;avascript:go()", "javascript&colon;go()",
    "&#x6A;avascript:go()", "&#x6a avascript:go()", "&#0000106avascript:go()",
    "jav&Tab;ascript:go()", "java\nscript:go()", " \x01javascript:go()",
    "java{{blank}}script:go()",
])
def test_javascript_urls_decoded(url: str) -> None:
    assert scan_html(f'<a href="{url}">x</a>').js_url_lines == [1]


def test_script_split_by_cbs_and_srcdoc() -> None:
    assert scan_html("<scr{{blank}}ipt>go()</scr{{blank}}ipt>").script_lines == [1]
    doc = scan_html('x\n<iframe srcdoc="&lt;script&gt;go()&lt;/script&gt;"></iframe>')
    assert doc.script_lines == [2] and (2, "<iframe srcdoc>") in doc.active_lines


@pytest.mark.parametrize(("html", "what"), [
    ('<iframe src="data:text/html;base64,eA=="></iframe>', "<iframe src=data:>"),
    ('<object data=" DATA:text/html,x"></object>', "<object data=data:>"),
    ("<embed src=javascript:go()>", "<embed src=javascript:>"),
    ('<meta http-equiv="Refresh" content="0">', "<meta http-equiv=refresh>"),
    ('<base href="https://x.example/">', "<base href>"),
    ('<form action="https://x.example/">', "<form action>"),
    ('<button formaction="https://x.example/">', "<button formaction>"),
])
def test_active_embeds(html: str, what: str) -> None:
    assert scan_html(html).active_lines == [(1, what)]


def test_quiet_html() -> None:
    quiet = scan_html('<a title="x onclick=y" href="https://x.example">javascript</a>'
                      '<img src="data:image/png;base64,eA=="><p>base href, srcdoc</p>')
    assert not (quiet.handler_lines or quiet.js_url_lines or quiet.active_lines
                or quiet.script_lines)


def test_reader_is_linear_on_hostile_tags() -> None:
    for text in ("<a " + "x=\"" * 50_000, "<a" + " b" * 100_000, "<" * 200_000,
                 '<a b="' + "&#1" * 50_000, "{{" * 50_000 + "<a onclick=x>"):
        scan_html(text)  # returns (a quadratic reader would take minutes)


def test_decode_refs() -> None:
    assert decode_refs("&#x6A;&#106&colon;&NewLine;&lpar;&#99999999;&bogus;") == \
        "jj:\n(\ufffd&bogus;"
    assert strip_cbs("a{{x::{{y}}}}b}}c{{", "*")[0] == "a*b}}c"


def test_fixture_html_places() -> None:
    got = rules(fixture())
    assert got["RA301"] == ["backgroundEmbedding line 9"]
    assert got["RA303"] == ["backgroundEmbedding line 3"]
    assert got["RA304"] == ["backgroundEmbedding line 10"]
    # a message an effect writes into the chat is HTML RisuAI shows
    assert "trigger[0].effect[0].value line 1" in got["RA302"]


def test_greeting_html_without_cbs() -> None:
    card = Module({"name": "C", "cardFields": {"first_mes": "<img src=x onerror=go()>"}},
                  component_type="character")
    assert "RA302" in rules(analyze(card))


# -- 6. trigger effects, from the data --------------------------------------------------

def test_effect_table_is_data_and_uses_the_vocabulary() -> None:
    vocabulary = set(data_table("capabilities.yaml")["capabilities"])
    table = effect_table()
    for name, row in table.items():
        assert set(row.caps) <= vocabulary, name
    for name in ("impersonate", "systemprompt", "v2CreateLorebook", "v2DeleteLorebookByIndex",
                 "v2ModifyLorebookByIndex", "v2SetLorebookAlwaysActive", "v2GetAllLorebooks"):
        assert table[name].caps, name
    assert {"runLLM", "v2RunLLM", "v2SendAIprompt", "extractRegex"} <= privileged_effects()
    assert "outputVar" in table["v2GetLastMessage"].writes
    assert table["runLLM"].writes == ("inputVar",)


def test_fixture_effects() -> None:
    a = fixture()
    req = set(a.requires_names())
    assert {"chat.write", "request.write", "lorebook.write", "llm.call"} <= req
    assert {"llm_out", "last_msg", "v1_out", "got"} <= keys(a, "w")
    assert "prompt_var" in keys(a, "r")  # valueType "var": the value names a variable
    assert ("hp_*", "chat") in {(c.key, c.scope) for c in a.computed_state}
    assert "trigger[2].effect[7].regex" in rules(a)["RA201"]


def test_var_read_only_when_typed_var() -> None:
    m = Module({"name": "V", "trigger": [{"type": "output", "conditions": [], "effect": [
        {"type": "v2ShowAlert", "value": "plain words", "valueType": "value", "indent": 0},
        {"type": "v2Calculate", "expression": "$hp + 1", "expressionType": "value",
         "outputVar": "sum", "indent": 0}]}]})
    a = analyze(m)
    assert keys(a, "r") == {"hp"} and keys(a, "w") == {"sum"}


# -- 7. lowLevelAccess is the container's -------------------------------------------------

def lla_module(module_lla: bool, trigger_lla: bool, card: dict[str, Any] | None = None
               ) -> Module:
    return Module({"name": "L", "lowLevelAccess": module_lla, "trigger": [
        {"type": "start", "conditions": [], "lowLevelAccess": trigger_lla,
         "effect": [{"type": "triggerlua", "code": "function onStart(id) LLM(id, {}) end"}]}]},
        card=card)


def test_trigger_flag_grants_nothing() -> None:
    a = analyze(lla_module(False, True))
    assert "RA101" in rules(a) and "RA102" not in rules(a)
    assert "low_level_access" not in a.requires_names()
    assert "RA101" not in rules(analyze(lla_module(True, False)))


def test_embedded_module_runs_with_the_cards_flag() -> None:
    assert "RA101" in rules(analyze(lla_module(True, False, card={"low_level_access": False})))
    assert "RA101" not in rules(analyze(lla_module(False, False,
                                                   card={"low_level_access": True})))


# -- 9. patterns RisuAI runs ----------------------------------------------------------------

@pytest.mark.parametrize("pattern", [r"(.*a){12}", r"(.*a){2}", r"(\s*\w+){3}", r"(.+x){2,5}"])
def test_counted_ambiguous_groups(pattern: str) -> None:
    assert backtracking_risks(pattern)


@pytest.mark.parametrize("pattern", [r"(\d+,){3}", r"(a{1,3}){5}", r"(a|ab){3}", r"(.*a)?"])
def test_counted_safe_groups(pattern: str) -> None:
    assert not backtracking_risks(pattern)


def test_lorebook_regex_keys() -> None:
    got = rules(fixture())["RA201"]
    assert "lorebook[0].key" in got and "lorebook[1].key" in got
    assert "lorebook[2].key" not in got  # useRegex off: matched as text


# -- 10. CBS ---------------------------------------------------------------------------------

def test_cbs_computed_pure_and_cbs_flag() -> None:
    a = fixture()
    assert ("*", "chat") in {(c.key, c.scope) for c in a.computed_state}
    assert "after_pure" in keys(a, "w")
    assert not {"shown_only", "esc_only"} & keys(a, "w")
    assert {"needle", "slot"} <= keys(a, "r")


def test_pure_blocks_nest() -> None:
    names = [t.name for t in scan_cbs(
        "{{#pure}}{{#if 1}}{{setvar::a::1}}{{/if}}{{getvar::b}}{{/pure}}{{getvar::c}}").tags]
    assert names == ["#pure", "getvar"]
