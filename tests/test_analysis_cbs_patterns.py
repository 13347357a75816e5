"""A pattern a trigger carries is checked even when it holds CBS tags: RisuAI evaluates the
tags first, and a tag may be evaluated to nothing, so ``(a+)+{{blank}}$`` is ``(a+)+$``
(once, any pattern holding ``{{`` went unchecked: a catastrophic pattern hid behind one
empty tag).  Every module here is our own, written for the idiom it tests."""

from __future__ import annotations

from typing import Any

import pytest

from risutools.analysis import analyze
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
