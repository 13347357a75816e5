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
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass, field

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
    | (?P<dq>"[^"\\\n]*(?:(?:\\z[ \t\r\n\f\v]*|\\.)[^"\\\n]*)*"?)
    | (?P<sq>'[^'\\\n]*(?:(?:\\z[ \t\r\n\f\v]*|\\.)[^'\\\n]*)*'?)
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
_LONG_OPEN = re.compile(r"\[(=*)\[")
_URL_HOST = re.compile(r"https?://([A-Za-z0-9][A-Za-z0-9.\-]{0,252})", re.IGNORECASE)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v",
            "\\": "\\", '"': '"', "'": "'", "\n": "\n"}
_ESC_RE = re.compile(r"\\(x[0-9a-fA-F]{2}|[0-9]{1,3}|u\{[0-9a-fA-F]{1,8}\}|z[ \t\r\n\f\v]*|.)",
                     re.DOTALL)


def decode_lua_string(body: str) -> str:
    """Decode the escapes of a short string body (best effort, never raises)."""
    if "\\" not in body:
        return body

    def repl(m: re.Match[str]) -> str:
        e = m.group(1)
        c = e[0]
        if c == "x":
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


class LineIndex:
    """Offsets of newlines, for offset -> 1-based line number."""

    __slots__ = ("_nl",)

    def __init__(self, text: str) -> None:
        nl: list[int] = []
        find = text.find
        i = find("\n")
        while i >= 0:
            nl.append(i)
            i = find("\n", i + 1)
        self._nl = nl

    def line(self, offset: int) -> int:
        return bisect_right(self._nl, offset - 1) + 1 if offset > 0 else 1


@dataclass
class Token:
    kind: int
    start: int
    end: int
    value: str  # name / operator text / decoded string value / number text


def tokenize(text: str, errors: list[tuple[int, str]] | None = None) -> list[Token]:
    """All significant tokens of ``text`` (comments dropped).  For tests and tools;
    the scanner uses :func:`_iter_tokens` directly."""
    return [Token(k, s, e, v) for k, s, e, v in _iter_tokens(text, errors if errors is not None
                                                              else [])]


def _iter_tokens(text: str, errors: list[tuple[int, str]]) -> Iterator[tuple[int, int, int, str]]:
    """Yield ``(kind, start, end, value)``; lexical errors go to ``errors`` as
    ``(offset, message)``."""
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
            yield NAME, s, e, m.group(group)
        elif group == "op":
            yield OP, s, e, m.group(group)
        elif group == "dq" or group == "sq":
            raw = m.group(group)
            q = raw[0]
            if len(raw) >= 2 and raw[-1] == q and not _escaped_end(raw):
                yield STR, s, e, decode_lua_string(raw[1:-1])
            else:
                errors.append((s, "unterminated string literal (ends at the end of its line)"))
                yield STR, s, e, decode_lua_string(raw[1:])
        elif group == "num":
            yield NUM, s, e, m.group(group)
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
                yield STR, s, n, text[body_start:n]
                e = n
            else:
                yield STR, s, j + len(close), text[body_start:j]
                e = j + len(close)
        elif group == "end":
            break
        else:  # other
            if other_reported < 20:
                ch = m.group(group or 0)
                errors.append((s, f"unexpected character U+{ord(ch[-1]) if ch else 0:04X}"))
            other_reported += 1
        pos = e if e > pos else pos + 1


def _escaped_end(raw: str) -> bool:
    """True if the closing quote of ``raw`` is escaped (odd run of backslashes)."""
    k = len(raw) - 2
    count = 0
    while k >= 1 and raw[k] == "\\":
        count += 1
        k -= 1
    return count % 2 == 1


# -- the scanner ---------------------------------------------------------------

#: calls whose literal arguments we keep: name -> how many leading args to keep
ARG_CALLS: dict[str, int] = {
    "listenEdit": 1, "request": 1, "load": 1, "loadstring": 1, "require": 1, "dofile": 1,
    "rawget": 2, "rawset": 2,
    "getChatVar": 2, "setChatVar": 2, "getState": 2, "setState": 2,
    "getGlobalVar": 2, "setGlobalVar": 2, "pcall": 3, "xpcall": 4, "getLoreBooks": 2,
}
_MAX_ARG_TOKENS = 20000  # stop following one call's arguments after this many tokens
_MAX_OPEN_COLLECTORS = 64


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

    def feed(self, kind: int, value: str) -> bool:
        """Take one token; True when this collector is done."""
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
                self.cur.literal = value
            elif kind == NAME:
                self.cur.name = value
        if kind == NAME and len(self.cur.names) < 32:
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
    const_pending: tuple[str, str] | None = None  # ``name = "literal"`` awaiting its end
    constants: dict[str, str | None] = {}
    for kind, s, _e, value in _iter_tokens(text, raw_errors):
        count += 1
        if const_pending is not None:
            if not (kind == OP and value in ("..", "(", "[", ".", ":", "{")) and kind != STR:
                cname, cval = const_pending
                constants[cname] = cval if constants.get(cname, cval) == cval else None
            const_pending = None
        if assign_target is not None and kind == STR and prev_kind == OP and prev_val == "=":
            const_pending = (assign_target[0], value)
        if collectors:
            done = [c for c in collectors if c.feed(kind, value)]
            if done:
                for c in done:
                    collectors.remove(c)
        if pend is not None:
            pname, pstart, pq, pbase = pend
            pend = None
            skip = keep is not None and pname not in keep
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
                                      [Arg(literal=value)], "string"))
            elif kind == OP and value == "{":
                if not skip:
                    calls.append(Call(pname, lines.line(pstart), pq, pbase, [], "table"))
            elif kind == OP and value == "[" and not pq and pname in ("_ENV", "_G"):
                result.dynamic_index.append((pname, lines.line(pstart)))
            elif kind == OP and value == "=" and not pq:
                assign_target = (pname, pstart)
        if kind == NAME:
            if value in KEYWORDS:
                if value == "function":
                    if assign_target is not None and prev_kind == OP and prev_val == "=":
                        defs.append(FuncDef(assign_target[0], lines.line(assign_target[1]),
                                            False))
                        in_funcname = False
                    else:
                        in_funcname = True
                        funcname_local = prev_kind == NAME and prev_val == "local"
                assign_target = None
            elif in_funcname:
                if not (prev_kind == OP and prev_val in (".", ":")):
                    defs.append(FuncDef(value, lines.line(s), funcname_local))
            else:
                if prev_kind == OP and prev_val in (".", ":"):
                    q = prev_val
                    base = prev2_val if prev2_kind == NAME else ""
                else:
                    q = ""
                    base = ""
                pend = (value, s, q, base)
        elif kind == STR and "://" in value:
            for hm in _URL_HOST.finditer(value):
                if len(result.url_hosts) < 1000:
                    result.url_hosts.append((hm.group(1).lower().rstrip("."),
                                             lines.line(s)))
        if in_funcname and not (kind == NAME or (kind == OP and value in (".", ":"))):
            in_funcname = False
        if assign_target is not None and not (kind == OP and value == "="):
            assign_target = None
        prev2_kind, prev2_val, prev_kind, prev_val = prev_kind, prev_val, kind, value
    for c in collectors:  # unclosed calls at the end of the text
        c.finish_arg()
    if const_pending is not None:
        cname, cval = const_pending
        constants[cname] = cval if constants.get(cname, cval) == cval else None
    result.constants = {k: v for k, v in constants.items() if v is not None}
    result.tokens = count
    result.lines = len(lines._nl) + 1
    result.errors = [(lines.line(off), msg) for off, msg in raw_errors]
    return result
