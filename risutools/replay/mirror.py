"""The invariant checker's own view of a replay: its mirror of the input and the output.

Written from the spec, apart from the cutter: it looks only at what any cutter can be
observed doing -- the message list it was given, the list it sent, and the
``budget_unreachable`` flag it raised.  The state it compares against (omitted count,
anchor) is derived here from the previous enabled request's input and output, not taken
from the cutter, and it has its own estimate, trim target and anchor signature (role and
the full text).

**Incremental.** The mirror of the input is fed with the fixture's operations, the mirror
of the output with what the cutter says it added to or withdrew from the list it sends;
Fenwick trees over the order of appearance answer every question an invariant asks
(counts and estimates of non-protected messages, dropped ones, sent ones), and a signature
-> positions index finds the anchor.  A request costs O((input changes + output changes)
* log n), amortised O(change): nothing is rescanned.  Memory is O(messages ever appended);
nothing grows per request.  A request is observed as a :class:`Change` (the turn's
operations and the output's changes: what the harness sends for the reference cutter) or
a :class:`Step` (the whole lists, any cutter, the mirrors rebuilt: O(n); the only form of
a reordered output), both in ``mirror_records.py``.

:meth:`Mirror.observe` applies one observation and returns the :class:`Request` the
invariants (``invariants.py``) read together with the mirror.
"""

from __future__ import annotations

import bisect
import heapq
import itertools
import math
from collections.abc import Iterable, Sequence
from fractions import Fraction
from operator import itemgetter

from risutools.replay.fenwick import Fenwick, first_of_difference, push_two
from risutools.replay.fixture import Message
from risutools.replay.mirror_records import (
    _NO_RESULTS,
    RESULT_ROLES,
    Change,
    Request,
    Sig,
    Step,
    _apart,
    _holds,
    _In,
    _Out,
    sent_as_appended,
)
from risutools.settings.replay import PROFILES, ReplayConfig

__all__ = ["RESULT_ROLES", "Change", "Mirror", "Request", "Sig", "Step"]

#: a message's id (its first field), for ``map``
_ID = itemgetter(0)
#: an object made without its ``__init__`` (its fields set by the caller)
_new = object.__new__
#: entries :meth:`Mirror._r_end` walks back over before it asks the trees
_WALK = 32


class Mirror:
    """The input and output as the checker sees them, and the state derived from the
    previous enabled request (``prev_dropped``, ``prev_omitted``, ``prev_anchor``)."""

    # (slots: past 30 fields, CPython 3.11 reads each one from a dict; __dict__ for tests)
    __slots__ = (
        "__dict__", "_before_anchor", "_den", "_drop_later", "_first_kept", "_heaped",
        "_keep", "_np_before_kept", "_np_drop", "_num", "_overhead", "_target", "bad_out",
        "by_seq", "changed", "config", "dead_seq", "est_out", "fast", "in_heap", "inp",
        "linked", "n_np", "n_np_drop", "np_cnt", "np_est", "orphans", "out", "out_at",
        "out_heap", "prev_anchor", "prev_dropped", "prev_omitted", "prot_dropped",
        "prot_roles", "sigs", "total_in")

    def __init__(self, config: ReplayConfig) -> None:
        #: a change's two commonest shapes in one pass each (:meth:`_append_sent`,
        #: :meth:`_withdraw_all`); False: one operation at a time (the tests' reference)
        self.fast = True
        self.config = config
        p = config.tokenizer_profile
        ratio = Fraction(PROFILES[p]) if isinstance(p, str) else Fraction(str(p))
        self._num, self._den = ratio.numerator, ratio.denominator
        self._overhead = config.message_overhead
        self._keep = config.preserve_latest
        self.prot_roles = frozenset(config.protected_roles)
        self._target = math.floor(
            config.max_context * (100 - Fraction(str(config.trim_percent))) / 100)
        self._reset()
        # derived from the previous enabled request
        self.prev_dropped: set[str] = set()
        self.prev_omitted = 0
        self.prev_anchor: Sig | None = None

    def _reset(self) -> None:
        self.by_seq: list[_In | None] = []
        self.inp: dict[str, _In] = {}
        self.out: dict[str, _Out] = {}
        self.np_cnt = Fenwick()  # 1 per live non-protected input message
        self.np_est = Fenwick()  # their estimates
        #: 1 per live non-protected input message not sent: changes (``_drop_later``: pos ->
        #: delta) and new positions wait until a question needs it (:meth:`drops`)
        self._np_drop = Fenwick()
        self._drop_later: dict[int, int] = {}
        #: the seqs of out_at, each once, the smallest first (a heap: one that left out_at
        #: is taken off when it comes to the top); memory: at most one a message appended.
        #: Made when it is first needed (``_heaped``: :meth:`_first_sent_np`), kept since
        self.out_heap: list[int] = []
        self.in_heap: set[int] = set()
        self._heaped = False
        #: the first non-protected input message kept (its position; 0: none, None: not
        #: known since it moved) and how many non-protected ones come before it (None: ask)
        self._first_kept: int | None = 0
        self._np_before_kept: int | None = 0
        self.sigs: dict[Sig, list[int]] = {}  # non-protected live seqs by signature, sorted
        #: (seq, np_cnt.prefix(seq)) of the last anchor looked up alone (:meth:`continuity`):
        #: it moves only when a non-protected message before it is deleted (seq -1: none)
        self._before_anchor = (-1, 0)
        self.n_np = self.n_np_drop = 0
        self.total_in = 0
        self.est_out = 0
        self.prot_dropped: set[str] = set()
        self.bad_out: set[str] = set()  # sent ids unknown to the input or with other text
        self.changed: set[str] = set()  # ids whose drop status moved since the last enabled
        #: seq -> id of the output entries at an input seq whose sent role is free
        self.out_at: dict[int, str] = {}
        self.dead_seq: dict[str, int] = {}  # deleted ids: where they were (for a stale output)
        self.linked = 0  # live results with a live calling assistant message (R9 applies)
        self.orphans: set[str] = set()  # results sent without the message that called them

    # ---- the spec's arithmetic, written out again (no import from the cutter) ----

    def est(self, m: Message) -> int:
        """``ceil(len(content) * ratio) + message_overhead``, exact."""
        return -(-len(m.content) * self._num // self._den) + self._overhead

    def target(self) -> int:
        """``floor(max_context * (1 - trim_percent / 100))``, exact (computed once)."""
        return self._target

    # ---- one request ---------------------------------------------------------------

    def observe(self, obs: Step | Change) -> Request:
        """Apply one observation to the mirrors; what the request's invariants share."""
        if isinstance(obs, Step):
            ordered, est_out, first = self._apply_step(obs)
        else:
            self._apply_change(obs)
            ordered, est_out, first = True, self.est_out, self._first_sent_np()
        return self.request(obs, ordered, est_out, first)

    def request(self, obs: Step | Change, ordered: bool, est_out: int,
                first: Sig | None) -> Request:
        """What the request's invariants share, the observation applied."""
        if not obs.enabled:
            return Request(obs.request, False, ordered, 0, 0, est_out,
                           obs.budget_unreachable, 0, False, first)
        n_r = self.n_np - self._keep
        if n_r < 0:  # (not max(): a call that parses keywords, at every request)
            n_r = 0
        kr = self._r_end(n_r)
        k3, lost = self.continuity(n_r)
        return Request(obs.request, True, ordered, n_r, kr, est_out,
                       obs.budget_unreachable, k3, lost, first)

    def appended_held(self, ch: Change) -> bool | None:
        """The commonest request at once: an enabled change that sends exactly what it
        appends (:meth:`_as_sent`), nothing else (no edit, delete or withdrawal, no
        ``budget_unreachable``).  None: not that shape, nothing applied (ask
        :meth:`observe`).  Else applied (:meth:`_append_sent`), and True when R1-R7 hold
        and R8 does not apply as :func:`~risutools.replay.invariants.all_held` would say
        from :meth:`request`'s answer, found from the state a correct cutter leaves (the
        dropped messages the first ones, and the anchor the message looked up last, alone
        with its signature); False: ask :meth:`request` (the state is left as it is).
        Then :meth:`carry_appended` carries the state."""
        if (not ch.enabled or ch.withdrawn or ch.edited or ch.deleted
                or ch.budget_unreachable):
            return None
        appended = ch.appended
        if self._as_sent(appended, ch.sent) is None:
            return None
        self._append_sent(appended)
        if self.prot_dropped or self.bad_out or self.changed:
            return False  # (R1, R4 fail; R5 asks)
        if self.est_out > self.config.max_context:
            return False  # (R3)
        first, d = self._first_kept, self.n_np_drop
        if first is None or (self._np_before_kept != d if first else self.n_np != d):
            return False  # not known to be the first ones (R6)
        n_r = self.n_np - self._keep
        if n_r < 0:
            n_r = 0
        if d > n_r:
            return False  # (R2: dropped past R's last; else kr is d)
        k3, lost = self.continuity(n_r)
        return not lost and d <= k3  # (R8 applies; R7: a budget cut asks the trees)

    def carry_appended(self) -> None:
        """:meth:`carry_state` after :meth:`appended_held` said True: ``changed`` is
        empty, ``kr`` is ``n_np_drop``, the first sent the first kept."""
        self.prev_omitted = self.n_np_drop
        first = self._first_kept
        if first:
            e = self.by_seq[first - 1]
            assert e is not None
            self.prev_anchor = (e.msg.role, e.msg.content)
        else:
            self.prev_anchor = None

    def _r_end(self, n_r: int) -> int:
        """The removable messages dropped up to R's last (the ``n_r``-th non-protected):
        those dropped, when the first ones (:meth:`_drops_first`), up to ``n_r``; else
        walked back over the tail (at most :data:`_WALK` entries), else the trees'."""
        if n_r <= 0:
            return 0
        first, d = self._first_kept, self.n_np_drop
        if first is not None and (  # (:meth:`_drops_first`, written out)
                self._np_before_kept == d if first else self.n_np == d):
            return d if d < n_r else n_r
        tail = self.n_np - n_r  # the non-protected messages after R's last
        by_seq = self.by_seq
        seen = dropped = 0
        seq = len(by_seq) - 1
        stop = max(-1, seq - _WALK)
        while seq > stop:
            e = by_seq[seq]
            if e is not None and not e.prot:
                if seen == tail:  # R's last message
                    return self.n_np_drop - dropped
                seen += 1
                dropped += not e.kept
            seq -= 1
        return self.drops().prefix(self.np_cnt.lower_bound(n_r))

    def drops(self) -> Fenwick:
        """The tree of the non-protected messages not sent (1 each): its waiting changes
        made (they commute), then the positions it lacks pushed, as the history has them
        now (their own waiting changes dropped: that value holds them)."""
        later = self._drop_later
        drops = self._np_drop
        tree = drops.tree
        n = len(tree)
        if later:
            for i, delta in later.items():
                while i < n:
                    tree[i] += delta
                    i += i & -i
            later.clear()
        by_seq = self.by_seq
        for seq in range(n - 1, len(by_seq)):
            e = by_seq[seq]
            drops.push(0 if e is None or e.prot or e.kept else 1)
        return drops

    def _drop_add(self, pos: int, delta: int) -> None:
        """``drops().add(pos, delta)``, made when a question needs the tree."""
        later = self._drop_later
        later[pos] = later.get(pos, 0) + delta

    def _drops_first(self) -> bool:
        """Whether the messages not sent are the first ``n_np_drop`` non-protected ones
        (as far as the first one kept, known, tells: all before it, none after it)."""
        first = self._first_kept
        if first is None:
            return False
        if first:
            return self._np_before_kept == self.n_np_drop
        return self.n_np == self.n_np_drop  # none kept

    def carry_state(self, r: Request) -> None:
        """The state a correct cutter now carries; dropped ids for R5 (O(change))."""
        changed = self.changed
        if changed:  # (most requests: none moved, the set kept)
            inp, prev = self.inp, self.prev_dropped
            for mid in changed:
                e = inp.get(mid)
                if e is not None and not e.kept:
                    prev.add(mid)
                else:
                    prev.discard(mid)
            self.changed = set()
        self.prev_omitted = r.kr
        self.prev_anchor = r.first

    def continuity(self, n_r: int) -> tuple[int, bool]:
        """The continuity drop the spec asks for, from the derived state; (k3, anchor lost).

        The message looked up last (``_before_anchor``: its seq and the non-protected
        messages before it) is asked first: when it still bears the anchor's signature and
        sits at position ``omitted_count`` in R, that is the answer (the nearest, and the
        first at or past it: positions along ``seqs`` rise by one at least), else the
        search below finds it (and is remembered)."""
        t = self.prev_omitted
        if self.prev_anchor is None:
            return min(t, n_r), False
        seqs = self.sigs.get(self.prev_anchor)
        if not seqs:
            return min(t, n_r), True
        at, before = self._before_anchor
        if len(seqs) == 1:  # (most anchors: the search below gives its position)
            seq = seqs[0]
            if at != seq:  # (the previous request's anchor, most often: counted then)
                before = self.np_cnt.prefix(seq)
                self._before_anchor = (seq, before)
            return (before if before < n_r else n_r), False
        if at >= 0 and (before if before < n_r else n_r) == t and _holds(seqs, at):
            return t, False
        return self._nearest(seqs, t, n_r), False

    def _nearest(self, seqs: list[int], t: int, n_r: int) -> int:
        """The position in R (capped at ``n_r``) of the message of ``seqs`` nearest to
        position ``t``, ties to the later one; that message is remembered
        (``_before_anchor``)."""
        cnt = self.np_cnt
        seen: dict[int, int] = {}  # index in seqs -> removable messages before it (uncapped)

        def pos(i: int) -> int:  # position in R: removable messages before it, capped
            if i not in seen:
                seen[i] = cnt.prefix(seqs[i])
            return min(seen[i], n_r)

        lo, hi = 0, len(seqs)  # pos() does not decrease along seqs: first with pos >= t
        while lo < hi:
            mid = (lo + hi) // 2
            if pos(mid) >= t:
                hi = mid
            else:
                lo = mid + 1
        # the nearest is seqs[lo - 1] (below t) or seqs[lo] (at or above t); ties: the later
        below = pos(lo - 1) if lo else None
        above = pos(lo) if lo < len(seqs) else None
        pick = lo
        if above is None or (below is not None and t - below < above - t):
            pick = lo - 1
        self._before_anchor = (seqs[pick], seen[pick])
        return pos(pick)

    # ---- rank helpers (non-protected input messages, in order) -------------------

    def pos_of_rank(self, k: int) -> int:
        """1-based seq position of the k-th non-protected message (0 for k = 0)."""
        return self.np_cnt.lower_bound(k) if k > 0 else 0

    def est_after(self, n: int) -> int:
        """The input's estimate with the first ``n`` removable messages dropped."""
        return self.total_in - self.np_est.prefix(self.pos_of_rank(n))

    def last_r_dropped(self, r: Request) -> int:
        """1-based seq position of the last removable message dropped (the ``kr``-th
        dropped one: ``kr`` of them up to R's last message), found once a request."""
        if r.last is None:
            r.last = self._kth_dropped(r.kr)
        return r.last

    def _kth_dropped(self, k: int) -> int:
        """1-based seq position of the ``k``-th non-protected message not sent (k > 0): the
        ``k``-th non-protected one when they are the first ones (:meth:`_drops_first`; the
        last of them: walked back to from the first kept, or the end), else the tree's."""
        d = self.n_np_drop
        if k <= d and self._drops_first():
            if k < d:
                return self.np_cnt.lower_bound(k)
            by_seq = self.by_seq
            seq = (self._first_kept or len(by_seq) + 1) - 2  # the one before it
            stop = max(-1, seq - _WALK)
            while seq > stop:
                e = by_seq[seq]
                if e is not None and not e.prot:
                    return seq + 1
                seq -= 1
            return self.np_cnt.lower_bound(k)
        return self.drops().lower_bound(k)

    def est_at(self, pos: int) -> int:
        """The estimate of the input message at 1-based seq position ``pos``."""
        e = self.by_seq[pos - 1]
        assert e is not None
        return e.est

    def ids(self, positions: Iterable[int]) -> str:
        """The ids at these 1-based seq positions, comma-separated."""
        names = []
        for p in positions:
            e = self.by_seq[p - 1]
            assert e is not None
            names.append(e.msg.id)
        return ", ".join(names)

    def dropped_np_between(self, lo_rank: int, hi_rank: int, limit: int = 5) -> str:
        """Ids of up to ``limit`` dropped non-protected messages with rank in (lo, hi]."""
        drops = self.drops()
        before = drops.prefix(self.pos_of_rank(lo_rank))
        have = drops.prefix(self.pos_of_rank(hi_rank)) - before
        picks = range(1, min(have, limit) + 1)
        return self.ids(drops.lower_bound(before + j) for j in picks)

    # ---- mirrors -----------------------------------------------------------------

    def _refresh(self, mid: str) -> None:
        """Recompute what depends on both mirrors for one id (O(log n))."""
        e = self.inp.get(mid)
        o = self.out.get(mid)
        if o is not None and (e is None or (o.msg is not e.msg and (
                e.msg.role != o.msg.role or e.msg.content != o.msg.content))):
            self.bad_out.add(mid)
        else:
            self.bad_out.discard(mid)
        if e is None:
            return
        kept = o is not None
        if kept == e.kept:
            return
        e.kept = kept
        self.changed.add(mid)
        self._orphan(e)  # R9: a result, or the results of a call, moved
        for res in e.results:
            self._orphan(res)
        if e.prot:
            if kept:
                self.prot_dropped.discard(mid)
            else:
                self.prot_dropped.add(mid)
        else:
            self._drop_add(e.seq + 1, -1 if kept else 1)
            self.n_np_drop += -1 if kept else 1
            self._kept_moved(e.seq + 1, kept)

    def _in_append(self, m: Message, sent: bool = False) -> None:
        """``sent``: the very message is sent at once (what :meth:`_out_set` would then do,
        done here: the output has no entry of this id, see :meth:`_apply_change`)."""
        seq = len(self.by_seq)
        mid, role = m.id, m.role
        est = -(-len(m.content) * self._num // self._den) + self._overhead  # (:meth:`est`)
        prot = role in self.prot_roles
        e = _In(seq, m, est, prot)
        e.kept = sent
        self.by_seq.append(e)
        self.inp[mid] = e
        self.total_in += est
        if prot:  # (the drop tree's value: read when it is asked, :meth:`drops`)
            push_two(self.np_cnt, self.np_est, 0, 0)
        else:
            push_two(self.np_cnt, self.np_est, 1, est)
            if sent and self._first_kept == 0:  # the first kept, after every other one
                self._first_kept, self._np_before_kept = seq + 1, self.n_np
        if sent:
            self.out[mid] = e  # (its own output entry)
            self.est_out += est
            if not prot:
                self._out_at(seq, mid)
        if prot:
            if not sent:
                self.prot_dropped.add(mid)
        else:
            self.n_np += 1
            if not sent:
                self.n_np_drop += 1
            self.sigs.setdefault((role, m.content), []).append(seq)
        if role in RESULT_ROLES:
            self._link(e)
        self.changed.add(mid)
        if not sent and mid in self.out:  # sent before it was appended (else nothing to
            self._refresh(mid)  # refresh: not sent, and only sent ids are ever in bad_out)

    def _link(self, res: _In) -> None:
        """A result's caller: the assistant message right before the run of results it
        belongs to in the live history (none when something else comes first)."""
        for seq in range(res.seq - 1, -1, -1):
            e = self.by_seq[seq]
            if e is None or e.msg.role in RESULT_ROLES:
                continue
            if e.msg.role == "assistant":
                res.caller = e
                if e.results is _NO_RESULTS:
                    e.results = [res]
                else:
                    e.results.append(res)
                self.linked += 1
            break
        self._orphan(res)

    def ids_of_callers(self, results: Iterable[str]) -> list[str]:
        """The ids of the messages that called ``results``."""
        out = []
        for mid in results:
            caller = self.inp[mid].caller
            out.append(caller.msg.id if caller is not None else "?")
        return out

    def _orphan(self, res: _In) -> None:
        """Whether ``res`` is a result sent without its caller (``orphans``), now."""
        if res.caller is not None and res.kept and not res.caller.kept:
            self.orphans.add(res.msg.id)
        else:
            self.orphans.discard(res.msg.id)

    def _unlink(self, e: _In) -> None:
        """``e`` left the history (its place is empty): it is no one's result any more,
        and the run of results right after it belongs to what now comes before it."""
        if e.caller is not None:
            e.caller.results.remove(e)
            e.caller = None
            self.linked -= 1
        self.orphans.discard(e.msg.id)
        for seq in range(e.seq + 1, len(self.by_seq)):
            res = self.by_seq[seq]
            if res is None:
                continue
            if res.msg.role not in RESULT_ROLES:
                break
            if res.caller is not None:
                res.caller.results.remove(res)
                res.caller = None
                self.linked -= 1
            self._link(res)

    def _unindex(self, e: _In) -> None:
        seqs = self.sigs[(e.msg.role, e.msg.content)]
        del seqs[bisect.bisect_left(seqs, e.seq)]
        if not seqs:
            del self.sigs[(e.msg.role, e.msg.content)]

    def _in_edit(self, mid: str, content: str) -> None:
        e = self.inp[mid]
        if self.out.get(mid) is e:  # its own output entry: the output keeps the text sent
            self.out[mid] = _Out(e.msg, e.seq, e.est, e.anchor_np)
        new = Message(mid, e.msg.role, content)
        est = self.est(new)
        self.total_in += est - e.est
        if not e.prot:
            self.np_est.add(e.seq + 1, est - e.est)
            self._unindex(e)
            bisect.insort(self.sigs.setdefault((new.role, content), []), e.seq)
        e.msg, e.est = new, est
        self._refresh(mid)

    def _in_delete(self, mid: str) -> None:
        e = self.inp.pop(mid)
        self.by_seq[e.seq] = None
        self._unlink(e)
        self.dead_seq[mid] = e.seq
        self.total_in -= e.est
        self.prot_dropped.discard(mid)
        self.prev_dropped.discard(mid)  # memory stays bounded by the live history
        self.changed.discard(mid)
        if not e.prot:
            self.np_cnt.add(e.seq + 1, -1)
            self.np_est.add(e.seq + 1, -e.est)
            if e.seq < self._before_anchor[0]:  # one fewer before that anchor: ask again
                self._before_anchor = (-1, 0)
            if not e.kept:
                self._drop_add(e.seq + 1, -1)
                self.n_np_drop -= 1
                if (self._np_before_kept is not None and self._first_kept
                        and e.seq + 1 < self._first_kept):
                    self._np_before_kept -= 1  # one fewer before the first kept
            else:
                self._kept_moved(e.seq + 1, False, gone=True)
            self.n_np -= 1
            self._unindex(e)
        self._refresh(mid)

    def _kept_moved(self, pos: int, kept: bool, gone: bool = False) -> None:
        """The non-protected input message at ``pos`` is now kept (or not, or ``gone``):
        the first kept, if it comes first; if it was, the next kept (:meth:`_next_kept`)."""
        first = self._first_kept
        if kept:
            if first is not None and (not first or pos < first):
                self._first_kept, self._np_before_kept = pos, None
        elif first == pos:
            self._next_kept(pos - 1, 0 if gone else 1)

    def np_before_first_kept(self) -> int | None:
        """How many non-protected input messages come before the first one kept (None: none
        is kept), asked of the trees only when it moved (:meth:`_kept_moved`)."""
        if self._first_kept is None:
            pos = first_of_difference(self.np_cnt, self.drops())
            self._first_kept = 0 if pos > len(self.np_cnt) else pos
            self._np_before_kept = None
        if not self._first_kept:
            return None
        if self._np_before_kept is None:
            self._np_before_kept = self.np_cnt.prefix(self._first_kept - 1)
        return self._np_before_kept

    def _out_set(self, m: Message) -> None:
        old = self.out.get(m.id)
        e = self.inp.get(m.id)
        seq = e.seq if e is not None else self.dead_seq.get(m.id, -1)
        if old is not None:
            self._out_remove(m.id, refresh=False)
        # the very message of the input (the same object): the same text, the same estimate
        o = _Out(m, seq, e.est if e is not None and e.msg is m else self.est(m))
        self.out[m.id] = o
        self.est_out += o.est
        if seq >= 0 and m.role not in self.prot_roles:
            o.anchor_np = True
            self._out_at(seq, m.id)
        self._refresh(m.id)

    def _out_remove(self, mid: str, *, refresh: bool = True) -> None:
        o = self.out.pop(mid, None)
        if o is None:
            return
        self.est_out -= o.est
        if o.anchor_np:
            del self.out_at[o.seq]  # (its seq leaves the heap when it comes to the top)
        if refresh:
            self._refresh(mid)

    def _apply_change(self, ch: Change) -> None:
        """The operations in their order (appended, edited, deleted, withdrawn, sent); what
        is sent as appended (:meth:`_as_sent`), none of it withdrawn, edited or deleted:
        entered first, in one pass (what depends on two messages follows either)."""
        if self.fast:
            ids = self._as_sent(ch.appended, ch.sent)
            withdrawn, edited, deleted = ch.withdrawn, ch.edited, ch.deleted
            if ids is not None and (not withdrawn or ids.isdisjoint(withdrawn)) and (
                    not (edited or deleted) or _apart(ids, edited, deleted)):
                self._append_sent(ch.appended)
                for mid, content in edited:
                    self._in_edit(mid, content)
                for mid in deleted:
                    self._in_delete(mid)
                if withdrawn:
                    self._withdraw_all(withdrawn)
                return
        at_once = self._sent_as_appended(ch)
        for m in ch.appended:
            self._in_append(m, m.id in at_once)
        for mid, content in ch.edited:
            self._in_edit(mid, content)
        for mid in ch.deleted:
            self._in_delete(mid)
        for mid in ch.withdrawn:
            self._out_remove(mid)
        for m in ch.sent:
            if m.id not in at_once:
                self._out_set(m)

    def _as_sent(self, appended: Sequence[Message], sent: Sequence[Message]) -> set[str] | None:
        """The ids appended, when a change (no edit, no delete) sends exactly what it
        appends, in order (the same messages: equal ids, roles and texts, a sequence of
        the same type), each id once and none in the output before and none in the
        input (a new id: else None): then, none of them withdrawn,
        :meth:`_sent_as_appended` enters every one sent at once (what :meth:`_append_sent`
        does, the appended message as the one sent: the same text, the same estimate)
        and nothing else is sent.  (Tested in C: no Python loop, no comprehension.)"""
        if sent != appended:
            return None
        ids = set(map(_ID, appended))
        if (len(ids) != len(appended) or not self.out.keys().isdisjoint(ids)
                or not self.inp.keys().isdisjoint(ids)):
            return None
        return ids

    def _append_sent(self, appended: Sequence[Message]) -> None:
        """``_in_append(m, True)`` for each message, in order, in one pass (the mirror's
        fields read once, the two trees pushed by :func:`push_two` (the drop tree's push:
        when it is asked, :meth:`drops`), each entry made without a call, the seq onto the
        heap of ``out_at`` as the largest there: a new leaf, its place already; :meth:`_as_sent`
        said every one is new and sent at once), but for one thing: a new id kept is not
        entered in ``changed``.  Nothing can tell: only ``prev_dropped`` is read with it
        (R5, :meth:`carry_state`), a subset of the ids in the input before, which this one
        was not, and discarding a kept id from it does nothing."""
        by_seq, inp = self.by_seq, self.inp  # (two a line: more are a tuple made, unpacked)
        out, out_at = self.out, self.out_at
        num, den = self._num, self._den
        over, prot_roles = self._overhead, self.prot_roles
        np_cnt, np_est = self.np_cnt, self.np_est
        heap, in_heap = self.out_heap, self.in_heap
        sigs, heaped = self.sigs, self._heaped
        total = 0
        n_np = self.n_np
        for m in appended:
            seq = len(by_seq)
            mid, role, content = m
            est = -(-len(content) * num // den) + over
            total += est
            e = _new(_In)  # (``_In(seq, m, est, prot, True)``, its fields set here)
            e.seq = seq
            e.msg = m
            e.est = est
            e.kept = True
            e.caller = None
            e.results = _NO_RESULTS
            by_seq.append(e)
            inp[mid] = e
            out[mid] = e  # (its own output entry)
            if role in prot_roles:
                e.prot, e.anchor_np = True, False
                va = vb = 0
            else:
                e.prot, e.anchor_np = False, True
                va, vb = 1, est
                if self._first_kept == 0:  # the first kept, after every other one
                    self._first_kept, self._np_before_kept = seq + 1, n_np
                out_at[seq] = mid  # (:meth:`_out_at`)
                if heaped:
                    in_heap.add(seq)
                    heap.append(seq)
                n_np += 1
                sigs.setdefault((role, content), []).append(seq)
            push_two(np_cnt, np_est, va, vb)
            if role in RESULT_ROLES:
                self._link(e)
        self.n_np = n_np
        self.total_in += total
        self.est_out += total

    def _withdraw_all(self, withdrawn: Sequence[str]) -> None:
        """``_out_remove(mid)`` for each id, in order, in one pass: with its entry gone
        from the output, what :meth:`_refresh` then does, written out for that case."""
        out, inp, out_at, later = self.out, self.inp, self.out_at, self._drop_later
        bad_out, changed, orphans = self.bad_out, self.changed, self.orphans
        est_out = dropped = 0
        first, moved = self._first_kept, False
        for mid in withdrawn:
            o = out.pop(mid, None)
            if o is None:
                continue
            est_out += o.est
            if o.anchor_np:
                del out_at[o.seq]
            if bad_out:
                bad_out.discard(mid)
            e = inp.get(mid)
            if e is None or not e.kept:
                continue
            e.kept = False
            changed.add(mid)
            if orphans:
                orphans.discard(mid)  # (:meth:`_orphan` of a message not kept)
            if e.results is not _NO_RESULTS:  # (most have none: no loop begun)
                for res in e.results:
                    self._orphan(res)
            if e.prot:
                self.prot_dropped.add(mid)
                continue
            i = e.seq + 1  # (:meth:`_drop_add`)
            later[i] = later.get(i, 0) + 1
            dropped += 1
            moved = moved or first == i  # (:meth:`_kept_moved`, once at the end)
        self.est_out -= est_out
        self.n_np_drop += dropped
        if moved:  # the first kept withdrawn: the next kept is past those withdrawn
            assert first is not None
            self._next_kept(first - 1, 1, _WALK + 2 * len(withdrawn))

    def _next_kept(self, seq: int, stays: int, walk: int = _WALK) -> None:
        """The first non-protected message kept, at ``seq``, is no longer kept (``stays``
        1) or gone (0): the next one kept, walking forward (at most ``walk`` entries; past
        them, not known), with the non-protected ones before it (the one at ``seq`` if it
        stays, and those passed, none kept); none kept when the walk reaches the end."""
        before = self._np_before_kept
        by_seq = self.by_seq
        n = len(by_seq)
        stop = min(n, seq + 1 + walk)
        if before is not None:
            before += stays
            for s in range(seq + 1, stop):
                e = by_seq[s]
                if e is None or e.prot:
                    continue
                if e.kept:
                    self._first_kept, self._np_before_kept = s + 1, before
                    return
                before += 1
            if stop == n:
                self._first_kept, self._np_before_kept = 0, None
                return
        self._first_kept = self._np_before_kept = None

    def _sent_as_appended(self, ch: Change) -> set[str]:
        """:func:`~risutools.replay.mirror_records.sent_as_appended` of this output."""
        return sent_as_appended(ch, self.out)

    def _apply_step(self, step: Step) -> tuple[bool, int, Sig | None]:
        """Rebuild both mirrors from whole lists (O(n)); return what only lists can show:
        whether the output keeps the input's order without repeats, the estimate of the
        list as sent, and the signature of its first non-protected message."""
        self._reset()
        for m in step.inp:
            self._in_append(m)
        for m in step.out:
            self._out_set(m)
        self.prev_dropped &= self.inp.keys()
        self.changed = set(self.inp)
        pos = [self.inp[m.id].seq if m.id in self.inp else -1 for m in step.out]
        ordered = len(self.out) == len(step.out) and all(
            b > a for a, b in itertools.pairwise(pos)
        )
        est_out = sum(self.est(m) for m in step.out)
        first = next((m for m in step.out if m.role not in self.prot_roles), None)
        return ordered, est_out, ((first.role, first.content) if first else None)

    def _first_sent_np(self) -> Sig | None:
        """Signature of the first non-protected message sent (in the input's order): the
        smallest seq of ``out_at``, the top of its heap once the seqs that left are off;
        the first non-protected one kept, when known, if every output entry is a live
        input message as it is (``bad_out`` empty: then so are out_at's seqs)."""
        first = self._first_kept
        if first is not None and not self.bad_out:
            if not first:
                return None
            e = self.by_seq[first - 1]
            assert e is not None
            return (e.msg.role, e.msg.content)
        heap, at = self.out_heap, self.out_at
        if not self._heaped:  # (out_at's seqs, each once)
            heap[:] = at
            heapq.heapify(heap)
            self.in_heap.update(heap)
            self._heaped = True
        while heap and heap[0] not in at:
            self.in_heap.discard(heapq.heappop(heap))
        if not heap:
            return None
        m = self.out[at[heap[0]]].msg
        return (m.role, m.content)

    def _out_at(self, seq: int, mid: str) -> None:
        """``out_at[seq] = mid``, its seq on the heap unless it still is."""
        self.out_at[seq] = mid
        if self._heaped and seq not in self.in_heap:
            self.in_heap.add(seq)
            heapq.heappush(self.out_heap, seq)

