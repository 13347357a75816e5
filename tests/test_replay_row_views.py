"""What the renderings read of the rows, gathered during the replay (``replay/row_views.py``),
is what they would read from the rows afterwards.

The reference is the renderings of the same report without the views (the rows read back
from the report); a view that does not fit the report (other rows, other first failures) is
not used."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from risutools.replay import render_html as html_mod
from risutools.replay import render_markdown as md_mod
from risutools.replay.cutter import ContextCutter
from risutools.replay.fixture import Fixture, build_fixture, load_fixture
from risutools.replay.render_html import render_html
from risutools.replay.render_markdown import render_markdown
from risutools.replay.row_views import RowViews
from risutools.replay.run import ReplayRun, build_report, replay_cutter, replay_monitor
from risutools.replay.synth import synthesize
from risutools.settings.replay import ReplayConfig, build_config, load_replay_config

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "replay"


class OverCuts(ContextCutter):  # one more than needed: R7 fails, at several requests
    def budget(self, k3: int, n_removable: int) -> tuple[int, int]:
        k, _ = super().budget(k3, n_removable)
        k = min(k + 1, n_removable)
        return k, self._total - self._prefix_est(k)


def _run(fx: Fixture, cfg: ReplayConfig, monitor: bool = False,
         factory: type[ContextCutter] = ContextCutter) -> tuple[dict[str, Any], RowViews]:
    views = RowViews(len(fx.turns), not monitor)
    run: ReplayRun
    if monitor:
        run = replay_monitor(fx, cfg, spool=True, watch=views.add)
    else:
        run = replay_cutter(fx, cfg, factory, spool=True, watch=views.add)
    return build_report(run, fx, cfg, None), views


def _renderings(report: dict[str, Any], views: RowViews | None) -> tuple[str, str]:
    if views is None:
        return render_markdown(report), render_html(report)
    sweep, table = views.html_parts(report)
    return render_markdown(report, views.markdown_picked(report)), render_html(report, sweep,
                                                                                table)


@pytest.mark.parametrize("name", ["anchor-edit.yaml", "toggle.yaml", "monitor.yaml",
                                  "budget-unreachable.yaml", "protected-tools.yaml"])
@pytest.mark.parametrize("broken", [False, True])
def test_views_render_what_the_rows_render(name: str, broken: bool) -> None:
    fx = load_fixture(FIX / name)
    cfg = load_replay_config(None, fx.config)
    monitor = name == "monitor.yaml"
    report, views = _run(fx, cfg, monitor, OverCuts if broken else ContextCutter)
    assert views.markdown_picked(report) is not None  # the views are used
    assert _renderings(report, views) == _renderings(report, None)


@pytest.mark.parametrize("cap", [3, 40, 10_000])
def test_a_long_run_past_the_tables_caps(cap: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the HTML table's cap (or not), the chart's lines and markers grouped, first
    failures of several invariants at various requests (a cutter that over-cuts)."""
    monkeypatch.setattr(html_mod, "MAX_TABLE_ROWS", cap)
    monkeypatch.setattr("risutools.replay.row_views.MAX_TABLE_ROWS", cap)
    fx = build_fixture(synthesize(3, 3000, edit_rate=0.05, delete_rate=0.02, tool_rate=0.15))
    cfg = build_config({"max_context": 8000, "preserve_latest": 8, "trim_percent": 10})
    for factory in (ContextCutter, OverCuts):
        report, views = _run(fx, cfg, factory=factory)
        assert len(report["requests"]) > 1000
        assert views.markdown_picked(report) is not None
        assert _renderings(report, views) == _renderings(report, None)
    assert views.firsts  # the over-cutting run failed somewhere


def test_every_row_shown_is_read_from_the_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    """When every row qualifies for the HTML table past its cap, the table shows them all:
    they are not kept by the views, which hand over the chart only."""
    monkeypatch.setattr(html_mod, "MAX_TABLE_ROWS", 2)
    monkeypatch.setattr("risutools.replay.row_views.MAX_TABLE_ROWS", 2)
    fx = load_fixture(FIX / "monitor.yaml")
    cfg = load_replay_config(None, fx.config)
    report, views = _run(fx, cfg, monitor=True)
    interesting = [r for r in report["requests"] if md_mod.interesting(r)]
    if len(interesting) == len(report["requests"]):
        assert views.html_parts(report)[1] is None
    assert _renderings(report, views) == _renderings(report, None)


def test_views_that_do_not_fit_the_report_are_not_used() -> None:
    fx = load_fixture(FIX / "anchor-edit.yaml")
    cfg = load_replay_config(None, fx.config)
    report, views = _run(fx, cfg, factory=OverCuts)
    assert views.markdown_picked(report) is not None
    # other first failures than those the rows were fed with
    other = {**report, "invariants": [{**inv, "first_failure": None}
                                      for inv in report["invariants"]]}
    assert views.markdown_picked(other) is None and views.html_parts(other) == (None, None)
    # fewer rows than announced
    short = RowViews(len(fx.turns) + 1, True)
    for r in report["requests"]:
        short.add(r, r["request"] in views.firsts)
    assert short.markdown_picked(report) is None
    # the monitor's rows are not the cutter's
    mon = RowViews(len(fx.turns), False)
    for r in report["requests"]:
        mon.add(r, r["request"] in views.firsts)
    assert mon.html_parts(report) == (None, None)


@pytest.mark.parametrize("seed", range(6))
def test_picker_keeps_the_earliest_in_any_order(seed: int) -> None:
    """Rows in request order (what a replay makes: the later ones past the cap are only
    counted) or not (ties and rows arriving late): the picks are those of sorting every
    qualifying row, first failures first, and the count is every qualifying row."""
    import random

    from risutools.replay.render_markdown import Picker

    rng = random.Random(seed)
    rows = [{"request": rng.randrange(60) if seed % 2 else i // 2, "k": i} for i in range(300)]
    if seed % 3 == 0:
        rows.sort(key=lambda r: r["request"])
    share = 0.03 if seed < 3 else 0.0  # first failures: a few, or none
    flags = [(rng.random() < share, rng.random() < 0.6) for _ in rows]
    for cap in (1, 5, 20, 400):
        p = Picker(cap)
        for r, (first, worth) in zip(rows, flags, strict=True):
            p.add(r, first, worth)
        firsts = [r for r, (f, _) in zip(rows, flags, strict=True) if f]
        rest = [r for r, (f, w) in zip(rows, flags, strict=True) if not f and w]
        chosen = (sorted(firsts, key=lambda r: r["request"])
                  + sorted(rest, key=lambda r: r["request"]))[:cap]
        assert p.picked() == (sorted(chosen, key=lambda r: r["request"]),
                              len(firsts) + len(rest))
