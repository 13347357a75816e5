"""Following values through a script's functions, as a reader does (issue 22).

Three readings, each run only when the first scan (:func:`risutools.analysis.lua.scan_lua`)
shows it is needed, each linear in the tokens it reads:

* :func:`function_table`: every function of a script (its ``function`` keyword, its end,
  its name and parameters, the function around it), from one pass that stops only at the
  words that open or close a block (``function``, ``if``, ``do``, ``repeat``, ``end``,
  ``until``; the rest is passed over by :func:`~risutools.analysis.luaskip.block_pattern`);
* :func:`helper_keys`: keys of the state API passed through helper functions
  (``local function bump(id, key) setChatVar(id, key, ...) end`` ... ``bump(id, "hp")``):
  each call of such a helper with a literal (or a constant) in the key's place is a key at
  the call site, through helpers of helpers up to ``MAX_HELPER_DEPTH`` levels;
* :func:`unreached`: the named functions no entry point reaches (their name is never used
  but where they are defined, or only inside functions that are themselves unreached).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from risutools.analysis.lua import (
    ENV_NAMES,
    HOLE,
    LIT,
    REF,
    Arg,
    Call,
    FuncDef,
    LuaScan,
    scan_lua,
)
from risutools.analysis.luafold import template_argument, template_of
from risutools.analysis.lualex import (
    KEYWORDS,
    NAME,
    OP,
    LineIndex,
    Skipper,
    iter_tokens,
    name_positions,
)
from risutools.analysis.luaskip import block_pattern

#: helpers of helpers are followed this many levels deep (1: the function that passes its
#: parameter to the state API itself)
MAX_HELPER_DEPTH = 4
#: at most this many (function, key) pairs are followed per script, and this many keys made
#: from one call (a branch chain's literals times another's)
MAX_HELPER_SITES = 200
MAX_KEYS_PER_CALL = 16
#: the arguments read of a call of a helper: its key may be one of the first this many
MAX_HELPER_ARGS = 8
#: at most this many calls of helpers are followed per script (the keys of the calls past
#: it are one computed key per helper)
MAX_HELPER_USES = 20_000
#: functions are found unreached through at most this many levels of "only called from
#: an unreached function"
MAX_REACH_DEPTH = 8
#: names whose one assignment is read as a template (``local key = "p_" .. i``), and
#: arguments read again as templates (``string.format``), per script, at most
MAX_TEMPLATE_NAMES = 64
#: the searches for functions nothing reaches read at most this many times the script's
#: length (plus 100,000 characters)
MAX_REACH_WORK = 8
#: at most this many functions are kept per script by :func:`function_table`
MAX_FUNCTIONS = 100_000

_OPENERS = frozenset({"if", "do", "repeat"})
_CLOSERS = frozenset({"end", "until"})
#: the words the function table's pass stops at (with ``function``: :func:`block_pattern`)
_BLOCK_WORDS = _OPENERS | _CLOSERS
#: ``name =`` or ``name = async(`` just before a ``function`` keyword (read backwards from
#: it, on at most 200 characters)
_ASSIGNED = re.compile(r"(?<![\w.:])(?:(local)\s+)?([A-Za-z_]\w*)\s*=\s*(?:async\s*\(\s*)?$")
_LOCAL_BEFORE = re.compile(r"(?<![\w.:])local\s+$")
#: what may stand before ``name = function`` when it is a field of a table or an argument
_NOT_A_STATEMENT = frozenset("{,(=[")


@dataclass(slots=True)
class Fn:
    """One function of a script: the offsets of its ``function`` keyword and of its end,
    its name (a plain name: ``function f``, ``local function f``, ``f = function``,
    ``f = async(function``; None for a field ``t.f``, a method or an anonymous function),
    whether it is local, its parameters, its line, and the function around it (-1: none)."""

    kw: int
    end: int
    name: str | None
    local: bool
    params: tuple[str, ...]
    line: int
    parent: int
    #: ``function t.f(...)`` / ``function t:f(...)`` (one table, one field): ``t``, ``f``,
    #: whether it is a method (``:``: ``self`` comes before its parameters)
    base: str = ""
    field: str = ""
    method: bool = False

    def key(self) -> tuple[str, str] | None:
        """How calls name it: ``("", f)`` for ``f(...)``, ``(t, f)`` for ``t.f(...)`` and
        ``t:f(...)``; None for an anonymous function or a deeper field."""
        return ("", self.name) if self.name is not None else \
            (self.base, self.field) if self.field else None


@dataclass
class FunctionTable:
    """The functions of one script, in the order of their ``function`` keywords."""

    fns: list[Fn] = field(default_factory=list)
    starts: list[int] = field(default_factory=list)  # the ``kw`` of each, for bisect

    def enclosing(self, offset: int) -> int:
        """The innermost function holding ``offset`` (its index), or -1 (top level)."""
        i = bisect_right(self.starts, offset) - 1
        while i >= 0:
            fn = self.fns[i]
            if fn.kw <= offset < fn.end:
                return i
            i = fn.parent
        return -1


class _TableReader:
    """The state of one :func:`function_table` pass."""

    def __init__(self, code: str) -> None:
        self.code = code
        self.lines = LineIndex(code)
        self.table = FunctionTable()
        self.stack: list[int] = []  # one per open block: a function's index, or -1
        self.header = 0  # 1: reading a function's name, 2: its parameters
        self.params: list[str] = []
        self.dotted = False
        self.first = ""  # the first name of a header (``t`` of ``function t.f``)

    def run(self) -> FunctionTable:
        skipper = Skipper(block_pattern(_BLOCK_WORDS))
        for kind, s, e, value, _b0, _b1 in iter_tokens(self.code, [], skipper):
            if self.header:
                self.header_token(kind, value)
                skipper.idle = not self.header
            elif kind == NAME:
                if value == "function":
                    self.open_function(s)
                    skipper.idle = False
                elif value in _OPENERS:
                    self.stack.append(-1)
                elif value in _CLOSERS and self.stack:
                    top = self.stack.pop()
                    if top >= 0:
                        self.table.fns[top].end = e
            skipper.last = None
        return self.table

    def open_function(self, s: int) -> None:
        fns = self.table.fns
        parent = next((i for i in reversed(self.stack) if i >= 0), -1)
        if len(fns) >= MAX_FUNCTIONS:
            self.stack.append(-1)
            return
        code, lo = self.code, max(0, s - 200)  # (a match ends with ``=`` or ``(``, blanks)
        m = _ASSIGNED.search(code, lo, s) if code[lo:s].rstrip()[-1:] in "=(" else None
        name = m.group(2) if m is not None and m.group(2) not in KEYWORDS else None
        local = bool(m is not None and m.group(1))
        if m is not None and code[max(0, m.start() - 200):m.start()].rstrip()[-1:] \
                in _NOT_A_STATEMENT:
            name = None  # ``{ f = function`` is a field, ``g(f = function`` is not Lua
        elif name is None:  # ``local function f`` / ``function f``: read in the header
            local = _LOCAL_BEFORE.search(code, max(0, s - 40), s) is not None
        fns.append(Fn(s, len(self.code), name, local, (), self.lines.line(s), parent))
        self.table.starts.append(s)
        self.stack.append(len(fns) - 1)
        self.header = 1
        self.params = []
        self.dotted = False
        self.first = ""

    def header_token(self, kind: int, value: str | None) -> None:
        """A token of a function's header: its name (``a.b`` and ``a:b`` are the field
        ``b`` of the table ``a``, a deeper one nothing), then its parameters up to ``)``."""
        fn = self.table.fns[-1]
        if self.header == 1:
            if kind == NAME and value is not None and value not in KEYWORDS:
                if fn.name is None and not self.dotted:
                    fn.name = self.first = value
                elif self.dotted:
                    fn.field = value if self.first and not fn.field else ""
                    fn.base, self.first = (self.first, "") if fn.field else ("", "")
            elif kind == OP and value in (".", ":"):
                fn.method = value == ":"
                self.dotted = True
                fn.name = None
            elif kind == OP and value == "(":
                self.header = 2
            else:
                self.header = 0
        elif kind == NAME and value is not None and value not in KEYWORDS:
            self.params.append(value)
        elif not (kind == OP and value in (",", "...")):
            fn.params = tuple(self.params)
            self.header = 0


def function_table(code: str) -> FunctionTable:
    """Every function of ``code`` with its extent, name and parameters (one pass; a
    function left open by a syntax error ends at the end of the text)."""
    return _TableReader(code).run()


# -- keys through helper functions -----------------------------------------------------------

#: a key as a template: literal parts, references to a parameter (by its index) and holes
Part = tuple[int, str]


@dataclass(frozen=True, slots=True)
class KeyUse:
    """A state key found through helpers (or computed): its scope, read or write, the key
    (``*`` where computed), whether it is computed, and where (the call that gives it, and
    the line of the state API call it reaches)."""

    scope: str
    mode: str
    key: str
    computed: bool
    line: int
    via: int
    offset: int  # where the call that gives it starts (-1: at the API call, never given)


@dataclass(frozen=True, slots=True)
class _Site:
    """A function whose parameters make a state key: the key's template over its
    parameters (REF parts hold the parameter's index), the API's scope and mode, the line
    of the state API call, and how many helper levels lie below."""

    fn: int
    template: tuple[Part, ...]
    scope: str
    mode: str
    via: int
    depth: int


def key_template(arg: Arg) -> tuple[Part, ...]:
    """A call argument as a template: a literal, a name, or a concatenation's parts."""
    if arg.literal is not None:
        return ((LIT, arg.literal),)
    if arg.name is not None:
        return ((REF, arg.name),)
    if arg.parts is not None:
        return arg.parts
    return ((HOLE, ""),)


def _resolve(template: Iterable[Part], value: Callable[[str], tuple[Part, ...] | None]
             ) -> list[tuple[Part, ...]]:
    """The alternatives of ``template`` with each name replaced by what ``value`` gives
    (None: kept as the name), at most MAX_KEYS_PER_CALL."""
    out: list[tuple[Part, ...]] = [()]
    for kind, text in template:
        choices: list[tuple[Part, ...]] = [((kind, text),)]
        if kind == REF:
            got = value(text)
            if got is not None:
                choices = [(p,) for p in got] if all(k == LIT for k, _ in got) else [got]
        out = [a + c for a in out for c in choices][:MAX_KEYS_PER_CALL]
    return out


def show_key(template: tuple[Part, ...]) -> str:
    """A template as text: literal parts as written, ``*`` for each hole or name (runs of
    holes are one ``*``)."""
    out: list[str] = []
    for kind, text in template:
        if kind == LIT:
            out.append(text)
        elif not out or out[-1] != "*":
            out.append("*")
    return "".join(out)


class _Helpers:
    """The reading of :func:`helper_keys` over one script."""

    def __init__(self, code: str, scan: LuaScan, table: FunctionTable,
                 choices: Callable[[str], tuple[str, ...]]) -> None:
        self.code = code
        self.scan = scan
        self.table = table
        self.choices = choices
        self.calls: list[Call] | None = None  # every call (every_call), made once
        self.given = 0  # helper calls given (MAX_HELPER_USES)
        self.truncated: set[_Site] = set()  # sites with calls left ungiven
        self.sites: dict[tuple[int, tuple[Part, ...], str, str], _Site] = {}
        self.called: set[tuple[int, tuple[Part, ...], str, str]] = set()  # sites with a call
        self.out: list[KeyUse] = []
        self.templates = Templates(code, scan)
        self.formats = 0  # arguments read again as templates (MAX_TEMPLATE_NAMES)

    def literal_values(self, name: str) -> tuple[Part, ...] | None:
        """A name's literal values (a constant, or a branch chain's literals), or the
        template it is assigned once (``local key = "p_" .. i``)."""
        if name in self.scan.constants:
            return ((LIT, self.scan.constants[name]),)
        got = self.choices(name)
        if got:
            return tuple((LIT, v) for v in got)
        return self.templates(name)

    def use(self, template: tuple[Part, ...], offset: int, scope: str, mode: str,
            line: int, via: int, depth: int) -> None:
        """A key template met at ``offset``: names replaced by their literal values;
        the enclosing function's parameters left make a site one level up; a key with
        every part literal is a key; else it is computed."""
        fn_i = self.table.enclosing(offset)
        params = self.table.fns[fn_i].params if fn_i >= 0 else ()
        for alt in _resolve(template, self.literal_values):
            refs = [text for kind, text in alt if kind == REF]
            if refs and all(r in params for r in refs) and depth < MAX_HELPER_DEPTH \
                    and self.table.fns[fn_i].key() is not None:
                site_t = tuple((REF, str(params.index(t))) if k == REF else (k, t)
                               for k, t in alt)
                key = (fn_i, site_t, scope, mode)
                if key not in self.sites and len(self.sites) < MAX_HELPER_SITES:
                    self.sites[key] = _Site(fn_i, site_t, scope, mode, via, depth + 1)
                continue
            computed = any(kind != LIT for kind, _ in alt)
            self.out.append(KeyUse(scope, mode, show_key(alt), computed, line, via, offset))

    def follow(self, level: list[_Site]) -> list[_Site]:
        """The calls of the functions of ``level`` (read from :meth:`every_call`): each
        gives its arguments to their templates."""
        by_name: dict[tuple[str, str], list[_Site]] = {}
        for site in level:
            key = self.table.fns[site.fn].key()
            if key is not None:
                by_name.setdefault(key, []).append(site)
        if not by_name:
            return []
        before = set(self.sites)
        calls = self.every_call()
        for call in calls:
            inner = call if call.name != "pcall" else _through_pcall(call)
            if inner is None or (inner.base if inner.qualifier else "", inner.name) \
                    not in by_name:
                continue  # (``t.f(...)``/``t:f(...)``: a function of the table ``t``)
            if self.given >= MAX_HELPER_USES:  # the rest: one computed key per helper
                self.truncated.update(site for sites in by_name.values() for site in sites)
                break
            for site in by_name[(inner.base if inner.qualifier else "", inner.name)]:
                self.called.add((site.fn, site.template, site.scope, site.mode))
                self.given += 1
                self.give(site, inner)
        return [self.sites[k] for k in self.sites if k not in before]

    def every_call(self) -> list[Call]:
        """Every call of the script, with as many arguments as the named function called
        has parameters (at most ``MAX_HELPER_ARGS``) when it may be a helper followed
        (:meth:`may_follow`; the arguments of the other calls are never read): one full
        pass of the scanner, made when the first helper is followed and read at every
        level (no pattern is made of the script's names)."""
        if self.calls is None:
            need = {fn.name or fn.field: min(len(fn.params) + 1, MAX_HELPER_ARGS)
                    for fn in self.table.fns if fn.key() is not None and fn.params}
            names = self.may_follow()
            if names is not None:
                need = {n: k for n, k in need.items() if n in names}
            need["pcall"] = MAX_HELPER_ARGS + 1
            self.calls = scan_lua(self.code, None, need=need, to_calls=True if names is None
                                  else frozenset(need)).calls
        return self.calls

    def may_follow(self) -> set[str] | None:
        """The names of the functions :meth:`follow` may look calls up for (a superset):
        those of the sites at the state calls, then, a level below each, those holding where
        one of their names is written (a call starts at its name, or its ``pcall``); None
        (all) past ``MAX_HELPER_SITES`` or for a field of ``_G`` (``_G[k]()`` calls it)."""
        fns, found = self.table.fns, {site.fn for site in self.sites.values()}
        todo = set(found)
        for _ in range(MAX_HELPER_DEPTH):
            names = {fns[i].name or fns[i].field for i in todo}
            todo = {j for name in names for at in _written(self.code, name)
                    if (j := self.table.enclosing(at)) >= 0 and j not in found
                    and fns[j].params and fns[j].key() is not None}
            found |= todo
            if not todo or len(found) > MAX_HELPER_SITES:
                break
        if len(found) > MAX_HELPER_SITES or any(fns[i].base in ENV_NAMES for i in found):
            return None
        return {fns[i].name or fns[i].field for i in found}

    def give(self, site: _Site, call: Call) -> None:
        """One call of a helper: its arguments in the places of the site's parameters (at
        most ``MAX_HELPER_USES`` are given per script, :meth:`follow`: past that, each
        helper's key is also one computed key)."""
        args = call.args
        # a method's ``self`` comes before its parameters: ``t.f(t, a)`` gives ``t:f(a)``'s
        # ``a`` one place later, ``t:f(a)`` gives ``function t.f(s, a)``'s ``a`` one before
        shift = int(self.table.fns[site.fn].method) - int(call.qualifier == ":")

        def arg_of(index: str) -> tuple[Part, ...] | None:
            i = int(index) + shift
            if not 0 <= i < len(args):
                return ((HOLE, ""),)
            end = args[i].path_end  # ``C.K`` with ``K = "name"`` (as a state call reads it)
            if end is not None and end in self.scan.constants:
                return ((LIT, self.scan.constants[end]),)
            return key_template(args[i])

        for alt in _resolve(site.template, arg_of):
            self.use(alt, call.start, site.scope, site.mode, call.line, site.via,
                     site.depth)


def _written(code: str, name: str) -> Iterator[int]:
    """Where ``name`` is written in ``code`` as a whole name (a field too: ``t.name``)."""
    pos, n = 0, len(code)
    while (i := code.find(name, pos)) >= 0:
        pos, end = i + 1, i + len(name)
        if not ((i and _name_char(code[i - 1])) or (end < n and _name_char(code[end]))):
            yield i


def _through_pcall(call: Call) -> Call | None:
    if call.qualifier or not call.args or not call.args[0].name:
        return None
    return Call(call.args[0].name, call.line, "", "", list(call.args[1:]), start=call.start)


def helper_keys(code: str, scan: LuaScan, table: FunctionTable,
                uses: list[tuple[Call, str, str]],
                choices: Callable[[str], tuple[str, ...]]) -> list[KeyUse]:
    """The keys of ``uses`` (state API calls: the call, its scope and mode) whose key is
    not a literal: through the script's helper functions (names and branch chains of
    literals resolved; ``choices(name)``: the literals of a branch chain), else computed
    (``*`` for what is not known)."""
    h = _Helpers(code, scan, table, choices)
    for call, scope, mode in uses:
        template = key_template(call.args[1]) if len(call.args) > 1 else ((HOLE, ""),)
        if any(k == HOLE for k, _t in template) and call.form == "paren" \
                and h.formats < MAX_TEMPLATE_NAMES:  # ``string.format("hp_%s", i)``
            h.formats += 1
            template = template_argument(code, call.start, 1, scan.constants) or template
        h.use(template, call.start, scope, mode, call.line, call.line, 0)
    level = list(h.sites.values())
    while level:
        level = h.follow(level)
    for key, site in h.sites.items():  # a helper never called by name: its key is computed
        if key not in h.called or site in h.truncated:
            h.out.append(KeyUse(site.scope, site.mode, "*", True, site.via, site.via, -1))
    return h.out


class Templates:
    """The template a name is assigned (:func:`assigned_template`), looked up once per
    name, at most ``MAX_TEMPLATE_NAMES`` names a script (a parameter has none)."""

    def __init__(self, code: str, scan: LuaScan) -> None:
        self.code = code
        self.scan = scan
        self.got: dict[str, tuple[Part, ...] | None] = {}
        self.args = 0  # arguments read (:meth:`argument`)

    def __call__(self, name: str) -> tuple[Part, ...] | None:
        if name in self.got:
            return self.got[name]
        if len(self.got) >= MAX_TEMPLATE_NAMES or name in self.scan.params:
            return None
        got = self.got[name] = assigned_template(self.code, name, self.scan.constants)
        return got

    def argument(self, call: Call, index: int) -> tuple[Part, ...] | None:
        """Argument ``index`` of ``call`` read as a template (a ``paren`` call only; at most
        ``MAX_TEMPLATE_NAMES`` a script)."""
        if call.form != "paren" or call.start < 0 or self.args >= MAX_TEMPLATE_NAMES:
            return None
        self.args += 1
        return template_argument(self.code, call.start, index, self.scan.constants)


def assigned_template(code: str, name: str, constants: dict[str, str]
                      ) -> tuple[Part, ...] | None:
    """The template of ``local name = "p_" .. i`` (:func:`template_of`; the names in it
    holes: they are read where it is assigned, not where it is used) when that is the only
    assignment of ``name`` in ``code`` and no ``for`` names it; None otherwise.  Plain
    string searches, linear in ``code`` (a name written in a comment or a string counts
    too: then it has none)."""
    at, n = -1, len(code)
    for i in name_positions(code, name):
        end = i + len(name)
        while end < n and code[end] in " \t":
            end += 1
        before = code[max(0, i - 16):i].rstrip()
        if _word_at_end(before, "for") or (code.startswith("in", end) and not _name_char(
                code[end + 2:end + 3])):
            return None  # (a loop's variable)
        if code.startswith("=", end) and not code.startswith("==", end):
            if at >= 0 or not _word_at_end(before, "local") or code.find(
                    "--", max(code.rfind("\n", 0, i), code.rfind("\r", 0, i)) + 1, i) >= 0:
                return None  # (a second one, no ``local``, or in a line comment maybe)
            at = end + 1
    got = template_of(code, at, constants) if at >= 0 else None
    return tuple((HOLE, "") if k == REF else (k, t) for k, t in got) if got else None


def _name_char(c: str) -> bool:
    return c.isalnum() or c == "_"


def _word_at_end(text: str, word: str) -> bool:
    """Whether ``text`` ends with the whole word ``word``."""
    return text.endswith(word) and not _name_char(text[-len(word) - 1:-len(word)])


class Spans:
    """Functions as extents of text, to ask which holds an offset in log time: the
    outermost extents merged (``holds``), and the functions by start (``innermost``)."""

    def __init__(self, fns: Iterable[Fn]) -> None:
        self.fns = sorted(fns, key=lambda f: f.kw)
        self.kws = [f.kw for f in self.fns]
        merged: list[list[int]] = []
        for f in self.fns:
            if merged and f.kw < merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], f.end)
            else:
                merged.append([f.kw, f.end])
        self.starts = [a for a, _ in merged]
        self.ends = [b for _, b in merged]

    def holds(self, offset: int) -> bool:
        i = bisect_right(self.starts, offset) - 1
        return i >= 0 and offset < self.ends[i]

    def innermost(self, offset: int) -> Fn | None:
        """The function that holds ``offset`` and starts last (the innermost one)."""
        i = bisect_right(self.kws, offset) - 1
        while i >= 0:
            f = self.fns[i]
            if offset < f.end:
                return f
            i -= 1
        return None


# -- functions nothing reaches ---------------------------------------------------------------

def plain_defs(defs: Iterable[FuncDef]) -> dict[str, list[FuncDef]]:
    """The definitions of plain names (not fields), by name."""
    out: dict[str, list[FuncDef]] = {}
    for d in defs:
        if not d.dotted and d.at >= 0:
            out.setdefault(d.name, []).append(d)
    return out


class _Work:
    """The characters the searches of :func:`unreached` may read (``MAX_REACH_WORK``)."""

    def __init__(self, budget: int) -> None:
        self.left = budget

    def find(self, code: str, name: str, pos: int) -> int:
        """``code.find(name, pos)`` within what is left (charged); -2 once it is spent
        (then nothing more is judged unreached: each function found before was found for
        good)."""
        if self.left <= 0:
            return -2
        limit = pos + self.left
        i = code.find(name, pos, limit)
        if i < 0 and limit < len(code):
            self.left = 0
            return -2
        self.left -= (len(code) if i < 0 else i + len(name)) - pos
        return i

    def spend(self, chars: int) -> bool:
        self.left -= chars
        return self.left >= 0


def _used_elsewhere(code: str, name: str, sites: set[int], skip: Spans | None,
                    work: _Work, own: tuple[Fn, ...] = ()) -> bool:
    """Whether ``name`` is written anywhere in ``code`` but at its definitions ``sites``,
    inside the functions ``skip`` and in its own functions ``own`` (strings, comments and
    longer names included: a reader counts a name written anywhere as a use).  Plain
    substring searches that stop at the first use found, from the first definition on and
    then from the start (a use mostly follows its definition), charged to ``work`` (once it
    is spent: True, a use)."""
    first = min(sites) if sites else 0
    for pos, stop in ((first, len(code)), (0, first)):
        while True:
            i = work.find(code, name, pos)
            if i == -2:
                return True
            if i < 0 or i >= stop:
                break
            if i not in sites and not (skip is not None and skip.holds(i)) \
                    and not any(f.kw <= i < f.end for f in own):
                return True
            pos = i + 1
        if first == 0:
            break
    return False


def unreached(code: str, defs: dict[str, list[FuncDef]], keep: Callable[[str], bool]
              ) -> list[Fn]:
    """The named functions of ``code`` that nothing reaches: their name is written nowhere
    but where they are defined, or only in their own body and in functions found
    unreached before (``MAX_REACH_DEPTH`` rounds).  ``keep(name)``: a function reached from
    outside the script (an entry point, a name used elsewhere in the module).  A function
    only its own body calls, with no unused function beside it, is not found.  The searches
    read at most ``MAX_REACH_WORK`` times the script's length (past that, the functions not
    yet found unreached count as reached); the extent of a function is read (its tokens,
    block words counted) only for a function found unreached."""
    work = _Work(MAX_REACH_WORK * len(code) + 100_000)
    first: list[str] = []
    for n, ds in defs.items():
        if n.startswith("__") or _used_elsewhere(code, n, {d.at for d in ds}, None, work):
            continue
        if not all(d.local for d in ds) and not work.spend(2 * len(code)):
            break  # keep() reads the script and the module once for a global
        if not keep(n):
            first.append(n)
    if not first:
        return []
    dead = _Reach(code, defs, keep, work).spread(first)
    return [dead[k] for k in sorted(dead)]


_STATEMENT_ENDS = frozenset({"end", "then", "do", "else", "local", "return"})


def _extent(code: str, d: FuncDef) -> Fn | None:
    """The function of a definition: from its ``function`` keyword to its ``end`` (block
    words counted; the rest passed over by :func:`block_pattern`); None for a field
    (``{ n = function``) or a name assigned inside an expression."""
    if d.kw < 0:
        return None
    if d.at < d.kw:  # ``n = function``: a statement, not a field or an argument
        before = code[max(0, d.at - 200):d.at].rstrip()
        if before[-1:] in _NOT_A_STATEMENT:
            return None
    skipper = Skipper(block_pattern(_BLOCK_WORDS))
    depth = 0
    for kind, _s, e, value, _b0, _b1 in iter_tokens(code, [], skipper, d.kw):
        skipper.last = None
        if kind != NAME:
            continue
        if value == "function" or value in _OPENERS:
            depth += 1
        elif value in _CLOSERS:
            depth -= 1
            if depth <= 0:
                return Fn(d.kw, e, d.name, d.local, (), d.line, -1)
    return Fn(d.kw, len(code), d.name, d.local, (), d.line, -1)


class _Reach:
    """The rounds of :func:`unreached`: functions by the offset of their keyword."""

    def __init__(self, code: str, defs: dict[str, list[FuncDef]],
                 keep: Callable[[str], bool], work: _Work) -> None:
        self.work = work
        self.code = code
        self.defs = defs
        self.keep = keep
        self.extents: dict[str, list[Fn]] = {}

    def own(self, n: str) -> list[Fn]:
        """The functions of the definitions of ``n`` (none unless every one is a plain
        name: ``{ n = function`` is a field), read once."""
        got = self.extents.get(n)
        if got is None:
            fns = [_extent(self.code, d) for d in self.defs[n]]
            got = self.extents[n] = [f for f in fns if f is not None] \
                if all(f is not None for f in fns) else []
        return got

    def spread(self, first: list[str]) -> dict[int, Fn]:
        """The functions of ``first``, then those named only inside unreached ones (the
        names read from the bodies of the functions found in the round before)."""
        dead: dict[int, Fn] = {}
        new = [f for n in first for f in self.own(n)]
        for _ in range(MAX_REACH_DEPTH):
            dead.update((f.kw, f) for f in new)
            spans = Spans(dead.values())
            named: set[str] = set()
            for f in new:
                named |= _names_in(self.code, f)
            new = []
            for n in sorted(named & self.defs.keys()):
                if not n.startswith("__") and not all(d.kw in dead for d in self.defs[n]) \
                        and self.only_inside(n, spans):
                    new.extend(f for f in self.own(n) if f.kw not in dead)
            if not new or self.work.left <= 0:
                break
        dead.update((f.kw, f) for f in new)
        return dead

    def only_inside(self, n: str, spans: Spans) -> bool:
        """Whether ``n`` (written inside an unreached function) is written nowhere else but
        in its own definitions (and is not reached from outside)."""
        own = tuple(self.own(n))
        return bool(own) and not _used_elsewhere(self.code, n, {d.at for d in self.defs[n]},
                                                 spans, self.work, own) \
            and (all(d.local for d in self.defs[n]) or self.work.spend(2 * len(self.code))) \
            and not self.keep(n)


def _names_in(code: str, fn: Fn) -> set[str]:
    """The names written in a function's body (its tokens read one by one)."""
    out: set[str] = set()
    for kind, s, _e, value, _b0, _b1 in iter_tokens(code, [], None, fn.kw):
        if s >= fn.end:
            break
        if kind == NAME and value is not None and value not in KEYWORDS:
            out.add(value)
    return out


#: at most this many tokens are read after ``listenEdit(`` to find a handler's name
_HANDLER_TOKENS = 200


def listener_handler(code: str, start: int) -> str | None:
    """The handler ``listenEdit(kind, handler)`` names (a plain name), read from the call at
    ``start``; None for an inline function or anything else."""
    depth = 0
    after_comma = False
    name: str | None = None
    for n, (kind, _s, _e, value, _b0, _b1) in enumerate(iter_tokens(code, [], None, start)):
        if n > _HANDLER_TOKENS:
            return None
        if after_comma:
            if name is not None:  # the name must be the whole argument
                return name if kind == OP and value in (")", ",") else None
            if kind != NAME or value in KEYWORDS:
                return None
            name = value
            continue
        if kind == OP and value in ("(", "{", "["):
            depth += 1
        elif kind == OP and value in (")", "}", "]"):
            depth -= 1
            if depth <= 0:
                return None
        elif kind == OP and value == "," and depth == 1:
            after_comma = True
    return None


def at_top_level(code: str, offsets: Iterable[int]) -> set[int]:
    """The offsets of ``offsets`` (where tokens start) that stand outside every block and
    function of ``code``: one pass that stops only at block words (the rest passed over by
    :func:`block_pattern`), as :func:`function_table`'s."""
    want = sorted(set(offsets))
    out: set[int] = set()
    i, depth = 0, 0
    skipper = Skipper(block_pattern(_BLOCK_WORDS))
    for kind, s, _e, value, _b0, _b1 in iter_tokens(code, [], skipper):
        skipper.last = None
        while i < len(want) and want[i] <= s:
            if depth == 0:
                out.add(want[i])
            i += 1
        if i >= len(want):
            break
        if kind == NAME and (value == "function" or value in _OPENERS):
            depth += 1
        elif kind == NAME and value in _CLOSERS and depth:
            depth -= 1
    if depth == 0:
        out.update(want[i:])
    return out
