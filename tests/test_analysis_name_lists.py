"""Two Lua/JS readings that named the wrong thing.  The last name of a list being assigned
(``local a, b = "hp", "mp"``) was given the first value: ``b`` read as the constant "hp"
(a state key, a request address, a function attributed to the wrong name).  And the host of
an ``http(s)`` address in a Lua or JavaScript string was its user info
(``https://user@h.example``: ``user``).  Every module here is our own."""

from __future__ import annotations

import pytest

from risutools.analysis import analyze
from risutools.analysis.model import Analysis
from risutools.formats.model import Module


def lua(code: str, **extra: object) -> Analysis:
    return analyze(Module({"name": "L", "id": "l", **extra, "trigger": [
        {"comment": "t", "type": "start", "conditions": [],
         "effect": [{"type": "triggerlua", "code": code}]}]}))


@pytest.mark.parametrize("code", [
    'local a, b = "hp", "mp"\nsetChatVar(id, b, 1)',
    'local a,b="hp","mp"\nsetChatVar(id, b, 1)',
    'x = f()\na, b = "hp", "mp"\nsetChatVar(id, b, 1)',
    'local a, b, c = "hp", "mp", "sp"\nsetChatVar(id, c, 1)',
    'local a, b = "hp"\nsetChatVar(id, b, 1)',  # b is nil
    'if ok then a, b = "hp", "mp" end\nsetChatVar(id, b, 1)',
])
def test_the_last_of_a_list_is_not_given_the_first_value(code: str) -> None:
    a = lua(code)
    assert "hp" not in [s.key for s in a.state]
    assert [c.key for c in a.computed_state] == ["*"]


def test_a_list_of_addresses_does_not_name_the_first() -> None:
    a = lua('local u1, u2 = "https://x.example/", "https://y.example/"\nrequest(id, u2)')
    assert [h.name for h in a.network_hosts] == ["(computed at run time)"]


@pytest.mark.parametrize(("code", "key"), [
    ('local a = "hp"\nsetChatVar(id, a, 1)', "hp"),
    ('local K = {hp = "hp_val", mp = "mp_val"}\nsetChatVar(id, K.mp, 1)', "mp_val"),
    ('local K = {a = x, mp = "mp_val"}\nsetChatVar(id, K.mp, 1)', "mp_val"),
    ('local K = {f(), mp = "mp_val"}\nsetChatVar(id, K.mp, 1)', "mp_val"),
])
def test_a_single_name_and_table_fields_are_still_constants(code: str, key: str) -> None:
    assert [s.key for s in lua(code).state] == [key]


@pytest.mark.parametrize("text", [
    "https://user@h.example/x", "https://u:pw@h.example:8080/", "HTTPS://H.EXAMPLE.",
    "https://h.example에서",
])
def test_the_host_of_a_lua_and_a_js_string_is_the_authoritys(text: str) -> None:
    a = lua(f'local s = "{text}"', cjs=f'var s = "{text}";')
    assert {h.name for h in a.url_hosts} == {"h.example"}
    where = {e.split(" ")[0].split("[")[0] for h in a.url_hosts for e in h.evidence}
    assert "cjs" in where and "trigger" in where, where
