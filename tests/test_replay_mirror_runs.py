"""The checker's mirror keeps one record a run of tool results (``mirror_runs.py``): its
callers, R9's counts and orphans must be those the history defines (each result's caller:
the last live message before it that is not a result, when that is an assistant message),
after any appends, deletes, sends and withdrawals, and a head deleted must not cost a pass
over its run."""

from __future__ import annotations

import random
from typing import Any

import pytest

from risutools.replay.fixture import Message
from risutools.replay.mirror import Change, Mirror
from risutools.replay.mirror_records import RESULT_ROLES
from risutools.settings.replay import build_config

ROLES = ("user", "assistant", "assistant", "tool", "tool", "function", "system")


def _defined(m: Mirror) -> tuple[int, list[tuple[str, str]]]:
    """R9's state read off the history by its definition: (results with a caller, the
    results sent whose caller is not, each with its caller's id, in order)."""
    linked, orphans = 0, []
    caller = None
    for e in m.by_seq:
        if e is None:
            continue
        if e.msg.role not in RESULT_ROLES:
            caller = e if e.msg.role == "assistant" else None
            continue
        if caller is not None:
            linked += 1
            if e.kept and not caller.kept:
                orphans.append((e.msg.id, caller.msg.id))
    return linked, orphans


def _turn(rng: random.Random, live: dict[str, Message], sent: set[str], n: int,
          req: int) -> tuple[Change, int]:
    """A random change: appends, deletes (heads and results alike), sends, withdrawals."""
    appended = []
    for _ in range(rng.choice((0, 0, 1, 1, 3, 8))):
        m = Message(f"m{n}", rng.choice(ROLES), "x" * rng.randint(1, 30))
        n += 1
        appended.append(m)
    ids = sorted(live)
    deleted = rng.sample(ids, min(len(ids), rng.choice((0, 0, 1, 2))))
    for m in appended:
        live[m.id] = m
    for mid in deleted:
        del live[mid]
        sent.discard(mid)
    pool = sorted(live)
    to_send = [live[i] for i in pool if i not in sent and rng.random() < 0.4]
    withdrawn = [i for i in pool if i in sent and rng.random() < 0.3]
    sent.update(m.id for m in to_send)
    sent.difference_update(withdrawn)
    return Change(req, True, appended, (), deleted, to_send, withdrawn), n


@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize("seed", range(12))
def test_the_runs_hold_what_the_history_defines(seed: int, fast: bool) -> None:
    rng = random.Random(seed)
    m = Mirror(build_config({"max_context": 10**6}))
    m.fast = fast
    live: dict[str, Message] = {}
    sent: set[str] = set()
    n = 0
    for req in range(1, 300):
        ch, n = _turn(rng, live, sent, n, req)
        m.observe(ch)
        linked, orphans = _defined(m)
        assert (m.linked, m.orphan_pairs()) == (linked, orphans), req
        assert bool(m.orphaned) == bool(orphans)
        assert m.orphan_pairs(2) == orphans[:2]


class _Reads(list[Any]):
    """A list that counts the places read."""

    reads = 0

    def __getitem__(self, i: Any) -> Any:
        _Reads.reads += 1
        return list.__getitem__(self, i)


def test_a_head_deleted_does_not_pass_over_its_run() -> None:
    """300 (user, assistant) pairs, 3,000 results, 4 more users; then the pairs deleted
    from the last, one a turn: the run's caller moves at each (an assistant dropped, or
    none), and R9 fails and holds in turn.  A pass over the run at each delete reads
    1.8 million places; the runs read a few a delete."""
    m = Mirror(build_config({"max_context": 10**6}))
    m.by_seq = _Reads()
    msgs = []
    for i in range(300):
        msgs += [Message(f"u{i}", "user", "x"), Message(f"a{i}", "assistant", "y")]
    msgs += [Message(f"t{i}", "tool", "r") for i in range(3000)]
    msgs += [Message(f"z{i}", "user", "z") for i in range(4)]
    kept = msgs[600:]  # the results and the tail sent; the pairs dropped
    m.observe(Change(1, True, msgs, (), (), kept, ()))
    assert m.orphan_pairs(1) == [("t0", "a299")] and m.linked == 3000
    _Reads.reads = 0
    req, fails = 1, 0
    for i in reversed(range(300)):
        for mid in (f"a{i}", f"u{i}"):
            req += 1
            m.observe(Change(req, True, (), (), [mid], (), ()))
            assert bool(m.orphaned) == (mid == f"u{i}" and i > 0)
            fails += bool(m.orphaned)
    assert fails == 299 and m.linked == 0 and not m.orphan_pairs()
    assert _Reads.reads < 20 * 600
