"""Whether an unbounded repetition can split one text into its iterations in two ways
(the overlapping alternations of :mod:`risutools.analysis.regexcheck`, confirmed).

A backtracking engine (JavaScript's) that fails to match after ``(R)*`` tries every way
the repetition can match the text before it.  When two different sequences of iterations
(or two different paths through one iteration) match the same string ``w``, ``w`` repeated
``n`` times can be matched in 2^n ways, and the engine tries them all: catastrophic.  When
no string has two such paths, each way the engine tries is a different split of a
different prefix, a polynomial number: ``(ab|a)*c`` (``a`` followed by ``b`` is ``ab``, any
other ``a`` is ``a``: one split), ``(a|ab)*``, ``(ab|ac)*`` are not catastrophic, though
their branches start with the same character; ``(a|a)*``, ``(a|ab|b)*`` (``ab`` or ``a``
then ``b``), ``(\\w|\\d)+``, ``(?:\\\\.|[^"])*`` are.

The repetition's body is read as a position automaton (Glushkov's: one state per
character of the pattern, ``a`` -> ``b`` when ``b`` can follow ``a``; the repetition adds
its last positions -> its first ones).  Two paths on one string that reach one position
make two cycles on one string there (every position of the body lies on a cycle through
the repetition): exponential ambiguity.  The search is the subset construction: from the
start, the set of positions each text reaches, each set read once; when two positions of a
set are followed by the same position, one text reaches it by two paths (ambiguous); when
no new set is left, no text does (not).  Each set is split by the characters its next
positions read (a sweep of their intervals), so a wide class costs its intervals, not its
characters.

Read on the safe side: lookarounds and anchors match nothing (more texts, never fewer), a
bounded count ``{n,m}`` with m >= 2 loops like ``+`` or ``*``, a back-reference matches
any text.  Two nested loops over the same positions (``(a*)*``) are not seen here (one
automaton state, one edge): that is the nested-quantifier check's.  Bounded: every set
made and position listed costs a step; past the limit given the answer is None (not
known: the caller keeps its report).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol


class NodeLike(Protocol):
    """What the reader needs of a parsed pattern's node (``regexcheck.Node``)."""

    kind: str
    lo: int
    hi: int | None

    @property
    def items(self) -> Sequence[NodeLike]: ...


class CharSetLike(Protocol):
    """What the reader needs of a character set (``regexcheck.CharSet``)."""

    ranges: tuple[tuple[int, int], ...]


class _Over(Exception):
    """The step limit was reached."""


#: a node's reading: (matches empty, first positions, last positions)
_Info = tuple[bool, frozenset[int], frozenset[int]]
_NONE: frozenset[int] = frozenset()


class _Automaton:
    """The position automaton of one repetition's body (built once, read by sets)."""

    def __init__(self, label: Callable[[Any], CharSetLike], limit: int) -> None:
        self.label = label
        self.left = limit
        self.labels: list[tuple[tuple[int, int], ...]] = []
        #: (from positions, to positions): every position of the first may be followed by
        #: every one of the second (by the identity of the sets, each pair once)
        self.links: dict[tuple[int, int], tuple[frozenset[int], frozenset[int]]] = {}
        self.follow: list[list[frozenset[int]]] = []
        self.next_memo: dict[tuple[int, ...], frozenset[int]] = {}
        self.class_memo: dict[int, list[frozenset[int]]] = {}

    def charge(self, steps: int = 1) -> None:
        self.left -= steps
        if self.left < 0:
            raise _Over

    def union(self, a: frozenset[int], b: frozenset[int]) -> frozenset[int]:
        if not a or a is b:
            return b
        if not b:
            return a
        self.charge(len(a) + len(b))
        return a | b

    def union_all(self, sets: list[frozenset[int]]) -> frozenset[int]:
        """The union of ``sets`` in one step (the same set object when only one holds
        anything)."""
        full = list({id(x): x for x in sets if x}.values())
        if len(full) <= 1:
            return full[0] if full else _NONE
        self.charge(sum(map(len, full)))
        return frozenset().union(*full)

    def link(self, src: frozenset[int], dst: frozenset[int]) -> None:
        if src and dst:
            self.charge()
            self.links.setdefault((id(src), id(dst)), (src, dst))

    def position(self, node: NodeLike, loops: bool) -> _Info:
        self.charge()
        p = len(self.labels)
        self.labels.append(self.label(node).ranges)
        one = frozenset((p,))
        if loops:  # a back-reference: any text
            self.link(one, one)
        return loops, one, one

    def build(self, root: NodeLike) -> _Info:
        """The reading of ``root``: children before parents, on a stack (no recursion)."""
        done: dict[int, _Info] = {}
        stack: list[tuple[NodeLike, bool]] = [(root, False)]
        while stack:
            node, ready = stack.pop()
            self.charge()
            if not ready and node.kind in ("group", "alt", "seq", "rep"):
                stack.append((node, True))
                stack.extend((it, False) for it in reversed(node.items))
                continue
            done[id(node)] = self.combine(node, [done[id(it)] for it in node.items]
                                          if ready else [])
        return done[id(root)]

    def combine(self, node: NodeLike, parts: list[_Info]) -> _Info:
        kind = node.kind
        if kind == "char":
            return self.position(node, False)
        if kind == "backref":
            return self.position(node, True)
        if kind == "group":
            return parts[0]
        if kind == "alt":
            return (any(e for e, _f, _la in parts), self.union_all([f for _e, f, _la in parts]),
                    self.union_all([la for _e, _f, la in parts]))
        if kind == "seq":
            return self.sequence(parts)
        if kind == "rep":
            empty, first, last = parts[0]
            if node.hi is None or node.hi >= 2:
                self.link(last, first)
            return empty or node.lo == 0, first, last
        return True, _NONE, _NONE  # anchors, lookarounds, empty: nothing consumed

    def sequence(self, parts: list[_Info]) -> _Info:
        first, last, empty = _NONE, _NONE, True
        for e, f, la in parts:
            self.link(last, f)
            if empty:
                first = self.union(first, f)
            last = self.union(la, last) if e else la
            empty = empty and e
        return empty, first, last

    def finish(self) -> None:
        """Each position's list of the sets that may follow it."""
        self.follow = [[] for _ in self.labels]
        for src, dst in self.links.values():
            self.charge(len(src))
            for p in src:
                self.follow[p].append(dst)

    def next_of(self, p: int) -> frozenset[int]:
        """The positions that may follow ``p`` (the union of its sets, made once per
        distinct list of sets)."""
        sets = self.follow[p]
        if len(sets) == 1:
            return sets[0]
        key = tuple(sorted({id(s) for s in sets}))
        got = self.next_memo.get(key)
        if got is None:
            got = _NONE
            for s in {id(s): s for s in sets}.values():
                got = self.union(got, s)
            self.next_memo[key] = got
        return got

    def classes_of(self, targets: frozenset[int]) -> list[frozenset[int]]:
        """:meth:`classes` of a set of positions, made once per set."""
        got = self.class_memo.get(id(targets))
        if got is None:
            got = self.class_memo[id(targets)] = self.classes(set(targets))
        return got

    def classes(self, targets: set[int]) -> list[frozenset[int]]:
        """``targets`` split by the characters they read: for each run of characters, the
        positions that read it (each distinct set once): a sweep of their intervals."""
        events: list[tuple[int, int, int]] = []
        for q in targets:
            for lo, hi in self.labels[q]:
                events.append((lo, 1, q))
                events.append((hi + 1, 0, q))
        self.charge(1 + 2 * len(events))
        events.sort()
        out: dict[frozenset[int], None] = {}
        active: set[int] = set()
        i = 0
        while i < len(events):
            at = events[i][0]
            while i < len(events) and events[i][0] == at:
                _at, opens, q = events[i]
                if opens:
                    active.add(q)
                else:
                    active.discard(q)
                i += 1
            if active:
                self.charge(len(active))
                out.setdefault(frozenset(active), None)
        return list(out)


def _search(auto: _Automaton, first: frozenset[int]) -> bool:
    """Whether two paths on one string reach one position: the sets of positions one string
    reaches from the start (the subset construction), each read once; two positions of a
    set followed by the same position are two paths to it on the same string."""
    start = frozenset((-1,))  # (-1: the start, followed by the body's first positions)
    todo = [start]
    visited = {start}
    while todo:
        here = todo.pop()
        sets = [first if p < 0 else auto.next_of(p) for p in here]
        auto.charge(len(sets))
        if len(sets) == 1:  # (one position: its set's classes, made once per set)
            groups = auto.classes_of(sets[0])
        else:
            targets: set[int] = set()
            for nxt in sets:
                auto.charge(1 + len(nxt))
                if not targets.isdisjoint(nxt) and any(auto.labels[q] for q in targets & nxt):
                    return True
                targets.update(nxt)
            groups = auto.classes(targets)
        for group in groups:
            if group not in visited:
                visited.add(group)
                todo.append(group)
    return False


def ambiguous_repetition(body: NodeLike, label: Callable[[Any], CharSetLike],
                         limit: int) -> tuple[bool | None, int]:
    """Whether the unbounded repetition of ``body`` can match one string by two different
    paths (its iterations, or the paths through one), read as above; None when it could
    not be told within ``limit`` steps.  Also the steps used."""
    auto = _Automaton(label, limit)
    try:
        _empty, first, last = auto.build(body)
        auto.link(last, first)
        auto.finish()
        got: bool | None = _search(auto, first)
    except _Over:
        got = None
    return got, limit - max(auto.left, 0)
