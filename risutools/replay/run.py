"""Run a replay: fixture + configuration (+ component) -> ``replay-report-v1``.

Which reference simulation applies is decided by the component's
``capabilities.provides``: any of ``context.token_budget``,
``context.anchor_continuity``, ``context.protected_roles`` selects the context
cutter (with the monitor observing); otherwise ``context.monitor`` selects the
monitor alone; otherwise there is no applicable simulation.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from risutools import __version__
from risutools.canonical import indented, self_hash
from risutools.checks.registry import registered_checks
from risutools.errors import ReplayError
from risutools.replay.checker import INVARIANTS, InvariantChecker
from risutools.replay.cutter import ContextCutter, CutResult
from risutools.replay.fixture import Fixture, Message, Turn
from risutools.replay.mirror import Change, Step
from risutools.replay.monitor import ContextMonitor, additional_context
from risutools.replay.monitor_checker import MonitorChecker
from risutools.replay.verdicts import FAILED, NOT_CHECKED, PASSED, summary_verdict
from risutools.settings.lifecycle import base_sha256
from risutools.settings.replay import ReplayConfig

REPORT_TAG = "replay-report-v1"
CUTTER_CAPS = ("context.anchor_continuity", "context.protected_roles", "context.token_budget")
MONITOR_CAP = "context.monitor"
SIM_CUTTER = "context-cutter"
SIM_MONITOR = "context-monitor"


def select_simulation(doc: dict[str, Any]) -> str | None:
    caps = doc.get("capabilities")
    provides = caps.get("provides") if isinstance(caps, dict) else None
    names = {p for p in provides if isinstance(p, str)} if isinstance(provides, list) else set()
    if names & set(CUTTER_CAPS):
        return SIM_CUTTER
    if MONITOR_CAP in names:
        return SIM_MONITOR
    return None


@dataclass
class ReplayRun:
    simulation: str
    rows: list[dict[str, Any]] = field(default_factory=list)
    checker: InvariantChecker | None = None
    monitor_checker: MonitorChecker | None = None


def apply_turn(cutter: ContextCutter, turn: Turn) -> None:
    for m in turn.append:
        cutter.append(m)
    for mid, content in turn.edit:
        cutter.edit(mid, content)
    for mid in turn.delete:
        cutter.delete(mid)


def iterate_cutter(
    fixture: Fixture,
    config: ReplayConfig,
    cutter_factory: Callable[[ReplayConfig], ContextCutter] = ContextCutter,
    *,
    observe: bool = True,
) -> Iterator[tuple[Turn, CutResult, Step | Change | None]]:
    """Yield (turn, result, observation) per request; observations are None if not ``observe``.

    The observation is a :class:`Change` (the turn's operations from the fixture and
    the cutter's ``output_delta``: O(change) per request) unless the cutter's class
    overrides ``output()``, whose whole list is then observed as a :class:`Step`.
    """
    cutter = cutter_factory(config)
    for m in fixture.messages:
        cutter.append(m)
    by_delta = type(cutter).output is ContextCutter.output
    # The checker's view of the input is rebuilt here from the fixture, not read
    # from the cutter's own mirror: a cutter that mishandles an edit or a delete
    # must not also hand the checker the history it got wrong.
    history: dict[str, Message] = {} if by_delta else {m.id: m for m in fixture.messages}
    pending: list[Message] = list(fixture.messages)
    enabled = config.enabled
    for turn in fixture.turns:
        try:
            apply_turn(cutter, turn)
        except ReplayError as exc:  # from the mirror: name the turn
            exc.where = f"turn {turn.number}"
            raise
        if turn.toggle is not None:
            enabled = turn.toggle
        result = cutter.request(enabled)
        obs: Step | Change | None = None
        if observe and by_delta:
            sent, withdrawn = cutter.output_delta(result)
            obs = Change(
                turn.number, enabled, [*pending, *turn.append], list(turn.edit),
                list(turn.delete), sent, withdrawn, result.budget_unreachable,
            )
            pending = []
        elif observe:
            _apply_plain(history, turn)
            obs = Step(
                turn.number,
                enabled,
                list(history.values()),
                cutter.output(result),
                result.budget_unreachable,
            )
        yield turn, result, obs


def _apply_plain(history: dict[str, Message], turn: Turn) -> None:
    """The turn's operations on a plain id -> message mapping (insertion order kept)."""
    for m in turn.append:
        history[m.id] = m
    for mid, content in turn.edit:
        old = history[mid]
        history[mid] = Message(mid, old.role, content)
    for mid in turn.delete:
        del history[mid]


def _ops(turn: Turn) -> dict[str, Any]:
    return {
        "appended": len(turn.append),
        "edited": len(turn.edit),
        "deleted": len(turn.delete),
        "toggle": turn.toggle,
    }


def replay_cutter(
    fixture: Fixture,
    config: ReplayConfig,
    cutter_factory: Callable[[ReplayConfig], ContextCutter] = ContextCutter,
    monitor_factory: Callable[[ReplayConfig], ContextMonitor] = ContextMonitor,
) -> ReplayRun:
    """The cutter, checked (R1-R9), with the monitor observing it, checked too (M1-M3)."""
    checker, mcheck = InvariantChecker(config), MonitorChecker(config)
    run = ReplayRun(SIM_CUTTER, checker=checker, monitor_checker=mcheck)
    monitor = monitor_factory(config)
    for turn, res, obs in iterate_cutter(fixture, config, cutter_factory):
        assert obs is not None
        checker.check(obs)
        ev = monitor.observe(turn.number, res.tokens_out, turn.metrics).to_dict()
        mcheck.check(turn.number, res.tokens_out, turn.metrics, ev)
        run.rows.append(_cutter_row(turn, res, ev))
    return run


def _cutter_row(turn: Turn, res: CutResult, ev: dict[str, Any]) -> dict[str, Any]:
    return {
        "request": turn.number,
        "ops": _ops(turn),
        "enabled": res.enabled,
        "messages_in": res.messages_in,
        "messages_out": res.messages_out,
        "tokens_in": res.tokens_in,
        "tokens_out": res.tokens_out,
        "removable": res.removable,
        "dropped": res.dropped,
        "continuity_dropped": res.continuity_dropped,
        "budget_dropped": res.budget_dropped,
        "anchor": res.anchor,
        "fallback": res.fallback,
        "budget_unreachable": res.budget_unreachable,
        "orphaned_tool_results": res.orphaned_tool_results,
        "state": res.state.to_dict(),
        "monitor": ev,
    }


def replay_monitor(
    fixture: Fixture,
    config: ReplayConfig,
    monitor_factory: Callable[[ReplayConfig], ContextMonitor] = ContextMonitor,
) -> ReplayRun:
    """The monitor alone: usage = the whole history's estimate (nothing is cut); M1-M3."""
    mcheck = MonitorChecker(config)
    run = ReplayRun(SIM_MONITOR, monitor_checker=mcheck)
    monitor = monitor_factory(config)
    for turn, res, _ in iterate_cutter(fixture, config, observe=False):
        ev = monitor.observe(turn.number, res.tokens_in, turn.metrics).to_dict()
        mcheck.check(turn.number, res.tokens_in, turn.metrics, ev)
        run.rows.append(
            {
                "request": turn.number,
                "ops": _ops(turn),
                "messages_in": res.messages_in,
                "tokens_in": res.tokens_in,
                "monitor": ev,
            }
        )
    return run


def run_simulation(simulation: str, fixture: Fixture, config: ReplayConfig) -> ReplayRun:
    if simulation == SIM_CUTTER:
        return replay_cutter(fixture, config)
    if simulation == SIM_MONITOR:
        return replay_monitor(fixture, config)
    raise ValueError(simulation)


def build_report(
    run: ReplayRun,
    fixture: Fixture,
    config: ReplayConfig,
    component: dict[str, Any] | None,
) -> dict[str, Any]:
    """The ``replay-report-v1`` of a run, its ``report_sha256`` included."""
    rows = run.rows
    alerts = _alerts(rows)
    invariants = _invariants(run)
    comp = _component(component)
    report: dict[str, Any] = {
        "report": REPORT_TAG,
        "tool": {"name": "risutools", "version": __version__},
        "simulation": run.simulation,
        "component_id": comp["component_id"] if comp else None,
        "component": comp,
        "fixture": {"name": fixture.name, "file": fixture.file, "sha256": fixture.sha256},
        "config": config.to_dict(),
        "summary": _summary(run, alerts, invariants),
        "invariants": invariants,
        "alerts": alerts,
        "requests": rows,
    }
    notes = [t.metrics.note for t in fixture.turns if t.metrics is not None and t.metrics.note]
    if notes:  # bridge records whose two percentages disagree, one line each
        report["monitor_notes"] = notes
    report["report_sha256"] = self_hash(report)
    return report


def _alerts(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            "request": r["request"],
            "level": r["monitor"]["level"],
            "used_pct": r["monitor"]["used_pct"],
            "reason": r["monitor"]["alert_reason"],
            "additional_context": additional_context(r["monitor"]["level"],
                                                     r["monitor"]["used_pct"]),
        }
        for r in rows
        if r["monitor"]["alert"]
    ]


def _invariants(run: ReplayRun) -> list[dict[str, Any]]:
    """The verdicts of the checkers that ran: R1-R9 (the cutter), then M1-M3."""
    invariants: list[dict[str, Any]] = []
    if run.checker is not None:
        invariants = [run.checker.verdicts[k].to_dict() for k in INVARIANTS]
    if run.monitor_checker is not None:
        invariants += run.monitor_checker.to_dicts()
    return invariants


def _summary(run: ReplayRun, alerts: list[dict[str, Any]],
             invariants: list[dict[str, Any]]) -> dict[str, Any]:
    rows = run.rows
    checks = registered_checks()
    warned = [i["id"] for i in invariants
              if i["verdict"] == FAILED and checks[i["id"]].severity == "warning"]
    summary: dict[str, Any] = {
        "requests": len(rows),
        "alerts": len(alerts),
        "peak_tokens_in": max((r["tokens_in"] for r in rows), default=0),
        # a warning that failed was checked: it neither fails the replay nor leaves it
        # unchecked
        "verdict": summary_verdict(PASSED if i["id"] in warned else i["verdict"]
                                   for i in invariants),
        "failed_invariants": [i["id"] for i in invariants
                              if i["verdict"] == FAILED and i["id"] not in warned],
        "warned_invariants": warned,
        "not_checked_invariants": [i["id"] for i in invariants if i["verdict"] == NOT_CHECKED],
    }
    if run.simulation == SIM_CUTTER:
        summary.update(_cutter_summary(rows))
    return summary


def _cutter_summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "cuts": sum(1 for r in rows if r["budget_dropped"] > 0),
        "anchor_losses": sum(1 for r in rows if r["anchor"] == "lost"),
        "budget_unreachable": sum(1 for r in rows if r["budget_unreachable"]),
        "disabled_requests": sum(1 for r in rows if not r["enabled"]),
        "peak_tokens_out": max((r["tokens_out"] for r in rows), default=0),
        "max_dropped": max((r["dropped"] for r in rows), default=0),
        "requests_with_orphaned_tool_results": sum(
            1 for r in rows if r["orphaned_tool_results"]
        ),
    }


def _component(component: dict[str, Any] | None) -> dict[str, Any] | None:
    """Which document was replayed (None for the monitor alone), by its base hash (what
    ``risutools hash`` prints and approvals name)."""
    if component is None:
        return None
    return {
        "component_id": component.get("component_id"),
        "component_version": component.get("component_version"),
        "doc_sha256": base_sha256(component),
    }


def verify_report_hash(report: dict[str, Any]) -> bool:
    return report.get("report_sha256") == self_hash(report)


def report_bytes(report: dict[str, Any]) -> bytes:
    """The report file's bytes: indented JSON, keys sorted (orjson when it writes the same)."""
    return indented(report)
