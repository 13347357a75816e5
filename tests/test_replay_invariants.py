"""The invariant checker catches deliberately broken cutters, each by the right id."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from risutools.replay.checker import InvariantChecker
from risutools.replay.cutter import AnchorStatus, ContextCutter, CutResult
from risutools.replay.fixture import Fixture, Message, build_fixture, load_fixture
from risutools.replay.mirror import Step
from risutools.replay.run import iterate_cutter
from risutools.replay.synth import synthesize
from risutools.settings.replay import ReplayConfig, build_config, load_replay_config

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "replay"


def check(name: str, factory: type[ContextCutter]) -> InvariantChecker:
    fx = load_fixture(FIX / name)
    cfg = load_replay_config(None, fx.config)
    checker = InvariantChecker(cfg)
    for _, _, step in iterate_cutter(fx, cfg, factory):
        assert step is not None
        checker.check(step)
    return checker


def first(checker: InvariantChecker, rid: str) -> int | None:
    return checker.verdicts[rid].first_request


# ---- broken cutters ----------------------------------------------------------


class DropsProtected(ContextCutter):
    def output(self, result: CutResult) -> list[Message]:
        out = super().output(result)
        return [m for m in out if m.id != "m5"]  # the system note in the middle


class DropsTail(ContextCutter):
    def output(self, result: CutResult) -> list[Message]:
        return super().output(result)[:-1]


class Reorders(ContextCutter):
    def output(self, result: CutResult) -> list[Message]:
        out = super().output(result)
        return [*out[:-2], out[-1], out[-2]]


class RewritesContent(ContextCutter):
    def output(self, result: CutResult) -> list[Message]:
        out = super().output(result)
        last = out[-1]
        return [*out[:-1], Message(last.id, last.role, last.content.upper() + "!")]


class IgnoresAnchor(ContextCutter):  # always restarts from zero
    def continuity(self, n_removable: int) -> tuple[int, AnchorStatus]:
        _, status = super().continuity(n_removable)
        return 0, status


class RestartsAfterLoss(ContextCutter):
    def continuity(self, n_removable: int) -> tuple[int, AnchorStatus]:
        k, status = super().continuity(n_removable)
        return (0 if status == "lost" else k), status


class DeepCutAfterLoss(ContextCutter):
    def continuity(self, n_removable: int) -> tuple[int, AnchorStatus]:
        k, status = super().continuity(n_removable)
        return (n_removable if status == "lost" else k), status


class DropsFromMiddle(ContextCutter):
    def output(self, result: CutResult) -> list[Message]:
        if not result.enabled or not result.dropped:
            return super().output(result)
        hist = self.history()
        np_ids = [m.id for m in hist if m.role not in self.config.protected_roles]
        drop = set(np_ids[1 : result.dropped + 1])  # keeps R[0], drops one more later
        return [m for m in hist if m.id not in drop]


class OverCuts(ContextCutter):
    def budget(self, k3: int, n_removable: int) -> tuple[int, int]:
        k, _ = super().budget(k3, n_removable)
        k = min(k + 1, n_removable)
        return k, self._total - self._prefix_est(k)


class IgnoresBudget(ContextCutter):
    def budget(self, k3: int, n_removable: int) -> tuple[int, int]:
        return k3, self._total - self._prefix_est(k3)


class GivesUpEarly(ContextCutter):  # claims budget_unreachable without dropping anything
    def budget(self, k3: int, n_removable: int) -> tuple[int, int]:
        return k3, self._total - self._prefix_est(k3)

    def request(self, enabled: bool = True) -> CutResult:
        res = super().request(enabled)
        return dataclasses.replace(res, budget_unreachable=res.tokens_out > self.config.max_context)


class ForgetsEdits(ContextCutter):  # its mirror of the history misses edits
    def edit(self, msg_id: str, content: str) -> None:
        return None


class ForgetsDeletes(ContextCutter):  # ... or deletes
    def delete(self, msg_id: str) -> None:
        return None


class EstimatesLow(ContextCutter):  # half the spec's estimate: thinks it fits
    def estimate(self, content: str) -> int:
        return super().estimate(content) // 2


class CutsWhileOff(ContextCutter):
    def output(self, result: CutResult) -> list[Message]:
        out = super().output(result)
        return out if result.enabled else out[1:]


@pytest.mark.parametrize(
    ("broken", "fixture", "rid", "at"),
    [
        (DropsProtected, "protected-tools.yaml", "R1", 1),
        (DropsTail, "anchor-edit.yaml", "R2", 1),
        (Reorders, "anchor-edit.yaml", "R4", 1),
        (RewritesContent, "anchor-edit.yaml", "R4", 1),
        # anchor-delete request 2: m1 m2 were dropped; starting from 0 (90 <= 100) sends them
        (IgnoresAnchor, "anchor-delete.yaml", "R5", 2),
        (DropsFromMiddle, "anchor-edit.yaml", "R6", 2),
        # anchor-edit request 1 is within budget (90), yet one message is dropped
        (OverCuts, "anchor-edit.yaml", "R7", 1),
        (IgnoresBudget, "anchor-edit.yaml", "R3", 2),
        (GivesUpEarly, "anchor-edit.yaml", "R3", 2),
        # anchor-delete request 2: anchor m3 deleted; restarting from zero drops 0, not 2
        (RestartsAfterLoss, "anchor-delete.yaml", "R8", 2),
        # anchor-edit request 3: lost; dropping all 3 removable when 2 were enough
        (DeepCutAfterLoss, "anchor-edit.yaml", "R8", 3),
        (CutsWhileOff, "toggle.yaml", "R4", 2),
        # the checker's input is rebuilt from the fixture, not read from the cutter:
        # request 3 of anchor-edit sends m3's old text (R4); request 2 of anchor-delete
        # sends the deleted m3 (R4)
        (ForgetsEdits, "anchor-edit.yaml", "R4", 3),
        (ForgetsDeletes, "anchor-delete.yaml", "R4", 2),
        # the checker estimates on its own: 110 > 100 at request 2 while the cutter sees 55
        (EstimatesLow, "anchor-edit.yaml", "R3", 2),
    ],
)
def test_broken_cutter_is_caught(
    broken: type[ContextCutter], fixture: str, rid: str, at: int
) -> None:
    assert check(fixture, ContextCutter).failed() == []
    checker = check(fixture, broken)
    assert rid in checker.failed(), checker.verdicts
    assert first(checker, rid) == at


@pytest.mark.parametrize(("rid", "at"), [("R9", 2)])
def test_a_result_sent_without_its_call_is_a_warning(rid: str, at: int) -> None:
    # protected-tools request 2: the reference cutter drops m2 (a call) and, as the spec
    # asks, keeps its result m3 (protected): chat APIs reject that request
    checker = check("protected-tools.yaml", ContextCutter)
    assert checker.failed() == [] and checker.warned() == [rid]
    assert first(checker, rid) == at
    assert checker.verdicts[rid].first_detail == ("tool result(s) sent without their call: "
                                                  "m3 (called by m2)")
    # a cutter that drops the result too sends no orphan (and breaks R1 instead)
    dropping = check("protected-tools.yaml", DropsProtected)
    assert "R1" in dropping.failed()


def test_each_broken_variant_fails_only_what_it_breaks() -> None:
    # exact sets for a few variants (worked out by hand)
    assert check("protected-tools.yaml", DropsProtected).failed() == ["R1", "R6"]
    assert check("anchor-delete.yaml", RestartsAfterLoss).failed() == ["R5", "R8"]
    # the extra drop at request 3 (anchor lost) is also more than omitted_count needs
    assert check("anchor-edit.yaml", OverCuts).failed() == ["R7", "R8"]
    assert check("anchor-edit.yaml", OverCuts).verdicts["R7"].failures == 4
    assert check("anchor-edit.yaml", DeepCutAfterLoss).failed() == ["R7", "R8"]
    assert check("anchor-edit.yaml", IgnoresBudget).failed() == ["R3"]


def _cfg(**kw: object) -> ReplayConfig:
    return build_config({"tokenizer_profile": 1, "message_overhead": 0, **kw})


def test_checker_flags_false_unreachable_claim() -> None:
    c = InvariantChecker(_cfg(max_context=100))
    msgs = [Message("a", "user", "x" * 10)]
    c.check(Step(1, True, msgs, msgs, budget_unreachable=True))
    assert c.failed() == ["R3"]


def test_checker_r4_unknown_or_duplicated_ids() -> None:
    c = InvariantChecker(_cfg(max_context=100, preserve_latest=0))
    msgs = [Message("a", "user", "x"), Message("b", "user", "y")]
    c.check(Step(1, True, msgs, [msgs[0], msgs[0]]))
    assert "R4" in c.failed()
    c2 = InvariantChecker(_cfg(max_context=100, preserve_latest=0))
    c2.check(Step(1, True, msgs, [Message("z", "user", "x")]))
    assert "R4" in c2.failed()


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_reference_cutter_keeps_every_invariant_on_synthetic_fixtures(seed: int) -> None:
    data = synthesize(seed, 400, turns=150, edit_rate=0.3, delete_rate=0.2, tool_rate=0.3)
    fx = build_fixture(data)
    for mc, pl, tp in ((2500, 4, 10), (600, 2, 0), (300, 8, 50)):
        cfg = build_config({"max_context": mc, "preserve_latest": pl, "trim_percent": tp})
        checker = InvariantChecker(cfg)
        for _, _, step in iterate_cutter(fx, cfg):
            assert step is not None
            checker.check(step)
        assert checker.failed() == [], {k: v.first_detail for k, v in checker.verdicts.items()}
        # R9, from the checker's own mirror, sees exactly the requests the cutter says it
        # sent a tool result without its call
        orphaned = [r for r, (_, res, _) in enumerate(iterate_cutter(fx, cfg), 1)
                    if res.orphaned_tool_results]
        assert checker.verdicts["R9"].failures == len(orphaned)
        if orphaned:
            assert checker.warned() == ["R9"]
            assert checker.verdicts["R9"].first_request == orphaned[0]


def test_a_broken_signature_is_caught_because_the_checker_has_its_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Signature = role + length only (the hash ignored), patched into the cutter alone.

    anchor-twin, request 2 (by hand): the anchor m2 (assistant, 20) is deleted; the broken
    signature still matches its twin m4 at position 2 in R and drops m1 m3 (70), where the
    spec falls back to omitted_count 1 (80).  1 more than omitted_count, and 80 was within
    max_context: R8 (and R7, an unneeded extra drop).
    """
    import risutools.replay.cutter as cutter_mod

    def weak(role: str, content: str) -> cutter_mod.Signature:
        return cutter_mod.Signature(role, len(content), "0" * 16)

    assert check("anchor-twin.yaml", ContextCutter).failed() == []
    monkeypatch.setattr(cutter_mod, "signature", weak)
    checker = check("anchor-twin.yaml", ContextCutter)
    assert checker.failed() == ["R7", "R8"]
    assert first(checker, "R8") == 2


@pytest.mark.parametrize("name", ["checker.py", "mirror.py", "invariants.py", "verdicts.py"])
def test_checker_imports_nothing_from_the_cutter(name: str) -> None:
    import ast

    src = Path(__file__).resolve().parents[1] / "risutools" / "replay" / name
    tree = ast.parse(src.read_text(encoding="utf-8"))
    imported = {
        n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module
    } | {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert not any(m.startswith("risutools.replay.cutter") for m in imported), imported
    assert not any(m.startswith("risutools.replay.run") for m in imported), imported


def _many_losses() -> tuple[Fixture, ReplayConfig]:
    # edits and deletes among the 16 newest messages, a budget of ~30 messages: the
    # anchor (the oldest survivor) is hit again and again.  About two messages per turn
    # and 20 % headroom, so many requests need no budget cut and the fallback decides.
    data = synthesize(
        11, 1500, turns=700, edit_rate=0.6, delete_rate=0.4, tool_rate=0.15, edit_window=16
    )
    cfg = build_config({"max_context": 1000, "preserve_latest": 4, "trim_percent": 20})
    return build_fixture(data), cfg


def test_many_anchor_losses_r8_is_exercised() -> None:
    fx, cfg = _many_losses()
    checker = InvariantChecker(cfg)
    losses = 0
    prev_omitted = 0
    for _, res, step in iterate_cutter(fx, cfg):
        assert step is not None
        checker.check(step)
        if res.anchor == "lost":
            losses += 1
            # the fallback restarts from the accumulated count (capped by |R|)
            assert res.fallback and res.continuity_dropped == min(prev_omitted, res.removable)
        prev_omitted = res.state.omitted_count
    assert losses >= 20, losses
    # the checker found the same losses on its own (R8 counts only those requests)
    assert checker.verdicts["R8"].checked == losses
    assert checker.failed() == [], {k: v.first_detail for k, v in checker.verdicts.items()}
    # the broken restarts are caught on this fixture too, many times over
    for broken in (RestartsAfterLoss, DeepCutAfterLoss):
        bad = InvariantChecker(cfg)
        for _, _, step in iterate_cutter(fx, cfg, broken):
            assert step is not None
            bad.check(step)
        assert bad.verdicts["R8"].failures >= 10, (broken, bad.verdicts["R8"])
