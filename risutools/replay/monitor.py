"""The context monitor (seed 003): usage levels and debounced alerts.

Fed once per request with the usage it sees.  ``used_pct = 100 * tokens /
max_context`` (or the ``used_pct`` the fixture's metrics give), ``remaining =
100 - used_pct``.  Levels: ``NORMAL`` when remaining > ``warning_pct``,
``WARNING`` when remaining <= ``warning_pct``, ``CRITICAL`` when remaining <=
``critical_pct``.

Alerts: the first WARNING/CRITICAL alert fires at once; a later one needs
``debounce`` requests since the last alert (request numbers differ by at least
``debounce``); a level above the last alert's level (WARNING -> CRITICAL)
fires at once.  Metrics older than ``stale_s`` seconds are ignored (no level,
no alert), and a request without metrics is tolerated the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial
from itertools import starmap
from typing import Any, Literal, NamedTuple

from risutools.replay.fixture import Metrics
from risutools.settings.replay import ReplayConfig

Level = Literal["NORMAL", "WARNING", "CRITICAL"]
_RANK: dict[str, int] = {"NORMAL": 0, "WARNING": 1, "CRITICAL": 2}


class MonitorEvent(NamedTuple):
    """What the monitor saw at one request (immutable, made once a request: a named tuple,
    whose fields cost no call each as a frozen dataclass's do)."""

    request: int
    metrics: Literal["fresh", "stale", "missing"]
    used_pct: float | None
    remaining_pct: float | None
    level: Level | None
    alert: bool
    reason: str  # "first", "debounce elapsed", "escalation", "" (no alert)

    def to_dict(self) -> dict[str, object]:
        return {
            "metrics": self.metrics,
            "used_pct": self.used_pct,
            "remaining_pct": self.remaining_pct,
            "level": self.level,
            "alert": self.alert,
            "alert_reason": self.reason or None,
        }


def additional_context(level: str, used_pct: float) -> str:
    """The ``additionalContext`` text an alert of ``level`` injects into the agent's context
    (what a reviewer reads in the report, as the agent would)."""
    head = f"Context {used_pct:.1f}% used, {100.0 - used_pct:.1f}% left: "
    if level == "CRITICAL":
        return head + "stop now and save your state (what is done, what comes next)."
    return head + "finish the current task; start nothing complex."


class ContextMonitor:
    def __init__(self, config: ReplayConfig) -> None:
        self.config = config
        self.last_alert_request: int | None = None
        self.last_alert_level: Level | None = None
        #: the used and remaining shares of a usage in tokens, by (tokens, max_context)
        self._shares: dict[tuple[int, int], tuple[float, float]] = {}
        #: the used and remaining shares and the level of a usage in tokens seen without
        #: metrics, by tokens, under the configuration it holds (:func:`observe_many`)
        self._levels: tuple[ReplayConfig, dict[int, tuple[float | None, float | None, Level]]] = (
            config, {})

    def level(self, remaining: float) -> Level:
        if remaining <= self.config.critical_pct:
            return "CRITICAL"
        if remaining <= self.config.warning_pct:
            return "WARNING"
        return "NORMAL"

    def observe(self, request: int, tokens: int, metrics: Metrics | None) -> MonitorEvent:
        """One check after request ``request`` (1-based) that estimated ``tokens``."""
        c = self.config
        if metrics is not None and not metrics.available:
            return _event((request, "missing", None, None, None, False, ""))
        if metrics is not None and metrics.age_s is not None and metrics.age_s > c.stale_s:
            return _event((request, "stale", None, None, None, False, ""))
        if metrics is not None and metrics.used_pct is not None:
            used, remaining = _shares(metrics.used_pct)
        elif type(tokens) is int:
            # (a usage seen before: its two figures as they were, not rounded again)
            key = (tokens, c.max_context)
            shares = self._shares.get(key)
            if shares is None:
                shares = self._shares[key] = _shares(100.0 * tokens / c.max_context)
            used, remaining = shares
        else:
            used, remaining = _shares(100.0 * tokens / c.max_context)
        lvl = self.level(remaining)
        reason = "" if lvl == "NORMAL" else self._alert(request, lvl)
        return _event((request, "fresh", used, remaining, lvl, bool(reason), reason))

    def _alert(self, request: int, lvl: Level) -> str:
        """The reason of the alert a level other than NORMAL raises at ``request`` ("" for
        none: the last one too recent, not below this level), the last alert's request and
        level then this one's."""
        reason = ""
        if self.last_alert_request is None or self.last_alert_level is None:
            reason = "first"
        elif _RANK[lvl] > _RANK[self.last_alert_level]:
            reason = "escalation"
        elif request - self.last_alert_request >= self.config.debounce:
            reason = "debounce elapsed"
        if reason:
            self.last_alert_request = request
            self.last_alert_level = lvl
        return reason


def observe_many(monitor: ContextMonitor, seen: Iterable[tuple[int, int, Metrics | None]]
                 ) -> list[MonitorEvent]:
    """``monitor.observe(request, tokens, metrics)`` of each of ``seen`` in turn; a
    :class:`ContextMonitor`'s own (its methods not overridden) in one loop, a request
    without metrics whose usage (its tokens) was seen before without a call of ``observe``
    (its figures and level as they were then: one level a usage)."""
    cls = type(monitor)
    if (cls.observe is not ContextMonitor.observe or cls.level is not ContextMonitor.level
            or cls._alert is not ContextMonitor._alert):
        return list(starmap(monitor.observe, seen))
    c, out = monitor.config, []
    if monitor._levels[0] is not c:  # (another configuration: its levels are others)
        monitor._levels = (c, {})
    levels, debounce = monitor._levels[1], c.debounce
    for request, used_tokens, m in seen:
        plain = m is None and type(used_tokens) is int
        known = levels.get(used_tokens) if plain else None
        if known is None:
            ev = monitor.observe(request, used_tokens, m)
            if plain and ev.level is not None:  # (its figures and level, as observe found them)
                levels[used_tokens] = (ev.used_pct, ev.remaining_pct, ev.level)
            out.append(ev)
            continue
        used, remaining, lvl = known
        last = monitor.last_alert_request
        if lvl == "NORMAL" or (lvl == monitor.last_alert_level and last is not None
                               and request - last < debounce):
            reason = ""  # (no alert: the last one at this level too recent, as _alert says)
        else:
            reason = monitor._alert(request, lvl)
        out.append(_event((request, "fresh", used, remaining, lvl, bool(reason), reason)))
    return out


def _shares(used: float) -> tuple[float, float]:
    """The used and remaining percentages a usage reports (4 decimals)."""
    used = round(used, 4)
    return used, round(100.0 - used, 4)


#: ``MonitorEvent(*fields)`` of a tuple of all its fields, without the named tuple's
#: ``__new__`` (a Python function: most of the cost of making one, once a request)
_event: Callable[[tuple[Any, ...]], MonitorEvent] = partial(tuple.__new__, MonitorEvent)
