"""A small JavaScript lexer for legacy ``cjs``: tells code from comments,
strings, template literals and (heuristically) regular-expression literals, so
that a name scan sees only code.  Never runs anything; never raises."""

from __future__ import annotations

import re
from functools import cache

from risutools.analysis.lualex import LineIndex, match_windowed
from risutools.analysis.urlleaks import url_hosts

# The lexer's regular expressions, as text: compiled on first use (:func:`_rx`), so that
# importing this module costs nothing for the many modules without legacy JavaScript.
_MASTER = r"""
    [ \t\r\n\f\v\u00a0\ufeff]*
    (?:
      (?P<name>[A-Za-z_$][A-Za-z0-9_$]*)
    | (?P<lc>//)
    | (?P<bc>/\*)
    | (?P<str>["'`])
    | (?P<num>[0-9][0-9A-Za-z_.]*|\.[0-9][0-9A-Za-z_]*)
    | (?P<slash>/)
    | (?P<op>=>|\?\.|\.\.\.|[-+*%=<>!&|^~?:;,.(){}\[\]])
    | (?P<end>\Z)
    | (?P<other>.)
    )
    """
# String and template bodies (up to the closing quote, not included), matched window by
# window (``match_windowed``) so the regex engine never stacks more than a window's escapes.
_BODY = {
    '"': r'[^"\\\n]*(?:\\.[^"\\\n]*)*',
    "'": r"[^'\\\n]*(?:\\.[^'\\\n]*)*",
    "`": r"[^`\\]*(?:\\.[^`\\]*)*",
}
# a regex literal body: no newline; classes ``[...]`` may hold "/"; the flags follow
# (closed classes are read here too; a class left open at a window's edge or at a newline
# stops this match at its "[" and is read by _REGEX_CLASS)
_REGEX_OUTSIDE = r"[^/\\\[\n]*(?:(?:\\.|\[[^\]\\\n]*(?:\\.[^\]\\\n]*)*\])[^/\\\[\n]*)*"
_REGEX_CLASS = r"[^\]\\\n]*(?:\\.[^\]\\\n]*)*"
_REGEX_FLAGS = r"/?[A-Za-z]*"
#: regular-expression literals kept per script (checked for backtracking, RA201)
MAX_JS_PATTERNS = 1000
_REGEX_AFTER_NAMES = frozenset(
    [
     "return", "typeof", "instanceof", "in", "of", "new", "delete", "void", "throw", "case",
     "do", "else", "yield", "await",
    ]
)

#: names a reviewer wants to see in legacy JS, and why
JS_NOTABLE: dict[str, str] = {
    "eval": "dynamic code", "Function": "dynamic code", "importScripts": "dynamic code",
    "import": "dynamic code", "setTimeout": "timer", "setInterval": "timer",
    "fetch": "network", "XMLHttpRequest": "network", "WebSocket": "network",
    "sendBeacon": "network", "EventSource": "network",
    "localStorage": "storage", "sessionStorage": "storage", "indexedDB": "storage",
    "cookie": "storage", "innerHTML": "dom", "outerHTML": "dom", "insertAdjacentHTML": "dom",
    "addRisuEventHandler": "risu", "risuFetch": "network",
}
#: the notable names that build code at run time (RA502), and those that use the network (RA503)
DYNAMIC_CODE = frozenset(n for n, why in JS_NOTABLE.items() if why == "dynamic code")
NETWORK = frozenset(n for n, why in JS_NOTABLE.items() if why == "network")


class _Rx:
    """The lexer's regular expressions, compiled."""

    def __init__(self) -> None:
        self.master = re.compile(_MASTER, re.VERBOSE | re.DOTALL)
        self.body = {q: re.compile(src, re.DOTALL) for q, src in _BODY.items()}
        self.regex_outside = re.compile(_REGEX_OUTSIDE)
        self.regex_class = re.compile(_REGEX_CLASS)
        self.regex_flags = re.compile(_REGEX_FLAGS)


@cache
def _rx() -> _Rx:
    """The lexer's regular expressions (compiled once, when the first script is read)."""
    return _Rx()


class JsScan:
    """What :func:`scan_js` found in legacy JavaScript."""

    __slots__ = ("errors", "names", "patterns", "tokens", "url_hosts")

    def __init__(self) -> None:
        self.names: dict[str, list[int]] = {}  # notable name -> lines
        self.url_hosts: list[tuple[str, int]] = []
        #: regular-expression literals (body, flags, line), at most ``MAX_JS_PATTERNS``
        self.patterns: list[tuple[str, str, int]] = []
        self.errors: list[tuple[int, str]] = []
        self.tokens = 0


def scan_js(text: str) -> JsScan:
    """Scan legacy JavaScript for notable names and literal URL hosts."""
    if not isinstance(text, str) or not text:
        return JsScan()
    return _JsReader(text).run()


class _JsReader:
    """One :func:`scan_js` pass: :meth:`run` matches a token at a time and hands it to the
    step of its kind (``_STEPS``), which returns where the token ends."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.lines = LineIndex(text)
        self.out = JsScan()
        self.errors: list[tuple[int, str]] = []  # (offset, message)
        self.prev_kind = ""  # "name", "num", "str", "op", "close"
        self.prev_val = ""
        self.rx = _rx()

    def run(self) -> JsScan:
        text = self.text
        n = len(text)
        steps = _STEPS
        match = self.rx.master.match
        pos = 0
        count = 0
        while pos <= n:
            m = match(text, pos)
            if m is None:
                break
            g = m.lastgroup or "other"
            if g == "end":
                break
            count += 1
            e = steps[g](self, m)
            pos = e if e > pos else pos + 1
        out = self.out
        out.tokens = count
        out.errors = [(self.lines.line(o), msg) for o, msg in self.errors]
        return out

    def name(self, m: re.Match[str]) -> int:
        v = m.group("name")
        names = self.out.names
        if v in JS_NOTABLE and len(names.setdefault(v, [])) < 100:
            names[v].append(self.lines.line(m.start("name")))
        self.prev_kind, self.prev_val = "name", v
        return m.end()

    def line_comment(self, m: re.Match[str]) -> int:
        j = self.text.find("\n", m.end())
        return len(self.text) if j < 0 else j

    def block_comment(self, m: re.Match[str]) -> int:
        j = self.text.find("*/", m.end())
        if j < 0:
            self.errors.append((m.start("bc"), "unterminated block comment"))
            return len(self.text)
        return j + 2

    def string(self, m: re.Match[str]) -> int:
        """A string or template literal (unterminated: to the end of its line, or of the
        text for a template); the hosts of the URLs it holds."""
        text = self.text
        s = m.start("str")
        q = text[s]
        b1 = match_windowed(self.rx.body[q], text, m.end())
        if b1 < len(text) and text[b1] == q:
            e = b1 + 1
        else:
            self.errors.append((s, "unterminated string or template literal"))
            e = b1
        hosts = self.out.url_hosts
        if len(hosts) < 1000 and text.find(":", s, e) >= 0:
            # escapes decoded first (``https:\/\/h``, ``\u0068ttps://h``, ``https:\\\\h``),
            # as the string's value is what a browser reads
            value, lo, hi = (decode_js_string(text[s + 1:e]), 0, None) \
                if text.find("\\", s, e) >= 0 else (text, s, e)
            for _, host in url_hosts(value, lo, hi):  # (``https://user@h``: h)
                if len(hosts) < 1000:
                    hosts.append((host, self.lines.line(s)))
        self.prev_kind, self.prev_val = "str", ""
        return e

    def number(self, m: re.Match[str]) -> int:
        self.prev_kind, self.prev_val = "num", ""
        return m.end()

    def slash(self, m: re.Match[str]) -> int:
        """``/``: a regular-expression literal where an operand may start (after an operator,
        at the start, after ``return`` ...), else division."""
        if self.prev_kind in ("", "op") or (
                self.prev_kind == "name" and self.prev_val in _REGEX_AFTER_NAMES):
            self.prev_kind, self.prev_val = "str", ""
            end = _regex_literal_end(self.text, m.end())
            close = self.text.rfind("/", m.end(), end)
            if close >= m.end() and len(self.out.patterns) < MAX_JS_PATTERNS:
                self.out.patterns.append((self.text[m.end():close], self.text[close + 1:end],
                                          self.lines.line(m.start())))
            return end
        self.prev_kind, self.prev_val = "op", "/"
        return m.end()

    def operator(self, m: re.Match[str]) -> int:
        v = m.group("op")
        self.prev_kind, self.prev_val = ("close" if v in ")]}" else "op"), v
        return m.end()

    def other(self, m: re.Match[str]) -> int:
        if len(self.errors) < 20:
            self.errors.append((m.start(m.lastgroup or 0), "unexpected character"))
        return m.end()


#: the group of the master pattern that matched -> the step that reads the token
_STEPS = {
    "name": _JsReader.name, "lc": _JsReader.line_comment, "bc": _JsReader.block_comment,
    "str": _JsReader.string, "num": _JsReader.number, "slash": _JsReader.slash,
    "op": _JsReader.operator, "other": _JsReader.other,
}


#: an escape of a JavaScript string or template literal
_ESCAPE = re.compile(r"\\(u\{[0-9A-Fa-f]{1,8}\}|u[0-9A-Fa-f]{4}|x[0-9A-Fa-f]{2}|\r\n|.)",
                     re.DOTALL)
#: what a one-character escape stands for (a line break after ``\`` continues the line)
_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v",
                   "0": "\0", "\n": "", "\r": "", "\r\n": "", "\u2028": "", "\u2029": ""}


def decode_js_string(body: str) -> str:
    """The value of a string or template literal's body (its escapes decoded: ``\\n``,
    ``\\xHH``, ``\\uHHHH``, ``\\u{H...}``, a line continuation, ``\\c`` for any other
    ``c``); a ``${...}`` of a template stays as written."""
    return _ESCAPE.sub(_unescape, body)


def _unescape(m: re.Match[str]) -> str:
    esc = m.group(1)
    if esc[0] in "ux" and len(esc) > 1:
        code = int(esc.strip("ux{}"), 16)
        return chr(code) if code <= 0x10FFFF else "\ufffd"
    return _SIMPLE_ESCAPES.get(esc, esc)


def _regex_literal_end(text: str, pos: int) -> int:
    """Where a regex literal whose body starts at ``pos`` ends (after its flags)."""
    rx = _rx()
    n = len(text)
    while True:
        pos = match_windowed(rx.regex_outside, text, pos)
        if pos >= n or text[pos] != "[":
            break
        pos = match_windowed(rx.regex_class, text, pos + 1)
        if pos < n and text[pos] == "]":
            pos += 1
    m = rx.regex_flags.match(text, pos)
    return m.end() if m is not None else pos
