"""CBS tags read as RisuAI's ``matcher`` reads them (parser.svelte.ts): a tag's name is
lower-cased without blanks, ``_`` and ``-`` (``{{get_var::hp}}`` is ``getvar``), its
arguments are split on ``:`` when its first colon is a single one (``{{getvar:hp}}``), a
calculation is ``{{? ...}}`` with its space, a key is not trimmed, and ``addvar`` /
``setdefaultvar`` read the variable before they write it (cbs.ts).  Every module here is
our own."""

from __future__ import annotations

import time

import pytest

from risutools.analysis import analyze
from risutools.analysis.cbs import scan_cbs
from risutools.analysis.luabuttons import lua_buttons
from risutools.analysis.model import Analysis
from risutools.formats.model import Module


def cbs(out: str) -> Analysis:
    return analyze(Module({"name": "C", "id": "c", "regex": [
        {"comment": "r", "in": "a", "out": out, "type": "editoutput"}]}))


def uses(out: str) -> list[tuple[str, str, int, int]]:
    return [(s.key, s.scope, s.read_count, s.write_count) for s in cbs(out).state]


@pytest.mark.parametrize(("out", "want"), [
    ("{{get_var::hp}}", [("hp", "chat", 1, 0)]),
    ("{{Get-Var::hp}}", [("hp", "chat", 1, 0)]),
    ("{{ GETVAR ::hp}}{{get_var::mp}}", [("hp", "chat", 1, 0), ("mp", "chat", 1, 0)]),
    ("{{get var::hp}}", [("hp", "chat", 1, 0)]),
    ("{{getvar:hp}}", [("hp", "chat", 1, 0)]),
    ("{{set_var:hp:1}}", [("hp", "chat", 0, 1)]),
    ("{{setvar:hp::1}}", [("hp", "chat", 0, 1)]),  # (the first colon is a single one)
    ("{{get_global_var:mode}}", [("mode", "global", 1, 0)]),
    ("{{getvar:: hp}}", [(" hp", "chat", 1, 0)]),  # a key is not trimmed
    ("{{getvar::hp\n}}", [("hp\n", "chat", 1, 0)]),
    ("{{addvar::hp::1}}", [("hp", "chat", 1, 1)]),  # read, then written
    ("{{set_default_var::hp::1}}", [("hp", "chat", 1, 1)]),
    ("{{? $hp + 1}}{{?$mp + 1}}", [("hp", "chat", 1, 0)]),  # no space: text in RisuAI
    ("{{?$hp + 1}}", []),
    ("{{ ? $hp + 1}}", []),
])
def test_tags_are_read_as_risuai_reads_them(out: str, want: list[tuple[str, str, int, int]]
                                            ) -> None:
    assert uses(out) == want


def test_the_names_risuai_does_not_know_are_no_state() -> None:
    """Not every spelling is a variable tag: other letters, a dot, a single colon's
    argument split where RisuAI splits it."""
    assert uses("{{getvars::hp}}") == []
    assert uses("{{get.var::hp}}") == []
    assert uses("{{getvar:hp::x}}") == [("hp", "chat", 1, 0)]


@pytest.mark.parametrize("text", [
    "}}" * 20_000 + "{{get_var::hp}}" + "{{" * 20_000,
    "{{get_var:hp" + ":x" * 200_000 + "}}",
    "{{" + "_-" * 100_000 + "getvar::hp}}",
    "{{get_var:" + "{{x}}" * 20_000 + "}}",
    ("{{setvar:" + "a:" * 10_000 + "}}") * 20,
])
def test_reading_tags_stays_linear(text: str) -> None:
    """Hostile tags (many braces, colons, blanks in a name, nested tags): one pass, in
    time, and what RisuAI would read of them."""
    began = time.perf_counter()
    got = scan_cbs(text)
    assert time.perf_counter() - began < 2
    names = {t.name for t in got.tags}
    assert names & {"getvar", "setvar"}
    if text.startswith("{{_-"):
        assert [(t.name, t.args) for t in got.tags] == [("getvar", ("hp",))]
    if text.startswith(("{{setvar:a", "{{get_var:hp")):
        assert got.tags[0].args[0] in ("a", "hp")


# a CBS button a Lua string writes, read as RisuAI's matcher reads the tag (the function it
# runs: the second argument; the name in any case, blanks around it; a single colon when the
# first colon is one); before, only ``{{button::label::fn}}`` was read, and its last segment
@pytest.mark.parametrize(("text", "fn"), [
    ("{{button::Go::doIt}}", "doIt"),
    ("{{button:Go:doIt}}", "doIt"),
    ("{{Button::Go::doIt::extra}}", "doIt"),
    ("{{ BUTTON ::Go::doIt}}", "doIt"),
    ("{{button::a:b::fn}}", "fn"),
    ("{{button:a::fn}}", None),  # (cut at ':': the second argument is empty)
    ("{{button::Go}}", None),
    ("{{buttons::Go::doIt}}", None),
])
def test_a_lua_string_s_cbs_button_is_read_as_risuai_reads_the_tag(text: str,
                                                                    fn: str | None) -> None:
    got = [(b.kind, b.value) for b in lua_buttons(f'local s = "{text}"\n')]
    assert got == ([("trigger", fn)] if fn else [])
