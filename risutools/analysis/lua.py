"""A Lua call scanner that never runs the code it reads (over the tokens of
:mod:`risutools.analysis.lualex`).

The scanner (:func:`scan_lua`, one step per method of :class:`_Scanner`) walks the
tokens once; when it keeps only some calls (the analyser keeps host calls), the runs of
tokens that cannot change what it records are passed over in one regex match each
(:func:`skip_pattern`), with the same result.  Syntax errors never stop it: the lexer's
and the records past a bound are in :attr:`LuaScan.errors`, with lines.  It records:

* calls ``name(``, ``name "x"``, ``name [[x]]``, ``name {`` and method or field
  calls ``obj:name(`` / ``obj.name(`` (with the qualifier), with the literal
  first arguments of the calls a static analyser cares about;
* function definitions (``function name``, ``local function name``,
  ``name = function``);
* dynamic environment access (``_ENV[...]``, ``_G[...]``, with a literal key: what follows);
* with ``keep``: the kept names and ``_G``/``_ENV`` read as values, their simple aliases
  (``local fetch = request``, ``{go = simpleLLM}``) and their declarations (``local
  request``, a parameter);
* hosts of literal ``http(s)://`` URLs found in string literals;
* which calls sit inside the arguments of ``listenEdit(...)`` (an edit listener's body).
"""

from __future__ import annotations

from typing import Any

from risutools.analysis.luaargs import ARG_CALLS as ARG_CALLS
from risutools.analysis.luaargs import HOLE as HOLE
from risutools.analysis.luaargs import LIT as LIT
from risutools.analysis.luaargs import REF as REF
from risutools.analysis.luaargs import SAFE_FIELDS, Collector, may_hold_url, share_args
from risutools.analysis.luaargs import Arg as Arg
from risutools.analysis.luaargs import Call as Call
from risutools.analysis.luafold import MAX_FOLDS, fold_index, fold_value, list_values
from risutools.analysis.luaglobals import loaded_globals
from risutools.analysis.lualex import (
    KEYWORDS,
    NAME,
    NUM,
    OP,
    STR,
    LineIndex,
    decode_lua_string,
    globals_fields,
    in_type_call,
    iter_tokens,
    name_before_dot,
    path_start,
    plain_header,
)
from risutools.analysis.lualists import UNKNOWN, list_goes_on, name_list, strings_ahead
from risutools.analysis.luarecords import FuncDef as FuncDef
from risutools.analysis.luarecords import LuaScan as LuaScan

# the skip path, also read from here (``lua.POSSESSIVE`` is what the scanner uses)
from risutools.analysis.luaskip import POSSESSIVE as POSSESSIVE
from risutools.analysis.luaskip import SKIP_RUN_310 as SKIP_RUN_310
from risutools.analysis.luaskip import alternation as alternation
from risutools.analysis.luaskip import foldable_start, scan_skipper
from risutools.analysis.luaskip import skip_pattern as skip_pattern
from risutools.analysis.urlleaks import url_hosts

# -- the scanner ---------------------------------------------------------------

#: a literal up to this long may be a state key named through a constant
_MAX_NAME_CONSTANT = 80
#: calls whose arguments are read at once (nested: ``setChatVar(k, getChatVar(j))`` is two;
#: the real corpus never holds two open): each token goes to each of them, so a script of
#: nothing but ``load(`` (1 MB) fed 64 at every token, 10 s; a call past this many is kept
#: with its arguments unread (what a call with an argument that is no literal gets)
_MAX_OPEN_COLLECTORS = 8
#: ``listenEdit(`` bodies open at once
_MAX_OPEN_LISTENERS = 64
#: calls kept per script (about 1 KB each with what later passes make of them), and records
#: of each other kind; past one the scan goes on and says so in ``errors``
MAX_CALLS = 200_000
MAX_RECORDS = 100_000
#: at most this many literals are kept for one name (``LuaScan.choices``); a name assigned
#: more is not resolved
MAX_CHOICES = 16
_OPAQUE = "\x00opaque"  # a constant that cannot hold a URL (its value is never decoded)
#: the brackets a listener's depth counts
_BRACKETS = frozenset({"(", "{", "[", ")", "}", "]"})
#: the operators that make a name before them a call, a lookup or an assignment target
_AFTER_NAME = frozenset({"(", "{", "[", "="})
#: the names that stand for the table of globals (``_G.x``, ``_G["x"]``)
ENV_NAMES = frozenset({"_G", "_ENV"})
#: the operators after ``name = "literal"`` that end its value (any other goes on with it:
#: ``..``, a call, ``==``; so do ``and``/``or``)
_LITERAL_ENDS = frozenset({",", ";", ")", "]", "}", "="})
#: what a list of targets' ``,`` may follow, no name pending (``t[k], b =``, ``a <close>, b``)
_LIST_COMMA_AFTER = frozenset({"]", ">"})
#: the operators read with no name pending (brackets, a ``,`` that may go on with a list)
_READ_OPS = _BRACKETS | {","}
#: the tokens after a name that end the expression it is (``x = name`` then one of them:
#: ``x`` is an alias of ``name``; a name or a keyword after it ends it too)
_VALUE_ENDS = frozenset({")", "}", "]", ",", ";"})
#: the calls whose first argument a name may be without being read as a value here
#: (``pcall(f, ...)`` is a call of ``f``; ``rawget(_G, k)`` a lookup the walk reads)
_FIRST_ARG_OF = frozenset({"pcall", "xpcall", "rawget", "rawset"})
def scan_lua(text: str, keep: frozenset[str] | None = None, *, skip: bool = True,
             need: dict[str, int] | None = None, to_calls: bool | frozenset[str] = False,
             env: frozenset[str] = frozenset(), fields: frozenset[str] = frozenset(),
             packages: frozenset[str] = frozenset()) -> LuaScan:
    """Read Lua source and return what it calls, defines and names (never raises).

    ``keep``: record only calls to these names (all calls when None); then, with ``skip``,
    the runs of tokens that cannot matter are passed over in one match each (see
    :func:`skip_pattern`; the result is the same, only ``tokens`` counts fewer).
    ``need``: how many leading arguments to read of calls to other names than those of
    ``ARG_CALLS`` (a helper function's calls, say).  ``to_calls`` (with ``keep`` None):
    every call is recorded, and the runs of tokens between calls that cannot matter are
    passed over (``skip_pattern(..., every_call=True)``; the same calls as without); a set
    of names: only the calls of those and of the names whose arguments are read
    (``ARG_CALLS``, ``need``) are recorded (the same as with True).
    ``env``: names that stand for the table of globals besides ``_G`` and ``_ENV`` (aliases
    of it, which should be in ``keep``; ``t["_G"]`` is read as ``t._G``: :func:`globals_fields`).
    With ``keep``, the names of ``keep`` and of the table of globals read as values are
    ``values`` and ``aliases``; ``fields``: fields that hold one (``{go = request}``);
    ``packages``: aliases of ``package`` (``local p = package``: ``p.loaded._G``)."""
    if not isinstance(text, str) or not text:
        return LuaScan()
    return _Scanner(globals_fields(text), keep, skip, need, to_calls, env, fields, packages).run()


class _Scanner:
    """The state of one :func:`scan_lua` pass; :meth:`run` feeds it one token at a time
    and each ``on_*`` method is one step of reading."""

    #: ``x = package.loaded._G``: the offset of its ``_G`` and ``x`` (read as ``x = _G``)
    loaded: tuple[int, str] | None = None
    in_funcname = False  # right after the keyword ``function``
    func_kw = -1  # the offset of the last ``function`` keyword

    def __init__(self, text: str, keep: frozenset[str] | None, skip: bool,
                 need: dict[str, int] | None = None, to_calls: bool | frozenset[str] = False,
                 env: frozenset[str] = frozenset(), fields: frozenset[str] = frozenset(),
                 packages: frozenset[str] = frozenset()) -> None:
        self.text, self.env, self.fields = text, ENV_NAMES | env, fields
        self.packages = packages | {"package"}  # (and its aliases: ``p.loaded._G``)
        #: the names whose uses as a value are recorded
        self.watch = keep | self.env if keep is not None else frozenset()
        #: about the pending name: whether it is watched, read as a value if nothing else,
        #: whether ``local`` stands before it, and the name it is assigned to (an alias)
        self.pend_watch = False
        self.pend_local = False
        self.pend_alias: str | None = None
        #: a form of several tokens being read: ``local name <const> =`` ("attrib", name,
        #: offset, step) or ``_G[k]`` and what follows ("env", table, offset of the last
        #: token, step, literal, name, offset of the table's name, offset of ``[`` (of the
        #: end of a folded key, step 4), the name the value is assigned to)
        self.form: list[Any] | None = None
        self.arg_calls = ARG_CALLS if need is None else {**ARG_CALLS, **need}
        self.keep = keep if keep is not None or isinstance(to_calls, bool) \
            else to_calls | frozenset(self.arg_calls)  # (the calls recorded; None: all)
        self.skipper = scan_skipper(keep, skip, to_calls is not False)
        self.lines = LineIndex(text)
        self.result = LuaScan()
        self.raw_errors: list[tuple[int, str]] = []
        self.collectors: list[Collector] = []
        self.prev_kind, self.prev_val, self.prev2_kind, self.prev2_val = 0, "", 0, ""
        #: a name that may start a call: (name, start, qualifier, base); the last one dropped
        self.pend: tuple[str, int, str, str] | None = None
        self.pend_was = ("", 0, "", "")
        #: 1: after ``function`` (before its ``(``), 2: in its parameter list
        self.params_state = 0
        self.params: set[str] = set()  # parameter names (never constants)
        self.funcname_local = False
        #: ``name =`` awaiting its value: (name, start, whether ``local`` stands before it,
        #: whether it is a field ``t.name =`` or the last of a list: never a constant or a
        #: function then; whether it is a field of a table (``t.name =``, ``{name =``,
        #: ``{a, name =``): an alias of it is ``.name``; whether it ends a list)
        self.assign_target: tuple[str, int, bool, bool, bool, bool] | None = None
        #: the offset of a list's value -> its target (``""``: a field, an index)
        self.value_targets: dict[int, str] = {}
        #: ``name = "literal"`` awaiting its end: (name, value); the value is _OPAQUE when
        #: the literal is longer than a variable name and cannot hold a URL (constants name
        #: the URL of a request or the key of a state call), so it is never decoded
        self.const_pending: tuple[str, str, int] | None = None  # (and the literal's offset)
        self.constants: dict[str, str | None] = {}
        #: name -> the distinct literals assigned to it (``LuaScan.choices``); an empty list
        #: once it was assigned more than MAX_CHOICES, or a literal too long to be a name
        self.choices: dict[str, list[str]] = {}
        self.literal_assigns: dict[str, int] = {}
        self.other: set[str] = set()  # names a list gave no literal (never ``choices``)
        self.full: set[str] = set()  # record kinds past their bound
        self.folds = self.lists = 0  # keys folded, lists read (each at most MAX_FOLDS)
        self.call_names: set[str] = set()  # the names of the calls kept
        self.shared: dict[tuple[object, ...], Any] = {}  # equal arguments share one object
        #: open ``listenEdit(`` calls: the bracket depth each started at; ``depth`` counts
        #: brackets while one is open
        self.listeners: list[int] = []
        self.listener_calls: list[Call] = []  # the ``listenEdit`` call of each
        self.depth = 0

    def run(self) -> LuaScan:
        """Feed every token to the steps, by kind of token (a number only ends a pending
        name).  While the scanner is *quiet* (no assignment, constant, function header or
        call arguments open; a name awaiting its next token and open listeners allowed) the
        steps for those would do nothing and are left out (the other tokens go through
        :meth:`busy_token`); while it is *idle* (quiet, no name pending, no listener open)
        the skipper may pass over runs of tokens."""
        skipper = self.skipper
        on_name = self.on_name
        count = 0
        quiet = True
        for kind, s, _e, value, b0, b1 in iter_tokens(self.text, self.raw_errors, skipper):
            count += 1
            if skipper is not None and skipper.last is not None:
                self.after_skip(skipper.last)
                skipper.last = None
            if not quiet:
                self.busy_token(kind, value, s, b0, b1)
            elif kind == NAME:  # the token's own steps (the same in busy_token)
                on_name(value or "", s)
            elif kind == OP:
                if self.pend is not None or value in _READ_OPS:
                    self.on_operator(value, s)
            elif kind == STR:
                self.on_string_token(value, s, b0, b1)
            else:  # a number after a name: not a call, lookup or assignment
                self.drop(kind, value)
            self.prev2_kind, self.prev2_val = self.prev_kind, self.prev_val
            self.prev_kind, self.prev_val = kind, value or ""
            quiet = (not self.params_state and self.assign_target is None
                     and not self.collectors and not self.in_funcname
                     and self.const_pending is None and self.form is None)
            if skipper is not None:
                skipper.idle = quiet and self.pend is None and not self.listeners
        self.result.tokens = count
        return self.finish()

    def plain_header(self, kw: int) -> None:
        """The header of the function whose keyword is at ``kw`` (just read), when it is
        written plainly (:func:`plain_header`) and nothing else is open, read at once with
        what its tokens' steps do: its name defined (dotted after a ``.`` or ``:``), its
        parameters recorded, a watched one declared; then nothing is open, and the lexer goes
        on after its ``)``, as after a run passed over that ended with it."""
        skipper = self.skipper
        if skipper is None or self.collectors or self.form is not None:
            return
        toks = plain_header(self.text, kw + 8)
        if toks is None or (not self.in_funcname and toks[0][0] != "("):
            return
        defs = self.result.defs
        i = 0
        while toks[i][0] != "(":
            value, s = toks[i]
            if i == 0 and self.room("function definitions", len(defs), s):
                defs.append(FuncDef(value, self.lines.line(s), self.funcname_local, s, kw))
            elif i and value not in (".", ":") and defs and defs[-1].kw == kw:
                defs[-1].dotted = True
            i += 1
        self.header_parameters([(v, s) for v, s in toks[i + 1:-1] if v not in (",", "...")])
        self.params_state = 0
        self.in_funcname = False
        skipper.jump = toks[-1][1] + 1
        skipper.last = ")"

    def header_parameters(self, params: list[tuple[str, int]]) -> None:
        """A plain header's parameters (name, offset): recorded, a watched one declared, as
        each is when read (then, as the last one pending dropped at ``)``, nothing pends)."""
        for value, s in params:
            if value in self.params or self.room("parameters", len(self.params), s):
                self.params.add(value)
            if value in self.watch and self.room("declarations", len(self.result.decls), s):
                self.result.decls.append((value, s, False))
        if params:
            self.pend_watch = self.pend_local = False
            self.pend_alias = None

    def busy_token(self, kind: int, value: str | None, s: int, b0: int, b1: int) -> None:
        """A token while something is open: the end of a constant, its start (a string right
        after ``name =``), call arguments, a function's parameters; then the token's own
        steps (as in :meth:`run`); then a function's name ends at anything but a name,
        ``.`` or ``:``, an assignment target at anything but ``=``."""
        if self.const_pending is not None:
            self.on_constant_end(kind, value, s)
        if self.assign_target is not None and not self.assign_target[3] \
                and self.prev_kind == OP and self.prev_val == "=":
            self.on_assigned_value(kind, value, s, b0, b1)
        if self.collectors:
            self.on_argument_token(kind, value, b0, b1)
        if self.params_state:
            self.on_parameter_token(kind, value, s)
        if kind == NAME:
            self.on_name(value or "", s)
        elif kind == OP:
            if self.pend is not None or value in _READ_OPS:
                self.on_operator(value, s)
        elif kind == STR:
            self.on_string_token(value, s, b0, b1)
        else:
            self.drop(kind, value)
        self.token_end(kind, value, s, b0, b1)

    def token_end(self, kind: int, value: str | None, s: int, b0: int, b1: int) -> None:
        """After a busy token's steps: a form of several tokens goes on, a function's name
        ends at anything but a name, ``.`` or ``:``, an assignment target at anything but
        ``=``."""
        if self.form is not None and self.form[2] != s:
            if self.form[0] == "env":
                self.on_env_key_token(kind, value, s, b0, b1)
            else:
                self.on_attribute_token(kind, value, s)
        if self.in_funcname and not (kind == NAME or (kind == OP and value in (".", ":"))):
            self.in_funcname = False
        if self.assign_target is not None and not (kind == OP and value == "="):
            self.assign_target = None
        if value == "," and self.form is None and self.prev_val in _LIST_COMMA_AFTER:
            self.list_comma(s)  # (a form that ended at this ``,``: ``local a <close>,``)

    def on_operator(self, value: str | None, s: int) -> None:
        """A bracket (counted while a listener is open), or an operator after a pending name
        (``(``, ``{``, ``[`` or ``=``: see :meth:`on_after_name`)."""
        if self.listeners and value in _BRACKETS:
            self.on_listener_bracket(value)
        if self.pend is not None:
            if value in _AFTER_NAME:
                self.on_after_name(OP, value, s, -1, -1)
            else:  # anything else after a name: not a call, lookup or assignment
                self.drop(OP, value)
                if value == "," and self.may_list() \
                        and list_goes_on(self.text, s):
                    # ``a, b =``: the next name is read, never passed over
                    self.form = ["attrib", "", s, 9, -1]  # (a step that matches nothing)
        elif value == "," and self.prev_val in _LIST_COMMA_AFTER and self.form is None:
            self.list_comma(s)

    def list_comma(self, s: int) -> None:
        """A ``,`` after ``]`` or ``>`` (no name pending): before more names being assigned
        (``t[k], b =``, ``local a <close>, b =``), the next name is read, never passed
        over (as after a name)."""
        if list_goes_on(self.text, s):
            self.form = ["attrib", "", s, 9, -1]

    def may_list(self) -> bool:
        """Whether the name before a ``,`` may be one of a list of targets being assigned:
        not a value (after ``=``, ``(``, an operator: ``{k = v, b = w}``, ``f(a, b)``); a
        field (``t.f, b =``) may."""
        return self.prev2_kind != OP or self.prev2_val in (",", ")", "]", "}", ";", ".")

    def on_string_token(self, value: str | None, s: int, b0: int, b1: int) -> None:
        """A string: the argument of a pending name (``f "x"``), and URL hosts."""
        if self.pend is not None:
            self.on_after_name(STR, value, s, b0, b1)
        if len(self.result.url_hosts) < 1000 and (
                value is not None or may_hold_url(self.text, b0, b1)):
            self.on_string(value, s, b0, b1)

    def after_skip(self, last: str) -> None:
        """Tokens were passed over: the previous token is the last of them (its kind read
        from its first character); the one before it never matters there (see
        :func:`skip_pattern`)."""
        c = last[0]
        if c.isalpha() or c == "_":
            self.prev_kind = NAME
        elif c in "\"'":
            self.prev_kind = STR
        elif c.isdigit() or (c == "." and len(last) > 1 and last[1].isdigit()):
            self.prev_kind = NUM
        else:
            self.prev_kind = OP
        self.prev_val = last
        self.prev2_kind = 0
        self.prev2_val = ""

    def room(self, kind_name: str, held: int, offset: int) -> bool:
        """Whether one more record of this kind may be kept (past the bound: say so once)."""
        bound = MAX_CALLS if kind_name == "calls" else MAX_RECORDS
        if held < bound:
            return True
        if kind_name not in self.full:
            self.full.add(kind_name)
            self.raw_errors.append((offset, f"more than {bound} {kind_name}; the rest "
                                            "were not recorded"))
        return False

    def keep_constant(self, name: str, value: str, offset: int) -> None:
        """``name`` was assigned the literal ``value``: a constant while it is the only one."""
        constants = self.constants
        if name in constants or self.room("constants", len(constants), offset):
            constants[name] = value if constants.get(name, value) == value else None
            ch = self.choices.setdefault(name, [])
            self.literal_assigns[name] = self.literal_assigns.get(name, 0) + 1
            if value == _OPAQUE or len(ch) >= MAX_CHOICES:
                ch.append(_OPAQUE)
            elif value not in ch:
                ch.append(value)

    def on_constant_end(self, kind: int, value: str | None, s: int) -> None:
        """The token after ``name = "literal"``: the literal was the whole value unless the
        expression goes on (``..``, a call, an index), then its value when it folds to a
        string (:func:`fold_value`: ``n = "req" .. "uest"``)."""
        cname, cval, at = self.const_pending  # type: ignore[misc]
        self.const_pending = None
        if (kind == OP and value in _LITERAL_ENDS) or kind == NUM \
                or (kind == NAME and value not in ("and", "or")):
            self.keep_constant(cname, cval, s)
        elif kind == OP and value == ".." and at >= 0:
            self.fold_constant(cname, at)

    def fold_constant(self, name: str, at: int) -> None:
        """``name =`` an expression at ``at`` that folds to a string (:func:`fold_value`):
        a constant (:meth:`keep_constant`); at most MAX_FOLDS folds."""
        self.folds += 1
        got = fold_value(self.text, at, self.folding_constants()) \
            if self.folds <= MAX_FOLDS else None
        if got is not None:
            long = len(got) > _MAX_NAME_CONSTANT and not may_hold_url(got, 0, len(got))
            self.keep_constant(name, _OPAQUE if long else got, at)

    def folding_constants(self) -> dict[str, str]:
        """The constants an expression may fold (a single literal each, no parameter)."""
        return {k: v for k, v in self.constants.items()
                if v is not None and v != _OPAQUE and k not in self.params}

    def on_assigned_value(self, kind: int, value: str | None, s: int, b0: int,
                          b1: int) -> None:
        """The first token right after ``name =``: a string, a constant if nothing follows
        it (or its expression folds); a value that may fold (``("x"):rep(2)``,
        ``string.char(...)``, a constant's name) folded at once."""
        name = self.assign_target[0]  # type: ignore[index]
        if kind != STR:
            if foldable_start(kind, value, self.constants, self.text, s + len(value or "")):
                self.fold_constant(name, s)
        elif b1 - b0 > _MAX_NAME_CONSTANT and not may_hold_url(self.text, b0, b1):
            self.const_pending = (name, _OPAQUE, -1)
        else:
            self.const_pending = (name, value if value is not None
                                  else decode_lua_string(self.text, b0, b1), s)

    def on_argument_token(self, kind: int, value: str | None, b0: int, b1: int) -> None:
        """Give the token to the calls whose arguments are being read."""
        collectors = self.collectors
        if len(collectors) == 1:  # the usual case, without building a list
            c = collectors[0]
            if c.feed(kind, value, self.text, b0, b1):
                collectors.clear()
                share_args(self.shared, c.call, MAX_RECORDS)
            return
        done = [c for c in collectors if c.feed(kind, value, self.text, b0, b1)]
        for c in done:
            collectors.remove(c)
            share_args(self.shared, c.call, MAX_RECORDS)

    def on_parameter_token(self, kind: int, value: str | None, s: int) -> None:
        """A function's name up to ``(``, then its parameter names up to ``)``: a parameter
        is never taken for a constant (``local name = "x"`` elsewhere in the script)."""
        if self.params_state == 1:
            if kind == OP and value == "(":
                self.params_state = 2
            elif not (kind == NAME or (kind == OP and value in (".", ":"))):
                self.params_state = 0
        elif kind == NAME and value is not None and value not in KEYWORDS:
            if value in self.params or self.room("parameters", len(self.params), s):
                self.params.add(value)
        elif not (kind == OP and value in (",", "...")):
            self.params_state = 0  # ")" (or anything a parameter list cannot hold)

    def on_listener_bracket(self, value: str | None) -> None:
        """Count brackets inside ``listenEdit(...)``; its closing one ends the listener."""
        if value in ("(", "{", "["):
            self.depth += 1
        elif value in (")", "}", "]"):
            self.depth -= 1
            while self.listeners and self.depth < self.listeners[-1]:
                self.listeners.pop()
                self.listener_calls.pop()

    def on_after_name(self, kind: int, value: str | None, s: int, b0: int, b1: int) -> None:
        """The token after a name (a string, or an operator): a call (``(``, a string,
        ``{``), ``_ENV[``/``_G[``, or ``name =`` (which may define a function or a
        constant)."""
        pname, pstart, pq, pbase = self.pend  # type: ignore[misc]
        self.pend = None
        watched = self.pend_watch
        if kind == STR or value in ("(", "{"):
            self.on_call(pname, pstart, pq, pbase, kind, value, b0, b1)
            if watched and pname in self.env:  # ``_G(...)``: the table as a value
                self.value_use(pname, pstart)
        elif value == "[" and pname in self.env and (not pq or (pq == "." and pname == "_G")):
            dyn = self.result.dynamic_index
            if self.room("dynamic lookups", len(dyn), pstart):
                dyn.append((pname, self.lines.line(pstart)))
            self.form = ["env", pname, s, 1, None, None, pstart, s, self.pend_alias]
        elif value == "=":
            self.on_assign(pname, pstart, pq, watched, s)
        elif watched:  # ``request[k]``
            self.value_use(pname, pstart)
        self.pend_alias = None

    def on_assign(self, pname: str, pstart: int, pq: str, watched: bool, s: int) -> None:
        """``name =`` / ``t.name =``: a target; a watched one is ``_ENV = t`` (a value) or
        the script's own variable (``local a, request =``: a walk checks the ``,``)."""
        after = self.prev2_val if self.prev2_kind == OP else ""
        local = self.prev2_kind == NAME and self.prev2_val == "local"
        # the last of a list of names (``local a, b = "x", "y"``) is not given the first
        # value: read as a field would be (no function of its name); each name of the list
        # is given its own value (:meth:`on_name_list`)
        names = name_list(self.text, pstart) if after == "," else None
        listed = names is not None
        if names is not None and not pq:
            self.on_name_list([*names, pname], s)
        self.assign_target = (pname, pstart, local, bool(pq) or listed,
                              bool(pq) or after in ("{", ","), listed)
        if not watched or pq:
            return
        if pname in self.env:
            self.value_use(pname, pstart)
        elif after != "{":
            got = self.result.decls
            if self.room("declarations", len(got), pstart):
                got.append((pname, pstart, after == ","))

    def on_name_list(self, names: list[str], eq: int) -> None:
        """``a, b, c = v1, v2, v3`` (its ``=`` at ``eq``; a field or an index among the
        targets is ``""``: ``t[k], b = "x", "y"`` gives ``b`` "y"): each name a constant of
        its own value when that is one string literal (:func:`list_values`), an alias of
        a watched name that is its whole value (``local g, s = x, setChatVar``: ``s``,
        read at the value's name); a name given anything else (an expression, a call's
        results, nil) is never a branch chain's name (``choices``).  A target not read
        back (``UNKNOWN``): the last name is given nothing.  At most ``MAX_FOLDS`` lists
        a script have their values read."""
        if UNKNOWN in names:
            self.other.add(names[-1])
            return
        if self.lists >= MAX_FOLDS or not (self.watch or strings_ahead(self.text, eq)):
            values: list[tuple[str | None, int]] = [(None, -1)] * len(names)
        else:
            self.lists += 1
            values = list_values(self.text, eq, len(names))
        for name, (value, at) in zip(names, values, strict=True):
            if at >= 0 and self.watch:
                self.value_targets[at] = name
            if not name:
                continue
            if value is None:
                self.other.add(name)
            elif len(value) > _MAX_NAME_CONSTANT and not may_hold_url(value, 0, len(value)):
                self.keep_constant(name, _OPAQUE, eq)
            else:
                self.keep_constant(name, value, eq)

    def drop(self, kind: int, value: str | None) -> None:
        """The pending name is not called, looked up nor assigned (kind 0: the end): a watched
        name is a value (an alias: the whole value of ``x =``, ``x = _G.name`` too), but
        ``_G.x``, ``debug.traceback``, ``type(x)``; ``local x <const>`` starts an attribute."""
        if self.pend is None:
            return
        pname, pstart, _pq, _pbase = self.pend_was = self.pend
        self.pend = None
        alias, self.pend_alias = self.pend_alias, None
        if value == "<" and (self.pend_local or self.prev2_val == ","):  # (``local a, b <``)
            self.form = ["attrib", pname, -1, 0, pstart]
        if self.pend_watch and value == "." and alias is not None:  # ``x = package.loaded._G``
            self.loaded = loaded_globals(self.text, self.pend_was, self.packages, self.env, alias)
        if self.pend_watch:
            self.dropped(kind, value, alias)

    def dropped(self, kind: int, value: str | None, alias: str | None) -> None:
        pname, pstart, pq, pbase = self.pend_was  # (:meth:`drop` of a watched name)
        if kind == OP and value in (".", ":") and (
                pname in self.env or (value == "." and pname in SAFE_FIELDS and SAFE_FIELDS[
                    pname].match(self.text, pstart + len(pname)))):
            if pname in self.env and value == ".":
                self.pend_alias = alias  # ``x = _G.request``: the alias of the field's name
            return
        field = bool(pq) and pbase not in self.env  # ``t.go`` read: the field's value
        if value == ")" and in_type_call(self.text, path_start(self.text, pstart, field)):
            return  # ``type(request)``, ``type(t.go)``: its type only, it never leaves
        if not field and alias is not None and (kind in (0, NAME) or value in _VALUE_ENDS):
            got = self.result.aliases
            if self.room("aliases", len(got), pstart):
                got.append((alias, pname, self.lines.line(pstart), pstart))
        else:
            self.value_use("." + pname if field else pname, pstart)

    def value_use(self, name: str, offset: int) -> None:
        got = self.result.values
        if self.room("value uses", len(got), offset):
            got.append((name, self.lines.line(offset), offset))

    def on_attribute_token(self, kind: int, value: str | None, s: int) -> None:
        """``local name <const> =`` (or ``<close>``): at its ``=``, ``name =`` as without
        the attribute (its ``<`` is seen here only when the scanner was busy)."""
        _form, name, _at, step, start = self.form  # type: ignore[misc]
        self.form = None
        if step == 0 and kind == OP and value == "<":  # read here while busy
            self.form = ["attrib", name, -1, 1, start]
        elif step <= 1 and kind == NAME and value in ("const", "close"):
            self.form = ["attrib", name, -1, 2, start]
        elif step == 2 and kind == OP and value == ">":
            self.form = ["attrib", name, -1, 3, start]
        elif step == 3 and kind == OP and value == "=":
            names = name_list(self.text, start)  # ``local a, b <const> = "x", "y"``
            if names is not None:
                self.on_name_list([*names, name], s)
            self.assign_target = (name, start, True, names is not None, False,
                                  names is not None)

    def on_env_key_token(self, kind: int, value: str | None, s: int, b0: int,
                         b1: int) -> None:
        """``_G[k]`` after ``[``: one literal or name (a constant assigned before: its
        value), else an expression folded to a string (:mod:`luafold`), ``]``, then a call
        (of that name), an assignment, or a read (a watched name read as a value)."""
        form: list[Any] = self.form  # type: ignore[assignment]
        self.form = None
        _f, table, _at, step, literal, name, start, bracket, alias = form
        if step == 1 and kind == STR:
            literal = value if value is not None else decode_lua_string(self.text, b0, b1)
            self.form = [*form[:2], s, 2, literal[:_MAX_NAME_CONSTANT], None, *form[6:]]
        elif step == 1 and kind == NAME and value not in KEYWORDS:
            self.form = [*form[:2], s, 2, None, value, *form[6:]]
        elif step == 2 and kind == OP and value == "]":
            folded = self.constants.get(name) if name and name not in self.params else None
            if folded is not None and folded != _OPAQUE:
                literal = folded
            self.form = [*form[:2], s, 3, literal, name, *form[6:]]
        elif step in (1, 2):
            self.fold_key(form, s)
        elif step == 4 and s < bracket:  # inside a folded key (which ends at ``bracket``)
            self.form = [*form[:2], s, 4, *form[4:]]
        else:
            self.after_env_key(kind, value, table, start, literal, name, alias, b0, b1)

    def fold_key(self, form: list[Any], s: int) -> None:
        """``_G[expr]`` with a key that is neither one literal nor one name: the name it
        makes when :func:`fold_index` folds it (the constants assigned before it), read on
        from the ``]`` after it."""
        if self.folds >= MAX_FOLDS:
            return
        self.folds += 1
        got = fold_index(self.text, form[7], self.folding_constants())
        if got is not None and got[1] > s:
            self.form = [*form[:2], s, 4, got[0], None, form[6], got[1], form[8]]

    def after_env_key(self, kind: int, value: str | None, table: str, start: int,
                      literal: str | None, name: str | None, alias: str | None,
                      b0: int, b1: int) -> None:
        """The token after ``_G[k]``: a call, an assignment, or the end of a read."""
        then = "call" if kind == STR or value in ("(", "{") else \
            "assign" if kind == OP and value == "=" else ""
        if then == "call" and literal is not None:
            self.on_call(literal, start, "[", table, kind, value, b0, b1)
        elif not then and literal is not None and literal in self.watch \
                and value not in (".", ":", "["):
            got = self.result.aliases
            if alias is not None and (kind in (0, NAME) or value in _VALUE_ENDS):
                if self.room("aliases", len(got), start):
                    got.append((alias, literal, self.lines.line(start), start))
            else:
                self.value_use(literal, start)
        got_keys = self.result.env_keys
        if self.room("dynamic lookups", len(got_keys), start):
            got_keys.append((table, self.lines.line(start), literal, name, then))

    def on_call(self, pname: str, pstart: int, pq: str, pbase: str, kind: int,
                value: str | None, b0: int, b1: int) -> None:
        """A call of ``pname`` (kept when it is one the scanner keeps): its literal argument
        (``f "x"``), or the arguments to follow (``f(``); a ``listenEdit(`` opens a
        listener."""
        calls = self.result.calls
        if (self.keep is not None and pname not in self.keep) or (not self.room(
                "calls", len(calls), pstart) and pname in self.call_names):
            return  # (past the bound, the first call of each name is still kept)
        self.call_names.add(pname)
        line = self.lines.line(pstart)
        if kind == STR:
            literal = value if value is not None else decode_lua_string(self.text, b0, b1)
            calls.append(Call(pname, line, pq, pbase, [Arg(literal=literal)], "string",
                              start=pstart))
        elif value == "{":
            calls.append(Call(pname, line, pq, pbase, [], "table", start=pstart))
        else:
            call = Call(pname, line, pq, pbase, start=pstart)
            calls.append(call)
            need = self.arg_calls.get(pname, 0)
            if need and len(self.collectors) < _MAX_OPEN_COLLECTORS:
                self.collectors.append(Collector(call, need))
        if self.listeners:
            inner = calls[-1]
            inner.in_listener = True
            inner.outer = self.listener_calls[-1]  # (its kind: the walk's listener_kinds)
        if pname == "listenEdit" and not pq and value == "(" \
                and len(self.listeners) < _MAX_OPEN_LISTENERS:
            self.depth += 1
            self.listeners.append(self.depth)
            self.listener_calls.append(calls[-1])

    def on_name(self, value: str, s: int) -> None:
        """A name: a keyword (``function`` starts a definition), the name of a function
        being defined, or a name that may be called (a name pending before it was none)."""
        self.drop(NAME, value)
        defs = self.result.defs
        after_dot = self.prev_kind == OP and self.prev_val in (".", ":")
        if value in KEYWORDS:
            if value == "function":
                self.params_state = 1
                self.func_kw = s
                if self.assign_target is not None and self.prev_kind == OP \
                        and self.prev_val == "=" and not self.assign_target[3]:
                    name, start, local, _q, _field, _listed = self.assign_target
                    if self.room("function definitions", len(defs), s):
                        defs.append(FuncDef(name, self.lines.line(start), local, start, s))
                    self.in_funcname = False
                else:
                    self.in_funcname = True
                    self.funcname_local = self.prev_kind == NAME and self.prev_val == "local"
                self.plain_header(s)
            self.assign_target = None
        elif self.in_funcname:
            if not after_dot:
                if self.room("function definitions", len(defs), s):
                    defs.append(FuncDef(value, self.lines.line(s), self.funcname_local, s,
                                        self.func_kw))
            elif defs and defs[-1].kw == self.func_kw:
                defs[-1].dotted = True
        else:
            self.pending(value, s, after_dot)

    def pending(self, value: str, s: int, after_dot: bool) -> None:
        """A name that may be called, looked up or assigned (decided at the next token),
        and what it is if not: watched or not, after ``local``, the whole value of ``x =``."""
        if after_dot and self.loaded is not None and self.loaded[0] == s:
            self.pend, self.pend_watch, self.pend_local = (value, s, "", ""), True, False
            self.pend_alias, self.loaded = self.loaded[1], None  # (as ``x = _G``)
            return
        if after_dot:
            base = self.prev2_val if self.prev2_kind == NAME else "" if self.prev2_kind \
                else name_before_dot(self.text, s)  # (the skip path passed over ``t.``)
            self.pend = (value, s, self.prev_val, base)
            self.pend_watch = value in self.watch and (  # ``_G.request``; ``t.go`` (``.go``)
                base in self.env or value in self.fields)
            self.pend_local = False
            self.pend_alias = self.pend_alias if base in self.env else None
            return
        self.pend = (value, s, "", "")
        self.pend_local = self.prev_kind == NAME and self.prev_val == "local"
        decl = self.pend_local or self.params_state == 2
        self.pend_watch = value in self.watch and not decl and not self.first_argument()
        self.pend_alias = self.alias_target(s) if self.pend_watch else None
        if decl and value in self.watch:
            got = self.result.decls
            if self.room("declarations", len(got), s):
                got.append((value, s, False))

    def alias_target(self, s: int) -> str | None:
        """What a watched name at ``s`` is an alias of when it is a whole value: the target
        of ``x =`` (``.x`` a field) right before it, or of its place in a list (``a, b =
        x, request``: ``b``; none for a field or an index among the targets)."""
        if self.value_targets and s in self.value_targets:
            return self.value_targets.pop(s) or None
        target = self.assign_target
        if target is None or target[5] or self.prev_kind != OP or self.prev_val != "=":
            return None
        return ("." if target[4] else "") + target[0]

    def first_argument(self) -> bool:
        """Whether the name read is the first argument of ``pcall``/``rawget`` ... (read there)."""
        return self.prev_kind == OP and self.prev_val == "(" and self.prev2_kind == NAME \
            and self.prev2_val in _FIRST_ARG_OF

    def on_string(self, value: str | None, s: int, b0: int, b1: int) -> None:
        """A string literal: the hosts of the ``http(s)://`` URLs it holds."""
        if value is None:  # escapes: decoded only when they may spell a URL
            value = decode_lua_string(self.text, b0, b1)
        if ":" not in value:  # (``https:\\h``, ``https:/\h`` are addresses too)
            return
        hosts = self.result.url_hosts
        line = self.lines.line(s)
        for _, host in url_hosts(value):  # (``https://user@h``: h)
            if len(hosts) < 1000:
                hosts.append((host, line))

    def finish(self) -> LuaScan:
        """Close what the end of the text left open and turn offsets into lines."""
        result = self.result
        self.drop(0, None)
        for c in self.collectors:  # unclosed calls at the end of the text
            c.finish_arg(self.text)
            share_args(self.shared, c.call, MAX_RECORDS)
        if self.const_pending is not None:
            self.keep_constant(*self.const_pending[:2], len(self.text))
        form = self.form
        if form is not None and form[0] == "env" and form[3] >= 3:
            self.after_env_key(0, None, form[1], form[6], form[4], form[5], form[8], -1, -1)
        params = self.params
        result.params = frozenset(params)
        result.constants = {k: v for k, v in self.constants.items()
                            if v is not None and v != _OPAQUE and k not in params}
        result.choices = {k: tuple(v) for k, v in self.choices.items()
                          if len(v) > 1 and _OPAQUE not in v and k not in params
                          and k not in self.other}
        result.literal_assigns = {k: self.literal_assigns[k] for k in result.choices}
        result.lines = self.lines.newlines + 1
        self.raw_errors.sort(key=lambda err: err[0])
        result.errors = [(self.lines.line(off), msg) for off, msg in self.raw_errors]
        return result
