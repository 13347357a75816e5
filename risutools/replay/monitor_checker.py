"""The monitor's checker: M1-M3 per request, from what the monitor reported and the usage it
was fed, so a replay of the monitor alone has a verdict that comes from checks that ran
(never a default "passed").

At each request it reads the monitor's row
(:func:`~risutools.replay.monitor_invariants.read_request`), calls every monitor invariant
the registry hands it (scope ``replay``, family ``M``: the units of
``monitor_invariants.py``) and counts each answer into that invariant's
:class:`~risutools.replay.verdicts.Verdict`.  The alert state (the last alert's request
and level) is taken from the alerts the monitor actually raised, so one wrong alert fails
once instead of shifting every later one.
"""

from __future__ import annotations

from typing import Any

from risutools.replay.fixture import Metrics
from risutools.replay.monitor_invariants import FAMILY, read_request
from risutools.replay.verdicts import Tally, Verdict, invariants_of
from risutools.settings.replay import ReplayConfig

#: the monitor invariants' ids, in report order
MONITOR_INVARIANTS: tuple[str, ...] = tuple(c.id for c in invariants_of(FAMILY))


class MonitorChecker:
    def __init__(self, config: ReplayConfig) -> None:
        self.config = config
        self._tally = Tally(FAMILY)
        self.verdicts: dict[str, Verdict] = self._tally.verdicts
        self._last_alert: tuple[int, str] | None = None  # request, level of the last alert

    def first_failure_at(self, request: int) -> bool:
        """Whether some invariant failed for the first time at ``request``."""
        return request in self._tally.firsts

    def failed(self) -> list[str]:
        return [k for k, v in self.verdicts.items() if v.failures]

    def to_dicts(self) -> list[dict[str, Any]]:
        return [v.to_dict() for v in self.verdicts.values()]

    def check(
        self, request: int, tokens: int, metrics: Metrics | None, event: dict[str, Any]
    ) -> None:
        """One request: ``tokens`` the usage fed, ``event`` the monitor's row (``to_dict``)."""
        r = read_request(self.config, request, tokens, metrics, event, self._last_alert)
        self._tally.ask(self.config, r, request)
        if event.get("alert"):
            self._last_alert = (request, str(event.get("level")))
