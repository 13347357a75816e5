"""Findings of the eleventh pass (static analyser), each a test that fails before its fix:

* (1) an event-handler attribute whose name has more than 30 letters after ``on`` was no
  handler (RA302): ``oncontentvisibilityautostatechange`` (32 letters) runs its code with
  no user action in Chromium (``<x oncontentvisibilityautostatechange=f()
  style=display:block;content-visibility:auto>``), in a regex output, the background, a
  greeting, a Lua-built string or with CBS inside its name alike.
"""

from __future__ import annotations

import time

import pytest
from analysis_support import lua
from test_ninth_pass_html import module, regex_out, rules

from risutools.analysis.htmlscan import scan_html

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
