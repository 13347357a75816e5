"""The arguments of a call as the Lua scanner (:mod:`risutools.analysis.lua`) reads them:
:class:`Arg` and :class:`Call`, and the collector that fills them one token at a time."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from risutools.analysis.lualex import KEYWORDS, NAME, OP, STR, decode_lua_string

#: calls whose literal arguments we keep: name -> how many leading args to keep
ARG_CALLS: dict[str, int] = {
    "listenEdit": 1, "request": 2, "load": 1, "loadstring": 1, "require": 1, "dofile": 1,
    "rawget": 2, "rawset": 2,
    "getChatVar": 2, "setChatVar": 2, "getState": 2, "setState": 2,
    "getGlobalVar": 2, "setGlobalVar": 2, "pcall": 3, "xpcall": 4, "getLoreBooks": 2,
    "cbs": 1,
}
#: the fields of ``debug`` and ``package`` that reach no global (``debug.traceback``,
#: ``package.preload`` of a bundler; ``package.loaded`` holds ``_G``): matches of bounded shape
SAFE_FIELDS = {
    "debug": re.compile(r"[ \t]*\.[ \t]*traceback(?![A-Za-z0-9_])"),
    "package": re.compile(r"[ \t]*\.[ \t]*(?:preload|path|cpath|config)(?![A-Za-z0-9_])"),
}
_MAX_ARG_TOKENS = 20000  # stop following one call's arguments after this many tokens
#: the kinds of a concatenation's operands (``Arg.parts``)
LIT, REF, HOLE = 0, 1, 2
_MAX_PARTS = 16


@dataclass(slots=True)
class Arg:
    """One argument of a call, as far as a static reader can tell."""

    literal: str | None = None  # the value when the argument is a single string literal
    name: str | None = None  # the name when the argument is a single name
    path_end: str | None = None  # the last name when the argument is a path ``a.b.c``
    names: list[str] = field(default_factory=list)  # names seen in the argument
    #: a concatenation ``"a" .. x .. "b"``: its operands, each ``(LIT, text)``, ``(REF,
    #: name)`` or ``(HOLE, "")`` (anything else); None for one operand
    parts: tuple[tuple[int, str], ...] | None = None


@dataclass(slots=True)
class Call:
    """A call the scanner recorded: its name, line, qualifier and literal arguments."""

    name: str
    line: int
    qualifier: str = ""  # "", "." or ":"
    base: str = ""  # the name before the qualifier, when it is a plain name
    args: list[Arg] = field(default_factory=list)
    form: str = "paren"  # paren | string | table
    #: made inside the arguments of ``listenEdit(...)`` (an edit listener's body, which
    #: RisuAI runs without lowLevelAccess)
    in_listener: bool = False
    start: int = -1  # the offset of the called name
    listener: str = ""  # the kind of that listener (``editDisplay`` ...) when literal
    #: the ``listenEdit(...)`` call it is made in (its kind read by the walk: a constant, a
    #: branch chain, a loop's, one folded), None outside one
    outer: Call | None = None
    #: the line of the call in a listener's code that reaches the function it is made in
    #: (lualisten: it runs as that listener), 0 when none does
    via: int = 0


class Collector:
    __slots__ = ("budget", "call", "cur", "cur_count", "depth", "need", "op_first", "op_start",
                 "ops", "path")

    def __init__(self, call: Call, need: int) -> None:
        self.call = call
        self.depth = 1
        self.cur = Arg()
        self.cur_count = 0
        self.path = True  # the argument so far is names joined by "."
        self.need = need
        self.budget = _MAX_ARG_TOKENS
        #: the operands of a concatenation (``Arg.parts``), None before its first ``..``;
        #: the token count where the current operand starts, and its first token
        self.ops: list[tuple[int, str]] | None = None
        self.op_start = 0
        self.op_first: tuple[int, str | None, int, int] = (0, None, 0, 0)

    def close_operand(self, text: str) -> None:
        """One operand of a concatenation ends: a literal, a name, or a hole."""
        ops = self.ops if self.ops is not None else []
        kind, value, b0, b1 = self.op_first
        if self.cur_count - self.op_start != 1 or len(ops) >= _MAX_PARTS:
            ops.append((HOLE, ""))
        elif kind == STR:
            ops.append((LIT, value if value is not None else decode_lua_string(text, b0, b1)))
        elif kind == NAME and value not in KEYWORDS:
            ops.append((REF, value or ""))
        else:
            ops.append((HOLE, ""))
        self.ops = ops

    def finish_arg(self, text: str = "") -> bool:
        """Close the current argument; True when no more are needed."""
        arg = self.cur
        if self.cur_count != 1:
            arg.literal = None
            arg.name = None
        if self.path and self.cur_count >= 3 and self.cur_count == 2 * len(arg.names) - 1:
            arg.path_end = arg.names[-1]
        if self.ops is not None:
            self.close_operand(text)
            arg.parts = tuple(self.ops)
            self.ops = None
        if self.cur_count:
            self.call.args.append(arg)
        self.cur = Arg()
        self.cur_count = 0
        self.op_start = 0
        self.path = True
        return len(self.call.args) >= self.need

    def feed(self, kind: int, value: str | None, text: str, b0: int, b1: int) -> bool:
        """Take one token; True when this collector is done.  A string's value is
        decoded (``text[b0:b1]``) only when it is the argument's first token (or an operand
        of a concatenation)."""
        self.budget -= 1
        if self.budget <= 0:
            return True
        if self.depth == 1 and self.cur_count == self.op_start:
            self.op_first = (kind, value, b0, b1)
        if kind == OP:
            return self.feed_op(value, text)
        self.cur_count += 1
        if kind != NAME:
            self.path = False
        if self.depth == 1 and self.cur_count == 1:
            if kind == STR:
                self.cur.literal = value if value is not None else decode_lua_string(text, b0,
                                                                                     b1)
            elif kind == NAME:
                self.cur.name = value
        if kind == NAME and value is not None and len(self.cur.names) < 32:
            self.cur.names.append(value)
        return False

    def feed_op(self, value: str | None, text: str) -> bool:
        """An operator of the arguments: brackets, ``,`` between arguments, ``..`` between
        operands of a concatenation."""
        if value in ("(", "{", "["):
            self.path = False
            self.depth += 1
            self.cur_count += 1
            return False
        if value in (")", "}", "]"):
            self.depth -= 1
            if self.depth <= 0:
                self.finish_arg(text)
                return True
            return False
        if value == "," and self.depth == 1:
            return self.finish_arg(text)
        if value == ".." and self.depth == 1:
            self.close_operand(text)
            self.op_start = self.cur_count + 1
        if value != ".":
            self.path = False
        self.cur_count += 1
        return False


def share_args(shared: dict[tuple[object, ...], Any], call: Call, bound: int) -> None:
    """Make equal arguments (and equal argument lists) of the calls read one object
    (``shared``: what was met, emptied past ``bound`` entries)."""
    args = []
    for a in call.args:
        key: tuple[object, ...] = (a.literal, a.name, a.path_end, a.parts, *a.names)
        got = shared.get(key)
        if got is None:
            if len(shared) >= bound:
                shared.clear()
            got = shared[key] = a
        args.append(got)
    key = ("args", *map(id, args))
    got = shared.get(key)
    if got is None:
        got = shared[key] = args
    call.args = got


#: what makes a Lua pattern more than its plain text (``%`` before a letter or a digit: a
#: class or a capture; ``%`` before anything else is that character)
_MAGIC = frozenset("^$*+?.([-")


def plain_pattern(pattern: str) -> str | None:
    """The text a Lua pattern matches when it is plain text (its ``%`` escapes of
    punctuation undone), or None (a class, a repetition, an anchor, a capture)."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "%":
            nxt = pattern[i + 1:i + 2]
            if not nxt or nxt.isalnum():
                return None
            out.append(nxt)
            i += 2
            continue
        if c in _MAGIC:
            return None
        out.append(c)
        i += 1
    return "".join(out) or None


#: an escape that can make ":" or "/" out of other characters (``\58``, ``\x3a``, ``\u{2f}``)
_CODED_ESCAPE = re.compile(r"\\[0-9xu]")


def may_hold_url(text: str, b0: int, b1: int) -> bool:
    """Whether the decoded string ``text[b0:b1]`` can contain ``://`` (cheap, exact enough:
    only a ``:`` or an escape that codes a character can make one)."""
    return text.find(":", b0, b1) >= 0 or _CODED_ESCAPE.search(text, b0, b1) is not None
