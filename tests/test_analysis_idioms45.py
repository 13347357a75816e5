"""Lua idioms the analyser read wrongly or not at all: a host function read through a
field of the table of globals into a name (``local f = _G.request``) was a use of unknown
address (RA104), its calls unseen.  Every module here is our own."""

from __future__ import annotations

import pytest

from risutools.analysis import analyze
from risutools.analysis.model import Analysis
from risutools.formats.model import Module


def lua(code: str) -> Analysis:
    return analyze(Module({"name": "L", "id": "l", "trigger": [
        {"comment": "t", "type": "start", "conditions": [],
         "effect": [{"type": "triggerlua", "code": code}]}]}))


def hosts(code: str) -> tuple[set[str], set[str]]:
    a = lua(code)
    return {f.name for f in a.network_hosts}, {f.rule for f in a.findings}


@pytest.mark.parametrize(("assign", "call"), [
    ("local f = _G.request", "f"),
    ("local f = _ENV.request", "f"),
    ("f = _G.request", "f"),
    ("local G = _G\nlocal f = G.request", "f"),
    ("local t = {f = _G.request}", "t.f"),
    ("local t = {}\nt.f = _G.request", "t.f"),
    ("local a, f = 1, _G.request", "f"),
    ("local f <const> = _G.request", "f"),
])
def test_a_field_of_the_globals_read_into_a_name_is_an_alias(assign: str, call: str) -> None:
    """``local f = _G.request``: ``f`` is ``request`` (its calls' addresses read), as
    ``local f = _G["request"]`` and ``local f = request`` are."""
    got, rules = hosts(f'{assign}\n{call}("https://h.example/p")')
    assert got == {"h.example"} and "RA104" not in rules and "RA103" in rules
    # no alias: a field of the function (a use of it), another name's alias, a value in
    # parentheses
    for other in ("local f = _G.request.x", "local f = _G.print\nlocal g = _G.request",
                  "local f = (_G.request)"):
        got, _rules = hosts(f'{other}\nf("https://h.example/p")')
        assert "h.example" not in got


def test_state_functions_read_through_the_globals_read_their_keys() -> None:
    a = lua('local g = _G.getChatVar\nprint(g(id, "hp"))')
    assert [s.key for s in a.state] == ["hp"] and a.computed_state == []
