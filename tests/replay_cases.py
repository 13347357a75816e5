"""The runner of the replay invariants' cases (``risutools/checks/cases/R*.yaml``, ``M*.yaml``;
format in ``risutools/checks/examples.py``), for ``tests/test_checks_cases.py``.

A case is a conversation (conversation-v1 ``messages`` and ``turns``) and a replay
configuration, replayed through the harness of ``replay run`` (the reference cutter, the
monitor observing it, both checkers); a turn may say what was observed instead of what the
reference does: ``sent`` (the output: ids of the history, or messages as sent),
``budget_unreachable`` (the flag the cutter raised), ``monitor`` (fields of the monitor's
row).  So a firing case can feed the checker an output that breaks the invariant, such as a
cut that drops a protected message.
"""

from __future__ import annotations

import dataclasses
import json
from functools import partial
from typing import Any

from risutools.checks.outcomes import summary_of
from risutools.replay.checker import InvariantChecker
from risutools.replay.cutter import ContextCutter, CutResult
from risutools.replay.fixture import Message, Turn, build_fixture
from risutools.replay.mirror import Change
from risutools.replay.monitor import ContextMonitor, MonitorEvent
from risutools.replay.run import apply_turn, replay_cutter
from risutools.replay.verdicts import Verdict
from risutools.settings.replay import ReplayConfig, build_config


def requested(cutter: ContextCutter, checker: InvariantChecker, turn: Turn,
              req: int) -> None:
    """``turn`` applied to ``cutter``, its request made (the module on) and the checker
    handed what ``replay run`` hands it (the turn's change, the cutter's output delta)."""
    apply_turn(cutter, turn)
    result = cutter.request(True)
    sent, withdrawn = cutter.output_delta(result)
    checker.check(Change(req, True, turn.append, turn.edit, turn.delete, sent, withdrawn,
                         result.budget_unreachable))


def toggled(data: dict[str, Any], period: int, off: int, on: int) -> dict[str, Any]:
    """A synthesized conversation (``replay synth``'s data) with the module switched off
    now and then: at turn ``i`` off when ``i % period == off``, on again when it is
    ``on``; ``data`` itself, changed."""
    for i, turn in enumerate(data["turns"]):
        if i % period == off:
            turn["toggle"] = False
        elif i % period == on:
            turn["toggle"] = True
    return data


def json_row_forms(rows: list[Any]) -> tuple[bytes, bytes] | None:
    """json's canonical form of report rows (without the brackets) and their indented form
    two levels deep, as in a report (without the brackets): the reference the spool's
    writers are held to; None when json refuses them."""
    try:
        canon = json.dumps(rows, ensure_ascii=False, sort_keys=True, separators=(",", ":"),
                           allow_nan=False).encode()
        block = json.dumps([rows], ensure_ascii=False, indent=1, sort_keys=True).encode()
    except (TypeError, ValueError):
        return None
    return canon[1:-1], block[5:-5]  # "[\n [\n" ... "\n ]\n]"


#: what a replay case's turn says was observed (the rest of the turn is conversation-v1)
OBSERVED = ("sent", "budget_unreachable", "monitor")


class _ObservedCutter(ContextCutter):
    """The reference cutter, but with each request's output (``sent``: ids of the history,
    or messages as sent) and ``budget_unreachable`` as the case's turn says."""

    def __init__(self, config: ReplayConfig, turns: list[dict[str, Any]]) -> None:
        super().__init__(config)
        self.turns, self.n = turns, 0

    def request(self, enabled: bool = True) -> CutResult:
        res = super().request(enabled)
        self.n += 1
        said = self.turns[self.n - 1]
        if "budget_unreachable" in said:
            res = dataclasses.replace(res, budget_unreachable=said["budget_unreachable"])
        return res

    def output(self, result: CutResult) -> list[Message]:
        sent = self.turns[self.n - 1].get("sent")
        if sent is None:
            return super().output(result)
        live = {m.id: m for m in self.history()}
        return [Message(**m) if isinstance(m, dict) else live[m] for m in sent]


class _ObservedMonitor(ContextMonitor):
    """The reference monitor, with the fields of its row the case's turn gives."""

    def __init__(self, config: ReplayConfig, turns: list[dict[str, Any]]) -> None:
        super().__init__(config)
        self.turns = turns

    def observe(self, request: int, tokens: int, metrics: Any) -> MonitorEvent:
        event = super().observe(request, tokens, metrics)
        return event._replace(**self.turns[request - 1].get("monitor", {}))


def replay_verdicts(case: dict[str, Any]) -> dict[str, Verdict]:
    """Replay a case of scope ``replay`` (the harness of ``replay run``): every invariant's
    verdict, R1-R8 then M1-M3, by id."""
    turns = case["turns"]
    fx = build_fixture({"fixture": "conversation-v1", "name": "case",
                        "messages": case.get("messages") or [],
                        "turns": [{k: v for k, v in t.items() if k not in OBSERVED}
                                  for t in turns]})
    run = replay_cutter(fx, build_config(case.get("config") or {}),
                        partial(_ObservedCutter, turns=turns),
                        partial(_ObservedMonitor, turns=turns))
    assert run.checker is not None and run.monitor_checker is not None
    return {**run.checker.verdicts, **run.monitor_checker.verdicts}


def fail_report(rep: dict[str, Any]) -> None:
    """``rep`` made a report that failed as the writer would say it: its first invariant
    failed on request 1, its summary worked out from its invariants (the reader refuses a
    summary that does not follow from them)."""
    rep["invariants"][0].update(verdict="failed", failures=1, requests_checked=max(
        1, rep["invariants"][0]["requests_checked"]),
        first_failure={"request": 1, "detail": "failed (a test's report)"})
    rep["summary"].update(summary_of(rep["invariants"]))


class IntSub(int):
    """An int subclass: json spells it as an int, the row forms leave it to the reference
    writers (its type is not exactly int)."""


class StrSub(str):
    """A str subclass (likewise)."""


class FloatSub(float):
    """A float subclass (likewise)."""

