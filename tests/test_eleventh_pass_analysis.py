"""Findings of the eleventh pass (static analyser), each a test that fails before its fix:

* (1) an event-handler attribute whose name has more than 30 letters after ``on`` was no
  handler (RA302): ``oncontentvisibilityautostatechange`` (32 letters) runs its code with
  no user action in Chromium (``<x oncontentvisibilityautostatechange=f()
  style=display:block;content-visibility:auto>``), in a regex output, the background, a
  greeting, a Lua-built string or with CBS inside its name alike;
* (2) the CBS of a text a Lua script hands to RisuAI's ``cbs(text)`` was not read:
  ``cbs("{{getvar::hp}}")`` read no variable, ``cbs("{{getglobalvar::toggle_dark}}")``
  required no toggle (its literal argument was not even kept); now its reads are keys at
  the call's line (a literal, a constant, a folded text, through ``pcall`` or an alias),
  and its ``setvar`` none (RisuAI runs it without ``runVar``);
* (3) a privileged call in a function an edit listener calls (``listenEdit("editOutput",
  function(id, v) ask(id) ... end)`` with ``ask`` calling ``LLM``) gave no RA101, nor a
  ``setChat`` in a function an ``editDisplay`` listener calls RA106: only calls written in
  the listener's own body were read as the listener's, where RisuAI hands the same access
  key (without lowLevelAccess, no safe id for a display) to every function it calls;
* (4) a pattern JavaScript's RegExp refuses only with the ``u`` or ``v`` flag (``\\-``,
  ``[\\w-a]``, ``\\2`` with one group, ``\\k<m>`` naming no group, a lone ``]``, the flags
  ``uv`` ...) was checked as the lenient grammar reads it and gave nothing, where RisuAI's
  ``new RegExp`` throws and the script never runs: now RA202, as ``[abc`` is;
* (5) likewise in every mode, a braced quantifier with nothing to repeat (``{2}``,
  ``a|{1,3}``, ``({2,})``) and a quantified lookbehind (``(?<=a)*``), read as text.
"""

from __future__ import annotations

import time

import pytest
from analysis_support import lua
from test_ninth_pass_html import module, regex_out, rules

from risutools.analysis import analyze
from risutools.analysis.htmlscan import scan_html
from risutools.formats.model import Module

# -- 1: a handler's name of any length -------------------------------------------------------

LONG = "oncontentvisibilityautostatechange"


@pytest.mark.parametrize("html", [
    f"<x {LONG}=alert(1) style=display:block;content-visibility:auto>",
    f'<div {LONG.upper()}="f()">',
    f"<div o{{{{blank}}}}{LONG[1:]}=f()>",
    '<div onaveryveryverylongeventnamethatnobodyhas="f()">',
])
def test_a_handler_of_any_length_is_a_handler(html: str) -> None:
    assert "RA302" in rules(regex_out(html))
    assert "RA302" in rules(module(backgroundEmbedding=html))


def test_a_lua_built_long_handler_is_a_handler() -> None:
    a = lua(f'listenEdit("editDisplay", function(id, t) return t .. "<x {LONG}=" '
            '.. getChatVar(id, "c") .. ">" end)')
    assert "RA302" in rules(a)


@pytest.mark.parametrize("html", ['<div on="x">', '<div o="x">', f"<div {LONG}>",
                                  '<div one-day="x">', '<div data-onclick="x">'])
def test_what_is_no_handler_stays_none(html: str) -> None:
    assert scan_html(html).handler_lines == []


def test_a_long_attribute_name_is_read_in_linear_time() -> None:
    t0 = time.perf_counter()
    scan_html("<div on" + "a" * 1_000_000 + "=x>" + "<i on" + "b" * 40 + "=y>" * 20_000)
    assert time.perf_counter() - t0 < 10


# -- 2: the CBS a script has RisuAI evaluate with cbs(text) ------------------------------------

def _state(code: str) -> set[tuple[str, str, bool, bool]]:
    return {(k.scope, k.key, bool(k.reads), bool(k.writes)) for k in lua(code).state}


@pytest.mark.parametrize("code", [
    'local v = cbs("{{getvar::hp}}")',
    'local ok, v = pcall(cbs, "{{getvar::hp}}")',
    'local T = "{{getvar::hp}}"\nlocal v = cbs(T)',
    'local v = cbs("{{get" .. "var::hp}}")',
    'local v = cbs(string.rep("{", 2) .. "getvar::hp" .. string.rep("}", 2))',
    'local c = cbs\nlocal v = c("{{getvar::hp}}")',
    'local v = cbs("{{? $hp + 1}}")',
    'local v = cbs("{{#when::var::hp}}a{{/when}}")',
])
def test_a_variable_read_by_cbs_a_script_evaluates_is_read(code: str) -> None:
    assert ("chat", "hp", True, False) in _state(code)
    assert "chat_state_kv" in {c.name for c in lua(code).requires}


def test_a_toggle_read_by_cbs_a_script_evaluates_is_required() -> None:
    a = lua('local v = cbs("{{getglobalvar::toggle_dark}}{{#when::toggle::night}}n{{/when}}")')
    assert {f.name for f in a.required_toggles} == {"dark", "night"}
    assert {("global", "toggle_dark"), ("global", "toggle_night")} <= {
        (k.scope, k.key) for k in a.state}
    assert all(e == "trigger[0].effect[0] line 1"
               for f in a.required_toggles for e in f.evidence)


@pytest.mark.parametrize("code", [
    'local v = cbs("{{setvar::w::1}}{{addvar::w::1}}{{setdefaultvar::w::1}}")',
    'local v = cbs("{{#pure}}{{getvar::w}}{{/pure}}")',
    'local v = cbs(text)',
    'local v = other("{{getvar::w}}")',
    '-- cbs("{{getvar::w}}")',
])
def test_what_cbs_neither_reads_nor_writes_is_no_key(code: str) -> None:
    # setvar, addvar and setdefaultvar do nothing without runVar (cbs.ts); RisuAI's cbs()
    # passes none (scriptings.ts)
    assert not {k for k in _state(code) if k[1] == "w"}


def test_cbs_a_script_evaluates_is_read_in_linear_time() -> None:
    deep = ("{{getvar::" * 60 + "k" + "}}" * 60) * 2_000  # (64 levels read, no more)
    wide = "{{getvar::a}}" * 100_000
    t0 = time.perf_counter()
    assert ("chat", "k", True, False) in _state(f'local v = cbs("{deep}")')
    assert ("chat", "a", True, False) in _state(f'local v = cbs("{wide}")')
    assert time.perf_counter() - t0 < 20


# -- 3: a function an edit listener calls runs as the listener ------------------------------

def _hits(code: str, rule: str, lla: bool = True) -> list[str]:
    a = analyze(Module({"name": "L", "id": "l", "lowLevelAccess": lla, "trigger": [
        {"comment": "t", "type": "start", "conditions": [],
         "effect": [{"type": "triggerlua", "code": code}]}]}))
    return [f.evidence for f in a.findings if f.rule == rule]


ASK = "local function ask(id) return LLM(id, {}) end\n"


@pytest.mark.parametrize("listener", [
    'listenEdit("editOutput", function(id, v) local r = ask(id) return v end)',
    'listenEdit("editOutput", function(id, v) pcall(ask, id) return v end)',
    'local function h(id, v) ask(id) return v end\nlistenEdit("editOutput", h)',
    'local function mid(id) return ask(id) end\n'
    'listenEdit("editInput", function(id, v) mid(id) return v end)',
    'function ask2(id) ask(id) end\nfunction onOutput(id) ask2(id) end\n'
    'listenEdit("editOutput", function(id, v) ask2(id) return v end)',
])
def test_a_privileged_call_a_listener_reaches_through_a_function_is_refused(
        listener: str) -> None:
    # RisuAI gives the listener an access key without lowLevelAccess; the function it
    # calls gets that key, and LLM refuses it (scriptings.ts runScripted, runLuaEditTrigger)
    got = _hits(ASK + listener, "RA101")
    assert len(got) == 1 and got[0].startswith("trigger[0].effect[0] line 1 via line ")


def test_the_via_line_is_the_call_in_the_listeners_code() -> None:
    code = ASK + "local function mid(id) return ask(id) end\n\n" \
        'listenEdit("editOutput", function(id, v)\n  mid(id)\n  return v\nend)'
    assert _hits(code, "RA101") == ["trigger[0].effect[0] line 1 via line 5"]


def test_a_safe_id_call_an_editdisplay_listener_reaches_is_refused() -> None:
    code = 'local function save(id) setChat(id, 0, "x") end\n' \
        'listenEdit("editDisplay", function(id, v) save(id) return v end)'
    assert _hits(code, "RA106", lla=False) == ["trigger[0].effect[0] line 1 via line 2"]
    other = code.replace("editDisplay", "editOutput")
    assert _hits(other, "RA106", lla=False) == []


@pytest.mark.parametrize("code", [
    ASK + "function onOutput(id) ask(id) end\n"
    'listenEdit("editOutput", function(id, v) return v end)',
    ASK + 'listenEdit("editOutput", function(id, v) local t = {ask = 1} return t.ask end)',
    ASK + 'listenEdit("editOutput", function(id, v) return v end)\nask(id)',
    ASK + 'listenEdit("editOutput", function(id, v) obj.ask(id) return v end)',
    ASK + 'listenEdit("editOutput", function(id, v) return v end) -- ask(id)',
])
def test_a_function_no_listener_calls_is_not_refused(code: str) -> None:
    assert _hits(code, "RA101") == []


def test_following_listeners_into_functions_is_bounded() -> None:
    n = 3000  # a chain past the levels followed: not followed, and quick
    chain = "".join(f"local function f{i}(id) return f{i + 1}(id) end\n" for i in range(n))
    chain += f"local function f{n}(id) return LLM(id, {{}}) end\n"
    chain += 'listenEdit("editOutput", function(id, v) f0(id) return v end)\n' * 1000
    dense = "".join(f"local function g{i}(id) "
                    + " ".join(f"g{j}(id)" for j in range(max(0, i - 30), i))
                    + " LLM(id, {}) end\n" for i in range(2000))
    dense += "".join(f'listenEdit("editOutput", function(id, v) g{i}(id) return v end)\n'
                     for i in range(0, 2000, 7))
    t0 = time.perf_counter()
    assert _hits(chain, "RA101") == []
    assert _hits(dense, "RA101") == ["trigger[0].effect[0] line 1 via line 2001"]
    assert time.perf_counter() - t0 < 30


# -- 4: a pattern RegExp refuses with the u or v flag ---------------------------------------

#: (pattern, flags) JavaScript's RegExp refuses (each checked by hand against V8: the u and v
#: modes drop the web's lenient grammar)
REFUSED = [("\\-", "u"), ("a\\_b", "u"), ("\\a", "gu"), ("[\\w-a]", "u"), ("[a-\\d]", "u"),
           ("[\\1]", "u"), ("\\2(a)", "u"), ("\\00", "u"), ("\\c1", "u"), ("\\x4", "u"),
           ("\\u12", "u"), ("\\u{110000}", "u"), ("\\p", "u"), ("\\k<m>(?<n>a)", "u"),
           ("a]", "u"), ("a}", "u"), ("(?=a)*", "u"), ("[(]", "v"),
           ("[a&&&b]", "v"), ("[a!!]", "v"), ("x", "uv"), ("[\\B]", "u"), ("\\-", "v")]
#: the same shapes RegExp takes (with the flag, or without it)
TAKEN = [("\\-", "g"), ("[\\-]", "u"), ("[\\w-]", "u"), ("[-\\w]", "u"), ("[a-c-\\d]", "u"),
         ("\\1(a)", "u"), ("\\0", "u"), ("\\cA", "u"), ("\\x41", "u"),
         ("\\u00e9\\u{1F600}", "u"), ("\\p{L}\\P{Lu}", "u"), ("\\k<n>(?<n>a)", "u"),
         ("a{1,2}b{3}", "u"), ("(?:a)*(a)+", "u"), ("[\\q{ab}a]", "v"), ("[a&&b]", "v"),
         ("[\\w--\\d]", "v"), ("[\\&\\!]", "v"), ("\\/\\.\\^\\$\\|", "u"), ("(?=a)*", "g"),
         ("[\\w-a]", "g"), ("a]", "g")]


def _rx(pattern: str, flag: str) -> list[str]:
    a = analyze(Module({"name": "R", "id": "r", "regex": [
        {"comment": "r", "in": pattern, "out": "x", "type": "editoutput", "flag": flag,
         "ableFlag": True}]}))
    return [f.message for f in a.findings if f.rule == "RA202"]


@pytest.mark.parametrize(("pattern", "flag"), REFUSED)
def test_a_pattern_regexp_refuses_with_u_or_v_is_ra202(pattern: str, flag: str) -> None:
    got = _rx(pattern, flag)
    assert len(got) == 1 and "RegExp refuses" in got[0]


@pytest.mark.parametrize(("pattern", "flag"), TAKEN)
def test_a_pattern_regexp_takes_is_no_ra202(pattern: str, flag: str) -> None:
    assert _rx(pattern, flag) == []


def test_the_u_mode_is_read_wherever_risuai_builds_a_regexp() -> None:
    lore = analyze(Module({"name": "L", "id": "l", "lorebook": [
        {"key": "/\\-/u", "comment": "c", "content": "x", "mode": "normal",
         "insertorder": 1, "alwaysActive": False, "secondkey": "", "selective": False,
         "useRegex": True}]}))
    assert [f.evidence for f in lore.findings if f.rule == "RA202"] == ["lorebook[0].key"]
    trig = analyze(Module({"name": "T", "id": "t", "trigger": [
        {"comment": "t", "type": "output", "conditions": [], "effect": [
            {"type": "v2RegexTest", "value": "x", "valueType": "value", "regex": "\\_",
             "regexType": "value", "flags": "u", "flagsType": "value", "outputVar": "o",
             "indent": 0}]}]}))
    assert any(f.rule == "RA202" for f in trig.findings)
    # without its flags, the same pattern is the web's lenient grammar: taken
    assert _rx("\\-", "<order 1>g") == [] and _rx("\\-", "") == []


def test_the_u_mode_reader_is_linear() -> None:
    t0 = time.perf_counter()
    for body in ("\\d[\\w\\-]" * 20_000, "(?:a)" * 20_000, "[" + "\\u00e9" * 15_000 + "]"):
        assert _rx(body, "u") == []
    assert time.perf_counter() - t0 < 20


# -- 5: a quantifier RegExp refuses in every mode ---------------------------------------------

@pytest.mark.parametrize("pattern", ["{2}", "a|{1,3}", "({2,})", "(?:{2})", "(?={2})",
                                     "(?<n>{2})", "(?<=a)*", "(?<!a){2}", "x(?<=a)+?"])
def test_a_quantifier_regexp_refuses_in_every_mode_is_ra202(pattern: str) -> None:
    got = _rx(pattern, "g")
    assert len(got) == 1 and "RegExp refuses" in got[0]
    assert len(_rx(pattern, "gu")) == 1  # (with u, a lone brace for the parser already)


@pytest.mark.parametrize("pattern", ["{a}", "{,2}", "x|{,2}", "{2", "(?=a){2}", "(?!a)*",
                                     "a{2}", "(a){2}", "[{2}]", "[]{2}", "\\({2}", "a|b{2}"])
def test_a_quantifier_regexp_takes_without_u_is_no_ra202(pattern: str) -> None:
    assert _rx(pattern, "g") == []
