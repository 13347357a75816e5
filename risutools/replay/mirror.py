"""The invariant checker's own view of a replay: its mirror of the input and the output.

Written from the spec, apart from the cutter: it looks only at what any cutter can be
observed doing -- the message list it was given, the list it sent, and the
``budget_unreachable`` flag it raised.  The state it compares against (omitted count,
anchor) is derived here from the previous enabled request's input and output, not taken
from the cutter, and it has its own estimate, trim target and anchor signature (role and
the full text).

**Incremental.** The mirror of the input is fed with the fixture's operations, the mirror
of the output with what the cutter says it added to or withdrew from the list it sends;
the live non-protected positions in order (``np_seqs``: counts and ranks by bisection),
Fenwick trees over the order of appearance (estimates of non-protected messages, dropped
ones; grown when a question needs them: ``mirror_ranks.py``) and a text -> positions
index answer every question an invariant asks.  A request costs O((input changes + output
changes) * log n), amortised O(change), a delete too (what deletes move in ``np_seqs`` and
the index's lists is counted, and a list made blocked past an allowance: ``seqs.py``):
nothing is rescanned.  Memory is O(messages ever appended); nothing grows per request.  A
request is observed as a :class:`Change` (the turn's operations and the output's changes:
what the harness sends for the reference cutter) or a :class:`Step` (the whole lists, any
cutter, the mirrors rebuilt: O(n); the only form of a reordered output), both in
``mirror_records.py``.

:meth:`Mirror.observe` applies one observation and returns the :class:`Request` the
invariants (``invariants.py``) read together with the mirror; :meth:`Mirror.appended_held`
answers the commonest request (sent as appended, nothing else) at once, without one.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Sequence
from fractions import Fraction
from itertools import repeat
from operator import is_not, itemgetter

from risutools.replay.fenwick import Fenwick, first_of_difference
from risutools.replay.fixture import Message
from risutools.replay.mirror_passes import Passes
from risutools.replay.mirror_ranks import _WALK
from risutools.replay.mirror_records import (
    A_CUT,
    A_DROP,
    A_HELD,
    A_PREV,
    A_PROT,
    A_TAIL,
    RESULT_ROLES,
    Change,
    Request,
    Sig,
    Step,
    _apart,
    _In,
    _Out,
    sent_as_appended,
)
from risutools.replay.seqs import Moves
from risutools.settings.replay import PROFILES, ReplayConfig

__all__ = ["RESULT_ROLES", "Change", "Mirror", "Request", "Sig", "Step"]

#: a message's id (its first field), for ``map``
_ID = itemgetter(0)
#: an object made without its ``__init__`` (its fields set by the caller)
_new = object.__new__


class Mirror(Passes):
    """The input and output as the checker sees them, and the state derived from the
    previous enabled request (``prev_dropped``, ``prev_np_dropped``, ``prev_omitted``,
    ``prev_anchor``)."""

    # (slots: past 30 fields, CPython 3.11 reads each one from a dict; __dict__ for tests;
    # those :class:`Passes` sets: its own)
    __slots__ = (
        "__dict__", "_cnt", "_den", "_drop_later", "_ests", "_heaped", "_keep", "_max",
        "_moves", "_np_drop", "_num", "_overhead", "_target", "bad_out", "by_seq",
        "changed", "config", "dead_seq", "fast", "gone", "in_heap", "inp", "np_seqs",
        "out", "out_at", "out_heap", "prev_anchor", "prev_dropped", "prev_np_dropped",
        "prev_omitted", "prot_dropped", "prot_roles", "runs", "texts")

    def __init__(self, config: ReplayConfig) -> None:
        #: a change's two commonest shapes in one pass each (:meth:`_append_sent`,
        #: :meth:`_withdraw_all`); False: one operation at a time (the tests' reference)
        self.fast = True
        self.config = config
        self._max = config.max_context
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
        #: how many of ``prev_dropped`` are non-protected (R5 applies when some are: only
        #: they can come back), read before :meth:`carry_state` sets it again
        self.prev_np_dropped = 0
        self.prev_omitted = 0
        self.prev_anchor: Sig | None = None

    def _reset(self) -> None:
        self.by_seq: list[_In | None] = []
        self.runs: dict[int, int] = {}  # (places.py: valid while by_seq only grows and empties)
        self.inp: dict[str, _In] = {}
        self.out: dict[str, _Out] = {}
        #: 1 per live non-protected input message, and their estimates (:attr:`np_cnt`,
        #: :attr:`np_est`): the positions they lack pushed when a question needs them
        self._cnt = Fenwick()
        self._ests = Fenwick()
        #: the seqs of the live non-protected input messages, in order: what the count tree
        #: answers most often (:meth:`np_before`, :meth:`np_at`), without it
        self.np_seqs: list[int] = []
        #: what deletes and inserts in ``np_seqs`` and ``texts``' lists move (a list made
        #: blocked past an allowance: :mod:`~risutools.replay.seqs`)
        self._moves = Moves()
        #: 1 per live non-protected input message not sent: changes (``_drop_later``: pos ->
        #: delta) and new positions wait until a question needs it (:meth:`drops`)
        self._np_drop = Fenwick()
        self._drop_later: dict[int, int] = {}
        #: the seqs of out_at, each once, the smallest first (a heap: one that left out_at
        #: is taken off when it comes to the top); memory: at most one a message appended.
        #: Made when it is first needed (``_heaped``: :meth:`first_sent_np`), kept since
        self.out_heap: list[int] = []
        self.in_heap: set[int] = set()
        self._heaped = False
        #: the first non-protected input message kept (its position; 0: none, None: not
        #: known since it moved) and how many non-protected ones come before it (None: ask)
        self._first_kept: int | None = 0
        self._np_before_kept: int | None = 0
        #: the live non-protected seqs by signature (role, text) (:meth:`seqs_of`): the one
        #: seq of a signature alone (most), else the list of them, sorted (made when asked)
        self.texts: dict[Sig, int | list[int]] = {}
        self._texts_upto = 0  # (the seqs from it on: not in ``texts`` yet)
        #: (seq, np_cnt.prefix(seq)) of the last anchor looked up alone (:meth:`continuity`):
        #: it moves only when a non-protected message before it is deleted (seq -1: none)
        self._before_anchor = (-1, 0)
        self.n_np = self.n_np_drop = 0
        self.total_in = 0
        self.est_out = 0
        self.prot_dropped: set[str] = set()
        self.bad_out: set[str] = set()  # sent ids unknown to the input or with other text
        self.changed: set[str] = set()  # ids whose drop status moved since the last enabled
        #: ids :meth:`_withdraw_all` moved from sent to dropped since the last enabled (out
        #: of ``changed``: dropped still, but for those ``changed`` has since; carried at once)
        self.gone: set[str] = set()
        #: the anchor is the first kept, at position ``prev_omitted``, after a request
        #: :meth:`appended_held` said held: its answer for the next ones (the units that
        #: apply while only messages sent as appended come, ``A_*``); 0 (False) since
        #: anything else changed the mirrors
        self._steady: int = 0
        #: seq -> id of the output entries at an input seq whose sent role is free (None:
        #: none), a place for each message appended (as ``by_seq``)
        self.out_at: list[str | None] = []
        self.dead_seq: dict[str, int] = {}  # deleted ids: where they were (for a stale output)
        self._clear_runs()  # the runs of results, R9's state (mirror_runs.py)

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
        self._steady = 0  # (only the quick path keeps it)
        if isinstance(obs, Step):
            ordered, est_out, first = self._apply_step(obs)
        else:
            self._apply_change(obs)
            ordered, est_out, first = True, self.est_out, self.first_sent_np()
        return self.request(obs, ordered, est_out, first)

    def request(self, obs: Step | Change, ordered: bool, est_out: int,
                first: Sig | None) -> Request:
        """What the request's invariants share, the observation applied."""
        self._steady = 0  # (only the quick path keeps it)
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

    def appended_held(self, ch: Change, orphans_ok: bool) -> int | None:
        """The commonest request at once: an enabled change that sends exactly what it
        appends (the same messages in order, in a sequence of the same type), each id
        once and new (in neither the input nor the output: with ``bad_out`` empty, the
        output's ids are the input's), and does nothing else (no edit, delete or
        withdrawal, no ``budget_unreachable``): :meth:`_as_sent`'s case, written out.
        None: not that shape, nothing applied (ask :meth:`observe`).  Else applied
        (:meth:`_append_sent`); then what :func:`~risutools.replay.invariants.all_held`
        would answer of :meth:`request`'s answer when it is true (``A_HELD`` and the bits
        of the units that applied), and R9 holds, does not apply or may fail uncounted by
        its unit (``orphans_ok``: it failed before), the state then carried
        (:meth:`_held_after_append`); 0: ask :meth:`request` (nothing carried)."""
        _, enabled, appended, edited, deleted, sent, withdrawn, unreachable = ch
        if (withdrawn or edited or deleted or unreachable or not enabled
                or sent != appended):
            return None
        if len(appended) == 2:  # (the commonest: :meth:`_new_ids`' first case)
            a, b = appended[0][0], appended[1][0]
            if a == b or a in self.inp or b in self.inp or (
                    self.bad_out and not self.out.keys().isdisjoint((a, b))):
                return None
        elif not self._new_ids(appended):
            return None
        self._append_sent(appended)
        steady = self._steady
        if steady and self.est_out <= self._max:  # (what else :meth:`_plain`
            return steady  # reads has not moved since it held: :meth:`_held_after_append`)
        return self._held_after_append(orphans_ok)

    def changed_held(self, ch: Change, orphans_ok: bool) -> int | None:
        """Any other enabled change, without ``budget_unreachable``: applied (what
        :meth:`observe` applies), then answered from the state as
        :meth:`appended_held` answers (:meth:`_held_after_append`: held, the state
        carried; 0: ask :meth:`request`).  None: the module off or
        ``budget_unreachable``, nothing applied (ask :meth:`observe`)."""
        if not ch.enabled or ch.budget_unreachable:
            return None
        self._apply_change(ch)
        return self._held_after_append(orphans_ok)

    def _new_ids(self, appended: Sequence[Message]) -> bool:
        """Whether each id appended is there once and new: in neither the input nor the
        output (with ``bad_out`` empty, the output's ids are the input's); one or two
        asked at once, more in a set."""
        n = len(appended)
        inp = self.inp
        if n == 2:
            a, b = appended[0][0], appended[1][0]
            if a == b or a in inp or b in inp:
                return False
        elif n == 1:
            if appended[0][0] in inp:
                return False
        elif len(set(map(_ID, appended))) != n or not inp.keys().isdisjoint(
                map(_ID, appended)):
            return False
        return not self.bad_out or self.out.keys().isdisjoint(map(_ID, appended))

    def _held_after_append(self, orphans_ok: bool) -> int:
        """:meth:`appended_held`'s answer, found from the state a correct cutter leaves
        (the dropped messages the first ones, the anchor the message looked up last,
        alone with its signature), and the state then carried (:meth:`carry_state`: kr is
        ``n_np_drop``, the first sent the first kept, ``changed`` empty).

        The anchor carried is then the first kept, at position ``prev_omitted`` (the
        ``n_np_drop`` dropped before it, the first ones) and looked up last: while only
        messages sent as appended come (``_steady``), nothing read here moves but the
        output's estimate (:meth:`appended_held` asks it again) and, when a result is
        appended, R9's state (then ``_steady`` is dropped: the full test), the state
        carried the same: the anchor is the one of its signature
        nearest to that position (at 0 from it, whatever twins come: :meth:`continuity`
        answers ``prev_omitted`` at once), the first kept stays the first kept.  So do
        the units that apply (:meth:`_applied`): the steady answer, unless a first
        protected message is appended (:meth:`_append_sent` drops ``_steady`` then)."""
        self._steady = 0
        if not self._plain(orphans_ok):
            return 0
        first, d = self._first_kept, self.n_np_drop
        if first is None or (self._np_before_kept != d if first else self.n_np != d):
            return 0  # not known to be the first ones (R6; else kr is min(d, n_r))
        if d and d > self.n_np - self._keep:
            return 0  # (R2: dropped past R's last)
        anchor = self.prev_anchor
        if anchor is None:
            k3 = self.prev_omitted  # (min(k3, n_r) >= d: k3 >= d, as d <= n_r or d is 0)
        else:
            n_r = self.n_np - self._keep
            if n_r < 0:
                n_r = 0
            at, k3 = self._before_anchor  # (:meth:`continuity`'s first case)
            if k3 > n_r:
                k3 = n_r
            if k3 != self.prev_omitted or not self._bears(at, anchor):
                k3, lost = self.continuity(n_r)
                if lost:
                    return 0  # (R8 applies)
        if d > k3 and not (  # R7: a cut beyond continuity, needed and minimal
                self.est_after(k3) > self._max
                and self.est_out + self.est_at(self.np_at(d)) > self._target):
            return 0
        if self.gone:  # (:meth:`carry_state`: dropped still, ``changed`` empty)
            self.prev_dropped |= self.gone
            self.gone = set()
        held = self._applied(d, d > k3, bool(first))
        self.prev_omitted = self.prev_np_dropped = d
        self.prev_anchor = self._first_sig(first, d)
        return held

    def _applied(self, d: int, cut: bool, steady: bool) -> int:
        """At a request R1-R7 held at, ``d`` non-protected messages dropped (the first
        ones, none protected) and ``cut`` one beyond continuity, the state not yet
        carried: the answer (``A_HELD`` and the units that applied, as
        :func:`~risutools.replay.invariants.all_held` answers); when ``steady``, the one
        of the next requests while only messages sent as appended come kept as
        ``_steady`` (the input's protected messages and its tail still there, ``d``
        dropped at this one and at them, none beyond continuity: ``prev_omitted`` is
        ``d``)."""
        both = A_HELD
        if len(self.inp) > self.n_np:
            both |= A_PROT
        if self._keep and self.n_np:
            both |= A_TAIL
        if steady:
            self._steady = both | A_DROP | A_PREV if d else both
        held = both | A_DROP | A_CUT * cut if d else both
        return held | A_PREV if self.prev_np_dropped else held

    def _plain(self, orphans_ok: bool) -> bool:
        """Nothing protected dropped (R1), every message sent as the input has it (R4),
        no drop status moved (R5), the output within ``max_context`` (R3), no result sent
        without its call or R9 failed before."""
        return not (self.prot_dropped or self.bad_out or self.changed
                    or self.est_out > self._max
                    or (self.orphaned and self.linked and not orphans_ok))

    def _first_sig(self, first: int, d: int) -> Sig | None:
        """The signature of the first kept message (at ``first``, after ``d``
        non-protected ones; 0: none), remembered as looked up (:meth:`_count_first_kept`)."""
        if not first:
            return None
        e = self.by_seq[first - 1]
        assert e is not None
        if self._before_anchor[0] != first - 1:
            self._before_anchor = (first - 1, d)
        return (e.msg.role, e.msg.content)

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
        return self.drops().prefix(self.np_at(n_r))

    def carry_state(self, r: Request) -> None:
        """The state a correct cutter now carries; dropped ids for R5 (O(change))."""
        if self.gone:  # (dropped still, or in changed: set right below)
            self.prev_dropped |= self.gone
            self.gone = set()
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
        self.prev_np_dropped = self.n_np_drop  # (every one not kept is in prev_dropped)
        self.prev_anchor = r.first
        self._count_first_kept()

    def _count_first_kept(self) -> None:
        """Remember the first kept message's count of non-protected ones before it, when
        known, as :meth:`continuity`'s last look-up (``_before_anchor``): the anchor
        carried, most often, and looked up at the next request without a tree."""
        first, before = self._first_kept, self._np_before_kept
        if first and before is not None:
            self._before_anchor = (first - 1, before)

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
        if e.run is not None:  # R9: a result, or the caller of a run, moved
            self._moved(e, kept)
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
        self._steady = 0
        seq = len(self.by_seq)
        mid, role = m.id, m.role
        est = -(-len(m.content) * self._num // self._den) + self._overhead  # (:meth:`est`)
        prot = role in self.prot_roles
        e = _In(seq, m, est, prot)
        e.kept = sent
        self.by_seq.append(e)
        self.out_at.append(None)
        self.inp[mid] = e
        self.total_in += est
        # (the trees' values: read when they are asked, :attr:`np_cnt`)
        if not prot and sent and self._first_kept == 0:  # the first kept, after the others
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
            self.np_seqs.append(seq)
        if role in RESULT_ROLES:
            self._link(e)
        self.changed.add(mid)
        if not sent and mid in self.out:  # sent before it was appended (else nothing to
            self._refresh(mid)  # refresh: not sent, and only sent ids are ever in bad_out)

    def _in_edit(self, mid: str, content: str) -> None:
        self._steady = 0
        e = self.inp[mid]
        if self.out.get(mid) is e:  # its own output entry: the output keeps the text sent
            self.out[mid] = _Out(e.msg, e.seq, e.est, e.anchor_np)
        new = Message(mid, e.msg.role, content)
        est = self.est(new)
        self.total_in += est - e.est
        if not e.prot:
            self._ests.add(e.seq + 1, est - e.est)  # (none when it lacks it: :meth:`_grow`)
            if self._unindex(e):
                self._index((e.msg.role, content), e.seq)
        e.msg, e.est = new, est
        self._refresh(mid)

    def _in_delete(self, mid: str) -> None:
        self._steady = 0
        e = self.inp.pop(mid)
        self.by_seq[e.seq] = None
        self._unlink(e)
        self.dead_seq[mid] = e.seq
        self.total_in -= e.est
        self.prot_dropped.discard(mid)
        if mid in self.prev_dropped:  # memory stays bounded by the live history
            self.prev_dropped.remove(mid)
            self.prev_np_dropped -= not e.prot
        self.changed.discard(mid)
        self.gone.discard(mid)
        if not e.prot:
            self._cnt.add(e.seq + 1, -1)  # (none when they lack it: :meth:`_grow`)
            self._ests.add(e.seq + 1, -e.est)
            at, before = self._before_anchor
            if e.seq < at:  # one fewer before that anchor
                self._before_anchor = (at, before - 1)
            self.np_seqs = self._moves.taken(self.np_seqs, e.seq, len(self.by_seq))
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
            self._first_kept = 0 if pos > len(self.by_seq) else pos
            self._np_before_kept = None
        if not self._first_kept:
            return None
        if self._np_before_kept is None:
            self._np_before_kept = self.np_before(self._first_kept - 1)
        return self._np_before_kept

    def _out_set(self, m: Message) -> None:
        self._steady = 0
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
        self._steady = 0
        o = self.out.pop(mid, None)
        if o is None:
            return
        self.est_out -= o.est
        if o.anchor_np:
            self.out_at[o.seq] = None  # (its seq leaves the heap when at the top)
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
        if self.fast:
            if len(ch.sent) > len(at_once):  # (any not entered with the input)
                self._send_all(ch.sent, at_once)
            return
        for m in ch.sent:
            if m.id not in at_once:
                self._out_set(m)

    def _send_all(self, sent: Sequence[Message], skip: set[str]) -> None:
        """:meth:`_out_set` of each message sent but those in ``skip``, in order, in one
        pass for the usual one: a live input message sent again as it is (the very
        message), not in the output and not kept (a switch of the module off, a cut moved
        back) -- its own output entry then, as an appended one sent at once is
        (:meth:`_append_sent`), and what :meth:`_refresh` does for it written out: it is
        kept now (in ``changed``; R9's run moved; a protected one dropped no longer; else
        one fewer dropped, and the first kept if it comes first).  (An entry of its own
        is what :meth:`_out_set` would make of it, field for field; ``bad_out`` holds
        only ids in the output: it lacks this one.)"""
        inp, out, out_at = self.inp, self.out, self.out_at
        has = len(self._np_drop.tree)  # (:meth:`_drop_add`: positions the tree has)
        later, changed = self._drop_later, self.changed
        heaped, in_heap, out_heap = self._heaped, self.in_heap, self.out_heap
        est_out = 0
        self._steady = 0  # (as :meth:`_out_set` leaves it)
        for m in sent:
            mid = m[0]
            if mid in skip:
                continue
            e = inp.get(mid)
            if e is None or e.msg is not m or e.kept or mid in out:
                self.est_out += est_out
                est_out = 0
                self._out_set(m)
                continue
            out[mid] = e
            est_out += e.est
            e.kept = True
            changed.add(mid)
            if not e.prot:
                seq = e.seq
                out_at[seq] = mid  # (:meth:`_out_at`)
                if heaped and seq not in in_heap:
                    in_heap.add(seq)
                    heapq.heappush(out_heap, seq)
                if seq + 1 < has:  # (:meth:`_drop_add`)
                    later[seq + 1] = later.get(seq + 1, 0) - 1
                self.n_np_drop -= 1
                first = self._first_kept  # (:meth:`_kept_moved`: now kept)
                if first is not None and (not first or seq + 1 < first):
                    self._first_kept, self._np_before_kept = seq + 1, None
            else:
                self.prot_dropped.discard(mid)
            if e.run is not None:  # R9: a result, or the caller of a run, sent again
                self._moved(e, True)
        self.est_out += est_out
        first = self._first_kept
        if first and self._np_before_kept is None:  # (one bisection, not one a message
            self._np_before_kept = self.np_before(first - 1)  # moved: :meth:`np_before`)

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
        self.prev_np_dropped = sum(not self.inp[mid].prot for mid in self.prev_dropped)
        self.changed = set(self.inp)
        pos = [self.inp[m.id].seq if m.id in self.inp else -1 for m in step.out]
        ordered = len(self.out) == len(step.out) and all(
            b > a for a, b in itertools.pairwise(pos)
        )
        est_out = sum(self.est(m) for m in step.out)
        first = next((m for m in step.out if m.role not in self.prot_roles), None)
        return ordered, est_out, ((first.role, first.content) if first else None)

    def first_sent_np(self) -> Sig | None:
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
        if not self._heaped:  # (out_at's seqs, each once: in order, a heap already)
            heap[:] = itertools.compress(itertools.count(), map(is_not, at, repeat(None)))
            self.in_heap.update(heap)
            self._heaped = True
        while heap and at[heap[0]] is None:
            self.in_heap.discard(heapq.heappop(heap))
        if not heap:
            return None
        mid = at[heap[0]]
        assert mid is not None
        m = self.out[mid].msg
        return (m.role, m.content)

    def _out_at(self, seq: int, mid: str) -> None:
        """``out_at[seq] = mid``, its seq on the heap unless it still is."""
        self.out_at[seq] = mid
        if self._heaped and seq not in self.in_heap:
            self.in_heap.add(seq)
            heapq.heappush(self.out_heap, seq)

