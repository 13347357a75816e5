"""Two ways a catastrophic pattern went unreported.  A pattern holding CBS tags: RisuAI
evaluates the tags first, and a tag may be evaluated to nothing, so ``(a+)+{{blank}}$`` is
``(a+)+$`` (once, a trigger's pattern holding ``{{`` went unchecked: the pattern hid
behind one empty tag).  A count whose minimum iterations may match nothing: ``(a?){30}``.
Every module here is our own, written for the idiom it tests."""

from __future__ import annotations

from typing import Any

import pytest

from risutools.analysis import analyze
from risutools.analysis.regexcheck import checked_risks
from risutools.formats.model import Module


def trigger(effects: list[dict[str, Any]], conditions: list[dict[str, Any]] | None = None
            ) -> list[str]:
    data = {"name": "T", "id": "t", "trigger": [
        {"comment": "t", "type": "output", "conditions": conditions or [], "effect": effects}]}
    return [f"{f.rule} {f.evidence}" for f in analyze(Module(data)).findings
            if f.rule in ("RA201", "RA202")]


@pytest.mark.parametrize("pattern", ["(a+)+{{blank}}$", "({{none}}a+)+$",
                                     "(a+){{// hidden}}+$", "(a+)+{{getvar::tail}}"])
@pytest.mark.parametrize(("effect", "field"), [
    ({"type": "v2RegexTest", "value": "x", "flags": "g", "outputVar": "o"}, "regex"),
    ({"type": "v2ReplaceString", "source": "x", "replacement": "y", "flags": "g",
      "outputVar": "o"}, "regex"),
    ({"type": "v2ExtractRegex", "value": "x", "flags": "g", "result": "$0",
      "outputVar": "o"}, "regex"),
])
def test_a_trigger_pattern_with_cbs_is_checked(pattern: str, effect: dict[str, Any],
                                               field: str) -> None:
    found = trigger([{**effect, field: pattern, "regexType": "value", "flagsType": "value"}])
    assert found == [f"RA201 trigger[0].effect[0].{field}"], found


@pytest.mark.parametrize("pattern", ["(c+)+{{blank}}$", "{{blank}}(c*)*x"])
def test_an_exists_condition_with_cbs_is_checked(pattern: str) -> None:
    cond = {"type": "exists", "type2": "regex", "value": pattern, "depth": 3}
    assert trigger([], [cond]) == ["RA201 trigger[0].conditions[0].value"]


@pytest.mark.parametrize("pattern", ["^{{getvar::name}}: (.*)$", "a{{blank}}b+c"])
def test_a_safe_pattern_with_cbs_stays_quiet(pattern: str) -> None:
    assert trigger([{"type": "v2RegexTest", "value": "x", "regex": pattern, "flags": "g",
                     "regexType": "value", "outputVar": "o"}]) == []
    assert trigger([], [{"type": "exists", "type2": "regex", "value": pattern}]) == []


def script(pattern: str, flag: str, able: bool = True) -> list[str]:
    data = {"name": "R", "id": "r", "regex": [{"comment": "r", "in": pattern, "out": "x",
                                               "type": "editoutput", "flag": flag,
                                               "ableFlag": able}]}
    return [f.rule for f in analyze(Module(data)).findings if f.rule in ("RA201", "RA202")]


@pytest.mark.parametrize("pattern", ["({{blank}}a+)+$", "(a{{none}}+)+$",
                                     "(a+){{// x}}+$"])
def test_a_regex_scripts_pattern_run_through_cbs_is_checked_as_evaluated(pattern: str) -> None:
    assert script(pattern, "g<cbs>") == ["RA201"]
    # without <cbs> (or with the directives off) the braces are text: `{{blank}}` must
    # match before each repetition, so the repetitions cannot split the text many ways
    assert script(pattern, "g") == []
    assert script(pattern, "g<cbs>", able=False) == []


def test_a_safe_cbs_pattern_of_a_script_stays_quiet() -> None:
    assert script("^{{getvar::n}}: (.+)$", "g<cbs>") == []


@pytest.mark.parametrize(("pattern", "risky"), [
    ("(a?){30}$", True), ("x(?:a?){24}y", True), (r"(\w?){40}x", True),
    ("(?:[ab]?){25}c", True), ("(a?){100000}$", True),
    ("(a?){23}$", False),  # 2^23 ways: under the bound
    ("(a?){0,30}$", False),  # past the minimum an empty iteration is cut: one way
    ("(a?)*$", False), ("(a|b){30}$", False), ("(ab?){30}$", False),
])
def test_a_count_whose_minimum_iterations_may_match_nothing(pattern: str, risky: bool) -> None:
    """JavaScript cuts an empty iteration only past a count's minimum: up to it each
    optional body is a choice, so ``(a?){30}`` against 29 a's and a stop tries 2^30 ways."""
    assert bool(checked_risks(pattern)) is risky


@pytest.mark.parametrize(("pattern", "risky"), [
    ("(a{1,2})*$", True),  # n characters split about 1.6 ** n ways
    ("(a{2,3})+$", True), ("(?:x{1,2})*y", True), ("(.{1,2})*$", True),
    ("(a{0,2})*$", True),
    ("(a?)*$", False),  # one width that consumes: an empty iteration is cut
    ("(a{3})*$", False), ("(a{1,2}b)*$", False), (r"(\w{1,2}\s)*$", False),
    ("(a{1,3}){5}$", False),  # a small count: 3 ** 5 ways
])
def test_two_widths_under_an_unbounded_repetition(pattern: str, risky: bool) -> None:
    """Under ``*``/``+`` (or a count past 16) a body of two widths that consume something
    splits the text in exponentially many ways; once only three or more widths counted
    (``(a{1,2})*`` went unreported)."""
    assert bool(checked_risks(pattern)) is risky


def cjs_rules(code: str) -> list[tuple[str, str]]:
    a = analyze(Module({"name": "J", "id": "j", "cjs": code}))
    return [(f.rule, f.evidence) for f in a.findings if f.rule in ("RA201", "RA202")]


@pytest.mark.parametrize("code", [
    "var r = /(a+)+$/g;\nr.test(x)",
    "var x = 1;\nif (/^(\\w+\\s?)*$/.test(s)) {}",
    "var r = /[/]+(b+)+/i",  # a slash inside a class does not end it
    "function f() { return /(a|a)*$/.exec(t) }",
])
def test_a_legacy_scripts_regex_literal_is_checked(code: str) -> None:
    """Legacy JavaScript (``cjs``) runs its regular expressions on chat text too: each
    literal goes through the same backtracking check (RA201; JavaScript syntax our parser
    does not know is not an RA202 there)."""
    line = 1 + code[:code.index("/")].count("\n") if "/(" in code or "/^" in code \
        or "/[" in code else 1
    assert cjs_rules(code) == [("RA201", f"cjs line {line}")]


@pytest.mark.parametrize("code", ["x = a / b / c", "var ok = /^[a-z]+$/",
                                  "var r = /(?<!x)y/u", "// (a+)+ in a comment"])
def test_a_legacy_script_without_a_risky_literal_is_quiet(code: str) -> None:
    assert cjs_rules(code) == []
