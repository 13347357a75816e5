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


@pytest.mark.parametrize(("code", "key"), [
    ('local a, b = "hp", "mp"\nsetChatVar(id, b, 1)', "mp"),
    ('local a,b="hp","mp"\nsetChatVar(id, b, 1)', "mp"),
    ('x = f()\na, b = "hp", "mp"\nsetChatVar(id, b, 1)', "mp"),
    ('local a, b, c = "hp", "mp", "sp"\nsetChatVar(id, c, 1)', "sp"),
    ('local a, b, c = "hp", "mp", "sp"\nsetChatVar(id, b, 1)', "mp"),
    ('local a, b = "hp", "mp"\nsetChatVar(id, a, 1)', "hp"),
    ('if ok then a, b = "hp", "mp" end\nsetChatVar(id, b, 1)', "mp"),
    ('local a, b = x, "mp"\nsetChatVar(id, b, 1)', "mp"),  # (the skip path reads it too)
    ('local a, b = ("hp"), "mp" print(a)\nsetChatVar(id, b, 1)', "mp"),
    ('local a, b = f(x, "y"), "mp"\nsetChatVar(id, b, 1)', "mp"),
    ('local a <const>, b = "hp", "mp"\nsetChatVar(id, b, 1)', "mp"),  # (attributes: 5.4)
    ('local a, b <const> = "hp", "mp"\nsetChatVar(id, b, 1)', "mp"),
    ('local a <close>, b <const>, c = "hp", "mp", "sp"\nsetChatVar(id, c, 1)', "sp"),
    # a value's escaped bytes read as UTF-8, as every Lua string is
    ('local a, b = "hp", "\\237\\149\\156"\nsetChatVar(id, b, 1)', "한"),
    ('local a, b = "\\xed\\x95\\x9c", "mp"\nsetChatVar(id, a, 1)', "한"),
])
def test_each_name_of_a_list_is_given_its_own_value(code: str, key: str) -> None:
    """``local a, b = "hp", "mp"``: ``b`` is "mp" (it was once "hp", then nothing).  What
    the list reader does not follow leaves every name of the list computed: a function's
    body among the values, a target not read back (an escape in its brackets, a line
    comment before the list that could end in ``,`` or ``=``: where ``b`` stands is then
    not known)."""
    a = lua(code)
    assert [s.key for s in a.state] == [key]
    assert a.computed_state == []
    for other in ('local a, b = function() return "x", "y" end, "mp"',
                  't["a\\"b"], b = "hp", "mp"', '-- hp,\na, b = "hp", "mp"',
                  '-- x =\na, b = "hp", "mp"', '-- (\na, b = "hp", "mp"'):
        for name in "ab":
            got = lua(f"{other}\nsetChatVar(id, {name}, 1)")
            assert got.state == [] and [c.key for c in got.computed_state] == ["*"]


@pytest.mark.parametrize("code", [
    'local a, b = "hp"',  # b is nil
    'local a, b, c = "hp", f()',  # f's first result, then its second
    'local a, b = "hp", f()',
    'local a, b = "hp", "m" .. x',
    'local a, b = "hp", ("mp")',
    'local a, b = "hp", "mp":upper()',
    'local a, b = "hp", t["mp"]',
    'local a, b = "hp", "mp" .. "x"',
    'local a, b = "hp"\nprint("mp")',  # a new statement
    'local a, b = "hp"; x = "mp"',
    'local a, b = "hp" x, y = 1, "mp"',
])
def test_a_name_of_a_list_without_a_literal_of_its_own_is_computed(code: str) -> None:
    """The first name is "hp"; ``b`` has no literal of its own (nil, a call's result, an
    expression): computed, never the next literal met."""
    a = lua(code + "\nsetChatVar(id, a, 1)\nsetChatVar(id, b, 1)")
    assert [s.key for s in a.state] == ["hp"]
    assert [c.key for c in a.computed_state] == ["*"]


def test_a_name_a_list_gives_a_call_is_not_a_branch_chain() -> None:
    """``k`` assigned "hp" and "mp" in branches, and a call's result in a list: not the
    two literals only (a branch chain), but computed."""
    code = ('if a then k = "hp" elseif b then k = "mp" else x, k = f() end\n'
            'setChatVar(id, k, 1)')
    got = lua(code)
    assert [c.key for c in got.computed_state] == ["*"] and got.state == []
    both = lua('if a then k = "hp" elseif b then x, k = 1, "mp" end\nsetChatVar(id, k, 1)')
    assert sorted(s.key for s in both.state) == ["hp", "mp"]


def test_a_list_of_addresses_names_each() -> None:
    a = lua('local u1, u2 = "https://x.example/", "https://y.example/"\nrequest(id, u2)')
    assert [h.name for h in a.network_hosts] == ["y.example"]
    a = lua('local u1, u2 = "https://x.example/", g()\nrequest(id, u2)')
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
