"""HTML a Lua script writes in its strings (what an ``editDisplay`` listener returns, what
``addChat`` or ``setChat`` put in a message: RisuAI shows it), read as the HTML readers read
shown text: script in it (RA301-RA304) and remote addresses built from what is joined to it
(RA305).

A string literal that holds a tag (``<`` and a letter) is read as HTML; one followed by
``..`` is read with a value of the script's in its place after it (as a CBS variable is
read: ``"<img src='https://h/?q=" .. msg`` sends ``msg`` to ``h``; ``'<img src="' .. url``,
an address that is the value alone, does not), each at the script's line.  One pass over
the tokens, made only for a script whose text holds a tag; at most :data:`MAX_HTML_STRINGS`
strings a script, each read once.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace
from functools import cache

from risutools.analysis.htmlscan import HtmlScan, scan_html
from risutools.analysis.lualex import (
    OP,
    STR,
    LineIndex,
    Skipper,
    decode_lua_string,
    iter_tokens,
)
from risutools.analysis.luaskip import POSSESSIVE, skip_pattern

#: at most this many of a script's strings that hold a tag are read as HTML
MAX_HTML_STRINGS = 2_000
#: a tag's opening, and what HTML needs to run script or reach an address: the test of a
#: string (and, both, the pre-filter of a script)
_TAG = re.compile(r"<[A-Za-z]")
_RISKY = re.compile(r"//|\\\\|java|vbs|\bon[a-z]+\s*=|<\s*(?:script|meta|base|form|i?frame|object"
                    r"|embed)|srcdoc|action|url\s*\(|@import|&#|\\[0-9a-f]", re.IGNORECASE)


@cache
def _past() -> re.Pattern[str]:
    """The runs of tokens :func:`html_strings` passes over: any but a string that may hold
    ``<`` (compiled once, when a script first needs it: not at every command's start)."""
    return skip_pattern(frozenset(), POSSESSIVE, "<")

#: what stands for the value joined after a string (a variable, as CBS reads one)
VALUE = "{{getvar::lua}}"


def may_hold_html(code: str) -> bool:
    """Whether a script may write HTML that runs script or reaches an address in its
    strings: a line of it holds a tag and such a mark on that line or the next (a tag's
    attributes on a line of their own); each line looked at at most twice."""
    at = 0
    while (m := _TAG.search(code, at)) is not None:
        start = code.rfind("\n", 0, m.start()) + 1
        end = code.find("\n", m.end())
        end = len(code) if end < 0 else end
        after = code.find("\n", end + 1)
        if _RISKY.search(code, start, len(code) if after < 0 else after):
            return True
        at = end
    return False


def html_strings(code: str) -> Iterator[tuple[int, str]]:
    """(line, text) of each string literal of ``code`` that holds a tag, with
    :data:`VALUE` after it when ``..`` follows it; the first :data:`MAX_HTML_STRINGS`."""
    lines = LineIndex(code)
    pending: tuple[int, str] | None = None
    found = 0
    skipper = Skipper(_past())  # (runs of tokens without a ``<`` in a string passed over)
    for kind, _start, _end, value, b0, b1 in iter_tokens(code, [], skipper):
        skipper.last = None
        if pending is not None:
            line, text = pending
            pending = None
            yield line, text + VALUE if (kind, value) == (OP, "..") else text
            found += 1
            if found >= MAX_HTML_STRINGS:
                return
        if kind == STR:
            text = value if value is not None else decode_lua_string(code, b0, b1)
            if _TAG.search(text) and _RISKY.search(text):
                line = lines.line(b0)  # (its text's first line: a long string's first
                if code.startswith(("\r\n", "\n"), b0) and not text.startswith(("\r", "\n")):
                    line += 1  # line break is not its text)
                pending = (line, text)
        skipper.idle = pending is None  # (the token after a string read: not passed over)
    if pending is not None:
        yield pending


def read_lua_html(code: str) -> Iterator[HtmlScan]:
    """:func:`scan_html` of each of :func:`html_strings`, its lines the script's, when it
    finds script or an address built from a value (what the checks of shown HTML read)."""
    for line, text in html_strings(code):
        scan = scan_html(text, unescape=True)
        if scan.flagged():
            yield _at_line(scan, line - 1)


def _at_line(scan: HtmlScan, shift: int) -> HtmlScan:
    """``scan`` with its lines moved down by ``shift`` (a string's lines are the script's
    from its own)."""
    return replace(
        scan,
        script_lines=[n + shift for n in scan.script_lines],
        handler_lines=[n + shift for n in scan.handler_lines],
        js_url_lines=[n + shift for n in scan.js_url_lines],
        active_lines=[(n + shift, w) for n, w in scan.active_lines],
        leaks=[(n + shift, h, w) for n, h, w in scan.leaks],
        risu_triggers=[], risu_btns=[], url_hosts=[], decoded_hosts=[])
