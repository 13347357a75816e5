"""The invariant checker R1-R8: separate from the cutter, written from the spec.

It looks only at what any cutter can be observed doing: the message list it
was given, the list it sent, and the ``budget_unreachable`` flag it raised.
The state it compares against (omitted count, anchor) is derived here from the
previous enabled request's input and output, not taken from the cutter.  Every
check is a plain O(n) pass over lists; clarity over speed.

Reading of the spec where it is terse (documented in docs/replay.md):
* R5 compares each enabled request with the previous enabled one (state is
  kept while the module is off); a message that is now protected or in the
  tail is exempt, because R1/R2 take precedence over R5.
* R7 also fails when messages were dropped beyond the continuity step although
  the estimate after continuity was already within ``max_context``.
* R8 applies to requests whose previous anchor is set but absent from the
  non-protected messages (a lost anchor); its ``requests_checked`` counts those
  requests only, so a run without anchor losses shows R8 checked 0 times.
* A request with the module off must pass its messages through untouched (R4).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from risutools.replay.config import PROFILES, ReplayConfig
from risutools.replay.fixture import Message

INVARIANTS: dict[str, str] = {
    "R1": "no protected message is dropped",
    "R2": "the tail is never dropped",
    "R3": "final estimate <= max_context, unless budget_unreachable "
    "(and then every removable message was dropped)",
    "R4": "the output is the input with messages removed: order and content untouched",
    "R5": "no resurrection: a message dropped at one request and still present at the "
    "next is dropped again (while enabled)",
    "R6": "front only: the dropped messages are a prefix of R",
    "R7": "minimal: keeping the last budget-dropped message would break the target",
    "R8": "bounded jump after an anchor loss: the number dropped differs from "
    "S.omitted_count only by what the budget step needs",
}


@dataclass(frozen=True)
class Step:
    """One observed request."""

    request: int  # 1-based
    enabled: bool
    inp: list[Message]
    out: list[Message]
    budget_unreachable: bool = False


@dataclass
class Verdict:
    id: str
    failures: int = 0
    checked: int = 0
    first_request: int | None = None
    first_detail: str = ""

    def fail(self, request: int, detail: str) -> None:
        self.failures += 1
        if self.first_request is None:
            self.first_request = request
            self.first_detail = detail

    def to_dict(self) -> dict[str, Any]:
        first = None
        if self.first_request is not None:
            first = {"request": self.first_request, "detail": self.first_detail}
        return {
            "id": self.id,
            "text": INVARIANTS[self.id],
            "verdict": "failed" if self.failures else "passed",
            "requests_checked": self.checked,
            "failures": self.failures,
            "first_failure": first,
        }


@dataclass
class InvariantChecker:
    config: ReplayConfig
    verdicts: dict[str, Verdict] = field(default_factory=dict)
    # derived from the previous enabled request
    _prev_dropped: set[str] = field(default_factory=set)
    _prev_omitted: int = 0
    _prev_anchor: tuple[str, int, str] | None = None
    _seen_enabled: bool = False
    _est_cache: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.verdicts = {k: Verdict(k) for k in INVARIANTS}

    # the estimate, written out again on purpose (no import from the cutter)
    def est(self, m: Message) -> int:
        got = self._est_cache.get(m.content)
        if got is None:
            p = self.config.tokenizer_profile
            ratio = Fraction(PROFILES[p]) if isinstance(p, str) else Fraction(str(p))
            got = math.ceil(len(m.content) * ratio) + self.config.message_overhead
            self._est_cache[m.content] = got
        return got

    def target(self) -> int:
        c = self.config
        return math.floor(c.max_context * (100 - Fraction(str(c.trim_percent))) / 100)

    @staticmethod
    def sig(m: Message) -> tuple[str, int, str]:
        return (m.role, len(m.content), m.content)

    def failed(self) -> list[str]:
        return [k for k, v in self.verdicts.items() if v.failures]

    def check_all(self, steps: Iterable[Step]) -> dict[str, Verdict]:
        for s in steps:
            self.check(s)
        return self.verdicts

    def check(self, step: Step) -> None:
        v = self.verdicts
        c = self.config
        req = step.request
        if not step.enabled:
            v["R4"].checked += 1
            if [(m.id, m.role, m.content) for m in step.out] != [
                (m.id, m.role, m.content) for m in step.inp
            ]:
                v["R4"].fail(req, "module off, but the messages were changed")
            return
        for k in v:
            if k != "R8":  # R8 counts only the requests it applies to (anchor lost)
                v[k].checked += 1
        prot = [m for m in step.inp if m.role in c.protected_roles]
        nonprot = [m for m in step.inp if m.role not in c.protected_roles]
        n_tail = min(c.preserve_latest, len(nonprot))
        removable = nonprot[: len(nonprot) - n_tail]
        tail = nonprot[len(nonprot) - n_tail :]
        out_ids = [m.id for m in step.out]
        out_set = set(out_ids)

        # R1, R2
        lost_prot = [m.id for m in prot if m.id not in out_set]
        if lost_prot:
            v["R1"].fail(req, f"protected message(s) dropped: {', '.join(lost_prot[:5])}")
        lost_tail = [m.id for m in tail if m.id not in out_set]
        if lost_tail:
            v["R2"].fail(req, f"tail message(s) dropped: {', '.join(lost_tail[:5])}")

        # R4: a subsequence of the input, same role and content
        i = 0
        ok = len(out_set) == len(out_ids)
        for m in step.out:
            while ok and i < len(step.inp) and step.inp[i].id != m.id:
                i += 1
            if not ok or i == len(step.inp):
                ok = False
                break
            if (step.inp[i].role, step.inp[i].content) != (m.role, m.content):
                ok = False
                break
            i += 1
        if not ok:
            v["R4"].fail(req, "the output is not the input with messages removed")

        # R3
        est_out = sum(self.est(m) for m in step.out)
        r_dropped = [m for m in removable if m.id not in out_set]
        if est_out > c.max_context:
            if not step.budget_unreachable:
                v["R3"].fail(req, f"estimate {est_out} > max_context {c.max_context}")
            elif len(r_dropped) != len(removable):
                v["R3"].fail(
                    req,
                    f"budget_unreachable with {len(removable) - len(r_dropped)} "
                    "removable message(s) still kept",
                )
        elif step.budget_unreachable:
            v["R3"].fail(req, f"budget_unreachable claimed at estimate {est_out}")

        # R6: dropped == a prefix of R
        dropped_ids = [m.id for m in step.inp if m.id not in out_set]
        if dropped_ids != [m.id for m in removable[: len(dropped_ids)]]:
            v["R6"].fail(req, "the dropped messages are not the first removable ones")

        # R5: no resurrection
        if self._seen_enabled:
            exempt = {m.id for m in prot} | {m.id for m in tail}
            back = [
                m.id
                for m in step.inp
                if m.id in self._prev_dropped and m.id in out_set and m.id not in exempt
            ]
            if back:
                v["R5"].fail(req, f"dropped before, sent again: {', '.join(back[:5])}")

        # continuity drop the spec asks for, computed here from the derived state
        kr = len(r_dropped)
        t = self._prev_omitted
        lost = False
        k3 = min(t, len(removable))
        if self._prev_anchor is not None:
            best: int | None = None
            for idx, m in enumerate(nonprot):
                if self.sig(m) == self._prev_anchor:
                    pos = min(idx, len(removable))
                    if best is None or abs(pos - t) <= abs(best - t):
                        best = pos
            if best is None:
                lost = True
            else:
                k3 = best
        total_in = sum(self.est(m) for m in step.inp)
        r_prefix = [0]
        for m in removable:
            r_prefix.append(r_prefix[-1] + self.est(m))

        def est_after(n: int) -> int:
            return total_in - r_prefix[n]

        target = self.target()

        # R7: budget drops are needed and minimal
        if kr > k3:
            if est_after(k3) <= c.max_context:
                v["R7"].fail(
                    req,
                    f"{kr - k3} message(s) dropped beyond continuity, though the estimate "
                    f"{est_after(k3)} was within max_context",
                )
            elif r_dropped and est_out + self.est(r_dropped[-1]) <= target:
                v["R7"].fail(
                    req, f"keeping {r_dropped[-1].id} would still meet the target {target}"
                )

        # R8: after an anchor loss, restart from the accumulated count
        if lost:
            v["R8"].checked += 1
            base = min(t, len(removable))
            if kr < base:
                v["R8"].fail(req, f"anchor lost: dropped {kr}, fewer than omitted_count {t}")
            elif kr > base and not (
                est_after(base) > c.max_context and est_out + self.est(r_dropped[-1]) > target
            ):
                v["R8"].fail(req, f"anchor lost: dropped {kr}, more than omitted_count {t} needs")

        # the state a correct cutter now carries
        self._seen_enabled = True
        self._prev_dropped = set(dropped_ids)
        self._prev_omitted = kr
        first = next((m for m in step.out if m.role not in c.protected_roles), None)
        self._prev_anchor = self.sig(first) if first else None
