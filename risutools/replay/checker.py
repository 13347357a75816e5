"""The invariant checker of the context cutter: separate from the cutter, written from the spec.

At each observed request (:class:`~risutools.replay.mirror.Step` or
:class:`~risutools.replay.mirror.Change`) it updates its own mirror of the input and the
output (:class:`~risutools.replay.mirror.Mirror`, O(change * log n)), then calls every
cutter invariant the registry hands it (scope ``replay``, family ``R``: the units of
``invariants.py``) and counts each answer into that invariant's
:class:`~risutools.replay.verdicts.Verdict` (when the registry hands exactly the standard
units, :func:`~risutools.replay.invariants.all_held` first: the request's passing case of
R1-R8 in one test, with the units of R1-R7 that applied there, the units asked one by one
only when it cannot tell); after an enabled
request the mirror carries the state a correct cutter now has (omitted count, anchor, what
was dropped).  It imports nothing from the cutter.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from risutools.replay.invariants import (
    APPLIES,
    FAMILY,
    ORPHANS_ID,
    STANDARD,
    all_held,
)
from risutools.replay.mirror import Change, Mirror, Request, Step
from risutools.replay.mirror_records import A_HELD
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
        self._verdicts: dict[str, Verdict] = self._tally.verdicts
        #: the registry hands the standard units, in their order: :func:`all_held` first
        self.fused = [c.run for c in invariants_of(FAMILY)] == [c.run for c in STANDARD]
        #: requests :func:`all_held` answered for, not yet counted into the verdicts, by
        #: its answer (which units of R1-R7 applied: :data:`APPLIES`' bits), those of them
        #: where R9 applied, and where it failed (after its first failure)
        self._held = [0] * (2 * A_HELD)
        self._r9_checked = self._r9_failed = 0
        #: the commonest request (:meth:`Mirror.appended_held`) answered at once, any other
        #: enabled change from the state (:meth:`Mirror.changed_held`); False: through
        #: :meth:`Mirror.observe` and :func:`all_held` (the tests' reference)
        self.quick = self.fused
        #: R9 has failed (its first failure worded by its unit): the quick path counts it
        self._r9_known = False

    @property
    def verdicts(self) -> dict[str, Verdict]:
        """Every invariant's verdict so far (the requests :func:`all_held` answered for
        counted in as the units would have counted them: each where it applied)."""
        v = self._verdicts
        held = self._held
        for answer, n in enumerate(held):
            if n:
                for rid, bit in APPLIES.items():
                    if answer & bit:
                        v[rid].checked += n
                held[answer] = 0
        v[ORPHANS_ID].checked += self._r9_checked
        v[ORPHANS_ID].failures += self._r9_failed
        self._r9_checked = self._r9_failed = 0
        return v

    def first_failure_at(self, request: int) -> bool:
        """Whether some invariant failed for the first time at ``request``."""
        return request in self._tally.firsts

    def first_failures(self, requests: Sequence[int]) -> list[bool]:
        """:meth:`first_failure_at` of each of ``requests`` (one C call a batch when the
        method is this class's own)."""
        if type(self).first_failure_at is not InvariantChecker.first_failure_at:
            return list(map(self.first_failure_at, requests))
        return list(map(self._tally.firsts.__contains__, requests))

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
        if self.quick and type(obs) is Change:
            held = m.appended_held(obs, self._r9_known)
            if held is None:
                held = m.changed_held(obs, self._r9_known)
            if held:  # (R1-R8 held or did not apply; R9 as :meth:`_held_r9` counts it)
                self._held[held] += 1
                if m.linked:
                    self._r9_checked += 1
                    if m.orphaned:
                        self._r9_failed += 1
                return
            if held is not None:
                r = m.request(obs, True, m.est_out, m.first_sent_np())
                self._ask(m, r)
                m.carry_state(r)
                return
        r = m.observe(obs)
        self._ask(m, r)
        if r.enabled:
            m.carry_state(r)

    def _ask(self, m: Mirror, r: Request) -> None:
        """:func:`all_held` first when the units are the standard ones, else (or when it
        cannot tell) the units one by one."""
        if not (self.fused and self._fused(m, r)):
            self._tally.ask(m, r, r.req)
            self._r9_known = self._verdicts[ORPHANS_ID].first_request is not None

    def _fused(self, m: Mirror, r: Request) -> bool:
        """What the units would count at this request, counted (True) when
        :func:`all_held` says R1-R8, and R9 holds, does not apply or has failed before
        (its detail already kept); False: ask them one by one."""
        held = all_held(m, r)
        if not held:
            return False
        return self._held_r9(m, held)

    def _held_r9(self, m: Mirror, held: int) -> bool:
        """R1-R8 held (``held``: :func:`all_held`'s answer): R9 counted with them (True)
        unless it fails for the first time."""
        applies = bool(m.linked)  # (:func:`orphans_apply`, written out)
        if applies and m.orphaned:
            if self._verdicts[ORPHANS_ID].first_request is None:
                return False  # (its first failure: the unit words it)
            self._r9_failed += 1
        self._held[held] += 1
        self._r9_checked += applies
        return True
