"""A Fenwick tree (binary indexed tree): prefix sums over 1-based positions, growing at the end.

The one implementation the reference cutter (``cutter.py``) and the invariant checker
(``mirror.py``) both count with: every operation is O(log n), so neither recounts the history
at a request.  Positions are 1-based (position ``i`` holds the message with sequence number
``i - 1``); a value is pushed at the end when a message appears and adjusted in place when it
changes or goes.
"""

from __future__ import annotations


class Fenwick:
    """Prefix sums over 1-based positions; grows at the end in O(log n)."""

    __slots__ = ("tree",)

    def __init__(self) -> None:
        self.tree: list[int] = [0]

    def __len__(self) -> int:
        return len(self.tree) - 1

    def push(self, value: int) -> None:
        """Append a position holding ``value``."""
        tree = self.tree
        i = len(tree)
        stop = i - (i & -i)
        s = value
        j = i - 1
        while j > stop:
            s += tree[j]
            j -= j & -j
        tree.append(s)

    def add(self, i: int, delta: int) -> None:
        """Add ``delta`` to the value at position ``i``."""
        tree = self.tree
        n = len(tree)
        while i < n:
            tree[i] += delta
            i += i & -i

    def prefix(self, i: int) -> int:
        """The sum of positions 1 .. ``i`` (0 for ``i <= 0``)."""
        tree = self.tree
        s = 0
        while i > 0:
            s += tree[i]
            i -= i & -i
        return s

    def lower_bound(self, x: int) -> int:
        """Smallest i with prefix(i) >= x (x > 0); len+1 when the total is below x."""
        tree = self.tree
        n = len(tree) - 1
        pos = 0
        step = 1 << n.bit_length() if n else 0
        while step:
            nxt = pos + step
            if nxt <= n and tree[nxt] < x:
                pos = nxt
                x -= tree[nxt]
            step >>= 1
        return pos + 1


def tree_of(values: list[int]) -> list[int]:
    """The tree of ``values`` (position ``i`` holding ``values[i - 1]``), built in one pass
    over them (each node added once into its parent): O(n), where ``n`` pushes take
    O(n log n)."""
    tree = [0, *values]
    n = len(tree)
    for i in range(1, n):
        j = i + (i & -i)
        if j < n:
            tree[j] += tree[i]
    return tree


def push_three(a: Fenwick, b: Fenwick, c: Fenwick, va: int, vb: int, vc: int) -> None:
    """``a.push(va)``, ``b.push(vb)``, ``c.push(vc)`` for three trees of the same length,
    in one walk (the nodes summed are at the same positions in each)."""
    ta, tb, tc = a.tree, b.tree, c.tree
    i = len(ta)
    stop = i - (i & -i)
    j = i - 1
    while j > stop:
        va += ta[j]
        vb += tb[j]
        vc += tc[j]
        j -= j & -j
    ta.append(va)
    tb.append(vb)
    tc.append(vc)


def push_two(a: Fenwick, b: Fenwick, va: int, vb: int) -> None:
    """``a.push(va)``, ``b.push(vb)`` for two trees of the same length, in one walk."""
    ta, tb = a.tree, b.tree
    i = len(ta)
    stop = i - (i & -i)
    j = i - 1
    while j > stop:
        va += ta[j]
        vb += tb[j]
        j -= j & -j
    ta.append(va)
    tb.append(vb)


def first_of_difference(a: Fenwick, b: Fenwick) -> int:
    """The first position where ``a``'s value exceeds ``b``'s (both trees of the same
    length, ``b``'s value at most ``a``'s at every position): the smallest i with
    ``a.prefix(i) - b.prefix(i) >= 1``, found in one descent of both; len+1 when none."""
    ta, tb = a.tree, b.tree
    n = len(ta) - 1
    pos = 0
    x = 1
    step = 1 << n.bit_length() if n else 0
    while step:
        nxt = pos + step
        if nxt <= n:
            v = ta[nxt] - tb[nxt]
            if v < x:
                pos = nxt
                x -= v
        step >>= 1
    return pos + 1
