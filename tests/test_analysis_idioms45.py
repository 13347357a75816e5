"""Lua idioms the analyser read wrongly or not at all: a host function read through a
field of the table of globals into a name (``local f = _G.request``) was a use of unknown
address (RA104), its calls unseen.  Every module here is our own."""

from __future__ import annotations

import time

import pytest
from analysis_support import lua


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


def computed(code: str) -> tuple[list[str], list[str]]:
    a = lua(code)
    return [s.key for s in a.state], [c.key for c in a.computed_state]


@pytest.mark.parametrize(("value", "key"), [
    ('"pvc_" .. idx', "pvc_*"),
    ("'pvc_' .. idx .. '_on'", "pvc_*_on"),
    ('"pvc_" .. tostring(idx)', "pvc_*"),
    ('"pvc_" .. t.x .. "_" .. f(y)', "pvc_*_*"),
    ('string.format("pvc_%s", idx)', "pvc_*"),
    ('string.format("pvc_%d_%s", n, "on")', "pvc_*_on"),
    ('("pvc_%s"):format(idx)', "pvc_*"),
    ('string.format("%s_%%", "hp")', "hp_%"),
    ('("pvc_" .. idx)', "pvc_*"),
])
def test_a_name_assigned_one_template_is_read_as_it(value: str, key: str) -> None:
    """``local key = "pvc_" .. idx`` then ``setChatVar(id, key, v)``: the key is
    ``pvc_*`` (it was ``*``, so a module's writes and reads of one variable family did not
    meet); a format call as the key itself too."""
    got = computed(f"local key = {value}\nsetChatVar(id, key, 1)")
    assert got == (([key], []) if "*" not in key else ([], [key]))
    got = computed(f"setChatVar(id, {value}, 1)")
    assert got == (([key], []) if "*" not in key else ([], [key]))


def test_a_template_of_constants_is_a_key() -> None:
    assert computed('local P = "hp"\nlocal key = P .. "_max"\nsetChatVar(id, key, 1)') == (
        ["hp_max"], [])


def test_a_format_of_a_helper_parameter_is_followed_through_the_helper() -> None:
    code = ('local function bump(n) setChatVar(id, string.format("k_%s", n), 1) end\n'
            'bump("a") bump("b")')
    assert computed(code) == (["k_a", "k_b"], [])


@pytest.mark.parametrize("code", [
    'local key = "pvc_" .. idx\nkey = key .. "x"',  # assigned twice
    'local key = "pvc_" .. idx\nlocal key = "pvc_" .. other',
    'for _, key in ipairs(t) do end\nlocal key = "pvc_" .. idx',  # a loop's variable
    'for key = 1, 3 do end\nlocal key = "pvc_" .. idx',
    'local function f(key) return key end\nlocal key = "pvc_" .. idx',  # a parameter
    'key = "pvc_" .. idx',  # not declared local here
    'local a, key = "pvc_" .. idx, y',  # a list: its first value is a's
    'local key = "pvc_" .. idx + 1',  # arithmetic
    'local key = "pvc_" .. idx or "x"',
    'local key = string.format(fmt, idx)',  # a format that is not a literal
    'local key = ("pvc_" .. idx):upper()',
    '-- local key = "pvc_" .. idx',  # a comment
    'x = 1 -- local key = "pvc_" .. idx',
])
def test_what_is_not_one_template_stays_computed(code: str) -> None:
    """Never a template where the name may hold something else: two assignments, a loop's
    variable, a parameter, a list, an expression that is not a concatenation."""
    assert computed(f"{code}\nsetChatVar(id, key, 1)") == ([], ["*"])
    assert computed('local key = "pvc_" .. idx\nsetChatVar(id, key, 1)') == ([], ["pvc_*"])


@pytest.mark.parametrize(("value", "host"), [
    ('"https://h.example/q?d=" .. secret', "h.example"),
    ('string.format("https://h.example/%s", p)', "h.example"),
    ('"https://h.exa" .. tld', "(computed at run time)"),  # the host goes on: not known
])
def test_a_request_address_assigned_as_a_template(value: str, host: str) -> None:
    """``local url = "https://h.example/q?d=" .. secret`` then ``request(id, url)``: the
    host is h.example (it was computed at run time, RA104)."""
    got, rules = hosts(f"local url = {value}\nrequest(id, url)")
    assert got == {host}
    assert ("RA104" in rules) == (host.startswith("("))
    assert hosts('local u = "https://h.example/" .. q\nrequest(id, u)')[0] == {"h.example"}


@pytest.mark.parametrize("value", [
    '"a" .. ' + " .. ".join(["x"] * 5000),
    '"a" .. ' + "(" * 3000 + "x" + ")" * 3000,
    "string.format(" + '"%s"' + ", x" * 5000 + ")",
    '"a" .. f' + "(" * 5000,
    '"' + "a" * 100_000 + '" .. x',
])
def test_reading_templates_is_bounded(value: str) -> None:
    """Long chains, deep parentheses, many arguments, a huge literal: read within the
    reader's bounds (then not a template: computed), in time."""
    began = time.perf_counter()
    names = "\n".join(f"local k{i} = {value}\nsetChatVar(id, k{i}, 1)" for i in range(3))
    many = "\n".join(f'local n{i} = "p{i}_" .. x\nsetChatVar(id, n{i}, 1)'
                     for i in range(100))
    got = computed(names + "\n" + many)
    assert "*" in got[1] and "p0_*" in got[1]
    assert len([k for k in got[1] if k.startswith("p")]) == 64 - 3  # (MAX_TEMPLATE_NAMES)
    assert time.perf_counter() - began < 10


@pytest.mark.parametrize(("key", "want"), [
    ('("hp"):upper()', (["HP"], [])),
    ('string.upper("hp")', (["HP"], [])),
    ('table.concat({"h", "p"})', (["hp"], [])),
    ('table.concat({"h", "p"}, "_")', (["h_p"], [])),
    ('("h"):rep(2)', (["hh"], [])),
    ('("hp")', (["hp"], [])),
    ('("HP"):lower() .. "_" .. x', ([], ["hp_*"])),
    ('string.upper(x) .. "_hp"', ([], ["*_hp"])),
    ('("hp" .. x):upper() .. ("a"):upper()', ([], ["*A"])),  # (a template's case: not known)
    ('("%s_hp"):format(("a"):upper())', (["A_hp"], [])),
])
def test_a_key_built_by_string_functions_of_literals_is_folded(
        key: str, want: tuple[list[str], list[str]]) -> None:
    """``setChatVar(id, ("hp"):upper(), v)`` writes ``HP`` (it was ``*``): the string
    functions the folder knows, of literals and constants, as a key or as one operand of
    a template; through a name declared once too."""
    assert computed(f"setChatVar(id, {key}, 1)") == want
    assert computed(f"local k = {key}\nsetChatVar(id, k, 1)") == want


@pytest.mark.parametrize(("define", "call", "want"), [
    ("function api.get(id, k) return getChatVar(id, k) end", 'api.get(id, "hp")', "hp"),
    ("function M:get(k) return getChatVar(self.id, k) end", 'M:get("hp")', "hp"),
    ("function M:get(k) return getChatVar(self.id, k) end", 'M.get(M, "hp")', "hp"),
    ("function M.get(s, k) return getChatVar(s.id, k) end", 'M:get("hp")', "hp"),
    ("function M.put(id, k) setChatVar(id, 'p_' .. k, 1) end", 'M.put(id, "hp")', "p_hp"),
    ("function M . get ( id , k ) return getChatVar(id, k) end", 'M . get(id, "hp")', "hp"),
])
def test_helpers_that_are_fields_of_a_table_are_followed(define: str, call: str,
                                                         want: str) -> None:
    """``function api.get(id, k) ... getChatVar(id, k)`` called as ``api.get(id, "hp")``:
    the key is ``hp`` at the call (it was ``*``); a method's ``self`` counts as its first
    parameter, whichever way it is called."""
    code = f"local M, api = {{}}, {{}}\n{define}\nprint({call})"
    assert computed(code) == ([want], [])


@pytest.mark.parametrize("call", [
    'other.get(id, "hp")',  # another table's field of that name
    'get(id, "hp")',  # a plain name: another function
    'a.M.get(id, "hp")',  # a deeper field
])
def test_a_field_helper_is_given_only_its_own_calls(call: str) -> None:
    code = f"local M = {{}}\nfunction M.get(id, k) return getChatVar(id, k) end\nprint({call})"
    assert computed(code) == ([], ["*"])
    ok = 'local M = {}\nfunction M.get(id, k) return getChatVar(id, k) end\nM.get(id, "hp")'
    assert computed(ok) == (["hp"], [])


def test_a_helper_given_a_field_constant_reads_it_as_a_state_call_does() -> None:
    """``put(id, K.hp)`` with ``K = {hp = "stat_hp"}``: ``stat_hp``, as
    ``setChatVar(id, K.hp, v)`` already read it (it was ``*``); a field with two values is
    not known."""
    helper = "local function put(id, k) setChatVar(id, k, 1) end\nput(id, K.hp)"
    assert computed(f'local K = {{hp = "stat_hp"}}\n{helper}') == (["stat_hp"], [])
    two = f'local K = {{hp = "stat_hp"}}\nlocal L = {{hp = "x"}}\n{helper}'
    assert computed(two) == ([], ["*"])


@pytest.mark.parametrize(("arg", "host"), [
    ('string.format("https://h.example/%s", p)', "h.example"),
    ('("https://h.example/%s?x=%s"):format(p, q)', "h.example"),
    ('("HTTPS://H.EXAMPLE/"):lower()', "h.example"),
    ('string.format("%s/x", base)', "(computed at run time)"),  # the host is built
    ('string.format("https://h.exa%s/", tld)', "(computed at run time)"),
])
def test_a_request_address_built_in_the_call(arg: str, host: str) -> None:
    """``request(id, string.format("https://h.example/%s", p))``: the host is h.example
    (it was computed at run time, RA104)."""
    got, rules = hosts(f"request(id, {arg})")
    assert got == {host} and ("RA104" in rules) == host.startswith("(")
    assert hosts('request(id, ("https://h.example/%s"):format(p))')[0] == {"h.example"}
