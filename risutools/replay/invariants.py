"""The invariant checker R1-R8: separate from the cutter, written from the spec.

It looks only at what any cutter can be observed doing: the message list it
was given, the list it sent, and the ``budget_unreachable`` flag it raised.
The state it compares against (omitted count, anchor) is derived here from the
previous enabled request's input and output, not taken from the cutter.

**Incremental.** The checker keeps its own mirror of the input (fed with the
fixture's operations) and of the output (fed with what the cutter says it
added to or withdrew from the list it sends), and answers every invariant from
Fenwick trees over the order of appearance, so a request costs
O((input changes + output changes) * log n), amortised O(change): nothing is
rescanned.  Memory is O(messages ever appended); nothing grows per request.
Two ways to observe a request:

* :class:`Change` - the turn's operations and the output's changes (what the
  harness sends for the reference cutter);
* :class:`Step` - the whole input and output lists (any cutter; the checker
  rebuilds its mirrors from them, O(n) per request, the cost of reading them).
  Only this form can express a reordered output.

Reading of the spec where it is terse (documented in docs/replay.md):
* R5 compares each enabled request with the previous enabled one (state is
  kept while the module is off); a message that is now protected or in the
  tail is exempt, because R1/R2 take precedence over R5.
* R7 also fails when messages were dropped beyond the continuity step although
  the estimate after continuity was already within ``max_context``.
* R8 applies to requests whose previous anchor is set but absent from the
  non-protected messages (a lost anchor); its ``requests_checked`` counts those
  requests only, so a run without anchor losses shows R8 ``not-checked``.
* A request with the module off must pass its messages through untouched (R4).

Verdicts: ``failed`` (at least one failing request), ``passed`` (checked on at
least one request, never failed) or ``not-checked`` (it applied to no
request: never reported as ``passed``).
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from risutools.checks.replay import CUTTER, R1, R2, R3, R4, R5, R6, R7, R8, REPORT_TEXT
from risutools.replay.fenwick import Fenwick
from risutools.replay.fixture import Message
from risutools.settings.replay import PROFILES, ReplayConfig

#: the invariants' ids, in report order (declared in ``risutools.checks.replay``)
INVARIANTS: tuple[str, ...] = tuple(c.id for c in CUTTER)
_TEXT = {c.id: text for c, text in REPORT_TEXT.items()}

PASSED, FAILED, NOT_CHECKED = "passed", "failed", "not-checked"


def verdict_of(checked: int, failures: int) -> str:
    """The one rule for every verdict: a pass needs at least one check that ran."""
    if failures:
        return FAILED
    return PASSED if checked else NOT_CHECKED


def summary_verdict(verdicts: Iterable[str]) -> str:
    """A replay's verdict: failed if any check failed, passed if at least one ran, else
    not-checked (no applicable invariant: a replay that checked nothing never passes)."""
    seen = set(verdicts)
    if FAILED in seen:
        return FAILED
    return PASSED if PASSED in seen else NOT_CHECKED


@dataclass(frozen=True)
class Step:
    """One observed request, as whole lists."""

    request: int  # 1-based
    enabled: bool
    inp: list[Message]
    out: list[Message]
    budget_unreachable: bool = False


@dataclass(frozen=True)
class Change:
    """One observed request, as changes since the previous one.

    ``appended``/``edited``/``deleted`` are the input's operations (from the
    fixture); ``sent`` are the messages the output gained or whose sent copy
    changed, ``withdrawn`` the ids the output lost.  The output's order is the
    input's (a reordering cannot be expressed here; use :class:`Step`).
    """

    request: int
    enabled: bool
    appended: list[Message] = field(default_factory=list)
    edited: list[tuple[str, str]] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    sent: list[Message] = field(default_factory=list)
    withdrawn: list[str] = field(default_factory=list)
    budget_unreachable: bool = False


@dataclass
class Verdict:
    id: str
    failures: int = 0
    checked: int = 0
    first_request: int | None = None
    first_detail: str = ""

    def fail(self, request: int, detail: str | Callable[[], str]) -> None:
        """Record a failure; ``detail`` may be a callable, run for the first failure only."""
        self.failures += 1
        if self.first_request is None:
            self.first_request = request
            self.first_detail = detail if isinstance(detail, str) else detail()

    @property
    def verdict(self) -> str:
        return verdict_of(self.checked, self.failures)

    def to_dict(self, text: str | None = None) -> dict[str, Any]:
        first = None
        if self.first_request is not None:
            first = {"request": self.first_request, "detail": self.first_detail}
        return {
            "id": self.id,
            "text": _TEXT[self.id] if text is None else text,
            "verdict": self.verdict,
            "requests_checked": self.checked,
            "failures": self.failures,
            "first_failure": first,
        }


class _In:
    """A live input message in the checker's mirror."""

    __slots__ = ("est", "kept", "msg", "prot", "seq")

    def __init__(self, seq: int, msg: Message, est: int, prot: bool) -> None:
        self.seq, self.msg, self.est, self.prot = seq, msg, est, prot
        self.kept = False  # its id is in the output


class _Out:
    """An output entry: the message as sent, and where it sits (input seq, or -1)."""

    __slots__ = ("anchor_np", "est", "msg", "seq")

    def __init__(self, msg: Message, seq: int, est: int) -> None:
        self.msg, self.seq, self.est = msg, seq, est
        self.anchor_np = False  # counted in the checker's out_np tree


Sig = tuple[str, str]  # role and full text: length is implied


@dataclass
class _Request:
    """What one request's checks share, computed once in O(log n)."""

    req: int
    n_r: int  # |R|
    pos_r: int  # position (1-based seq) of R's last message, 0 if R is empty
    kr: int  # removable messages dropped
    est_out: int
    unreachable: bool


class InvariantChecker:
    def __init__(self, config: ReplayConfig) -> None:
        self.config = config
        self.verdicts: dict[str, Verdict] = {k: Verdict(k) for k in INVARIANTS}
        p = config.tokenizer_profile
        ratio = Fraction(PROFILES[p]) if isinstance(p, str) else Fraction(str(p))
        self._num, self._den = ratio.numerator, ratio.denominator
        self._prot_roles = frozenset(config.protected_roles)
        self._reset_mirrors()
        # derived from the previous enabled request
        self._prev_dropped: set[str] = set()
        self._prev_omitted = 0
        self._prev_anchor: Sig | None = None

    def _reset_mirrors(self) -> None:
        self._by_seq: list[_In | None] = []
        self._inp: dict[str, _In] = {}
        self._out: dict[str, _Out] = {}
        self._np_cnt = Fenwick()  # 1 per live non-protected input message
        self._np_est = Fenwick()  # their estimates
        self._np_drop = Fenwick()  # 1 per live non-protected input message not sent
        self._out_np = Fenwick()  # 1 per output entry (at its seq) whose sent role is free
        self._sigs: dict[Sig, list[int]] = {}  # non-protected live seqs by signature, sorted
        self._n_np = self._n_np_drop = 0
        self._total_in = 0
        self._est_out = 0
        self._prot_dropped: set[str] = set()
        self._bad_out: set[str] = set()  # sent ids unknown to the input or with other text
        self._changed: set[str] = set()  # ids whose drop status moved since the last enabled
        self._out_at: dict[int, str] = {}  # seq -> id of the output entries in _out_np
        self._dead_seq: dict[str, int] = {}  # deleted ids: where they were (for a stale output)

    # ---- the spec's arithmetic, written out again (no import from the cutter) ----

    def est(self, m: Message) -> int:
        """``ceil(len(content) * ratio) + message_overhead``, exact."""
        return -(-len(m.content) * self._num // self._den) + self.config.message_overhead

    def target(self) -> int:
        c = self.config
        return math.floor(c.max_context * (100 - Fraction(str(c.trim_percent))) / 100)

    def failed(self) -> list[str]:
        return [k for k, v in self.verdicts.items() if v.failures]

    # ---- mirrors -----------------------------------------------------------------

    def _refresh(self, mid: str) -> None:
        """Recompute what depends on both mirrors for one id (O(log n))."""
        e = self._inp.get(mid)
        o = self._out.get(mid)
        if o is not None and (e is None or (e.msg.role, e.msg.content) != (o.msg.role,
                                                                          o.msg.content)):
            self._bad_out.add(mid)
        else:
            self._bad_out.discard(mid)
        if e is None:
            return
        kept = o is not None
        if kept == e.kept:
            return
        e.kept = kept
        self._changed.add(mid)
        if e.prot:
            if kept:
                self._prot_dropped.discard(mid)
            else:
                self._prot_dropped.add(mid)
        else:
            self._np_drop.add(e.seq + 1, -1 if kept else 1)
            self._n_np_drop += -1 if kept else 1

    def _in_append(self, m: Message) -> None:
        seq = len(self._by_seq)
        e = _In(seq, m, self.est(m), m.role in self._prot_roles)
        self._by_seq.append(e)
        self._inp[m.id] = e
        self._total_in += e.est
        np = 0 if e.prot else 1
        self._np_cnt.push(np)
        self._np_est.push(np * e.est)
        self._np_drop.push(np)  # not sent (yet)
        self._out_np.push(0)
        if e.prot:
            self._prot_dropped.add(m.id)
        else:
            self._n_np += 1
            self._n_np_drop += 1
            self._sigs.setdefault((m.role, m.content), []).append(seq)
        self._changed.add(m.id)
        self._refresh(m.id)

    def _unindex(self, e: _In) -> None:
        seqs = self._sigs[(e.msg.role, e.msg.content)]
        del seqs[bisect.bisect_left(seqs, e.seq)]
        if not seqs:
            del self._sigs[(e.msg.role, e.msg.content)]

    def _in_edit(self, mid: str, content: str) -> None:
        e = self._inp[mid]
        new = Message(mid, e.msg.role, content)
        est = self.est(new)
        self._total_in += est - e.est
        if not e.prot:
            self._np_est.add(e.seq + 1, est - e.est)
            self._unindex(e)
            bisect.insort(self._sigs.setdefault((new.role, content), []), e.seq)
        e.msg, e.est = new, est
        self._refresh(mid)

    def _in_delete(self, mid: str) -> None:
        e = self._inp.pop(mid)
        self._by_seq[e.seq] = None
        self._dead_seq[mid] = e.seq
        self._total_in -= e.est
        self._prot_dropped.discard(mid)
        self._prev_dropped.discard(mid)  # memory stays bounded by the live history
        self._changed.discard(mid)
        if not e.prot:
            self._np_cnt.add(e.seq + 1, -1)
            self._np_est.add(e.seq + 1, -e.est)
            if not e.kept:
                self._np_drop.add(e.seq + 1, -1)
                self._n_np_drop -= 1
            self._n_np -= 1
            self._unindex(e)
        self._refresh(mid)

    def _out_set(self, m: Message) -> None:
        old = self._out.get(m.id)
        e = self._inp.get(m.id)
        seq = e.seq if e is not None else self._dead_seq.get(m.id, -1)
        if old is not None:
            self._out_remove(m.id, refresh=False)
        o = _Out(m, seq, self.est(m))
        self._out[m.id] = o
        self._est_out += o.est
        if seq >= 0 and m.role not in self._prot_roles:
            o.anchor_np = True
            self._out_np.add(seq + 1, 1)
            self._out_at[seq] = m.id
        self._refresh(m.id)

    def _out_remove(self, mid: str, *, refresh: bool = True) -> None:
        o = self._out.pop(mid, None)
        if o is None:
            return
        self._est_out -= o.est
        if o.anchor_np:
            self._out_np.add(o.seq + 1, -1)
            del self._out_at[o.seq]
        if refresh:
            self._refresh(mid)

    def _apply_change(self, ch: Change) -> None:
        for m in ch.appended:
            self._in_append(m)
        for mid, content in ch.edited:
            self._in_edit(mid, content)
        for mid in ch.deleted:
            self._in_delete(mid)
        for mid in ch.withdrawn:
            self._out_remove(mid)
        for m in ch.sent:
            self._out_set(m)

    def _apply_step(self, step: Step) -> tuple[bool, int, Sig | None]:
        """Rebuild both mirrors from whole lists (O(n)); return what only lists can show:
        whether the output keeps the input's order without repeats, the estimate of the
        list as sent, and the signature of its first non-protected message."""
        self._reset_mirrors()
        for m in step.inp:
            self._in_append(m)
        for m in step.out:
            self._out_set(m)
        self._prev_dropped &= self._inp.keys()
        self._changed = set(self._inp)
        pos = [self._inp[m.id].seq if m.id in self._inp else -1 for m in step.out]
        ordered = len(self._out) == len(step.out) and all(
            b > a for a, b in itertools.pairwise(pos)
        )
        est_out = sum(self.est(m) for m in step.out)
        first = next((m for m in step.out if m.role not in self._prot_roles), None)
        return ordered, est_out, ((first.role, first.content) if first else None)

    # ---- rank helpers (non-protected input messages, in order) -------------------

    def _pos_of_rank(self, k: int) -> int:
        """1-based seq position of the k-th non-protected message (0 for k = 0)."""
        return self._np_cnt.lower_bound(k) if k > 0 else 0

    def _est_after(self, n: int) -> int:
        """The input's estimate with the first ``n`` removable messages dropped."""
        return self._total_in - self._np_est.prefix(self._pos_of_rank(n))

    def _ids(self, positions: Iterable[int]) -> str:
        names = []
        for p in positions:
            e = self._by_seq[p - 1]
            assert e is not None
            names.append(e.msg.id)
        return ", ".join(names)

    def _dropped_np_between(self, lo_rank: int, hi_rank: int, limit: int = 5) -> str:
        """Ids of up to ``limit`` dropped non-protected messages with rank in (lo, hi]."""
        before = self._np_drop.prefix(self._pos_of_rank(lo_rank))
        have = self._np_drop.prefix(self._pos_of_rank(hi_rank)) - before
        picks = range(1, min(have, limit) + 1)
        return self._ids(self._np_drop.lower_bound(before + j) for j in picks)

    # ---- the request ---------------------------------------------------------------

    def check_all(self, steps: Iterable[Step | Change]) -> dict[str, Verdict]:
        for s in steps:
            self.check(s)
        return self.verdicts

    def check(self, obs: Step | Change) -> None:
        if isinstance(obs, Step):
            ordered, est_out, first = self._apply_step(obs)
        else:
            self._apply_change(obs)
            ordered, est_out, first = True, self._est_out, self._first_sent_np()
        if not obs.enabled:
            self._check_off(obs.request, ordered)
            return
        n_r = max(0, self._n_np - self.config.preserve_latest)
        pos_r = self._pos_of_rank(n_r)
        kr = self._np_drop.prefix(pos_r)  # removable messages dropped
        r = _Request(obs.request, n_r, pos_r, kr, est_out, obs.budget_unreachable)
        for k, v in self.verdicts.items():
            if k != R8.id:  # R8 counts only the requests it applies to (anchor lost)
                v.checked += 1
        self._check_r1(r)
        self._check_r2(r)
        self._check_r3(r)
        self._check_r4(r, ordered)
        self._check_r5(r)
        self._check_r6(r)
        k3, lost = self._continuity(r)
        self._check_r7(r, k3)
        if lost:
            self._check_r8(r)
        self._carry_state(r, first)

    def _first_sent_np(self) -> Sig | None:
        """Signature of the first non-protected message sent (in the input's order)."""
        pos = self._out_np.lower_bound(1)
        if pos > len(self._out_np):
            return None
        m = self._out[self._out_at[pos - 1]].msg
        return (m.role, m.content)

    def _check_off(self, req: int, ordered: bool) -> None:
        """Module off: the output must be the input, untouched (R4)."""
        v = self.verdicts[R4.id]
        v.checked += 1
        changed = self._bad_out or self._prot_dropped or self._n_np_drop
        if changed or not ordered or len(self._out) != len(self._inp):
            v.fail(req, "module off, but the messages were changed")

    def _check_r1(self, r: _Request) -> None:
        if self._prot_dropped:
            lost = sorted(self._prot_dropped, key=lambda i: self._inp[i].seq)
            self.verdicts[R1.id].fail(
                r.req, lambda: f"protected message(s) dropped: {', '.join(lost[:5])}"
            )

    def _check_r2(self, r: _Request) -> None:
        in_tail = self._n_np_drop - self._np_drop.prefix(r.pos_r)
        if in_tail:
            self.verdicts[R2.id].fail(
                r.req,
                lambda: "tail message(s) dropped: "
                + self._dropped_np_between(r.n_r, self._n_np),
            )

    def _check_r3(self, r: _Request) -> None:
        mc = self.config.max_context
        v = self.verdicts[R3.id]
        if r.est_out > mc:
            if not r.unreachable:
                v.fail(r.req, f"estimate {r.est_out} > max_context {mc}")
            elif r.kr != r.n_r:
                v.fail(
                    r.req,
                    f"budget_unreachable with {r.n_r - r.kr} removable message(s) still kept",
                )
        elif r.unreachable:
            v.fail(r.req, f"budget_unreachable claimed at estimate {r.est_out}")

    def _check_r4(self, r: _Request, ordered: bool) -> None:
        """A subsequence of the input (order from the input), same role and content."""
        if self._bad_out or not ordered:
            self.verdicts[R4.id].fail(r.req, "the output is not the input with messages removed")

    def _check_r5(self, r: _Request) -> None:
        """Dropped at the previous enabled request, still present, sent again."""
        back = [
            e
            for mid in self._changed
            if mid in self._prev_dropped and (e := self._inp[mid]).kept
            and not e.prot and self._np_cnt.prefix(e.seq + 1) <= r.n_r  # not now in the tail
        ]
        if back:
            back.sort(key=lambda e: e.seq)
            self.verdicts[R5.id].fail(
                r.req, f"dropped before, sent again: {', '.join(e.msg.id for e in back[:5])}"
            )

    def _check_r6(self, r: _Request) -> None:
        """The dropped messages are exactly the first d of R."""
        d = self._n_np_drop
        if (
            self._prot_dropped
            or d > r.n_r
            or self._np_drop.prefix(self._pos_of_rank(d)) != d
        ):
            self.verdicts[R6.id].fail(
                r.req, "the dropped messages are not the first removable ones")

    def _continuity(self, r: _Request) -> tuple[int, bool]:
        """The continuity drop the spec asks for, from the derived state; (k3, anchor lost)."""
        t = self._prev_omitted
        if self._prev_anchor is None:
            return min(t, r.n_r), False
        seqs = self._sigs.get(self._prev_anchor)
        if not seqs:
            return min(t, r.n_r), True

        def pos(seq: int) -> int:  # position in R: removable messages before it, capped
            return min(self._np_cnt.prefix(seq), r.n_r)

        lo, hi = 0, len(seqs)  # pos() does not decrease along seqs: first with pos >= t
        while lo < hi:
            mid = (lo + hi) // 2
            if pos(seqs[mid]) >= t:
                hi = mid
            else:
                lo = mid + 1
        # the nearest is seqs[lo - 1] (below t) or seqs[lo] (at or above t); ties: the later
        below = pos(seqs[lo - 1]) if lo else None
        above = pos(seqs[lo]) if lo < len(seqs) else None
        if above is None or (below is not None and t - below < above - t):
            assert below is not None
            return below, False
        return above, False

    def _last_r_dropped_est(self, r: _Request) -> int:
        pos = self._np_drop.lower_bound(self._np_drop.prefix(r.pos_r))
        e = self._by_seq[pos - 1]
        assert e is not None
        return e.est

    def _check_r7(self, r: _Request, k3: int) -> None:
        """Drops beyond continuity only when needed, and no more than the target needs."""
        if r.kr <= k3:
            return
        mc, target = self.config.max_context, self.target()
        after = self._est_after(k3)
        if after <= mc:
            self.verdicts[R7.id].fail(
                r.req,
                f"{r.kr - k3} message(s) dropped beyond continuity, though the estimate "
                f"{after} was within max_context",
            )
        elif r.est_out + self._last_r_dropped_est(r) <= target:
            pos = self._np_drop.lower_bound(self._np_drop.prefix(r.pos_r))
            self.verdicts[R7.id].fail(
                r.req, f"keeping {self._ids([pos])} would still meet the target {target}"
            )

    def _check_r8(self, r: _Request) -> None:
        """After an anchor loss, restart from the accumulated count."""
        v = self.verdicts[R8.id]
        v.checked += 1
        t = self._prev_omitted
        base = min(t, r.n_r)
        if r.kr < base:
            v.fail(r.req, f"anchor lost: dropped {r.kr}, fewer than omitted_count {t}")
        elif r.kr > base and not (
            self._est_after(base) > self.config.max_context
            and r.est_out + self._last_r_dropped_est(r) > self.target()
        ):
            v.fail(r.req, f"anchor lost: dropped {r.kr}, more than omitted_count {t} needs")

    def _carry_state(self, r: _Request, first: Sig | None) -> None:
        """The state a correct cutter now carries; dropped ids for R5 (O(change))."""
        for mid in self._changed:
            e = self._inp.get(mid)
            if e is not None and not e.kept:
                self._prev_dropped.add(mid)
            else:
                self._prev_dropped.discard(mid)
        self._changed = set()
        self._prev_omitted = r.kr
        self._prev_anchor = first

