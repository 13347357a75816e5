"""The scanners' bounds (issue 8): windowed matching and chunked decoding give the same
answers as one whole match, the regex checker's walk stays inside its step budget, and
the record bounds are reported, not silent."""

from __future__ import annotations

import random

import pytest

from risutools.analysis import analyze, cbs, js, lua, lualex, regexcheck
from risutools.analysis.lua import scan_lua
from risutools.analysis.lualex import decode_lua_string, tokenize
from risutools.formats import toggles
from risutools.formats.model import Module

_PIECES = ["a", " ", "\n", "\\", '"', "'", "`", "/", "[", "]", "\\z", "\\\n", "\\58", "\\x3a",
           "\\u{2f}", "https://h.example/", "request", "getChatVar", "(", ")", ",", "=",
           "local U =", "--[[", "]]", "[==[", "]==]", "/*", "*/", "//", "fetch", "return /"]


def _texts(seed: int, count: int) -> list[str]:
    rnd = random.Random(seed)
    return ["".join(rnd.choice(_PIECES) for _ in range(rnd.randrange(1, 50)))
            for _ in range(count)]


def _lua_view(text: str) -> str:
    s = scan_lua(text)
    return repr((s.calls, s.defs, s.dynamic_index, s.url_hosts, s.constants, s.errors,
                 s.tokens, s.lines, [(t.kind, t.start, t.end, t.value) for t in tokenize(text)]))


def _js_view(text: str) -> str:
    s = js.scan_js(text)
    return repr((s.names, s.url_hosts, s.errors, s.tokens))


@pytest.mark.parametrize("window", [2, 3, 5])
def test_tiny_windows_read_exactly_like_one_window(window: int,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    texts = _texts(window, 600)
    whole = [(_lua_view(t), _js_view(t)) for t in texts]
    monkeypatch.setattr(lualex, "WINDOW", window)
    monkeypatch.setattr(lualex, "_DECODE_CHUNK", 1)
    for t, expected in zip(texts, whole, strict=True):
        assert (_lua_view(t), _js_view(t)) == expected, repr(t)


def test_escape_heavy_strings_across_windows_and_chunks() -> None:
    body = "\\n\\65\\x41\\u{AC00}\\z \n \\\\\\\"" * 20_000
    assert decode_lua_string(body) == "\nAA가\\\"" * 20_000
    scan = scan_lua('local U = "https:' + body + '"\nrequest(U)\ngetChatVar(id, "' + body + '")')
    assert scan.errors == [] and scan.constants["U"].startswith("https:\nAA가")
    assert scan.calls[-1].args[1].literal == "\nAA가\\\"" * 20_000
    # an escaped quote right at a window's edge does not end the string
    for k in range(4090, 4100):
        code = 'x = "' + "a" * k + '\\"' + 'b" getChatVar(id, "k")'
        assert [c.name for c in scan_lua(code).calls] == ["getChatVar"], k


def test_hex_escape_without_digits_is_a_letter() -> None:
    # "\x" without two hex digits used to raise ValueError inside the decoder
    assert [t.value for t in tokenize('s = "\\xg\\x"') if t.kind == lualex.STR] == ["xgx"]


def test_lua_record_bounds_are_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lua, "MAX_CALLS", 5)
    monkeypatch.setattr(lua, "MAX_RECORDS", 3)
    code = 'getChatVar(id, "k")\n' * 8 + "function f() end\n" * 5 + "_G[x]\n" * 4
    scan = scan_lua(code)
    assert len(scan.calls) == 5 and len(scan.defs) == 3 and len(scan.dynamic_index) == 3
    msgs = [m for _, m in scan.errors]
    assert "more than 5 calls; the rest were not recorded" in msgs
    assert any(m.startswith("more than 3 function definitions") for m in msgs)
    a = analyze(Module({"trigger": [{"type": "start", "effect": [
        {"type": "triggerlua", "code": code}]}]}))
    assert any(f.rule == "RA601" and "more than 5 calls" in f.message for f in a.findings)


def test_equal_call_arguments_are_shared() -> None:
    scan = scan_lua('getChatVar(id, "k") ' * 100)
    assert len({id(c.args) for c in scan.calls}) == 1


def test_line_index_matches_counting() -> None:
    rnd = random.Random(3)
    text = "".join(rnd.choice("ab\n") for _ in range(20_000))
    index = lualex.LineIndex(text)
    for off in [0, 1, 4095, 4096, 4097, 12_000, 19_999, 20_000, 5, 9000, 3]:
        assert index.line(off) == text.count("\n", 0, off) + 1
    assert index.newlines == text.count("\n")


def test_cbs_nested_tags_keep_only_their_own_text() -> None:
    text = "{{getvar::" * 50 + "x" + "}}" * 50
    scan = cbs.scan_cbs(text)
    assert len(scan.tags) == 50 and sum(len(a) for t in scan.tags for a in t.args) < 50 * 10
    assert [t.literal_arg(0) for t in scan.tags].count("x") == 1
    deep = "{{" * 100 + "}}" * 100  # past the depth bound: 36 unbalanced pairs
    assert cbs.scan_cbs(deep).unbalanced == 72


def test_toggle_bound_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(toggles, "MAX_TOGGLES", 3)
    text = "".join(f"k{i}=L{i}\n" for i in range(7)) + "k0=again\n"
    tp = toggles.parse_toggles(text)
    assert [t.key for t in tp.toggles] == ["k0", "k1", "k2"] and tp.over_limit == 4
    assert tp.duplicates == [("k0", 8)]
    a = analyze(Module({"customModuleToggle": text}))
    assert any(f.rule == "RA702" and "4 toggle line(s)" in f.message for f in a.findings)


@pytest.mark.parametrize(("text", "lines"), [
    ("a\r\nb\rc\x0bd\x1ce\u2028f\x85g\n\nh", ["a\r", "b\rc\x0bd\x1ce\u2028f\x85g", "", "h"]),
    ("x=1\n", ["x=1"]), ("\n\n", ["", ""]), ("a", ["a"]), ("\r\n", ["\r"]), ("", []),
])
def test_toggle_lines_split_at_line_feeds_only(text: str, lines: list[str]) -> None:
    # RisuAI's parseToggleSyntax: template.split('\n') (a last empty piece declares nothing)
    assert [raw for _, raw in toggles.iter_lines(text)] == lines


def test_a_toggle_key_with_another_line_break_is_one_key() -> None:
    # RisuAI declares toggle_a\u2028b (one line); split at U+2028 it read as two lines,
    # "a" (malformed) and a toggle "b" RisuAI never offers
    for brk in ("\u2028", "\u2029", "\x85", "\x0b", "\x0c", "\x1e"):
        tp = toggles.parse_toggles(f"a{brk}b=Label\nc=Other\r\n")
        assert [(t.key, t.label, t.line) for t in tp.toggles] == [
            (f"a{brk}b", "Label", 1), ("c", "Other", 2)], repr(brk)
        assert tp.malformed == []


def test_regex_walk_is_charged_to_one_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    # the parse alone charges every character: a budget of one step per character fails
    monkeypatch.setattr(regexcheck, "BASE_STEPS", 0)
    monkeypatch.setattr(regexcheck, "STEPS_PER_CHAR", 1)
    with pytest.raises(regexcheck.RegexParseError, match="too complex"):
        regexcheck.backtracking_risks("a{" * 500)
    monkeypatch.setattr(regexcheck, "STEPS_PER_CHAR", 6)
    # the overlap pass is charged too: it fits the parse, not the whole check
    alt = "(?:" * 30 + "(" + "|".join("abcdefghij" * 30) + ")" + ")*" * 30
    with pytest.raises(regexcheck.RegexParseError, match="too complex"):
        regexcheck.backtracking_risks(alt)


@pytest.mark.parametrize("pattern", [
    "(?:" * 190 + "(" + "|".join(chr(0xAC00 + i) for i in range(40_000)) + "|가)" + ")*" * 190,
    "a{" * 50_000,
    "\\p{" * 33_000,
    "(?:a|b)*" * 12_000,
])
def test_hostile_patterns_finish_inside_the_budget(pattern: str) -> None:
    budget = regexcheck.Budget(regexcheck.steps_allowed(len(pattern)))
    root = regexcheck.parse_pattern(pattern, "", budget)
    assert root is not None and budget.used <= regexcheck.steps_allowed(len(pattern))
    regexcheck.backtracking_risks(pattern)  # a verdict, not "too complex"
