"""Catastrophic-backtracking check for regex-script patterns, by PARSING them.

Patterns are data: they are parsed by this module's own recursive-descent
parser (JavaScript regex syntax, as RisuAI uses it) and never compiled or run.
Two shapes are reported:

* nested unbounded quantifiers whose inner repetition can trade characters with
  the outer one (``(a+)+``, ``(.*)*``, ``(\\w+\\s?)*``); ``(a+b)*`` is not
  reported because the mandatory ``b`` cannot be matched by ``a+``;
* an unbounded quantifier over an alternation whose branches can start with
  the same character (``(a|a)*``, ``(a|ab)*``, ``(\\w|\\d)+``).

Character sets are compared over a finite universe (ASCII plus every literal
character of the pattern, plus an "anything else" bit), which is exact for
the questions asked here.
"""

from __future__ import annotations

from dataclasses import dataclass, field

_BIG = 16  # a {n,m} repetition with m above this counts as unbounded
_MAX_PATTERN = 100_000
_MAX_DEPTH = 200


@dataclass(frozen=True)
class CharSet:
    chars: frozenset[str]
    other: bool = False  # also matches characters outside the universe

    def __or__(self, o: CharSet) -> CharSet:
        return CharSet(self.chars | o.chars, self.other or o.other)

    def intersects(self, o: CharSet) -> bool:
        return bool(self.chars & o.chars) or (self.other and o.other)


EMPTY = CharSet(frozenset())


@dataclass
class Node:
    kind: str  # char | seq | alt | group | look | rep | empty
    cs: CharSet = EMPTY
    items: list[Node] = field(default_factory=list)
    lo: int = 0
    hi: int | None = None  # None = unbounded


class RegexParseError(Exception):
    def __init__(self, offset: int, why: str) -> None:
        super().__init__(why)
        self.offset = offset
        self.why = why


_ASCII = frozenset(chr(i) for i in range(128))
_DIGITS = frozenset("0123456789")
_WORD = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
_SPACE_ASCII = frozenset(" \t\n\r\f\v")


class _Parser:
    def __init__(self, pattern: str, unicode: bool) -> None:
        self.p = pattern
        self.i = 0
        self.n = len(pattern)
        self.depth = 0
        self.universe = _ASCII | frozenset(pattern) | frozenset("\u00a0\u3000")
        self.unicode = unicode

    # -- character sets ----------------------------------------------------------
    def lit(self, c: str) -> CharSet:
        return CharSet(frozenset((c,)))

    def any_but_newline(self) -> CharSet:
        return CharSet(self.universe - frozenset("\n\r\u2028\u2029"), True)

    def neg(self, cs: CharSet) -> CharSet:
        return CharSet(self.universe - cs.chars, not cs.other)

    def cls_escape(self, c: str) -> CharSet | None:
        if c == "d":
            return CharSet(_DIGITS)
        if c == "D":
            return self.neg(CharSet(_DIGITS))
        if c == "w":
            return CharSet(_WORD)
        if c == "W":
            return self.neg(CharSet(_WORD))
        if c == "s":
            return CharSet(_SPACE_ASCII | frozenset("\u00a0\u3000\ufeff"), True)
        if c == "S":
            return CharSet(self.universe - _SPACE_ASCII - frozenset("\u00a0\u3000\ufeff"), True)
        return None

    def escape_char(self) -> CharSet:
        """After a backslash (self.i at the escaped char): a one-char set."""
        if self.i >= self.n:
            raise RegexParseError(self.i, "pattern ends with a backslash")
        c = self.p[self.i]
        self.i += 1
        cs = self.cls_escape(c)
        if cs is not None:
            return cs
        simple = {"n": "\n", "r": "\r", "t": "\t", "f": "\f", "v": "\v", "0": "\0"}
        if c in simple:
            return self.lit(simple[c])
        if c == "x" and self.i + 2 <= self.n:
            h = self.p[self.i : self.i + 2]
            if all(ch in "0123456789abcdefABCDEF" for ch in h):
                self.i += 2
                return self.lit(chr(int(h, 16)))
        if c == "u":
            if self.p.startswith("{", self.i):
                j = self.p.find("}", self.i)
                if j > 0:
                    self.i = j + 1
                    return CharSet(frozenset(), True)
            h = self.p[self.i : self.i + 4]
            if len(h) == 4 and all(ch in "0123456789abcdefABCDEF" for ch in h):
                self.i += 4
                ch = chr(int(h, 16))
                return CharSet(frozenset((ch,)), ch not in self.universe)
        if c in "pP" and self.p.startswith("{", self.i):
            j = self.p.find("}", self.i)
            if j > 0:
                self.i = j + 1
            return CharSet(self.universe, True)  # a Unicode property: assume it overlaps
        if c == "c" and self.i < self.n:
            self.i += 1
            return CharSet(frozenset(), True)
        return self.lit(c)

    def parse_class(self) -> CharSet:
        # self.i is just after "["
        negate = False
        if self.i < self.n and self.p[self.i] == "^":
            negate = True
            self.i += 1
        chars: set[str] = set()
        other = False
        while True:
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
                    lo_set = self.lit("\b")
                else:
                    lo_set = self.escape_char()
            else:
                lo_set = self.lit(c)
            # a range a-z
            if (len(lo_set.chars) == 1 and not lo_set.other and self.i + 1 < self.n
                    and self.p[self.i] == "-" and self.p[self.i + 1] != "]"):
                self.i += 1
                hc = self.p[self.i]
                self.i += 1
                hi_set = self.escape_char() if hc == "\\" else self.lit(hc)
                lo_c = next(iter(lo_set.chars))
                if len(hi_set.chars) == 1 and not hi_set.other:
                    hi_c = next(iter(hi_set.chars))
                    lo_o, hi_o = ord(lo_c), ord(hi_c)
                    if hi_o < lo_o:
                        raise RegexParseError(self.i, "character class range out of order")
                    chars.update(ch for ch in self.universe if lo_o <= ord(ch) <= hi_o)
                    if hi_o - lo_o + 1 > sum(1 for ch in self.universe if lo_o <= ord(ch) <= hi_o):
                        other = True
                else:
                    chars.add(lo_c)
                    chars.add("-")
                    chars |= hi_set.chars
                    other = other or hi_set.other
                continue
            chars |= lo_set.chars
            other = other or lo_set.other
        cs = CharSet(frozenset(chars), other)
        return self.neg(cs) if negate else cs

    # -- structure ---------------------------------------------------------------
    def parse_alt(self) -> Node:
        self.depth += 1
        if self.depth > _MAX_DEPTH:
            raise RegexParseError(self.i, "groups nested too deeply")
        branches = [self.parse_seq()]
        while self.i < self.n and self.p[self.i] == "|":
            self.i += 1
            branches.append(self.parse_seq())
        self.depth -= 1
        if len(branches) == 1:
            return branches[0]
        return Node("alt", items=branches)

    def parse_seq(self) -> Node:
        items: list[Node] = []
        while self.i < self.n and self.p[self.i] not in "|)":
            atom = self.parse_atom()
            if atom is None:
                continue
            atom = self.parse_quantifiers(atom)
            items.append(atom)
        return Node("seq", items=items)

    def parse_quantifiers(self, atom: Node) -> Node:
        while self.i < self.n:
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
        return atom

    def _brace_quant(self) -> tuple[int, int | None] | None:
        j = self.p.find("}", self.i)
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
        self.i = j + 1
        return lo, hi

    def parse_atom(self) -> Node | None:
        c = self.p[self.i]
        self.i += 1
        if c == "(":
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
                    j = self.p.find(">", self.i)
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
        if c == "[":
            return Node("char", cs=self.parse_class())
        if c == "\\":
            if self.i < self.n and self.p[self.i] in "bB":
                self.i += 1
                return Node("anchor")
            if self.i < self.n and self.p[self.i] in "123456789":
                while self.i < self.n and self.p[self.i].isdigit():
                    self.i += 1
                return Node("backref")
            if self.i < self.n and self.p[self.i] == "k" and self.p.startswith("<", self.i + 1):
                j = self.p.find(">", self.i)
                self.i = (j + 1) if j > 0 else self.n
                return Node("backref")
            return Node("char", cs=self.escape_char())
        if c == ".":
            return Node("char", cs=self.any_but_newline())
        if c in "^$":
            return Node("anchor")
        if c in "*+?":
            raise RegexParseError(self.i - 1, "nothing to repeat")
        if c == "{" and self.unicode:
            raise RegexParseError(self.i - 1, "lone brace in a unicode pattern")
        return Node("char", cs=self.lit(c))


def parse_pattern(pattern: str, flags: str = "") -> Node:
    """Parse a JavaScript regex pattern into our AST (RegexParseError on bad syntax)."""
    if len(pattern) > _MAX_PATTERN:
        raise RegexParseError(0, f"pattern longer than {_MAX_PATTERN} characters; not checked")
    p = _Parser(pattern, "u" in flags or "v" in flags)
    node = p.parse_alt()
    if p.i < p.n:
        raise RegexParseError(p.i, "unmatched closing parenthesis")
    return node


# -- analysis -----------------------------------------------------------------------

def _unbounded(node: Node) -> bool:
    return node.kind == "rep" and (node.hi is None or node.hi > _BIG)


def _first(node: Node) -> tuple[CharSet, bool]:
    """Characters that can start a match of ``node``, and whether it can match empty."""
    k = node.kind
    if k == "char":
        return node.cs, False
    if k in ("anchor", "look", "empty"):
        return EMPTY, True
    if k == "backref":
        return CharSet(frozenset(), True), True
    if k == "rep":
        cs, nullable = _first(node.items[0])
        return cs, nullable or node.lo == 0
    if k == "group":
        return _first(node.items[0])
    if k == "alt":
        acc = EMPTY
        nullable = False
        for b in node.items:
            cs, nb = _first(b)
            acc = acc | cs
            nullable = nullable or nb
        return acc, nullable
    # seq
    return _first_seq(node.items)


def _first_seq(items: list[Node]) -> tuple[CharSet, bool]:
    acc = EMPTY
    for it in items:
        cs, nullable = _first(it)
        acc = acc | cs
        if not nullable:
            return acc, False
    return acc, True


def _chars(node: Node) -> CharSet:
    """Every character ``node`` can consume."""
    if node.kind == "char":
        return node.cs
    if node.kind == "backref":
        return CharSet(frozenset(), True)
    if node.kind == "look":
        return EMPTY
    acc = EMPTY
    for it in node.items:
        acc = acc | _chars(it)
    return acc


def _flatten(node: Node) -> list[Node]:
    """The top-level sequence of ``node``, looking through single-branch groups."""
    if node.kind == "group":
        return _flatten(node.items[0])
    if node.kind == "seq":
        out: list[Node] = []
        for it in node.items:
            if it.kind == "group" and it.items[0].kind != "alt":
                out.extend(_flatten(it))
            else:
                out.append(it)
        return out
    return [node]


def _walk(node: Node) -> list[Node]:
    out = [node]
    stack = list(node.items)
    while stack:
        x = stack.pop()
        out.append(x)
        stack.extend(x.items)
    return out


@dataclass(frozen=True)
class BacktrackRisk:
    shape: str  # "nested-quantifier" | "overlapping-alternation"
    offset_hint: int = 0


def backtracking_risks(pattern: str, flags: str = "") -> list[BacktrackRisk]:
    """The catastrophic-backtracking shapes found in ``pattern`` (parse errors raise)."""
    root = parse_pattern(pattern, flags)
    risks: list[BacktrackRisk] = []
    seen: set[str] = set()
    for node in _walk(root):
        if not _unbounded(node):
            continue
        body = node.items[0]
        items = _flatten(body)
        body_first, _ = _first(body)
        # 1. nested unbounded quantifiers that can trade characters
        if "nested-quantifier" not in seen:
            for idx, it in enumerate(items):
                inner_reps = [x for x in _walk(it) if _unbounded(x)]
                if not inner_reps:
                    continue
                if _unbounded(it):
                    follow, nullable = _first_seq(items[idx + 1 :])
                    if nullable:
                        follow = follow | body_first
                    if _chars(it.items[0]).intersects(follow):
                        seen.add("nested-quantifier")
                        break
                else:
                    inner_chars = EMPTY
                    for x in inner_reps:
                        inner_chars = inner_chars | _chars(x.items[0])
                    if inner_chars.intersects(_chars(body)):
                        seen.add("nested-quantifier")
                        break
        # 2. alternation under the quantifier with overlapping branches
        if "overlapping-alternation" not in seen:
            alts = [x for x in _walk(body) if x.kind == "alt"]
            for alt in alts:
                firsts = [_first(b)[0] for b in alt.items]
                clash = any(
                    firsts[i].intersects(firsts[j])
                    for i in range(len(firsts))
                    for j in range(i + 1, len(firsts))
                )
                if clash:
                    seen.add("overlapping-alternation")
                    break
    for shape in sorted(seen):
        risks.append(BacktrackRisk(shape))
    return risks


def parse_flags(flag: str) -> tuple[str, list[str], list[str]]:
    """Split a RisuAI regex ``flag`` field into (JS flags, ``<directives>``, unknown letters).

    ``"g<order 1>"`` -> ``("g", ["order 1"], [])``.  Never raises.
    """
    letters: list[str] = []
    directives: list[str] = []
    unknown: list[str] = []
    i = 0
    n = len(flag)
    while i < n:
        c = flag[i]
        if c == "<":
            j = flag.find(">", i + 1)
            if j < 0:
                directives.append(flag[i + 1 :].strip())
                break
            directives.append(flag[i + 1 : j].strip())
            i = j + 1
            continue
        if c in "dgimsuvy":
            if c not in letters:
                letters.append(c)
        elif not c.isspace() and c not in (",",):
            unknown.append(c)
        i += 1
    return "".join(letters), directives, unknown
