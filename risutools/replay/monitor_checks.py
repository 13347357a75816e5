"""The monitor's own checks M1-M3: written from the spec, separate from ``monitor.py``.

The monitor is an observer, but its observations can be wrong: a wrong level,
an alert fired inside the debounce (or missed after it), an alert on stale
metrics.  These are checked per request from what the monitor reported and
the usage it was fed, so a replay of the monitor alone has a verdict that
comes from checks that ran (never a default "passed").  The alert state (the
last alert's request and level) is taken from the alerts the monitor actually
raised, so one wrong alert fails once instead of shifting every later one.

* M1 (requests with fresh metrics): ``used_pct`` is ``100 * tokens / max_context``
  (or the turn's own figure) to 4 decimals, ``remaining_pct`` is ``100 - used_pct``,
  and the level follows the thresholds on that remaining share.
* M2 (requests with fresh metrics): an alert fires exactly when the level is
  WARNING/CRITICAL and it is the first alert, or it is above the last alert's level,
  or ``debounce`` requests have passed since the last alert.
* M3 (requests with stale or missing metrics): no level, no usage, no alert.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from risutools.checks.replay import M1, M2, M3, MONITOR
from risutools.replay.fixture import Metrics
from risutools.replay.invariants import Verdict
from risutools.settings.replay import ReplayConfig

#: the monitor invariants' ids (declared in ``risutools.checks.replay``)
MONITOR_INVARIANTS: tuple[str, ...] = tuple(c.id for c in MONITOR)

_SEVERITY = {"NORMAL": 0, "WARNING": 1, "CRITICAL": 2}
_TOLERANCE = 0.001  # percentage points: the monitor reports 4 decimals


@dataclass
class MonitorChecker:
    config: ReplayConfig
    verdicts: dict[str, Verdict] = field(default_factory=dict)
    _last_alert: tuple[int, str] | None = None  # request, level of the last alert raised

    def __post_init__(self) -> None:
        self.verdicts = {k: Verdict(k) for k in MONITOR_INVARIANTS}

    def failed(self) -> list[str]:
        return [k for k, v in self.verdicts.items() if v.failures]

    def to_dicts(self) -> list[dict[str, Any]]:
        return [v.to_dict() for v in self.verdicts.values()]

    def check(
        self, request: int, tokens: int, metrics: Metrics | None, event: dict[str, Any]
    ) -> None:
        """One request: ``tokens`` the usage fed, ``event`` the monitor's row (``to_dict``)."""
        if metrics is not None and (
            not metrics.available
            or (metrics.age_s is not None and metrics.age_s > self.config.stale_s)
        ):
            self._check_ignored(request, metrics, event)
        else:
            level = self._check_level(request, tokens, metrics, event)
            self._check_alert(request, level, event)
        if event.get("alert"):
            self._last_alert = (request, str(event.get("level")))

    def _check_ignored(self, request: int, metrics: Metrics, event: dict[str, Any]) -> None:
        v = self.verdicts[M3.id]
        v.checked += 1
        kind = "missing" if not metrics.available else "stale"
        if event.get("metrics") != kind:
            v.fail(request, f"{kind} metrics reported as {event.get('metrics')!r}")
        elif event.get("level") is not None or event.get("used_pct") is not None:
            v.fail(request, f"{kind} metrics, yet level {event.get('level')!r} was given")
        elif event.get("alert"):
            v.fail(request, f"alert on {kind} metrics")

    def _check_level(
        self, request: int, tokens: int, metrics: Metrics | None, event: dict[str, Any]
    ) -> str:
        """M1; returns the level the spec asks for (from the usage fed)."""
        v = self.verdicts[M1.id]
        v.checked += 1
        c = self.config
        if metrics is not None and metrics.used_pct is not None:
            used = metrics.used_pct
        else:
            used = 100 * tokens / c.max_context
        remaining = 100 - used
        got_used, got_remaining = event.get("used_pct"), event.get("remaining_pct")
        problem = ""
        remaining_seen = remaining
        if event.get("metrics") != "fresh" or got_used is None or got_remaining is None:
            problem = f"fresh metrics ({used:.4f} % used), but no usage reported"
        elif abs(got_used - used) > _TOLERANCE or abs(got_remaining - remaining) > _TOLERANCE:
            problem = f"usage {got_used} % reported, {used:.4f} % fed"
        else:
            remaining_seen = float(got_remaining)  # the 4-decimal figure decides ties
        want = (
            "CRITICAL" if remaining_seen <= c.critical_pct
            else "WARNING" if remaining_seen <= c.warning_pct
            else "NORMAL"
        )
        if not problem and event.get("level") != want:
            problem = (
                f"level {event.get('level')} at {remaining_seen:g} % remaining, expected {want} "
                f"(warning <= {c.warning_pct:g}, critical <= {c.critical_pct:g})"
            )
        if problem:
            v.fail(request, problem)
        return want

    def _check_alert(self, request: int, level: str, event: dict[str, Any]) -> None:
        v = self.verdicts[M2.id]
        v.checked += 1
        last = self._last_alert
        if level == "NORMAL":
            due, why = False, "at NORMAL"
        elif last is None:
            due, why = True, "first WARNING/CRITICAL"
        elif _SEVERITY[level] > _SEVERITY.get(last[1], 0):
            due, why = True, f"escalation {last[1]} -> {level}"
        else:
            elapsed = request - last[0]
            due = elapsed >= self.config.debounce
            why = f"{elapsed} request(s) since the last alert, debounce {self.config.debounce}"
        if bool(event.get("alert")) != due:
            v.fail(request, ("no alert" if due else "an alert") + f" ({why})")
