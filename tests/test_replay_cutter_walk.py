"""The reference cutter's walk over consecutive non-protected messages (``_np_run``, what
``output_delta`` visits between two cuts) is the tree's answer for each rank."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator

import pytest

from risutools.replay import cutter as cutter_mod
from risutools.replay.cutter import ContextCutter
from risutools.replay.fixture import Message
from risutools.settings.replay import build_config


def _grow(c: ContextCutter, rng: random.Random, n: int, p_delete: float,
          text: Callable[[], str]) -> Iterator[int]:
    """``n`` messages of random roles appended to ``c``, after each a live one deleted with
    probability ``p_delete``; yields after each step."""
    live: list[str] = []
    for i in range(n):
        role = rng.choice(["user", "assistant", "system", "tool", "user"])
        c.append(Message(f"m{i}", role, text()))
        live.append(f"m{i}")
        if rng.random() < p_delete:
            c.delete(live.pop(rng.randrange(len(live))))
        yield i


@pytest.mark.parametrize(("seed", "walk"), [(s, w) for s in range(4) for w in (1, 2, 8)])
def test_np_run_is_nth_np_rank_by_rank(seed: int, walk: int,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cutter_mod, "_WALK", walk)
    rng = random.Random(seed)
    c = ContextCutter(build_config({}))
    for _ in _grow(c, rng, 300, 0.5 if seed % 2 else 0.1, lambda: "x" * rng.randrange(9)):
        pass  # (runs of deleted entries)
    n = c._n_np
    for _ in range(300):
        lo = rng.randrange(n + 3)
        hi = lo + rng.randrange(12)
        want = [e for r in range(lo, hi) if (e := c._nth_np(r)) is not None]
        assert list(c._np_run(lo, hi)) == want, (lo, hi)
    every = [c._nth_np(r) for r in range(n)]
    assert list(c._np_run(0, n + 5)) == every


@pytest.mark.parametrize(("seed", "walk"), [(s, w) for s in range(4) for w in (0, 1, 8)])
def test_np_before_counted_back_is_the_trees_prefix(seed: int, walk: int,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """``_np_before`` (what ``output_delta`` asks of each entry touched) counts back from
    the end near it and asks the tree farther: the tree's prefix at every position, with
    deleted and protected entries among the last ones."""
    monkeypatch.setattr(cutter_mod, "_WALK", walk)
    rng = random.Random(seed)
    c = ContextCutter(build_config({}))
    for _ in _grow(c, rng, 200, 0.3, lambda: "x"):
        seq = rng.randrange(len(c._entries) + 1)
        assert c._np_before(seq) == c._cnt.prefix(seq), seq
    for seq in range(len(c._entries) + 1):
        assert c._np_before(seq) == c._cnt.prefix(seq), seq
