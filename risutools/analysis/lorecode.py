"""Which lorebook entries hold Lua (code a module loads from its lorebook at run time).

RisuAI modules such as LightBoard keep Lua files in lorebook entries and run them
with ``load(entry.content)``; builders of cards pack ``<file>.lua`` entries the same
way.  An entry is taken for code when its text reads as Lua (line by line, without
running anything) and the module can run it: the module's own Lua calls a loader
(``load``/``loadstring``/``require``/``dofile``), or the entry is named like a Lua
file (``*.lua``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from risutools.analysis.lualex import (
    KEYWORDS,
    NAME,
    NUM,
    OP,
    STR,
    LineIndex,
    decode_lua_string,
    iter_tokens,
)

#: a line that starts like a Lua statement (or a comment, or the end of a block)
_LUA_LINE = re.compile(
    r"(?:--|local\s+(?:function\b|[A-Za-z_]\w*\s*(?:[,=<]|$))|\(?function\b[\w\s.:]*\("
    r"|end\b[\s)\],;]*$"
    r"|return\b|if\b.*\bthen\b|elseif\b|else$|for\b.*\bdo\b|while\b.*\bdo\b|repeat$|until\b"
    r"|do$|goto\s|break$|[})\]]|[A-Za-z_][\w.:]*(?:\[[^\]\n]{0,80}\])?\s*(?:=[^=]|\(|,)"
    r"|[A-Za-z_][\w.]*\s*\{)")
_STRONG = re.compile(r"^\s*(?:local\s+function\s+\w+\s*\(|local\s+[A-Za-z_]\w*\s*=|"
                     r"function\s+[\w.:]+\s*\(|end\s*[),]*\s*$)", re.MULTILINE)

MIN_LINES = 3
MIN_SHARE = 0.7
#: the share of Lua-like lines is taken over the first this many lines (a sample: a long
#: entry is judged by its head; the Python work per line does not grow with its length,
#: only C-speed searches read it all)
MAX_LINES_READ = 400


def _head_lines(text: str, n: int) -> list[str]:
    """``text.splitlines()[:n]`` without reading the rest of ``text``: a head of the text
    that holds ``n`` ``\\n`` (grown 4x at a time) is cut just after its ``n``-th ``\\n``
    (every ``\\n`` ends a line, so no line is cut)."""
    size = 16384
    head = text[:size]
    while head.count("\n") < n and size < len(text):
        size *= 4
        head = text[:size]
    parts = head.split("\n", n)  # n pieces and the rest of the head
    if len(parts) <= n:  # fewer than n line feeds: the head is the whole text
        return text.splitlines()[:n]
    return head[: len(head) - len(parts[n])].splitlines()[:n]


def looks_like_lua(text: str) -> bool:
    """True when most non-blank lines of ``text`` (of its first :data:`MAX_LINES_READ`)
    start like Lua statements and some line is unmistakably Lua (``local x =``,
    ``function f(``, ``end``)."""
    if not text or "\n" not in text.strip():
        return False
    total = 0
    code = 0
    in_long = False
    lines = _head_lines(text, MAX_LINES_READ)
    left = len(lines)
    for raw in lines:
        left -= 1
        line = raw.strip()
        if not line:
            continue
        total += 1
        # enough Lua already, even if every line left is not: the share cannot fall below
        # the bound (checked every 32 lines; the same answer as reading them all)
        if total & 31 == 0 and total >= MIN_LINES and code >= MIN_SHARE * (total + left):
            return _STRONG.search(text) is not None
        if in_long:  # inside a long string or comment: counts as code
            code += 1
            if "]]" in line or "]=" in line:
                in_long = False
            continue
        if _LUA_LINE.match(line):
            code += 1
            if ("[[" in line or "[=" in line) and "]]" not in line and "]=]" not in line:
                in_long = True
    if total < MIN_LINES or code < MIN_SHARE * total:
        return False
    return _STRONG.search(text) is not None


def is_lua_file_name(comment: str) -> bool:
    return comment.strip().lower().endswith(".lua")


# -- where the code a script loads comes from ----------------------------------------------
#
# A reader follows a ``load(x)`` back to where ``x`` was read: ``x = "return" .. source``,
# ``source = entry.content``, ``for _, entry in ipairs(found)``, ``found = getLoreBooks(id,
# name .. ".lua")``.  :func:`lore_flow` does the same in one pass over the tokens, scope-blind
# (a name stands for every variable of that name in the script: a deliberate
# over-approximation, as a quick reader's), through assignments, ``for ... in`` bindings and
# ``return`` (a function returns what its ``return`` statements name).  The entry names a
# lookup asks for are kept as patterns: literal parts and ``*`` for what is computed.

#: host functions whose result is lorebook text
LORE_READERS = frozenset({"getLoreBooks", "loadLoreBooks", "getLoreBooksMain",
                          "loadLoreBooksMain"})
LOADERS = frozenset({"load", "loadstring"})
WILD = "*"
#: bounds of one pass: assignments kept, names per right-hand side, name links in all,
#: tokens per right-hand side, tokens kept in all (values of names, call arguments),
#: lookups and loads kept, calls followed at once, values and arguments per statement or
#: call, literals of one table of names
MAX_ASSIGNMENTS = 50_000
MAX_DEPS = 64
MAX_EDGES = 200_000
MAX_RHS_TOKENS = 400
MAX_STORED = 200_000
MAX_SITES = 200
MAX_OPEN_CALLS = 16
MAX_PARTS = 8
MAX_TABLE = 200
_STATEMENT_WORDS = frozenset({"local", "if", "for", "while", "return", "end", "else",
                              "elseif", "until", "do", "repeat", "goto", "break", "then"})
_OPEN = frozenset({"(", "{", "["})
_CLOSE = frozenset({")", "}", "]"})
_WATCHED = LORE_READERS | LOADERS | {"pcall"}
#: the token texts :meth:`_FlowReader.statement` acts on (besides a function's name)
_STATEMENT_TOKENS = _WATCHED | {"function", "if", "do", "repeat", "end", "until", "=", "in",
                                "return"}
_FUNCTION = (NAME, "function")
#: the tokens before a field name (``t.x``, ``t:x``)
_QUALIFIERS = ((OP, "."), (OP, ":"))


@dataclass
class Lookup:
    """One ``getLoreBooks(id, name)`` whose result the script loads as code: its line and the
    name as pattern alternatives (each a tuple of literal parts and ``*``); no alternative
    means the name is not known."""

    line: int
    patterns: list[tuple[str, ...]] = field(default_factory=list)


@dataclass
class LoreFlow:
    """What :func:`lore_flow` found in one script."""

    lookups: list[Lookup] = field(default_factory=list)  # those that feed a load
    #: lines of ``load``/``loadstring`` calls whose code comes from a lorebook read
    lore_loads: set[int] = field(default_factory=set)


@dataclass
class _Rhs:
    """A right-hand side (or ``for ... in`` list, or ``return`` list) being read."""

    targets: list[str]
    deps: set[str] = field(default_factory=set)
    parts: list[list[tuple[int, str]]] = field(default_factory=lambda: [[]])  # per comma
    tokens: int = 0
    depth: int = 0
    last: tuple[int, str] = (0, "")


def lore_flow(code: str) -> LoreFlow:
    """Which ``load`` calls of ``code`` run text read from lorebook entries, and the entry
    names its lookups ask for (never raises; linear in the tokens).  A script that names no
    lorebook reader has neither (every answer starts from one): it is not tokenised."""
    if not any(reader in code for reader in LORE_READERS):
        return LoreFlow()
    return _FlowReader(code).run()


def pattern_matches(pattern: tuple[str, ...], name: str) -> bool:
    """Whether ``name`` fits ``pattern`` (literal parts in order, ``*`` for any text); plain
    string tests, no regular expression is built from module text."""
    pos = 0
    last = len(pattern) - 1
    for i, part in enumerate(pattern):
        if part == WILD:
            continue
        if i == 0:
            if not name.startswith(part):
                return False
            pos = len(part)
        elif i == last:
            return len(name) - len(part) >= pos and name.endswith(part)
        else:
            found = name.find(part, pos)
            if found < 0:
                return False
            pos = found + len(part)
    return pattern[-1] == WILD or pos == len(name) if pattern else name == ""


def show_pattern(pattern: tuple[str, ...]) -> str:
    return "".join(pattern)


class _FlowReader:
    def __init__(self, code: str) -> None:
        self.code = code
        self.lines = LineIndex(code)
        self.deps: dict[str, set[str]] = {}  # name -> names its values come from
        self.exprs: dict[str, list[list[tuple[int, str]]]] = {}  # name -> its values' parts
        self.assignments = 0
        self.edges = 0  # name links kept (MAX_EDGES)
        self.stored = 0  # tokens kept (MAX_STORED)
        self.recent: list[tuple[int, str]] = []  # the last tokens (kind, value)
        self.rhs: list[_Rhs] = []
        self.functions: list[str | None] = []  # the block stack: function name or None
        self.calls: list[tuple[str, int, int, list[list[tuple[int, str]]]]] = []
        self.flow = LoreFlow()
        self.load_names: list[tuple[int, set[str]]] = []
        #: (line, name argument, names its result goes to, inside a load's arguments)
        self.lookups: list[tuple[int, list[tuple[int, str]], list[str], bool]] = []

    def run(self) -> LoreFlow:
        recent = self.recent
        rhs = self.rhs  # these lists are changed in place, never replaced
        calls = self.calls
        code = self.code
        for kind, s, _e, value, b0, b1 in iter_tokens(code, []):
            if value is None:  # only a string with escapes has no value yet
                value = decode_lua_string(code, b0, b1)
            tok = (kind, value)
            if rhs:
                self.feed_rhs(tok)
            if calls:
                self.feed_calls(tok)
            # statement() acts only on these words (or on the name after ``function``)
            if value in _STATEMENT_TOKENS or (recent and recent[-1] == _FUNCTION):
                self.statement(tok, s)
            recent.append(tok)
            if len(recent) > 64:
                del recent[:32]
        while rhs:
            self.close_rhs()
        return self.finish()

    # -- statements -----------------------------------------------------------------------
    def statement(self, tok: tuple[int, str], s: int) -> None:
        """A token that may start or end something: a block, a function's name, an
        assignment, a ``for ... in`` list, a ``return`` list (see _STATEMENT_STEPS), and a
        call of a lorebook reader, a loader or pcall (its arguments are followed)."""
        kind, value = tok
        recent = self.recent
        prev = recent[-1] if recent else (0, "")
        step = _STATEMENT_STEPS.get(tok)
        if step is not None:
            step(self)
        elif prev == _FUNCTION and kind == NAME and value not in KEYWORDS and self.functions \
                and self.functions[-1] is None:
            self.functions[-1] = value  # function name(...)
        if kind == NAME and value in _WATCHED and prev not in _QUALIFIERS \
                and len(self.calls) < MAX_OPEN_CALLS:
            self.calls.append((value, self.lines.line(s), -1, [[]]))

    def open_function(self) -> None:
        """``function``: a block named by ``name = function`` (or by the name after it)."""
        recent = self.recent
        name = None
        if len(recent) >= 2 and recent[-1] == (OP, "=") and recent[-2][0] == NAME:
            name = recent[-2][1]
        self.functions.append(name)

    def open_block(self) -> None:
        """``if`` / ``do`` / ``repeat``: a block that is not a function."""
        self.functions.append("")

    def close_block(self) -> None:
        """``end`` / ``until``."""
        if self.functions:
            self.functions.pop()

    def assignment(self) -> None:
        """``=``: the names before it take the value after it."""
        if not self.rhs:
            targets = self.targets_before()
            if targets:
                self.rhs.append(_Rhs(targets))

    def for_in(self) -> None:
        """``for a, b in``: the names take what the list after ``in`` gives."""
        if not self.rhs:
            targets = self.targets_before(stop="for")
            if targets:
                self.rhs.append(_Rhs(targets))

    def returns(self) -> None:
        """``return``: the function being defined gives what the list after it names."""
        if not self.rhs:
            fn = next((f for f in reversed(self.functions) if f != ""), None)
            if fn:
                self.rhs.append(_Rhs([fn]))

    def targets_before(self, stop: str = "local") -> list[str]:
        """``a, b =`` / ``local a, b =`` / ``for a, b in``: the names; none for a field
        (``t.x =``, ``t[k] =``) or a table constructor's ``{ x = ...``."""
        names: list[str] = []
        i = len(self.recent) - 1
        while i >= 0:
            kind, value = self.recent[i]
            if kind != NAME or value in KEYWORDS:
                return []
            before = self.recent[i - 1] if i > 0 else (0, "")
            names.append(value)
            if before == (OP, ","):
                i -= 2
                continue
            if stop == "for":
                return names[::-1] if before == (NAME, "for") else []
            statement_start = before[0] in (0, NAME, NUM, STR) or before[1] in (")", "]", "}",
                                                                              ";")
            return names[::-1] if statement_start else []
        return names[::-1]

    # -- right-hand sides -------------------------------------------------------------------
    def feed_rhs(self, tok: tuple[int, str]) -> None:
        """One more token of the right-hand side being read (or the token that ends it)."""
        if not self.rhs:
            return
        r = self.rhs[-1]
        kind, value = tok
        if _ends_rhs(r, kind, value) or r.tokens >= MAX_RHS_TOKENS:
            self.close_rhs()
            return
        r.tokens += 1
        if kind == OP and value in _OPEN:
            r.depth += 1
        elif kind == OP and value in _CLOSE:
            r.depth -= 1
        if kind == NAME and value not in KEYWORDS and r.last not in _QUALIFIERS \
                and len(r.deps) < MAX_DEPS:
            r.deps.add(value)
        if r.depth == 0 and tok == (OP, ","):
            if len(r.parts) < MAX_PARTS:
                r.parts.append([])
        elif len(r.parts[-1]) < MAX_TABLE and self.stored < MAX_STORED:
            self.stored += 1
            r.parts[-1].append(tok)
        r.last = tok

    def close_rhs(self) -> None:
        r = self.rhs.pop()
        for i, t in enumerate(r.targets):
            if self.assignments >= MAX_ASSIGNMENTS or self.edges >= MAX_EDGES:
                return
            self.assignments += 1
            self.edges += len(r.deps)
            self.deps.setdefault(t, set()).update(r.deps)
            part = r.parts[i] if i < len(r.parts) and len(r.targets) > 1 else (
                r.parts[0] if len(r.parts) == 1 else [])
            values = self.exprs.setdefault(t, [])
            if len(values) < 16:
                values.append(part)

    # -- calls -------------------------------------------------------------------------------
    def feed_calls(self, tok: tuple[int, str]) -> None:
        """Arguments of the lorebook lookups, loads and pcalls being read."""
        kind, value = tok
        done = []
        for i, (name, line, depth, args) in enumerate(self.calls):
            if depth == -1:  # waiting for "("
                if tok == (OP, "("):
                    self.calls[i] = (name, line, 1, args)
                else:
                    done.append(i)
                continue
            if kind == OP and value in _OPEN:
                depth += 1
            elif kind == OP and value in _CLOSE:
                depth -= 1
                if depth == 0:
                    self.end_call(name, line, args)
                    done.append(i)
                    continue
            if depth == 1 and tok == (OP, ","):
                if len(args) < MAX_PARTS:
                    args.append([])
            elif len(args[-1]) < MAX_TABLE and self.stored < MAX_STORED:
                self.stored += 1
                args[-1].append(tok)
            self.calls[i] = (name, line, depth, args)
        for i in reversed(done):
            del self.calls[i]

    def end_call(self, name: str, line: int, args: list[list[tuple[int, str]]]) -> None:
        if name == "pcall" and args and args[0] and args[0][0][0] == NAME:
            name, args = args[0][0][1], args[1:]
        if name in ("getLoreBooks", "getLoreBooksMain") and len(args) > 1 \
                and len(self.lookups) < MAX_SITES:
            sink = list(self.rhs[-1].targets) if self.rhs else []
            in_load = any(c[0] in LOADERS and c[2] > 0 for c in self.calls)
            self.lookups.append((line, args[1], sink, in_load))
        elif name in LOADERS and args and len(self.load_names) < MAX_SITES:
            first = args[0]
            names = {v for i, (k, v) in enumerate(first) if k == NAME and v not in KEYWORDS
                     and not (i and first[i - 1] in ((OP, "."), (OP, ":")))}
            self.load_names.append((line, names))

    # -- the answers -------------------------------------------------------------------------
    def finish(self) -> LoreFlow:
        lore = self.lore_names()
        loaded: set[str] = set()  # the names the lore loads take their code from
        for line, names in self.load_names:
            if names & lore:
                self.flow.lore_loads.add(line)
                loaded |= names
        loaded = self.sources_of(loaded)
        for line, expr, sink, in_load in self.lookups:
            if in_load or loaded.intersection(sink):
                patterns = list(dict.fromkeys(self.patterns(expr, 0)))
                self.flow.lookups.append(Lookup(line, patterns))
        return self.flow

    def sources_of(self, names: set[str]) -> set[str]:
        """``names`` and every name their values come from (a worklist)."""
        out = set(names)
        work = list(names)
        while work:
            for d in self.deps.get(work.pop(), ()):
                if d not in out:
                    out.add(d)
                    work.append(d)
        return out

    def lore_names(self) -> set[str]:
        """Every name whose value may come from a lorebook read (a worklist over the
        assignments: linear in their number)."""
        users: dict[str, list[str]] = {}
        for target, deps in self.deps.items():
            for d in deps:
                users.setdefault(d, []).append(target)
        lore = set(LORE_READERS)
        work = list(LORE_READERS)
        while work:
            for t in users.get(work.pop(), ()):
                if t not in lore:
                    lore.add(t)
                    work.append(t)
        return lore

    def patterns(self, expr: list[tuple[int, str]], depth: int) -> list[tuple[str, ...]]:
        """The name ``expr`` may be: ``"a" .. x .. ".lua"`` -> ``a*.lua``; a name is read
        through its values (a constant, a concatenation, a table of names iterated over),
        at most three names deep and 16 alternatives."""
        operands: list[list[tuple[int, str]]] = [[]]
        for tok in expr:
            if tok == (OP, ".."):
                operands.append([])
            else:
                operands[-1].append(tok)
        out: list[tuple[str, ...]] = [()]
        for op in operands:
            if len(op) == 1 and op[0][0] == STR:
                choices: list[tuple[str, ...]] = [(op[0][1],)]
            elif len(op) == 1 and op[0][0] == NAME and depth < 3:
                choices = self.name_values(op[0][1], depth + 1) or [(WILD,)]
            else:
                choices = [(WILD,)]
            out = [a + c for a in out for c in choices][:16]
        result = [_squash(p) for p in out]
        return [] if all(p == (WILD,) for p in result) else result

    def name_values(self, name: str, depth: int) -> list[tuple[str, ...]]:
        found: list[tuple[str, ...]] = []
        for expr in self.exprs.get(name, []):
            table = _table_of_names(expr)
            if table is not None:
                found.extend((t,) for t in table)
            elif _iterates(expr):
                for inner in self.exprs.get(_iterates(expr) or "", []):
                    found.extend((t,) for t in _table_of_names(inner) or [])
            else:
                found.extend(self.patterns(expr, depth) or [(WILD,)])
        return found[:16]


#: the statement tokens :meth:`_FlowReader.statement` acts on, and the step each takes
_STATEMENT_STEPS = {
    (NAME, "function"): _FlowReader.open_function,
    (NAME, "if"): _FlowReader.open_block, (NAME, "do"): _FlowReader.open_block,
    (NAME, "repeat"): _FlowReader.open_block,
    (NAME, "end"): _FlowReader.close_block, (NAME, "until"): _FlowReader.close_block,
    (OP, "="): _FlowReader.assignment,
    (NAME, "in"): _FlowReader.for_in,
    (NAME, "return"): _FlowReader.returns,
}


def _ends_rhs(r: _Rhs, kind: int, value: str) -> bool:
    """Whether the token ends the right-hand side ``r``: a function value (its body holds
    statements of its own), and outside brackets a statement word, a closing ``;``/``)``
    ..., or a name or number right after a complete operand (a new statement)."""
    if kind == NAME and value == "function":
        return True
    if r.depth != 0:
        return False
    if kind == NAME and value in _STATEMENT_WORDS:
        return True
    if kind == OP:
        return value in (";", ")", "]", "}")
    if kind not in (NAME, NUM) or value in KEYWORDS:
        return False
    last_kind, last_value = r.last
    return last_kind in (NAME, NUM, STR) or (
        kind == NAME and last_kind == OP and last_value in (")", "]", "}"))


def _squash(pattern: tuple[str, ...]) -> tuple[str, ...]:
    """Join adjacent literals and adjacent ``*``."""
    out: list[str] = []
    for p in pattern:
        if out and (p == WILD) == (out[-1] == WILD):
            if p != WILD:
                out[-1] += p
            continue
        out.append(p)
    return tuple(out)


def _table_of_names(expr: list[tuple[int, str]]) -> list[str] | None:
    """``{"a.lua", "b.lua"}`` -> the strings; None for anything else."""
    if len(expr) < 2 or expr[0] != (OP, "{") or expr[-1] != (OP, "}"):
        return None
    out = []
    for kind, value in expr[1:-1]:
        if kind == STR:
            out.append(value)
        elif not (kind == OP and value in (",", ";")):
            return None
    return out


def _iterates(expr: list[tuple[int, str]]) -> str | None:
    """``ipairs(T)`` / ``pairs(T)`` (a ``for ... in`` list) -> ``T``."""
    if len(expr) == 4 and expr[0][0] == NAME and expr[0][1] in ("ipairs", "pairs") \
            and expr[1] == (OP, "(") and expr[2][0] == NAME and expr[3] == (OP, ")"):
        return expr[2][1]
    return None


@dataclass
class LoreReads:
    """What a module's lorebook lookups ask for, over the scripts that load lorebook code."""

    patterns: list[tuple[str, ...]] = field(default_factory=list)  # names resolved (or half)
    unresolved: list[str] = field(default_factory=list)  # evidence of lookups not resolved

    def matching(self, names: list[str]) -> list[int]:
        """Indices of ``names`` (entry names) that some pattern fits."""
        return [i for i, n in enumerate(names) if any(pattern_matches(p, n)
                                                      for p in self.patterns)]

    def foreign(self, names: list[str]) -> list[str]:
        """The patterns that fit none of ``names`` (entries kept elsewhere), as shown."""
        return sorted({show_pattern(p) for p in self.patterns
                       if not any(pattern_matches(p, n) for n in names)})


def lore_reads(flows: list[tuple[str, LoreFlow]]) -> LoreReads:
    """Fold the lookups of ``(where, flow)`` pairs; a lookup whose name is wholly computed (or
    may be, on one of its paths) is listed as unresolved."""
    out = LoreReads()
    seen: set[tuple[str, ...]] = set()
    for where, flow in flows:
        for lk in flow.lookups:
            if (not lk.patterns or (WILD,) in lk.patterns) and len(out.unresolved) < 20:
                out.unresolved.append(f"{where} line {lk.line}")
            for p in lk.patterns:
                if p != (WILD,) and p not in seen and len(seen) < MAX_SITES:
                    seen.add(p)
                    out.patterns.append(p)
    return out
