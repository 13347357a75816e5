"""The mirror's passes over a change's two commonest shapes (``mirror.py``,
:meth:`~risutools.replay.mirror.Mirror._apply_change`): messages sent as they are
appended (:meth:`Passes._append_sent`) and ids withdrawn from the output
(:meth:`Passes._withdraw_all`; a run of the oldest non-protected messages sent, as a
correct cutter trims, in a few passes in C: :meth:`Passes._withdraw_run`).

:class:`Passes` is a base of :class:`~risutools.replay.mirror.Mirror`, which holds the
fields named here (its ``__slots__``)."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import repeat
from operator import itemgetter
from typing import cast

from risutools.replay.fixture import Message
from risutools.replay.mirror_ranks import _KEPT, _WALK
from risutools.replay.mirror_records import RESULT_ROLES, _In, _Out
from risutools.replay.mirror_runs import Runs
from risutools.replay.seqs import rank

#: a message's id (its first field), for ``map``
_ID = itemgetter(0)
#: an object made without its ``__init__`` (its fields set by the caller)
_new = object.__new__


class Passes(Runs):
    """Changes applied in one pass each."""

    __slots__ = ("_first_kept", "_np_before_kept", "_steady", "est_out", "n_np",
                 "n_np_drop", "total_in")  # (the fields set here; the others: the mirror's)

    # the mirror's fields these read, beyond :class:`Runs`' and :class:`Ranks`' (:class:`Mirror`)
    inp: dict[str, _In]
    out: dict[str, _Out]
    out_at: list[str | None]
    out_heap: list[int]
    in_heap: set[int]
    _heaped: bool
    _num: int
    _den: int
    _overhead: int
    prot_roles: frozenset[str]
    gone: set[str]

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
        fields read once, no tree pushed: when it is asked, :attr:`np_cnt`,
        :meth:`drops`), each entry made without a call, the seq onto the
        heap of ``out_at`` as the largest there: a new leaf, its place already; :meth:`_as_sent`
        said every one is new and sent at once), but for one thing: a new id kept is not
        entered in ``changed``.  Nothing can tell: only ``prev_dropped`` is read with it
        (R5, :meth:`carry_state`), a subset of the ids in the input before, which this one
        was not, and discarding a kept id from it does nothing."""
        by_seq, inp = self.by_seq, self.inp  # (two a line: more are a tuple made, unpacked)
        out, out_at = self.out, self.out_at
        num, den = self._num, self._den
        over, prot_roles = self._overhead, self.prot_roles
        np_seqs = self.np_seqs
        seq = len(by_seq) - 1
        n_np = self.n_np
        none_kept = self._first_kept == 0
        total = 0
        for m in appended:
            seq += 1
            mid, role, content = m
            est = -(-len(content) * num // den) + over
            total += est
            e = _new(_In)  # (``_In(seq, m, est, prot, True)``, its fields set here)
            e.seq = seq
            e.msg = m
            e.est = est
            e.kept = True
            e.run = None
            by_seq.append(e)
            inp[mid] = e
            out[mid] = e  # (its own output entry)
            if role in prot_roles:
                e.prot, e.anchor_np = True, False
                out_at.append(None)
                if len(inp) == n_np + 1:  # the first protected one: R1 applies from now
                    self._steady = 0  # (:meth:`Mirror._applied` again)
            else:
                e.prot, e.anchor_np = False, True
                if none_kept:  # the first kept, after every other one
                    self._first_kept, self._np_before_kept = seq + 1, n_np
                    none_kept = False
                out_at.append(mid)  # (:meth:`_out_at`)
                n_np += 1
                np_seqs.append(seq)  # (``texts``: when it is asked, :meth:`seqs_of`)
            if role in RESULT_ROLES:
                self._link(e)
                self._steady = 0  # (R9's state moved: :meth:`Mirror._plain` again)
        if self._heaped and n_np > self.n_np:  # (the new seqs of out_at: leaves, in place)
            new = np_seqs[len(np_seqs) - (n_np - self.n_np):]
            self.in_heap.update(new)
            self.out_heap.extend(new)
        self.n_np = n_np
        self.total_in += total
        self.est_out += total

    def _withdraw_all(self, withdrawn: Sequence[str]) -> None:
        """``_out_remove(mid)`` for each id, in order, in one pass: with its entry gone
        from the output, what :meth:`_refresh` then does, written out for that case (a
        run of the oldest sent: :meth:`_withdraw_run`)."""
        if self._withdraw_run(withdrawn):
            return
        out, inp, out_at, later = self.out, self.inp, self.out_at, self._drop_later
        has = len(self._np_drop.tree)  # (:meth:`_drop_add`: positions the tree has)
        bad_out, gone = self.bad_out, self.gone
        est_out = dropped = 0
        for mid in withdrawn:
            o = out.pop(mid, None)
            if o is None:
                continue
            est_out += o.est
            if o.anchor_np:
                out_at[o.seq] = None
            if bad_out:
                bad_out.discard(mid)
            e = inp.get(mid)
            if e is None or not e.kept:
                continue
            e.kept = False
            gone.add(mid)
            if e.run is not None:  # (a result, or a message a run follows: most are not)
                self._moved(e, False)
            if e.prot:
                self.prot_dropped.add(mid)
                continue
            dropped += 1
            if has > 1:  # (:meth:`_drop_add`)
                i = e.seq + 1
                if i < has:
                    later[i] = later.get(i, 0) + 1
        self.est_out -= est_out
        if dropped:
            self._dropped(dropped, len(withdrawn))

    def _withdraw_run(self, withdrawn: Sequence[str]) -> bool:
        """:meth:`_withdraw_all` of a run (True; else nothing done): when the dropped
        messages are the first ``n_np_drop`` non-protected ones, ``withdrawn`` (a list)
        the ids of the next ones, in order, each its own output entry (sent as
        appended): those are kept, live, non-protected, in ``out_at``; the first kept then
        the one after them.  Told in C: the entries popped off the output, in order, are
        those entries (else put back, and False)."""
        first, d, np_seqs = self._first_kept, self.n_np_drop, self.np_seqs
        end = d + len(withdrawn)
        if (not first or self._np_before_kept != d or end > len(np_seqs)
                or type(withdrawn) is not list):
            return False
        seqs = np_seqs[d:end]
        entries = cast(list[_In], list(map(self.by_seq.__getitem__, seqs)))  # (live)
        out = self.out
        popped = list(map(out.pop, withdrawn, repeat(None)))
        if popped != entries:  # (compared by identity)
            out.update([(mid, o) for mid, o in zip(withdrawn, popped, strict=True)
                        if o is not None])
            return False
        est = 0
        for e in entries:
            e.kept = False
            est += e.est
            if e.run is not None:  # (a result, or a message a run follows: most are not)
                self._moved(e, False)
        self.est_out -= est
        out_at = self.out_at  # (None at each of them; between them, protected or gone)
        lo, hi = seqs[0], seqs[-1] + 1
        if hi - lo == len(seqs) or out_at[lo:hi].count(None) == hi - lo - len(seqs):
            out_at[lo:hi] = [None] * (hi - lo)
        else:
            for seq in seqs:
                out_at[seq] = None
        self.gone.update(withdrawn)
        if self.bad_out:
            self.bad_out.difference_update(withdrawn)
        has = len(self._np_drop.tree)  # (:meth:`_drop_add`: positions the tree has)
        if has > 1:
            later = self._drop_later
            for seq in seqs:
                if seq + 1 < has:
                    later[seq + 1] = later.get(seq + 1, 0) + 1
        self.n_np_drop = end
        if end < len(np_seqs):
            self._first_kept, self._np_before_kept = np_seqs[end] + 1, end
        else:
            self._first_kept, self._np_before_kept = 0, None
        return True

    def _dropped(self, n: int, walk: int) -> None:
        """``n`` more non-protected messages dropped: if the first kept is one of them
        (:meth:`_kept_moved`), the next kept is past those withdrawn (``walk`` of them)."""
        self.n_np_drop += n
        first = self._first_kept
        if first:
            e = self.by_seq[first - 1]
            if e is not None and not e.kept:
                self._next_kept(first - 1, 1, _WALK + 2 * walk)

    def _next_kept(self, seq: int, stays: int, walk: int = _WALK) -> None:
        """The first non-protected message kept, at ``seq``, is no longer kept (``stays``
        1) or gone (0, out of ``np_seqs`` already): the next one kept among the at most
        ``walk`` non-protected ones after it (found in one pass; past them, not known),
        with the non-protected ones before it (its index in ``np_seqs``); none kept when
        those reach the end."""
        before = self._np_before_kept
        if before is not None:
            np_seqs, by_seq = self.np_seqs, self.by_seq
            i = before + stays
            stop = min(len(np_seqs), i + walk)
            e = next(filter(_KEPT, map(by_seq.__getitem__, np_seqs[i:stop])), None)
            if e is not None:
                self._first_kept = e.seq + 1
                self._np_before_kept = rank(np_seqs, e.seq, i, stop)
                return
            if stop == len(np_seqs):
                self._first_kept, self._np_before_kept = 0, None
                return
        self._first_kept = self._np_before_kept = None
