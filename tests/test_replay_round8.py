"""Round 8 of ``replay run``'s cost (issue 23, goal 4): the checker's fast paths against
the reference paths they stand for.

* :func:`~risutools.replay.invariants.all_held` (R1-R8 tested together) against the units
  themselves, request by request, and the fused checker's verdicts against the checker
  asking every unit (``InvariantChecker.fused = False``);
* the one-pass changes of :class:`~risutools.replay.mirror.Mirror` (``_append_sent``,
  ``_withdraw_all``) against one operation at a time (``Mirror.fast = False``), on the
  harness's changes and on random, hostile ones.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from risutools.replay import invariants
from risutools.replay.checker import InvariantChecker
from risutools.replay.cutter import ContextCutter
from risutools.replay.fixture import Fixture, Message, build_fixture, load_fixture
from risutools.replay.mirror import Change, Mirror, Step
from risutools.replay.run import iterate_cutter
from risutools.replay.synth import synthesize
from risutools.replay.verdicts import HELD, SKIP
from risutools.settings.replay import ReplayConfig, build_config, load_replay_config
from tests.test_replay_checker_incremental import CONFIGS, _fixture, _mirror_state, summary
from tests.test_replay_invariants import (
    CutsWhileOff,
    DeepCutAfterLoss,
    DropsFromMiddle,
    DropsProtected,
    DropsTail,
    EstimatesLow,
    ForgetsDeletes,
    ForgetsEdits,
    GivesUpEarly,
    IgnoresAnchor,
    IgnoresBudget,
    OverCuts,
    Reorders,
    RestartsAfterLoss,
    RewritesContent,
)

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "replay"
BROKEN: list[type[ContextCutter]] = [
    ContextCutter, DropsProtected, DropsTail, Reorders, RewritesContent, IgnoresAnchor,
    RestartsAfterLoss, DeepCutAfterLoss, DropsFromMiddle, OverCuts, IgnoresBudget,
    GivesUpEarly, ForgetsEdits, ForgetsDeletes, EstimatesLow, CutsWhileOff,
]


def _runs() -> Iterator[tuple[str, Fixture, ReplayConfig]]:
    """Every ``fixtures/replay`` fixture with its configuration; synthetic ones (tools,
    edits and deletes near the end, toggles) under several budgets."""
    for p in sorted(FIX.glob("*.yaml")):
        fx = load_fixture(p)
        yield p.stem, fx, load_replay_config(None, fx.config)
    fx = _fixture(4)
    for i, layer in enumerate(CONFIGS):
        yield f"synth-4-{i}", fx, build_config(layer)
    data = synthesize(3, 400, turns=190, edit_rate=0.1, delete_rate=0.05, tool_rate=0.3)
    yield "synth-3", build_fixture(data), build_config(
        {"max_context": 3000, "preserve_latest": 3, "trim_percent": 10})


RUNS = list(_runs())


def _observations(fx: Fixture, cfg: ReplayConfig,
                  factory: type[ContextCutter]) -> list[Step | Change]:
    obs: list[Step | Change] = []
    try:
        for _, _, o in iterate_cutter(fx, cfg, factory):
            assert o is not None
            obs.append(o)
    except IndexError:  # (Reorders on an output of fewer than two messages)
        assert factory is Reorders
    return obs


@pytest.mark.parametrize("factory", BROKEN, ids=lambda f: f.__name__)
def test_all_held_is_what_every_unit_answers(factory: type[ContextCutter]) -> None:
    """Wherever ``all_held`` is true, each of R1-R7 answers HELD where its bit says it
    applied and SKIP elsewhere, and R8 SKIP, asked one by one; and it is true often, false
    at every kind of request it leaves to them, and each bit is both set and unset."""
    held = left = 0
    seen: set[tuple[str, bool]] = set()
    for _, fx, cfg in RUNS:
        checker = InvariantChecker(cfg)
        checker.fused = False  # (the units asked at every request: the reference)
        m = checker.mirror
        for obs in _observations(fx, cfg, factory):
            r = m.observe(obs)
            answers = {c.id: c.run(m, r) for c in invariants.STANDARD if c.run is not None}
            if said := invariants.all_held(m, r):
                held += 1
                for k, bit in invariants.APPLIES.items():
                    assert answers[k] == (HELD if said & bit else SKIP), (k, answers)
                    seen.add((k, bool(said & bit)))
                assert answers["R8"] is SKIP
            else:
                left += 1
            applies, fails = invariants.orphans_apply(m) if r.enabled else (False, False)
            assert (answers["R9"] is not SKIP) == applies
            assert bool(answers["R9"]) == fails
            checker._tally.ask(m, r, r.req)
            if r.enabled:
                m.carry_state(r)
    assert left, left
    if factory is ContextCutter:
        assert held > 300, held
        assert seen == {(k, a) for k in invariants.APPLIES for a in (True, False)} - {
            ("R3", False), ("R4", False), ("R1", False)}, seen  # (R1: every run has a
        # protected message; R1 where none is: test_replay_applicability.py)


def _state(c: InvariantChecker, req: int) -> tuple[Any, ...]:
    return ({k: v.to_dict() for k, v in c.verdicts.items()}, c.failed(), c.warned(),
            c.first_failure_at(req))


@pytest.mark.parametrize("factory", BROKEN, ids=lambda f: f.__name__)
def test_the_fused_checker_counts_what_the_units_count(factory: type[ContextCutter]) -> None:
    """Verdicts, first failures and their details, request by request (read in the middle
    of a run, and only at its end), alike with and without the fused test."""
    for name, fx, cfg in RUNS:
        fused, plain, late = (InvariantChecker(cfg) for _ in range(3))
        assert fused.fused and late.fused
        plain.fused = False
        for obs in _observations(fx, cfg, factory):
            for c in (fused, plain, late):
                c.check(obs)
            req = obs.request
            assert _state(fused, req) == _state(plain, req), (name, req)
            assert late.first_failure_at(req) == plain.first_failure_at(req), (name, req)
        assert _state(late, 0) == _state(plain, 0), name


def test_the_fused_test_is_not_taken_with_other_units(monkeypatch: pytest.MonkeyPatch) -> None:
    """A registry handing other units (or another order) gets them asked one by one."""
    from risutools.replay import checker as checker_mod

    units = list(checker_mod.invariants_of(invariants.FAMILY))
    monkeypatch.setattr(checker_mod, "invariants_of", lambda fam: units[::-1])
    assert not InvariantChecker(build_config({})).fused


def _hostile_changes(seed: int) -> Iterator[Change]:
    """Random changes, most in the shapes the one-pass paths take (what is appended is
    what is sent, and some withdrawn), the rest beside them: a deleted id appended again
    (still in the output, or not), sent twice, sent before it is appended, withdrawn as
    it is appended, unknown ids withdrawn, protected roles and tool results, edits and
    deletes.  (Never a live id appended again: neither the fixture nor the cutter lets
    one through.)"""
    rng = random.Random(seed)
    roles = ["user", "assistant", "tool", "function", "system", "assistant"]
    live: list[str] = []
    dead: list[str] = []
    n = 0
    for req in range(1, 500):
        appended = [Message(f"m{n + i}", rng.choice(roles), "x" * rng.randrange(1, 30))
                    for i in range(rng.choice([0, 1, 2, 2, 3]))]
        n += len(appended)
        roll = rng.random()
        if roll < 0.05 and dead:  # a deleted id appended again
            appended.append(Message(dead.pop(rng.randrange(len(dead))), "user", "again"))
        sent: list[Message] = list(appended)
        if 0.05 <= roll < 0.1 and appended:
            sent.append(appended[0])  # sent twice
        elif 0.1 <= roll < 0.15 and appended:
            sent = sent[::-1]  # another order
        elif 0.15 <= roll < 0.2:
            sent.append(Message(f"m{n + 1}", "user", "early"))  # before it is appended
        pool = live + [m.id for m in appended]
        withdrawn = rng.sample(live, min(len(live), rng.choice([0, 0, 1, 3, 8])))
        if 0.2 <= roll < 0.25 and appended:
            withdrawn.append(appended[-1].id)  # withdrawn as it is appended
        elif 0.25 <= roll < 0.3:
            withdrawn.append("nobody")
        edited: list[tuple[str, str]] = []
        deleted: list[str] = []
        if 0.3 <= roll < 0.35 and live:
            edited = [(rng.choice(live), "y" * rng.randrange(1, 30))]
        elif 0.35 <= roll < 0.4 and live:
            deleted = [rng.choice(live)]
        if rng.random() < 0.15 and live:  # messages withdrawn before come back
            sent += [Message(mid, "user", "back") for mid in rng.sample(live, 1)]
        yield Change(req, rng.random() > 0.05, appended, edited, deleted, sent, withdrawn,
                     rng.random() < 0.05)
        live = [mid for mid in dict.fromkeys(pool) if mid not in deleted]
        dead += [mid for mid in deleted if mid not in dead]


def _one_pass_counted(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """How often each one-pass path runs on something (wrapped, behaviour unchanged)."""
    counts = {"_append_sent": 0, "_withdraw_all": 0}
    for name in counts:
        orig = getattr(Mirror, name)

        def wrapped(self: Mirror, arg: Any, _orig: Any = orig, _name: str = name) -> None:
            counts[_name] += bool(arg)
            _orig(self, arg)

        monkeypatch.setattr(Mirror, name, wrapped)
    return counts


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_one_pass_changes_reach_the_state_of_one_operation_at_a_time(
        seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Hostile changes: the mirror (everything an invariant reads of it), the request's
    shared figures and the verdicts alike, fast or one operation at a time."""
    counts = _one_pass_counted(monkeypatch)
    cfg = build_config({"max_context": 80, "preserve_latest": 2, "tokenizer_profile": 1,
                        "message_overhead": 0})
    fast, slow = InvariantChecker(cfg), InvariantChecker(cfg)
    slow.mirror.fast = False
    for ch in _hostile_changes(seed):
        rf, rs = fast.mirror.observe(ch), slow.mirror.observe(ch)
        assert rf == rs, ch.request
        assert _mirror_state(fast.mirror) == _mirror_state(slow.mirror), ch.request
        for c, r in ((fast, rf), (slow, rs)):
            c._tally.ask(c.mirror, r, r.req)
            if r.enabled:
                c.mirror.carry_state(r)
        assert summary(fast) == summary(slow), ch.request
    assert counts["_append_sent"] > 200 and counts["_withdraw_all"] > 150, counts


@pytest.mark.parametrize("factory", [ContextCutter, IgnoresAnchor, OverCuts, IgnoresBudget,
                                     RestartsAfterLoss, DeepCutAfterLoss, ForgetsEdits],
                         ids=lambda f: f.__name__)
def test_one_pass_changes_on_the_harness(factory: type[ContextCutter],
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The harness's own changes (the reference cutter and broken ones observed by
    change): the mirror and the verdicts alike at every request, fast or not."""
    counts = _one_pass_counted(monkeypatch)
    for name, fx, cfg in RUNS:
        fast, slow = InvariantChecker(cfg), InvariantChecker(cfg)
        slow.mirror.fast = False
        for obs in _observations(fx, cfg, factory):
            assert isinstance(obs, Change)
            fast.check(obs)
            slow.check(obs)
            assert _mirror_state(fast.mirror) == _mirror_state(slow.mirror), (name, obs.request)
            assert summary(fast) == summary(slow), (name, obs.request)
    assert counts["_append_sent"] > 100, counts


def test_a_live_id_appended_again_is_left_to_one_operation_at_a_time() -> None:
    """Outside the contract (neither the fixture nor the cutter lets a live id be appended
    again), but the one-pass path must not take it: a message dropped at the last request
    whose id comes again, sent, is a resurrection to R5 either way."""
    cfg = build_config({"max_context": 1000, "preserve_latest": 0, "tokenizer_profile": 1,
                        "message_overhead": 0})
    fast, slow = InvariantChecker(cfg), InvariantChecker(cfg)
    slow.mirror.fast = False
    msgs = [Message(f"m{i}", "user", "x" * 5) for i in range(4)]
    again = Message("m0", "user", "again")
    for ch in (Change(1, True, msgs, (), (), msgs), Change(2, True, (), (), (), (), ["m0"]),
               Change(3, True, [again], (), (), [again])):
        fast.check(ch)
        slow.check(ch)
        assert summary(fast) == summary(slow), ch.request
    assert slow.verdicts["R5"].first_request == 3
