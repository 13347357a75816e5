"""The last live message before a place that is not a tool result: where a result's run
begins, and so which message called it (the cutter's and the checker's question, each asked
of its own list: this module holds no state of either).

A list of a history's messages by place (``None`` where one was deleted) only ever gains
places at its end, and a place, once empty or a result's, stays so (a deleted place is never
filled again; an edit keeps a message's role).  So every place a search walks over can
remember where the search went on (``jump``, kept by the caller between searches, path
compressed): a run of N results appended one by one costs O(N) searches of O(1) amortised
steps, not a walk back over the run each time (O(N^2): 30,000 results after one call took
55 s; docs/replay.md, Bounds)."""

from __future__ import annotations

from collections.abc import Container, Sequence
from typing import Any


def last_before(entries: Sequence[Any], start: int, jump: dict[int, int],
                results: Container[str]) -> int:
    """The place of the last entry before ``start`` that is live (not None) and of a role
    not in ``results`` (entries hold ``.msg.role``); -1 when there is none.  ``jump``: the
    caller's memory of the places walked over (see the module's text)."""
    at = start - 1
    path: list[int] = []
    while at >= 0:
        e = entries[at]
        if e is not None and e.msg.role not in results:
            break
        path.append(at)
        at = jump.get(at, at - 1)
    for p in path:
        jump[p] = at
    return at
