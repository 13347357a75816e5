"""The context cutter's invariants R1-R9, one unit each (``docs/replay.md``).

Each is a function decorated with :func:`~risutools.checks.registry.check`: its docstring
is its documentation (``risutools rule R5``, the docs' table), ``report_text`` the line a
replay report prints beside its verdict, and its body the invariant itself over the
checker's view of one request (:class:`~risutools.replay.mirror.Mirror`, the mirrors and
the state derived from the previous enabled request, and the
:class:`~risutools.replay.mirror.Request` computed once for all of them).  It answers
:data:`~risutools.replay.verdicts.SKIP` (it does not apply), ``HELD`` or the failure's
detail; :class:`~risutools.replay.checker.InvariantChecker` calls every one the registry
hands it at each request and counts the answers.  They read the mirror in O(log n) and
change nothing.
"""

from __future__ import annotations

from risutools.checks.registry import Check, check
from risutools.replay.mirror import Mirror, Request
from risutools.replay.mirror_records import A_CUT, A_DROP, A_HELD, A_PREV, A_PROT, A_TAIL
from risutools.replay.verdicts import HELD, SKIP, Answer

#: the family of the units below (the checker asks the registry for it)
FAMILY = "R"


@check("R1", "error", "replay", "protected-kept",
       report_text="no protected message is dropped")
def protected_kept(m: Mirror, r: Request) -> Answer:
    """No protected message (system, tool, function roles) is dropped: every protected input
    message is in the output.

    Why: Protected messages carry instructions and tool results the model must keep seeing.

    Fix: Exclude protected roles from the removable set before cutting.

    It applies to the requests whose input holds a protected message (it cannot fail
    where none is), so a conversation without one shows R1 not-checked.
    """
    if not r.enabled or (len(m.inp) == m.n_np and not m.prot_dropped):  # (n_np: the
        return SKIP  # non-protected ones; none dropped: with ids appended twice)
    if m.prot_dropped:
        lost = sorted(m.prot_dropped, key=lambda i: m.inp[i].seq)
        return lambda: f"protected message(s) dropped: {', '.join(lost[:5])}"
    return HELD


@check("R2", "error", "replay", "tail-kept", report_text="the tail is never dropped")
def tail_kept(m: Mirror, r: Request) -> Answer:
    """The tail (the most recent messages) is never dropped: every tail message is in the
    output.

    Why: The latest turns are what the reply answers; dropping them breaks the conversation.

    Fix: Keep the configured tail out of the removable set.

    It applies to the requests with a tail: a non-protected message after R's last
    (preserve_latest above 0, and a non-protected message in the input), so with
    preserve_latest 0 R2 shows not-checked.
    """
    if not r.enabled or r.n_r == m.n_np:  # (the tail: min(preserve_latest, n_np))
        return SKIP
    if m.n_np_drop - r.kr:  # dropped after R's last message (kr: those up to it)
        return lambda: "tail message(s) dropped: " + m.dropped_np_between(r.n_r, m.n_np)
    return HELD


@check("R3", "error", "replay", "within-budget",
       report_text="final estimate <= max_context, unless budget_unreachable "
       "(and then every removable message was dropped)")
def within_budget(m: Mirror, r: Request) -> Answer:
    """The output estimate is at most max_context, or the request says budget_unreachable
    and every removable message is dropped; claiming budget_unreachable within budget also
    fails.

    Why: The cutter exists to fit the budget; over it, the request fails or is truncated by
    the host.

    Fix: Keep cutting removable messages until the estimate fits, or report
    budget_unreachable honestly.
    """
    if not r.enabled:
        return SKIP
    mc = m.config.max_context
    if r.est_out > mc:
        if not r.unreachable:
            return f"estimate {r.est_out} > max_context {mc}"
        if r.kr != r.n_r:
            return f"budget_unreachable with {r.n_r - r.kr} removable message(s) still kept"
    elif r.unreachable:
        return f"budget_unreachable claimed at estimate {r.est_out}"
    return HELD


@check("R4", "error", "replay", "only-removes",
       report_text="the output is the input with messages removed: order and content "
       "untouched")
def only_removes(m: Mirror, r: Request) -> Answer:
    """The output is a subsequence of the input with the same ids, roles and content; with
    the module off it equals the input.

    Why: A cutter that breaks it loses or rewrites what the user wrote.

    Fix: Remove whole messages only; never edit, merge or reorder them.

    The only invariant checked with the module off: the messages pass through untouched.
    """
    if not r.enabled:
        changed = m.bad_out or m.prot_dropped or m.n_np_drop
        if changed or not r.ordered or len(m.out) != len(m.inp):
            return "module off, but the messages were changed"
        return HELD
    if m.bad_out or not r.ordered:  # order from the input, same role and content
        return "the output is not the input with messages removed"
    return HELD


@check("R5", "error", "replay", "no-resurrection",
       report_text="no resurrection: a message dropped at one request and still present at "
       "the next is dropped again (while enabled)")
def no_resurrection(m: Mirror, r: Request) -> Answer:
    """No resurrection: a message dropped at the previous enabled request and still present
    is dropped again, unless it is now protected or in the tail (R1/R2 come first, e.g.
    after deletes shrink the history).

    Why: A message that comes back after being cut makes the context jump and confuses the
    model.

    Fix: Remember the cut point (the anchor) and start from it at the next request.

    Each enabled request is compared with the previous enabled one (the state is kept while
    the module is off); only the ids whose drop status moved since are visited.  It
    applies to the requests whose previous enabled request dropped a non-protected message
    still in the input (only such a message can come back), so a run that never drops
    one shows R5 not-checked.
    """
    if not r.enabled or not m.prev_np_dropped:
        return SKIP
    back = [
        e
        for mid in m.changed
        if mid in m.prev_dropped and (e := m.inp[mid]).kept
        and not e.prot and m.np_before(e.seq + 1) <= r.n_r  # not now in the tail
    ]
    if back:
        back.sort(key=lambda e: e.seq)
        return f"dropped before, sent again: {', '.join(e.msg.id for e in back[:5])}"
    return HELD


@check("R6", "error", "replay", "front-only",
       report_text="front only: the dropped messages are a prefix of R")
def front_only(m: Mirror, r: Request) -> Answer:
    """Front only: the dropped messages are exactly the first k of the removable messages R.

    Why: Cutting from the middle leaves a conversation with holes the model cannot see.

    Fix: Drop the oldest removable messages first, in order.

    It applies to the requests where something is dropped (a protected message dropped
    fails it), so a run that never drops one shows R6 not-checked.
    """
    d = m.n_np_drop
    if not r.enabled or not (d or m.prot_dropped):
        return SKIP
    if m.prot_dropped or d > r.n_r:
        return "the dropped messages are not the first removable ones"
    # the first d are dropped: the d dropped ones come before the first one kept (every
    # one before it is dropped), when one is kept
    before = m.np_before_first_kept() if d else None
    if before is not None and before != d:
        return "the dropped messages are not the first removable ones"
    return HELD


@check("R7", "error", "replay", "minimal-cut",
       report_text="minimal: keeping the last budget-dropped message would break the target")
def minimal_cut(m: Mirror, r: Request) -> Answer:
    """Minimal: drops beyond the continuity step happen only when the estimate after
    continuity exceeds max_context, and keeping the last one would exceed the target.

    Why: Dropping more than needed throws away context for nothing.

    Fix: Stop cutting as soon as the estimate fits the target.

    It also fails when messages were dropped beyond the continuity step although the
    estimate after continuity was already within max_context.  It applies to the requests
    with a budget cut beyond continuity (more removable messages dropped than the
    continuity step drops), so a run without one shows R7 not-checked.
    """
    if not r.enabled or r.kr <= r.k3:
        return SKIP
    after = m.est_after(r.k3)
    if after <= m.config.max_context:
        return (f"{r.kr - r.k3} message(s) dropped beyond continuity, though the estimate "
                f"{after} was within max_context")
    last = m.last_r_dropped(r)
    target = m.target()
    if r.est_out + m.est_at(last) <= target:
        return f"keeping {m.ids([last])} would still meet the target {target}"
    return HELD


@check("R8", "error", "replay", "bounded-jump",
       report_text="bounded jump after an anchor loss: the number dropped differs from "
       "S.omitted_count only by what the budget step needs")
def bounded_jump(m: Mirror, r: Request) -> Answer:
    """Bounded jump: when the anchor is lost, the number dropped is at least
    min(omitted_count, len(R)) and any more were needed by the budget step (R7's test).

    Why: When the anchor is lost, restarting from zero would suddenly resend everything cut
    so far.

    Fix: Restart from the accumulated omitted_count when the anchor is lost.

    It applies to the requests whose previous anchor is set but absent from the
    non-protected messages (a lost anchor) and counts those only, so a run without anchor
    losses shows R8 not-checked.
    """
    if not r.enabled or not r.lost:
        return SKIP
    t = m.prev_omitted
    base = min(t, r.n_r)
    if r.kr < base:
        return f"anchor lost: dropped {r.kr}, fewer than omitted_count {t}"
    if r.kr > base and not (
        m.est_after(base) > m.config.max_context
        and r.est_out + m.est_at(m.last_r_dropped(r)) > m.target()
    ):
        return f"anchor lost: dropped {r.kr}, more than omitted_count {t} needs"
    return HELD


@check("R9", "warning", "replay", "results-with-their-call",
       report_text="every tool or function result sent is sent with the assistant message "
       "that called it")
def results_with_their_call(m: Mirror, r: Request) -> Answer:
    """No orphaned tool result: a tool or function result that is sent comes with the
    assistant message that called it (the assistant message right before the run of
    results it belongs to).

    Why: Chat APIs reject a request whose tool result answers a call they cannot see, so
    a cut that keeps the result (a protected role) and drops its call breaks the request.

    Fix: Drop a calling assistant message only together with its results, or keep it
    while they are kept.

    It applies to the requests whose history holds a result with its calling assistant
    message, so a conversation without tool calls shows R9 not-checked. Not one of the
    spec's invariants (the spec keeps every protected message, results included): a
    warning, listed in the summary's ``warned_invariants`` and marked on the chart, that
    does not fail the replay.
    """
    if not r.enabled or not m.linked:
        return SKIP
    if m.orphaned:
        return lambda: _orphans_detail(m)  # made for the first failure only
    return HELD


def _orphans_detail(m: Mirror) -> str:
    shown = m.orphan_pairs(5)
    return (f"tool result(s) sent without their call: {', '.join(r for r, _ in shown)} "
            f"(called by {', '.join(c for _, c in shown)})")


#: the units above, in report order: when the registry hands the checker exactly these, it
#: asks :func:`all_held` first at each request (one fused test) and the units one by one
#: only when that cannot tell
STANDARD: tuple[Check, ...] = (protected_kept, tail_kept, within_budget, only_removes,
                               no_resurrection, front_only, minimal_cut, bounded_jump,
                               results_with_their_call)
#: the units :func:`all_held` answers for, each with the bit of its answer that says it
#: applied (HELD there, SKIP elsewhere; R3 and R4: wherever it is true, R8: SKIP);
#: R9 is asked apart (:func:`orphans_apply`)
APPLIES: dict[str, int] = dict(zip((c.id for c in STANDARD[:7]),
                                   (A_PROT, A_TAIL, A_HELD, A_HELD, A_PREV, A_DROP, A_CUT),
                                   strict=True))
HELD_WHEN_ALL: tuple[str, ...] = tuple(APPLIES)  # R1-R7
#: the id of the unit :func:`orphans_apply` answers for
ORPHANS_ID: str = results_with_their_call.id


def all_held(m: Mirror, r: Request) -> int:
    """Whether, at an enabled request, R1-R7 hold or do not apply and R8 does not apply:
    each unit's passing case of :data:`STANDARD`, tested together and without its detail
    (R7's a budget cut beyond continuity, as :func:`minimal_cut` tests it); when they do,
    ``A_HELD`` and the bits of :data:`APPLIES` of the units that applied (:func:`applied`).
    0 says only "ask the units": R5 with a message dropped before among those that
    moved, an anchor lost (R8) and the module off are left to them, failing or not.  R9
    is not answered here (:func:`orphans_apply`)."""
    if not r.enabled or r.lost or m.prot_dropped or m.bad_out or not r.ordered:
        return 0  # (the module off, R8 applies, R1 or R4 fails)
    d = m.n_np_drop
    mc = m.config.max_context
    if d != r.kr or r.unreachable or r.est_out > mc:
        return 0  # (R2 fails, R3 fails or asks more)
    if d:  # R6 (d == kr, and kr <= n_r: no more dropped than R holds)
        before = m.np_before_first_kept()
        if before is not None and before != d:
            return 0
    if r.kr > r.k3 and not (  # R7: a budget cut beyond continuity, needed and minimal
            m.est_after(r.k3) > mc
            and r.est_out + m.est_at(m.last_r_dropped(r)) > m.target()):
        return 0
    if not m.prev_dropped.isdisjoint(m.changed):  # R5: an id dropped before moved
        return 0
    return applied(m, r)


def applied(m: Mirror, r: Request) -> int:
    """``A_HELD`` and the bits of :data:`APPLIES` of the units of R1, R2, R5, R6 and R7
    that apply at an enabled request, as each unit tests it (R6: with no protected message
    dropped)."""
    held = A_HELD
    if len(m.inp) > m.n_np:  # (and none dropped: :func:`all_held`)
        held |= A_PROT
    if m.n_np > r.n_r:
        held |= A_TAIL
    if m.prev_np_dropped:
        held |= A_PREV
    if m.n_np_drop:
        held |= A_DROP
    if r.kr > r.k3:
        held |= A_CUT
    return held


def orphans_apply(m: Mirror) -> tuple[bool, bool]:
    """R9 at an enabled request, as :func:`results_with_their_call` answers it: (it applies,
    it fails)."""
    return bool(m.linked), bool(m.linked and m.orphaned)
