"""CBS, HTML, regex-pattern, flag, toggle, legacy-JS and asset-sniffing scanners."""

from __future__ import annotations

import pytest

from risutools.analysis import analyze
from risutools.analysis.assets import compatible, declared_type, sniff
from risutools.analysis.cbs import scan_cbs
from risutools.analysis.htmlscan import scan_html
from risutools.analysis.js import scan_js
from risutools.analysis.regexcheck import RegexParseError, backtracking_risks, parse_flags
from risutools.formats.model import Module
from risutools.formats.toggles import parse_toggles


def test_cbs_nesting_and_arguments() -> None:
    scan = scan_cbs("x {{getvar::{{? 1+1}}}}\n{{setvar::hp::{{getvar::mp}}}} {{button::Go::onGo}}")
    names = [t.name for t in scan.tags]
    assert names.count("getvar") == 2 and "?" in names and "setvar" in names
    outer = next(t for t in scan.tags if t.name == "getvar" and "{{" in t.args[0])
    assert outer.literal_arg(0) is None  # nested: not a literal key
    setvar = next(t for t in scan.tags if t.name == "setvar")
    assert setvar.literal_arg(0) == "hp" and setvar.line == 2
    button = next(t for t in scan.tags if t.name == "button")
    assert button.literal_arg(1) == "onGo"


def test_cbs_unbalanced_and_block_tags() -> None:
    scan = scan_cbs("}} {{#if {{getvar::a}}}}y{{/if}} {{")
    assert scan.unbalanced == 2
    assert {"#if", "/if", "getvar"} <= {t.name for t in scan.tags}


def test_html_checks() -> None:
    html = ('<div class="a" onclick="go()">\n<SCRIPT>x</SCRIPT>\n'
            '<a href="JavaScript:alert(1)">x</a><button risu-trigger="fire">b</button>'
            '<img src="https://img.example.com/a.png">')
    scan = scan_html(html)
    assert scan.script_lines == [2]
    assert scan.handler_lines == [1]
    assert scan.js_url_lines == [3]
    assert scan.risu_triggers == [("fire", 3)]
    assert ("img.example.com", 3) in scan.url_hosts
    clean = scan_html('<div class="online" data-one="1">on= text</div>')
    assert clean.handler_lines == [] and clean.script_lines == []


@pytest.mark.parametrize("pattern", [
    r"(a+)+", r"(.*)*", r"(\w+\s?)*", r"(a|a)*", r"(a|ab|b)*", r"(x+x+)+y", r"(?:\d+)*$",
    r"(\w|\d)+", r"((ab)*)+", r"(.{1,100})+",
    r"(\d+)*", r"(.*?,)*", r"(?:\\.|[^\"])*", r"(a|a?)+", r"(?:a+|b)*", r"^(\s*\w+)*$",
    r"([가-힣]|[각])+", r"(\x41|A)+", r"(\u{AC00}|가)+",
])
def test_backtracking_risky(pattern: str) -> None:
    assert backtracking_risks(pattern), pattern


@pytest.mark.parametrize("pattern", [
    r"(a+b)*", r"(?:\s*,\s*\w+)*", r"^\d+$", r"(a|b)*", r"\[(.*?)\]", r"([^<]*<br>)*",
    r"(\d{1,3}\.){3}\d{1,3}", r"<img src=\"([^\"]+)\">", r"(?<name>a)\k<name>", r"[(+*]+",
    r"\d+", r"[^<]*", r"\s*(\w+)\s*", r"(\s|\S)*", r"(.|\n)*", r"(?:[^\"\\]|\\.)*",
    r"<[^>]*>", r"\{\{(.*?)\}\}", r"([가-힣]|[a-z])+", r"(?:a?){20}", r"(\w+\s)*",
    r"(?:<br>|\n)+", r"(\[[^\]]*\])+", r"(a|ab)*",
])
def test_backtracking_safe(pattern: str) -> None:
    assert backtracking_risks(pattern) == [], pattern


def test_backtracking_flags_change_the_answer() -> None:
    # i: a and A are the same character; s: "." also matches a newline
    assert backtracking_risks(r"(a|A)*", "i") and not backtracking_risks(r"(a|A)*")
    assert backtracking_risks("(.|\n)*", "s") and not backtracking_risks("(.|\n)*")


def test_backtracking_check_is_bounded_on_huge_patterns() -> None:
    # 20,000 distinct characters and thousands of "." / "[^a]" used to cost gigabytes
    big = "".join(chr(0x4E00 + i) for i in range(20_000)) + "." * 2000 + "[^a]" * 5000
    assert backtracking_risks(big) == []
    wide = "(" + "|".join(chr(0xAC00 + i) for i in range(20_000)) + ")*"
    assert backtracking_risks(wide) == []
    assert backtracking_risks(wide[:-2] + "|가)*")  # one repeated branch is found


@pytest.mark.parametrize("pattern", [r"[a-z", r"(ab", r"ab)", r"*a", r"a{3,1}", r"(?P<x>a)",
                                     "a" + "*" * 50_000, r"a+*", r"a{2}{3}"])
def test_unparsable_patterns_raise_our_error(pattern: str) -> None:
    with pytest.raises(RegexParseError):
        backtracking_risks(pattern)


def test_flags_with_directives() -> None:
    assert parse_flags("g<order 1>") == ("g", ["order 1"], [])
    assert parse_flags("gi<move_top><inject>") == ("gi", ["move_top", "inject"], [])
    assert parse_flags("gZ<unclosed") == ("g", ["unclosed"], ["Z"])
    assert parse_flags("") == ("", [], [])


def test_toggles() -> None:
    text = ("enabled=Enable\n==group==Budget\nmode=Mode=select=a, b ,c\nlimit=Limit=text\n"
            "==groupEnd\nnote=Note=textarea\nenabled=Again\njunk line\nx=Y=weird\n"
            "sep=---=divider\n")
    tp = parse_toggles(text)
    assert [(t.key, t.type, t.group) for t in tp.toggles] == [
        ("enabled", "checkbox", None), ("mode", "select", "Budget"), ("limit", "text", "Budget"),
        ("note", "text", None), ("x", "checkbox", None)]  # (an unknown kind: a checkbox)
    assert tp.toggles[1].options == ("a", " b ", "c")  # (as RisuAI cuts them)
    assert tp.duplicates == [("enabled", 7)]
    assert tp.malformed == [8]
    assert tp.unknown_types == [("weird", 9)]
    assert parse_toggles("").toggles == []
    assert parse_toggles(123).toggles == []  # type: ignore[arg-type]


# each line as RisuAI's parseToggleSyntax reads it (``const [key, value, type, option] =
# line.split('=')``; group/groupEnd/divider, caption with a value, else ``key && value``: a
# toggle of type select/text/textarea or undefined, a checkbox): (key, type, options), or
# None when the line declares no toggle; and whether it is noted (unknown kind, malformed)
@pytest.mark.parametrize(("line", "toggle", "noted"), [
    ("mode =Mode", ("mode ", "checkbox", ()), None),  # the key keeps its space
    (" mode=Mode", (" mode", "checkbox", ()), None),
    ("\tk=L=select=A,B", ("\tk", "select", ("A", "B")), None),
    ("k=L=Select=A,B", ("k", "checkbox", ()), "unknown"),  # kinds matched exactly
    ("k=L= select=A,B", ("k", "checkbox", ()), "unknown"),
    ("k=L=select\r", ("k", "checkbox", ()), "unknown"),  # (a CRLF text's last piece)
    ("k=L=select=A,B\r", ("k", "select", ("A", "B\r")), None),
    ("k=L=select=A,,B", ("k", "select", ("A", "", "B")), None),  # blanks keep the indexes
    ("k=L=select=A,B=C,D", ("k", "select", ("A", "B")), None),  # past a fourth '=': dropped
    ("k=L=select", ("k", "select", ()), None),  # (no options piece: none)
    ("k=L=select=", ("k", "select", ("",)), None),  # (an empty one: one blank, ''.split)
    ("k=L=number", ("k", "checkbox", ()), "unknown"),
    ("k=L=input", ("k", "checkbox", ()), "unknown"),
    ("k=L=separator", ("k", "checkbox", ()), "unknown"),
    ("k=L=groupend", ("k", "checkbox", ()), "unknown"),  # groupEnd is spelled so
    ("k=L=", ("k", "checkbox", ()), None),  # an empty kind: a checkbox
    ("k=L=textarea", ("k", "text", ()), None),
    ("k= ", ("k", "checkbox", ()), None),  # a label of one space is a label
    ("k=", None, "malformed"), ("=L", None, "malformed"), ("k", None, "malformed"),
    ("k==caption", None, "malformed"),  # a caption without a label: nothing
    ("k=Note=caption", None, None), ("k=x=divider", None, None),
    ("k=G=group", None, None), ("k=x=groupEnd", None, None),
    ("==Name==", None, None), ("==groupEnd", None, None),
])
def test_toggle_lines_read_as_risuai_reads_them(
        line: str, toggle: tuple[str, str, tuple[str, ...]] | None, noted: str | None) -> None:
    tp = parse_toggles(line + "\n")
    assert [(t.key, t.type, t.options) for t in tp.toggles] == ([toggle] if toggle else [])
    assert bool(tp.unknown_types) == (noted == "unknown")
    assert bool(tp.malformed) == (noted == "malformed")


def test_a_toggle_key_with_spaces_is_a_near_miss_of_its_read() -> None:
    # RisuAI declares toggle_mode␠ for "mode =Mode": the module's read of toggle_mode finds
    # no value (a trimmed key hid it)
    a = analyze(Module({"customModuleToggle": "mode =Mode\n",
                        "trigger": [{"type": "manual", "comment": "", "effect": [
                            {"type": "triggerlua",
                             "code": 'local m = getGlobalVar(id, "toggle_mode")'}]}]}))
    assert [t.key for t in a.toggles] == ["mode "]
    assert any(f.rule == "RA704" and "near miss" in f.message for f in a.findings)


def test_js_scan_skips_comments_strings_regex_literals() -> None:
    js = ('// fetch("x")\n/* eval(1) */ const a = "fetch(" + `eval ${1}`;\n'
          "const r = /fetch\\/[/]/g; const q = a / b / c;\n"
          'fetch("https://API.example.org/v")\neval(a)\n')
    scan = scan_js(js)
    assert scan.names == {"fetch": [4], "eval": [5]}
    assert scan.url_hosts == [("api.example.org", 4)]
    assert scan_js("`unterminated").errors


def test_asset_sniffing() -> None:
    assert sniff(b"\x89PNG\r\n\x1a\n....") == "png"
    assert sniff(b"\xff\xd8\xff\xe0") == "jpeg"
    assert sniff(b"RIFF\x00\x00\x00\x00WEBPVP8 ") == "webp"
    assert sniff(b"RIFF\x00\x00\x00\x00WAVEfmt ") == "wav"
    assert sniff(b"GIF89a") == "gif"
    assert sniff(b"OggS\x00") == "ogg"
    assert sniff(b"ID3\x04") == "mp3"
    assert sniff(b"\x00\x00\x00\x18ftypmp42") == "mp4"
    assert sniff(b"\xef\xbb\xbf  <!DOCTYPE html><html>") == "html"
    assert sniff(b"") is None and sniff(b"hello") is None
    assert declared_type("PNG") == "png" and declared_type("", "a.jpg") == "jpeg"
    assert not compatible("png", "html") and compatible("jpeg", "jpeg")
