"""A quiet row (``replay/run.py``'s :func:`quiet`: no event of any kind) is told so to the
tally, the chart's sweep and the tables' pickers, which then skip their event checks: what
they gather must be what asking the row gives.

The reference is each consumer fed the same rows with ``still=False`` (every check asked);
rows are those of real replays (cutter and monitor alone, over-cutting cutters) and rows
whose event fields are varied one at a time and at random, with awkward values (0.0,
False, negative, None where a falsy value is asked)."""

from __future__ import annotations

import copy
import random
from pathlib import Path
from typing import Any

import pytest

from risutools.replay.cutter import ContextCutter
from risutools.replay.fixture import build_fixture, load_fixture
from risutools.replay.render_html import MAX_TABLE_ROWS, ChartSweep, _kinds
from risutools.replay.render_markdown import interesting
from risutools.replay.row_views import RowViews
from risutools.replay.run import RowTally, quiet, replay_cutter, replay_monitor
from risutools.replay.synth import synthesize
from risutools.settings.replay import build_config, load_replay_config

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "replay"


class OverCuts(ContextCutter):  # one more than needed: R7 fails, cuts everywhere
    def budget(self, k3: int, n_removable: int) -> tuple[int, int]:
        k, _ = super().budget(k3, n_removable)
        k = min(k + 1, n_removable)
        return k, self._total - self._prefix_est(k)


def _real_rows() -> list[tuple[list[dict[str, Any]], bool]]:
    runs = []
    for name in sorted(p.name for p in FIX.glob("*.yaml")):
        fx = load_fixture(FIX / name)
        cfg = load_replay_config(None, fx.config)
        runs.append((list(replay_cutter(fx, cfg).rows), True))
        runs.append((list(replay_cutter(fx, cfg, OverCuts).rows), True))
        runs.append((list(replay_monitor(fx, cfg).rows), False))
    fx = build_fixture(synthesize(5, 1200, edit_rate=0.05, delete_rate=0.05, tool_rate=0.2))
    cfg = build_config({"max_context": 6000, "preserve_latest": 6, "trim_percent": 10})
    runs.append((list(replay_cutter(fx, cfg).rows), True))
    runs.append((list(replay_monitor(fx, cfg).rows), False))
    return runs


#: each event field and values for it, plain and awkward (falsy but not 0, truthy, ...)
_VARIED: dict[tuple[str, ...], list[Any]] = {
    ("budget_dropped",): [0, 0.0, False, 1, 3, -1, None],
    ("budget_unreachable",): [False, True, 0, 1, None],
    ("anchor",): ["found", "none", "lost", "moved", None],
    ("enabled",): [True, False, 0, 1, None],
    ("orphaned_tool_results",): [0, 2, False, None],
    ("monitor", "alert"): [False, True, 0, 1, None],
    ("ops", "toggle"): [None, True, False, 0],
}


def _varied_rows(base: dict[str, Any], rng: random.Random) -> list[dict[str, Any]]:
    """``base`` with each event field set to each of its values, then 200 rows with every
    field drawn at random (numbered from 1: the sweep reads the requests in order)."""
    rows = []
    for path, values in _VARIED.items():
        for v in values:
            rows.append(_with(base, {path: v}))
    for _ in range(200):
        rows.append(_with(base, {p: rng.choice(vs) for p, vs in _VARIED.items()}))
    for i, r in enumerate(rows, 1):
        r["request"] = i
        r["tokens_in"] = rng.randrange(0, 9000)
        r["tokens_out"] = rng.randrange(0, 9000)
        r["dropped"] = rng.randrange(0, 50)
    return rows


def _with(base: dict[str, Any], changes: dict[tuple[str, ...], Any]) -> dict[str, Any]:
    row = copy.deepcopy(base)
    for path, v in changes.items():
        at = row
        for key in path[:-1]:
            at = at[key]
        at[path[-1]] = v
    return row


def _fed(rows: list[dict[str, Any]], cutter: bool, told: bool) -> tuple[Any, ...]:
    """What the tally, the sweep and the views gather of ``rows`` (``told``: each told
    whether its row is quiet, else asking every row, the views as they were); a row a
    consumer cannot read (None compared with ``>``) raises, which the caller compares
    too."""
    tally = RowTally(cutter, [])
    sweep = ChartSweep(len(rows), cutter)
    views = RowViews(len(rows), cutter)
    firsts = {r["request"] for r in rows[3::17]}
    for r in rows:
        still = told and quiet(r, cutter)
        tally.add(r, still)
        sweep.add(r, still)
        if told:
            views.add(r, r["request"] in firsts, still)
        else:
            _views_add(views, r, r["request"] in firsts)
    return (tally.counts(), tally.alerts, sweep, views.sweep, views.firsts,
            views.markdown.picked(), views.html.picked(), views.head)


def _views_add(views: RowViews, row: dict[str, Any], first: bool) -> None:
    """:meth:`RowViews.add` as it was: every row asked, each table fed every row."""
    if first:
        views.firsts.add(row["request"])
    views.count += 1
    views.sweep.add(row)
    worth = not first and interesting(row)
    views.markdown.add(row, first, worth)
    views.html.add(row, first, worth)
    if views.count <= MAX_TABLE_ROWS and views.n <= MAX_TABLE_ROWS:  # (kept for a short run)
        views.head.append(row)


def _outcome(rows: list[dict[str, Any]], cutter: bool, told: bool) -> Any:
    try:
        return _fed(rows, cutter, told)
    except TypeError as exc:
        return ("TypeError", str(exc))


def test_real_rows_gather_the_same() -> None:
    seen_quiet = seen_loud = 0
    for rows, cutter in _real_rows():
        assert _fed(rows, cutter, True) == _fed(rows, cutter, False)
        for r in rows:
            if quiet(r, cutter):
                seen_quiet += 1
                assert not interesting(r) and _kinds(r, cutter) == []
            else:
                seen_loud += 1
    assert seen_quiet > 100 and seen_loud > 100


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("cutter", [True, False])
def test_varied_rows_gather_the_same(seed: int, cutter: bool) -> None:
    rng = random.Random(seed)
    fx = load_fixture(FIX / "toggle.yaml")
    cfg = load_replay_config(None, fx.config)
    base = (replay_cutter(fx, cfg) if cutter else replay_monitor(fx, cfg)).rows[0]
    assert isinstance(base, dict)
    rows = _varied_rows(base, rng)
    # each row alone (a row that raises one way raises the same the other way), then all
    for r in rows:
        assert _outcome([r], cutter, True) == _outcome([r], cutter, False)
        if quiet(r, cutter):
            assert not interesting(r) and _kinds(r, cutter) == []
    plain = [r for r in rows if _outcome([r], cutter, False)[0] != "TypeError"]
    assert _fed(plain, cutter, True) == _fed(plain, cutter, False)


def test_quiet_is_each_field_at_rest() -> None:
    """A cutter's row is quiet exactly when every event field is at rest: any one of them
    moved is not quiet."""
    fx = build_fixture(synthesize(2, 60))
    cfg = build_config({"max_context": 900, "preserve_latest": 4, "trim_percent": 10})
    base = next(r for r in replay_cutter(fx, cfg).rows if quiet(r, True))
    at_rest = {("budget_dropped",): 0, ("budget_unreachable",): False, ("anchor",): "found",
               ("enabled",): True, ("orphaned_tool_results",): 0, ("monitor", "alert"): False,
               ("ops", "toggle"): None}
    for path, values in _VARIED.items():
        for v in values:
            row = _with(base, {path: v})
            rest = v == at_rest[path] and (v is not None or path == ("ops", "toggle"))
            if path == ("anchor",):
                rest = v != "lost"
            elif path == ("enabled",):
                rest = bool(v)
            elif path in (("budget_unreachable",), ("orphaned_tool_results",),
                          ("monitor", "alert")):
                rest = not v
            assert quiet(row, True) == rest, (path, v)
            # the monitor's rows: quiet when not worth a look (what its tables ask)
            assert quiet(row, False) == (not interesting(row)), (path, v)
