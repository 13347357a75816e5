"""``places.last_before``: the place where a tool result's run begins (the last live message
before it that is not a result), against a plain walk back, over histories that grow, empty
places and hold long runs of results; and its cost: a run of results appended one by one
reads O(1) places a result, not the whole run (a walk back over it was quadratic:
docs/replay.md, Bounds)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from risutools.replay.checker import InvariantChecker
from risutools.replay.cutter import ContextCutter
from risutools.replay.fixture import Message
from risutools.replay.mirror import Change
from risutools.replay.mirror_records import root
from risutools.replay.places import last_before
from risutools.settings.replay import build_config

RESULTS = ("tool", "function")


class _E:
    def __init__(self, role: str) -> None:
        self.msg = Message("x", role, "")


class _Counted(list[Any]):
    """A list that counts the places read."""

    reads = 0

    def __getitem__(self, i: Any) -> Any:
        _Counted.reads += 1
        return super().__getitem__(i)


def _walked(entries: list[Any], start: int) -> int:
    for at in range(start - 1, -1, -1):
        e = entries[at]
        if e is not None and e.msg.role not in RESULTS:
            return at
    return -1


@pytest.mark.parametrize("seed", range(8))
def test_the_place_is_the_plain_walks(seed: int) -> None:
    rng = random.Random(seed)
    entries: list[Any] = []
    jump: dict[int, int] = {}
    for _ in range(3000):
        op = rng.random()
        if op < 0.55 or not entries:
            entries.append(_E(rng.choice(["tool", "tool", "function", "user", "assistant"])))
        elif op < 0.8:
            entries[rng.randrange(len(entries))] = None  # a place emptied, for good
        start = rng.randrange(len(entries) + 1)
        assert last_before(entries, start, jump, RESULTS) == _walked(entries, start)


def test_a_run_of_results_reads_a_few_places_each() -> None:
    entries = _Counted([_E("user"), _E("assistant")])
    jump: dict[int, int] = {}
    _Counted.reads = 0
    for _ in range(20_000):
        assert last_before(entries, len(entries), jump, RESULTS) == 1
        list.append(entries, _E("tool"))
    assert _Counted.reads < 3 * 20_000  # (the walk back read ~2 * 10^8)
    entries[1] = None  # the call deleted: the run's place is the user message's
    assert last_before(entries, len(entries), jump, RESULTS) == 0


def test_the_cutter_and_the_checker_link_a_long_run_to_its_call() -> None:
    """A call and 3,000 results appended one a turn: each result is the call's, in the
    cutter and in the checker's mirror; the call deleted, none is."""
    cfg = build_config({"max_context": 10**8, "preserve_latest": 2})
    cutter, checker = ContextCutter(cfg), InvariantChecker(cfg)
    call = Message("a", "assistant", "call")
    cutter.append(call)
    checker.check(Change(1, True, [call], [], [], [call], (), False))
    for i in range(3000):
        m = Message(f"t{i}", "tool", "r")
        cutter.append(m)
        checker.check(Change(i + 2, True, [m], [], [], [m], (), False))
    assert len(cutter._by_id["a"].results) == 3000
    run = root(checker.mirror.inp["a"].run)
    assert run.caller is checker.mirror.inp["a"] and run.live == run.kept == 3000
    assert checker.mirror.linked == 3000
    assert not checker.failed()
