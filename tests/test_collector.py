"""The cycle collector's contexts (risutools.collector): what each leaves as it was."""

from __future__ import annotations

import gc
import weakref

import pytest

from risutools import collector
from risutools.collector import (
    alive_frozen,
    batch_settled,
    cycles_paused,
    cycles_paused_set_aside,
    survivors_frozen,
)


@pytest.fixture(autouse=True)
def _unfrozen() -> None:
    gc.unfreeze()


def test_alive_frozen_puts_everything_back() -> None:
    keep = [[] for _ in range(10)]
    with alive_frozen():
        assert gc.get_freeze_count() >= len(keep)
    assert gc.get_freeze_count() == 0


def test_alive_frozen_inside_a_freeze_leaves_it_to_its_owner() -> None:
    with survivors_frozen():
        outer = gc.get_freeze_count()
        keep = [[] for _ in range(10)]
        with alive_frozen():
            pass
        assert gc.get_freeze_count() >= outer + len(keep)  # (the owner puts them back)
    assert gc.get_freeze_count() == 0


def test_alive_frozen_inside_an_owner_does_not_count_the_frozen(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Counting the frozen objects walks them all (milliseconds, in an ingest): inside
    survivors_frozen the owner is known, nothing is counted, and the owner still puts
    everything back."""
    with survivors_frozen():
        outer = gc.get_freeze_count()
        keep = [[] for _ in range(10)]

        def counted() -> int:
            raise AssertionError("the frozen objects were counted")

        with monkeypatch.context() as m:
            m.setattr(gc, "get_freeze_count", counted)
            with alive_frozen():
                pass
        assert gc.get_freeze_count() >= outer + len(keep)
    assert gc.get_freeze_count() == 0
    with alive_frozen():  # (no owner any more: counted, and put back)
        assert gc.get_freeze_count() >= len(keep)
    assert gc.get_freeze_count() == 0


def test_what_the_interpreter_froze_itself_owns_nothing(monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    """Python 3.12 starts with a few hundred objects frozen: that is no freeze of someone's
    around the block, so the block still puts everything back."""
    keep = [[] for _ in range(10)]
    gc.freeze()
    monkeypatch.setattr(collector, "_FROZEN_AT_START", gc.get_freeze_count())
    with alive_frozen():
        assert gc.get_freeze_count() >= len(keep)
    assert gc.get_freeze_count() == 0


def test_alive_frozen_puts_back_on_an_error() -> None:
    with pytest.raises(KeyError), alive_frozen():
        raise KeyError("x")
    assert gc.get_freeze_count() == 0


def test_a_cycle_frozen_in_the_block_is_collected_after_it() -> None:
    class Node:
        other: object

    a, b = Node(), Node()
    a.other, b.other = b, a
    alive = weakref.ref(a)
    with alive_frozen():
        del a, b
        gc.collect()
        assert alive() is not None  # frozen: out of the collector's reach meanwhile
    gc.collect()
    assert alive() is None


def test_cycles_paused_leaves_the_collector_as_it_was() -> None:
    with cycles_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with cycles_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_batch_settled_collects_the_batchs_cycles_and_sets_aside_what_it_keeps() -> None:
    class Node:
        other: object

    kept = []
    with cycles_paused(), alive_frozen():
        before = gc.get_freeze_count()
        a, b = Node(), Node()
        a.other, b.other = b, a
        gone = weakref.ref(a)
        del a, b
        kept.append([[] for _ in range(10)])
        batch_settled()
        assert gone() is None  # the batch's cycle: collected as it ended
        assert gc.get_freeze_count() >= before + 11  # what it keeps: out of later passes
    assert gc.get_freeze_count() == 0  # (nothing was frozen before: all put back)
    assert kept


def test_cycles_paused_set_aside_freezes_what_lives_only_in_the_programs_run(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """In the program's own run (its start froze objects: ``risutools.__main__``) what the
    block leaves alive is set aside as it ends: the collector's next pass does not walk it
    (the review's survivors were all in its youngest generation: a pass of tens of ms).
    In a caller that froze nothing (the tests), nothing is frozen: as ``cycles_paused``."""
    with cycles_paused_set_aside():
        assert not gc.isenabled()
        kept = [[] for _ in range(10)]
    assert gc.isenabled() and gc.get_freeze_count() == 0  # (no freeze of the program's)
    gc.freeze()  # (the program's start)
    monkeypatch.setattr(collector, "_FROZEN_AT_START", 0)
    before = gc.get_freeze_count()
    passes: list[int] = []

    def count(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            passes.append(info["generation"])

    gc.callbacks.append(count)
    try:
        with cycles_paused_set_aside():
            kept += [[[]] for _ in range(1000)]
        assert gc.isenabled()
        assert gc.get_freeze_count() >= before + 2000  # (the block's survivors)
        assert gc.get_count()[0] < 50  # (nothing young left for the next pass to walk)
    finally:
        gc.callbacks.remove(count)
    assert kept and not passes
