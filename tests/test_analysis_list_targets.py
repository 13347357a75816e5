"""Lists of targets being assigned in Lua, paired with their values by place.  A target that
is not a plain name (``t[k], b = "x", "y"``, ``t.f, b = ...``, ``a, t[k], b = ...``) once
gave ``b`` the first value ("x"), or the whole list nothing; a host function among the
values (``local a, b = request, x``) was an alias of the last name, whatever its place.
Every module here is our own."""

from __future__ import annotations

import time

import pytest
from analysis_support import lua

from risutools.analysis.lualists import UNKNOWN, name_list


def keys(code: str) -> tuple[list[str], list[str]]:
    a = lua(code)
    return [s.key for s in a.state], [c.key for c in a.computed_state]


@pytest.mark.parametrize(("targets", "values", "key"), [
    ("t[k], b", '"x", "y"', "y"),
    ("t.f, b", '"x", "y"', "y"),
    ("t[k][j], b", '"x", "y"', "y"),
    ("t.a.b[1], b", '"x", "y"', "y"),
    ("t [ k ] , b", '"x", "y"', "y"),
    ("a, t[k], b", '"x", "y", "z"', "z"),
    ("t[k], a, b", '"x", "y", "z"', "z"),
    ("f(x).y, b", '"x", "y"', "y"),
    ("f(x)[1], b", '"x", "y"', "y"),
    ("(t)[k], b", '"x", "y"', "y"),
    ("t[f(k)], b", '"x", "y"', "y"),
    ("t[k], b", 'f(), "y"', "y"),  # (the skip path stops at the list too)
    ("t[k], b", 'x, "y"', "y"),
    ("t.f, b", 'x, "y"', "y"),
    ("t[k], a, b", 'x, y, "z"', "z"),
    ("t[k], b", '"x", "y", "z"', "y"),  # more values than targets: the rest dropped
    ("t[k], b", '"x" .. c, "y"', "y"),
    ("local t <const>, a <close>, b", 'x, y, "z"', "z"),
    ("_G[k], b", 'x, "y"', "y"),
    ('t["a,b"], b', '"x", "y"', "y"),
    ("t[\"]\" .. 'x[' .. \"'\"], b", '"x", "y"', "y"),
    ('_G["k"], b', '"x", "y"', "y"),
])
def test_each_target_is_given_the_value_at_its_place(targets: str, values: str,
                                                     key: str) -> None:
    """``t[k], b = "x", "y"``: ``b`` is "y" (it was "x": the index was not counted)."""
    assert keys(f"{targets} = {values}\nsetChatVar(id, b, 1)") == ([key], [])


@pytest.mark.parametrize(("targets", "values"), [
    ("t[k], b", '"x"'),  # fewer values: b is nil
    ("a, t[k], b", '"x", "y"'),
    ("t[k], b", '"x", f()'),
    ("t[k], b", '"x", "y" .. c'),
    ("t[k], b", '"x", "y" and c'),
    ("t[k], b", '"x", "y" == c'),
    ('t["a\\"b"], b', '"x", "y"'),  # an escape inside the brackets: not read back
    ("t['\n'], b", '"x", "y"'),
    ("t[ [[a]] ], b", '"x", "y"'),
    ("t[k --[[c]] ], b", '"x", "y"'),
])
def test_a_target_without_a_literal_of_its_own_is_computed(targets: str, values: str) -> None:
    """Never the first literal met: ``b`` has none of its own (nil, a call's result, an
    expression), or its place in the list is not known (computed)."""
    assert keys(f"{targets} = {values}\nsetChatVar(id, b, 1)") == ([], ["*"])


@pytest.mark.parametrize("before", ["-- hp,\n", "-- x =\n", "-- f(\n", "-- {\n"])
def test_a_comment_before_a_list_is_no_target(before: str) -> None:
    """``-- hp,`` on the line before ``a, b = "x", "y"`` was read as a target (``a`` then
    "y"); ``-- x =`` made the list a value (``b`` "x").  Where the list starts is then not
    known: computed."""
    for name in "ab":
        code = f'{before}a, b = "x", "y"\nsetChatVar(id, {name}, 1)'
        assert keys(code) == ([], ["*"])
    assert keys('-- note\na, b = "x", "y"\nsetChatVar(id, b, 1)') == (["y"], [])


@pytest.mark.parametrize("code", [
    'local k = "hp" and x', 'local k = "hp" or x', 'local k = "hp" == x',
    'local k = "hp" ~= x', 'local k = "hp" < x', 'k = "hp" and x',
    'local a, k = 1, "hp" and x',
])
def test_a_literal_that_starts_an_expression_is_not_its_value(code: str) -> None:
    """``local k = "hp" and x`` is ``x`` (or false): not the constant "hp"."""
    assert keys(f"{code}\nsetChatVar(id, k, 1)") == ([], ["*"])


def hosts(code: str) -> tuple[set[str], set[str]]:
    a = lua(code)
    return {f.name for f in a.network_hosts}, {f.rule for f in a.findings}


@pytest.mark.parametrize(("targets", "values", "called"), [
    ("local a, b", "request, x", "a"),
    ("local a, b", "x, request", "b"),
    ("a, b", "x, request", "b"),
    ("local a, b, c", "x, y, request", "c"),
    ("t[k], b", '"x", request', "b"),
    ("t[k], b", "x, request", "b"),
    ("t.f, b", "x, request", "b"),
    ("local a, b", 'x, _G["request"]', "b"),
])
def test_a_host_function_in_a_list_is_an_alias_of_its_own_target(
        targets: str, values: str, called: str) -> None:
    """``local a, b = request, x``: ``a`` is ``request`` (its calls' addresses read); it
    was ``b`` (a field ``.b``), and ``local a, b = x, request`` a use of unknown address."""
    got, rules = hosts(f'{targets} = {values}\n{called}("https://h.example/p")')
    assert got == {"h.example"} and "RA104" not in rules
    other = "b" if called == "a" else "a"
    got, rules = hosts(f'{targets} = {values}\n{other}("https://h.example/p")')
    assert got == set()


def test_state_functions_aliased_in_a_list_read_their_keys() -> None:
    code = 'local g, s = getChatVar, setChatVar\ns(id, "hp", 1)\nprint(g(id, "mp"))'
    assert keys(code) == (["hp", "mp"], [])


def test_name_list_reads_targets_back() -> None:
    """The reader itself: plain names, ``""`` for a field or an index, None for a table's
    field, ``[UNKNOWN]`` where it cannot read back."""
    def at(code: str) -> list[str] | None:
        return name_list(code, code.rindex("b ="))
    assert at("a, t[k], b = 1") == ["a", ""]
    assert at("x = 1\nt.f.g, b = 1") == [""]
    assert at("{t[1], b = 1}") is None
    assert at("{f(x), b = 1}") is None
    assert at("{1, b = 1}") is None
    assert at("f(a, b = 1)") is None
    assert at('t["]"], b = 1') == [""]
    assert at('t["\\"]"], b = 1') == [UNKNOWN]
    assert at("t[ [[a]] ], b = 1") == [UNKNOWN]
    assert at("t[k)], b = 1") == [UNKNOWN]  # (a bracket closed by the wrong one)
    assert at("nil, b = 1") is None
    assert at("{x = a + c, b = 1}") == [UNKNOWN]  # (``c`` is no target)
    assert keys('local C = {x = a + b, c = "y"}\nsetChatVar(id, b, 1)') == ([], ["*"])
    # a table's field after a value is still a field (a constant read through ``C.b``)
    for table in ('{t[1], b = "y"}', '{f(x), b = "y"}', '{[1] = v, b = "y"}'):
        assert keys(f"local C = {table}\nsetChatVar(id, C.b, 1)") == (["y"], [])


@pytest.mark.parametrize("hostile", [
    "t" + "[k]" * 5000 + ", b = 1",
    "t" + ".f" * 5000 + ", b = 1",
    "(" * 5000 + "t" + ")" * 5000 + "[k], b = 1",
    ", ".join(f"t[{i}]" for i in range(5000)) + ", b = 1",
    "t[" + "(" * 5000 + ", b = 1",
    "t" + "]" * 20000 + ", b = 1",
])
def test_reading_targets_back_is_bounded(hostile: str) -> None:
    """Long chains, deep brackets, long lists: read back at most a bounded reach (then not
    known), in time."""
    began = time.perf_counter()
    got = name_list(hostile, hostile.rindex("b ="))
    assert got is None or got == [UNKNOWN] or len(got) <= 200
    code = (hostile + "\n") * 50 + 't[k], b = "x", "y"\nsetChatVar(id, b, 1)'
    assert keys(code)[0] == ["y"]
    assert time.perf_counter() - began < 5
