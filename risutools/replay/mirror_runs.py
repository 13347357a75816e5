"""The runs of tool results in the checker's mirror (``mirror.py``), and R9's state: which
results are sent without the message that called them.

A run is the live results between a live message that is not a result (its ``head``;
none: the history's start) and the next such message.  Its caller is the head when that is
an assistant message.  Every result of a run has the same caller, so the mirror keeps one
record a run (:class:`_Run`), not a caller a result:

- a result appended joins the run before it, or begins one;
- a result deleted leaves its run (its count);
- a head deleted hands its run to what now comes before it: that message heads it, or
  the run before it takes it in (the two records joined, the smaller under the larger:
  a union-find, the records' ``up``);
- a result or a caller kept or dropped moves two counts and one set.

Each is a few steps, not a pass over the run (a run of 10,000 results, the 3,000 messages
before it deleted one a turn: 39 s as a pass; docs/replay.md, Bounds).  A place never gains a
message again and a role never changes, so a run never splits.

R9 fails when a result is sent and its caller is not: the runs with a caller not kept and
a result kept are ``orphaned``; which results those are is asked only for the detail of a
first failure (:meth:`Runs.orphan_pairs`, a pass over the history)."""

from __future__ import annotations

from risutools.replay.mirror_ranks import Ranks
from risutools.replay.mirror_records import RESULT_ROLES, _In, _Run, root
from risutools.replay.places import last_before


class Runs(Ranks):
    """The runs of results, their callers and R9's state (the fields set here)."""

    __slots__ = ("first_run", "linked", "orphaned")  # (the others: the mirror's)

    # the mirror's fields these read (:class:`~risutools.replay.mirror.Mirror`)
    runs: dict[int, int]  # places walked over to a result's run (places.py)

    def _clear_runs(self) -> None:
        self.first_run: _Run | None = None  # the run no message heads (the history's start)
        self.linked = 0  # live results with a live calling assistant message (R9 applies)
        self.orphaned: set[_Run] = set()  # runs with a result sent and their caller not

    def _head_of(self, seq: int) -> tuple[_In | None, _Run | None]:
        """The live message that is not a result last before ``seq`` (None: none), and
        the run it heads (None: none yet)."""
        at = last_before(self.by_seq, seq, self.runs, RESULT_ROLES)
        head = self.by_seq[at] if at >= 0 else None
        run = head.run if head is not None else self.first_run
        return head, (root(run) if run is not None else None)

    def _link(self, res: _In) -> None:
        """A result appended (``res.kept`` as it is entered): it joins the run before it,
        or begins one."""
        head, run = self._head_of(res.seq)
        if run is None:
            run = _Run(head)
            if head is None:
                self.first_run = run
            else:
                head.run = run
        res.run = run
        run.live += 1
        if res.kept:
            run.kept += 1
        if run.caller is not None:
            self.linked += 1
            if res.kept:  # (no caller: nothing to orphan)
                self._weigh(run)

    def _unlink(self, e: _In) -> None:
        """``e`` left the history (its place is empty already): a result leaves its run;
        a head hands its run to what now comes before it."""
        run = e.run
        if run is None:
            return
        e.run = None
        run = root(run)
        if e.msg.role in RESULT_ROLES:
            run.live -= 1
            if run.caller is not None:
                self.linked -= 1
            if e.kept:
                run.kept -= 1
                self._weigh(run)
            return
        n = run.live
        if run.caller is not None:
            self.linked -= n
        self.orphaned.discard(run)
        head, before = self._head_of(e.seq)
        if before is None:
            run.head = head
            run.caller = head if head is not None and head.msg.role == "assistant" else None
            top = run
        else:
            self.orphaned.discard(before)
            top, low = (before, run) if before.live >= run.live else (run, before)
            low.up = top
            top.live, top.kept = before.live + n, before.kept + run.kept
            top.head, top.caller = before.head, before.caller
        if head is None:
            self.first_run = top
        else:
            head.run = top
        if top.caller is not None:
            self.linked += n
        self._weigh(top)

    def _moved(self, e: _In, kept: bool) -> None:
        """``e`` (its ``run`` set) is now kept, or not: a result's run counts it; a
        caller's run may now be orphaned, or no longer."""
        run = root(e.run) if e.run is not None else None
        if run is None:
            return
        if e.msg.role in RESULT_ROLES:
            run.kept += 1 if kept else -1
        elif run.caller is not e:
            return
        self._weigh(run)

    def _weigh(self, run: _Run) -> None:
        """Whether ``run`` (a root) has a result sent without its caller, now."""
        c = run.caller
        if c is not None and run.kept and not c.kept:
            self.orphaned.add(run)
        else:
            self.orphaned.discard(run)

    def orphan_pairs(self, n: int | None = None) -> list[tuple[str, str]]:
        """The first ``n`` (None: all) results sent without their call, in the history's
        order, each with its caller's id: a pass over the history."""
        found: list[tuple[str, str]] = []
        orphaned = self.orphaned
        if not orphaned:
            return found
        for e in self.by_seq:
            if e is None or not e.kept or e.run is None or e.msg.role not in RESULT_ROLES:
                continue
            run = root(e.run)
            if run in orphaned and run.caller is not None:
                found.append((e.msg.id, run.caller.msg.id))
                if len(found) == n:
                    break
        return found
