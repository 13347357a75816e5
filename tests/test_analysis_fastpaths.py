"""The analyser's fast paths give what the plain way gives (no timing here: figures go to
bench/RESULTS.md)."""

from __future__ import annotations

import random
import re

import pytest

from risutools.analysis import walk_lore, walk_lua
from risutools.analysis.lorecode import MAX_LINES_READ, _head_lines, looks_like_lua
from risutools.analysis.luabuttons import _Reader, lua_buttons, may_hold_buttons
from risutools.analysis.regexcheck import RegexParseError, backtracking_risks, checked_risks
from risutools.analysis.walk_lua import _BAD_CHARS, _has_bad_chars

BUTTON_TEXTS = [
    "", "risu-btn", "x = '<div risu-btn=\"a\">'", "x = 'RISU-TRIGGER=\"f\"'",
    "x = '{{button::go::f}}'", "t = {risu_btn = 'a' .. b}", "--[[ risu-btn=\"c\" ]]",
    "x = [[<b risu-trigger='g'>]]", "y = string.format('<i risu-btn=\"%s\">', v)",
]


@pytest.mark.parametrize("text", BUTTON_TEXTS)
def test_button_gate_never_hides_a_button(text: str) -> None:
    found = _Reader(text).run()
    assert not found or may_hold_buttons(text)
    assert lua_buttons(text) == (found if may_hold_buttons(text) else [])


def test_button_gate_never_hides_a_button_random() -> None:
    rng = random.Random(11)
    pieces = ["risu-btn", "risu-trigger", "RISU-BTN", "{{button::", "::f}}", "risu_btn", "=",
              "'", '"', "[[", "]]", "..", "x", " ", "\n", "--", "format(", "(", ")", "%s"]
    for _ in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randrange(0, 14)))
        found = _Reader(text).run()
        assert not found or may_hold_buttons(text), text


@pytest.mark.parametrize("text", [
    "", "a", "a\n", "a\nb", "a\r\nb\r\n", "a\rb\nc", "a\u2028b\nc\n\nd", "\n\n\n", "x\x0cy\nz",
])
@pytest.mark.parametrize("n", [0, 1, 2, 3, 10])
def test_head_lines_same_as_splitlines(text: str, n: int) -> None:
    assert _head_lines(text, n) == text.splitlines()[:n]


def test_looks_like_lua_judges_the_head() -> None:
    lua = "local x = 1\n" * MAX_LINES_READ
    prose = "This is a sentence of the story.\n" * (3 * MAX_LINES_READ)
    assert looks_like_lua(lua + prose)  # the head is code: the tail is not read
    assert not looks_like_lua(prose + lua)  # the head is prose
    assert not looks_like_lua(lua[: len("local x = 1\n") * 2] + prose)


@pytest.mark.parametrize("text", [
    "", "abc", "a\x00b", "가나다", "가\x00", "x\ud800y", "가\udfff", "\U0001f600 ok",
    "가" * 10 + "\udc00", "\ud83d\ude00",
])
def test_bad_chars_same_as_search(text: str) -> None:
    assert _has_bad_chars(text) == (_BAD_CHARS.search(text) is not None)


def test_bad_chars_past_the_first_piece(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(walk_lua, "_BAD_CHARS_CHUNK", 4)
    assert _has_bad_chars("가나다라마바사\udc00")
    assert not _has_bad_chars("가나다라마바사아자")


@pytest.mark.parametrize("code", [
    "local src = readFile(name)\nload(src)()\n",
    "local t = {}\nfor _, e in ipairs(t) do load('return ' .. e.content)() end\n",
    "local f = pcall(load, getState(id, 'x'))\n",
])
def test_lore_flow_without_a_reader_is_empty(code: str) -> None:
    from risutools.analysis.lorecode import LoreFlow, _FlowReader, lore_flow

    assert lore_flow(code) == LoreFlow() == _FlowReader(code).run()
    with_reader = code + "local b = getLoreBooks(id, 'a.lua')\nload(b[1].content)()\n"
    assert lore_flow(with_reader).lore_loads  # the shortcut is not taken


def test_head_lines_long_text() -> None:
    text = "".join(f"line {i}\r\n" if i % 3 else f"x{i}\u2028y\n" for i in range(20000))
    for n in (1, 399, 400, 5000, 40000):
        assert _head_lines(text, n) == text.splitlines()[:n]
    assert _head_lines("a" * 100000, 3) == ["a" * 100000]


def test_plain_string_patterns_same_as_the_full_check() -> None:
    """A pattern without any regex syntax is answered without parsing: what parsing and
    checking it gives (no risk, no parse error), for every flag that changes the parser."""
    rng = random.Random(12)
    alphabet = [*"abcXYZ09 -_/,:;'\"<>=!@#%&~`\n\t가나", "\ud800", "\U0001F600"]
    for _ in range(2000):
        pattern = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 30)))
        for flags in ("", "u", "v", "i", "s"):
            assert backtracking_risks(pattern, flags) == checked_risks(pattern, flags) == []


@pytest.mark.parametrize(("pattern", "risky"), [
    ("(a+)+", True), ("(a|a)*", True), ("a+", False), ("a{2}", False), ("[x]", False),
    ("a.b", False), ("x\\d", False),
])
def test_one_syntax_character_takes_the_full_check(pattern: str, risky: bool) -> None:
    assert backtracking_risks(pattern) == checked_risks(pattern)
    assert bool(backtracking_risks(pattern)) is risky


@pytest.mark.parametrize("pattern", ["(", "a**", "[a", "\\", "a{2,1}"])
def test_bad_patterns_still_raise(pattern: str) -> None:
    with pytest.raises(RegexParseError):
        backtracking_risks(pattern)


def _looks_like_lua_every_line(text: str) -> bool:
    """looks_like_lua reading every line of the head (no early answer)."""
    from risutools.analysis.lorecode import _LUA_LINE, _STRONG, MIN_LINES, MIN_SHARE

    if not text or "\n" not in text.strip():
        return False
    total = code = 0
    in_long = False
    for raw in _head_lines(text, MAX_LINES_READ):
        line = raw.strip()
        if not line:
            continue
        total += 1
        if in_long:
            code += 1
            if "]]" in line or "]=" in line:
                in_long = False
            continue
        if _LUA_LINE.match(line):
            code += 1
            if ("[[" in line or "[=" in line) and "]]" not in line and "]=]" not in line:
                in_long = True
    if total < MIN_LINES or code < MIN_SHARE * total:
        return False
    return _STRONG.search(text) is not None


def test_looks_like_lua_early_answer_same_as_every_line() -> None:
    """The early answer (enough Lua lines already) is the answer of reading every line, at
    the edge of the share too (runs of code, prose, blank lines, long strings)."""
    rng = random.Random(13)
    lines = ["local x = 1", "end", "prose line here.", "", "  ", "local s = [[", "text ]]",
             "return x", "Another sentence, not code", "foo(bar)", "local function f(a)"]
    for _ in range(1500):
        n = rng.choice([5, 40, 100, 300, 420, 600])
        weights = [rng.random() for _ in lines]
        text = "\n".join(rng.choices(lines, weights, k=n)) + "\n"
        assert looks_like_lua(text) == _looks_like_lua_every_line(text)
    for code_lines in range(270, 300):  # the share right at 0.7 of 400 lines
        text = "local x = 1\n" * code_lines + "prose.\n" * (MAX_LINES_READ - code_lines)
        assert looks_like_lua(text) == _looks_like_lua_every_line(text) == (
            code_lines >= 280)


#: the pattern ``_string_literals`` used before its alternatives each began with their own
#: character (one group for both quotes and a back reference): the reference
_OLD_LITERAL = re.compile(r"""(["'])([^"'\\\n]{1,200})\1|\[\[([^\]\n]{1,200})\]\]""")


def test_string_literals_same_as_the_back_reference_pattern() -> None:
    rng = random.Random(46)
    pieces = ['"', "'", "[[", "]]", "[", "]", "\\", "\n", "a", "b c", ",", "x" * 120, "..",
              "-- ", "=", "가"]
    texts = ['f("a\\n", x, "b")', "x = 'it''s' .. \"q\"", "[[a]] [[b\n]] [[]]", "'a\"b'",
             '"' + "y" * 200 + '"', '"' + "y" * 201 + '"']
    texts += ["".join(rng.choice(pieces) for _ in range(rng.randrange(0, 16)))
              for _ in range(4000)]
    for text in texts:
        want = {m.group(2) or m.group(3) for m in _OLD_LITERAL.finditer(text)}
        assert walk_lore._string_literals(text) == want, text


@pytest.mark.parametrize(("short", "spelled_out"), [
    ("_NAME_START", r"[A-Za-z_\x80-\U0010FFFF]"),
    ("_NAME_CHAR", r"[A-Za-z0-9_\-\x80-\U0010FFFF]"),
    ("_PLAIN", r"[^\"'/@()\\A-Za-z0-9_\-\x80-\U0010FFFF]"),
])
def test_css_classes_hold_the_characters_of_their_unicode_form(short: str,
                                                               spelled_out: str) -> None:
    """The CSS tokenizer's classes written by what they leave out hold every code point
    (surrogates too) that the classes spanning Unicode hold."""
    from risutools.analysis import cssscan
    every = "".join(map(chr, range(0x110000)))
    assert re.findall(getattr(cssscan, short), every) == re.findall(spelled_out, every)


_BUTTON_PIECES = ["risu-btn=\"a\"", "risu-trigger='F'", "{{button::Go::run}}", "risu_btn",
                  " = ", "'", '"', "[[", "]]", "..", "x", " ", "\n", "--", "format(", "(",
                  ")", "%s", "string.format(", ":format(", "\\\\", "\\'", ":", "risu",
                  "function", "end", ",", "{", "}", "y .. ", "'<b risu-btn=\"g;' .. m .. '\">'"]


def _buttons_reading_every_token(text: str, monkeypatch: pytest.MonkeyPatch) -> object:
    from risutools.analysis import luabuttons
    with monkeypatch.context() as mp:
        mp.setattr(luabuttons, "block_pattern",
                   lambda *_a: re.compile(r"(?P<last>)(?!)"))  # passes over nothing
        return _Reader(text).run()


def test_buttons_read_the_same_when_runs_are_passed_over(
        monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(4646)
    texts = BUTTON_TEXTS + ["".join(rng.choice(_BUTTON_PIECES) for _ in range(rng.randrange(20)))
                            for _ in range(1500)]
    for text in texts:
        assert _Reader(text).run() == _buttons_reading_every_token(text, monkeypatch), text
