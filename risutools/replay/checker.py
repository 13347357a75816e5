"""The invariant checker of the context cutter: separate from the cutter, written from the spec.

At each observed request (:class:`~risutools.replay.mirror.Step` or
:class:`~risutools.replay.mirror.Change`) it updates its own mirror of the input and the
output (:class:`~risutools.replay.mirror.Mirror`, O(change * log n)), then calls every
cutter invariant the registry hands it (scope ``replay``, family ``R``: the units of
``invariants.py``) and counts each answer into that invariant's
:class:`~risutools.replay.verdicts.Verdict`; after an enabled request the mirror carries the
state a correct cutter now has (omitted count, anchor, what was dropped).  It imports
nothing from the cutter.
"""

from __future__ import annotations

from collections.abc import Iterable

from risutools.replay.invariants import FAMILY
from risutools.replay.mirror import Change, Mirror, Step
from risutools.replay.verdicts import Tally, Verdict, invariants_of
from risutools.settings.replay import ReplayConfig

#: the cutter invariants' ids, in report order
INVARIANTS: tuple[str, ...] = tuple(c.id for c in invariants_of(FAMILY))
#: those of warning severity: they warn, they do not fail the replay (R9)
WARNINGS: frozenset[str] = frozenset(c.id for c in invariants_of(FAMILY)
                                     if c.severity == "warning")


class InvariantChecker:
    def __init__(self, config: ReplayConfig) -> None:
        self.config = config
        self.mirror = Mirror(config)
        self._tally = Tally(FAMILY)
        self.verdicts: dict[str, Verdict] = self._tally.verdicts

    def first_failure_at(self, request: int) -> bool:
        """Whether some invariant failed for the first time at ``request``."""
        return request in self._tally.firsts

    def failed(self) -> list[str]:
        """The invariants that failed (R9, a warning, is in :meth:`warned`)."""
        return [k for k, v in self.verdicts.items() if v.failures and k not in WARNINGS]

    def warned(self) -> list[str]:
        """The invariants of warning severity that failed (R9)."""
        return [k for k, v in self.verdicts.items() if v.failures and k in WARNINGS]

    def check_all(self, steps: Iterable[Step | Change]) -> dict[str, Verdict]:
        for s in steps:
            self.check(s)
        return self.verdicts

    def check(self, obs: Step | Change) -> None:
        """One request: update the mirrors, ask every invariant, carry the state."""
        m = self.mirror
        r = m.observe(obs)
        self._tally.ask(m, r, r.req)
        if r.enabled:
            m.carry_state(r)
