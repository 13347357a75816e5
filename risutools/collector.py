"""Python's cycle collector, paused for work that builds acyclic data by the million.

A review holds every document of the catalog (trees of dicts and lists), the interactions
make millions of small lists, tuples and dicts: none of it is a cycle, and the collector's
automatic passes over it, each walking everything still alive, took a quarter of a review's
CPU and about 40% of the interactions' (measured: ``bench/bench_review.py``,
``bench/bench_interactions.py``).  Reference counting frees everything as always; a cycle
made meanwhile is collected once the collector runs again.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

#: the objects the interpreter froze itself by the time this module loads (none in 3.11
#: and 3.13; a few hundred in 3.12), before the program or anything here froze any
_FROZEN_AT_START = gc.get_freeze_count()
#: how many :func:`survivors_frozen` blocks are running (threads included): while one is, an
#: owner puts everything back, and :func:`alive_frozen` need not count the frozen objects
#: (``gc.get_freeze_count`` walks them all: 2.7 ms in a re-ingest of 2,000 files, ~29,000
#: objects)
_owners = 0
_owners_guard = threading.Lock()


@contextlib.contextmanager
def cycles_paused() -> Iterator[None]:
    """The cycle collector paused for the block, and as it was after it."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


@contextlib.contextmanager
def survivors_frozen() -> Iterator[None]:
    """The objects alive when the block starts (every module loaded, ~10^5 of them) left out
    of the collections the block's own small objects trigger (``gc.freeze``), and put back
    after it (``gc.unfreeze``): a sixth of the CPU of a re-ingest with nothing changed
    (measured: ``bench/bench_reingest.py``).  Forked pool workers inherit it."""
    global _owners
    gc.freeze()
    with _owners_guard:
        _owners += 1
    try:
        yield
    finally:
        with _owners_guard:
            _owners -= 1
        gc.unfreeze()


def _frozen_by_someone() -> bool:
    """Objects are frozen by someone: a :func:`survivors_frozen` block runs (not counted,
    :data:`_owners`), or more than the interpreter froze itself (:data:`_FROZEN_AT_START`)
    are (the program's start froze its modules)."""
    return _owners > 0 or gc.get_freeze_count() > _FROZEN_AT_START


@contextlib.contextmanager
def alive_frozen() -> Iterator[None]:
    """The objects alive when the block starts left out of the collections during it
    (``gc.freeze``): a batch's bookkeeping (ingest's cache, its thousands of cached sources)
    is not walked again and again by the passes the block's own work triggers.  Put back
    after it (``gc.unfreeze``), unless objects were frozen already when it started
    (:func:`survivors_frozen` around it, or the program's start): then whoever froze them
    puts everything back.  What the interpreter froze itself before any of this
    (:data:`_FROZEN_AT_START`) does not count as frozen by someone.  Inside
    :func:`survivors_frozen` the frozen objects are not counted (:data:`_owners`)."""
    owned = _frozen_by_someone()
    gc.freeze()
    try:
        yield
    finally:
        if not owned:
            gc.unfreeze()


@contextlib.contextmanager
def cycles_paused_set_aside() -> Iterator[None]:
    """:func:`cycles_paused`, and what is alive when the block ends set aside from the
    collector's passes (``gc.freeze``) before it runs again, when the program already sets
    aside what it keeps (its start froze its modules, or a :func:`survivors_frozen` block
    runs: the program's own run, never a caller that froze nothing, such as the tests).
    The collector's first pass after the block would otherwise walk every object the
    block left alive, all of them in its youngest generation (a review of 10,000 documents:
    its entries, summaries and rows, 20-60 ms), only to find them alive; the program sets
    them aside at its exit anyway (``risutools.__main__``).  A cycle the block made and
    let go is then set aside with them, as at the exit: freed with the process."""
    with cycles_paused():
        yield
        if _frozen_by_someone():
            gc.freeze()


def batch_settled() -> None:
    """After one batch of a step that runs with the collector paused (:func:`cycles_paused`)
    inside :func:`alive_frozen`: the cycles the batch made collected now (every object made
    since the last pass is in the youngest generation, which is all this pass walks), and
    what survives them (the summaries a run keeps to its end) set aside from later passes
    (``gc.freeze``).  So each batch is walked once, as it ends, and never again by the
    passes over the older generations that a long run's survivors would otherwise trigger
    again and again (half of a ``validate``'s collector time before: bench/RESULTS.md,
    round 14); a cycle a batch makes is gone once the batch ends, whatever the run's
    length.  The caller lets the batch's own objects go first: this pass walks what is
    still alive."""
    gc.collect(0)
    gc.freeze()
