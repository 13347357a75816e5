"""A context cutter's rows written from their scalars (``row_values._cutter_values``,
``RowShape.forms_of``) and a batch's values checked a column at a time (``row_form._alike``)
are what the rows themselves give (``RowShape.forms``, and ``json`` itself).

The rows' own path is the reference: the spool's files of a replay whose rows are given
with their scalars must be byte for byte those of the same replay whose rows are read
back one by one, and the report's hash the same; a batch's values must be declined by
the column checks exactly when the value-by-value checks decline them."""

from __future__ import annotations

import copy
import random
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from replay_cases import toggled

from risutools.canonical import floats_alike
from risutools.replay import row_form
from risutools.replay import spool as spool_mod
from risutools.replay.cutter import ContextCutter, CutResult, CutterState
from risutools.replay.fixture import build_fixture, load_fixture
from risutools.replay.monitor import ContextMonitor, MonitorEvent
from risutools.replay.row_columns import RowColumns
from risutools.replay.row_columns import row_columns as columns_of
from risutools.replay.row_form import _SCALARS, RowShape, _alike
from risutools.replay.row_values import CUTTER_HOLES, values_columns
from risutools.replay.run import (
    CUTTER_ROW,
    ReplayRun,
    build_report,
    replay_cutter,
    report_bytes,
)
from risutools.replay.synth import synthesize
from risutools.settings.replay import ReplayConfig, load_replay_config

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "replay"


def _paths(shape: RowShape) -> list[tuple[str, ...]]:
    """The key paths of the shape's scalars, in the order of its templates' holes."""
    def path(i: int) -> tuple[str, ...]:
        node = shape.nodes[i]
        return () if node.parent < 0 else (*path(node.parent), node.key)
    return [(*path(i), key) for i, keys in shape.segments for key in keys]


def test_the_holes_are_the_shapes_scalars_in_their_order() -> None:
    assert list(CUTTER_HOLES) == _paths(CUTTER_ROW)


def _fixture(seed: int) -> Any:
    data = synthesize(seed, 1400, edit_rate=0.4, delete_rate=0.3, edit_window=8,
                      tool_rate=0.2, config={"max_context": 900, "preserve_latest": 3})
    toggled(data, 41, 30, 33)  # the module off now and then
    return build_fixture(data)


def _files(fx: Any, cfg: ReplayConfig, **kw: Any) -> tuple[bytes, str]:
    run = replay_cutter(fx, cfg, spool=True, **kw)
    report = build_report(run, fx, cfg, None)
    return report_bytes(report), report["report_sha256"]


def _counted(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """How many batches of the cutter's rows ``forms_of`` or ``forms_of_columns`` wrote, and
    how many ``forms`` was asked for (the alerts' batches not counted)."""
    seen = {"of": 0, "rows": 0}
    of, by_column, rows = RowShape.forms_of, RowShape.forms_of_columns, RowShape.forms

    def forms_of(self: RowShape, *args: Any) -> Any:
        out = of(self, *args)
        seen["of"] += out is not None and self is CUTTER_ROW
        return out

    def forms_of_columns(self: RowShape, *args: Any) -> Any:
        out = by_column(self, *args)
        seen["of"] += out is not None and self is CUTTER_ROW
        return out

    def forms(self: RowShape, *args: Any) -> Any:
        seen["rows"] += self is CUTTER_ROW
        return rows(self, *args)

    monkeypatch.setattr(RowShape, "forms_of", forms_of)
    monkeypatch.setattr(RowShape, "forms_of_columns", forms_of_columns)
    monkeypatch.setattr(RowShape, "forms", forms)
    return seen


def _row_by_row(self: ReplayRun, rows: list[dict[str, Any]], firsts: list[bool],
                values: Any = None) -> None:
    for row, first in zip(rows, firsts, strict=True):
        self.add(row, first)


@pytest.mark.parametrize("name", ["synthetic", *sorted(p.name for p in FIX.glob("*.yaml"))])
def test_a_replay_written_from_its_values_is_written_from_its_rows(
        name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Cuts, anchors lost and null, alerts, the module off, tool results orphaned: the same
    report file and hash whether the spool writes the rows from their values (the fast
    path taken for every batch) or reads them from the rows one by one."""
    try:
        fx = _fixture(3) if name == "synthetic" else load_fixture(FIX / name)
        cfg = load_replay_config(None, fx.config)
        replay_cutter(fx, cfg)
    except Exception:  # a fixture meant to be refused
        return
    seen = _counted(monkeypatch)
    fast = _files(fx, cfg)
    assert seen["of"] and not seen["rows"]
    with monkeypatch.context() as m:
        m.setattr(ReplayRun, "add_rows", _row_by_row)
        slow = _files(fx, cfg)
    assert seen["rows"]
    assert fast == slow


class _WideMonitor(ContextMonitor):
    """A monitor whose rows hold one more key (the shape's fast path must not write them)."""

    def observe(self, request: int, tokens: int, metrics: Any) -> Any:
        ev = super().observe(request, tokens, metrics)
        return _Wide(*ev)


class _Wide(MonitorEvent):
    def to_dict(self) -> dict[str, object]:
        return {**super().to_dict(), "extra": 1}


class _OddState(CutterState):
    def to_dict(self) -> dict[str, object]:
        out = super().to_dict()
        if self.anchor is not None:
            out["anchor"] = {**self.anchor.to_dict(), "more": True}
        return out


class _OddCutter(ContextCutter):
    """A cutter whose states' anchors hold one more key."""

    def request(self, enabled: bool) -> CutResult:
        res = super().request(enabled)
        st = res.state
        return replace(res, state=_OddState(st.omitted_count, st.anchor, st.estimated_tokens))


def test_rows_not_of_the_shape_are_written_as_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    """A monitor's row or a state's anchor with a key more: no batch written from values,
    the report's bytes those of the rows read one by one."""
    fx = _fixture(5)
    cfg = load_replay_config(None, fx.config)
    for kw in ({"monitor_factory": _WideMonitor}, {"cutter_factory": _OddCutter}):
        seen = _counted(monkeypatch)
        fast = _files(fx, cfg, **kw)
        assert not seen["of"]
        with monkeypatch.context() as m:
            m.setattr(ReplayRun, "add_rows", _row_by_row)
            assert _files(fx, cfg, **kw) == fast
        assert b'"extra": 1' in fast[0] or b'"more": true' in fast[0]


#: floats of every spelling: alike (zero, 1e-4 to below 1e16) and not
FLOATS = [0.0, -0.0, 1e-4, -1e-4, 0.5, 98.7654, 9999999999999998.0, -1.5, 1e-05, -9e-05,
          1e16, -1e16, 1e300, 5e-324, float("nan"), float("inf"), -float("inf")]
OTHERS: list[Any] = [0, 1, True, None, "x", 2**64, [1], {"a": 1}, b"x", 1j]


@pytest.mark.parametrize("seed", range(6))
def test_values_checked_by_column_as_value_by_value(seed: int) -> None:
    """Batches of rows of one template (each row's values of one width), their columns
    all of one type, of mixed types, of floats alike and not: ``_alike`` says what
    the value-by-value test says."""
    rng = random.Random(seed)
    for _ in range(200):
        width, n = rng.randint(1, 6), rng.randint(1, 40)
        columns: list[list[Any]] = []
        for _ in range(width):
            pick = rng.random()
            if pick < 0.4:  # floats alike, now and then one that is not
                col = [rng.choice(FLOATS[:8]) for _ in range(n)]
                if rng.random() < 0.3:
                    col[rng.randrange(n)] = rng.choice(FLOATS)
            elif pick < 0.7:  # one type, now and then another value among them
                col = [rng.randint(-5, 5) for _ in range(n)]
                if rng.random() < 0.4:
                    col[rng.randrange(n)] = rng.choice(OTHERS + FLOATS)
            else:
                col = [rng.choice(OTHERS + FLOATS) for _ in range(n)]
            columns.append(col)
        flat = [v for row in zip(*columns, strict=True) for v in row]
        types = list(map(type, flat))
        want = _SCALARS.issuperset(types) and floats_alike(flat, types)
        assert _alike(flat, n, True) == want
        assert _alike(flat, n, False) == want


def test_forms_of_a_batch_are_the_forms_of_its_rows() -> None:
    """Rows of the cutter's shape with scalars changed (floats of every spelling in the
    monitor's figures, other types anywhere), given by their values: what ``forms`` writes
    of the rows themselves, or declined as it declines."""
    rng = random.Random(7)
    rows = []
    for fx in (_fixture(9), load_fixture(FIX / "monitor.yaml")):
        rows += replay_cutter(fx, load_replay_config(None, fx.config)).rows
    assert any(r["state"]["anchor"] is None for r in rows)
    for _ in range(80):
        batch = copy.deepcopy(rng.sample(rows, rng.randint(1, 30)))
        for row in batch:
            if rng.random() < 0.05:
                row["monitor"]["used_pct"] = rng.choice(FLOATS)
            if rng.random() < 0.01:
                path = rng.choice(CUTTER_HOLES[:22])
                obj = row
                for key in path[:-1]:
                    obj = obj[key]
                obj[path[-1]] = rng.choice(OTHERS)
        values = _values(batch)
        kinds = [(r["state"]["anchor"] is not None,) for r in batch]
        assert CUTTER_ROW.forms_of(values, kinds) == CUTTER_ROW.forms(batch)


def test_values_not_as_many_as_the_holes_are_declined() -> None:
    fx = _fixture(2)
    rows = [r for r in replay_cutter(fx, load_replay_config(None, fx.config)).rows
            if r["state"]["anchor"] is not None][:3]
    values = _values(rows)
    kinds = [(r["state"]["anchor"] is not None,) for r in rows]
    assert CUTTER_ROW.forms_of(values, kinds) == CUTTER_ROW.forms(rows) is not None
    assert CUTTER_ROW.forms_of([*values[:2], values[2][:-1]], kinds) is None
    assert CUTTER_ROW.forms_of(values, [(not k[0],) for k in kinds]) is None
    assert row_form.orjson is not None


def _get(row: dict[str, Any], path: tuple[str, ...]) -> Any:
    for key in path:
        row = row[key]
    return row


def _values(rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [tuple(_get(r, p) for p in CUTTER_HOLES
                  if p[:2] != ("state", "anchor") or r["state"]["anchor"] is not None)
            for r in rows]


def _columns(cols: RowColumns | None) -> Any:
    if cols is None:
        return None
    return (cols.request, cols.tokens_in, cols.tokens_out, cols.dropped, cols.budget_dropped,
            cols.anchor, cols.unreachable, cols.enabled, cols.orphaned, cols.alert, cols.level,
            cols.n, cols.lost, cols.worth, cols.kinds())


def test_a_batchs_columns_from_its_values_are_those_of_its_rows() -> None:
    """Batches of real rows (anchors null and not), and of rows with a value of another
    type in a column the columns compare: the same columns and events, or None alike."""
    rng = random.Random(3)
    rows = []
    for fx in (_fixture(4), load_fixture(FIX / "monitor.yaml")):
        rows += replay_cutter(fx, load_replay_config(None, fx.config)).rows
    odd: list[tuple[tuple[str, ...], Any]] = [
        (("tokens_in",), 1.5), (("request",), True), (("dropped",), None),
        (("budget_dropped",), 2**70), (("anchor",), None), (("monitor", "level"), 3),
        (("tokens_out",), "9"), (("tokens_out",), 7), (("monitor", "level"), None)]
    for i in range(120):
        batch = copy.deepcopy(rng.sample(rows, rng.randint(1, 64)))
        if i % 3 == 0:
            path, value = rng.choice(odd)
            obj = rng.choice(batch)
            for key in path[:-1]:
                obj = obj[key]
            obj[path[-1]] = value
        assert _columns(values_columns(_values(batch))) == _columns(columns_of(batch))


@pytest.mark.parametrize("batch", [1, 5, 64])
def test_a_spool_fed_with_values_and_without_is_a_spool_without_a_shape(
        batch: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Rows given with their values, rows appended alone and rows given without values, in
    turns that cut the spool's batches anywhere (a batch of both kinds read from its rows):
    the files of a spool without a shape, byte for byte."""
    monkeypatch.setattr(spool_mod, "BATCH", batch)
    fx = _fixture(8)
    rows = list(replay_cutter(fx, load_replay_config(None, fx.config)).rows)
    rng = random.Random(batch)
    shaped, plain = spool_mod.Spool(shape=CUTTER_ROW), spool_mod.Spool()
    at = 0
    while at < len(rows):
        part = rows[at:at + rng.randint(1, 9)]
        at += len(part)
        how = rng.random()
        if how < 0.6:
            values = _values(part)
            shaped.extend(part, (values, [(len(v) == len(CUTTER_HOLES),) for v in values]))
        elif how < 0.8:
            for row in part:
                shaped.append(row)
        else:
            shaped.extend(part)
        plain.extend(part)
    assert b"".join(shaped.canonical_body()) == b"".join(plain.canonical_body())
    assert b"".join(shaped.indented_body()) == b"".join(plain.indented_body())
    assert list(shaped) == list(plain) == rows
