"""A spooled context cutter's replay reads its rows' values from the cutter's results and the
monitor's events (``row_values._direct_values``), checks the events by their fields
(``MonitorChecker.check_event``) and makes a row's dicts only where one is read
(``row_values.CutterRows``): its report, its hash and its renderings are those of the plain replay,
whose rows are all made (a list, ``spool=False``), byte for byte.

The plain path is the reference; the lazy one must also be taken (most rows never made)."""

from __future__ import annotations

import copy
import itertools
import random
from pathlib import Path
from typing import Any

import pytest
from replay_cases import json_row_forms, toggled

from risutools.replay import row_values
from risutools.replay import run as run_mod
from risutools.replay.cutter import ContextCutter
from risutools.replay.fixture import Fixture, build_fixture, load_fixture
from risutools.replay.monitor import ContextMonitor
from risutools.replay.render_html import render_html
from risutools.replay.render_markdown import render_markdown
from risutools.replay.row_values import (
    CUTTER_HOLES,
    CutterRows,
    _cutter_row,
    _cutter_values,
    _direct_values,
)
from risutools.replay.row_views import RowViews
from risutools.replay.run import (
    CUTTER_ROW,
    build_report,
    iterate_cutter,
    replay_cutter,
    report_bytes,
)
from risutools.replay.synth import synthesize
from risutools.settings.replay import ReplayConfig, build_config, load_replay_config

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "replay"


def _synthetic(seed: int, n: int = 1400) -> Fixture:
    data = synthesize(seed, n, edit_rate=0.3, delete_rate=0.2, edit_window=8, tool_rate=0.2,
                      config={"max_context": 900, "preserve_latest": 3})
    toggled(data, 41, 30, 33)  # the module off now and then
    return build_fixture(data)


def _fixtures() -> list[tuple[str, Fixture, ReplayConfig]]:
    out = []
    for name in sorted(p.name for p in FIX.glob("*.yaml")):
        try:
            fx = load_fixture(FIX / name)
            cfg = load_replay_config(None, fx.config)
            replay_cutter(fx, cfg)
        except Exception:  # a fixture meant to be refused
            continue
        out.append((name, fx, cfg))
    fx = _synthetic(3, 4000)
    out.append(("synthetic", fx, load_replay_config(None, fx.config)))
    fx = _synthetic(4, 900)
    out.append(("tight", fx, build_config({"max_context": 400, "preserve_latest": 2,
                                           "warning_pct": 60, "critical_pct": 40,
                                           "debounce": 2})))
    return out


def _files(report: dict[str, Any], views: RowViews | None) -> tuple[bytes, str, str]:
    if views is None:
        return report_bytes(report), render_markdown(report), render_html(report)
    sweep, table = views.html_parts(report)
    return (report_bytes(report), render_markdown(report, views.markdown_picked(report)),
            render_html(report, sweep, table))


@pytest.mark.parametrize("readable", [False, True])
def test_a_spooled_replay_is_the_plain_replay(readable: bool,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    made = [0]
    plain_row, event_row = run_mod._cutter_row, row_values._event_row

    def counted(*args: Any) -> dict[str, Any]:
        made[0] += 1
        return plain_row(*args)

    def counted_event(*args: Any) -> dict[str, Any]:
        made[0] += 1
        return event_row(*args)

    for name, fx, cfg in _fixtures():
        plain = replay_cutter(fx, cfg)
        want = _files(build_report(plain, fx, cfg, None), None)
        views = RowViews(len(fx.turns), True)
        made[0] = 0
        with monkeypatch.context() as m:
            m.setattr(run_mod, "_cutter_row", counted)
            m.setattr(row_values, "_event_row", counted_event)
            run = replay_cutter(fx, cfg, spool=True, watch=views.add, readable=readable,
                                watch_many=views.add_columns)
            report = build_report(run, fx, cfg, None)
        assert _files(report, views) == want, name
        if readable:
            assert list(report["requests"]) == plain.rows
        if name == "synthetic" and not readable:  # (most rows never made)
            assert made[0] < len(fx.turns) // 2 and len(fx.turns) > 1500


def _steps(fx: Fixture, cfg: ReplayConfig) -> list[Any]:
    monitor = ContextMonitor(cfg)
    steps = list(iterate_cutter(fx, cfg))
    events = [monitor.observe(turn.number, res.tokens_out, turn.metrics)
              for turn, res, _ in steps]
    return list(zip(steps, events, strict=True))


def test_a_batchs_rows_made_when_read_are_its_rows() -> None:
    fx = _synthetic(5, 300)
    pairs = _steps(fx, load_replay_config(None, fx.config))
    batch, events = [s for s, _ in pairs], [e for _, e in pairs]
    rows = CutterRows(batch, events)
    want = [_cutter_row(t, r, e.to_dict()) for (t, r, _), e in pairs]
    assert len(rows) == len(want)
    assert rows[7] == want[7] and rows[7] is rows[7] and rows[-1] == want[-1]
    assert rows[3:40:5] == want[3:40:5] and rows[::-1] == want[::-1]
    assert list(rows) == want and rows[7] is list(rows)[7]
    with pytest.raises(IndexError):
        rows[len(want)]


@pytest.mark.parametrize("seed", [1, 2])
def test_values_read_from_the_objects_are_the_rows_values(seed: int) -> None:
    """Batches of requests (anchors found and null, alerts, toggles, cuts): the values and
    templates read from the results and events are those read from the rows."""
    rng = random.Random(seed)
    anchors = set()
    for fx in (_synthetic(seed, 700), load_fixture(FIX / "monitor.yaml")):
        pairs = _steps(fx, load_replay_config(None, fx.config))
        for _ in range(40):
            at = rng.randrange(len(pairs))
            part = pairs[at:at + rng.randint(1, 64)]
            batch, events = [s for s, _ in part], [e for _, e in part]
            rows = [_cutter_row(t, r, e.to_dict()) for (t, r, _), e in part]
            got = _direct_values(batch, events)
            assert got is not None and got == _cutter_values(batch, rows)
            anchors.update(k for (k,) in got[1])
    assert anchors == {True, False}


class _OddCutter(ContextCutter):
    """A cutter whose states are of another class (their dicts not this module's to read)."""

    def request(self, enabled: bool) -> Any:
        res = super().request(enabled)
        odd = type("OddState", (type(res.state),), {})
        st = res.state
        return _replace(res, state=odd(st.omitted_count, st.anchor, st.estimated_tokens))


def _replace(res: Any, **kw: Any) -> Any:
    out = copy.copy(res)
    for k, v in kw.items():
        object.__setattr__(out, k, v)
    return out


def test_a_state_of_another_class_is_read_from_its_rows() -> None:
    fx = _synthetic(6, 200)
    cfg = load_replay_config(None, fx.config)
    monitor = ContextMonitor(cfg)
    steps = list(itertools.islice(iterate_cutter(fx, cfg, _OddCutter), 64))
    events = [monitor.observe(t.number, r.tokens_out, t.metrics) for t, r, _ in steps]
    assert _direct_values(steps, events) is None
    plain = replay_cutter(fx, cfg)
    odd = replay_cutter(fx, cfg, _OddCutter, spool=True)
    assert report_bytes(build_report(odd, fx, cfg, None)) == report_bytes(
        build_report(plain, fx, cfg, None))


#: values a column of a batch may hold throughout (written into its template once)
ONE_VALUE: list[Any] = [
    0, -7, 2**63 - 1, 2**64, True, False, None, 0.0, -0.0, 1.5, 1e-05, float("nan"), "",
    "값", "%s", "%", "a, b", ",", 'q"u', "\x00", "\ud800", [], {}, b"x",
]


def test_a_batch_of_one_template_with_columns_of_one_value() -> None:
    """Rows all of one template whose columns hold one value throughout (of every kind, a
    comma, a ``%`` or an unpaired surrogate in it): json's bytes when written from the
    values, and written whenever ``forms`` writes the rows (a string with a comma too: one
    spelling, nothing split)."""
    rows: list[Any] = []
    for fx in (_synthetic(7, 300), load_fixture(FIX / "monitor.yaml")):
        rows += replay_cutter(fx, load_replay_config(None, fx.config)).rows
    rng = random.Random(7)
    for found in (True, False):
        of_kind = [r for r in rows if (r["state"]["anchor"] is not None) == found]
        assert of_kind
        paths = [p for p in CUTTER_HOLES if found or p[:2] != ("state", "anchor")]
        for value in ONE_VALUE:
            for path in rng.sample(paths, 6):
                batch = copy.deepcopy(of_kind[:rng.randint(1, 40)])
                for row in batch:
                    obj = row
                    for key in path[:-1]:
                        obj = obj[key]
                    obj[path[-1]] = value
                values = [tuple(_get(r, p) for p in paths) for r in batch]
                got = CUTTER_ROW.forms_of(values, [(found,)] * len(batch))
                rows_forms = CUTTER_ROW.forms(batch)
                assert got == rows_forms or rows_forms is None, (value, path)
                assert got is None or got == json_row_forms(batch), (value, path)
                if value in ("a, b", ",") and type(value) is str:  # (one piece: no split)
                    assert got is not None



def _get(row: dict[str, Any], path: tuple[str, ...]) -> Any:
    for key in path:
        row = row[key]
    return row
