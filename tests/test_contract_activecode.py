"""MC500 heuristic: code and patterns are caught, prose (Korean and English) is not."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from risutools.contract.activecode import find_active_code
from risutools.contract.rules import _strings

SEED = Path(__file__).resolve().parents[1] / "fixtures" / "documents" / "seed-000-context-cutter.json"  # noqa: E501

CODE = [
    'local n = getChatVar("omitted_count")',
    "function onInput(id)\n  return true\nend",
    "listenEdit('editRequest', function(id, data) return data end)",
    "if count > limit then\n  cut()\nend",
    "for i = 1, #msgs do\n  total = total + #msgs[i].data\nend",
    "for _, m in ipairs(chat) do print(m) end",
    "const budget = 8000;",
    "let x = a.map(m => m.length);",
    "(msgs) => { return msgs.slice(2) }",
    "chat.filter(m => m.role !== 'system')",
    "string.gsub(text, '%s+', ' ')",
    "text:gsub('a', 'b')",
    "msg.replace(/\\s+/g, ' ')",
    "x = 1;\ny = 2;\nz = 3;",
    "{{setvar::omitted::1}}",
    "{{#if {{getvar::toggle}}}}on{{/if}}",
    "<script>alert(1)</script>",
    '<img src=x onerror="alert(1)">',
    "javascript:alert(1)",
    "(?:foo|bar)\\d+",
    "^\\s*\\[OOC\\].*$",
    "[^\\n]+",
    "\\d{2,4}-\\d+",
    "(?<=role:)\\w+",
    "v2SetRequestState(0, msgs)",
    "setChatVar('anchor', sig)",
    "while true do\n  step()\nend",
    "return msgs;",
    "if a ~= nil then x() end",
]

PROSE = [
    "editRequest 시점에 메시지 열을 받아 토큰 추정치를 계산한다.",
    "활성 코드 본문(Lua/CJS/정규식 패턴)은 포함하지 않는다 — 정적 구조/원리/역할만 기술.",
    "system/tool/function 역할 메시지는 항상 보존하고 제거 대상에서 뺀다.",
    "tiktoken/claude/gemini/deepseek 별 문자당 토큰 비율",
    "module.risum -> matrix-component-v1(module)",
    "On every request (editRequest) it receives the message list before it is sent.",
    "Reads chat variables (getChatVar) and writes one (omitted_count).",
    "If the budget is exceeded, then the oldest ordinary messages are removed first.",
    "While the toggle is on, do not touch system messages.",
    "candidate => approved only with a human record.",
    "The local anchor is kept; the tail is kept; nothing else changes.",
    "Keeps up to 80% of max_context (default 8000 tokens) for the history.",
    "It stores [anchor] and {omitted_count} between requests.",
    "기다려.. 그리고 다시 시작한다",
    "Uses the editRequest hook (listenEdit) to see requests.",
    "x = y is how the toggle reads in the settings screen",
    "function 역할을 하는 메시지는 지우지 않는다",
    "For each request the module estimates tokens and does nothing else.",
    "The end of the chat is kept; if anything is cut then the anchor moves.",
    "Ratio: chars/token ≈ 3.5 (tiktoken) — see `tokenizer_profile`.",
    "Q&A: what happens at 100%? It cuts 10% more (trim_percent).",
]


@pytest.mark.parametrize("text", CODE)
def test_code_is_caught(text: str) -> None:
    assert find_active_code(text) is not None, text


@pytest.mark.parametrize("text", PROSE)
def test_prose_passes(text: str) -> None:
    assert find_active_code(text) is None, (text, find_active_code(text))


def test_every_seed_string_is_prose() -> None:
    doc = json.loads(SEED.read_text(encoding="utf-8"))
    for section in ("payload", "projection"):
        for ptr, text, _ in _strings(doc[section], "/" + section):
            assert find_active_code(text) is None, (ptr, text)


def test_long_adversarial_strings_are_fast_enough_to_finish() -> None:
    # bounded patterns: these finish (a catastrophic pattern would hang the test run)
    for s in ("if " * 20000, "(" * 50000, "{" * 50000 + "}", "a" * 200000 + "(",
              "for x in " * 5000, "\\" * 100000, "[^" * 30000):
        find_active_code(s)


def _reference(text: str) -> str | None:
    """The detector without its gate: every pattern searched."""
    from risutools.contract import activecode as ac

    if len(text) < 3:
        return None
    for reason, _, rx in ac._STRONG:
        if rx.search(text):
            return reason
    if "\n" in text and ac._code_lines(text) >= 2:
        return "several statement lines ending in ; { }"
    weak = [r for r, _, rx in ac._WEAK if rx.search(text)]
    if text.count(";") >= 3 and any(c in text for c in "=(){}"):
        weak.append("several `;` separated statements")
    return " and ".join(weak[:2]) if len(weak) >= 2 else None


def test_gate_never_changes_the_answer() -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    alphabet = st.sampled_from([*"ab xyz()=>{}[]^$*+?.-;:\\\n~<'\"\t한",
        "then", "do", "local ", "function", "return", "nil", "end", "if ", "for ", "while ",
        "JavaScript:", "getChatVar", "const ", "{{", "setvar::", "(?:", "[^", "script"])

    @settings(max_examples=600, deadline=None)
    @given(st.lists(alphabet, max_size=25).map("".join))
    def check(text: str) -> None:
        assert find_active_code(text) == _reference(text), text

    check()
    # found by this test: a needle must hold for every match (`\\s` is a tab too)
    for text in [*CODE, *PROSE, "const =\t{", "if =\t{", "x\t=\ry", "a =\x0b(b"]:
        assert find_active_code(text) == _reference(text), text


def test_mc500_joined_fast_path_matches_per_string() -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from risutools.contract.rules import mc500
    from risutools.settings.config import Settings

    pieces = st.sampled_from(CODE + PROSE + ["if x then", "do", "end", "a = b", "(?", ":", "x"])

    @settings(max_examples=300, deadline=None)
    @given(st.lists(pieces, max_size=6))
    def check(texts: list[str]) -> None:
        doc = {"payload": {"triggers": texts}}
        got = [p for p, _ in mc500(doc, Settings())]
        want = [f"/payload/triggers/{i}" for i, t in enumerate(texts)
                if find_active_code(t) is not None]
        assert got == want

    check()


def test_same_answers_as_before_the_finer_needles() -> None:
    """The rewritten patterns (a literal first, the look-back after it) and the finer
    needles answer exactly as the detector did before (tests/activecode_reference.py)."""
    import activecode_reference as before
    from hypothesis import given, settings
    from hypothesis import strategies as st

    alphabet = st.sampled_from([*"ab xyz()=>{}[]^$*+?.-_;:\\\n~<'\"\t한A2",
        "v2", "v2Get", "getChatVar", "print", "pairs", "ipairs", "console.log", "JSON.parse",
        ".print", "xprint", "_print", "한print", "editRequest", "fooBar", "aB", "string.",
        "table.", "Math.", "window.", "json.", ":gsub", ":len", ".push", ".map", ".test",
        "===", "!==", "~=", "==", "while ", "const ", "let ", "var ", "function", "xfunction",
        "function(", " do", " then", "end", "local ", "return ", "{{", "setvar::", "(?:",
        "[^", "<script", "javascript:", "]*", ")+", "\\d", ".*", "{2,}"])

    @settings(max_examples=1500, deadline=None)
    @given(st.lists(alphabet, max_size=25).map("".join))
    def check(text: str) -> None:
        assert find_active_code(text) == before.find_active_code(text), text

    check()
    seed = json.loads(SEED.read_text(encoding="utf-8"))
    for text in [*CODE, *PROSE, *(t for _, t, _ in _strings(seed, ""))]:
        assert find_active_code(text) == before.find_active_code(text)


def test_mc500_texts_are_the_strings_it_checks() -> None:
    """mc500's fast walk gives the strings of ``_strings`` (less the skipped fields), in
    the same order."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from risutools.contract import rules

    keys = st.sampled_from(["namespace", "controller", "prompt_sha256", "replay_status",
                            "harness_compatibility", "a", "a/b", "~", "x"])
    values = st.recursive(st.text(max_size=3) | st.integers() | st.none(),
                          lambda k: st.lists(k, max_size=3)
                          | st.dictionaries(keys, k, max_size=4), max_leaves=12)

    @settings(max_examples=300, deadline=None)
    @given(st.dictionaries(st.sampled_from(["payload", "projection", "other"]), values))
    def check(doc: dict) -> None:
        for section in ("payload", "projection"):
            want = [t for p, t, key in rules._strings(doc.get(section), (None, section))
                    if not rules._skipped(p, section, key)]
            assert list(rules._texts(section, doc.get(section))) == want

    check()


def _window_edge_cases() -> list[str]:
    """Texts at the edges of the search windows (issue 12: anchors and reach)."""
    from risutools.contract import activecode as ac

    reach, after, many = ac._REACH, 16, ac._MAX_WINDOWS
    out = []
    for k in (reach - 30, reach - 25, reach - 24, reach - 1, reach, reach + 1, reach + 40):
        out += [
            "print" + " " * k + "(x)",                    # API name, whitespace, "("
            "한 " + "setCharacterFirstMessage" + "\t" * k + "(",
            "a" * k + "bC(x)", "한 " + "a" * k + "Bc(1)",   # camelCase of any length
            "string." + "a" * k + "(", "string.x" + "한" * k + " (",  # library: \w*
            "x:gsub" + " " * k + "(", "t.push" + "\n" * k + "(",
            "fooBar(" + " " * k + "x", "fooBar(" + " " * k + ")",
            "한글 " * k + "(가)", "x " * k + "(y)",
        ]
    for k in (after - 1, after, after + 1, after + 5):
        out += ["fooBar(" + " " * k + "1", "x fooBar(" + "\u3000" * k + "'"]
    for n in (many - 1, many, many + 1):
        out += ["(가) " * n + "getChatVar(x)", "(가) " * n + "fooBar(x)",
                "a: " * n + "javascript:", "a: " * n + "JavaScript:"]
    out += ["javaſcript:", "JAVASCRIPT:", "xjavascript:", "한javascript:", "javascript :",
            "<a onclick=x> javascript:", "print\u3000(x)", "print\x1c(x)", "(" + "a" * 100,
            "os.time(", "ratios.x(", "Math.max (", "v2Foo(", "JSON.parse(", "x.JSON.parse(",
            # regex quantifiers: two or three characters ending at * + ?, or {n,m}
            "a]* and x = 1", "\\d+ == 2", "\\w?\n== 1", ".*? x == y", "x.+ a == b",
            "*+? a == b", "a{2,} x == 1", "{ a]* }", "?" * 40 + ".* x == 1",
            "+" * 33 + " ]* x == 1"]
    return out


def test_windows_never_change_the_answer() -> None:
    """The call and HTML patterns searched in windows around "(" / ":" answer as the
    reference (every pattern over the whole text), at every edge of the windows."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    for text in _window_edge_cases():
        assert find_active_code(text) == _reference(text), text

    alphabet = st.sampled_from([
        *"ab (():.\n\t한A2_'\"{[-)", " " * 20, "\t" * 17, "a" * 30, "한" * 40, "x" * 65,
        "getChatVar", "print", "console.log", "fooBar", "aB", "string.", "Math.", ":gsub",
        ".push", "javascript:", "JavaſCript:", "javaſcript", "<", "<script", "\u3000",
        "ratios.", "v2Get", "]*", ")+", "\\d?", ".*", ".+?", "*", "+", "?", "{2,}", "=="])

    @settings(max_examples=2000, deadline=None)
    @given(st.lists(alphabet, max_size=30).map("".join))
    def check(text: str) -> None:
        assert find_active_code(text) == _reference(text), text

    check()


def test_an_assignment_spaced_by_tabs_or_line_breaks_is_one() -> None:
    """The assignment pattern's ``\\s=\\s``: a tab or a line break around ``=`` counts as
    the space does (the fuzz test's counterexample ``]*a\\t=\\ta`` and its kin)."""
    for text in ("]*a\t=\ta", "]*a = a", "]*a\n=\na"):
        assert find_active_code(text) == "regex quantifiers and an assignment `x = y`", text
    assert find_active_code("]*a=a") is None  # no whitespace: not this pattern


def _parens_by_hand(text: str) -> list[tuple[int, int, int, int]]:
    """Every "(" with the runs before it, found character by character (the reference of
    ``_parens``, which reads them backwards with one regular expression)."""
    out = []
    for p, c in enumerate(text):
        if c != "(":
            continue
        q = p
        while q and text[q - 1].isspace():
            q -= 1
        w = q
        while w and (text[w - 1].isalnum() or text[w - 1] == "_"):
            w -= 1
        a = p
        while a and text[a - 1].isascii() and text[a - 1].isalnum():
            a -= 1
        out.append((p, q, w, a))
    return out


def test_backward_reads_and_whole_word_needles_never_change_the_answer() -> None:
    """The parts read backwards in the reversed text (the runs before each "(", the
    ``javascript:`` scheme, an assignment's name before its "=") and the word needles
    looked up as whole words answer as the reference (every pattern over the whole
    text) and as the plain searches they stand for."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from risutools.contract import activecode as ac

    assign = ac._WEAK[ac._ASSIGN][2]
    alphabet = st.sampled_from([
        *"ab _.:=[]()\n\t\x0b\u3000한…'\"{-)2AZ", " = ", "\t=\n", "x = 1", "a.b", "x[1]",
        "[" + "y" * 39 + "]", "[" + "y" * 41 + "]", "toggle_autosum", "_then", "then2",
        "한then", "then…", "xdo", "do", " do ", "var", "var x =", "variable", "let",
        "const", "local", "function", "return", "while", "nil", "null", "undefined",
        "v2Get(", "javascript:", "JavaScript:", "javaſcript:", "xjavascript:",
        "한javascript:", "print", "fooBar(", "string.x (", ":gsub(", "x.push  ("])

    @settings(max_examples=2500, deadline=None)
    @given(st.lists(alphabet, max_size=30).map("".join))
    def check(text: str) -> None:
        assert find_active_code(text) == _reference(text), text
        assert ac._assignment(text) == (assign.search(text) is not None), text
        rev = text[::-1]
        assert (ac._JS_URL_BACK.search(rev) is not None) == (
            ac._JS_URL.search(text) is not None), text
        assert ac._parens(text, rev) == _parens_by_hand(text), text
        present = ac._present(text)
        for needle in ac._NEEDLES:  # every needle in the text is in the set
            assert needle not in text or needle in present or (
                needle in ac._WORD_NAMES.values()), (needle, text)

    check()
    many = "a = b " * (ac._MAX_WINDOWS + 1)  # more "=" than windows: the whole text
    assert ac._assignment(many) and ac._assignment("x\t=\ty")
    assert not ac._assignment("x=y") and not ac._assignment("= y") and not ac._assignment("X = y")


def test_texts_of_one_digit_shape_get_one_answer() -> None:
    """``digit_shape``: a text and the same text with other ASCII digits are code or prose
    alike (MC500 remembers prose by shape), on texts built around digits in every place a
    pattern could read them; a text with ``v2`` has no shape (its digit is read)."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from risutools.contract.activecode import digit_shape

    zero = str.maketrans("123456789", "000000000")
    alphabet = st.sampled_from([
        *"ab _.:=[]()\n\t{}-^$\\*+?;,한", *"0123456789", "x1 = 2", "[0-9]", "[1-8]", "{2,3}",
        "\\d", "v2", "v3Get(", "v2Get(", "v0", "getChatVar(", "camel2Case(", "a1b2(",
        "local x9 = ", "if x == 3 then", "for i = 1, 9 do", "return 7;", "const k1 =",
        "nil", "end", "x..y", "-- 1", "^[0-9]+$", "٣", "３", "(?:", "[^0]"])

    @settings(max_examples=3000, deadline=None)
    @given(st.lists(alphabet, max_size=25).map("".join),
           st.lists(st.sampled_from("0123456789"), min_size=1, max_size=30))
    def check(text: str, digits: list[str]) -> None:
        other = iter(digits * 40)
        again = "".join(next(other) if c in "0123456789" else c for c in text)
        shape = digit_shape(text)
        if "v2" in text:
            assert shape is None
            return
        assert shape == text.translate(zero).encode("utf-8")
        if "v2" in again:
            return  # (a digit made "2" after a "v": that text has no shape)
        assert digit_shape(again) == shape
        assert (find_active_code(text) is None) == (find_active_code(again) is None), (
            text, again)

    check()
    assert digit_shape("x٣") == "x٣".encode()  # other scripts' digits left as they are
