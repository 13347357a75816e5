"""Catastrophic-backtracking check for regex-script patterns, by PARSING them.

Patterns are data: they are parsed by this module's own recursive-descent
parser (JavaScript regex syntax, as RisuAI uses it) and never compiled or run.
Two shapes are reported:

* nested unbounded quantifiers whose inner repetition can trade characters with
  the outer one (``(a+)+``, ``(.*)*``, ``(\\w+\\s?)*``), also when the outer one is
  a bounded count of two or more (``(.*a){12}``: the backtracking grows as the text's
  length to that power); an inner count of variable width counts as unbounded when its
  choices, repeated by the outer count, pass 2**24 (``(a{0,16}){16}``, not ``(a?){20}``);
  ``(a+b)*`` is not reported because the mandatory ``b`` cannot be matched by ``a+``;
* an unbounded quantifier over an alternation whose branches can start alike, when it splits
  a text two ways (:mod:`regexambig`: ``(a|a)*``, ``(\\w|\\d)+``; not ``(ab|a)*``, ``(a|b)*``).

Character sets are sorted lists of code-point intervals, so ``[^<]``, ``.``,
``\\S`` and ``[가-힣]`` are exact and cost a few numbers each, whatever the
pattern holds.  The flags ``s`` (dot matches newlines) and ``i`` (ignore case,
ASCII letters) are honoured.  The work is bounded: a pattern too large or too convoluted
to check raises :class:`RegexTooLarge` ("not checked", RA205); every loop charges one
:class:`Budget` (a step per character read, node visited or interval touched), at most
``steps_allowed(len(pattern))``: 200,000 plus 20 a character, at most 2,200,000.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from risutools.analysis.regexambig import ambiguous_repetition
from risutools.analysis.regexflags import parse_flags as parse_flags

_BIG = 16  # a {n,m} repetition with m above this counts as unbounded
#: a body whose unbounded repetition trades characters with what follows it costs about
#: (text length) ** (iterations) when repeated this many times or more (``(.*a){12}``)
_REPEATED = 2
_MAX_PATTERN = 100_000
_MAX_DEPTH = 200
#: the characters that make a pattern more than a plain string
_META = re.compile(r"[\\^$.|?*+()\[\]{}]")
#: steps allowed for one pattern: a base plus a few per character (see steps_allowed)
BASE_STEPS = 200_000
STEPS_PER_CHAR = 20
_MAX_CP = 0x10FFFF

Ranges = tuple[tuple[int, int], ...]


def _normalize(pairs: list[tuple[int, int]]) -> Ranges:
    pairs.sort()
    out: list[tuple[int, int]] = []
    for lo, hi in pairs:
        if out and lo <= out[-1][1] + 1:
            if hi > out[-1][1]:
                out[-1] = (out[-1][0], hi)
        else:
            out.append((lo, hi))
    return tuple(out)


class CharSet:
    """A set of code points: sorted, disjoint, inclusive intervals (never changed once
    made).  Plain classes here, not dataclasses: they cost nothing to define at import."""

    __slots__ = ("ranges",)

    def __init__(self, ranges: Ranges = ()) -> None:
        self.ranges = ranges

    @staticmethod
    def of(*chars: str) -> CharSet:
        return CharSet(_normalize([(ord(c), ord(c)) for c in chars]))

    @staticmethod
    def span(lo: int, hi: int) -> CharSet:
        return CharSet(((lo, hi),))

    def __or__(self, o: CharSet) -> CharSet:
        if not o.ranges:
            return self
        if not self.ranges:
            return o
        return CharSet(_normalize(list(self.ranges) + list(o.ranges)))

    def intersects(self, o: CharSet) -> bool:
        a, b = self.ranges, o.ranges
        i = j = 0
        while i < len(a) and j < len(b):
            if a[i][1] < b[j][0]:
                i += 1
            elif b[j][1] < a[i][0]:
                j += 1
            else:
                return True
        return False

    def complement(self) -> CharSet:
        out: list[tuple[int, int]] = []
        nxt = 0
        for lo, hi in self.ranges:
            if lo > nxt:
                out.append((nxt, lo - 1))
            nxt = hi + 1
        if nxt <= _MAX_CP:
            out.append((nxt, _MAX_CP))
        return CharSet(tuple(out))

    def single(self) -> int | None:
        """The code point when the set holds exactly one."""
        if len(self.ranges) == 1 and self.ranges[0][0] == self.ranges[0][1]:
            return self.ranges[0][0]
        return None

    def fold_case(self) -> CharSet:
        """The set plus the other case of every ASCII letter in it (flag ``i``)."""
        extra: list[tuple[int, int]] = []
        for lo, hi in self.ranges:
            for a, z, shift in ((65, 90, 32), (97, 122, -32)):
                s, e = max(lo, a), min(hi, z)
                if s <= e:
                    extra.append((s + shift, e + shift))
        return self | CharSet(_normalize(extra)) if extra else self


EMPTY = CharSet()
ALL = CharSet(((0, _MAX_CP),))
_DIGITS = CharSet.span(48, 57)
_WORD = CharSet(((48, 57), (65, 90), (95, 95), (97, 122)))
# JavaScript \s: WhiteSpace and LineTerminator
_SPACE = CharSet(_normalize([(9, 13), (32, 32), (0xA0, 0xA0), (0x1680, 0x1680),
                             (0x2000, 0x200A), (0x2028, 0x2029), (0x202F, 0x202F),
                             (0x205F, 0x205F), (0x3000, 0x3000), (0xFEFF, 0xFEFF)]))
_LINE_ENDS = CharSet.of("\n", "\r", "\u2028", "\u2029")


class Node:
    """A node of a parsed pattern."""

    __slots__ = ("cs", "hi", "items", "kind", "lo")

    def __init__(self, kind: str, cs: CharSet = EMPTY, items: list[Node] | None = None,
                 lo: int = 0, hi: int | None = None) -> None:
        self.kind = kind  # char | seq | alt | group | look | rep | empty
        self.cs = cs
        self.items: list[Node] = items if items is not None else []
        self.lo = lo
        self.hi = hi  # None = unbounded


class RegexParseError(Exception):
    def __init__(self, offset: int, why: str) -> None:
        super().__init__(why)
        self.offset = offset
        self.why = why


class RegexTooLarge(RegexParseError):
    """A pattern past a bound of the check (length, nesting, steps): not checked (RA205)."""


def steps_allowed(length: int) -> int:
    """The step budget of a pattern of ``length`` characters (parse and check together)."""
    return BASE_STEPS + STEPS_PER_CHAR * min(length, _MAX_PATTERN)


class Budget:
    """The steps left for one pattern; every loop of the parser and checker charges it."""

    __slots__ = ("left", "used")

    def __init__(self, steps: int) -> None:
        self.left = steps
        self.used = 0

    def charge(self, steps: int = 1) -> None:
        self.left -= steps
        self.used += steps
        if self.left < 0:
            raise RegexTooLarge(0, "pattern too complex to check")


class _Parser:
    def __init__(self, pattern: str, unicode: bool, dotall: bool, budget: Budget) -> None:
        self.p = pattern
        self.i = 0
        self.n = len(pattern)
        self.depth = 0
        self.unicode = unicode
        self.dot = ALL if dotall else _LINE_ENDS.complement()
        self.budget = budget
        self._found: dict[str, tuple[int, int]] = {}  # char -> (searched from, found at)

    def find(self, ch: str, start: int) -> int:
        """``self.p.find(ch, start)``, remembered: the parser only moves forward, so
        every search for one character costs the pattern's length in all."""
        self.budget.charge()
        got = self._found.get(ch)
        if got is not None and got[0] <= start and (start <= got[1] or got[1] < 0):
            return got[1]
        j = self.p.find(ch, start)
        self._found[ch] = (start, j)
        return j

    def union(self, a: CharSet, b: CharSet) -> CharSet:
        self.budget.charge(1 + len(a.ranges) + len(b.ranges))
        return a | b

    # -- character sets ----------------------------------------------------------
    def cls_escape(self, c: str) -> CharSet | None:
        if c == "d":
            return _DIGITS
        if c == "D":
            return _DIGITS.complement()
        if c == "w":
            return _WORD
        if c == "W":
            return _WORD.complement()
        if c == "s":
            return _SPACE
        if c == "S":
            return _SPACE.complement()
        return None

    def _hex(self, count: int) -> int | None:
        h = self.p[self.i : self.i + count]
        if len(h) == count and all(ch in "0123456789abcdefABCDEF" for ch in h):
            self.i += count
            return int(h, 16)
        return None

    def unicode_escape(self) -> int | None:
        """After ``\\u``: ``{hex}`` (at most ``U+10FFFF``) or four hex digits: the code point,
        or None (then the escape is the letter ``u``)."""
        if self.p.startswith("{", self.i):
            j = self.p.find("}", self.i, self.i + 10)
            body = self.p[self.i + 1 : j] if j > 0 else ""
            if body and all(ch in "0123456789abcdefABCDEF" for ch in body) \
                    and int(body, 16) <= _MAX_CP:
                self.i = j + 1
                return int(body, 16)
        return self._hex(4)

    def escape_char(self) -> CharSet:
        """After a backslash (self.i at the escaped char): the set it stands for."""
        if self.i >= self.n:
            raise RegexParseError(self.i, "pattern ends with a backslash")
        c = self.p[self.i]
        self.i += 1
        cs = self.cls_escape(c)
        if cs is not None:
            return cs
        simple = {"n": "\n", "r": "\r", "t": "\t", "f": "\f", "v": "\v", "0": "\0"}
        if c in simple:
            return CharSet.of(simple[c])
        cp = self._hex(2) if c == "x" else self.unicode_escape() if c == "u" else None
        if cp is not None:
            return CharSet.span(cp, cp)
        if c in "pP" and self.p.startswith("{", self.i):
            j = self.find("}", self.i)
            if j > 0:
                self.i = j + 1
            return ALL  # a Unicode property: assume it overlaps everything
        if c == "c" and self.i < self.n and self.p[self.i].isalpha():
            cp = ord(self.p[self.i]) % 32
            self.i += 1
            return CharSet.span(cp, cp)
        return CharSet.of(c)

    def parse_class(self) -> CharSet:
        # self.i is just after "["
        negate = False
        if self.i < self.n and self.p[self.i] == "^":
            negate = True
            self.i += 1
        acc = EMPTY
        pairs: list[tuple[int, int]] = []
        while True:
            self.budget.charge()
            if self.i >= self.n:
                raise RegexParseError(self.i, "unterminated character class")
            c = self.p[self.i]
            if c == "]":
                self.i += 1
                break
            self.i += 1
            if c == "\\":
                if self.i < self.n and self.p[self.i] == "b":
                    self.i += 1
                    lo_set = CharSet.of("\b")
                else:
                    lo_set = self.escape_char()
            else:
                lo_set = CharSet.of(c)
            lo_c = lo_set.single()
            # a range a-z
            if lo_c is not None and self.i + 1 < self.n and self.p[self.i] == "-" \
                    and self.p[self.i + 1] != "]":
                extra = self.class_range(lo_c, pairs)
                if extra is not None:
                    acc = self.union(acc, extra)
                continue
            if lo_c is not None:
                pairs.append((lo_c, lo_c))
            else:
                acc = self.union(acc, lo_set)
        self.budget.charge(len(pairs))
        cs = self.union(acc, CharSet(_normalize(pairs)))
        if negate:
            self.budget.charge(len(cs.ranges))
        return cs.complement() if negate else cs

    def class_range(self, lo_c: int, pairs: list[tuple[int, int]]) -> CharSet | None:
        """After ``a`` in a class, at its ``-``: the range ``a-z`` (added to ``pairs``); for
        ``[a-\\d]``, ``a`` and ``-`` (added) and the class (returned)."""
        self.i += 1
        hc = self.p[self.i]
        self.i += 1
        hi_set = self.escape_char() if hc == "\\" else CharSet.of(hc)
        hi_c = hi_set.single()
        if hi_c is None:
            pairs.append((lo_c, lo_c))
            pairs.append((45, 45))
            return hi_set
        if hi_c < lo_c:
            raise RegexParseError(self.i, "character class range out of order")
        pairs.append((lo_c, hi_c))
        return None

    # -- structure ---------------------------------------------------------------
    def parse_alt(self) -> Node:
        self.depth += 1
        if self.depth > _MAX_DEPTH:
            raise RegexTooLarge(self.i, "groups nested too deeply")
        branches = [self.parse_seq()]
        while self.i < self.n and self.p[self.i] == "|":
            self.budget.charge()
            self.i += 1
            branches.append(self.parse_seq())
        self.depth -= 1
        if len(branches) == 1:
            return branches[0]
        return Node("alt", items=branches)

    def parse_seq(self) -> Node:
        items: list[Node] = []
        while self.i < self.n and self.p[self.i] not in "|)":
            self.budget.charge()
            if self.p[self.i] == "(":  # a group, read from here: one frame per level less
                self.i += 1
                atom: Node | None = self.parse_group()
            else:
                atom = self.parse_atom()
            if atom is None:
                continue
            atom = self.parse_quantifiers(atom)
            items.append(atom)
        return Node("seq", items=items)

    def parse_quantifiers(self, atom: Node) -> Node:
        while self.i < self.n:
            self.budget.charge()
            c = self.p[self.i]
            if c in "*+?":
                self.i += 1
                lo, hi = {"*": (0, None), "+": (1, None), "?": (0, 1)}[c]
            elif c == "{":
                q = self._brace_quant()
                if q is None:
                    return atom
                lo, hi = q
            else:
                return atom
            if atom.kind in ("anchor",):
                raise RegexParseError(self.i, "nothing to repeat")
            if self.i < self.n and self.p[self.i] == "?":
                self.i += 1  # lazy: same backtracking risk
            atom = Node("rep", items=[atom], lo=lo, hi=hi)
            if self.i < self.n and (self.p[self.i] in "*+?" or (
                    self.p[self.i] == "{" and self._brace_quant(peek=True) is not None)):
                raise RegexParseError(self.i, "nothing to repeat (a quantifier after a "
                                      "quantifier)")
        return atom

    def _brace_quant(self, peek: bool = False) -> tuple[int, int | None] | None:
        # a quantifier body is at most 20 characters: look no further than that
        self.budget.charge()
        j = self.p.find("}", self.i, self.i + 22)
        if j < 0:
            return None
        body = self.p[self.i + 1 : j]
        lo_s, comma, hi_s = body.partition(",")
        if not lo_s.isdigit() or (hi_s and not hi_s.isdigit()) or len(body) > 20:
            return None
        lo = int(lo_s)
        hi: int | None = int(hi_s) if hi_s else (None if comma else lo)
        if hi is not None and hi < lo:
            raise RegexParseError(self.i, "numbers out of order in a {} quantifier")
        if not peek:
            self.i = j + 1
        return lo, hi

    def parse_atom(self) -> Node | None:
        """One atom that is not a group (see :meth:`parse_seq`)."""
        c = self.p[self.i]
        self.i += 1
        if c == "[":
            return Node("char", cs=self.parse_class())
        if c == "\\":
            return self.parse_escape_atom()
        if c == ".":
            return Node("char", cs=self.dot)
        if c in "^$":
            return Node("anchor")
        if c in "*+?":
            raise RegexParseError(self.i - 1, "nothing to repeat")
        if c == "{" and self.unicode:
            raise RegexParseError(self.i - 1, "lone brace in a unicode pattern")
        return Node("char", cs=CharSet.of(c))

    def parse_group(self) -> Node:
        """After ``(``: a group, a lookaround or a named group, up to its ``)``."""
        kind = "group"
        if self.p.startswith("?", self.i):
            rest = self.p[self.i : self.i + 3]
            if rest.startswith("?:"):
                self.i += 2
            elif rest.startswith(("?=", "?!")):
                self.i += 2
                kind = "look"
            elif rest.startswith(("?<=", "?<!")):
                self.i += 3
                kind = "look"
            elif rest.startswith("?<"):
                j = self.find(">", self.i)
                if j < 0:
                    raise RegexParseError(self.i, "unterminated group name")
                self.i = j + 1
            else:
                raise RegexParseError(self.i, "unknown group syntax")
        inner = self.parse_alt()
        if self.i >= self.n or self.p[self.i] != ")":
            raise RegexParseError(self.i, "missing closing parenthesis")
        self.i += 1
        return Node(kind, items=[inner])

    def parse_escape_atom(self) -> Node:
        """After a backslash outside a class: a word boundary, a back-reference (numbered
        or ``\\k<name>``), or an escaped character or class."""
        p, i = self.p, self.i
        if i < self.n and p[i] in "bB":
            self.i += 1
            return Node("anchor")
        if i < self.n and p[i] in "123456789":
            while self.i < self.n and self.p[self.i].isdigit():
                self.budget.charge()
                self.i += 1
            return Node("backref")
        if i < self.n and p[i] == "k" and p.startswith("<", i + 1):
            j = self.find(">", i)
            self.i = (j + 1) if j > 0 else self.n
            return Node("backref")
        return Node("char", cs=self.escape_char())


def parse_pattern(pattern: str, flags: str = "", budget: Budget | None = None) -> Node:
    """Parse a JavaScript regex pattern into our AST (RegexParseError on bad syntax)."""
    if len(pattern) > _MAX_PATTERN:
        raise RegexTooLarge(0, f"pattern longer than {_MAX_PATTERN} characters; not checked")
    if budget is None:
        budget = Budget(steps_allowed(len(pattern)))
    p = _Parser(pattern, "u" in flags or "v" in flags, "s" in flags, budget)
    node = p.parse_alt()
    if p.i < p.n:
        raise RegexParseError(p.i, "unmatched closing parenthesis")
    return node


# -- analysis -----------------------------------------------------------------------

def _unbounded(node: Node) -> bool:
    return node.kind == "rep" and (node.hi is None or node.hi > _BIG)


#: a count of variable width repeated under another count can split a text in about
#: (width choices) ** (outer count) ways: past this many, it counts as unbounded there
_MANY_WAYS = 1 << 24


def _trades_under(node: Node, outer: int | None, outer_lo: int = 0) -> bool:
    """Whether repetition ``node`` can trade characters like an unbounded one inside a
    repetition of ``outer`` iterations at most (None: unbounded) and ``outer_lo`` at least:
    it is unbounded, or its width varies (``a{0,16}``, ``\\w{1,16}``, ``a?``) and its
    choices, repeated, pass :data:`_MANY_WAYS` (``(a{0,16}){16}``: 17 ** 16; ``(a?){3}``: 8,
    not).  The iterations up to the minimum may match nothing (JavaScript cuts an empty
    iteration only past it), so there every width is a choice, the empty one too:
    ``(a?){30}`` splits 30 characters or fewer in 2 ** 30 ways."""
    if _unbounded(node):
        return True
    if node.kind != "rep" or node.hi is None or node.hi <= node.lo:
        return False
    choices = node.hi - node.lo + 1
    if choices ** min(outer_lo, _MAX_EXPONENT) >= _MANY_WAYS:
        return True  # (the iterations up to the minimum, where an empty one is kept)
    if outer is None or outer > _BIG:
        # as many iterations as the text allows: two widths that consume something are
        # enough (``(a{1,2})*`` splits n characters in about 1.6 ** n ways, ``(a{2,3})*`` in
        # 1.3 ** n); ``a?`` has one (an empty iteration is cut)
        return node.hi > max(node.lo, 1)
    return bool(choices ** outer >= _MANY_WAYS)


#: steps the ambiguity reading of one repetition may take (at most half the budget left)
_AMBIGUITY_STEPS = 200_000
#: the exponent past which a count of choices is not raised further (already past
#: :data:`_MANY_WAYS` for two choices)
_MAX_EXPONENT = 64


def _optional(node: Node) -> bool:
    """A bounded count of variable width (``a?``, ``a{0,2}``, ``\\w{1,8}``): a choice."""
    return node.kind == "rep" and node.hi is not None and node.lo < node.hi


#: the shapes of a repetition that matches one text two ways (one reported a pattern)
_TWO_WAYS = frozenset({"overlapping-alternation", "ambiguous-repetition"})


def _repeated(node: Node) -> bool:
    """A repetition of at least ``_REPEATED`` iterations (``*``, ``+``, ``{2}``, ``{3,5}``)."""
    return node.kind == "rep" and (node.hi is None or node.hi >= _REPEATED)


def _flatten(node: Node, budget: Budget) -> list[Node]:
    """The top-level sequence of ``node``, looking through single-branch groups."""
    out: list[Node] = []
    todo = [node]
    while todo:  # depth-first, left to right
        budget.charge()
        x = todo.pop()
        if x.kind == "group":
            todo.append(x.items[0])
        elif x.kind == "seq":
            for it in reversed(x.items):
                budget.charge()
                if it.kind == "group" and it.items[0].kind != "alt":
                    todo.append(it)
                else:
                    todo.append(Node("keep", items=[it]))
        elif x.kind == "keep":
            out.append(x.items[0])
        else:
            out.append(x)
    return out


def _walk(node: Node, budget: Budget) -> list[Node]:
    """Every node under ``node`` (itself first; a parent always before its children)."""
    out = [node]
    stack = list(node.items)
    while stack:
        budget.charge()
        x = stack.pop()
        out.append(x)
        stack.extend(x.items)
    return out


class BacktrackRisk(NamedTuple):
    """A catastrophic-backtracking shape found in a pattern."""

    shape: str  # "nested-quantifier" | "overlapping-alternation"
    offset_hint: int = 0


class _Checker:
    """Set computations over one parsed pattern, memoised per node, under the budget."""

    def __init__(self, ignore_case: bool, budget: Budget) -> None:
        self.fold = ignore_case
        self.budget = budget
        self.first_memo: dict[int, tuple[CharSet, bool]] = {}
        self.chars_memo: dict[int, CharSet] = {}
        self.inner_memo: dict[tuple[int, int | None, int], CharSet | None] = {}
        self.overlap_memo: dict[int, bool] = {}
        self.ambiguous_memo: dict[int, bool] = {}
        self.optional_memo: dict[int, bool] = {}

    def union(self, a: CharSet, b: CharSet) -> CharSet:
        self.budget.charge(1 + len(a.ranges) + len(b.ranges))
        return a | b

    def intersects(self, a: CharSet, b: CharSet) -> bool:
        self.budget.charge(1 + len(a.ranges) + len(b.ranges))
        return a.intersects(b)

    def leaf(self, node: Node) -> CharSet:
        if node.kind == "backref":
            return ALL
        if self.fold:
            self.budget.charge(1 + 2 * len(node.cs.ranges))
            return node.cs.fold_case()
        return node.cs

    def first(self, node: Node) -> tuple[CharSet, bool]:
        """Characters that can start a match of ``node``, and whether it can match empty."""
        key = id(node)
        got = self.first_memo.get(key)
        if got is not None:
            return got
        self.budget.charge()
        k = node.kind
        if k == "char":
            res = (self.leaf(node), False)
        elif k in ("anchor", "look", "empty"):
            res = (EMPTY, True)
        elif k == "backref":
            res = (ALL, True)
        elif k == "rep":
            cs, nullable = self.first(node.items[0])
            res = (cs, nullable or node.lo == 0)
        elif k == "group":
            res = self.first(node.items[0])
        elif k == "alt":
            acc = EMPTY
            any_null = False
            for br in node.items:
                cs, nb = self.first(br)
                acc = self.union(acc, cs)
                any_null = any_null or nb
            res = (acc, any_null)
        else:
            res = self.first_seq(node.items)
        self.first_memo[key] = res
        return res

    def first_seq(self, items: list[Node]) -> tuple[CharSet, bool]:
        acc = EMPTY
        for it in items:
            cs, nullable = self.first(it)
            acc = self.union(acc, cs)
            if not nullable:
                return acc, False
        return acc, True

    def chars(self, node: Node) -> CharSet:
        """Every character ``node`` can consume."""
        key = id(node)
        got = self.chars_memo.get(key)
        if got is not None:
            return got
        self.budget.charge()
        if node.kind in ("char", "backref"):
            res = self.leaf(node)
        elif node.kind == "look":
            res = EMPTY
        else:
            res = EMPTY
            for it in node.items:
                res = self.union(res, self.chars(it))
        self.chars_memo[key] = res
        return res

    def inner_unbounded_chars(self, node: Node, outer: int | None = None,
                              outer_lo: int = 0) -> CharSet | None:
        """What the repetitions inside ``node`` (itself included) that trade characters
        inside a repetition of ``outer_lo`` to ``outer`` iterations (:func:`_trades_under`)
        can consume; None when there are none.  A repetition nested in a count is repeated
        by every count around it: ``(?:(?:a{0,3}){8}){8}`` is ``(?:a{0,3}){64}``."""
        key = (id(node), outer, outer_lo)
        if key in self.inner_memo:
            return self.inner_memo[key]
        self.budget.charge()
        acc: CharSet | None = self.chars(node.items[0]) if _trades_under(
            node, outer, outer_lo) else None
        if node.kind == "rep":  # (what it holds repeats outer times its own count)
            outer = None if outer is None or node.hi is None else min(outer * node.hi, _BIG + 1)
            outer_lo = min(outer_lo * node.lo, _MAX_EXPONENT)
        for it in node.items:
            sub = self.inner_unbounded_chars(it, outer, outer_lo)
            if sub is not None:
                acc = sub if acc is None else self.union(acc, sub)
        self.inner_memo[key] = acc
        return acc

    def nested(self, node: Node) -> bool:
        """An unbounded ``node`` whose body repeats something that can trade characters."""
        body = node.items[0]
        items = _flatten(body, self.budget)
        body_first, _ = self.first(body)
        # follow[i]: what can come right after items[i] inside one iteration (or start
        # the next iteration when the rest of the body can match empty)
        follow: list[CharSet] = [EMPTY] * len(items)
        acc = body_first
        for idx in range(len(items) - 1, -1, -1):
            follow[idx] = acc
            cs, nb = self.first(items[idx])
            acc = self.union(acc, cs) if nb else cs
        body_chars: CharSet | None = None
        for idx, it in enumerate(items):
            self.budget.charge()
            inner = self.inner_unbounded_chars(it, node.hi, node.lo)
            if inner is None:
                continue
            if _trades_under(it, node.hi, node.lo):
                if self.intersects(self.chars(it.items[0]), follow[idx]):
                    return True
            else:
                if body_chars is None:
                    body_chars = self.chars(body)
                if self.intersects(inner, body_chars):
                    return True
        return False

    def alt_overlaps(self, alt: Node) -> bool:
        """Whether two branches of ``alt`` can start with the same character."""
        spans: list[tuple[int, int]] = []
        for br in alt.items:
            spans.extend(self.first(br)[0].ranges)
        self.budget.charge(1 + len(spans) * max(1, len(spans).bit_length()))
        spans.sort()
        reach = -1
        for lo, hi in spans:
            if lo <= reach:  # ranges of one branch are disjoint: two branches meet
                return True
            reach = max(reach, hi)
        return False

    def compute_overlaps(self, nodes: list[Node]) -> None:
        """For every node: does an alternation at or under it have overlapping branches?
        (``nodes`` lists parents before children; one pass from the leaves up.)"""
        memo, optional = self.overlap_memo, self.optional_memo
        for x in reversed(nodes):
            self.budget.charge(1 + 2 * len(x.items))
            memo[id(x)] = (x.kind == "alt" and self.alt_overlaps(x)) or any(
                memo.get(id(it), False) for it in x.items)
            optional[id(x)] = _optional(x) or any(optional.get(id(it), False)
                                                  for it in x.items)

    def overlapping(self, body: Node) -> bool:
        """An alternation under the quantifier whose branches can start alike."""
        return self.overlap_memo.get(id(body), False)

    def two_ways(self, node: Node) -> str | None:
        """The shape of the unbounded repetition ``node`` when it can match one text two
        ways (:meth:`ambiguous`), asked when its body holds a choice: an alternation whose
        branches start alike (``(a|a)*``), or a bounded count of variable width
        (``(a?a?)+``, ``(\\s?\\n?)+``, ``(aa?)*``: a sequence of optionals splits ``a``s
        between its parts or its iterations); None when it cannot, or holds no choice."""
        body = node.items[0]
        if self.overlap_memo.get(id(body), False):
            return "overlapping-alternation" if self.ambiguous(node) else None
        if self.optional_memo.get(id(body), False):
            return "ambiguous-repetition" if self.ambiguous(node) else None
        return None

    def ambiguous(self, node: Node) -> bool:
        """Whether the unbounded repetition ``node`` can match one text two ways
        (:mod:`regexambig`; True when not told within its steps, which are charged)."""
        got = self.ambiguous_memo.get(id(node))
        if got is None:
            limit = min(_AMBIGUITY_STEPS, self.budget.left // 2)
            answer, used = ambiguous_repetition(node.items[0], self.leaf, limit)
            self.budget.charge(used)
            got = self.ambiguous_memo[id(node)] = answer is not False
        return got


def backtracking_risks(pattern: str, flags: str = "", budget: Budget | None = None
                       ) -> list[BacktrackRisk]:
    """The catastrophic-backtracking shapes found in ``pattern`` (parse errors raise).

    Parsing and checking together take at most ``steps_allowed(len(pattern))`` steps (or
    what ``budget``, the caller's, holds: its ``used`` says what the check took); past that
    the pattern is "not checked" (RegexParseError)."""
    if len(pattern) <= _MAX_PATTERN and _META.search(pattern) is None:
        return []  # (a plain string parses into a sequence, which repeats nothing)
    return checked_risks(pattern, flags, budget)


def checked_risks(pattern: str, flags: str = "", budget: Budget | None = None
                  ) -> list[BacktrackRisk]:
    """:func:`backtracking_risks` by parsing and checking, whatever the pattern."""
    budget = budget if budget is not None else Budget(steps_allowed(len(pattern)))
    root = parse_pattern(pattern, flags, budget)
    checker = _Checker("i" in flags, budget)
    nodes = _walk(root, budget)
    if any(_unbounded(x) for x in nodes):
        checker.compute_overlaps(nodes)
    seen: set[str] = set()
    for node in nodes:
        budget.charge()
        if not _repeated(node):
            continue
        if "nested-quantifier" not in seen and checker.nested(node):
            seen.add("nested-quantifier")
        if not seen & _TWO_WAYS and _unbounded(node) and (shape := checker.two_ways(node)):
            seen.add(shape)
        if len(seen) == 2:
            break
    return [BacktrackRisk(shape) for shape in sorted(seen)]
