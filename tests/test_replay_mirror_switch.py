"""A switch of the module off sends the whole history again; switched on, the next request
withdraws most of it.  The checker's mirror takes the very messages sent again in one pass
(``Mirror._send_all``), and makes its tree of the messages not sent again in one pass when
most of its positions moved (``Mirror.drops``, ``fenwick.tree_of``).  Both are held here
against the mirror taking one operation at a time (``fast`` False), the reference checker
(``quick`` False), the definitions over the whole history, and the tree pushed a value at a
time."""

from __future__ import annotations

import random
from typing import Any

import pytest
from replay_cases import toggled

from risutools.replay import mirror_ranks
from risutools.replay.checker import InvariantChecker
from risutools.replay.fenwick import Fenwick, tree_of
from risutools.replay.fixture import build_fixture
from risutools.replay.mirror import Mirror
from risutools.replay.run import iterate_cutter
from risutools.replay.synth import synthesize
from risutools.settings.replay import load_replay_config
from tests.test_replay_checker_incremental import _mirror_state, summary
from tests.test_replay_mirror_drops import _by_definition


@pytest.mark.parametrize("n", [0, 1, 2, 3, 7, 8, 9, 64, 65, 300])
def test_the_tree_of_values_is_the_tree_pushed(n: int) -> None:
    rng = random.Random(n)
    values = [rng.choice([0, 1, 1, -1, 5]) for _ in range(n)]
    pushed = Fenwick()
    for v in values:
        pushed.push(v)
    assert tree_of(values) == pushed.tree
    made = Fenwick()
    made.tree = tree_of(values)
    for i in range(n + 1):
        assert made.prefix(i) == sum(values[:i])


def _counted(m: Mirror, resent: list[int]) -> None:
    """Count the messages ``m`` sends again in its one pass (those :meth:`_send_all` does
    not hand to ``_out_set``)."""
    send_all, out_set = m._send_all, m._out_set
    handed = [0]

    def one(msg: Any) -> None:
        handed[0] += 1
        out_set(msg)

    def all_of(sent: Any, skip: set[str]) -> None:
        before = handed[0]
        send_all(sent, skip)
        resent.append(sum(1 for msg in sent if msg.id not in skip) - (handed[0] - before))

    m._out_set = one  # type: ignore[method-assign]
    m._send_all = all_of  # type: ignore[method-assign]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_switches_against_the_references(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """A long conversation (tool calls, edits, deletes) switched off and on every 60 turns:
    at every request the three checkers say the same; at each switch and now and then the
    fast mirror's state is the one-operation-at-a-time mirror's and what the definitions
    say.  Not vacuous: most messages sent again went by the one pass, and the tree was
    made again in one pass."""
    data = synthesize(seed, 1500, edit_rate=0.1, delete_rate=0.05, tool_rate=0.15,
                      config={"max_context": 900, "preserve_latest": 4})
    fx = build_fixture(toggled(data, 60, 20, 35))
    cfg = load_replay_config(None, fx.config)
    quick, plain, slow = InvariantChecker(cfg), InvariantChecker(cfg), InvariantChecker(cfg)
    plain.quick = False
    slow.mirror.fast = False
    resent: list[int] = []
    _counted(quick.mirror, resent)
    made = []
    real = mirror_ranks.tree_of

    def counted_tree(values: list[int]) -> list[int]:
        made.append(len(values))
        return real(values)

    monkeypatch.setattr(mirror_ranks, "tree_of", counted_tree)
    for turn, _res, obs in iterate_cutter(fx, cfg):
        assert obs is not None
        for checker in (quick, plain, slow):
            checker.check(obs)
        assert summary(quick) == summary(plain) == summary(slow), turn.number
        if turn.toggle is not None or turn.number % 25 == 0:
            m = quick.mirror
            assert _mirror_state(m) == _mirror_state(slow.mirror), turn.number
            _by_definition(m, max(0, m.n_np - cfg.preserve_latest))
    assert sum(resent) > 1000, resent
    assert made and max(made) > 500, made
