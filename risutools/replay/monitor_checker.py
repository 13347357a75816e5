"""The monitor's checker: M1-M3 per request, from what the monitor reported and the usage it
was fed, so a replay of the monitor alone has a verdict that comes from checks that ran
(never a default "passed").

At each request it reads the monitor's row
(:func:`~risutools.replay.monitor_invariants.read_request`), calls every monitor invariant
the registry hands it (scope ``replay``, family ``M``: the units of
``monitor_invariants.py``) and counts each answer into that invariant's
:class:`~risutools.replay.verdicts.Verdict`.  The alert state (the last alert's request
and level) is taken from the alerts the monitor actually raised, so one wrong alert fails
once instead of shifting every later one.  When the registry hands exactly the standard
units, :func:`~risutools.replay.monitor_invariants.held_fresh` is asked first: a request
with fresh metrics where M1 and M2 hold is counted as the units would count it, and the
units are asked one by one only when it cannot tell.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Protocol

from risutools.replay.fixture import Metrics
from risutools.replay.monitor_invariants import (
    FAMILY,
    HELD_WHEN_FRESH,
    STANDARD,
    held_fresh,
    held_fresh_of,
    read_request,
)
from risutools.replay.verdicts import Tally, Verdict, invariants_of
from risutools.settings.replay import ReplayConfig

#: the monitor invariants' ids, in report order
MONITOR_INVARIANTS: tuple[str, ...] = tuple(c.id for c in invariants_of(FAMILY))


class Event(Protocol):
    """What the monitor reported at a request, by field (its row: ``to_dict``)."""

    @property
    def metrics(self) -> str: ...
    @property
    def used_pct(self) -> float | None: ...
    @property
    def remaining_pct(self) -> float | None: ...
    @property
    def level(self) -> str | None: ...
    @property
    def alert(self) -> bool: ...
    def to_dict(self) -> dict[str, object]: ...


class MonitorChecker:
    def __init__(self, config: ReplayConfig) -> None:
        self.config = config
        self._tally = Tally(FAMILY)
        self._verdicts: dict[str, Verdict] = self._tally.verdicts
        self._last_alert: tuple[int, str] | None = None  # request, level of the last alert
        #: the registry hands the standard units, in their order: :func:`held_fresh` first
        self.fused = [c.run for c in invariants_of(FAMILY)] == [c.run for c in STANDARD]
        #: requests :func:`held_fresh` answered for, not yet counted into the verdicts
        self._held = 0

    @property
    def verdicts(self) -> dict[str, Verdict]:
        """Every invariant's verdict so far (the requests :func:`held_fresh` answered for
        counted in as the units would have counted them)."""
        if self._held:
            for mid in HELD_WHEN_FRESH:
                self._verdicts[mid].checked += self._held
            self._held = 0
        return self._verdicts

    def first_failure_at(self, request: int) -> bool:
        """Whether some invariant failed for the first time at ``request``."""
        return request in self._tally.firsts

    def first_failures(self, requests: Sequence[int]) -> list[bool]:
        """:meth:`first_failure_at` of each of ``requests`` (one C call a batch when the
        method is this class's own)."""
        if type(self).first_failure_at is not MonitorChecker.first_failure_at:
            return list(map(self.first_failure_at, requests))
        return list(map(self._tally.firsts.__contains__, requests))

    def failed(self) -> list[str]:
        return [k for k, v in self.verdicts.items() if v.failures]

    def to_dicts(self) -> list[dict[str, Any]]:
        return [v.to_dict() for v in self.verdicts.values()]

    def check(
        self, request: int, tokens: int, metrics: Metrics | None, event: dict[str, Any]
    ) -> None:
        """One request: ``tokens`` the usage fed, ``event`` the monitor's row (``to_dict``)."""
        c, last = self.config, self._last_alert
        if self.fused and held_fresh(c, request, tokens, metrics, event, last):
            self._held += 1
        else:
            self._tally.ask(c, read_request(c, request, tokens, metrics, event, last), request)
        if event.get("alert"):
            self._last_alert = (request, str(event.get("level")))

    def check_event(self, request: int, tokens: int, metrics: Metrics | None,
                    event: Event) -> None:
        """:meth:`check` of ``event.to_dict()``, the monitor's event whose row's values are
        its fields of the same names (:class:`~risutools.replay.monitor.MonitorEvent`: the
        caller's word), its row made only when the units are asked."""
        self.check_events([(request, tokens, metrics)], [event])

    def check_events(self, seen: Iterable[tuple[int, int, Metrics | None]],
                     events: Iterable[Event]) -> None:
        """:meth:`check_event` of each request in turn (``seen``: its number, the usage fed
        and its metrics; ``events``: what the monitor reported at it), in one loop."""
        c, tally = self.config, self._tally
        fused, held = self.fused, 0
        for (request, tokens, metrics), event in zip(seen, events, strict=True):
            last = self._last_alert
            if fused and held_fresh_of(c, request, tokens, metrics, (
                    event.metrics, event.used_pct, event.remaining_pct, event.level,
                    event.alert), last):
                held += 1
            else:
                row: dict[str, Any] = event.to_dict()
                tally.ask(c, read_request(c, request, tokens, metrics, row, last), request)
            if event.alert:
                self._last_alert = (request, str(event.level))
        self._held += held
