"""The context monitor's invariants M1-M3, one unit each: written from the spec, apart from
``monitor.py`` (``docs/replay.md``).

The monitor is an observer, but its observations can be wrong: a wrong level, an alert
fired inside the debounce (or missed after it), an alert on stale metrics.  Each
invariant is a function decorated with :func:`~risutools.checks.registry.check` (its
docstring is its documentation, ``report_text`` the line a replay report prints beside
its verdict) over one request as the checker read it (:class:`MonitorRequest`: what the
monitor reported, the usage it was fed and the level that usage calls for); it answers
:data:`~risutools.replay.verdicts.SKIP` (it does not apply), ``HELD`` or the failure's
detail.  :class:`~risutools.replay.monitor_checker.MonitorChecker` reads each request with
:func:`read_request` and calls every unit the registry hands it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from risutools.checks.registry import Check, check
from risutools.replay.fixture import Metrics
from risutools.replay.verdicts import HELD, SKIP, Answer
from risutools.settings.replay import ReplayConfig

#: the family of the units below (the checker asks the registry for it)
FAMILY = "M"

_SEVERITY = {"NORMAL": 0, "WARNING": 1, "CRITICAL": 2}
_TOLERANCE = 0.001  # percentage points: the monitor reports 4 decimals


@dataclass(slots=True)
class MonitorRequest:
    """One request of the monitor, as its invariants read it."""

    request: int
    metrics: str  # "fresh", "stale" or "missing": what the turn's metrics were
    event: dict[str, Any]  # the monitor's row (``MonitorEvent.to_dict``)
    used: float = 0.0  # the share the usage fed calls for (fresh metrics)
    reported: bool = False  # the row reports fresh metrics with both figures
    far: bool = False  # ... and they differ from the usage fed (beyond the 4 decimals)
    seen: float = 0.0  # the remaining share that decides the level (4 decimals when reported)
    want: str = "NORMAL"  # the level that share calls for
    last_alert: tuple[int, str] | None = None  # request, level of the last alert raised


def read_request(config: ReplayConfig, request: int, tokens: int, metrics: Metrics | None,
                 event: dict[str, Any], last_alert: tuple[int, str] | None) -> MonitorRequest:
    """``tokens`` the usage fed, ``event`` the monitor's row, ``last_alert`` taken from the
    alerts the monitor actually raised (so one wrong alert fails once)."""
    if metrics is not None and (
        not metrics.available
        or (metrics.age_s is not None and metrics.age_s > config.stale_s)
    ):
        kind = "missing" if not metrics.available else "stale"
        return MonitorRequest(request, kind, event, last_alert=last_alert)
    used, reported, far, seen, want = _fresh(config, tokens, metrics, event)
    return MonitorRequest(request, "fresh", event, used, reported, far, seen, want, last_alert)


def _fresh(config: ReplayConfig, tokens: int, metrics: Metrics | None,
           event: dict[str, Any]) -> tuple[float, bool, bool, float, str]:
    """:func:`read_request`'s reading of a request with fresh metrics: (used, reported,
    far, seen, want) as :class:`MonitorRequest` names them."""
    if metrics is not None and metrics.used_pct is not None:
        used = metrics.used_pct
    else:
        used = 100 * tokens / config.max_context
    remaining = 100 - used
    got_used, got_remaining = event.get("used_pct"), event.get("remaining_pct")
    reported = far = False
    seen = remaining
    if event.get("metrics") == "fresh" and got_used is not None and got_remaining is not None:
        reported = True
        far = abs(got_used - used) > _TOLERANCE or abs(got_remaining - remaining) > _TOLERANCE
        if not far:
            seen = float(got_remaining)  # the 4-decimal figure decides ties
    want = (
        "CRITICAL" if seen <= config.critical_pct
        else "WARNING" if seen <= config.warning_pct
        else "NORMAL"
    )
    return used, reported, far, seen, want


@check("M1", "error", "replay", "monitor-level",
       report_text="the level follows the thresholds on the usage the monitor was fed")
def monitor_level(c: ReplayConfig, r: MonitorRequest) -> Answer:
    """On requests with fresh metrics, used_pct is 100 * tokens / max_context (or the turn's
    figure) to 4 decimals, remaining_pct is 100 - used_pct, and the level follows the
    thresholds on that share.

    Why: A monitor that misreads the usage warns too late or cries wolf.

    Fix: Compute the share from the usage fed and compare it with the configured thresholds.
    """
    if r.metrics != "fresh":
        return SKIP
    ev = r.event
    if not r.reported:
        return f"fresh metrics ({r.used:.4f} % used), but no usage reported"
    if r.far:
        return f"usage {ev.get('used_pct')} % reported, {r.used:.4f} % fed"
    if ev.get("level") != r.want:
        return (f"level {ev.get('level')} at {r.seen:g} % remaining, expected {r.want} "
                f"(warning <= {c.warning_pct:g}, critical <= {c.critical_pct:g})")
    return HELD


@check("M2", "error", "replay", "monitor-alerts",
       report_text="alerts: the first WARNING/CRITICAL at once, a later one only after "
       "`debounce` requests or on a rise in severity, none at NORMAL")
def monitor_alerts(c: ReplayConfig, r: MonitorRequest) -> Answer:
    """On requests with fresh metrics, an alert fires exactly when the level is
    WARNING/CRITICAL and it is the first alert, or above the last alert's level, or
    `debounce` requests have passed since the last alert.

    Why: Missing alerts hide a full context; repeated ones train the user to ignore them.

    Fix: Keep the last alert's request and level, and debounce as the spec says.

    The level is the one the usage fed calls for (M1's), so a wrong level fails M1 only.
    """
    if r.metrics != "fresh":
        return SKIP
    due = _due(c, r.request, r.want, r.last_alert)
    if bool(r.event.get("alert")) != due:
        return ("no alert" if due else "an alert") + f" ({_why_due(c, r)})"
    return HELD


def _due(c: ReplayConfig, request: int, level: str, last: tuple[int, str] | None) -> bool:
    """Whether an alert is due at ``request`` whose usage calls for ``level``, ``last`` the
    last alert raised (request, level)."""
    if level == "NORMAL":
        return False
    if last is None or _SEVERITY[level] > _SEVERITY.get(last[1], 0):  # first, or a rise
        return True
    return request - last[0] >= c.debounce


def _why_due(c: ReplayConfig, r: MonitorRequest) -> str:
    """Why an alert was due or not at ``r`` (:func:`monitor_alerts`' cases, in its order),
    spelled only when it failed."""
    last, level = r.last_alert, r.want
    if level == "NORMAL":
        return "at NORMAL"
    if last is None:
        return "first WARNING/CRITICAL"
    if _SEVERITY[level] > _SEVERITY.get(last[1], 0):
        return f"escalation {last[1]} -> {level}"
    elapsed = r.request - last[0]
    return f"{elapsed} request(s) since the last alert, debounce {c.debounce}"


@check("M3", "error", "replay", "monitor-stale",
       report_text="stale or missing metrics: no level, no usage, no alert")
def monitor_stale(c: ReplayConfig, r: MonitorRequest) -> Answer:
    """On requests with stale or missing metrics: no level, no usage, no alert.

    Why: A figure computed from stale metrics reports a usage that is not the current one.

    Fix: Report nothing until fresh metrics arrive.
    """
    kind, ev = r.metrics, r.event
    if kind == "fresh":
        return SKIP
    if ev.get("metrics") != kind:
        return f"{kind} metrics reported as {ev.get('metrics')!r}"
    if ev.get("level") is not None or ev.get("used_pct") is not None:
        return f"{kind} metrics, yet level {ev.get('level')!r} was given"
    if ev.get("alert"):
        return f"alert on {kind} metrics"
    return HELD


#: the units above, in report order: when the registry hands the checker exactly these, it
#: asks :func:`held_fresh` first at each request and the units only when that cannot tell
STANDARD: tuple[Check, ...] = (monitor_level, monitor_alerts, monitor_stale)
#: the units :func:`held_fresh` answers for (HELD; M3 does not apply)
HELD_WHEN_FRESH: tuple[str, ...] = (monitor_level.id, monitor_alerts.id)


def held_fresh(config: ReplayConfig, request: int, tokens: int, metrics: Metrics | None,
               event: dict[str, Any], last_alert: tuple[int, str] | None) -> bool:
    """Whether the request has fresh metrics and M1 and M2 hold at it (M3 then does not
    apply): their passing cases over :func:`read_request`'s reading (:func:`_fresh`,
    :func:`_due`, written out here: once a request), tested together and without their
    details.  False says only "ask the units" (a key of the row missing too)."""
    try:
        reported = (event["metrics"], event["used_pct"], event["remaining_pct"],
                    event["level"], event["alert"])
    except KeyError:
        return False
    return held_fresh_of(config, request, tokens, metrics, reported, last_alert)


def held_fresh_of(config: ReplayConfig, request: int, tokens: int, metrics: Metrics | None,
                  reported: tuple[Any, Any, Any, Any, Any],
                  last_alert: tuple[int, str] | None) -> bool:
    """:func:`held_fresh` of the row's ``metrics``, ``used_pct``, ``remaining_pct``,
    ``level`` and ``alert`` (``reported``, in that order)."""
    if metrics is None:
        used = 100 * tokens / config.max_context
    elif not metrics.available or (metrics.age_s is not None
                                   and metrics.age_s > config.stale_s):
        return False
    elif metrics.used_pct is not None:
        used = metrics.used_pct
    else:
        used = 100 * tokens / config.max_context
    kind, got_used, got_remaining, level, alert = reported
    if kind != "fresh" or got_used is None or got_remaining is None:
        return False  # (not reported)
    if (abs(got_used - used) > _TOLERANCE
            or abs(got_remaining - (100 - used)) > _TOLERANCE):
        return False  # (far)
    seen = float(got_remaining)
    want = ("CRITICAL" if seen <= config.critical_pct
            else "WARNING" if seen <= config.warning_pct else "NORMAL")
    if level != want:
        return False
    alert = bool(alert)
    if want == "NORMAL":
        return not alert
    if last_alert is None or _SEVERITY[want] > _SEVERITY.get(last_alert[1], 0):
        return alert
    return alert == (request - last_alert[0] >= config.debounce)
