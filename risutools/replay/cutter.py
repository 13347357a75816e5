"""The reference context cutter (seed 000), incremental.

The algorithm is the one in ``docs/replay.md`` / the replay spec, step for step:

1. ``est(m) = ceil(len(content) * ratio) + message_overhead``, computed once per
   message content (on append and on edit) and cached in the entry;
2. protected = role in ``protected_roles``; tail = the last ``preserve_latest``
   non-protected messages; removable ``R`` = the other non-protected messages;
3. continuity: find the anchor signature (nearest ``omitted_count`` by position
   in ``R``, ties to the later message) and drop the removable messages before
   it; a lost anchor drops the first ``omitted_count`` removable messages;
4. budget: over ``max_context``, drop the oldest removable messages until the
   estimate is at most ``floor(max_context * (1 - trim_percent/100))``; if ``R``
   runs out while still over ``max_context`` the request is ``budget_unreachable``;
5. new state: ``omitted_count``, ``anchor`` (signature of the first surviving
   non-protected message), ``estimated_tokens``.

Cost: the cutter keeps its own mirror of the history, fed with the same
operations as the conversation (append / edit / delete).  Messages get a
sequence number in order of appearance; two Fenwick trees over sequence
numbers hold, for non-protected live messages, a count and the estimates.
So "the k-th non-protected message", "position in R", "sum of the first k
estimates" and "smallest k whose prefix reaches X" are O(log n), and the
anchor is looked up in a signature -> sequence numbers index (sorted lists, made
blocked when their deletes and inserts would move more than an allowance:
``seqs.py``; the first past the ``omitted_count``-th non-protected message found
by one bisection).  A request costs O(log n) plus O(changes since the last
request), a change O(log n) amortised; nothing is recounted.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

from risutools.errors import Code, ReplayError
from risutools.replay.fenwick import Fenwick
from risutools.replay.fixture import Message
from risutools.replay.places import last_before
from risutools.replay.seqs import Moves, rank
from risutools.settings.replay import ReplayConfig

AnchorStatus = Literal["none", "found", "lost"]


@dataclass(frozen=True)
class Signature:
    role: str
    length: int
    hash: str  # first 16 hex digits of sha256(content as UTF-8)

    def to_dict(self) -> dict[str, object]:
        return {"role": self.role, "length": self.length, "hash": self.hash}


def signature(role: str, content: str) -> Signature:
    return Signature(role, len(content), hashlib.sha256(content.encode("utf-8")).hexdigest()[:16])


@dataclass(frozen=True)
class CutterState:
    omitted_count: int = 0
    anchor: Signature | None = None
    estimated_tokens: int = 0

    def to_dict(self) -> dict[str, object]:
        return {
            "omitted_count": self.omitted_count,
            "anchor": self.anchor.to_dict() if self.anchor else None,
            "estimated_tokens": self.estimated_tokens,
        }


@dataclass(frozen=True)
class CutResult:
    enabled: bool
    messages_in: int
    messages_out: int
    tokens_in: int
    tokens_out: int
    removable: int  # |R|
    dropped: int  # removable messages dropped in this request's output (a prefix of R)
    continuity_dropped: int  # dropped by step 3
    budget_dropped: int  # dropped by step 4
    anchor: AnchorStatus
    fallback: bool  # step 3 used omitted_count (anchor lost)
    budget_unreachable: bool
    state: CutterState
    orphaned_tool_results: int = 0  # kept tool/function results whose calling assistant was dropped


class _Entry:
    __slots__ = ("caller", "est", "msg", "protected", "results", "sent", "seq", "sig")

    def __init__(self, seq: int, msg: Message, est: int, sig: Signature, protected: bool) -> None:
        self.seq = seq
        self.msg = msg
        self.est = est
        self.sig = sig
        self.protected = protected
        self.caller: _Entry | None = None  # tool/function result: the assistant that called it
        #: assistant: the tool results that follow it, in order (a dict: one taken out of
        #: a long run in one step, not a pass over it)
        self.results: dict[_Entry, None] = {}
        self.sent = False  # in the output as last reported by output_delta()


_RESULT_ROLES = ("tool", "function")
#: what :meth:`ContextCutter.output_delta` withdraws when it withdraws nothing
_NONE: tuple[str, ...] = ()
#: entries :meth:`ContextCutter._np_run` walks to the next non-protected message before it
#: asks the tree
_WALK = 8


class ContextCutter:
    """Reference cutter over an incrementally maintained history."""

    #: :meth:`output_delta`'s one pass over what was appended (:meth:`_sent_new`) and one
    #: loop over the cut's move (:meth:`_np_list`) when they apply; False: the plain walk
    #: always (:meth:`_delta_plain`, the reference the tests compare them with)
    _delta_fast = True
    #: ``len(_entries)`` at the last :meth:`output_delta` (the entries after it are new)
    _upto = 0

    def __init__(self, config: ReplayConfig, state: CutterState | None = None) -> None:
        self.config = config
        ratio = config.ratio
        self._num = ratio.numerator
        self._den = ratio.denominator
        self._overhead = config.message_overhead
        self._protected_roles = frozenset(config.protected_roles)
        self._entries: list[_Entry | None] = []  # by seq (0-based); None = deleted
        self._runs: dict[int, int] = {}  # places walked over to a result's caller (places.py)
        self._by_id: dict[str, _Entry] = {}
        self._cnt = Fenwick()  # 1 per live non-protected message
        self._est = Fenwick()  # est of live non-protected messages
        self._sigs: dict[Signature, list[int]] = {}  # non-protected live seqs, sorted
        self._moves = Moves()  # (what deletes and inserts in those lists move: seqs.py)
        # 1 per kept tool result at the seq of its (non-protected) calling assistant message
        self._callers = Fenwick()
        self._total = 0  # est of every live message
        self._n_live = 0
        self._n_np = 0
        self.state = state or CutterState()
        # for output_delta(): entries appended or edited since, sent entries deleted since,
        # and j: the first j non-protected messages are the unsent ones among the rest
        self._touched: dict[int, _Entry] = {}
        self._gone: list[str] = []
        self._j = 0

    # ---- history operations -------------------------------------------------

    def estimate(self, content: str) -> int:
        """``ceil(len(content) * ratio) + message_overhead`` in exact integer arithmetic."""
        return -(-len(content) * self._num // self._den) + self._overhead

    def append(self, msg: Message) -> None:
        if msg.id in self._by_id:
            raise ReplayError(Code.DUPLICATE_ID, f"message id {msg.id!r} already present")
        seq = len(self._entries)
        est = self.estimate(msg.content)
        prot = msg.role in self._protected_roles
        entry = _Entry(seq, msg, est, signature(msg.role, msg.content), prot)
        caller = self._caller_of(msg) if msg.role in _RESULT_ROLES and prot else None
        self._entries.append(entry)
        self._by_id[msg.id] = entry
        self._touched[seq] = entry
        self._callers.push(0)
        if caller is not None:
            entry.caller = caller
            caller.results[entry] = None
            self._callers.add(caller.seq + 1, 1)
        self._total += est
        self._n_live += 1
        if prot:
            self._cnt.push(0)
            self._est.push(0)
        else:
            self._cnt.push(1)
            self._est.push(est)
            self._n_np += 1
            self._sigs.setdefault(entry.sig, []).append(seq)  # seq is the largest so far

    def _caller_of(self, msg: Message) -> _Entry | None:
        """The assistant message right before the run of tool results ``msg`` joins
        (:func:`~risutools.replay.places.last_before`: not a walk back over the run)."""
        at = last_before(self._entries, len(self._entries), self._runs, _RESULT_ROLES)
        e = self._entries[at] if at >= 0 else None
        if e is not None and e.msg.role == "assistant" and not e.protected:
            return e
        return None

    def edit(self, msg_id: str, content: str) -> None:
        entry = self._get(msg_id, "edit")
        if content == entry.msg.content:
            return
        new_est = self.estimate(content)
        new_sig = signature(entry.msg.role, content)
        self._total += new_est - entry.est
        if not entry.protected:
            self._est.add(entry.seq + 1, new_est - entry.est)
            self._unindex(entry)
            self._sigs[new_sig] = self._moves.put(self._sigs.get(new_sig, []), entry.seq,
                                                  len(self._entries))
        entry.msg = Message(entry.msg.id, entry.msg.role, content)
        entry.est = new_est
        entry.sig = new_sig
        self._touched[entry.seq] = entry

    def delete(self, msg_id: str) -> None:
        entry = self._get(msg_id, "delete")
        del self._by_id[msg_id]
        self._touched.pop(entry.seq, None)
        if entry.sent:
            self._gone.append(msg_id)
        elif not entry.protected and self._cnt.prefix(entry.seq) < self._j:
            self._j -= 1  # one fewer in the unsent prefix
        self._entries[entry.seq] = None
        self._total -= entry.est
        self._n_live -= 1
        if entry.caller is not None:  # a tool result goes: it no longer counts
            self._callers.add(entry.caller.seq + 1, -1)
            del entry.caller.results[entry]
        for res in entry.results:  # a caller goes: its results are no longer ours to report
            res.caller = None
            self._callers.add(entry.seq + 1, -1)
        entry.results = {}
        if not entry.protected:
            self._cnt.add(entry.seq + 1, -1)
            self._est.add(entry.seq + 1, -entry.est)
            self._n_np -= 1
            self._unindex(entry)

    def _get(self, msg_id: str, op: str) -> _Entry:
        entry = self._by_id.get(msg_id)
        if entry is None:
            raise ReplayError(Code.UNKNOWN_ID, f"{op}: no message with id {msg_id}")
        return entry

    def _unindex(self, entry: _Entry) -> None:
        seqs = self._moves.taken(self._sigs[entry.sig], entry.seq, len(self._entries))
        self._sigs[entry.sig] = seqs
        if not seqs:
            del self._sigs[entry.sig]

    # ---- rank helpers (non-protected messages, in order) ---------------------

    def _prefix_est(self, k: int) -> int:
        """Sum of the estimates of the first ``k`` non-protected messages."""
        if k <= 0:
            return 0
        return self._est.prefix(self._cnt.lower_bound(k))

    def _rank_reaching(self, need: int) -> int:
        """Smallest k whose first-k estimate sum is >= need (n_np + 1 if none)."""
        if need <= 0:
            return 0
        seq1 = self._est.lower_bound(need)
        if seq1 > len(self._est):
            return self._n_np + 1
        return self._cnt.prefix(seq1)

    def _nth_np(self, k: int) -> _Entry | None:
        """The non-protected message with 0-based rank ``k``."""
        if k >= self._n_np:
            return None
        return self._entries[self._cnt.lower_bound(k + 1) - 1]

    def _np_run(self, lo: int, hi: int) -> Iterator[_Entry]:
        """The non-protected messages of 0-based ranks ``lo`` .. ``hi - 1`` that exist (as
        :meth:`_nth_np` of each): the first found in the tree, each next one by walking
        the entries after the last (:meth:`_np_after`)."""
        if lo >= hi:
            return
        e = self._nth_np(lo)
        r = lo
        while e is not None:
            yield e
            r += 1
            if r >= hi:
                return
            e = self._np_after(e, r)

    def _np_after(self, e: _Entry, rank: int) -> _Entry | None:
        """The non-protected message after ``e`` (of rank ``rank``): the first live one
        among the next :data:`_WALK` entries, else the tree's answer."""
        entries = self._entries
        stop = min(len(entries), e.seq + 1 + _WALK)
        for seq in range(e.seq + 1, stop):
            c = entries[seq]
            if c is not None and not c.protected:
                return c
        if stop == len(entries):  # none after it
            return None
        return self._nth_np(rank)

    # ---- the request --------------------------------------------------------

    def continuity(self, n_removable: int) -> tuple[int, AnchorStatus]:
        """Step 3: how many removable messages the anchor (or its loss) drops."""
        st = self.state
        fallback = min(st.omitted_count, n_removable)
        if st.anchor is None:
            return fallback, "none"
        seqs = self._sigs.get(st.anchor)
        if not seqs:
            return fallback, "lost"
        t = st.omitted_count
        cnt = self._cnt

        def pos(seq: int) -> int:
            return min(cnt.prefix(seq), n_removable)  # non-protected before it, capped

        # pos() is non-decreasing along seqs: the first with pos >= t is the first past the
        # t-th non-protected message (one descent of the tree, one bisection: not a search
        # asking pos() at each step, each a descent; none when t passes n_removable)
        if t <= 0:
            lo = 0
        elif t > n_removable:
            lo = len(seqs)
        else:
            lo = rank(seqs, cnt.lower_bound(t))  # (its seq + 1: the first seq past it)
        best: int | None = None
        if lo < len(seqs):
            best = pos(seqs[lo])
        if lo > 0:
            below = pos(seqs[lo - 1])
            if best is None or t - below < best - t:  # ties go to the later message
                best = below
        assert best is not None
        return best, "found"

    def budget(self, k3: int, n_removable: int) -> tuple[int, int]:
        """Step 4: final drop count and final estimate, starting from ``k3`` dropped."""
        total = self._total
        est = total - self._prefix_est(k3)
        if est <= self.config.max_context:
            return k3, est
        need = total - self.config.target
        k = max(self._rank_reaching(need), k3)
        k = min(k, n_removable)
        return k, total - self._prefix_est(k)

    def request(self, enabled: bool = True) -> CutResult:
        """Run one request over the current history and advance the state."""
        total = self._total
        if not enabled:
            self.state = CutterState(self.state.omitted_count, self.state.anchor, total)
            return CutResult(
                False,
                self._n_live,
                self._n_live,
                total,
                total,
                0,
                0,
                0,
                0,
                "none",
                False,
                False,
                self.state,
            )
        n_removable = max(0, self._n_np - self.config.preserve_latest)
        k3, status = self.continuity(n_removable)
        k, est = self.budget(k3, n_removable)
        unreachable = est > self.config.max_context
        first = self._nth_np(k)
        orphans = self._callers.prefix(self._cnt.lower_bound(k)) if k else 0
        self.state = CutterState(k, first.sig if first else None, est)
        return CutResult(
            enabled=True,
            messages_in=self._n_live,
            messages_out=self._n_live - k,
            tokens_in=total,
            tokens_out=est,
            removable=n_removable,
            dropped=k,
            continuity_dropped=k3,
            budget_dropped=k - k3,
            anchor=status,
            fallback=status == "lost",
            budget_unreachable=unreachable,
            state=self.state,
            orphaned_tool_results=orphans,
        )

    def output_delta(self, result: CutResult) -> tuple[list[Message], Sequence[str]]:
        """What the output gained (or re-sent with new text) and lost since the last call.

        Call once after each :meth:`request`.  The output is the history minus the
        first ``result.dropped`` non-protected messages, so only the entries changed
        since and those between the old and the new cut are visited:
        O((changes + |dropped - previous dropped|) * log n).  When the cut stayed or
        moved forward and every entry changed since was appended since, the cut's move
        is walked in one loop (:meth:`_np_list`) and those entries are taken in one
        pass (:meth:`_sent_new`), without the tree.  Nothing withdrawn is the one empty
        tuple :data:`_NONE`; ``sent`` is a new list each call.
        """
        k = result.dropped if result.enabled else 0
        touched = self._touched
        entries = self._entries
        j = self._j
        if (k == j and touched and not self._gone and self._delta_fast
                and self._n_np - len(touched) >= k and min(touched) >= self._upto):
            # (the usual request: the cut stayed, nothing to withdraw, and every entry
            # touched is new and sent -- k or more come before each: :meth:`_sent_new`)
            sent: list[Message] = []
            for e in touched.values():
                e.sent = True
                sent.append(e.msg)
            touched.clear()
            self._upto = len(entries)
            return sent, _NONE
        if self._delta_fast and k >= j and (not touched or min(touched) >= self._upto):
            withdrawn = self._gone
            if j < k:  # the cut moved forward: what it passed and was sent, withdrawn
                for e in self._np_list(j, k):
                    if e.sent:
                        e.sent = False
                        withdrawn.append(e.msg.id)
            sent = self._sent_new(touched, k)
        else:
            sent, withdrawn = self._delta_plain(k)
        touched.clear()  # (the same dict: read, never kept, by the caller)
        self._j = k
        self._upto = len(entries)
        if not withdrawn:  # (none: the one empty tuple, not a list made each request)
            return sent, _NONE
        self._gone = []
        return sent, withdrawn

    def _sent_new(self, touched: dict[int, _Entry], k: int) -> list[Message]:
        """The plain pass of :meth:`_delta_plain` when the cut is at ``k`` (it stayed, or
        moved forward: what it passed withdrawn) and every
        entry touched was appended since the last call (never sent; in ``touched`` in the
        order of their seqs, as appended: an edit keeps a key's place, a delete takes
        it out; and every live entry after the first of them is one of them): the
        non-protected messages before the first are all those but the ones touched, and
        one more before each next one past a non-protected one."""
        new = touched.values()
        before = self._n_np - len(touched)
        for e in new:
            if e.protected:
                before += 1
        sent: list[Message] = []
        if before >= k:  # (each is sent: it is protected, or k or more come before it)
            for e in new:
                e.sent = True
                sent.append(e.msg)
            return sent
        for e in new:
            if e.protected:
                e.sent = True
                sent.append(e.msg)
                continue
            if before >= k:
                e.sent = True
                sent.append(e.msg)
            before += 1
        return sent

    def _np_list(self, lo: int, hi: int) -> list[_Entry]:
        """``list(self._np_run(lo, hi))`` in one loop: the first found in the tree, each
        next one the next live non-protected entry, walked to (past :data:`_WALK` entries
        in a row that are not, the tree asked for it)."""
        if lo >= hi:
            return []
        e = self._nth_np(lo)
        if e is None:
            return []
        run = [e]
        entries = self._entries
        n = len(entries)
        left = hi - lo - 1
        seq = e.seq + 1
        gap = 0
        while left and seq < n:
            c = entries[seq]
            seq += 1
            if c is None or c.protected:
                gap += 1
                if gap == _WALK:  # a long run without one: the tree's answer
                    c = self._nth_np(hi - left)
                    if c is None:
                        break
                    run.append(c)
                    left -= 1
                    seq, gap = c.seq + 1, 0
                continue
            gap = 0
            run.append(c)
            left -= 1
        return run

    def _delta_plain(self, k: int) -> tuple[list[Message], list[str]]:
        """:meth:`output_delta`'s answer, walking the cut's move and each entry touched."""
        sent: list[Message] = []
        withdrawn = self._gone
        emitted: set[int] = set()
        # (the cut's move in one loop, :meth:`_np_list`; the walk itself for the reference)
        run: Callable[[int, int], Iterable[_Entry]] = (
            self._np_list if self._delta_fast else self._np_run)
        if self._j < k:
            for e in run(self._j, k):  # the cut moved forward
                if e.sent:
                    e.sent = False
                    withdrawn.append(e.msg.id)
        elif k < self._j:
            for e in run(k, self._j):  # the cut moved back
                if not e.sent:
                    e.sent = True
                    sent.append(e.msg)
                    emitted.add(e.seq)
        for seq in sorted(self._touched):
            e = self._touched[seq]
            want = e.protected or self._np_before(seq) >= k
            if want and seq not in emitted:  # new, or sent before with other text
                e.sent = True
                sent.append(e.msg)
            elif not want and e.sent:
                e.sent = False
                withdrawn.append(e.msg.id)
        return sent, withdrawn

    def _np_before(self, seq: int) -> int:
        """The live non-protected messages before ``seq`` (``_cnt.prefix``): counted back
        from the end when ``seq`` is among the last :data:`_WALK` entries (a message just
        appended), else asked of the tree."""
        entries = self._entries
        if len(entries) - seq > _WALK:
            return self._cnt.prefix(seq)
        after = 0
        for i in range(seq, len(entries)):
            e = entries[i]
            if e is not None and not e.protected:
                after += 1
        return self._n_np - after

    # ---- materialisation (O(n); for the invariant checker and reports) --------

    def history(self) -> list[Message]:
        return [e.msg for e in self._entries if e is not None]

    def output(self, result: CutResult) -> list[Message]:
        """The message list the request sent (the history minus the dropped prefix of R)."""
        if not result.enabled:
            return self.history()
        left = result.dropped
        out: list[Message] = []
        for e in self._entries:
            if e is None:
                continue
            if left and not e.protected:
                left -= 1
                continue
            out.append(e.msg)
        return out
