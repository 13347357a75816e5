"""Buttons that Lua code writes into what RisuAI shows (issue 22), read from its strings.

An ``editDisplay`` listener (or any code whose text RisuAI shows) builds HTML with
``risu-btn="value"`` (RisuAI hands the value to the Lua global ``onButtonClick``),
``risu-trigger="Name"`` (RisuAI runs the manual trigger or the Lua global ``Name``) or a
CBS ``{{button::label::Name}}``; LightBoard's HTML builder writes the attribute as a table
field ``risu_btn = "value"``.  :func:`lua_buttons` reads them from every string form a
reader sees: short and long strings, concatenations (``'risu-btn="game;' .. mode .. '"'``),
``string.format`` templates (``%s`` ...) and ``risu_btn = ...`` fields; what is computed
becomes ``*`` in the value (``game;*``).  Comments are never read (they are not tokens),
and a value that looks like a Lua pattern (``(.-)``, ``%w+``: a search, not a button) is
not taken.

One pass over the tokens: :func:`~risutools.analysis.luaskip.block_pattern` passes over
everything but strings that hold ``risu``, ``{{button``-like text with ``:`` (stopped by the
``:``) or an escape, long strings, and the names ``format``, ``risu_btn`` and ``function``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import NamedTuple

from risutools.analysis.lua import POSSESSIVE
from risutools.analysis.lualex import (
    KEYWORDS,
    NAME,
    NUM,
    OP,
    STR,
    LineIndex,
    RawToken,
    Skipper,
    decode_lua_string,
    iter_tokens,
)
from risutools.analysis.luaskip import block_pattern

#: a hole in a template (what the code computes)
HOLE = "\x00"
#: at most this many tokens are read for one template, and this many buttons per script
MAX_TEMPLATE_TOKENS = 400
MAX_BUTTONS = 1000
#: at most this many tokens of computed parts are read again per script (a part that
#: writes buttons of its own)
MAX_REPLAY = 100_000
_ATTR = re.compile(r"""risu-(btn|trigger)\s*=\s*(["'])([^"'<>\n]{0,200})\2""", re.IGNORECASE)
#: a CBS button as RisuAI's ``matcher`` reads the tag (parser.svelte.ts): its name in any
#: case, blanks, ``_`` and ``-`` around it dropped; its arguments cut at ``::`` when the first
#: colon is one, else at ``:`` (``{{button:Go:run}}``); the function it runs is the second
#: argument (``{{button::Go::run::x}}`` runs ``run``), none when that is empty
_CBS_BUTTON = re.compile(
    r"\{\{[\s_-]*button[\s_-]*(?:"
    r"::(?:(?!::)[^{}]){0,200}::((?:(?!::)[^{}]){1,200})(?:::[^{}]{0,400})?"
    r"|:(?!:)[^{}:]{0,200}:([^{}:]{1,200})(?::[^{}]{0,400})?"
    r")\}\}", re.IGNORECASE)
#: a text that may hold a CBS button (lower-cased first: a literal search)
_BUTTON_MARK = re.compile(r"button[\s_-]*:")
_CBS_IN_VALUE = re.compile(r"\{\{[^{}]{0,100}\}\}")
_FORMAT_SPEC = re.compile(r"%(?:%|[-+ #0]*[0-9]*(?:\.[0-9]+)?[a-zA-Z])")
#: a value holding one of these reads as a Lua pattern or code, not a button
_NOT_A_VALUE = re.compile(r"[%()\[\]^$]")
_MARKERS = ("risu-btn", "risu-trigger", "risu_btn")
_ENDS_OPERAND = frozenset({",", ";", ")", "}", "]", "=", "==", "~=", "..", "<", ">", "<=",
                           ">="})
_OPEN = frozenset({"(", "[", "{"})
_CLOSE = frozenset({")", "]", "}"})


class CodeButton(NamedTuple):
    """A button written by code: ``btn`` (risu-btn), ``trigger`` (risu-trigger or a CBS
    button), its value (``*`` where computed), its line and offset."""

    kind: str
    value: str
    line: int
    offset: int


def may_hold_buttons(code: str) -> bool:
    """A cheap test: whether ``code`` names a button at all (in C: substring searches)."""
    return ("risu" in code and any(m in code for m in _MARKERS)) or _names_button(code)


def _names_button(text: str) -> bool:
    """Whether ``text`` may hold a CBS button (``button:`` in any case, blanks, ``_`` or
    ``-`` before the colon)."""
    low = text.lower()
    return "button" in low and _BUTTON_MARK.search(low) is not None


def _marked(text: str) -> bool:
    """Whether a string names a button (an attribute or a CBS button)."""
    return any(m in text for m in _MARKERS) or _names_button(text)


class _Reader:
    """One pass of :func:`lua_buttons` (tokens with a push-back, for the look-ahead of a
    template)."""

    def __init__(self, code: str) -> None:
        self.code = code
        self.skipper = Skipper(block_pattern(frozenset({"format", "risu_btn"}), POSSESSIVE,
                                             "risu"))
        self.tokens: Iterator[RawToken] = iter_tokens(code, [], self.skipper)
        self.back: list[RawToken] = []
        self.lines = LineIndex(code)
        self.out: list[CodeButton] = []
        self.prev: tuple[int, str | None] = (0, None)  # the token before, read one by one
        self.prev2: tuple[int, str | None] = (0, None)
        self.replay: list[RawToken] = []  # tokens of computed parts to read again
        self.replay_left = MAX_REPLAY

    def next(self) -> RawToken | None:
        if self.back:
            return self.back.pop()
        return next(self.tokens, None)

    def value(self, tok: RawToken) -> str:
        return tok[3] if tok[3] is not None else decode_lua_string(self.code, tok[4], tok[5])

    def run(self) -> list[CodeButton]:
        while len(self.out) < MAX_BUTTONS:
            tok = self.next()
            if tok is None:
                break
            kind, value = tok[0], tok[3]
            last = self.skipper.last
            if last is not None:  # tokens were passed over: the last of them is before
                self.prev = (NAME if last[0].isalpha() or last[0] == "_" else OP, last)
                self.prev2 = (0, None)
                self.skipper.last = None
            self.skipper.idle = True
            if kind == STR:
                self.string(tok)
            elif kind == NAME and value == "format":
                self.skipper.idle = False  # read ``format(`` token by token
            elif kind == NAME and value == "risu_btn":
                self.field(tok)
            self.prev2, self.prev = self.prev, (kind, value)
        return self.out

    def string(self, tok: RawToken) -> None:
        """A string: when it names a button, the template it starts (its concatenation,
        or the format string of ``string.format``/``:format``)."""
        text = self.value(tok)
        if not _marked(text):
            return
        self.skipper.idle = False  # the tokens after it, one by one
        formatted = self.prev == (OP, "(") and self.prev2 == (NAME, "format")
        parts = [text]
        if not formatted:
            formatted = self.method_format()
        if not formatted:
            parts.extend(self.continuation())
        template = "".join(parts)
        if self.replay:
            self.back.extend(reversed(self.replay))
            self.replay = []
        if formatted:
            template = _FORMAT_SPEC.sub(lambda m: "%" if m.group() == "%%" else HOLE, template)
        self.extract(template, tok[1], tok[4] if tok[3] is not None else -1, len(text))

    def method_format(self) -> bool:
        """``("...")`` followed by ``:format(``: the string is a format template."""
        seen: list[RawToken] = []
        want = [(OP, ")"), (OP, ":"), (NAME, "format"), (OP, "(")]
        for kind, value in want:
            tok = self.next()
            if tok is None:
                break
            seen.append(tok)
            if (tok[0], tok[3]) != (kind, value):
                break
        else:
            return self.prev == (OP, "(")
        self.back.extend(reversed(seen))
        return False

    def continuation(self) -> list[str]:
        """The operands after a string: ``.. x .. "lit"`` (holes for what is computed)."""
        out: list[str] = []
        budget = MAX_TEMPLATE_TOKENS
        while budget > 0:
            tok = self.next()
            if tok is None:
                break
            if (tok[0], tok[3]) != (OP, ".."):
                self.back.append(tok)
                break
            operand, used = self.operand()
            out.append(operand)
            budget -= used + 1
        return out

    def operand(self) -> tuple[str, int]:
        """One operand of a concatenation: a literal string or number as written, anything
        else a hole; and how many tokens it took."""
        toks: list[RawToken] = []
        depth = 0
        while len(toks) < MAX_TEMPLATE_TOKENS:
            tok = self.next()
            if tok is None:
                break
            kind, value = tok[0], tok[3]
            if depth == 0 and ((kind == OP and value in _ENDS_OPERAND)
                               or (kind == NAME and value in KEYWORDS
                                   and value not in ("nil", "true", "false"))):
                self.back.append(tok)
                break
            if kind == OP and value in _OPEN:
                depth += 1
            elif kind == OP and value in _CLOSE:
                depth -= 1
            toks.append(tok)
        if len(toks) == 1 and toks[0][0] in (STR, NUM):
            return self.value(toks[0]), 1
        if len(toks) > 1:
            self.read_again(toks)
        return HOLE, len(toks)

    def read_again(self, toks: list[RawToken]) -> None:
        """A computed part that writes buttons of its own (``.. string.format('<i
        risu-trigger="F%s">', y)``): its tokens are read again after this template (at
        most ``MAX_REPLAY`` tokens per script)."""
        if self.replay_left > 0 and any(
                t[0] == STR and _marked(self.value(t)) for t in toks):
            self.replay_left -= len(toks)
            self.replay.extend(toks)

    def field(self, tok: RawToken) -> None:
        """``risu_btn = <expression>`` (LightBoard's HTML builder): the value."""
        self.skipper.idle = False
        eq = self.next()
        if eq is None or (eq[0], eq[3]) != (OP, "="):
            if eq is not None:
                self.back.append(eq)
            return
        first, _ = self.operand()
        parts = [first, *self.continuation()]
        self.add("btn", "".join(parts), tok[1])

    def extract(self, template: str, start: int, raw_at: int, first_len: int) -> None:
        """The buttons of a template: each ``risu-btn``/``risu-trigger`` attribute and CBS
        button (at the line of the attribute when it lies in the first, raw string)."""
        for m in _ATTR.finditer(template):
            at = raw_at + m.start() if raw_at >= 0 and m.start() < first_len else start
            self.add("btn" if m.group(1).lower() == "btn" else "trigger", m.group(3), at)
        for m in _CBS_BUTTON.finditer(template):
            at = raw_at + m.start() if raw_at >= 0 and m.start() < first_len else start
            self.add("trigger", m.group(1) or m.group(2), at)

    def add(self, kind: str, value: str, at: int) -> None:
        shown = _CBS_IN_VALUE.sub("*", value).replace(HOLE, "*")
        while "**" in shown:
            shown = shown.replace("**", "*")
        shown = shown.strip()
        if not shown or _NOT_A_VALUE.search(shown) or len(self.out) >= MAX_BUTTONS:
            return
        self.out.append(CodeButton(kind, shown[:80], self.lines.line(at), at))


def lua_buttons(code: str) -> list[CodeButton]:
    """The buttons ``code`` writes in its strings (see the module's docstring), in text
    order; [] when it names none (:func:`may_hold_buttons` first, then one pass)."""
    if not may_hold_buttons(code):
        return []
    return _Reader(code).run()
