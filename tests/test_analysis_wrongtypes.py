"""Wrong-typed fields anywhere in a module are data, never a crash (issue 8).

The property test puts arbitrary JSON values (lists, objects, numbers, null, nested
wrong types) into every field of triggers, conditions, effects, lorebook and regex
entries and the module's top level, and asserts that analyze() and the projection
raise nothing but RisuError."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from risutools.analysis import analyze
from risutools.errors import RisuError
from risutools.formats.model import Module

_scalar = (st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True)
           | st.text(max_size=12)
           | st.sampled_from(["triggerlua", "triggercode", "setvar", "v2SetVar", "runLLM",
                              "start", "editinput", "var", "g<x>", "(a+)+", "{{getvar::k}}",
                              "\ud800", "a=b\nc=d=select=x,y"]))
_json = st.recursive(
    _scalar,
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(
        st.sampled_from(["type", "code", "var", "value", "in", "out", "flag", "content",
                         "effect", "conditions", "url", "x"]), kids, max_size=4),
    max_leaves=12,
)
_effect = st.one_of(_json, st.fixed_dictionaries({}, optional={
    "type": _json, "code": _json, "var": _json, "value": _json, "operator": _json}))
_condition = st.one_of(_json, st.fixed_dictionaries({}, optional={
    "type": _json, "var": _json, "value": _json, "operator": _json}))
_trigger = st.one_of(_json, st.fixed_dictionaries({}, optional={
    "type": _json, "comment": _json, "lowLevelAccess": _json,
    "conditions": st.one_of(_json, st.lists(_condition, max_size=3)),
    "effect": st.one_of(_json, st.lists(_effect, max_size=3))}))
_regex = st.one_of(_json, st.fixed_dictionaries({}, optional={
    "in": _json, "out": _json, "type": _json, "flag": _json, "comment": _json}))
_lore = st.one_of(_json, st.fixed_dictionaries({}, optional={
    "content": _json, "key": _json, "mode": _json}))
_module = st.fixed_dictionaries({}, optional={
    "name": _json, "id": _json, "description": _json, "namespace": _json, "cjs": _json,
    "trigger": st.one_of(_json, st.lists(_trigger, max_size=3)),
    "regex": st.one_of(_json, st.lists(_regex, max_size=3)),
    "lorebook": st.one_of(_json, st.lists(_lore, max_size=3)),
    "customModuleToggle": _json, "backgroundEmbedding": _json, "lowLevelAccess": _json,
    "mcp": st.one_of(_json, st.fixed_dictionaries({"url": _json})), "assets": _json,
})


def _analyze_and_project(data: dict[str, Any]) -> None:
    from risutools.canonical import canonical
    from risutools.projection import project

    try:
        a = analyze(Module(data))
        json.dumps(a.to_dict())
        canonical(project(Module(data), analysis=a))
    except RisuError:
        pass


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_module)
# a trigger whose first effect's type is a list: never a key of the code effects' set
@example(data={"trigger": [{"comment": "", "effect": [{"type": []}]}]})
def test_any_json_in_any_field_is_data(data: dict[str, Any]) -> None:
    _analyze_and_project(data)


@pytest.mark.parametrize("value", [[], {}, 3, 2.5, None, True, [[]], {"a": []}, ["x"]])
@pytest.mark.parametrize("where", ["effect.type", "effect.code", "effect.var", "trigger.type",
                                   "condition.type", "condition.var", "condition.value",
                                   "regex.type", "regex.flag", "regex.in", "regex.out",
                                   "lore.content", "mcp.url"])
def test_each_wrong_type_is_data(where: str, value: Any) -> None:
    effect: dict[str, Any] = {"type": "triggerlua", "code": "x()", "var": "v"}
    cond: dict[str, Any] = {"type": "var", "var": "v", "value": "1", "operator": "="}
    trig: dict[str, Any] = {"type": "start", "conditions": [cond], "effect": [effect]}
    regex: dict[str, Any] = {"type": "editinput", "flag": "g", "in": "a", "out": "b"}
    lore: dict[str, Any] = {"content": "{{getvar::k}}"}
    mcp: dict[str, Any] = {"url": "https://h.example"}
    part, _, key = where.partition(".")
    {"effect": effect, "condition": cond, "trigger": trig, "regex": regex, "lore": lore,
     "mcp": mcp}[part][key] = value
    data = {"name": "m", "trigger": [trig], "regex": [regex], "lorebook": [lore], "mcp": mcp}
    a = analyze(Module(data))  # must not raise
    json.dumps(a.to_dict())
    if part == "effect" and key == "type":
        assert any(f.rule == "RA801" and f.pointer == "/trigger/0/effect/0/type"
                   for f in a.findings)


def test_unhashable_effect_type_next_to_code_effects() -> None:
    # the crash of issue 8: a list as an effect type made the "all code" test raise
    data = {"trigger": [{"type": "start", "effect": [{"type": []}, {"type": {}}]}]}
    a = analyze(Module(data))
    pointers = sorted(f.pointer for f in a.findings if f.rule == "RA801")
    assert pointers == ["/trigger/0/effect/0/type", "/trigger/0/effect/1/type"]


def _effect_fields() -> list[tuple[str, str]]:
    """(effect type, field) for every field an effect row of the table names, its
    ``<field>Type`` and ``operator`` (what ``read_effect`` reads of an effect)."""
    from risutools.analysis.walk_effects import effect_table

    out = []
    for etype, row in effect_table().items():
        names = {*row.reads, *row.writes, *row.updates, *row.typed, *row.html, *row.calc,
                 *row.regex, *row.regex_if, "operator", "value", "target"}
        names |= {f"{n}Type" for n in row.typed}
        names |= {c.partition("=")[0] for c in row.regex_if.values()}
        out += [(etype, n) for n in sorted(names)]
    return out


_WRONG = [[], {}, ["+="], {"a": "+="}, 3, None, True]


@pytest.mark.parametrize(("etype", "field"), _effect_fields())
def test_every_field_of_every_effect_type_may_hold_any_json(etype: str, field: str) -> None:
    """Each field each effect type's row names (and its ``...Type`` and ``operator``), as
    each wrong JSON type, alone and after a code effect (the every-event test reads the
    later effects' types): data, never a crash (a list as an operator raised TypeError)."""
    for value in _WRONG:
        effect: dict[str, Any] = {"type": etype, "var": "v", "value": "1", field: value}
        for effects in ([effect], [{"type": "triggerlua", "code": "x()"}, effect],
                        [{"type": "triggerlua", "code": "x()"}, {"type": value}]):
            data = {"trigger": [{"type": "start", "conditions": [], "effect": effects}]}
            _analyze_and_project(data)
