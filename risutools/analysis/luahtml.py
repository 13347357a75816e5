"""HTML a Lua script writes in its strings (what an ``editDisplay`` listener returns, what
``addChat`` or ``setChat`` put in a message: RisuAI shows it), read as the HTML readers read
shown text: script in it (RA301-RA304) and remote addresses built from what is joined to it
(RA305).

A string literal that holds a tag (``<`` and a letter) or a Markdown address (``](``) is
read as HTML with the concatenation it starts (:func:`~.luafold.template_span`: ``..``,
``string.format``, ``gsub``, ``table.concat``), each value a hole read as a CBS variable is
(``"<img src='https://h/?q=" .. msg`` sends ``msg`` to ``h``; ``'<img src="' .. url``, an
address that is the value alone, does not), a name assigned a template its template; so is
each use of a constant that holds one (``PIXEL .. data``).  A chain too long to read: the
literal alone, a value after it when ``..`` follows.  One pass over the tokens, made only
for a script the pre-filter (:func:`may_hold_html`) lets through; at most
:data:`MAX_HTML_STRINGS` strings and uses a script, each read once.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import ChainMap
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import replace
from functools import cache

from risutools.analysis.htmlscan import HtmlScan, scan_html
from risutools.analysis.luaargs import LIT, REF
from risutools.analysis.luafold import MAX_FOLD_SPAN, template_span
from risutools.analysis.luahtmltables import grown_strings, grows_strings, joined_tables
from risutools.analysis.lualex import (
    OP,
    STR,
    LineIndex,
    Skipper,
    decode_lua_string,
    iter_tokens,
)
from risutools.analysis.luaskip import POSSESSIVE, skip_pattern

#: at most this many of a script's strings that hold a tag (and uses of its constants that
#: hold one) are read as HTML
MAX_HTML_STRINGS = 2_000
#: constants holding a tag whose uses are read, at most
MAX_TAGGED = 32
#: a chain's parts and characters, at most (a longer one: its strings read one by one)
CHAIN_LIMITS = (64, MAX_FOLD_SPAN)
#: what HTML needs to run script or reach an address: the test of a string (and of the
#: lines near an opening, the pre-filter of a script)
#: what a string is read for: a tag's opening, or a Markdown link's or image's address
#: (RisuAI renders a message's Markdown: ``![](https://h/?q=...)`` is an image it loads)
#: (``<%s`` and a ``<`` that ends a string: a tag whose name is joined to it,
#: ``string.format("<%s>", "script")``, ``"<" .. "script>"``)
_SEED = re.compile(r"<[A-Za-z%]|<\Z|\]\(")
_RISKY = re.compile(r"//|\\\\|java|vbs|\bon[a-z]+\s*=|<\s*(?:script|meta|base|form|i?frame|object"
                    r"|embed)|srcdoc|action|url\s*\(|@import|&#|\\(?:[0-9a-f]|x|u\{)",
                    re.IGNORECASE)
#: the pre-filter's openings: a tag (``<`` then a letter, or an escape), a Markdown address
_OPENING = re.compile(r"<[A-Za-z\\]|\]\(")
#: what makes a tag out of pieces written apart, so the pre-filter lets a script through:
#: ``<`` alone in a string, ``<%`` (a format's name), ``string.char(`` (folded: ``char(60)``
#: is ``<``)
_PIECES = re.compile(r"""<(?:%|(?<=["']<)["'])""")
_CHAR = re.compile(r"char\s*\(")  # (a word of its own: :func:`_word`)
#: the join of a named table (:mod:`.luahtmltables`): with a tag's opening somewhere
_JOINED = re.compile(r"table\s*\.\s*concat\s*\(\s*[A-Za-z_]")  # (:func:`_word`)


def _word(rx: re.Pattern[str], code: str) -> bool:
    """Whether ``rx`` (a pattern that starts with a word's letters: the search then scans
    for them in C, where a leading ``\b`` or look-behind is tried at every character) matches
    where no letter, digit or ``_`` comes before."""
    return any(m.start() == 0 or not (code[m.start() - 1].isalnum()
                                      or code[m.start() - 1] == "_")
               for m in rx.finditer(code))
#: a tag's opening (``<`` then a letter, ``/`` or ``!``) or one written backwards (``gmi<``,
#: for ``reverse``): what the joins, the grown strings and the string functions need
#: somewhere to make a tag (a ``<`` between blanks is a comparison: real scripts hold many,
#: and reading each such script whole cost the real corpus's analysis 2x)
_TAGGISH = re.compile(r"<(?:[A-Za-z/!]|(?<=[A-Za-z]<))")  # (each match starts at a ``<``)
#: a string function that makes a text of another (``("<img src=x X=f()>"):gsub("X",
#: "onerror")``, ``(">)(f=rorreno x=crs gmi<"):reverse()``, ``("<b on"):rep(1) .. "error="``):
#: with a ``<`` anywhere, the pre-filter lets the script through (the reader folds them)
_TRANSFORM = re.compile(r"[:.]\s*(?:gsub|reverse|rep|sub|lower|upper|format)\s*\(")
#: a format's directive (``%s``: what is put in a tag that holds one may be its name)
_DIRECTIVE = re.compile(r"%[-0-9.]*[sdq]")
#: a fold that may make ``<`` with no string holding it: ``string.char(...)``,
#: ``("").char(...)``
_CHAR_CALL = re.compile(r"(?<![\w.:])string\s*\.\s*char\s*\("
                        r"|\(\s*(?:\"\"|'')\s*\)\s*[.:]\s*char\s*\(")
#: an escape that makes a printable character (``\x3c``, ``\60``, ``\u{3c}``; not a
#: control, ``\0``, ``\31``): a script writing one is read (its strings decoded before
#: they are judged)
_ESCAPE = re.compile(r"\\(?:[xX][2-7][0-9a-fA-F]|u\{"
                     r"|(?:0?(?:3[2-9]|[4-9][0-9])|1(?:[01][0-9]|2[0-6]))(?![0-9]))")
#: a tag's end, a concatenation, two strings joined (``"<scr" .. "ipt>"``)
_CLOSE = re.compile(">")
_DOTS = re.compile(r"(?<!\.)\.\.(?!\.)")  # (not an ellipsis, ``...``)
_JOIN = re.compile(r"[\"'\]]\s*\.\.\s*[\"'\[]")
#: what may open the expression a string is the first operand of: ``string.format(``,
#: ``string.gsub(``, ``(`` (``("<b>%s</b>"):format(x)``), ``table.concat({``
_OPENER = re.compile(r"(?:\bstring\s*\.\s*(?:format|gsub)\s*)?\(\s*\Z"
                     r"|\btable\s*\.\s*concat\s*\(\s*\{\s*\Z")
#: ``name =`` before a string (a constant, when the scanner says it is one)
_ASSIGNED = re.compile(r"(?<![\w.:])([A-Za-z_]\w*)\s*=\s*\Z")
#: how far before a string :data:`_OPENER` and :data:`_ASSIGNED` look
_LOOK_BACK = 64


@cache
def _past() -> re.Pattern[str]:
    """The runs of tokens :func:`html_strings` passes over: any but a string that may hold
    ``<`` or ``](`` (compiled once, when a script first needs it: not at every command's
    start)."""
    return skip_pattern(frozenset(), POSSESSIVE, "< ](")

#: what stands for the value joined after a string (a variable, as CBS reads one)
VALUE = "{{getvar::lua}}"
#: the template a name is assigned (``local u = "https://h/?q=" .. q``), or None
Names = Callable[[str], "tuple[tuple[int, str], ...] | None"]


class _Next:
    """The first match of a pattern at or after an offset, for offsets that do not go
    back: searched again only past the last match (each character read once)."""

    def __init__(self, code: str, pattern: re.Pattern[str]) -> None:
        self.code, self.search, self.at = code, pattern.search, -1

    def after(self, pos: int) -> int:
        if self.at < pos:
            m = self.search(self.code, pos)
            self.at = m.start() if m is not None else len(self.code)
        return self.at


def may_hold_html(code: str) -> bool:
    """Whether a script may write HTML that runs script or reaches an address in its
    strings: it writes an escape that makes a printable character (its strings are then
    decoded and judged), or an opening (a tag, a Markdown address) whose line, the next,
    or the tag up to its ``>`` (attributes on lines of their own) holds such a mark or
    two strings joined (a mark split in two), or a value joined inside the tag (its
    ``>`` not yet met; after ``](``: on those lines) while such a mark is anywhere (a
    name's address).  Each character looked at a bounded number of times."""
    if _ESCAPE.search(code) is not None or _PIECES.search(code) is not None \
            or _word(_CHAR, code) or (_TAGGISH.search(code) is not None and (
                _word(_JOINED, code) or grows_strings(code)
                or _TRANSFORM.search(code) is not None)):
        return True
    closes, dots, joins = _Next(code, _CLOSE), _Next(code, _DOTS), _Next(code, _JOIN)
    directives = _Next(code, _DIRECTIVE)
    at = covered = 0
    anywhere: bool | None = None  # such a mark anywhere in the code
    while (m := _OPENING.search(code, at)) is not None:
        start = max(code.rfind("\n", 0, m.start()) + 1, covered - 16)  # (16: a mark cut)
        end = code.find("\n", m.end())
        end = len(code) if end < 0 else end
        after = code.find("\n", end + 1)
        stop = len(code) if after < 0 else after
        inside = closes.after(m.end()) if m.group()[0] == "<" else stop
        stop = max(stop, inside + 1)
        if _RISKY.search(code, max(start, 0), stop) or joins.after(max(start, 0)) < stop \
                or directives.after(m.end()) < inside:
            return True
        if dots.after(m.end()) < inside:
            if anywhere is None:  # (searched once)
                anywhere = _RISKY.search(code) is not None
            if anywhere:
                return True
        at, covered = max(end, m.end()), max(stop, covered)
    return False


def html_strings(code: str, constants: Mapping[str, str] | None = None,
                 names: Names | None = None) -> Iterator[tuple[int, str]]:
    """(line, text) of what each string literal of ``code`` that holds a tag or a Markdown
    address is part of: the concatenation ``..`` (or ``string.format``, ``gsub``: luafold's
    :func:`~risutools.analysis.luafold.template_span`) it starts, each value a
    :data:`VALUE` (a name assigned a template, by ``names``: its template), or the literal
    alone (:data:`VALUE` after it when ``..`` follows it); and what each use of a constant
    holding one is part of.  The first :data:`MAX_HTML_STRINGS`."""
    reader = _Chains(code, constants or {}, names)
    yield from reader.literals()
    yield from reader.folded()
    yield from reader.uses()
    yield from reader.tables()


class _Chains:
    """The reader of :func:`html_strings`: the concatenations read (their extents, so a
    string or a use inside one is not read again) and the constants holding a tag."""

    def __init__(self, code: str, constants: Mapping[str, str], names: Names | None) -> None:
        self.code = code
        self.lines = LineIndex(code)
        tagged = [(k, v) for k, v in sorted(constants.items()) if _SEED.search(v)]
        #: constants holding a tag (folded ones too: ``string.char(60)``) -> their text
        self.tagged: dict[str, str] = dict(tagged[:MAX_TAGGED])
        self.consts: ChainMap[str, str] = ChainMap(self.tagged, dict(constants))
        self.names = names
        self.starts: list[int] = []  # the extents of the concatenations read, in order
        self.ends: list[int] = []
        self.left = MAX_HTML_STRINGS  # strings and uses read

    def literals(self) -> Iterator[tuple[int, str]]:
        code = self.code
        pending: tuple[int, str] | None = None
        skipper = Skipper(_past())  # (runs of tokens without a ``<`` in a string passed over)
        for kind, s, _e, value, b0, b1 in iter_tokens(code, [], skipper):
            skipper.last = None
            skipper.idle = True  # (but the token after a string read alone: not passed over)
            if pending is not None:
                line, text = pending
                pending = None
                yield line, text + VALUE if (kind, value) == (OP, "..") else text
            if kind != STR or (self.ends and s < self.ends[-1]):
                continue
            text = value if value is not None else decode_lua_string(code, b0, b1)
            if not _SEED.search(text):
                continue
            self.left -= 1
            if self.left < 0:
                return
            line = self.lines.line(b0)  # (its text's first line: a long string's first
            if code.startswith(("\r\n", "\n"), b0) and not text.startswith(("\r", "\n")):
                line += 1  # line break is not its text)
            self.constant(s, text)
            chain = self.chain(s)
            if chain is not None:
                if _RISKY.search(chain):
                    yield line, chain
            elif _RISKY.search(text):
                pending = (line, text)
                skipper.idle = False
        if pending is not None:
            yield pending

    def constant(self, at: int, text: str) -> None:
        """Note the string at ``at`` as a constant's value when it is ``name = "..."`` and
        the scanner read ``name`` as a constant."""
        m = _ASSIGNED.search(self.code, max(0, at - _LOOK_BACK), at)
        if m is not None and m.group(1) in self.consts and len(self.tagged) < MAX_TAGGED:
            self.tagged[m.group(1)] = text

    def chain(self, at: int) -> str | None:
        """The text of the concatenation (or format, gsub) the operand at ``at`` is the
        first of (or of the call it is the first argument of), or None; its extent noted."""
        m = _OPENER.search(self.code, max(0, at - _LOOK_BACK), at)
        for start in (m.start(), at) if m is not None else (at,):
            got = template_span(self.code, start, self.consts, CHAIN_LIMITS)
            if got is not None and got[1] > at:
                i = bisect_right(self.starts, start)  # (in order: :meth:`inside`)
                self.starts.insert(i, start)
                self.ends.insert(i, got[1])
                return "".join(self.text_of(k, t) for k, t in got[0])
        return None

    def text_of(self, kind: int, text: str) -> str:
        """A part's text: a literal's own, a name's template (``names``), else :data:`VALUE`."""
        if kind == LIT:
            return text
        got = self.names(text) if kind == REF and self.names is not None else None
        return "".join(t if k == LIT else VALUE for k, t in got) if got else VALUE

    def folded(self) -> Iterator[tuple[int, str]]:
        """What each ``string.char(...)`` outside the concatenations read is the first
        operand of (``string.char(60) .. "script>"``)."""
        yield from self.chains_at(m.start() for m in _CHAR_CALL.finditer(self.code))

    def chains_at(self, starts: Iterable[int]) -> Iterator[tuple[int, str]]:
        """(line, text) of the concatenation each of ``starts`` outside those read begins,
        when it holds a tag and a mark (:data:`_RISKY`); each start counted."""
        for at in starts:
            if self.inside(at):
                continue
            self.left -= 1
            if self.left < 0:
                return
            text = self.chain(at)
            if text is not None and _SEED.search(text) and _RISKY.search(text):
                yield self.lines.line(at), text

    def tables(self) -> Iterator[tuple[int, str]]:
        """What each join of a named table, each string grown by joining to it, makes
        (:mod:`.luahtmltables`)."""
        for at, parts in [*joined_tables(self.code, self.consts, CHAIN_LIMITS),
                          *grown_strings(self.code, self.consts, CHAIN_LIMITS)]:
            self.left -= 1
            if self.left < 0:
                return
            text = "".join(self.text_of(k, t) for k, t in parts)
            if _SEED.search(text) and _RISKY.search(text):
                yield self.lines.line(at), text

    def inside(self, at: int) -> bool:
        """Whether ``at`` is inside a concatenation read."""
        i = bisect_right(self.starts, at) - 1
        return i >= 0 and at < self.ends[i]

    def uses(self) -> Iterator[tuple[int, str]]:
        """What each use of a constant holding a tag is part of (``PIXEL .. data``,
        ``T:gsub("%$Q", data)``), outside the concatenations read."""
        if not self.tagged:
            return
        words = "|".join(re.escape(n) for n in sorted(self.tagged))
        found = re.compile(rf"(?<![\w:])(?:(?<=\.\.)|(?<!\.))(?:{words})(?![\w])")
        yield from self.chains_at(m.start() for m in found.finditer(self.code))


def read_lua_html(code: str, constants: Mapping[str, str] | None = None,
                  names: Names | None = None) -> Iterator[HtmlScan]:
    """:func:`scan_html` of each of :func:`html_strings`, its lines the script's, when it
    finds script or an address built from a value (what the checks of shown HTML read)."""
    for line, text in html_strings(code, constants, names):
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
