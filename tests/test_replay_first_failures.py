"""Which requests of a batch are those of a first failure, asked once a batch
(:func:`risutools.replay.run._first_failures`): the same answers as
``checker.first_failure_at(q) or mcheck.first_failure_at(q)`` request by request, and that
reference itself when either checker's method is overridden (the slow path)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from risutools.replay.checker import InvariantChecker
from risutools.replay.cutter import ContextCutter
from risutools.replay.fixture import load_fixture
from risutools.replay.monitor_checker import MonitorChecker
from risutools.replay.run import _first_failures, replay_cutter
from risutools.settings.replay import load_replay_config

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "replay"


def _reference(checker: Any, mcheck: Any, requests: list[int]) -> list[bool]:
    return [checker.first_failure_at(q) or mcheck.first_failure_at(q) for q in requests]


def _checkers() -> tuple[InvariantChecker, MonitorChecker]:
    cfg = load_replay_config(None, load_fixture(FIX / "toggle.yaml").config)
    return InvariantChecker(cfg), MonitorChecker(cfg)


def test_first_failures_of_a_batch_are_those_asked_one_by_one() -> None:
    checker, mcheck = _checkers()
    checker._tally.firsts.update({3, 7})
    mcheck._tally.firsts.update({7, 9})
    requests = list(range(1, 13))
    got = _first_failures(checker, mcheck, requests)
    assert got == _reference(checker, mcheck, requests)
    assert got == [q in (3, 7, 9) for q in requests]
    assert all(type(x) is bool for x in got)
    assert checker.first_failures(requests) == list(map(checker.first_failure_at, requests))
    assert mcheck.first_failures(requests) == list(map(mcheck.first_failure_at, requests))


class _Odd(InvariantChecker):
    """A checker whose first failures are its own (every even request)."""

    def first_failure_at(self, request: int) -> bool:
        return request % 2 == 0


class _Counting(MonitorChecker):
    """M1-M3 whose answers are counted (the reference asks them only where R1-R9 did not
    answer yes) and are not bools."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.asked: list[int] = []

    def first_failure_at(self, request: int) -> Any:
        self.asked.append(request)
        return "yes" if request == 5 else 0


def test_an_overridden_first_failure_at_is_asked_as_before() -> None:
    checker, _ = _checkers()
    odd = _Odd(checker.config)
    counting = _Counting(checker.config)
    requests = list(range(1, 9))
    got = _first_failures(odd, counting, requests)
    assert got == [0, True, 0, True, "yes", True, 0, True]
    assert counting.asked == [1, 3, 5, 7]  # (short-circuited where R1-R9 said yes)
    assert odd.first_failures(requests) == [q % 2 == 0 for q in requests]
    assert _Counting(checker.config).first_failures([5, 6]) == ["yes", 0]


class _Breaks(ContextCutter):  # drops one more than needed: R7 fails
    def budget(self, k3: int, n_removable: int) -> tuple[int, int]:
        k, _ = super().budget(k3, n_removable)
        k = min(k + 1, n_removable)
        return k, self._total - self._prefix_est(k)


def test_a_replay_hands_its_watcher_the_first_failures_of_its_checkers() -> None:
    failed = 0
    for path in sorted(FIX.glob("*.yaml")):
        fx = load_fixture(path)
        cfg = load_replay_config(None, fx.config)
        for factory in (ContextCutter, _Breaks):
            seen: list[tuple[int, bool]] = []

            def watch(row: dict[str, Any], first: bool, still: bool = False,
                      seen: list[tuple[int, bool]] = seen) -> None:
                seen.append((row["request"], first))

            run = replay_cutter(fx, cfg, factory, watch=watch)
            assert run.checker is not None and run.monitor_checker is not None
            expected = [(q, _reference(run.checker, run.monitor_checker, [q])[0])
                        for q, _ in seen]
            assert seen == expected
            failed += sum(first for _, first in seen)
    assert failed  # (some invariant failed for the first time somewhere)
