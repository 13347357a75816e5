"""The addresses CSS loads (``url(...)``, ``image-set("...")``, ``src("...")``,
``@import "..."``), read as a browser's CSS tokenizer reads them (CSS Syntax Level 3):
nothing is rendered or fetched.

A browser decodes CSS escapes before it uses a name or an address: ``\\75 rl(`` is the
function ``url(``, ``\\68 ttps://`` is ``https://`` (one to six hex digits and one optional
white space, or any other character as itself), ``/* comments */`` end nothing but are
dropped between tokens, function and at-rule names are matched without regard to ASCII
case (``URL(``, ``@IMPORT``), an escaped quote does not end a string, and a string broken
by a new line is dropped.  :func:`css_urls` tokenizes the same way, with our own fixed
patterns (none made of module text), in one pass: each token is one match that consumes
at least one character, so the work is linear in the text.
"""

from __future__ import annotations

import re
import sys
from functools import cache

#: at most this many addresses are read from one CSS text
MAX_CSS_URLS = 1000
#: one escape: hex digits and one optional white space, or another character as itself
_ESCAPE = r"\\(?:[0-9A-Fa-f]{1,6}(?:\r\n|[ \t\r\n\f])?|[^\n\r\f0-9A-Fa-f])"
#: a name's first character (a letter, ``_``, any non-ASCII character) and the others (and
#: digits, ``-``), each written as the ASCII characters it leaves out: the same sets as
#: ``[A-Za-z_\x80-\U0010FFFF]``, compiled in microseconds (a class that spans the whole
#: of Unicode costs ``re`` milliseconds each time it is written)
_NAME_START = r"[^\x00-\x40\x5b-\x5e\x60\x7b-\x7f]"
_NAME_CHAR = r"[^\x00-\x2c\x2e\x2f\x3a-\x40\x5b-\x5e\x60\x7b-\x7f]"
#: one character that is none of ``"'/@()\``, a name's character: an ASCII one
_PLAIN = r"[\x00-\x21\x23-\x26\x2a-\x2c\x2e\x3a-\x3f\x5b\x5d\x5e\x60\x7b-\x7f]"
#: a repeated group keeps a backtracking mark per repetition in ``re`` (a name, string or
#: address of 1,000,000 escapes took 300 MB): each repetition below is possessive on
#: Python 3.11+ (no state kept; the same matches: nothing after a repetition can match
#: where one more unit could, so no backtracking into one ever succeeds), and on Python
#: 3.10, which has no possessive quantifiers, greedy and at most ``RUN_310`` units (a
#: longer name, string or address is read as cut there); a unit is a run of plain
#: characters on 3.11+ (``_RUN``), one character on 3.10 (a greedy run inside a greedy
#: repetition could be split every way when what follows fails)
RUN_310 = 4096
_POSSESSIVE = sys.version_info >= (3, 11)
_MANY = "*+" if _POSSESSIVE else f"{{0,{RUN_310}}}"
_SOME = "++" if _POSSESSIVE else f"{{1,{RUN_310}}}"
_RUN = "++" if _POSSESSIVE else ""
_IDENT = (r"(?:--|-?(?:" + _NAME_START + "|" + _ESCAPE + r"))(?:" + _NAME_CHAR + _RUN
          + "|" + _ESCAPE + r")" + _MANY)
#: one token: a comment, a string (its closing quote in a group: a string broken by a new
#: line has none), an at-keyword, a run of anything that cannot start a function (names
#: not followed by ``(`` or an escape, each taken whole: the look-ahead keeps the run from
#: giving back a name's tail), a name (a function when ``(`` follows), a bracket, or one
#: other character
_TOKEN = (
    r"(?P<comment>/\*[\s\S]*?(?:\*/|\Z))"
    r"|\"(?P<dq>(?:[^\"\\\n\r\f]" + _RUN + r"|\\[\s\S])" + _MANY + r")(?P<dq_end>\")?"
    r"|'(?P<sq>(?:[^'\\\n\r\f]" + _RUN + r"|\\[\s\S])" + _MANY + r")(?P<sq_end>')?"
    r"|@(?P<at>" + _IDENT + ")"
    r"|(?P<other>(?:" + _PLAIN + "+"
    r"|(?=(?P<run>" + _NAME_CHAR + r"+))(?P=run)(?![(\\]))" + _SOME + ")"
    r"|(?P<ident>" + _IDENT + r")(?P<fn>\()?"
    r"|(?P<open>\()|(?P<close>\))"
    r"|(?P<single>[\s\S])")
#: an unquoted ``url(...)`` token after ``url(``: to the ``)``; a quote, ``(``, white space
#: inside, or a control character make it a bad URL, which the browser drops
_URL_TOKEN = (
    r"[ \t\r\n\f]*((?:[^) \t\r\n\f\"'(\\\x00-\x08\x0b\x0e-\x1f\x7f]" + _RUN + "|" + _ESCAPE
    + r")" + _MANY + r")[ \t\r\n\f]*\)")
_WS = r"[ \t\r\n\f]*"
_DECODE = r"\\(?:([0-9A-Fa-f]{1,6})(?:\r\n|[ \t\r\n\f])?|(\r\n|[\n\r\f])|([\s\S]))"
#: a pre-filter: CSS without any of these loads nothing (an escape may spell any name)
_MAY_LOAD = re.compile(r"\\|@|url|src|image-set", re.IGNORECASE)
#: functions whose string arguments are addresses
_STRING_URL_FUNCTIONS = frozenset({"url", "src"})
_IMAGE_SETS = frozenset({"image-set", "-webkit-image-set"})


@cache
def _compiled() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """The token, URL-token, white-space and escape patterns, compiled when the first style
    sheet is read (a module without CSS never pays it)."""
    return re.compile(_TOKEN), re.compile(_URL_TOKEN), re.compile(_WS), re.compile(_DECODE)


class CssUrl:
    """An address CSS loads: ``import`` (a stylesheet, ``@import``) or ``url``, decoded,
    and its offset in the text (a plain class: a NamedTuple costs start-up time)."""

    __slots__ = ("kind", "offset", "url")

    def __init__(self, kind: str, url: str, offset: int) -> None:
        self.kind = kind
        self.url = url
        self.offset = offset


def decode_css(text: str) -> str:
    """``text`` with its CSS escapes decoded (a code point of 0, a surrogate or past
    U+10FFFF is U+FFFD; an escaped new line, a string's line continuation, is dropped)."""
    return _compiled()[3].sub(_decode_one, text) if "\\" in text else text


def _decode_one(m: re.Match[str]) -> str:
    hex_digits, newline, char = m.group(1), m.group(2), m.group(3)
    if hex_digits is not None:
        code = int(hex_digits, 16)
        if code == 0 or code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
            return "\ufffd"
        return chr(code)
    return "" if newline is not None else char


def css_urls(text: str) -> list[CssUrl]:
    """The addresses ``text`` (a style sheet, or a ``style`` attribute's declarations)
    loads, in order, at most ``MAX_CSS_URLS``."""
    out: list[CssUrl] = []
    if not _MAY_LOAD.search(text):
        return out
    token = _compiled()[0]
    reader = _Reader(text, out)
    pos, n = 0, len(text)
    while pos < n and len(out) < MAX_CSS_URLS:
        m = token.match(text, pos)
        if m is None:  # cannot happen: the last alternative takes any character
            pos += 1
            continue
        pos = reader.token(m)
    return out


class _Reader:
    """The state between tokens: the next string is an address (after ``@import``,
    ``url(`` with a quote, ``src(``), and how deep inside an ``image-set(`` we are."""

    def __init__(self, text: str, out: list[CssUrl]) -> None:
        self.text = text
        self.out = out
        self.pending: str | None = None  # "import" | "url": what the next string is
        self.set_depth = 0

    def token(self, m: re.Match[str]) -> int:
        """Read one token; where the next one starts."""
        if m.group("comment") is not None:
            return m.end()
        for body, end in (("dq", "dq_end"), ("sq", "sq_end")):
            if m.group(body) is not None:
                self.string(m, body, end)
                return m.end()
        if m.group("at") is not None:
            self.pending = "import" if decode_css(m.group("at")).lower() == "import" else None
            return m.end()
        if m.group("ident") is not None:
            if m.group("fn") is None:
                self.pending = None
                return m.end()
            return self.function(decode_css(m.group("ident")).lower(), m.end())
        if m.group("open") is not None:
            self.set_depth += 1 if self.set_depth else 0
        elif m.group("close") is not None:
            self.set_depth = max(0, self.set_depth - 1)
            self.pending = None
        elif m.group().strip(" \t\r\n\f"):  # a run or one character, not white space
            self.pending = None
        return m.end()

    def string(self, m: re.Match[str], body: str, end: str) -> None:
        broken = m.group(end) is None and m.end() < len(self.text)  # a new line ended it
        if not broken and (self.pending or self.set_depth):
            self.add("import" if self.pending == "import" else "url",
                     decode_css(m.group(body)), m.start())
        self.pending = None

    def function(self, name: str, pos: int) -> int:
        """A function token ``name(`` ending at ``pos``: ``url(`` takes an unquoted address
        at once; its quoted form, ``src(`` and ``image-set(`` take strings."""
        kind = "import" if self.pending == "import" else "url"
        self.pending = None
        if self.set_depth:
            self.set_depth += 1
        elif name in _IMAGE_SETS:
            self.set_depth = 1
        if name not in _STRING_URL_FUNCTIONS:
            return pos
        after = _compiled()[2].match(self.text, pos)
        start = after.end() if after else pos
        if name == "url" and self.text[start:start + 1] not in ("\"", "'"):
            got = _compiled()[1].match(self.text, pos)
            if got is not None:
                self.add(kind, decode_css(got.group(1)), pos)
                self.set_depth = max(0, self.set_depth - 1)
                return got.end()
            close = self.text.find(")", pos)  # a bad URL: dropped up to its ")"
            return len(self.text) if close < 0 else close + 1
        self.pending = "import" if kind == "import" else "url"
        return pos

    def add(self, kind: str, url: str, offset: int) -> None:
        if url and len(self.out) < MAX_CSS_URLS:
            self.out.append(CssUrl(kind, url, offset))
