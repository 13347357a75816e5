"""The reference cutter's ``output_delta`` shortcuts (the one pass over what was appended,
``_sent_new``; the cut's move walked in one loop, ``_np_list``) answer what the plain walk
(``_delta_plain``) answers, request by request, and what the whole output list says."""

from __future__ import annotations

import random
from typing import Any

import pytest

from risutools.replay import cutter as cutter_mod
from risutools.replay.checker import InvariantChecker
from risutools.replay.cutter import ContextCutter
from risutools.replay.fixture import Message, build_fixture
from risutools.replay.run import iterate_cutter
from risutools.replay.synth import synthesize
from risutools.settings.replay import build_config

ROLES = ["user", "assistant", "user", "assistant", "system", "tool"]


def _ops(rng: random.Random, live: list[str], n: int) -> list[tuple[Any, ...]]:
    """One turn's random operations: appends, edits and deletes of old and new messages."""
    ops: list[tuple[Any, ...]] = []
    for _ in range(rng.choice([0, 1, 2, 2, 2, 3, 6])):
        mid = f"m{n + len(ops)}"
        ops.append(("append", Message(mid, rng.choice(ROLES), "x" * rng.randrange(1, 60))))
        live.append(mid)
    for _ in range(rng.choice([0, 0, 0, 1, 2])):
        if live:
            ops.append(("edit", rng.choice(live), "y" * rng.randrange(1, 90)))
    for _ in range(rng.choice([0, 0, 0, 1, 3])):
        if live:
            ops.append(("delete", live.pop(rng.randrange(len(live)))))
    return ops


def _apply(c: ContextCutter, ops: list[tuple[Any, ...]]) -> None:
    for op in ops:
        if op[0] == "append":
            c.append(op[1])
        elif op[0] == "edit":
            c.edit(op[1], op[2])
        else:
            c.delete(op[1])


@pytest.mark.parametrize("seed", range(6))
def test_output_delta_shortcuts_answer_the_plain_walk(seed: int) -> None:
    rng = random.Random(seed)
    cfg = build_config({"max_context": rng.choice([150, 300, 600]), "preserve_latest":
                        rng.choice([0, 1, 3]), "trim_percent": rng.choice([10, 40])})
    fast, plain = ContextCutter(cfg), ContextCutter(cfg)
    plain._delta_fast = False
    taken = {"fast": 0, "moved": 0}
    live: list[str] = []
    out: dict[str, Message] = {}  # the output as the deltas build it
    enabled, n = True, 0
    for _ in range(400):
        ops = _ops(rng, live, n)
        n += len(ops)
        _apply(fast, ops)
        _apply(plain, ops)
        if rng.random() < 0.05:
            enabled = not enabled
        j, upto, touched = fast._j, fast._upto, dict(fast._touched)
        r1, r2 = fast.request(enabled), plain.request(enabled)
        assert r1 == r2
        d1, d2 = fast.output_delta(r1), plain.output_delta(r2)
        assert d1 == d2
        k = r1.dropped if r1.enabled else 0
        if k >= j and (not touched or min(touched) >= upto):
            taken["fast"] += 1
            taken["moved"] += k > j
        sent, withdrawn = d1
        for mid in withdrawn:
            del out[mid]
        for m in sent:
            out[m.id] = m
        whole = fast.output(r1)
        assert sorted(out.values()) == sorted(whole)
    assert taken["fast"] > 100 and taken["moved"] > 5  # (the shortcuts did run)
    assert taken["fast"] < 400  # (and so did the plain walk)


@pytest.mark.parametrize(("seed", "walk"), [(s, w) for s in range(4) for w in (1, 2, 8)])
def test_np_list_is_np_run(seed: int, walk: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cutter_mod, "_WALK", walk)
    rng = random.Random(seed)
    c = ContextCutter(build_config({}))
    live: list[str] = []
    for i in range(300):
        c.append(Message(f"m{i}", rng.choice(ROLES), "x"))
        live.append(f"m{i}")
        if rng.random() < (0.6 if seed % 2 else 0.1):
            c.delete(live.pop(rng.randrange(len(live))))
    n = c._n_np
    for _ in range(300):
        lo = rng.randrange(n + 3)
        hi = lo + rng.randrange(40)
        assert c._np_list(lo, hi) == list(c._np_run(lo, hi)), (lo, hi)
    assert c._np_list(0, n + 5) == list(c._np_run(0, n + 5))


def test_the_mirrors_fields_are_all_slots() -> None:
    """Every field a mirror sets, after a run, is one of its slots (none in its
    ``__dict__``: a field past 30 would put them all in a dict, read slower)."""
    cfg = build_config({"max_context": 400})
    fx = build_fixture(synthesize(2, 300, edit_rate=0.3, delete_rate=0.2, tool_rate=0.2))
    ch = InvariantChecker(cfg)
    for _, _, obs in iterate_cutter(fx, cfg):
        assert obs is not None
        ch.check(obs)
    assert ch.mirror.__dict__ == {}
    assert ch.verdicts["R1"].checked > 0
