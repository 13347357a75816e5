"""Sorted lists of message positions whose deletes and inserts stay cheap in any order.

The cutter and the checker's mirror keep sorted lists of message positions (``seq``): the
live non-protected messages in order (the mirror's ``np_seqs``), and those of each text
(the cutter's ``_sigs``, the mirror's ``texts``).  A plain list answers their reads in C
(an index, a slice, a bisection), and appending to it costs nothing; but taking an entry
out of it, or putting one in before its end, moves every entry after that one.  A fixture
that appends 600,000 messages and then deletes them from the oldest moved 180 billion
entries that way: most of its run, quadratic in its length.

So each of the two keeps a :class:`Moves` count of what its deletes and inserts move (those
of at most :data:`MOVES_AT_ONCE` entries are not counted: a few microseconds at most).
Past :data:`MOVES_FREE` plus :data:`MOVES_A_MESSAGE` for each message the history has had,
the list a delete or insert would move past :data:`MOVES_AT_ONCE` entries is first made a
:class:`Blocked` list (sortedcontainers' ``SortedList``: blocks of about a thousand entries,
each delete or insert O(log n), an index O(log n)), which answers every read and write the
callers make of a list (``append`` of the largest, ``insert`` at its sorted place, an
index, a slice, ``del`` of an index, ``len``; :func:`rank` bisects either kind), so they
go on as they were.  What the deletes and inserts move is then at most :data:`MOVES_FREE`
+ :data:`MOVES_A_MESSAGE` entries a message (8 KiB of memory moved a message: well under
a microsecond), and one move more a list (the one that made it blocked), whatever the
order of the operations.

The usual run never gets there: ``replay synth``'s 100,000 messages (993 deletes at random
ages) move 24 million entries in the checker's lists (none in the cutter's), under the 108
million allowed; its lists stay plain (what a replay says is the same either way:
``tests/test_replay_seqs.py`` replays fixtures with every list made blocked at its first
move).
"""

from __future__ import annotations

from bisect import bisect_left
from typing import Any, cast

from sortedcontainers import SortedList

#: a delete or insert moving at most this many entries is not counted (8 KiB moved)
MOVES_AT_ONCE = 1024
#: entries the moves may total, a message of the history, before a list is made blocked
MOVES_A_MESSAGE = 1024
#: ... and beyond those, whatever the history's length (32 MiB moved: milliseconds)
MOVES_FREE = 1 << 22


class Blocked(SortedList):  # type: ignore[misc]  # (sortedcontainers has no type hints)
    """A sorted list of ints in blocks (``SortedList``) that also answers the list
    operations the callers use on a plain one: ``append`` (of a value past the others)
    and ``insert`` (at the value's sorted place, the one the caller bisected: the index
    is not needed; ``bisect.insort`` calls it so too)."""

    def append(self, value: int) -> None:
        self.add(value)

    def insert(self, index: int, value: int) -> None:
        self.add(value)


def rank(seqs: list[int], value: int, lo: int = 0, hi: int | None = None) -> int:
    """``bisect.bisect_left(seqs, value, lo, hi)`` of a plain list or a :class:`Blocked`
    one (whose own bisection is O(log n); ``bisect``'s functions would read it an index at
    a time, each O(log n))."""
    if type(seqs) is list:
        return bisect_left(seqs, value, lo, len(seqs) if hi is None else hi)
    at: int = cast(Any, seqs).bisect_left(value)  # (sorted: within [lo, hi], clamped)
    return min(max(at, lo), len(seqs) if hi is None else hi)


class Moves:
    """What one structure's lists have moved (see the module's text)."""

    __slots__ = ("moved",)

    def __init__(self) -> None:
        self.moved = 0

    def ready(self, seqs: list[int], at: int, messages: int) -> list[int]:
        """``seqs``, or the same values :class:`Blocked` once the moves are past the
        allowance: the list to delete the entry at index ``at`` from, or to insert one at
        ``at`` into (the caller keeps the one returned in place of ``seqs``).
        ``messages``: the messages the history has had."""
        n = len(seqs) - at
        if n <= MOVES_AT_ONCE or type(seqs) is not list:
            return seqs
        self.moved += n
        if self.moved <= MOVES_FREE + MOVES_A_MESSAGE * messages:
            return seqs
        blocked: Any = Blocked(seqs)
        # (a Blocked answers every list operation the callers make: typed as their list)
        return cast("list[int]", blocked)

    def taken(self, seqs: list[int], value: int, messages: int) -> list[int]:
        """``seqs`` without ``value`` (one of them): the list itself, or it made blocked
        first (:meth:`ready`): the caller keeps the one returned."""
        at = rank(seqs, value)
        seqs = self.ready(seqs, at, messages)
        del seqs[at]
        return seqs

    def put(self, seqs: list[int], value: int, messages: int) -> list[int]:
        """``seqs`` with ``value`` in its sorted place (as :meth:`taken`)."""
        at = rank(seqs, value)
        seqs = self.ready(seqs, at, messages)
        seqs.insert(at, value)
        return seqs
