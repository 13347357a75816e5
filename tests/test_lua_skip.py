"""The Lua scanner's skip path (issue 11): passing over runs of tokens the analysis does not
need gives exactly what reading every token gives, on our own idioms and on random text."""

from __future__ import annotations

from dataclasses import replace

from harness import FIXTURES
from hypothesis import given, settings
from hypothesis import strategies as st

from risutools.analysis.lua import ARG_CALLS, LuaScan, scan_lua, skip_pattern
from risutools.analysis.walk_lua import KEEP_CALLS

KEEP = KEEP_CALLS
IDIOMS = (FIXTURES / "analysis" / "lua_skip_idioms.lua").read_text(encoding="utf-8")

_PIECES = ["a", " ", "\n", "\\", '"', "'", "[", "]", "\\58", "https://h.example/", "request",
           "getChatVar", "(", ")", ",", "=", "==", ".", ":", "::", "..", "local", "function",
           "end", "_G", "_ENV", "LLM", "x", "0x1p4", ".5", "1e3", "--", "--[[", "]]", "[==[",
           "]==]", "{", "}", "-", "#", "~", "local U =", "\t", "\r\n", "\r", "\n\r",
           " = \"s\"", "$", "한",
           "pcall", "listenEdit", "onStart", "return", "'a:b'", "<const>", " <close> ", "<",
           ">", "debug", ".traceback", "rawget", "f", "local f = ", ";", "]"]


def _view(s: LuaScan) -> str:
    return repr((s.calls, s.defs, s.dynamic_index, s.url_hosts, s.constants, s.errors, s.lines,
                 s.values, s.aliases, s.env_keys))


def test_idioms_read_the_same_with_and_without_skipping() -> None:
    fast = scan_lua(IDIOMS, KEEP)
    assert _view(fast) == _view(scan_lua(IDIOMS, KEEP, skip=False))
    assert fast.tokens < scan_lua(IDIOMS, KEEP, skip=False).tokens  # it did skip
    by_name = {(c.name, c.qualifier, c.base) for c in fast.calls}
    assert ("LLM", ".", "_G") not in by_name and ("LLM", ".", "t") in by_name
    assert ("axLLM", ".", "t") in by_name
    defs = {(d.name, d.local) for d in fast.defs}
    assert {("helper", True), ("quiet", True), ("split", True), ("handler", True),
            ("other", False)} <= defs
    assert "onOutput" not in {d.name for d in fast.defs}  # _G.onOutput: a field
    assert fast.constants == {"HOST": "https://api.example.org/v1", "KEY": "mood",
                              "coded": "https://coded.example/", "y": "after a comment",
                              "s": "no colon here", "u": "has: colon",
                              "LONG": "a long string"}  # not b: a parameter of helper
    assert [h for h, _ in fast.url_hosts] == ["api.example.org", "coded.example"]


@settings(max_examples=400)
@given(st.lists(st.sampled_from(_PIECES), max_size=40))
def test_random_text_reads_the_same(pieces: list[str]) -> None:
    text = "".join(pieces)
    assert _view(scan_lua(text, KEEP)) == _view(scan_lua(text, KEEP, skip=False))


def test_the_skip_never_stops_inside_a_name_or_passes_a_kept_call() -> None:
    rx = skip_pattern(frozenset({"LLM"}))
    for text, stop in [("local function f() end", 0), ("x = y + LLM(1)", 7),
                       ("a.b.c LLM", 5), ("obj.LLM(1)", 3), ("s = 'x:y'", 0)]:
        m = rx.match(text)
        assert m is not None and m.end() == stop, (text, m.end() if m else None)


def test_the_python_310_form_reads_the_same(monkeypatch: object) -> None:
    """Python 3.10 has no possessive quantifiers: the greedy form, each run cut at
    ``SKIP_RUN_310`` tokens, gives the same scan, also past a cut (a run of 3x the cut
    before a kept call and a constant)."""
    import pytest

    from risutools.analysis import lua

    assert isinstance(monkeypatch, pytest.MonkeyPatch)
    long_run = "x = y + 1\n" * (lua.SKIP_RUN_310 * 3 // 5) + 'local U = "https://h.example/"\n'
    texts = [IDIOMS, long_run + "LLM(U)\n", long_run * 2 + "request(U)\n"]
    want = [_view(scan_lua(t, KEEP, skip=False)) for t in texts]
    monkeypatch.setattr(lua, "POSSESSIVE", False)
    rx = skip_pattern(frozenset(KEEP), False)
    assert "*+" not in rx.pattern and f"{{0,{lua.SKIP_RUN_310}}}" in rx.pattern
    for text, view in zip(texts, want, strict=True):
        got = scan_lua(text, KEEP)
        assert _view(got) == view
        assert got.tokens < scan_lua(text, KEEP, skip=False).tokens  # it did skip


def test_skipping_to_calls_finds_the_same_calls() -> None:
    """scan_lua(..., to_calls=True) (every call recorded, the runs between calls passed
    over) finds the calls, definitions and constants of the full token-by-token pass (a
    call's base is not read: the helpers it serves never follow a qualified call)."""
    from risutools.analysis.lua import scan_lua
    texts = [(FIXTURES / "analysis" / n).read_text(encoding="utf-8")
             for n in ("lua_skip_idioms.lua", "context_cutter.lua")]
    texts.append("local function bump(id, k) setChatVar(id, k, '1') end\n"
                 "-- bump(id, 'comment')\nlocal s = \"bump(id, 'string')\"\n"
                 "bump(id, 'real') ; pcall(bump, id, 'p') ; t:bump(id, 'm') ; bump'x'\n"
                 "bump{1} ; bump[[long]] ; x = bump (id, 'spaced')\n")
    for text in texts:
        need = {"bump": 3}
        full = scan_lua(text, None, need=need, skip=False)
        fast = scan_lua(text, None, need=need, to_calls=True)

        def key(c):  # type: ignore[no-untyped-def]
            return (c.name, c.line, c.qualifier, c.form, c.start, c.in_listener,
                    [(a.literal, a.name, a.path_end, a.parts) for a in c.args])
        assert [key(c) for c in fast.calls] == [key(c) for c in full.calls]
        assert fast.defs == full.defs and fast.constants == full.constants
        assert fast.tokens <= full.tokens


_BLOCK_PIECES = [*_PIECES, "if", "then", "do", "end", "repeat", "until", "while", "for",
                 " function f(a, b) ", "function t.m:x(...)", "\\z", "'a\\'b'", "0xend",
                 "1end", "..end", "-- end\n", "--[==[ end ]==]", "[=[ if ]=]", "ifx", "x_do",
                 "e", "nd", "1..2", ".5", "a.b", "#", "~=", "//", "@"]


def _block_readings(text: str) -> object:
    from risutools.analysis.lua import FuncDef
    from risutools.analysis.luaflow import _extent, at_top_level, function_table
    table = function_table(text)
    offsets = range(0, len(text) + 1, 3)
    kws = [fn.kw for fn in table.fns]
    extents = [_extent(text, FuncDef("f", 1, True, kw, kw)) for kw in kws]
    return table, sorted(at_top_level(text, offsets)), extents


@settings(max_examples=400)
@given(st.lists(st.sampled_from(_BLOCK_PIECES), max_size=40))
def test_block_pattern_reads_the_blocks_of_every_token(pieces: list[str]) -> None:
    """The function table, a function's extent and the top level read through
    ``block_pattern`` (runs of tokens passed over) are what reading every token gives."""
    _same_block_readings("".join(pieces))


def test_block_pattern_reads_the_blocks_of_our_texts() -> None:
    for text in [IDIOMS, "x = 'a\\' end if '\nfunction f(a) end", 'y = "\\z\n end"',
                 "s = 'q' .. \"--\" end function g() --[[ end ]] end",
                 "z = 0x1Fend ; w = 1e5do ; v = ..end ; u = a.end"]:
        _same_block_readings(text)


def _same_block_readings(text: str) -> None:
    import re

    from risutools.analysis import luaflow
    fast = _block_readings(text)
    never = re.compile(r"(?P<last>)(?!)")  # passes over nothing
    original = luaflow.block_pattern
    luaflow.block_pattern = lambda *_a: never  # type: ignore[assignment]
    try:
        assert _block_readings(text) == fast
    finally:
        luaflow.block_pattern = original


def test_block_pattern_passes_over_runs() -> None:
    from risutools.analysis.luaskip import block_pattern
    rx = block_pattern(frozenset({"if", "do", "repeat", "end", "until"}))
    for text, stop in [("local x = a.b(c, 'd') + 1 -- note\nfunction f() end", 33),
                       ("x = 'a\\'b'", 3), ("y = [[s]]", 3), ("z = 0x1F..1end", 11),
                       ("ifx = endy", 10), ("--[[ long ]] x", 0), ("a $", 1)]:
        m = rx.match(text)
        assert m is not None and m.end() == stop, (text, m.end() if m else None)


def test_block_pattern_python_310_form_reads_the_same() -> None:
    """The greedy form (Python 3.10, each run cut at ``SKIP_RUN_310`` tokens) gives the same
    readings, also past a cut."""
    from risutools.analysis import lua, luaflow
    long_run = "x = y + 1\n" * (lua.SKIP_RUN_310 // 2) + "function f(a) if a then end end\n"
    texts = [IDIOMS, long_run * 3]
    want = [_block_readings(t) for t in texts]
    original = luaflow.block_pattern
    luaflow.block_pattern = lambda words: original(words, False)  # type: ignore[assignment]
    try:
        assert "*+" not in luaflow.block_pattern(frozenset({"end"})).pattern
        assert [_block_readings(t) for t in texts] == want
    finally:
        luaflow.block_pattern = original


_HEADER_PIECES = ["function", " ", "\n", "f", "t", ".", ":", "(", ")", ",", "...", "a",
                  "request", "_G", "end", "local ", "x = ", "'s'", "--c\n", "listenEdit(",
                  "pcall(", "setChatVar(id, k)", "=", "<const>", "_ENV", "{", "}", "return ",
                  "function f(a, b) ", "function t:m(request, ...) ", "function(x) ",
                  "local function g() ", "x = function(k) ", "function a.b.c(d)", "a, b = "]


def _full_view(s: LuaScan) -> str:
    return repr((_view(s), s.decls, s.params, s.choices, s.literal_assigns))


@settings(max_examples=600)
@given(st.lists(st.sampled_from(_HEADER_PIECES), max_size=30))
def test_headers_read_at_once_read_as_every_token(pieces: list[str]) -> None:
    """A function header written plainly is read at once (``lualex.plain_header``): what
    the scan records (parameters and declarations too) is what reading it token by token
    gives."""
    text = "".join(pieces)
    assert _full_view(scan_lua(text, KEEP)) == _full_view(scan_lua(text, KEEP, skip=False))


def test_plain_headers_are_read_at_once() -> None:
    text = ("local function f(a, request) end\nfunction t.x:y(...) end\n"
            "listenEdit('editOutput', function(tid, data) return data end)\n"
            "x = function(k, v) setChatVar(k, v) end\nfunction (bad\n")
    fast, full = scan_lua(text, KEEP), scan_lua(text, KEEP, skip=False)
    assert _full_view(fast) == _full_view(full)
    assert [(d.name, d.dotted) for d in fast.defs] == [("f", False), ("t", True), ("x", False)]
    assert fast.params == frozenset({"a", "request", "tid", "data", "k", "v", "bad"})
    assert [(n, check) for n, _at, check in fast.decls] == [("request", False)]
    assert fast.tokens < full.tokens - 20  # the headers' tokens were not read one by one


@settings(max_examples=300)
@given(st.lists(st.sampled_from([*_HEADER_PIECES, "bump", "bump(", "g(", "getChatVar(",
                                 "'k'", "t:bump(", "x.bump ", "listenEdit("]), max_size=30))
def test_recording_only_some_calls_records_those_as_every_call_does(pieces: list[str]) -> None:
    """scan_lua(..., to_calls=NAMES) records the calls of NAMES (and of the names whose
    arguments it reads) as to_calls=True does, and no other."""
    text = "".join(pieces)
    need = {"bump": 3}
    every = scan_lua(text, None, need=need, to_calls=True)
    some = scan_lua(text, None, need=need, to_calls=frozenset({"bump"}))
    kept = {"bump"} | set(ARG_CALLS)
    assert repr([c for c in every.calls if c.name in kept]) == repr(some.calls)
    assert _full_view(replace(every, calls=[])) == _full_view(replace(some, calls=[]))


@settings(max_examples=400)
@given(st.lists(st.sampled_from([*_BLOCK_PIECES, "x = ", "local y =", "= ", "async(",
                                 " async ( ", "\u3000", "\u00a0", "\x1c", "==", "t.f =",
                                 "(", "{ f = "]), max_size=30))
def test_a_function_named_by_an_assignment_ends_its_text_with_one(pieces: list[str]) -> None:
    """The function table searches for ``name =`` before a ``function`` only when the text
    before it ends with ``=`` or ``(`` (blanks aside): wherever the search would match,
    that holds (Unicode blanks included)."""
    _same_names_as_searching_before_each("".join(pieces))


def test_functions_named_by_assignments_in_our_texts() -> None:
    for text in [IDIOMS, "local f = async(function() end)", "g = async (\u3000function(x) end)",
                 "x =\u00a0function() end", "t = { f = function() end }", "h(function() end)",
                 "local k = \n function(a) end", "y == function() end"]:
        _same_names_as_searching_before_each(text)


def _same_names_as_searching_before_each(text: str) -> None:
    from risutools.analysis.luaflow import _ASSIGNED, _NOT_A_STATEMENT, function_table
    from risutools.analysis.lualex import KEYWORDS
    for fn in function_table(text).fns:  # each as the search before every one gives it
        m = _ASSIGNED.search(text, max(0, fn.kw - 200), fn.kw)
        anonymous = text[fn.kw + 8:].lstrip().startswith("(")  # (no name in its header)
        if m is not None and anonymous and m.group(2) not in KEYWORDS and text[
                max(0, m.start() - 200):m.start()].rstrip()[-1:] not in _NOT_A_STATEMENT:
            assert (fn.name, fn.local) == (m.group(2), bool(m.group(1))), text
