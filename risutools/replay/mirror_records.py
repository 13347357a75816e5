"""The records of the invariant checker's mirror (``mirror.py``): what one request is
observed as (:class:`Step`, :class:`Change`), what its invariants share
(:class:`Request`), and the mirror's entries of the input and the output."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from risutools.replay.fixture import Message

Sig = tuple[str, str]  # role and full text: length is implied


@dataclass(frozen=True)
class Step:
    """One observed request, as whole lists."""

    request: int  # 1-based
    enabled: bool
    inp: list[Message]
    out: list[Message]
    budget_unreachable: bool = False


class Change(NamedTuple):
    """One observed request, as changes since the previous one.

    ``appended``/``edited``/``deleted`` are the input's operations (from the
    fixture); ``sent`` are the messages the output gained or whose sent copy
    changed, ``withdrawn`` the ids the output lost.  The output's order is the
    input's (a reordering cannot be expressed here; use :class:`Step`).  Immutable, and
    made once a request: a named tuple (a frozen dataclass's fields cost a call each).
    """

    request: int
    enabled: bool
    appended: Sequence[Message] = ()
    edited: Sequence[tuple[str, str]] = ()
    deleted: Sequence[str] = ()
    sent: Sequence[Message] = ()
    withdrawn: Sequence[str] = ()
    budget_unreachable: bool = False


@dataclass(slots=True)
class Request:
    """What one request's invariants share, computed once in O(log n).

    With the module off only ``req``, ``enabled``, ``ordered``, ``est_out`` and
    ``unreachable`` mean anything (the rest is 0: the cutter did not run)."""

    req: int
    enabled: bool
    ordered: bool  # the output keeps the input's order, without repeats
    n_r: int  # |R|
    kr: int  # removable messages dropped
    est_out: int  # the estimate of the list as sent
    unreachable: bool  # the request said budget_unreachable
    k3: int  # what the continuity step drops, from the derived state
    lost: bool  # the previous anchor is set but gone (R8 applies)
    first: Sig | None  # the first non-protected message sent: the anchor a cutter now carries
    last: int | None = None  # :meth:`Mirror.last_r_dropped`, once asked


#: the roles of a tool's (or function's) result, which follows the message that called it
RESULT_ROLES = ("tool", "function")

#: What a request R1-R7 held at is answered as (:meth:`Mirror.appended_held`,
#: :func:`~risutools.replay.invariants.all_held`): ``A_HELD`` (always set: the answer is
#: true) and one bit for each unit of R1, R2, R5, R6, R7 that applied there -- the input
#: holds a protected message (R1), the tail is not empty (R2), the previous enabled
#: request dropped a non-protected message still in the input (R5), a message is dropped
#: (R6), a cut beyond continuity (R7); R3 and R4 apply at every enabled request.  0: "ask
#: the units".  (Small ints: an answer allocates nothing.)
A_PROT, A_TAIL, A_PREV, A_DROP, A_CUT, A_HELD = 1, 2, 4, 8, 16, 32


class _Out:
    """An output entry: the message as sent, and where it sits (input seq, or -1)."""

    __slots__ = ("anchor_np", "est", "msg", "seq")

    def __init__(self, msg: Message, seq: int, est: int, anchor_np: bool = False) -> None:
        self.msg, self.seq, self.est = msg, seq, est
        self.anchor_np = anchor_np  # in the mirror's out_at (and its heap)


class _In(_Out):
    """A live input message in the checker's mirror.

    Sent as it is (the very message), it is its own output entry too (one object, not
    two): its ``msg``, ``seq`` and ``est`` are those of the message sent, and ``anchor_np``
    (not protected) says it is in ``out_at``.  Its text is never changed while it is: an
    edit first gives the output an entry of its own (:meth:`Mirror._in_edit`)."""

    __slots__ = ("kept", "prot", "run")

    def __init__(self, seq: int, msg: Message, est: int, prot: bool,
                 kept: bool = False) -> None:
        self.seq, self.msg, self.est, self.prot = seq, msg, est, prot
        self.anchor_np = not prot  # (read only as its own output entry)
        self.kept = kept  # its id is in the output
        #: a result: the run it is in; any other message: the run right after it (None:
        #: none yet; ``mirror_runs.py``)
        self.run: _Run | None = None


class _Run:
    """A run of tool results in the mirror (``mirror_runs.py``): read at its root."""

    __slots__ = ("caller", "head", "kept", "live", "up")

    def __init__(self, head: _In | None) -> None:
        self.up: _Run | None = None  # the record it was joined under (None: a root)
        self.head = head  # the live message right before it that is not a result
        self.caller = head if head is not None and head.msg.role == "assistant" else None
        self.live = 0  # its live results
        self.kept = 0  # those of them sent


def root(run: _Run) -> _Run:
    """The record ``run`` was joined under, last (the path to it halved on the way)."""
    while run.up is not None:
        up = run.up
        if up.up is not None:
            run.up = up.up
        run = up
    return run


def _apart(ids: set[str], edited: Sequence[tuple[str, str]], deleted: Sequence[str]) -> bool:
    return ids.isdisjoint(deleted) and ids.isdisjoint([mid for mid, _ in edited])


def sent_as_appended(ch: Change, out: Mapping[str, object]) -> set[str]:
    """The ids appended and sent as they are, entered sent at once (one update of each
    tree, not two), in a change that neither edits nor deletes: each appended once,
    sent once as the very message appended, not withdrawn, and not in the output
    before (``out``: the mirror's output by id).  The state reached is that of the
    operations in their order (what depends on a message's state and its caller's is
    recomputed whenever either changes)."""
    appended = ch.appended
    if not appended or not ch.sent or ch.edited or ch.deleted:
        return set()
    ids = {m.id: m for m in appended}
    if len(ids) != len(appended):  # an id appended twice
        return set()
    at_once: set[str] = set()
    seen: set[str] = set()
    for m in ch.sent:
        mid = m.id
        if mid in seen:  # sent twice
            return set()
        seen.add(mid)
        if ids.get(mid) is m and mid not in out:
            at_once.add(mid)
    if ch.withdrawn:
        at_once.difference_update(ch.withdrawn)
    return at_once
