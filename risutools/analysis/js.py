"""A small JavaScript lexer for legacy ``cjs``: tells code from comments,
strings, template literals and (heuristically) regular-expression literals, so
that a name scan sees only code.  Never runs anything; never raises."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from risutools.analysis.lualex import LineIndex, match_windowed

_MASTER = re.compile(
    r"""
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
    """,
    re.VERBOSE | re.DOTALL,
)
# String and template bodies (up to the closing quote, not included), matched window by
# window (``match_windowed``) so the regex engine never stacks more than a window's escapes.
_BODY = {
    '"': re.compile(r'[^"\\\n]*(?:\\.[^"\\\n]*)*', re.DOTALL),
    "'": re.compile(r"[^'\\\n]*(?:\\.[^'\\\n]*)*", re.DOTALL),
    "`": re.compile(r"[^`\\]*(?:\\.[^`\\]*)*", re.DOTALL),
}
# a regex literal body: no newline; classes ``[...]`` may hold "/"; the flags follow
# (closed classes are read here too; a class left open at a window's edge or at a newline
# stops this match at its "[" and is read by _REGEX_CLASS)
_REGEX_OUTSIDE = re.compile(
    r"[^/\\\[\n]*(?:(?:\\.|\[[^\]\\\n]*(?:\\.[^\]\\\n]*)*\])[^/\\\[\n]*)*")
_REGEX_CLASS = re.compile(r"[^\]\\\n]*(?:\\.[^\]\\\n]*)*")
_REGEX_FLAGS = re.compile(r"/?[A-Za-z]*")
_URL_HOST = re.compile(r"https?://([A-Za-z0-9][A-Za-z0-9.\-]{0,252})", re.IGNORECASE)
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


@dataclass
class JsScan:
    """What :func:`scan_js` found in legacy JavaScript."""

    names: dict[str, list[int]] = field(default_factory=dict)  # notable name -> lines
    url_hosts: list[tuple[str, int]] = field(default_factory=list)
    errors: list[tuple[int, str]] = field(default_factory=list)
    tokens: int = 0


def scan_js(text: str) -> JsScan:
    """Scan legacy JavaScript for notable names and literal URL hosts."""
    out = JsScan()
    if not isinstance(text, str) or not text:
        return out
    lines = LineIndex(text)
    n = len(text)
    pos = 0
    prev_kind = ""  # "name", "num", "str", "op", "close"
    prev_val = ""
    errors: list[tuple[int, str]] = []
    count = 0
    while pos <= n:
        m = _MASTER.match(text, pos)
        if m is None:
            break
        g = m.lastgroup
        s = m.start(g) if g else pos
        e = m.end()
        if g == "end":
            break
        count += 1
        if g == "name":
            v = m.group(g)
            if v in JS_NOTABLE and len(out.names.setdefault(v, [])) < 100:
                out.names[v].append(lines.line(s))
            prev_kind, prev_val = "name", v
        elif g == "lc":
            j = text.find("\n", e)
            e = n if j < 0 else j
        elif g == "bc":
            j = text.find("*/", e)
            if j < 0:
                errors.append((s, "unterminated block comment"))
                e = n
            else:
                e = j + 2
        elif g == "str":
            q = text[s]
            b1 = match_windowed(_BODY[q], text, e)
            if b1 < n and text[b1] == q:
                e = b1 + 1
            else:
                errors.append((s, "unterminated string or template literal"))
                e = b1
            if len(out.url_hosts) < 1000 and text.find("://", s, e) >= 0:
                for hm in _URL_HOST.finditer(text, s, e):
                    if len(out.url_hosts) < 1000:
                        out.url_hosts.append((hm.group(1).lower().rstrip("."), lines.line(s)))
            prev_kind, prev_val = "str", ""
        elif g == "num":
            prev_kind, prev_val = "num", ""
        elif g == "slash":
            regex_ok = prev_kind in ("", "op") or (
                prev_kind == "name" and prev_val in _REGEX_AFTER_NAMES)
            if regex_ok:
                e = _regex_literal_end(text, e)
                prev_kind, prev_val = "str", ""
            else:
                prev_kind, prev_val = "op", "/"
        elif g == "op":
            v = m.group(g)
            prev_kind, prev_val = ("close" if v in ")]}" else "op"), v
        else:
            if len(errors) < 20:
                errors.append((s, "unexpected character"))
        pos = e if e > pos else pos + 1
    out.tokens = count
    out.errors = [(lines.line(o), msg) for o, msg in errors]
    return out


def _regex_literal_end(text: str, pos: int) -> int:
    """Where a regex literal whose body starts at ``pos`` ends (after its flags)."""
    n = len(text)
    while True:
        pos = match_windowed(_REGEX_OUTSIDE, text, pos)
        if pos >= n or text[pos] != "[":
            break
        pos = match_windowed(_REGEX_CLASS, text, pos + 1)
        if pos < n and text[pos] == "]":
            pos += 1
    m = _REGEX_FLAGS.match(text, pos)
    return m.end() if m is not None else pos
