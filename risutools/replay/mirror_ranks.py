"""The counts and positions the invariant checker's mirror (``mirror.py``) asks about its
non-protected input messages in order (their ranks): the trees over the order of
appearance, grown when a question needs them, and the answers found without them when
the messages dropped are the first ones (what a correct cutter leaves).

:class:`Ranks` is the base of :class:`~risutools.replay.mirror.Mirror`, which holds the
fields named here (its ``__slots__``) and keeps them as the mirrors change."""

from __future__ import annotations

from collections.abc import Iterable
from operator import attrgetter

from risutools.replay.fenwick import Fenwick, push_two, tree_of
from risutools.replay.mirror_records import Request, Sig, _In
from risutools.replay.seqs import Moves, rank

#: entries the mirror walks back or forward over before it asks the trees
_WALK = 32
#: an entry's estimate, and whether it is kept (for ``map``, ``filter``)
_EST = attrgetter("est")
_KEPT = attrgetter("kept")


class Ranks:
    """Ranks of the non-protected input messages: the mirror's questions about them."""

    __slots__ = ("_before_anchor", "_texts_upto")  # (those set here; the others: the
    # mirror's)

    # the mirror's fields these read (:class:`~risutools.replay.mirror.Mirror`)
    by_seq: list[_In | None]
    np_seqs: list[int]
    _moves: Moves
    _cnt: Fenwick
    _ests: Fenwick
    _np_drop: Fenwick
    _drop_later: dict[int, int]
    _first_kept: int | None
    _np_before_kept: int | None
    n_np: int
    n_np_drop: int
    total_in: int
    est_out: int
    prot_dropped: set[str]
    bad_out: set[str]
    _max: int
    _target: int
    texts: dict[Sig, int | list[int]]
    _texts_upto: int
    _before_anchor: tuple[int, int]
    prev_omitted: int
    prev_anchor: Sig | None

    def np_before(self, pos: int) -> int:
        """``np_cnt.prefix(pos)``: the live non-protected input messages before 1-based seq
        position ``pos`` + 1 (a bisection of ``np_seqs``)."""
        return rank(self.np_seqs, pos)

    def np_at(self, k: int) -> int:
        """``np_cnt.lower_bound(k)`` (k > 0): the 1-based seq position of the ``k``-th live
        non-protected input message; ``len(by_seq) + 1`` when there are fewer."""
        seqs = self.np_seqs
        return seqs[k - 1] + 1 if k <= len(seqs) else len(self.by_seq) + 1

    @property
    def np_cnt(self) -> Fenwick:
        """The tree of the live non-protected input messages (1 each), every position
        pushed (:meth:`_grow`)."""
        if len(self._cnt.tree) <= len(self.by_seq):
            self._grow()
        return self._cnt

    @property
    def np_est(self) -> Fenwick:
        """The tree of their estimates, every position pushed (:meth:`_grow`)."""
        if len(self._ests.tree) <= len(self.by_seq):
            self._grow()
        return self._ests

    def _grow(self) -> None:
        """Push the positions the two trees lack, as the history has them now (a change
        at a position they lack is not made: ``Fenwick.add`` stops at their end), in one
        walk each (:func:`~risutools.replay.fenwick.push_two`)."""
        cnt, ests, by_seq = self._cnt, self._ests, self.by_seq
        for seq in range(len(cnt.tree) - 1, len(by_seq)):
            e = by_seq[seq]
            if e is None or e.prot:
                push_two(cnt, ests, 0, 0)
            else:
                push_two(cnt, ests, 1, e.est)

    def drops(self) -> Fenwick:
        """The tree of the non-protected messages not sent (1 each): its waiting changes
        made (they commute), then the positions it lacks pushed, as the history has them
        now (their own waiting changes dropped: that value holds them)."""
        later = self._drop_later
        drops = self._np_drop
        tree = drops.tree
        n = len(tree)
        by_seq = self.by_seq
        if len(later) * n.bit_length() > 2 * len(by_seq):  # (most positions moved: a
            # switch of the module, a long cut undone) the tree made again, in one pass
            drops.tree = tree_of([0 if e is None or e.prot or e.kept else 1 for e in by_seq])
            later.clear()
            return drops
        if later:
            for i, delta in later.items():
                while i < n:
                    tree[i] += delta
                    i += i & -i
            later.clear()
        for seq in range(n - 1, len(by_seq)):
            e = by_seq[seq]
            drops.push(0 if e is None or e.prot or e.kept else 1)
        return drops

    def _drop_add(self, pos: int, delta: int) -> None:
        """``drops().add(pos, delta)``, made when a question needs the tree; nothing for a
        position the tree lacks (:meth:`drops` pushes it as the history has it then)."""
        if pos < len(self._np_drop.tree):
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

    def pos_of_rank(self, k: int) -> int:
        """1-based seq position of the k-th non-protected message (0 for k = 0)."""
        return self.np_at(k) if k > 0 else 0

    def est_after(self, n: int) -> int:
        """The input's estimate with the first ``n`` removable messages dropped.  When the
        output is the input less the first ``n_np_drop`` (>= ``n``) non-protected
        messages (none protected dropped, ``bad_out`` empty, those dropped the first
        ones): the output's estimate and that of the ones dropped past the first ``n``
        (at most :data:`_WALK` * 64 of them, summed in one pass); else the trees'."""
        d = self.n_np_drop
        if (n <= d and d - n <= _WALK * 64 and not self.prot_dropped and not self.bad_out
                and self._drops_first()):
            by_seq = self.by_seq
            past: int = sum(map(_EST, map(by_seq.__getitem__, self.np_seqs[n:d])))
            return self.est_out + past
        return self.total_in - self.np_est.prefix(self.pos_of_rank(n))

    def last_r_dropped(self, r: Request) -> int:
        """1-based seq position of the last removable message dropped (the ``kr``-th
        dropped one: ``kr`` of them up to R's last message), found once a request."""
        if r.last is None:
            r.last = self._kth_dropped(r.kr)
        return r.last

    def _kth_dropped(self, k: int) -> int:
        """1-based seq position of the ``k``-th non-protected message not sent (k > 0): the
        ``k``-th non-protected one when they are the first ones (:meth:`_drops_first`),
        else the tree's."""
        if k <= self.n_np_drop and self._drops_first():
            return self.np_at(k)
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

    def _bears(self, seq: int, sig: Sig) -> bool:
        """Whether the live non-protected message at ``seq`` (-1: none) has signature
        ``sig``."""
        e = self.by_seq[seq] if seq >= 0 else None
        return (e is not None and not e.prot and e.msg.content == sig[1]
                and e.msg.role == sig[0])

    def _index(self, sig: Sig, seq: int) -> None:
        """``seq`` into ``texts`` under ``sig`` (in order)."""
        texts = self.texts
        seqs = texts.get(sig)
        if seqs is None:
            texts[sig] = seq
        elif isinstance(seqs, int):
            texts[sig] = [seqs, seq] if seqs < seq else [seq, seqs]
        else:
            texts[sig] = self._moves.put(seqs, seq, len(self.by_seq))

    def _unindex(self, e: _In) -> bool:
        """``e`` out of ``texts`` (False: it was not in it yet, :meth:`_index_upto`)."""
        if e.seq >= self._texts_upto:
            return False
        texts, sig = self.texts, (e.msg.role, e.msg.content)
        seqs = texts[sig]
        if isinstance(seqs, int):
            del texts[sig]
            return True
        texts[sig] = seqs = self._moves.taken(seqs, e.seq, len(self.by_seq))
        if len(seqs) == 1:
            texts[sig] = seqs[0]
        return True

    def _index_upto(self) -> None:
        """The live non-protected messages appended since ``texts`` was last asked,
        into it (each message once: O(n) over a run, whatever the requests)."""
        by_seq, texts = self.by_seq, self.texts
        for seq in range(self._texts_upto, len(by_seq)):
            e = by_seq[seq]
            if e is not None and not e.prot:
                m = e.msg
                sig = (m.role, m.content)
                seqs = texts.setdefault(sig, seq)
                if seqs is not seq:  # (not alone: the largest seq, at the end)
                    if isinstance(seqs, int):
                        texts[sig] = [seqs, seq]
                    else:
                        seqs.append(seq)
        self._texts_upto = len(by_seq)

    def seqs_of(self, sig: Sig) -> list[int]:
        """The live non-protected seqs of signature ``sig`` (role, text), sorted: the
        messages appended since it was last asked indexed first."""
        if self._texts_upto < len(self.by_seq):
            self._index_upto()
        seqs = self.texts.get(sig)
        if seqs is None:
            return []
        return [seqs] if isinstance(seqs, int) else seqs  # (read, never changed, by callers)

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
        at, before = self._before_anchor
        if self._bears(at, self.prev_anchor):  # (asked of the messages near it: no index)
            if (before if before < n_r else n_r) == t:
                return t, False
            if before < t and 2 * t - before < n_r and t - before <= _WALK:
                return self._near_anchor(at, before, t), False
        seqs = self.seqs_of(self.prev_anchor)
        if not seqs:
            return min(t, n_r), True
        if len(seqs) == 1:  # (most anchors: the search below gives its position)
            seq = seqs[0]
            if at != seq:  # (the previous request's anchor, most often: counted then)
                before = rank(self.np_seqs, seq)  # (:meth:`np_before`)
                self._before_anchor = (seq, before)
            return (before if before < n_r else n_r), False
        return self._nearest(seqs, t, n_r), False

    def _near_anchor(self, at: int, before: int, t: int) -> int:
        """:meth:`_nearest` when the message looked up last (at ``at``, ``before``
        non-protected ones before it) still bears the anchor's signature, below position
        ``t`` (``before < t``), and no position is capped up to ``2t - before``: the
        nearest is it or a twin past it up to there (any other is farther), ties to the
        later; those few are compared by their text, and the one found is remembered."""
        np_seqs, by_seq = self.np_seqs, self.by_seq
        role, text = self.prev_anchor or ("", "")
        best, gap = (at, before), t - before
        for r in range(before + 1, min(2 * t - before, len(np_seqs) - 1) + 1):
            e = by_seq[np_seqs[r]]
            if (e is not None and e.msg.content == text and e.msg.role == role
                    and abs(r - t) <= gap):
                best, gap = (e.seq, r), abs(r - t)
        self._before_anchor = best
        return best[1]

    def _nearest(self, seqs: list[int], t: int, n_r: int) -> int:
        """The position in R (capped at ``n_r``) of the message of ``seqs`` nearest to
        position ``t``, ties to the later one; that message is remembered
        (``_before_anchor``)."""
        np_seqs = self.np_seqs

        def before(i: int) -> int:  # removable messages before seqs[i], uncapped
            return rank(np_seqs, seqs[i])  # (:meth:`np_before`)

        # positions in R do not decrease along seqs: the first at or past t is the first past
        # the t-th non-protected message (one bisection: not a search asking each position
        # it halves to; none when t passes n_r)
        if t <= 0:
            lo = 0
        elif t > n_r or t > len(np_seqs):
            lo = len(seqs)
        else:
            lo = rank(seqs, np_seqs[t - 1] + 1)
        # the nearest is seqs[lo - 1] (below t) or seqs[lo] (at or above t); ties: the later
        pick = lo
        if lo == len(seqs) or (lo and t - min(before(lo - 1), n_r) < min(before(lo), n_r) - t):
            pick = lo - 1
        at = before(pick)
        self._before_anchor = (seqs[pick], at)
        return min(at, n_r)
