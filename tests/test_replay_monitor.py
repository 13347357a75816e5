"""The context monitor (seed 003), alone and with the cutter."""

from __future__ import annotations

import random
from pathlib import Path

from risutools.replay.api import run_monitor
from risutools.replay.fixture import Metrics
from risutools.replay.monitor import ContextMonitor
from risutools.settings.replay import build_config

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "replay"


def test_monitor_fixture_levels_and_alerts() -> None:
    report = run_monitor(FIX / "monitor.yaml")
    got = [(r["monitor"]["level"], r["monitor"]["alert_reason"]) for r in report["requests"]]
    assert got == [
        ("NORMAL", None),
        ("WARNING", "first"),
        ("WARNING", None),
        (None, None),  # stale (75 s)
        (None, None),  # no metrics
        ("WARNING", None),  # 6 - 2 = 4 < 5
        ("WARNING", "debounce elapsed"),  # 7 - 2 = 5
        ("CRITICAL", "escalation"),  # remaining exactly 25
        ("CRITICAL", None),
        ("NORMAL", None),
        ("WARNING", None),  # 11 - 8 = 3
        ("WARNING", None),
        ("WARNING", "debounce elapsed"),  # 13 - 8 = 5
        ("CRITICAL", "escalation"),  # age 60 s is not stale
    ]
    assert [r["monitor"]["metrics"] for r in report["requests"]][3:5] == ["stale", "missing"]
    assert [a["request"] for a in report["alerts"]] == [2, 7, 8, 13, 14]
    assert report["summary"]["alerts"] == 5
    # the monitor's own checks ran: levels and alerts on the 12 fresh requests, the
    # stale (4) and missing (5) ones left alone
    got_inv = {i["id"]: (i["verdict"], i["requests_checked"]) for i in report["invariants"]}
    assert got_inv == {"M1": ("passed", 12), "M2": ("passed", 12), "M3": ("passed", 2)}
    assert report["summary"]["verdict"] == "passed"


def test_usage_from_the_estimate_and_custom_thresholds() -> None:
    cfg = build_config({"max_context": 200, "warning_pct": 50, "critical_pct": 10, "debounce": 2})
    mon = ContextMonitor(cfg)
    # 100/200 used -> 50 remaining -> WARNING (<= 50); 181 -> 9.5 remaining -> CRITICAL
    e1 = mon.observe(1, 99, None)
    e2 = mon.observe(2, 100, None)
    e3 = mon.observe(3, 100, None)
    e4 = mon.observe(4, 100, Metrics(age_s=5.0))
    e5 = mon.observe(5, 181, None)
    assert (e1.level, e1.alert, e1.remaining_pct) == ("NORMAL", False, 50.5)
    assert (e2.level, e2.alert, e2.used_pct) == ("WARNING", True, 50.0)
    assert (e3.alert, e4.alert, e4.reason) == (False, True, "debounce elapsed")
    assert (e5.level, e5.alert, e5.reason) == ("CRITICAL", True, "escalation")


def test_missing_metrics_are_tolerated_before_any_alert() -> None:
    mon = ContextMonitor(build_config({"max_context": 100}))
    ev = mon.observe(1, 99, Metrics(available=False))
    assert (ev.metrics, ev.level, ev.alert) == ("missing", None, False)
    assert mon.observe(2, 99, None).reason == "first"


def test_cutter_replay_feeds_the_monitor_with_tokens_out() -> None:
    from risutools.replay.fixture import load_fixture
    from risutools.replay.run import replay_cutter
    from risutools.settings.replay import load_replay_config

    fx = load_fixture(FIX / "anchor-edit.yaml")
    run = replay_cutter(fx, load_replay_config(None, fx.config))
    # tokens out 90, 70, 70, 80 of 100: remaining 10 (CRITICAL), 30, 30, 20 (CRITICAL)
    assert [r["monitor"]["level"] for r in run.rows] == [
        "CRITICAL",
        "WARNING",
        "WARNING",
        "CRITICAL",
    ]
    assert [r["monitor"]["alert"] for r in run.rows] == [True, False, False, False]


def _plain_shares(used: float) -> tuple[float, float]:
    used = round(used, 4)
    return used, round(100.0 - used, 4)


def test_a_usage_seen_again_reports_the_same_figures_as_the_first_time() -> None:
    """The monitor keeps the shares of each usage in tokens it saw: every event is what
    the spec's formula gives for its usage (rounded to 4 decimals, then remaining), for
    usages seen before or not, two budgets in turn, metrics with a share of their own."""
    rng = random.Random(4)
    for max_context in (1000, 7919):
        cfg = build_config({"max_context": max_context, "warning_pct": 40,
                            "critical_pct": 20})
        mon = ContextMonitor(cfg)
        for request in range(1, 3000):
            tokens = rng.choice((rng.randint(0, max_context * 2), request % 37 * 31))
            metrics = Metrics(used_pct=rng.uniform(0, 100)) if request % 11 == 0 else None
            ev = mon.observe(request, tokens, metrics)
            used = metrics.used_pct if metrics is not None and metrics.used_pct is not None \
                else 100.0 * tokens / max_context
            assert (ev.used_pct, ev.remaining_pct) == _plain_shares(used)
            assert ev.level == mon.level(_plain_shares(used)[1])
