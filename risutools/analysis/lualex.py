"""A Lua 5.4 lexer that never runs the code it reads (the tokens :mod:`risutools.analysis.lua`
scans, and :mod:`risutools.analysis.lorecode` and the walk read).

The lexer is one fixed master regular expression (our own, linear: every
alternative either consumes a bounded run or is followed by an explicit
``str.find``) driven by ``match`` at successive positions.  It tells code from
comments and string literals so that names inside comments or strings are
never taken for calls, and it keeps string literals as data.

Syntax errors never stop it: an unterminated string ends at the end of its
line, an unterminated long string or long comment ends at the end of the text,
an unexpected character is skipped; each such event is recorded (``errors``) with its
offset.
"""

from __future__ import annotations

import re
import sys
from array import array
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

# Token kinds (small ints: cheap to compare).
NAME, STR, NUM, OP = 1, 2, 3, 4

KEYWORDS = frozenset(
    [
     "and", "break", "do", "else", "elseif", "end", "false", "for", "function", "goto", "if",
     "in", "local", "nil", "not", "or", "repeat", "return", "then", "true", "until", "while",
    ]
)

_MASTER = re.compile(
    r"""
    [ \t\r\n\f\v]*
    (?:
      (?P<name>[A-Za-z_][A-Za-z0-9_]*)
    | (?P<com>--)
    | (?P<str>["'])
    | (?P<lbr>\[=*\[)
    | (?P<num>0[xX][0-9a-fA-F]*(?:\.[0-9a-fA-F]*)?(?:[pP][+-]?[0-9]+)?
             |(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)
    | (?P<op>\.\.\.|\.\.|==|~=|<=|>=|<<|>>|//|::|[-+*/%^\#&~|<>=(){}\[\];:,.])
    | (?P<end>\Z)
    | (?P<other>.)
    )
    """,
    re.VERBOSE | re.DOTALL,
)
#: the group number of each alternative of _MASTER (``Match.lastindex``: an int compared)
_G_NAME, _G_COM, _G_STR, _G_LBR, _G_NUM, _G_OP, _G_END = (
    _MASTER.groupindex[g] for g in ("name", "com", "str", "lbr", "num", "op", "end"))
# The body of a short string: plain characters and escapes, up to (not including) the
# closing quote, an unescaped newline, or the end of the text.  It is matched in windows
# of _WINDOW characters (see :func:`match_windowed`), so the regex engine's backtracking
# stack never holds more than a window's escapes.
# A line break is "\n" or "\r" (Lua's llex.c: a short comment ends at either, a string may
# not hold either raw, and an escaped one is a line break, "\r\n" and "\n\r" one pair).
_BODY = {
    '"': re.compile(r'[^"\\\n\r]*(?:(?:\\z[ \t\r\n\f\v]*|\\(?:\r\n?|\n\r?)|\\.)[^"\\\n\r]*)*',
                    re.DOTALL),
    "'": re.compile(r"[^'\\\n\r]*(?:(?:\\z[ \t\r\n\f\v]*|\\(?:\r\n?|\n\r?)|\\.)[^'\\\n\r]*)*",
                    re.DOTALL),
}
_WS_RUN = re.compile(r"[ \t\r\n\f\v]*")
#: characters matched by one windowed regex match (bounds the regex engine's memory)
WINDOW = 4096
_LONG_OPEN = re.compile(r"\[(=*)\[")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v",
            "\\": "\\", '"': '"', "'": "'", "\n": "\n", "\r": "\n"}
_ESC_RE = re.compile(r"\\(x[0-9a-fA-F]{2}|[0-9]{1,3}|u\{[0-9a-fA-F]{1,8}\}|z[ \t\r\n\f\v]*"
                     r"|\r\n?|\n\r?|.)", re.DOTALL)
_BACKSLASHES = re.compile(r"\\+")
#: the body of a string is decoded in pieces of about this many characters
_DECODE_CHUNK = 65536


def match_windowed(rx: re.Pattern[str], text: str, pos: int, after_ws: bool = False) -> int:
    """The end of ``rx``'s match at ``pos``, matched window by window.

    ``rx`` must match a sequence of units (one character, or an escape of a few
    characters) greedily, so that a match stopped at a window's edge can resume
    where it stopped.  A window never ends inside a run of whitespace when
    ``after_ws`` (Lua's ``\\z`` escape swallows a whole run)."""
    n = len(text)
    match = rx.match
    while True:
        endpos = pos + WINDOW
        if endpos >= n:
            m = match(text, pos)
            return m.end() if m is not None else pos
        if after_ws:
            endpos = _WS_RUN.match(text, endpos).end()  # type: ignore[union-attr]
        m = match(text, pos, endpos)
        e = m.end() if m is not None else pos
        if e < endpos - 1 or endpos >= n or e <= pos:
            return e
        pos = e


def _byte(b: int) -> str:
    """One byte of a Lua string an escape makes: ASCII as its character, a byte past it as
    the ``surrogateescape`` character that stands for it (decoded with its neighbours by
    :func:`lua_text`: ``"\\226\\128\\174"`` is the three bytes of U+202E)."""
    return chr(b) if b < 0x80 else chr(0xDC00 + b)


def _utf8_escape(cp: int) -> str:
    """``\\u{XXX}``: the UTF-8 bytes Lua 5.4 writes for ``cp`` (its extended form up to
    2^31 - 1, surrogates included), as :func:`_byte` characters; past that, U+FFFD."""
    if cp <= 0x10FFFF and not 0xD800 <= cp <= 0xDFFF:
        return chr(cp)
    if cp > 0x7FFFFFFF:
        return "\ufffd"
    tail: list[int] = []
    top = 0x3F  # the most a first byte can carry with each continuation byte added
    while cp > top:
        tail.append(0x80 | (cp & 0x3F))
        cp >>= 6
        top >>= 1
    lead = (0xFF << (7 - len(tail))) & 0xFF | cp
    return "".join(map(_byte, [lead, *reversed(tail)]))


def _decode_piece(body: str) -> str:
    def repl(m: re.Match[str]) -> str:
        e = m.group(1)
        c = e[0]
        if c == "x" and len(e) == 3:  # "\x" without two hex digits is read as "x"
            return _byte(int(e[1:], 16))
        if c.isdigit():
            return _byte(min(int(e), 255))
        if c == "u" and len(e) > 1:
            return _utf8_escape(int(e[2:-1], 16))
        if c == "z":
            return ""
        return _ESCAPES.get(c, c)

    return _ESC_RE.sub(repl, body)


_BYTE_CHARS = re.compile("[\udc80-\udcff]")


def lua_text(raw: str) -> str:
    """A Lua string's value (:func:`lua_string_raw`) as the text RisuAI's JavaScript side
    gets (wasmoon decodes a Lua string's bytes as UTF-8, U+FFFD for a byte that is not)."""
    if raw.isascii() or _BYTE_CHARS.search(raw) is None:
        return raw
    try:
        return raw.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    except UnicodeEncodeError:  # a surrogate of the source's own text: left as it is
        return raw


def lua_string_raw(body: str, start: int = 0, end: int | None = None) -> str:
    """The value of a short string body (best effort, never raises), each byte an escape
    makes past ASCII as its ``surrogateescape`` character (:func:`lua_text` makes text of
    it; :mod:`luafold` works on its bytes, as Lua does).

    ``body[start:end]`` is decoded in pieces cut just before a run of backslashes,
    so memory stays proportional to the result, however many escapes it holds."""
    stop = len(body) if end is None else end
    if body.find("\\", start, stop) < 0:
        return body[start:stop]
    out: list[str] = []
    pos = start
    while pos < stop:
        cut = body.find("\\", min(pos + _DECODE_CHUNK, stop), stop)
        if cut > pos and body[cut - 1] == "\\":  # inside a run: cut before the next run
            run = _BACKSLASHES.match(body, cut)
            cut = body.find("\\", run.end() if run is not None else cut + 1, stop)
        if cut < 0:
            cut = stop
        out.append(_decode_piece(body[pos:cut]))
        pos = cut
    return "".join(out)


def decode_lua_string(body: str, start: int = 0, end: int | None = None) -> str:
    """The text of a short string body: its escapes decoded as Lua makes bytes of them
    (``\\ddd``, ``\\xHH``, ``\\u{XXX}``), the bytes read as UTF-8 as RisuAI reads them
    (:func:`lua_text`).  Best effort, never raises; memory proportional to the result."""
    if body.find("\\", start, len(body) if end is None else end) < 0:
        return body[start:end]
    return lua_text(lua_string_raw(body, start, end))


class LineIndex:
    """Offset -> 1-based line number, in memory proportional to the text / 4096.

    Keeps the number of newlines before every 4096th offset, and the last answer
    (the scanners ask in text order, so most questions count a few characters)."""

    __slots__ = ("_blocks", "_last", "_text", "newlines")
    BLOCK = 4096

    def __init__(self, text: str) -> None:
        self._text = text
        blocks = array("l", [0])
        count = text.count
        total = 0
        for start in range(0, len(text), self.BLOCK):
            total += count("\n", start, start + self.BLOCK)
            blocks.append(total)
        self._blocks = blocks
        self.newlines = total
        self._last = (0, 0)  # (offset, newlines before it)

    def line(self, offset: int) -> int:
        if offset <= 0:
            return 1
        offset = min(offset, len(self._text))
        last_off, last_nl = self._last
        if last_off <= offset < last_off + self.BLOCK:
            nl = last_nl + self._text.count("\n", last_off, offset)
        else:
            b = offset // self.BLOCK
            nl = self._blocks[b] + self._text.count("\n", b * self.BLOCK, offset)
        self._last = (offset, nl)
        return nl + 1


@dataclass
class Token:
    """A token with its string value decoded (:func:`tokenize`)."""

    kind: int
    start: int
    end: int
    value: str  # name / operator text / decoded string value / number text


#: one token: (kind, start, end, value, body start, body end).  ``value`` is the text of
#: a name, operator or number, the body of a string without escapes, and None for a
#: string with escapes (decode ``text[body start:body end]`` when it is needed).
RawToken = tuple[int, int, int, "str | None", int, int]


def tokenize(text: str, errors: list[tuple[int, str]] | None = None) -> list[Token]:
    """All significant tokens of ``text`` (comments dropped), strings decoded.  For tests
    and tools; the scanner uses :func:`iter_tokens` and decodes only what it needs."""
    out: list[Token] = []
    for k, s, e, v, b0, b1 in iter_tokens(text, errors if errors is not None else []):
        out.append(Token(k, s, e, v if v is not None else decode_lua_string(text, b0, b1)))
    return out


#: blanks and line comments (never a long comment ``--[[``): what yields no token, passed
#: over before a skipper's run (the alternatives start with different characters, so the
#: match is linear whatever the length).  A repeated group keeps a backtracking mark per
#: repetition ("--c\n" * 4,000,000 took 1.4 GB): Python 3.11+ repeats it possessively (no
#: state kept); Python 3.10 matches at most ``NO_TOKENS_RUN_310`` units at a time
#: (:func:`pass_blanks` goes on while a match ends where the next one can start)
NO_TOKENS_RUN_310 = 4096
_BLANK_UNIT = r"(?:[ \t\r\n\f\v]+|--(?!\[=*\[)[^\r\n]*(?=[\r\n]))"
_NO_TOKENS_POSSESSIVE = re.compile(_BLANK_UNIT + "*+").match \
    if sys.version_info >= (3, 11) else None
_NO_TOKENS_310 = re.compile(f"{_BLANK_UNIT}{{0,{NO_TOKENS_RUN_310}}}").match


def pass_blanks_310(text: str, pos: int) -> int:
    """Where the blanks and line comments at ``pos`` end, matched a bounded number of units
    at a time (Python 3.10: no possessive repetition)."""
    while True:
        e = _NO_TOKENS_310(text, pos).end()  # type: ignore[union-attr]
        if e == pos:
            return e
        pos = e


def pass_blanks(text: str, pos: int) -> int:
    """Where the blanks and line comments at ``pos`` end (see :data:`NO_TOKENS_RUN_310`)."""
    if _NO_TOKENS_POSSESSIVE is None:
        return pass_blanks_310(text, pos)
    return _NO_TOKENS_POSSESSIVE(text, pos).end()  # type: ignore[union-attr]


class Skipper:
    """Lets :func:`iter_tokens` jump over a run of tokens its reader has no use for.

    While ``idle`` is true (the reader sets it after each token), the lexer first matches
    ``pattern`` (a run of whole tokens, see :func:`skip_pattern`) and goes on after it;
    ``last`` is then the text of the last token passed over (the one before the token the
    reader gets next)."""

    __slots__ = ("idle", "jump", "last", "match")

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.match = pattern.match
        self.idle = True
        self.last: str | None = None  # the last token passed over, until the reader takes it
        #: an offset where a token starts that the reader read up to itself (idle or not,
        #: the lexer goes on from there when it is past where the lexer is)
        self.jump = 0


def iter_tokens(text: str, errors: list[tuple[int, str]],
                skipper: Skipper | None = None, start: int = 0) -> Iterator[RawToken]:
    """Yield the tokens of ``text`` one at a time (see :data:`RawToken`); lexical errors
    go to ``errors`` as ``(offset, message)``.  Nothing is built per character.  With a
    ``skipper``, runs of tokens its reader does not need are passed over (see
    :class:`Skipper`).  Names and operators are read here; each other kind of token by a
    function of its own.  ``start``: an offset where a token starts (a reader that knows
    one, e.g. a call the scanner recorded, reads on from there)."""
    match = _MASTER.match
    n = len(text)
    pos = start
    other_reported = 0
    while pos <= n:
        if skipper is not None:
            if skipper.jump > pos:
                pos = skipper.jump
            if skipper.idle:
                # (blanks and line comments first, once: a run of tokens that stops at the
                # token after them would otherwise read them again at each one the lexer
                # then takes, quadratic in the run: 20,000 comment lines took 8.5 s)
                pos = pass_blanks(text, pos)
                sm = skipper.match(text, pos)
                if sm is not None and sm.end() > pos:
                    pos = sm.end()
                    skipper.last = sm.group("last")
        m = match(text, pos)
        if m is None:  # cannot happen (``other`` matches any char), but never loop
            break
        group = m.lastindex or 0  # the alternative that matched (see _G_NAME ...)
        s = m.start(group)
        e = m.end()
        if group == _G_NAME:
            yield NAME, s, e, m.group(group), s, e
        elif group == _G_OP:
            yield OP, s, e, m.group(group), s, e
        elif group == _G_STR:
            tok = _short_string(text, s, e, errors)
            yield tok
            e = tok[2]
        elif group == _G_NUM:
            yield NUM, s, e, m.group(group), s, e
        elif group == _G_COM:
            e = _comment_end(text, s, e, errors)
        elif group == _G_LBR:
            tok = _long_string(text, s, e, errors)
            yield tok
            e = tok[2]
        elif group == _G_END:
            break
        else:  # other
            if other_reported < 20:
                errors.append((s, _unexpected(m.group(group))))
            other_reported += 1
        pos = e if e > pos else pos + 1


_BLANKS = r"[ \t\r\n\f\v]*"
_PLAIN_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
#: a function's header written plainly: its name (``f``, ``t.f``, ``t:f``) or none, and its
#: parameter list, only blanks between the tokens (no comment; :func:`plain_header` refuses
#: a keyword for a name)
_HEADER = re.compile(rf"""{_BLANKS}(?:{_PLAIN_NAME}(?:{_BLANKS}[.:]{_BLANKS}{_PLAIN_NAME})*
    {_BLANKS})?\({_BLANKS}(?:(?:{_PLAIN_NAME}{_BLANKS},{_BLANKS})*(?:{_PLAIN_NAME}|\.\.\.)
    {_BLANKS})?\)""".replace("\n    ", ""))
_HEADER_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\.\.\.|[.:(),]")
#: a header longer than this is read token by token
MAX_PLAIN_HEADER = 400


def plain_header(text: str, at: int) -> list[tuple[str, int]] | None:
    """The tokens (text, offset) of the function header at ``at`` (right after the keyword
    ``function``) up to the ``)`` that ends its parameters, when it is written plainly (a
    name or none, then ``(``, parameter names, ``,``, ``...``, ``)``, only blanks between
    them, at most ``MAX_PLAIN_HEADER`` characters); None otherwise."""
    m = _HEADER.match(text, at, at + MAX_PLAIN_HEADER)
    if m is None:
        return None
    toks = [(t.group(), t.start()) for t in _HEADER_TOKEN.finditer(text, at, m.end())]
    return None if any(v in KEYWORDS for v, _s in toks) else toks


def _short_string(text: str, s: int, e: int, errors: list[tuple[int, str]]) -> RawToken:
    """The string whose quote is at ``s`` (its body starts at ``e``); unterminated, it ends
    at the end of its line.  Its value is None when it holds escapes."""
    q = text[s]
    b1 = match_windowed(_BODY[q], text, e, after_ws=True)
    if b1 < len(text) and text[b1] == q:
        end = b1 + 1
    else:
        errors.append((s, "unterminated string literal (ends at the end of its line)"))
        end = b1
    return STR, s, end, (None if text.find("\\", s + 1, b1) >= 0 else text[s + 1 : b1]), \
        s + 1, b1


_LINE_BREAK = re.compile(r"[\r\n]")


def _comment_end(text: str, s: int, e: int, errors: list[tuple[int, str]]) -> int:
    """Where the comment whose ``--`` is at ``s`` (``e`` after it) ends: a long comment at
    its closing bracket (unterminated: at the end of the text), a line comment at the end of
    its line."""
    lm = _LONG_OPEN.match(text, e)
    if lm is not None:
        close = "]" + lm.group(1) + "]"
        j = text.find(close, lm.end())
        if j < 0:
            errors.append((s, "unterminated long comment (runs to the end of the code)"))
            return len(text)
        return j + len(close)
    m = _LINE_BREAK.search(text, e)
    return len(text) if m is None else m.start()


def _long_string(text: str, s: int, e: int, errors: list[tuple[int, str]]) -> RawToken:
    """The long string whose ``[=*[`` spans ``s``-``e``: up to its closing bracket
    (unterminated: to the end of the text), a first newline not part of its value."""
    n = len(text)
    close = "]" + "=" * (e - s - 2) + "]"
    j = text.find(close, e)
    body_start = e
    if body_start < n and text[body_start] in "\r\n":  # Lua skips a first line break
        body_start += 1 + (body_start + 1 < n and text[body_start + 1] in "\r\n"
                           and text[body_start + 1] != text[body_start])
    if j < 0:
        errors.append((s, "unterminated long string (runs to the end of the code)"))
        return STR, s, n, text[body_start:n], body_start, n
    return STR, s, j + len(close), text[body_start:j], body_start, j


def _unexpected(ch: str) -> str:
    return f"unexpected character U+{ord(ch[-1]) if ch else 0:04X}"


def name_positions(code: str, name: str) -> Iterator[int]:
    """Where ``name`` is written in ``code`` as a whole Lua name: not part of a longer
    name and not a field (``.name``, ``:name``).  Plain string searches, linear in
    ``code``; a comment or a string counts too (callers that care say so)."""
    pos, n = 0, len(code)
    while True:
        i = code.find(name, pos)
        if i < 0:
            return
        pos = i + 1
        end = i + len(name)
        if (i and (code[i - 1].isalnum() or code[i - 1] in "_.:")) or \
                (end < n and (code[end].isalnum() or code[end] == "_")):
            continue
        yield i


def name_before_dot(text: str, at: int) -> str:
    """The plain name before the ``.`` or ``:`` before the name at ``at`` (``t`` of
    ``t.f``), or "" (none, or not a plain name: ``a.b.f``, ``f().g``); read back over at
    most 64 characters."""
    i = at
    lo = max(0, at - 64)
    while i > lo and text[i - 1] in " \t":
        i -= 1
    if i <= lo or text[i - 1] not in ".:":
        return ""
    i -= 1
    while i > lo and text[i - 1] in " \t":
        i -= 1
    e = i
    while i > lo and (text[i - 1].isalnum() or text[i - 1] == "_"):
        i -= 1
    name = text[i:e]
    if not name or not (name[0].isalpha() or name[0] == "_") or not name.isascii() \
            or (i > 0 and text[i - 1] in ".:") or name in KEYWORDS:
        return ""
    return name


def path_start(text: str, start: int, path: bool = True) -> int:
    """Where the path of names whose last one starts at ``start`` begins (``a.b.c``,
    ``a . b:c``; read back over at most 64 characters); ``start`` if not ``path``."""
    if not path:
        return start
    at = start
    floor = max(0, start - 64)
    while at > floor and (text[at - 1].isalnum() or text[at - 1] in "_.: \t"):
        at -= 1
    while at < start and text[at] in ".: \t":
        at += 1
    return at


def in_type_call(text: str, start: int) -> bool:
    """Whether the name at ``start`` is the first argument of ``type(`` (read back over at
    most 64 characters)."""
    before = text[max(0, start - 64):start].rstrip()
    if not before.endswith("("):
        return False
    before = before[:-1].rstrip()
    return before.endswith("type") and (len(before) == 4 or not (
        before[-5].isalnum() or before[-5] in "_.:"))


#: ``name =`` (not ``==``): a whole name, not a field (``.name``, ``:name``), then blanks
_ASSIGNED = re.compile(r"(?<![\w.:])([A-Za-z_]\w*+)[ \t]*+=(?!=)")


def assignment_counts(code: str, names: Iterable[str]) -> dict[str, int]:
    """How many times each of ``names`` is written ``name =`` (not ``==``) in ``code``, as
    :func:`name_positions` finds a name (a comment or a string counts too): one search of
    our own pattern over the whole code, whatever the number of names (linear)."""
    want = set(names)
    out = dict.fromkeys(want, 0)
    if want:
        for m in _ASSIGNED.finditer(code):
            if m.group(1) in want:
                out[m.group(1)] += 1
    return out


#: a bracketed string that may be ``"_G"`` (as written, or with an escape): the pre-filter of
#: :func:`globals_fields`, which reads the tokens only for a script that holds one
_MAYBE_G_KEY = re.compile(r"""\[[ \t\r\n\f\v]*(["'])(?:_G\1|[^"'\]\n]*\\)""")
#: the tokens an index ``[k]`` follows (a table constructor's ``{["_G"] = v}`` is no index)
_INDEXED_AFTER = frozenset({")", "]"})


def globals_fields(text: str) -> str:
    """``text`` with each index ``["_G"]`` (``['_G']``, ``["\\95G"]``: any string literal
    that is ``_G``) that follows a value (a name, ``)`` or ``]``) written ``._G`` and blanks,
    the line breaks inside it kept: the same length and lines, every other offset the
    same.  The scanner then reads ``package.loaded["_G"]["request"](u)`` and
    ``p["_G"].request(u)`` as it reads ``package.loaded._G["request"](u)`` (a field
    ``_G`` yields the table of globals).  Strings and comments are never changed: the
    tokens are read, and only for a script the pre-filter lets through."""
    if _MAYBE_G_KEY.search(text) is None:
        return text
    spans: list[tuple[int, int]] = []
    window: list[tuple[int, str | None, int, int]] = []  # the last four tokens
    for kind, s, e, value, b0, b1 in iter_tokens(text, []):
        if kind == STR and value is None:
            value = decode_lua_string(text, b0, b1)
        window = [*window[-3:], (kind, value, s, e)]
        if (len(window) == 4 and window[3][:2] == (OP, "]") and window[2][:2] == (STR, "_G")
                and window[1][:2] == (OP, "[")
                and ((window[0][0] == NAME and window[0][1] not in KEYWORDS)
                     or (window[0][0] == OP and window[0][1] in _INDEXED_AFTER))):
            spans.append((window[1][2], window[3][3]))
    if not spans:
        return text
    out, at = [], 0
    for s, e in spans:
        breaks = "".join(c for c in text[s:e] if c in "\r\n")
        out += [text[at:s], "._G", breaks, " " * (e - s - 3 - len(breaks))]
        at = e
    out.append(text[at:])
    return "".join(out)


def names_in(code: str, names: Mapping[str, object] | frozenset[str], span: int
             ) -> list[str]:
    """The names of ``names`` that code read as text (``load("return " .. "request")``)
    uses as globals (not after ``.``/``:``): its first ``span`` characters."""
    out: list[str] = []
    prev = ""
    for kind, _s, _e, value, _b0, _b1 in iter_tokens(code[:span], []):
        if kind == NAME and value is not None and value in names and prev not in (".", ":") \
                and value not in out:
            out.append(value)
        prev = value if kind == OP and value is not None else ""
    return out
