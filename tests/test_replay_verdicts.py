"""Every verdict comes from a check that ran and could have failed.

* a replay that checked nothing says ``not-checked`` (never ``passed``) and ``--update``
  does not record it;
* each monitor invariant M1-M3 comes out ``failed`` on a deliberately broken monitor
  (R1-R8 have theirs in test_replay_invariants.py), alone and observing the cutter;
* a component that provides only ``context.monitor`` is replayed with those checks, and
  ``--update`` records what they found.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from harness import ROOT, SEED

from risutools.replay import api
from risutools.replay.checker import InvariantChecker
from risutools.replay.fixture import Metrics, build_fixture, load_fixture
from risutools.replay.monitor import ContextMonitor, Level, MonitorEvent
from risutools.replay.monitor_checker import MONITOR_INVARIANTS, MonitorChecker
from risutools.replay.run import ReplayRun, build_report, replay_cutter, replay_monitor
from risutools.replay.verdicts import Verdict, summary_verdict
from risutools.settings.replay import build_config, load_replay_config

FIX = ROOT / "fixtures" / "replay"


# ---- the verdict rule ---------------------------------------------------------------


def test_a_verdict_needs_a_check() -> None:
    assert Verdict("R1").to_dict()["verdict"] == "not-checked"
    v = Verdict("R1", checked=3)
    assert v.to_dict()["verdict"] == "passed"
    v.fail(2, "x")
    assert v.to_dict()["verdict"] == "failed"
    assert summary_verdict([]) == "not-checked"
    assert summary_verdict(["not-checked", "not-checked"]) == "not-checked"
    assert summary_verdict(["not-checked", "passed"]) == "passed"
    assert summary_verdict(["passed", "failed", "not-checked"]) == "failed"


def _monitor_component(tmp: Path) -> Path:
    doc = json.loads(SEED.read_text(encoding="utf-8"))
    doc["capabilities"]["provides"] = ["context.monitor"]
    comp = tmp / "monitor.json"
    comp.write_text(json.dumps(doc, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return comp


def test_a_replay_that_checked_nothing_is_not_checked_and_not_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run whose checkers saw no request (as for a component with nothing to check)."""
    fx = load_fixture(FIX / "monitor.yaml")
    cfg = load_replay_config(None, fx.config)
    empty = ReplayRun("context-monitor")
    report = build_report(empty, fx, cfg, None)
    assert report["summary"]["verdict"] == "not-checked"
    unchecked = ReplayRun("context-monitor", monitor_checker=MonitorChecker(cfg))
    report = build_report(unchecked, fx, cfg, None)
    assert report["summary"]["verdict"] == "not-checked"
    assert report["summary"]["not_checked_invariants"] == ["M1", "M2", "M3"]
    assert {i["verdict"] for i in report["invariants"]} == {"not-checked"}

    comp = _monitor_component(tmp_path)
    before = comp.read_bytes()
    monkeypatch.setattr(api, "run_simulation", lambda sim, fx, cfg, **_: unchecked)
    outcome = api.run_component(comp, FIX / "monitor.yaml", output=tmp_path / "r.json",
                                update=True)
    assert outcome.report is not None
    assert outcome.report["summary"]["verdict"] == "not-checked"
    assert not outcome.updated and "not recorded" in outcome.message
    assert comp.read_bytes() == before  # no "passed" written


def test_r8_without_an_anchor_loss_is_not_checked() -> None:
    fx = load_fixture(FIX / "duplicates.yaml")
    cfg = load_replay_config(None, fx.config)
    report = build_report(replay_cutter(fx, cfg), fx, cfg, None)
    r8 = next(i for i in report["invariants"] if i["id"] == "R8")
    assert (r8["verdict"], r8["requests_checked"]) == ("not-checked", 0)
    assert "R8" in report["summary"]["not_checked_invariants"]
    assert report["summary"]["verdict"] == "passed"  # the others ran and held


def test_module_off_for_the_whole_run_checks_r4_only() -> None:
    data = {
        "fixture": "conversation-v1", "name": "off", "config": {"enabled": False},
        "messages": [{"role": "user", "content": "x" * 50}],
        "turns": [{"append": [{"role": "assistant", "content": "y" * 50}]}],
    }
    fx = build_fixture(data)
    cfg = load_replay_config(None, fx.config)
    run = replay_cutter(fx, cfg)
    assert run.checker is not None
    got = {k: v.to_dict()["verdict"] for k, v in run.checker.verdicts.items()}
    assert got["R4"] == "passed"
    assert {got[k] for k in got if k != "R4"} == {"not-checked"}


# ---- broken monitors: each M invariant can fail -----------------------------------


class SwappedThresholds(ContextMonitor):  # WARNING and CRITICAL the wrong way round
    def level(self, remaining: float) -> Level:
        got = super().level(remaining)
        return {"WARNING": "CRITICAL", "CRITICAL": "WARNING"}.get(got, got)  # type: ignore[return-value]


class NoDebounce(ContextMonitor):  # alerts at every WARNING/CRITICAL request
    def observe(self, request: int, tokens: int, metrics: Metrics | None) -> MonitorEvent:
        ev = super().observe(request, tokens, metrics)
        if ev.level in ("WARNING", "CRITICAL") and not ev.alert:
            return MonitorEvent(ev.request, ev.metrics, ev.used_pct, ev.remaining_pct, ev.level,
                                True, "debounce elapsed")
        return ev


class NoEscalation(ContextMonitor):  # a rise in severity waits for the debounce
    def observe(self, request: int, tokens: int, metrics: Metrics | None) -> MonitorEvent:
        last = self.last_alert_request
        ev = super().observe(request, tokens, metrics)
        if ev.reason == "escalation" and last is not None and request - last < self.config.debounce:
            self.last_alert_request, self.last_alert_level = last, "WARNING"
            return MonitorEvent(ev.request, ev.metrics, ev.used_pct, ev.remaining_pct, ev.level,
                                False, "")
        return ev


class UsesStaleMetrics(ContextMonitor):  # ignores age_s
    def observe(self, request: int, tokens: int, metrics: Metrics | None) -> MonitorEvent:
        if metrics is not None and metrics.age_s is not None:
            metrics = Metrics(metrics.available, None, metrics.used_pct)
        return super().observe(request, tokens, metrics)


class WrongUsage(ContextMonitor):  # divides by the trim target instead of max_context
    def observe(self, request: int, tokens: int, metrics: Metrics | None) -> MonitorEvent:
        scaled = tokens * self.config.max_context // max(1, self.config.target)
        return super().observe(request, scaled, metrics)


def _monitor_run(factory: type[ContextMonitor]) -> dict[str, Any]:
    fx = load_fixture(FIX / "monitor.yaml")
    cfg = load_replay_config(None, fx.config)
    return build_report(replay_monitor(fx, cfg, factory), fx, cfg, None)


@pytest.mark.parametrize(
    ("broken", "mid", "at"),
    [
        # monitor.yaml (by hand): request 2 is the first WARNING (remaining 35)
        (SwappedThresholds, "M1", 2),
        # request 3: WARNING one request after the first alert
        (NoDebounce, "M2", 3),
        # request 8: CRITICAL one request after the alert at 7: the rise fires at once
        (NoEscalation, "M2", 8),
        # request 4: 75 s old metrics, 90 % used
        (UsesStaleMetrics, "M3", 4),
    ],
)
def test_broken_monitor_is_caught(broken: type[ContextMonitor], mid: str, at: int) -> None:
    assert _monitor_run(ContextMonitor)["summary"]["verdict"] == "passed"
    report = _monitor_run(broken)
    inv = {i["id"]: i for i in report["invariants"]}
    assert inv[mid]["verdict"] == "failed", inv
    assert inv[mid]["first_failure"]["request"] == at
    assert report["summary"]["verdict"] == "failed"
    assert mid in report["summary"]["failed_invariants"]


def test_m1_checks_the_usage_from_the_estimate() -> None:
    """With the cutter: no metrics in the fixture, the usage comes from tokens out."""
    fx = load_fixture(FIX / "toggle.yaml")
    cfg = load_replay_config(None, fx.config)
    good = build_report(replay_cutter(fx, cfg), fx, cfg, None)
    assert {i["id"]: i["verdict"] for i in good["invariants"]}["M1"] == "passed"
    bad = build_report(replay_cutter(fx, cfg, monitor_factory=WrongUsage), fx, cfg, None)
    m1 = next(i for i in bad["invariants"] if i["id"] == "M1")
    assert m1["verdict"] == "failed" and "fed" in m1["first_failure"]["detail"]
    assert bad["summary"]["verdict"] == "failed"


def test_every_invariant_id_has_a_failing_test_here_or_in_test_replay_invariants() -> None:
    here = Path(__file__).read_text(encoding="utf-8")
    other = (Path(__file__).parent / "test_replay_invariants.py").read_text(encoding="utf-8")
    for mid in MONITOR_INVARIANTS:
        assert f'"{mid}", ' in here, mid
    for rid in InvariantChecker(build_config({})).verdicts:
        assert f'"{rid}", ' in other, rid


# ---- a monitor-only component --------------------------------------------------------


def test_monitor_only_component_is_checked_and_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    comp = _monitor_component(tmp_path)
    out = tmp_path / "r.json"
    outcome = api.run_component(comp, FIX / "monitor.yaml", output=out, update=True)
    assert outcome.simulation == "context-monitor" and outcome.updated
    assert outcome.report is not None
    checked = {i["id"]: i["requests_checked"] for i in outcome.report["invariants"]}
    assert checked == {"M1": 12, "M2": 12, "M3": 2}
    doc = json.loads(comp.read_text(encoding="utf-8"))
    assert doc["projection"]["replay_status"] == "passed"
    # the same component with a monitor that ignores the debounce: recorded as failed
    monkeypatch.setattr(api, "run_simulation",
                        lambda sim, f, c, **_: replay_monitor(f, c, NoDebounce))
    outcome = api.run_component(comp, FIX / "monitor.yaml", output=out, update=True)
    assert outcome.report is not None and outcome.report["summary"]["failed_invariants"] == ["M2"]
    doc = json.loads(comp.read_text(encoding="utf-8"))
    assert doc["projection"]["replay_status"] == "failed"
    assert doc["provenance"]["availability_verdict"] == "unavailable"


def test_markdown_names_not_checked_and_the_failing_request() -> None:
    from risutools.replay.fixture import parse_fixture_bytes
    from risutools.replay.render_markdown import render_markdown
    from tests.test_replay_browser import RESURRECT

    fx = parse_fixture_bytes(RESURRECT.encode(), "resurrect.yaml")
    cfg = load_replay_config(None, fx.config)
    md = render_markdown(build_report(replay_cutter(fx, cfg), fx, cfg, None))
    assert "| **3** (first failure of R5) |" in md
    assert "| R8 | not checked (no request applied) |" not in md  # R8 was checked here
    empty = build_report(ReplayRun("context-monitor"), fx, cfg, None)
    assert "nothing was verified" in render_markdown(empty)
    assert "nothing was verified" not in md
