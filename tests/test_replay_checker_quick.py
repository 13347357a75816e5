"""The checker's quick path for the commonest request (``InvariantChecker.quick``:
``Mirror.appended_held``, a change that sends exactly what it appends) against its
reference, the same checker through ``Mirror.observe`` and ``all_held`` (``quick``
False): the same verdicts (counts, first failing requests, details) and the same mirror
after every request, on random changes from a cutter that errs now and then, so that
every invariant fails, also at requests of the quick path's shape."""

from __future__ import annotations

import random
from typing import Any

import pytest

from risutools.replay.checker import INVARIANTS, InvariantChecker
from risutools.replay.fixture import Message
from risutools.replay.mirror import Change
from risutools.settings.replay import build_config
from tests.test_replay_checker_incremental import _mirror_state, summary

ROLES = ("user", "assistant") * 6 + ("tool", "system")
TEXTS = ("a", "bb", "hello", "the same", "xxxxxxxxxx", "y" * 25)  # twins: anchors among them


class _Erring:
    """Changes as an erring cutter hands them: it sends what it appends while the list
    fits ``max_context``, else withdraws the oldest non-protected messages sent until it
    fits the target; now and then it errs (withdraws from the middle or the tail or a
    protected message, sends again what it withdrew, sends a text of its own, claims
    ``budget_unreachable``, switches off; edits and deletes come beside), and mends some
    of it later (what was dropped made a front again, protected messages sent again)."""

    def __init__(self, rng: random.Random, cfg: Any) -> None:
        self.rng, self.cfg = rng, cfg
        self.live: list[Message] = []  # the input, in order
        self.sent: dict[str, Message] = {}  # the output: the message sent, by id
        self.n = 0

    def _est(self, m: Message) -> int:
        return len(m.content) + self.cfg.message_overhead

    def change(self, req: int) -> tuple[Change, bool]:
        """The next change, and whether it was made with the quick path's shape."""
        rng = self.rng
        appended = []
        for _ in range(rng.choice((1, 2, 2, 2, 3, 0))):
            text = rng.choice(TEXTS) if rng.random() < 0.5 else f"t{self.n}"  # (or alone)
            appended.append(Message(f"m{self.n}", rng.choice(ROLES), text))
            self.n += 1
        self.live += appended
        self.sent.update((m.id, m) for m in appended)
        enabled = rng.random() > 0.03
        est = sum(self._est(m) for m in self.live if m.id in self.sent)
        if est <= self.cfg.max_context and rng.random() < 0.85:
            return Change(req, enabled, appended, sent=list(appended)), True
        return self._odd(req, enabled, appended), False

    def _odd(self, req: int, enabled: bool, appended: list[Message]) -> Change:
        rng = self.rng
        ids = [m.id for m in self.live]
        first = [m.id for m in self.live if m.id in self.sent and self._np(m)][:1]
        ids += first * len(ids)  # (the anchor, edited or deleted: lost, R8)
        edited: tuple[tuple[str, str], ...] = ()
        deleted: tuple[str, ...] = ()
        sent = list(appended)
        gone: list[str] = []
        if ids and rng.random() < 0.15:
            edited = ((rng.choice(ids), rng.choice(TEXTS)),)
            self.live = [Message(m.id, m.role, edited[0][1]) if m.id == edited[0][0] else m
                         for m in self.live]
            if edited[0][0] in self.sent and rng.random() < 0.9:  # the new text sent
                new = next(m for m in self.live if m.id == edited[0][0])
                self.sent[new.id] = new
                sent.append(new)
        if ids and rng.random() < 0.1:
            deleted = (rng.choice(ids),)
            self.live = [m for m in self.live if m.id != deleted[0]]
            if self.sent.pop(deleted[0], None):
                gone.append(deleted[0])  # (the output loses it too)
        gone += self._err(sent) if rng.random() < 0.08 else []
        if first and (edited or deleted) and rng.random() < 0.3:  # restarts from zero (R8)
            again = [m for m in self.live if m.id not in self.sent and self._np(m)]
            self.sent.update((m.id, m) for m in again)
            sent += again
        if rng.random() < 0.5:
            sent += self._mend(gone)
        cut, unreachable = self._cut()
        gone += cut
        sent = [m for m in sent if m.id not in gone]  # (withdrawn before sent)
        return Change(req, enabled, appended, edited, deleted, sent, gone,
                      unreachable != (rng.random() < 0.05))

    def _np(self, m: Message) -> bool:
        return m.role not in self.cfg.protected_roles

    def _cut(self) -> tuple[list[str], bool]:
        """The oldest non-protected messages sent withdrawn, down to the target; whether
        the list is still over ``max_context`` (``budget_unreachable``)."""
        target = self.cfg.max_context * (100 - self.cfg.trim_percent) // 100
        est = sum(self._est(m) for m in self.live if m.id in self.sent)
        gone = []
        if est > self.cfg.max_context:
            nps = [m for m in self.live if self._np(m)]
            for m in nps[:len(nps) - self.cfg.preserve_latest]:
                if est <= target:
                    break
                if m.id in self.sent:
                    gone.append(m.id)
                    est -= self._est(m)
        for mid in gone:
            del self.sent[mid]
        return gone, est > self.cfg.max_context

    def _err(self, sent: list[Message]) -> list[str]:
        rng = self.rng
        kept = [m for m in self.live if m.id in self.sent]
        if not kept:
            return []
        roll = rng.random()
        m = rng.choice(kept)
        if roll < 0.5:  # from the middle, the tail, or protected
            del self.sent[m.id]
            return [m.id]
        back = [m for m in self.live if m.id not in self.sent]
        if roll < 0.8 and back:  # sent again
            m = rng.choice(back)
        elif roll < 0.9:  # a text of its own
            m = Message(m.id, m.role, "rewritten")
        self.sent[m.id] = m
        sent.append(m)
        return []

    def _mend(self, gone: list[str]) -> list[Message]:
        """Withdraw the non-protected messages kept before the last one dropped; send the
        protected ones dropped, and those sent with another text than the input's."""
        nps = [m for m in self.live if self._np(m)]
        last = max((i for i, m in enumerate(nps) if m.id not in self.sent), default=-1)
        for m in nps[:last]:
            if m.id in self.sent:
                del self.sent[m.id]
                gone.append(m.id)
        again = [m for m in self.live if m.id not in gone and (
            (not self._np(m) and m.id not in self.sent)
            or (m.id in self.sent and self.sent[m.id] != m))]
        self.sent.update((m.id, m) for m in again)
        return again


def _config(rng: random.Random) -> Any:
    return build_config({
        "max_context": rng.choice((150, 400, 1000)),
        "preserve_latest": rng.choice((0, 1, 3)),
        "trim_percent": rng.choice((0, 10, 50)),
        "tokenizer_profile": 1,
        "message_overhead": rng.choice((0, 2)),
        "protected_roles": rng.choice((["system", "tool"], ["system"])),
    })


def _answers(checker: InvariantChecker) -> list[int | None]:
    """What ``checker.mirror.appended_held`` answers, as it answers it (held: true, the
    units that applied; 0: ask them; None: not its shape)."""
    answers: list[int | None] = []
    said = checker.mirror.appended_held

    def spy(ch: Change, orphans_ok: bool) -> int | None:
        answers.append(said(ch, orphans_ok))
        return answers[-1]

    checker.mirror.appended_held = spy  # type: ignore[method-assign]
    return answers


def _run(seed: int) -> tuple[dict[str, Any], int, set[str]]:
    """Both checkers over one random run; (verdicts, requests the quick path said held,
    invariants that failed at a request of the quick path's shape)."""
    rng = random.Random(seed)
    cfg = _config(rng)
    quick, plain = InvariantChecker(cfg), InvariantChecker(cfg)
    plain.quick = False
    held = 0
    failed_quick: set[str] = set()
    cutter = _Erring(rng, cfg)
    answers = _answers(quick)
    for req in range(1, 300):
        ch, shaped = cutter.change(req)
        before = {k: v.failures for k, v in quick.verdicts.items()}
        answers.clear()
        quick.check(ch)
        plain.check(ch)
        held += len(answers) == 1 and bool(answers[0])
        taken = answers[0] is not None
        assert taken or not (shaped and ch.enabled), req
        got, want = summary(quick), summary(plain)
        assert got == want, (seed, req)
        if taken:
            failed_quick |= {k for k, v in quick.verdicts.items() if v.failures > before[k]}
        if req % 5 == 0:
            assert _mirror_state(quick.mirror) == _mirror_state(plain.mirror), (seed, req)
    return summary(quick), held, failed_quick


@pytest.mark.parametrize("seed", range(12))
def test_the_quick_path_gives_the_reference_verdicts(seed: int) -> None:
    _, held, _ = _run(seed)
    assert held > 10  # the quick path answered, and the reference path ran beside it


def test_the_comparison_sees_every_invariant_fail() -> None:
    """Not vacuous: across the runs every invariant fails, and R1-R4, R6, R7 and R9 fail
    at requests of the quick path's shape (R5 and R8 need a request of another shape:
    something sent again, an anchor gone)."""
    failed: set[str] = set()
    at_quick: set[str] = set()
    for seed in range(12):
        verdicts, _, quick = _run(seed)
        failed |= {k for k, (n, _, _) in verdicts.items() if n}
        at_quick |= quick
    assert failed == set(INVARIANTS)
    assert at_quick >= {"R1", "R2", "R3", "R4", "R6", "R7", "R9"}


def test_the_quick_path_is_the_one_taken_by_default() -> None:
    """The commonest request is answered by ``Mirror.appended_held`` (held, and counted
    so); the reference path (``quick`` False) never asks it."""
    cfg = build_config({"max_context": 1000})
    for quick in (True, False):
        ch = InvariantChecker(cfg)
        assert ch.quick is True
        ch.quick = quick
        answers = _answers(ch)
        m = Message("a", "user", "hi")
        ch.check(Change(1, True, [m], sent=[m]))
        assert [bool(a) for a in answers] == ([True] if quick else [])
        assert {k: v.checked for k, v in ch.verdicts.items()} == {  # (no protected
            # message: R1; nothing dropped: R5, R6, R7; a tail of one: R2)
            "R1": 0, "R2": 1, "R3": 1, "R4": 1, "R5": 0, "R6": 0, "R7": 0, "R8": 0, "R9": 0}


def _both(cfg: Any, changes: list[Change]) -> dict[str, Any]:
    quick, plain = InvariantChecker(cfg), InvariantChecker(cfg)
    plain.quick = False
    for ch in changes:
        quick.check(ch)
        plain.check(ch)
        assert summary(quick) == summary(plain), ch.request
    return summary(quick)


def test_a_cut_beyond_continuity_at_a_request_that_only_appends() -> None:
    """Every message dropped at request 1 (the tail too, R2; R7), none at request 2:
    the omitted count carried is |R| at 1, fewer than those still dropped at 2, a cut
    beyond continuity within max_context (R7), though request 2 sends what it appends."""
    cfg = build_config({"max_context": 1000, "preserve_latest": 1, "tokenizer_profile": 1})
    a, b, c, d = (Message(i, "user", i * 3) for i in "abcd")
    got = _both(cfg, [Change(1, True, [a, b]), Change(2, True, [c, d], sent=[c, d])])
    assert got["R2"][:2] == (1, 2) and got["R7"][:2] == (2, 2)  # (R7 at 1, and at 2)


def test_dropped_from_the_middle_at_a_request_that_only_appends() -> None:
    cfg = build_config({"max_context": 1000, "preserve_latest": 0, "tokenizer_profile": 1})
    a, b, c, d = (Message(i, "user", i * 3) for i in "abcd")
    got = _both(cfg, [Change(1, True, [a, b, c], sent=[a, c]),
                      Change(2, True, [d], sent=[d])])
    assert got["R6"][:2] == (2, 2)


def test_over_budget_while_only_appending() -> None:
    """After a request the quick path held, only messages sent as appended: answered
    without the full test (``Mirror._steady``) until the output passes ``max_context``,
    where R3 fails at the very request, as the reference says."""
    cfg = build_config({"max_context": 60, "preserve_latest": 1, "tokenizer_profile": 1,
                        "message_overhead": 0})
    msgs = [Message(f"m{i}", ("user", "assistant")[i % 2], str(i) * 10) for i in range(9)]
    changes = [Change(i + 1, True, [m], sent=[m]) for i, m in enumerate(msgs)]
    quick = InvariantChecker(cfg)
    full: list[int] = []
    said = quick.mirror._held_after_append

    def spy(orphans_ok: bool) -> bool:
        full.append(quick.mirror.n_np)
        return said(orphans_ok)

    quick.mirror._held_after_append = spy  # type: ignore[method-assign]
    for ch in changes:
        quick.check(ch)
    assert full == [1, 7, 8, 9]  # (requests 2-6: steady; from 7, R3 fails)
    got = _both(cfg, changes)
    assert got == summary(quick)
    assert got["R3"][0] == 3 and got["R3"][2][0] == 7  # 70 > 60 at request 7


@pytest.mark.parametrize("odd", ["twice in two", "twice in three", "in the input",
                                 "alone in the input", "third in the input", "sent before",
                                 "sent before, of two"])
def test_ids_not_new_are_not_the_quick_paths(odd: str) -> None:
    """An id appended twice (in two messages or more), one the input has, one the output
    has from before (sent ahead of its append): not the quick path's shape (None, nothing
    applied), the reference's verdicts."""
    cfg = build_config({"max_context": 1000, "preserve_latest": 1, "tokenizer_profile": 1})
    a, b, c = Message("a", "user", "aaa"), Message("b", "assistant", "bbb"), Message(
        "c", "user", "ccc")
    first = [Change(1, True, [a], sent=[a])]
    if odd == "twice in two":
        again = [b, Message("b", "user", "other")]
    elif odd == "twice in three":
        again = [b, c, Message("b", "user", "other")]
    elif odd == "in the input":
        again = [b, Message("a", "user", "aaa")]
    elif odd == "alone in the input":
        again = [Message("a", "user", "aaa")]
    elif odd == "third in the input":
        again = [b, c, Message("a", "user", "aaa")]
    else:
        first.append(Change(2, True, [b], sent=[b, c]))  # c sent before it is appended
        again = [c] if odd == "sent before" else [Message("d", "user", "ddd"), c]
    last = Change(len(first) + 1, True, again, sent=list(again))
    quick = InvariantChecker(cfg)
    answers = _answers(quick)
    for ch in [*first, last]:
        answers.clear()
        quick.check(ch)
    assert answers == [None]
    assert summary(quick) == _both(cfg, [*first, last])
