"""The monitor's checker asks ``held_fresh`` first (M1 and M2 held, M3 not applying, tested
together) and the units only when it cannot tell: the same verdicts, counts, first failures
and details as the units asked at every request, on rows the reference monitor writes and on
rows that are wrong in every way the units look at."""

from __future__ import annotations

import random
from typing import Any

import pytest

from risutools.replay import monitor_checker
from risutools.replay.fixture import Metrics
from risutools.replay.monitor import ContextMonitor, MonitorEvent
from risutools.replay.monitor_checker import MonitorChecker
from risutools.replay.monitor_invariants import STANDARD, held_fresh, read_request
from risutools.replay.verdicts import HELD, SKIP
from risutools.settings.replay import build_config


def _metrics(rng: random.Random) -> Metrics | None:
    roll = rng.random()
    if roll < 0.6:
        return None
    if roll < 0.7:
        return Metrics(available=False)
    if roll < 0.8:
        return Metrics(age_s=rng.choice([1.0, 59.0, 60.0, 61.0, 500.0]))
    return Metrics(used_pct=rng.choice([10.0, 64.99995, 65.0, 75.0, 75.00004, 99.0]))


def _spoiled(rng: random.Random, ev: dict[str, Any]) -> dict[str, Any]:
    """The monitor's row, now and then wrong: its level, its usage (by a little or much), its
    alert, its metrics word, a figure missing (and, in the test, stale or missing metrics
    given a fresh reading)."""
    ev = dict(ev)
    roll = rng.random()
    if roll < 0.04:
        ev["level"] = rng.choice(["NORMAL", "WARNING", "CRITICAL", None])
    elif roll < 0.08 and ev["used_pct"] is not None:
        ev["used_pct"] += rng.choice([0.0005, 0.002, 5.0])
    elif roll < 0.12:
        ev["alert"] = not ev["alert"]
    elif roll < 0.14:
        ev["metrics"] = rng.choice(["fresh", "stale", "missing"])
    elif roll < 0.16:
        ev[rng.choice(["used_pct", "remaining_pct"])] = None
    return ev


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_held_fresh_first_gives_the_units_verdicts(seed: int) -> None:
    rng = random.Random(seed)
    cfg = build_config({"max_context": 1000, "debounce": rng.choice([1, 3, 5])})
    monitor = ContextMonitor(cfg)
    fused, units = MonitorChecker(cfg), MonitorChecker(cfg)
    units.fused = False
    assert fused.fused
    taken = 0
    for req in range(1, 3000):
        tokens = rng.randrange(0, 1100)
        metrics = _metrics(rng)
        ev = _spoiled(rng, monitor.observe(req, tokens, metrics).to_dict())
        if ev["metrics"] != "fresh" and rng.random() < 0.3:  # stale metrics read as fresh
            ev = ContextMonitor(cfg).observe(req, tokens, None).to_dict()
        last = fused._last_alert
        if held_fresh(cfg, req, tokens, metrics, ev, last):
            taken += 1  # what it says, the units say
            r = read_request(cfg, req, tokens, metrics, ev, last)
            assert [u.run(cfg, r) for u in STANDARD if u.run] == [HELD, HELD, SKIP], req
        fused.check(req, tokens, metrics, ev)
        units.check(req, tokens, metrics, ev)
        assert fused.first_failure_at(req) == units.first_failure_at(req)
        if req % 97 == 0:
            assert fused.to_dicts() == units.to_dicts(), req
    assert fused.to_dicts() == units.to_dicts()
    assert all(d["failures"] for d in units.to_dicts())  # every unit failed somewhere
    assert 1000 < taken < 2900


@pytest.mark.parametrize("seed", [5, 6])
def test_an_event_checked_by_its_fields_is_its_row_checked(
        seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """``check_event`` of the monitor's event (its fields read, its row made only for the
    units) gives what ``check`` of its row gives, the units asked at every request: on
    events right and wrong in every way the row can be (most held by its fields alone)."""
    taken = []
    of = monitor_checker.held_fresh_of

    def counted(*args: Any) -> bool:
        out = of(*args)
        taken.append(out)
        return out

    monkeypatch.setattr(monitor_checker, "held_fresh_of", counted)
    rng = random.Random(seed)
    cfg = build_config({"max_context": 1000, "debounce": rng.choice([1, 3, 5])})
    monitor = ContextMonitor(cfg)
    by_event, units = MonitorChecker(cfg), MonitorChecker(cfg)
    units.fused = False
    for req in range(1, 3000):
        tokens = rng.randrange(0, 1100)
        metrics = _metrics(rng)
        row = _spoiled(rng, monitor.observe(req, tokens, metrics).to_dict())
        ev = MonitorEvent(req, row["metrics"], row["used_pct"], row["remaining_pct"],
                          row["level"], row["alert"], row["alert_reason"] or "")
        assert ev.to_dict() == row
        by_event.check_event(req, tokens, metrics, ev)
        units.check(req, tokens, metrics, row)
        assert by_event.first_failure_at(req) == units.first_failure_at(req)
    assert by_event.to_dicts() == units.to_dicts()
    assert all(d["failures"] for d in units.to_dicts())
    assert 1000 < sum(taken) < 2900
