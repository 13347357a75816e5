"""A Lua 5.4 lexer and call scanner that never runs the code it reads.

The lexer is one fixed master regular expression (our own, linear: every
alternative either consumes a bounded run or is followed by an explicit
``str.find``) driven by ``match`` at successive positions.  It tells code from
comments and string literals so that names inside comments or strings are
never taken for calls, and it keeps string literals as data.

Syntax errors never stop it: an unterminated string ends at the end of its
line, an unterminated long string or long comment ends at the end of the text,
an unexpected character is skipped; each such event is recorded in
:attr:`LuaScan.errors` with its line number.

The scanner (:func:`scan_lua`) walks the tokens once and records:

* calls ``name(``, ``name "x"``, ``name [[x]]``, ``name {`` and method or field
  calls ``obj:name(`` / ``obj.name(`` (with the qualifier), with the literal
  first arguments of the calls a static analyser cares about;
* function definitions (``function name``, ``local function name``,
  ``name = function``);
* dynamic environment access (``_ENV[...]``, ``_G[...]``);
* hosts of literal ``http(s)://`` URLs found in string literals.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

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
# The body of a short string: plain characters and escapes, up to (not including) the
# closing quote, an unescaped newline, or the end of the text.  It is matched in windows
# of _WINDOW characters (see :func:`match_windowed`), so the regex engine's backtracking
# stack never holds more than a window's escapes.
_BODY = {
    '"': re.compile(r'[^"\\\n]*(?:(?:\\z[ \t\r\n\f\v]*|\\.)[^"\\\n]*)*', re.DOTALL),
    "'": re.compile(r"[^'\\\n]*(?:(?:\\z[ \t\r\n\f\v]*|\\.)[^'\\\n]*)*", re.DOTALL),
}
_WS_RUN = re.compile(r"[ \t\r\n\f\v]*")
#: characters matched by one windowed regex match (bounds the regex engine's memory)
WINDOW = 4096
_LONG_OPEN = re.compile(r"\[(=*)\[")
_URL_HOST = re.compile(r"https?://([A-Za-z0-9][A-Za-z0-9.\-]{0,252})", re.IGNORECASE)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v",
            "\\": "\\", '"': '"', "'": "'", "\n": "\n"}
_ESC_RE = re.compile(r"\\(x[0-9a-fA-F]{2}|[0-9]{1,3}|u\{[0-9a-fA-F]{1,8}\}|z[ \t\r\n\f\v]*|.)",
                     re.DOTALL)
_BACKSLASHES = re.compile(r"\\+")
# an escape that can make ":" or "/" out of other characters (``\58``, ``\x3a``, ``\u{2f}``)
_CODED_ESCAPE = re.compile(r"\\[0-9xu]")
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


def _decode_piece(body: str) -> str:
    def repl(m: re.Match[str]) -> str:
        e = m.group(1)
        c = e[0]
        if c == "x" and len(e) == 3:  # "\x" without two hex digits is read as "x"
            return chr(int(e[1:], 16))
        if c.isdigit():
            return chr(min(int(e), 255))
        if c == "u" and len(e) > 1:
            cp = int(e[2:-1], 16)
            return chr(cp) if cp <= 0x10FFFF else "\ufffd"
        if c == "z":
            return ""
        return _ESCAPES.get(c, c)

    return _ESC_RE.sub(repl, body)


def decode_lua_string(body: str, start: int = 0, end: int | None = None) -> str:
    """Decode the escapes of a short string body (best effort, never raises).

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


def iter_tokens(text: str, errors: list[tuple[int, str]]) -> Iterator[RawToken]:
    """Yield the tokens of ``text`` one at a time (see :data:`RawToken`); lexical errors
    go to ``errors`` as ``(offset, message)``.  Nothing is built per character."""
    match = _MASTER.match
    find = text.find
    n = len(text)
    pos = 0
    other_reported = 0
    while pos <= n:
        m = match(text, pos)
        if m is None:  # cannot happen (``other`` matches any char), but never loop
            break
        group = m.lastgroup
        s = m.start(group) if group else pos
        e = m.end()
        if group == "name":
            yield NAME, s, e, m.group(group), s, e
        elif group == "op":
            yield OP, s, e, m.group(group), s, e
        elif group == "str":
            q = text[s]
            b1 = match_windowed(_BODY[q], text, e, after_ws=True)
            if b1 < n and text[b1] == q:
                e = b1 + 1
            else:
                errors.append((s, "unterminated string literal (ends at the end of its line)"))
                e = b1
            yield STR, s, e, (None if find("\\", s + 1, b1) >= 0 else text[s + 1 : b1]), \
                s + 1, b1
        elif group == "num":
            yield NUM, s, e, m.group(group), s, e
        elif group == "com":
            lm = _LONG_OPEN.match(text, e)
            if lm is not None:
                close = "]" + lm.group(1) + "]"
                j = find(close, lm.end())
                if j < 0:
                    errors.append((s, "unterminated long comment (runs to the end of the code)"))
                    e = n
                else:
                    e = j + len(close)
            else:
                j = find("\n", e)
                e = n if j < 0 else j
        elif group == "lbr":
            level = e - s - 2
            close = "]" + "=" * level + "]"
            j = find(close, e)
            body_start = e
            if body_start < n and text[body_start] == "\n":
                body_start += 1  # Lua skips a first newline
            if j < 0:
                errors.append((s, "unterminated long string (runs to the end of the code)"))
                yield STR, s, n, text[body_start:n], body_start, n
                e = n
            else:
                yield STR, s, j + len(close), text[body_start:j], body_start, j
                e = j + len(close)
        elif group == "end":
            break
        else:  # other
            if other_reported < 20:
                ch = m.group(group or 0)
                errors.append((s, f"unexpected character U+{ord(ch[-1]) if ch else 0:04X}"))
            other_reported += 1
        pos = e if e > pos else pos + 1


def _may_hold_url(text: str, b0: int, b1: int) -> bool:
    """Whether the decoded string ``text[b0:b1]`` can contain ``://`` (cheap, exact enough:
    only a ``:`` or an escape that codes a character can make one)."""
    return text.find(":", b0, b1) >= 0 or _CODED_ESCAPE.search(text, b0, b1) is not None


# -- the scanner ---------------------------------------------------------------

#: calls whose literal arguments we keep: name -> how many leading args to keep
ARG_CALLS: dict[str, int] = {
    "listenEdit": 1, "request": 1, "load": 1, "loadstring": 1, "require": 1, "dofile": 1,
    "rawget": 2, "rawset": 2,
    "getChatVar": 2, "setChatVar": 2, "getState": 2, "setState": 2,
    "getGlobalVar": 2, "setGlobalVar": 2, "pcall": 3, "xpcall": 4, "getLoreBooks": 2,
}
#: a literal up to this long may be a state key named through a constant
_MAX_NAME_CONSTANT = 80
_MAX_ARG_TOKENS = 20000  # stop following one call's arguments after this many tokens
_MAX_OPEN_COLLECTORS = 64
#: at most this many calls are kept per script, and this many definitions, dynamic
#: lookups and constants (each on its own); past it the scan goes on and says so in
#: ``errors``.  A kept call costs about 100 bytes (equal arguments are shared).
MAX_CALLS = 1_000_000
MAX_RECORDS = 100_000
_OPAQUE = "\x00opaque"  # a constant that cannot hold a URL (its value is never decoded)


@dataclass(slots=True)
class Arg:
    """One argument of a call, as far as a static reader can tell."""

    literal: str | None = None  # the value when the argument is a single string literal
    name: str | None = None  # the name when the argument is a single name
    names: list[str] = field(default_factory=list)  # names seen in the argument


@dataclass(slots=True)
class Call:
    name: str
    line: int
    qualifier: str = ""  # "", "." or ":"
    base: str = ""  # the name before the qualifier, when it is a plain name
    args: list[Arg] = field(default_factory=list)
    form: str = "paren"  # paren | string | table


@dataclass
class FuncDef:
    name: str
    line: int
    local: bool


@dataclass
class LuaScan:
    calls: list[Call] = field(default_factory=list)
    defs: list[FuncDef] = field(default_factory=list)
    dynamic_index: list[tuple[str, int]] = field(default_factory=list)  # (_ENV|_G, line)
    url_hosts: list[tuple[str, int]] = field(default_factory=list)
    #: names assigned exactly one string literal (``local URL = "https://..."``)
    constants: dict[str, str] = field(default_factory=dict)
    errors: list[tuple[int, str]] = field(default_factory=list)  # (line, message)
    tokens: int = 0
    lines: int = 0


class _Collector:
    __slots__ = ("budget", "call", "cur", "cur_count", "depth", "need")

    def __init__(self, call: Call, need: int) -> None:
        self.call = call
        self.depth = 1
        self.cur = Arg()
        self.cur_count = 0
        self.need = need
        self.budget = _MAX_ARG_TOKENS

    def finish_arg(self) -> bool:
        """Close the current argument; True when no more are needed."""
        arg = self.cur
        if self.cur_count != 1:
            arg.literal = None
            arg.name = None
        if self.cur_count:
            self.call.args.append(arg)
        self.cur = Arg()
        self.cur_count = 0
        return len(self.call.args) >= self.need

    def feed(self, kind: int, value: str | None, text: str, b0: int, b1: int) -> bool:
        """Take one token; True when this collector is done.  A string's value is
        decoded (``text[b0:b1]``) only when it is the argument's first token."""
        self.budget -= 1
        if self.budget <= 0:
            return True
        if kind == OP:
            if value in ("(", "{", "["):
                self.depth += 1
                self.cur_count += 1
                return False
            if value in (")", "}", "]"):
                self.depth -= 1
                if self.depth <= 0:
                    self.finish_arg()
                    return True
                return False
            if value == "," and self.depth == 1:
                return self.finish_arg()
            self.cur_count += 1
            return False
        self.cur_count += 1
        if self.depth == 1 and self.cur_count == 1:
            if kind == STR:
                self.cur.literal = value if value is not None else decode_lua_string(text, b0,
                                                                                     b1)
            elif kind == NAME:
                self.cur.name = value
        if kind == NAME and value is not None and len(self.cur.names) < 32:
            self.cur.names.append(value)
        return False


def scan_lua(text: str, keep: frozenset[str] | None = None) -> LuaScan:
    """Read Lua source and return what it calls, defines and names (never raises).

    ``keep``: record only calls to these names (all calls when None)."""
    result = LuaScan()
    if not isinstance(text, str) or not text:
        return result
    lines = LineIndex(text)
    raw_errors: list[tuple[int, str]] = []
    calls = result.calls
    defs = result.defs
    collectors: list[_Collector] = []

    prev_kind = 0
    prev_val = ""
    prev2_kind = 0
    prev2_val = ""
    # pending name (possible call): (name, start, qualifier, base)
    pend: tuple[str, int, str, str] | None = None
    in_funcname = False  # right after the keyword ``function``
    funcname_local = False
    assign_target: tuple[str, int] | None = None  # ``name =`` seen, waiting for ``function``
    count = 0
    # ``name = "literal"`` awaiting its end: (name, value); the value is _OPAQUE when the
    # literal is longer than a variable name and cannot hold a URL (constants name the
    # URL of a request or the key of a state call), so it is never decoded
    const_pending: tuple[str, str] | None = None
    constants: dict[str, str | None] = {}
    full: set[str] = set()  # record kinds past MAX_RECORDS

    def room(kind_name: str, held: int, offset: int) -> bool:
        bound = MAX_CALLS if kind_name == "calls" else MAX_RECORDS
        if held < bound:
            return True
        if kind_name not in full:
            full.add(kind_name)
            raw_errors.append((offset, f"more than {bound} {kind_name}; the rest "
                                       "were not recorded"))
        return False

    shared: dict[tuple[object, ...], Any] = {}  # equal arguments share one object

    def share_args(call: Call) -> None:
        args = []
        for a in call.args:
            key: tuple[object, ...] = (a.literal, a.name, *a.names)
            got = shared.get(key)
            if got is None:
                if len(shared) >= MAX_RECORDS:
                    shared.clear()
                got = shared[key] = a
            args.append(got)
        key = ("args", *map(id, args))
        got = shared.get(key)
        if got is None:
            got = shared[key] = args
        call.args = got

    for kind, s, _e, value, b0, b1 in iter_tokens(text, raw_errors):
        count += 1
        if const_pending is not None:
            if not (kind == OP and value in ("..", "(", "[", ".", ":", "{")) and kind != STR:
                cname, cval = const_pending
                if cname in constants or room("constants", len(constants), s):
                    constants[cname] = cval if constants.get(cname, cval) == cval else None
            const_pending = None
        if assign_target is not None and kind == STR and prev_kind == OP and prev_val == "=":
            if b1 - b0 > _MAX_NAME_CONSTANT and not _may_hold_url(text, b0, b1):
                const_pending = (assign_target[0], _OPAQUE)
            else:
                const_pending = (assign_target[0], value if value is not None
                                 else decode_lua_string(text, b0, b1))
        if collectors:
            done = [c for c in collectors if c.feed(kind, value, text, b0, b1)]
            if done:
                for c in done:
                    collectors.remove(c)
                    share_args(c.call)
        if pend is not None:
            pname, pstart, pq, pbase = pend
            pend = None
            skip = keep is not None and pname not in keep
            if not skip and kind in (OP, STR) and (kind == STR or value in ("(", "{")) \
                    and not room("calls", len(calls), pstart):
                skip = True
            if kind == OP and value == "(":
                if not skip:
                    call = Call(pname, lines.line(pstart), pq, pbase)
                    calls.append(call)
                    need = ARG_CALLS.get(pname, 0)
                    if need and len(collectors) < _MAX_OPEN_COLLECTORS:
                        collectors.append(_Collector(call, need))
            elif kind == STR:
                if not skip:
                    calls.append(Call(pname, lines.line(pstart), pq, pbase,
                                      [Arg(literal=value if value is not None
                                           else decode_lua_string(text, b0, b1))], "string"))
            elif kind == OP and value == "{":
                if not skip:
                    calls.append(Call(pname, lines.line(pstart), pq, pbase, [], "table"))
            elif kind == OP and value == "[" and not pq and pname in ("_ENV", "_G"):
                if room("dynamic lookups", len(result.dynamic_index), pstart):
                    result.dynamic_index.append((pname, lines.line(pstart)))
            elif kind == OP and value == "=" and not pq:
                assign_target = (pname, pstart)
        if kind == NAME and value is not None:
            if value in KEYWORDS:
                if value == "function":
                    if assign_target is not None and prev_kind == OP and prev_val == "=":
                        if room("function definitions", len(defs), s):
                            defs.append(FuncDef(assign_target[0],
                                                lines.line(assign_target[1]), False))
                        in_funcname = False
                    else:
                        in_funcname = True
                        funcname_local = prev_kind == NAME and prev_val == "local"
                assign_target = None
            elif in_funcname:
                if not (prev_kind == OP and prev_val in (".", ":")) \
                        and room("function definitions", len(defs), s):
                    defs.append(FuncDef(value, lines.line(s), funcname_local))
            else:
                if prev_kind == OP and prev_val in (".", ":"):
                    q = prev_val
                    base = prev2_val if prev2_kind == NAME else ""
                else:
                    q = ""
                    base = ""
                pend = (value, s, q, base)
        elif kind == STR and len(result.url_hosts) < 1000 and (
                value is not None or _may_hold_url(text, b0, b1)):
            if value is None:  # escapes: decoded only when they may spell a URL
                value = decode_lua_string(text, b0, b1)
            for hm in _URL_HOST.finditer(value) if "://" in value else ():
                if len(result.url_hosts) < 1000:
                    result.url_hosts.append((hm.group(1).lower().rstrip("."),
                                             lines.line(s)))
        if in_funcname and not (kind == NAME or (kind == OP and value in (".", ":"))):
            in_funcname = False
        if assign_target is not None and not (kind == OP and value == "="):
            assign_target = None
        prev2_kind, prev2_val, prev_kind, prev_val = prev_kind, prev_val, kind, value or ""
    for c in collectors:  # unclosed calls at the end of the text
        c.finish_arg()
        share_args(c.call)
    if const_pending is not None:
        cname, cval = const_pending
        if cname in constants or room("constants", len(constants), len(text)):
            constants[cname] = cval if constants.get(cname, cval) == cval else None
    result.constants = {k: v for k, v in constants.items() if v is not None and v != _OPAQUE}
    result.tokens = count
    result.lines = lines.newlines + 1
    raw_errors.sort(key=lambda err: err[0])
    result.errors = [(lines.line(off), msg) for off, msg in raw_errors]
    return result
