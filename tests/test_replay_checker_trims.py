"""The checker's state path for requests other than the commonest one
(``Mirror.changed_held``: a trim, an edit, a delete, applied, then answered from the state
a correct cutter leaves), the withdrawn run taken in a few passes
(``Mirror._withdraw_run``) and the anchor's twins looked for near a moved anchor
(``Mirror._near_anchor``, the text index made only when a question needs it) against their
references: the checker through ``Mirror.observe`` and ``all_held`` (``quick`` False), the
mirror taking one operation at a time (``fast`` False), and the spec's definition of the
continuity step over the whole history."""

from __future__ import annotations

import random
from typing import Any

import pytest

from risutools.replay.checker import InvariantChecker
from risutools.replay.cutter import ContextCutter
from risutools.replay.fixture import Message, Turn
from risutools.replay.mirror import Change
from risutools.settings.replay import build_config
from tests.replay_cases import requested
from tests.test_replay_checker_incremental import (
    _mirror_state,
    _nearest_by_definition,
    summary,
)
from tests.test_replay_checker_quick import _config, _Erring


def _spied(obj: Any, name: str) -> list[Any]:
    """What ``obj.name`` answers, each call, as it answers it."""
    answers: list[Any] = []
    said = getattr(obj, name)

    def spy(*args: Any) -> Any:
        answers.append(said(*args))
        return answers[-1]

    setattr(obj, name, spy)
    return answers


def _run(seed: int) -> tuple[list[int | None], set[str], list[bool]]:
    """Three checkers over one run of an erring cutter: the quick one, the reference
    (``quick`` False) and the quick one whose mirror takes one operation at a time;
    (what ``changed_held`` answered, the invariants that failed at a request it took,
    what ``_withdraw_run`` answered)."""
    rng = random.Random(seed)
    cfg = _config(rng)
    quick, plain, slow = InvariantChecker(cfg), InvariantChecker(cfg), InvariantChecker(cfg)
    plain.quick = False
    slow.mirror.fast = False
    changed = _spied(quick.mirror, "changed_held")
    runs = _spied(quick.mirror, "_withdraw_run")
    failed: set[str] = set()
    cutter = _Erring(rng, cfg)
    for req in range(1, 300):
        ch, _ = cutter.change(req)
        before = {k: v.failures for k, v in quick.verdicts.items()}
        asked = len(changed)
        quick.check(ch)
        plain.check(ch)
        slow.check(ch)
        assert summary(quick) == summary(plain) == summary(slow), (seed, req)
        if len(changed) > asked and changed[-1] is not None:
            failed |= {k for k, v in quick.verdicts.items() if v.failures > before[k]}
        if req % 5 == 0:
            assert _mirror_state(quick.mirror) == _mirror_state(plain.mirror), (seed, req)
        assert _mirror_state(quick.mirror) == _mirror_state(slow.mirror), (seed, req)
    return changed, failed, runs


@pytest.mark.parametrize("seed", range(12))
def test_the_state_path_gives_the_reference_verdicts(seed: int) -> None:
    changed, _, _ = _run(seed)
    assert len([a for a in changed if a]) > 3  # (it answered, and the reference ran beside it)


def test_the_state_path_sees_the_cutter_err() -> None:
    """Not vacuous: across the runs the state path answers held, and asks the units
    (False), and invariants fail at requests it took (its False is the reference's
    verdict, not a pass); the withdrawn run is taken, and refused."""
    answers: list[int | None] = []
    runs: list[bool] = []
    failed: set[str] = set()
    for seed in range(12):
        changed, at, ran = _run(seed)
        answers += changed
        failed |= at
        runs += ran
    held = [a for a in answers if a]
    assert len(held) > 50 and answers.count(0) > 50
    assert failed >= {"R1", "R2", "R3", "R4", "R5", "R6", "R7"}
    assert runs.count(True) > 20 and runs.count(False) > 20


def _trim_case(deeper: int) -> tuple[InvariantChecker, InvariantChecker, list[Any]]:
    """Messages sent as appended until the output passes ``max_context``; then a trim of
    the oldest non-protected ones down to the target, ``deeper`` more withdrawn."""
    cfg = build_config({"max_context": 100, "preserve_latest": 2, "tokenizer_profile": 1,
                        "message_overhead": 0, "trim_percent": 30})
    quick, plain = InvariantChecker(cfg), InvariantChecker(cfg)
    plain.quick = False
    changed = _spied(quick.mirror, "changed_held")
    runs = _spied(quick.mirror, "_withdraw_run")
    msgs = [Message("s", "system", "sys")] + [
        Message(f"m{i}", ("user", "assistant")[i % 2], str(i % 10) * 10) for i in range(12)]
    changes = [Change(1, True, msgs[:9], sent=msgs[:9])]  # 3 + 80: within 100
    est = 3 + 80 + 20  # two more: 103, past max_context
    gone = []
    for m in msgs[1:]:
        if est <= 70:  # the target: floor(100 * 0.7)
            break
        gone.append(m.id)
        est -= 10
    gone += [m.id for m in msgs[1 + len(gone):1 + len(gone) + deeper]]
    changes.append(Change(2, True, msgs[9:11], sent=msgs[9:11], withdrawn=gone))
    changes.append(Change(3, True, msgs[11:], sent=msgs[11:]))
    for ch in changes:
        quick.check(ch)
        plain.check(ch)
        assert summary(quick) == summary(plain), ch.request
    return quick, plain, [changed, runs]


def test_a_trim_to_the_target_is_held_from_the_state() -> None:
    quick, _, (changed, runs) = _trim_case(0)
    assert [bool(a) for a in changed] == [True] and runs == [True]  # (a run of the oldest:
    # taken at once)
    assert not quick.failed()
    assert quick.mirror.n_np_drop == 4 and quick.mirror.prev_omitted == 4


def test_a_trim_one_too_deep_fails_r7_at_that_request() -> None:
    """The run withdrawn is one message longer than the target needs: taken as a run
    (the state is right), then the state path cannot hold it (False: the units asked),
    and R7 fails at request 2, as the reference says."""
    quick, plain, (changed, runs) = _trim_case(1)
    assert changed == [False] and runs == [True]
    assert quick.failed() == plain.failed() == ["R7"]
    assert quick.verdicts["R7"].first_request == 2


@pytest.mark.parametrize("seed", [1, 4, 9])
def test_twins_near_a_moved_anchor_are_those_of_the_definition(seed: int) -> None:
    """The remembered anchor still there, moved down by deletes before it: the twins
    looked for among the messages near it (no index) give the continuity step of the
    spec's definition over the whole history, and so does the index, made then."""
    rng = random.Random(seed)
    texts = ["a" * 8, "b" * 8, "c" * 12, "d" * 5]
    cfg = build_config({"max_context": 120, "preserve_latest": 2, "tokenizer_profile": 1,
                        "message_overhead": 0, "trim_percent": 30})
    cutter, checker = ContextCutter(cfg), InvariantChecker(cfg)
    m = checker.mirror
    near = _spied(m, "_near_anchor")
    continuity = m.continuity

    def compared(n_r: int) -> tuple[int, bool]:
        got = continuity(n_r)
        left = m._before_anchor
        m._before_anchor = (-1, 0)  # (the index, made now if it was not)
        assert got == continuity(n_r) == _nearest_by_definition(m, n_r)
        m._before_anchor = left
        return got

    m.continuity = compared  # type: ignore[method-assign]
    live: list[str] = []
    n = 0
    for req in range(1, 700):
        turn = Turn(req)
        for _ in range(rng.choice([1, 2, 2])):
            turn.append.append(Message(f"m{n}", rng.choice(["user", "assistant"]),
                                       rng.choice(texts)))
            n += 1
        kept = m._first_kept
        old = [mid for mid in live[:-4] if m.inp[mid].seq + 1 < (kept or 0)]
        if old and rng.random() < 0.3:  # a message dropped before the anchor deleted
            turn.delete.append(rng.choice(old))
            live.remove(turn.delete[0])
        live += [x.id for x in turn.append]
        requested(cutter, checker, turn, req)
    assert len(near) > 20
    assert not checker.failed()


def test_the_text_index_is_by_signature_and_read_without_a_pass() -> None:
    """Twins of one text under two roles: each role's seqs are their own entry of the index
    (a signature's), handed as kept (the same list each time, never a pass over every twin
    a request: with 50,000 twins deleted one a turn, a pass a request was quadratic, 3.5 s
    -> 57 s; bench/RESULTS.md, round 26), and a delete takes its seq out of its entry."""
    cfg = build_config({"max_context": 10_000, "preserve_latest": 2})
    checker = InvariantChecker(cfg)
    msgs = [Message(f"m{i}", "user" if i % 3 else "assistant", "twin") for i in range(12)]
    checker.check(Change(1, True, msgs, [], [], msgs, (), False))
    m = checker.mirror
    users = [i for i in range(12) if i % 3]
    assert m.seqs_of(("user", "twin")) == users
    assert m.seqs_of(("assistant", "twin")) == [0, 3, 6, 9]
    assert m.seqs_of(("user", "twin")) is m.seqs_of(("user", "twin"))
    assert m.seqs_of(("system", "twin")) == [] and m.seqs_of(("user", "other")) == []
    checker.check(Change(2, True, [], [], ["m4"], [], ("m4",), False))
    assert m.seqs_of(("user", "twin")) == [s for s in users if s != 4]
