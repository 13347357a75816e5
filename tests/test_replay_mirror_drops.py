"""The checker mirror's answers about the messages not sent (and the first sent), against
their definitions.

The tree of the non-protected messages not sent takes its changes in place later
(``Mirror._drop_later``, made when a question needs the tree: ``Mirror.drops``); the first
kept one is followed by walking forward when it stops being kept (``Mirror._next_kept``);
the ``k``-th one not sent is found without the tree when they are the first ones
(``Mirror._kth_dropped``), and so is R's count of them (``Mirror._r_end``) and, the output
as the input has it, the first sent (``Mirror.first_sent_np``).  Each is
compared here with a plain pass over the whole live history, at every request of the
hostile changes of ``test_replay_round8`` and of the harness (the reference cutter and
broken ones), fast and one operation at a time.
"""

from __future__ import annotations

from typing import Any

import pytest

from risutools.replay import mirror as mirror_mod
from risutools.replay.checker import InvariantChecker
from risutools.replay.cutter import ContextCutter
from risutools.replay.fixture import Message
from risutools.replay.mirror import Change, Mirror
from risutools.settings.replay import build_config
from tests.test_replay_invariants import DropsFromMiddle, DropsTail, IgnoresAnchor, OverCuts
from tests.test_replay_round8 import RUNS, _hostile_changes, _observations


def _np(m: Mirror) -> list[Any]:
    """The live non-protected input messages, in order."""
    return [e for e in m.by_seq if e is not None and not e.prot]


def _by_definition(m: Mirror, n_r: int) -> None:
    """Everything the mirror says of the messages not sent, each against a plain pass
    (the waiting changes made last, so the answers above are asked without them)."""
    nps = _np(m)
    dropped = [e.seq + 1 for e in nps if not e.kept]
    assert m.n_np_drop == len(dropped)
    first = next((i for i, e in enumerate(nps) if e.kept), None)
    are_first = dropped == [e.seq + 1 for e in nps[:len(dropped)]]
    if m._drops_first():  # (it may not know: then it never says so)
        assert are_first
    assert m.np_before_first_kept() == first
    for k in range(1, len(dropped) + 1):
        assert m._kth_dropped(k) == dropped[k - 1], k
    assert m._r_end(n_r) == sum(1 for e in nps[:n_r] if not e.kept)
    sent = sorted((o.seq, o.msg) for o in m.out.values()
                  if o.seq >= 0 and o.msg.role not in m.prot_roles)
    assert m.first_sent_np() == ((sent[0][1].role, sent[0][1].content) if sent else None)
    tree = m.drops()  # (the waiting changes made)
    assert not m._drop_later
    for pos in range(len(m.by_seq) + 1):
        assert tree.prefix(pos) == sum(1 for p in dropped if p <= pos), pos


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("fast", [True, False])
def test_drops_are_what_the_history_says_on_hostile_changes(
        seed: int, fast: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = build_config({"max_context": 80, "preserve_latest": 2, "tokenizer_profile": 1,
                        "message_overhead": 0})
    checker = InvariantChecker(cfg)
    m = checker.mirror
    m.fast = fast
    walks = []
    walk = m._next_kept

    def counted(seq: int, stays: int, limit: int = 32) -> None:
        walks.append(stays)
        walk(seq, stays, limit)

    monkeypatch.setattr(m, "_next_kept", counted)
    for ch in _hostile_changes(seed):
        checker.check(ch)
        if ch.request % 7 == 0:  # (a plain pass is O(n^2) over a run: now and then)
            _by_definition(m, max(0, m.n_np - cfg.preserve_latest))
    assert walks.count(1) > 5, walks  # (the first kept withdrawn: walked past it)


@pytest.mark.parametrize("walk", [None, 0], ids=["walk", "asked"])
@pytest.mark.parametrize("factory", [ContextCutter, OverCuts, DropsFromMiddle, DropsTail,
                                     IgnoresAnchor], ids=lambda f: f.__name__)
def test_drops_are_what_the_history_says_on_the_harness(
        factory: type[ContextCutter], walk: int | None, monkeypatch: pytest.MonkeyPatch) -> None:
    """(``walk`` 0: no walk back over the tail or from the first kept, every answer from
    the first kept as counted, or from the trees.)"""
    if walk is not None:
        monkeypatch.setattr(mirror_mod, "_WALK", walk)
    first_known = asked = 0
    for _, fx, cfg in RUNS:
        checker = InvariantChecker(cfg)
        m = checker.mirror
        for obs in _observations(fx, cfg, factory):  # (a Step: the mirror rebuilt)
            checker.check(obs)
            first_known += m._drops_first()
            asked += 1
            _by_definition(m, max(0, m.n_np - cfg.preserve_latest))
    if factory is ContextCutter:  # (the reference cutter's drops: the first ones, known)
        assert first_known > asked * 0.9, (first_known, asked)


def test_a_walk_past_its_bound_leaves_the_first_kept_to_the_tree() -> None:
    """The first kept withdrawn with a long run not sent after it (a hole: what a cutter
    dropping from the middle leaves), protected ones between: the walk gives up (not
    known) and the tree answers, the same as the history."""
    cfg = build_config({"max_context": 10**6, "preserve_latest": 1, "tokenizer_profile": 1,
                        "message_overhead": 0})
    checker = InvariantChecker(cfg)
    m = checker.mirror
    msgs = [Message(f"m{i}", "tool" if i % 2 else "user", "x" * (i + 1)) for i in range(400)]
    checker.check(Change(1, True, msgs, (), (), msgs, ()))
    hole = [f"m{i}" for i in range(2, 201, 2)]
    checker.check(Change(2, True, (), (), (), (), hole))
    assert m._first_kept == 1 and m._np_before_kept == 0
    m._apply_change(Change(3, True, (), (), (), (), ["m0"]))
    assert m._first_kept is None and m._np_before_kept is None  # (the walk gave up)
    _by_definition(m, m.n_np - 1)
    assert m.np_before_first_kept() == 101 and m._first_kept == 203  # (m202)
    m._apply_change(Change(4, True, (), (), ["m202"], (), ()))  # the first kept deleted
    assert m._first_kept == 205 and m._np_before_kept == 101  # (walked to m204)
    _by_definition(m, m.n_np - 1)


@pytest.mark.parametrize("walk", [32, 0], ids=["walk", "asked"])
def test_drops_into_the_tail_are_not_counted_in_r(walk: int,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The first removable ones dropped, past R into the tail (R2 fails): R's count of them
    stops at R's end, walked back over the tail or not."""
    monkeypatch.setattr(mirror_mod, "_WALK", walk)
    cfg = build_config({"max_context": 10**6, "preserve_latest": 4, "tokenizer_profile": 1,
                        "message_overhead": 0})
    checker = InvariantChecker(cfg)
    m = checker.mirror
    msgs = [Message(f"m{i}", "assistant" if i % 3 else "tool", "x" * (i + 1))
            for i in range(15)]
    checker.check(Change(1, True, msgs, (), (), msgs, ()))
    gone = [x.id for x in msgs if x.role != "tool"][:8]  # of 10: 6 in R, then 2 in the tail
    checker.check(Change(2, True, (), (), (), (), gone))
    assert m._drops_first() and m.n_np_drop == 8
    assert m._r_end(6) == 6
    _by_definition(m, 6)
    assert checker.verdicts["R2"].failures == 1
