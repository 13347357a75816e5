"""Verdicts of the replay invariants, and how an invariant answers for one request.

An invariant (a unit in ``invariants.py`` or ``monitor_invariants.py``) is called once per
request with its checker's state and answers :data:`SKIP` (it does not apply to this
request: not counted), :data:`HELD`, or the failure's detail (a string, or a callable that
makes it, run for the first failure only).  Its checker's :class:`Tally` asks every unit
of the family and counts the answers into one :class:`Verdict` per invariant: ``failed``
(at least one failing request), ``passed`` (checked on at least one request, never failed)
or ``not-checked`` (it applied to no request: never reported as ``passed``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from risutools.checks.outcomes import FAILED as FAILED  # re-exported
from risutools.checks.outcomes import NOT_CHECKED as NOT_CHECKED  # re-exported
from risutools.checks.outcomes import PASSED as PASSED  # re-exported
from risutools.checks.outcomes import summary_verdict as summary_verdict  # re-exported
from risutools.checks.outcomes import verdict_of
from risutools.checks.registry import Check, of_family

#: an invariant's answer for one request (see the module docstring)
Answer = str | Callable[[], str] | None
SKIP: Answer = None
HELD: Answer = ""


def invariants_of(family: str) -> list[Check]:
    """The registered replay invariants of one family (``R``: the cutter, ``M``: the
    monitor), in report order."""
    return [c for c in of_family(family).values() if c.scope == "replay"]


@dataclass
class Verdict:
    id: str
    failures: int = 0
    checked: int = 0
    first_request: int | None = None
    first_detail: str = ""
    text: str = ""  # the line a report prints beside the verdict (the check's report_text)

    def fail(self, request: int, detail: str | Callable[[], str]) -> None:
        """Record a failure; ``detail`` may be a callable, run for the first failure only."""
        self.failures += 1
        if self.first_request is None:
            self.first_request = request
            self.first_detail = detail if isinstance(detail, str) else detail()

    @property
    def verdict(self) -> str:
        return verdict_of(self.checked, self.failures)

    def to_dict(self) -> dict[str, Any]:
        first = None
        if self.first_request is not None:
            first = {"request": self.first_request, "detail": self.first_detail}
        return {
            "id": self.id,
            "text": self.text,
            "verdict": self.verdict,
            "requests_checked": self.checked,
            "failures": self.failures,
            "first_failure": first,
        }


class Tally:
    """The verdicts of one family of invariants (by id, in report order) and the units
    that answer for them, as the registry hands them out."""

    def __init__(self, family: str) -> None:
        checks = invariants_of(family)
        self.verdicts: dict[str, Verdict] = {c.id: Verdict(c.id, text=c.report_text)
                                             for c in checks}
        self._units = [(self.verdicts[c.id], c.run) for c in checks if c.run is not None]
        #: the requests of the first failures so far (one an invariant at most)
        self.firsts: set[int] = set()

    def ask(self, state: Any, r: Any, request: int) -> None:
        """Call every unit on one request (``unit(state, r)``) and count its answer."""
        for v, unit in self._units:
            answer = unit(state, r)
            if answer is None:  # SKIP: it does not apply to this request
                continue
            v.checked += 1
            if answer:
                if v.first_request is None:
                    self.firsts.add(request)
                v.fail(request, answer)
