"""A batch of the cutter's rows tallied and watched by column (``replay/row_columns.py``)
adds what the same rows add one at a time (``RowTally.add``, ``RowViews.add``: the
reference), and a batch whose columns are not of the types that is exact for goes row by row.

Compared: the summary's counts and alerts, the chart's sweep (peaks, events counted and
grouped, module-off runs, line groups), both tables' picks and counts, the page's head rows
and the first failures, on rows of every kind of event in batches of every size, and on
whole replays (edits, deletes, withdrawals, anchor losses, protected roles, tool results,
toggles, a budget out of reach) against the report files of the row-by-row path."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
import yaml
from replay_cases import toggled

from risutools.replay import row_columns
from risutools.replay.api import _replayed
from risutools.replay.component import load_component
from risutools.replay.row_columns import RowColumns
from risutools.replay.row_columns import row_columns as columns_of
from risutools.replay.row_views import RowViews
from risutools.replay.run import SIM_CUTTER, ReplayRun, RowTally, _like, report_bytes
from risutools.replay.spool import Spool
from risutools.replay.synth import synthesize

DOC = Path(__file__).resolve().parents[1] / "fixtures" / "documents" / (
    "seed-000-context-cutter.json")


def _row(rng: random.Random, request: int) -> dict[str, Any]:
    """A cutter's row with events of every kind now and then, and values that tie."""
    alert = rng.random() < 0.2
    tokens = rng.choice([5, 7, 7, 9, rng.randrange(0, 50)])
    return {
        "request": request, "enabled": rng.random() > 0.1,
        "messages_in": 3, "messages_out": 2, "tokens_in": tokens + rng.choice([0, 3, 3]),
        "tokens_out": tokens, "removable": 2,
        "dropped": rng.choice([0, 1, 1, 4]), "continuity_dropped": 0,
        "budget_dropped": rng.choice([0, 0, 0, 2]), "anchor": rng.choice(
            ["found", "found", "none", "lost"]), "fallback": False,
        "budget_unreachable": rng.random() < 0.05,
        "orphaned_tool_results": rng.choice([0, 0, 0, 1, 2]),
        "ops": {"appended": 1, "edited": 0, "deleted": 0,
                "toggle": rng.choice([None] * 12 + [True, False])},
        "state": {"omitted_count": 0, "anchor": None, "estimated_tokens": tokens},
        "monitor": {"metrics": "fresh", "used_pct": 1.5, "remaining_pct": 98.5,
                    "level": rng.choice(["WARNING", "CRITICAL"]) if alert else "NORMAL",
                    "alert": alert, "alert_reason": "first" if alert else None},
    }


def _state(run: ReplayRun, views: RowViews) -> tuple[Any, ...]:
    assert run.tally is not None
    return (run.tally.counts(), list(run.tally.alerts), views.count, views.sweep,
            views.markdown.picked(), views.html.picked(), views.head, views.firsts,
            list(run.rows))


def _two_runs(n: int) -> tuple[tuple[ReplayRun, RowViews], tuple[ReplayRun, RowViews]]:
    out = []
    for by_column in (False, True):
        views = RowViews(n, True)
        run = ReplayRun(SIM_CUTTER, [], watch=views.add,
                        watch_many=views.add_columns if by_column else None)
        run.tally = RowTally(True, _like(run.rows))
        out.append((run, views))
    return out[0], out[1]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_batch_adds_what_its_rows_add_one_by_one(seed: int,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    n = 3000  # markers grouped by 5, line points by 5; both tables fill past their caps
    rows = [_row(rng, i + 1) for i in range(n)]
    if seed == 3:  # now and then a row of an earlier request: the tables' rows out of order
        for i in range(700, n, 300):
            rows[i]["request"] -= 500
    firsts = [rng.random() < 0.01 for _ in rows]
    (one, one_views), (many, many_views) = _two_runs(n)
    taken = []
    real = row_columns.pick_columns

    def pick(*args: Any) -> None:
        taken.append(args[0].total)
        real(*args)

    monkeypatch.setattr("risutools.replay.row_views.pick_columns", pick)
    at = 0
    while at < n:
        size = rng.choice([1, 2, 7, 64, 64, 200])
        for row, first in zip(rows[at:at + size], firsts[at:at + size], strict=True):
            one.add(row, first)
        many.add_rows(rows[at:at + size], firsts[at:at + size])
        assert _state(one, one_views) == _state(many, many_views), at
        at += size
    assert many_views.sweep.counts["orphan"] > 100 and many_views.sweep.off
    assert len(taken) > 50 and taken[-1] > taken[len(taken) // 2]  # counted at once, late


def _odd(rng: random.Random, request: int) -> dict[str, Any]:
    row = _row(rng, request)
    key, value = rng.choice([("tokens_in", True), ("budget_dropped", -2), ("dropped", 2.5),
                             ("anchor", None), ("request", float(request)),
                             ("tokens_out", 2**70)])
    row[key] = value
    if rng.random() < 0.3:
        row["monitor"] = {**row["monitor"], "level": 3}
    return row


def test_a_batch_of_other_types_goes_row_by_row() -> None:
    """A bool among the counts, a negative budget cut (``> 0`` is not truthiness), a float,
    an anchor that is not text, a level that is a number, a key missing: no columns, and the
    batch is added as its rows would be."""
    rng = random.Random(5)
    for make in (_odd, lambda r, i: {k: v for k, v in _row(r, i).items() if k != "anchor"}):
        rows = [_row(rng, i + 1) for i in range(40)]
        rows[rng.randrange(40)] = make(rng, 17)
        assert columns_of(rows) is None
    rows = [_row(rng, i + 1) for i in range(40)]
    assert isinstance(columns_of(rows), RowColumns)
    rows = [_odd(rng, i + 1) for i in range(300)]
    (one, one_views), (many, many_views) = _two_runs(300)
    for row in rows[:150]:
        one.add(row, False)
    many.add_rows(rows[:150], [False] * 150)
    assert _state(one, one_views) == _state(many, many_views)


def _turns(seed: int) -> dict[str, Any]:
    """A conversation whose budget cuts, loses anchors, toggles the module and sends tool
    results without their call; one stretch with a budget no cut reaches."""
    data = synthesize(seed, 1600, turns=700, edit_rate=0.5, delete_rate=0.3, tool_rate=0.3,
                      edit_window=12)
    toggled(data, 97, 40, 55)  # the module off now and then
    data["config"] = {"max_context": 600, "preserve_latest": 3, "trim_percent": 20}
    return data


@pytest.mark.parametrize("seed", [11, 12])
def test_a_replay_writes_the_same_files_by_column(seed: int, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The report, its Markdown and its page, with the batches by column and row by row."""
    fixture = tmp_path / "fx.yaml"
    fixture.write_text(yaml.safe_dump(_turns(seed), allow_unicode=True), encoding="utf-8")
    cf = load_component(DOC)
    got = []
    for by_column in (True, False):
        if not by_column:
            monkeypatch.setattr(ReplayRun, "add_rows", _one_by_one)
        _fx, report, views = _replayed(SIM_CUTTER, cf, fixture, None, None, keep_rows=True)
        rows = report["requests"]
        assert isinstance(rows, Spool)
        got.append((report_bytes(report), views.markdown_picked(report),
                    views.html_parts(report), views.firsts))
    assert got[0] == got[1]
    summary = report["summary"]
    assert summary["cuts"] and summary["anchor_losses"] and summary["disabled_requests"]
    assert summary["requests_with_orphaned_tool_results"] and summary["alerts"]


def _one_by_one(self: ReplayRun, rows: list[dict[str, Any]], firsts: list[bool],
                values: Any = None) -> None:
    """Each row added alone (its spool reads it from the row, not from ``values``)."""
    for row, first in zip(rows, firsts, strict=True):
        self.add(row, first)


@pytest.mark.parametrize("watched", [False, True])
def test_the_events_found_once_a_batch_count_what_each_row_counts(watched: bool) -> None:
    """The rows of each event are found once a batch (``RowColumns.marks``) for the chart's
    sweep and the tally, whichever reads them first (the tally alone, or after the views):
    the counts of truthy values of any type (an unreachable budget of ``"x"``, ``[0]``, an
    orphan count of 3) and of the module off where ``enabled`` is ``0`` are those the rows
    add one by one; the ``"cut"`` events are truthy budget cuts, the tally's cuts ``> 0``."""
    rng = random.Random(7)
    n = 600
    rows = [_row(rng, i + 1) for i in range(n)]
    for i, row in enumerate(rows):
        row["budget_unreachable"] = [False, True, "x", "", [0], [], 1, 0][i % 8]
        row["orphaned_tool_results"] = [0, 3, 0, 1][i % 4]
        row["enabled"] = [True, 0, 1, False, True][i % 5]
    one = RowTally(True, [])
    for row in rows:
        one.add(row)
    many = RowTally(True, [])
    views = RowViews(n, True)
    for at in range(0, n, 128):
        batch = rows[at:at + 128]
        cols = columns_of(batch)
        assert cols is not None
        if watched:
            views.add_columns(batch, [False] * len(batch), cols)
        many.add_columns(cols, batch)
        kinds = cols.kinds()
        assert kinds["unreachable"] == [i for i, r in enumerate(batch)
                                        if r["budget_unreachable"]]
        assert kinds["off"] == [i for i, r in enumerate(batch) if not r["enabled"]]
        assert list(kinds) == ["cut", "unreachable", "anchor-lost", "off", "orphan",
                               "alert-critical", "alert-warning"]
        assert cols.marks["alert"] == [i for i, r in enumerate(batch) if r["monitor"]["alert"]]
    assert many.counts() == one.counts() and many.alerts == one.alerts
    assert one.counts()["budget_unreachable"] == n // 2
    assert one.counts()["disabled_requests"] == 2 * n // 5
