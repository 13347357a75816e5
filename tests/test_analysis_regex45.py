"""Regex scripts read as RisuAI runs them (scripts.ts ``executeScript``): the flag field
only when ``ableFlag`` is on (else ``g``), directives compared as written, and a script
whose pattern is empty never runs.  Every module here is our own."""

from __future__ import annotations

import pytest

from risutools.analysis import analyze
from risutools.analysis.model import Analysis
from risutools.formats.model import Module


def regex(**script: object) -> Analysis:
    return analyze(Module({"name": "R", "id": "r", "regex": [
        {"comment": "r", "in": "a", "out": "b", "type": "editoutput", **script}]}))


def rules(a: Analysis) -> set[str]:
    return {f.rule for f in a.findings}


@pytest.mark.parametrize("able", [None, False, 0, ""])
def test_the_flag_field_counts_only_with_able_flag(able: object) -> None:
    """Without ``ableFlag`` RisuAI runs the pattern with ``g`` whatever the field says:
    ``(a|A)+$`` with ``i`` in an unused field is no backtracking risk (it was RA201), and
    the field's unknown letters are no RA204."""
    extra = {} if able is None else {"ableFlag": able}
    assert "RA201" not in rules(regex(**{"in": "(a|A)+$", "flag": "gi", **extra}))
    assert "RA204" not in rules(regex(**{"flag": "gQ", **extra}))
    # with it on, the field is what RisuAI runs with
    assert "RA201" in rules(regex(**{"in": "(a|A)+$", "flag": "gi", "ableFlag": True}))
    assert "RA204" in rules(regex(**{"flag": "gQ", "ableFlag": True}))


def test_directives_are_compared_as_written() -> None:
    """``<inject>`` is a directive RisuAI acts on; ``<Inject>`` is none (it compares each
    as written), so it rewrites no chat message."""
    for flag, writes in (("g<inject>", True), ("g<cbs, inject>", True), ("g<Inject>", False),
                         ("g<INJECT>", False), ("g< inject >", True)):
        a = regex(flag=flag, ableFlag=True)
        assert ("chat.write" in a.requires_names()) == writes, flag


def test_a_script_with_an_empty_pattern_never_runs() -> None:
    """``if(script.in === '') return``: no hook, no state read from its output (both were
    counted), counted as ``regex_empty``; a pattern of one space does run."""
    a = regex(**{"in": "", "out": "{{setvar::hp::1}}<img src=x onerror=y>"})
    assert a.hook_names() == [] and a.state == [] and a.findings == []
    assert a.counts["regex_empty"] == 1
    b = regex(**{"in": " ", "out": "{{setvar::hp::1}}"})
    assert b.hook_names() == ["hook.edit_output"] and [s.key for s in b.state] == ["hp"]


@pytest.mark.parametrize("script", [
    {"in": "(a|A)+$", "flag": "gi" + "Q" * 100_000},
    {"in": "(a|A)+$", "flag": "gi" + "<" * 1000, "ableFlag": 0},
    {"in": "", "flag": 5, "out": 7, "ableFlag": True},
    {"in": "", "flag": "gQ" + "<x" * 10_000, "ableFlag": True, "type": "mystery"},
])
def test_bad_fields_of_scripts_risuai_ignores_give_no_finding(script: dict[str, object]
                                                              ) -> None:
    """Fields RisuAI does not read (a flag without ``ableFlag``, anything of a script with
    an empty pattern), however bad: no finding, no traceback."""
    assert regex(**script).findings == []


def set_twice(operator: object) -> list[tuple[str, int, int]]:
    e: dict[str, object] = {"type": "setvar", "var": "hp", "value": "1"}
    if operator is not None:
        e["operator"] = operator
    a = analyze(Module({"name": "T", "trigger": [{"type": "start", "conditions": [], "effect": [
        e, {**e, "type": "v2SetVar", "valueType": "value"}]}]}))
    return [(s.key, s.read_count, s.write_count) for s in a.state]


@pytest.mark.parametrize("operator", ["+=", "-=", "*=", "/=", "%="])
def test_a_set_that_updates_a_variable_reads_it(operator: str) -> None:
    """triggers.ts ``setvar``/``v2SetVar``: ``+=`` ... make the new value from the old one,
    so the variable is read as well as written (it was a write only); ``=``, no operator
    or an unknown one only write."""
    assert set_twice(operator) == [("hp", 2, 2)]
    for other in ("=", None, "x", 5):
        assert set_twice(other) == [("hp", 0, 2)]
