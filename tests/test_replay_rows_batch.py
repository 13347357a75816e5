"""A spooled replay's batch of rows taken whole (``replay/run.py``, ``row_values.py``,
``monitor.py``, ``monitor_checker.py``, ``row_form.py``, ``spool.py``, ``row_columns.py``)
is what the same requests give one at a time.

Each fast path is compared with the plain one it stands for: a row made in one call
(``_event_row``) with ``_cutter_row`` of the event's ``to_dict``; a batch's values by column
(``by_column``, ``given_columns``, ``RowShape.forms_of_columns``, a spool fed
``Columns``) with the same values by row and with the rows themselves (and ``json``); the
line groups folded a column at a time with the loop of ``ChartSweep.add``; the monitor's
requests observed and checked in one loop (``observe_many``, ``check_events``) with
``observe`` and ``check_event`` a request; the alerts of a batch with ``RowTally.add``'s.
Odd values are among them: None, booleans, integers past 64 bits, non-ASCII and escaped
strings, commas and ``%`` in strings, alerts, requests with the module off, fallbacks,
anchors lost and null."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from replay_cases import json_row_forms, toggled

from risutools.replay import spool as spool_mod
from risutools.replay.cutter import CutResult, Signature
from risutools.replay.fixture import Turn, build_fixture, load_fixture
from risutools.replay.fixture_metrics import Metrics
from risutools.replay.monitor import ContextMonitor, MonitorEvent, observe_many
from risutools.replay.monitor_checker import MonitorChecker
from risutools.replay.row_columns import _fold_line
from risutools.replay.row_form import RowShape
from risutools.replay.row_values import (
    CUTTER_HOLES,
    CutterRows,
    _cutter_row,
    _direct_values,
    _event_row,
    by_column,
    given_columns,
    values_columns,
)
from risutools.replay.run import ALERT_ROW, CUTTER_ROW, AlertRows, RowTally, iterate_cutter
from risutools.replay.spool import Columns, Spool
from risutools.replay.synth import synthesize
from risutools.settings.replay import ReplayConfig, build_config, load_replay_config

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "replay"
#: strings the spellings must keep: non-ASCII, escapes, a comma (the split), ``%`` (the fill)
ODD_STRINGS = ["값", "é\u2028", "q\"u\\o", "\x00\x1f", "a, b", ",", "%s", "%%", "", "null"]
#: scalars of other spellings or none: orjson's refusals and json's, a float with exponent
REFUSED: list[Any] = [2**64, -(2**63) - 1, 1e-05, float("nan"), "\ud800", [1], {"a": 1}]


def _fixture(seed: int, n: int = 300) -> Any:
    data = synthesize(seed, n, edit_rate=0.3, delete_rate=0.2, edit_window=6,
                      config={"max_context": 1100, "preserve_latest": 4})
    toggled(data, 29, 11, 15)  # the module off now and then
    return build_fixture(data)


def _steps(fx: Any) -> tuple[ReplayConfig, list[tuple[Turn, CutResult, Any]],
                             list[MonitorEvent]]:
    cfg = load_replay_config(None, fx.config)
    steps = list(iterate_cutter(fx, cfg, observe=False))
    monitor = ContextMonitor(cfg)
    events = [monitor.observe(t.number, r.tokens_out, t.metrics) for t, r, _ in steps]
    return cfg, steps, events


def _replays() -> list[Any]:
    out = [_fixture(3), _fixture(11)]
    for p in sorted(FIX.glob("*.yaml")):
        try:
            fx = load_fixture(p)
            _steps(fx)
        except Exception:  # a fixture meant to be refused
            continue
        out.append(fx)
    return out


def _odd(res: CutResult, rng: random.Random) -> CutResult:
    """The result with a field or two of odd values (as another cutter might give)."""
    field = rng.choice(["anchor", "budget_dropped", "dropped", "enabled", "fallback",
                        "tokens_in", "orphaned_tool_results", "budget_unreachable"])
    value = rng.choice([None, True, False, 2**70, -1, 0, *ODD_STRINGS, 1.5])
    return replace(res, **{field: value})


def test_a_row_made_in_one_call_is_the_row_of_its_dicts() -> None:
    """Every request of real and synthetic replays (anchors found, lost and null, cuts,
    the module off, fallbacks, alerts), and results with odd values: the same row, its keys
    in the same order."""
    rng = random.Random(5)
    seen = set()
    for fx in _replays():
        _cfg, steps, events = _steps(fx)
        for (turn, res, _), ev in zip(steps, events, strict=True):
            for r in (res, _odd(res, rng)):
                row = _event_row(turn, r, ev)
                want = _cutter_row(turn, r, ev.to_dict())
                assert row == want
                assert list(row) == list(want)
                assert [list(v) for v in row.values() if isinstance(v, dict)] == [
                    list(v) for v in want.values() if isinstance(v, dict)]
                seen.add((r.anchor, r.fallback, r.enabled, ev.alert,
                          r.state.anchor is None))
    assert {a for a, *_ in seen} >= {"found", "lost"}
    assert any(s[1] for s in seen) and any(not s[2] for s in seen)
    assert any(s[3] for s in seen) and any(s[4] for s in seen)


def test_a_batch_by_column_is_the_batch_by_row() -> None:
    """``by_column`` of a batch's values: its rows' values transposed when they are of one
    template (else the values as they are), whose :class:`RowColumns` are those of the same
    values by row."""
    for fx in _replays():
        _cfg, steps, events = _steps(fx)
        for at in range(0, len(steps), 37):
            batch, evs = steps[at:at + 37], events[at:at + 37]
            values = _direct_values(batch, evs)
            assert values is not None
            given = by_column(values)
            if len(set(values[1])) > 1:
                assert given is values
                continue
            assert isinstance(given, Columns)
            assert given.n == len(batch) and given.kind == values[1][0]
            assert list(zip(*given.columns, strict=True)) == values[0]
            a, b = given_columns(given), values_columns(values[0])
            assert (a is None) == (b is None)
            if a is not None and b is not None:
                assert vars(a) == vars(b)


def _batch_columns(rng: random.Random, n: int, kind: bool) -> list[list[Any]]:
    """``n`` rows' values of the cutter's shape by column, of every kind of scalar."""
    width = len(CUTTER_HOLES) - (0 if kind else 3)
    columns: list[list[Any]] = []
    for _ in range(width):
        pick = rng.random()
        if pick < 0.3:  # one value throughout (written into the template)
            columns.append([rng.choice([0, True, None, "found", *ODD_STRINGS])] * n)
        elif pick < 0.5:
            columns.append([rng.choice([0.0, -0.0, 12.5, 98.7654, 1e-4]) for _ in range(n)])
        elif pick < 0.7:
            columns.append([rng.choice([None, False, True, 0, 1, 2**63 - 1]) for _ in range(n)])
        else:
            columns.append([rng.choice([*ODD_STRINGS, None, 7]) for _ in range(n)])
    if rng.random() < 0.3:
        columns[rng.randrange(width)][rng.randrange(n)] = rng.choice(REFUSED)
    return columns


def _rows_of(columns: list[list[Any]], kind: bool) -> list[dict[str, Any]]:
    """The rows whose values (:data:`CUTTER_HOLES`, anchor's three only with ``kind``) are
    ``columns``."""
    paths = [p for p in CUTTER_HOLES if kind or p[:2] != ("state", "anchor")]
    rows = []
    for values in zip(*columns, strict=True):
        row: dict[str, Any] = {"ops": {}, "monitor": {},
                               "state": {"anchor": {} if kind else None}}
        for path, v in zip(paths, values, strict=True):
            obj = row
            for key in path[:-1]:
                obj = obj[key]
            obj[path[-1]] = v
        rows.append(row)
    return rows


@pytest.mark.parametrize("seed", range(4))
def test_forms_of_columns_are_the_forms_of_the_rows(seed: int) -> None:
    """Batches of every kind of scalar (constant columns, floats of both zeros, big and
    refused integers, odd strings): ``forms_of_columns`` writes what ``forms_of`` and
    ``forms`` write of the same rows, json's bytes, or declines as they decline."""
    rng = random.Random(seed)
    written = 0
    for _ in range(60):
        n, kind = rng.randint(1, 40), rng.random() < 0.7
        columns = _batch_columns(rng, n, kind)
        rows = _rows_of(columns, kind)
        got = CUTTER_ROW.forms_of_columns(columns, (kind,))
        assert got == CUTTER_ROW.forms_of(list(zip(*columns, strict=True)), [(kind,)] * n)
        assert got == CUTTER_ROW.forms(rows)
        if got is not None:
            written += 1
            assert got == json_row_forms(rows)
    assert written > 20
    assert CUTTER_ROW.forms_of_columns([], (True,)) is None
    assert CUTTER_ROW.forms_of_columns([[1]] * 5, (True,)) is None  # (not the holes' count)


def test_alerts_by_column_are_written_as_json_writes_them() -> None:
    """The alerts' shape: strings with commas (every alert's text holds one), ``%``,
    non-ASCII; a float with an exponent declined (json's spelling is not orjson's)."""
    rows = [{"request": i, "level": lv, "used_pct": u, "reason": why,
             "additional_context": text}
            for i, (lv, u, why, text) in enumerate([
                ("CRITICAL", 99.5, "first", "Context 99.5% used, 0.5% left: stop."),
                ("WARNING", 70.0, None, "값, é %s"), ("CRITICAL", 0.0, "escalation", ",")])]
    keys = ["additional_context", "level", "reason", "request", "used_pct"]
    columns = [[r[k] for r in rows] for k in keys]
    got = ALERT_ROW.forms_of_columns(columns, ())
    assert got is not None and got == json_row_forms(rows) == ALERT_ROW.forms(rows)
    columns[4][1] = 1e-05
    assert ALERT_ROW.forms_of_columns(columns, ()) is None


@pytest.mark.parametrize("batch", [1, 7, 512])
def test_a_spool_fed_columns_is_a_spool_without_a_shape(
        batch: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Rows given by column (cut anywhere by the spool's batches), by row, and alone, in
    turns: the files of a spool without a shape, byte for byte, and the rows read back."""
    monkeypatch.setattr(spool_mod, "BATCH", batch)
    rng = random.Random(batch)
    fx = _fixture(8)
    _cfg, steps, events = _steps(fx)
    rows = [_cutter_row(t, r, ev.to_dict()) for (t, r, _), ev in zip(steps, events,
                                                                     strict=True)]
    shaped, plain = Spool(shape=CUTTER_ROW), Spool()
    at = 0
    while at < len(rows):
        k = rng.randint(1, 40)
        part, values = rows[at:at + k], _direct_values(steps[at:at + k], events[at:at + k])
        at += len(part)
        assert values is not None
        how = rng.random()
        if how < 0.7:
            shaped.extend(part, by_column(values))
        elif how < 0.85:
            shaped.extend(part, values)
        else:
            for r in part:
                shaped.append(r)
        plain.extend(part)
    assert b"".join(shaped.canonical_body()) == b"".join(plain.canonical_body())
    assert b"".join(shaped.indented_body()) == b"".join(plain.indented_body())
    assert b"".join(plain.canonical_body()) == json_row_forms(rows)[0]  # type: ignore[index]
    assert list(shaped) == rows


def _fold_plain(line: list[list[Any]], values: Any, i0: int, size: int) -> None:
    """``ChartSweep.add``'s line groups, a value at a time (the reference)."""
    for k, v in enumerate(values):
        i = i0 + k
        if i % size == 0:
            line.append([i, v, i, v])
            continue
        g = line[-1]
        if v < g[1]:
            g[0], g[1] = i, v
        if v > g[3]:
            g[2], g[3] = i, v


def test_line_groups_folded_by_column_are_folded_value_by_value() -> None:
    rng = random.Random(2)
    for _ in range(2000):
        size, total = rng.randint(1, 9), rng.randint(1, 70)
        values = [rng.randint(0, 5) for _ in range(total)]
        a: list[list[Any]] = []
        b: list[list[Any]] = []
        at = 0
        while at < total:
            part = tuple(values[at:at + rng.randint(1, 15)])
            _fold_plain(a, part, at, size)
            _fold_line(b, part, at, size)
            at += len(part)
        assert a == b


def _metrics(rng: random.Random) -> Metrics | None:
    pick = rng.random()
    if pick < 0.6:
        return None
    if pick < 0.7:
        return Metrics(available=False)
    if pick < 0.8:
        return Metrics(available=True, age_s=rng.choice([1.0, 500.0]))
    return Metrics(available=True, used_pct=rng.choice([10.0, 70.5, 80.0, 99.99]))


class _Louder(ContextMonitor):
    """A monitor whose levels are its own (``observe_many`` must call its methods)."""

    def level(self, remaining: float) -> Any:
        return "CRITICAL" if remaining < 50 else super().level(remaining)


@pytest.mark.parametrize("seed", range(5))
def test_observed_and_checked_in_one_loop_as_a_request_at_a_time(seed: int) -> None:
    """Requests with and without metrics (missing, stale, a percentage), usages seen again,
    levels up and down, alerts debounced and escalated: ``observe_many`` gives the events
    ``observe`` gives (a monitor of another class too), ``check_events`` the verdicts and
    first failures ``check_event`` gives, events wrong now and then included."""
    rng = random.Random(seed)
    cfg = build_config({"max_context": 1000, "debounce": rng.choice([1, 3, 5]),
                        "warning_pct": 35, "critical_pct": 25, "stale_s": 60})
    for cls in (ContextMonitor, _Louder):
        seen = [(i + 1, rng.choice([100, 700, 700, 800, 900, 990, rng.randrange(1200)]),
                 _metrics(rng)) for i in range(400)]
        a, b = cls(cfg), cls(cfg)
        got: list[MonitorEvent] = []
        for at in range(0, len(seen), 64):
            got += observe_many(a, seen[at:at + 64])
        want = [b.observe(*s) for s in seen]
        assert got == want and all(type(e) is MonitorEvent for e in got)
        assert any(e.alert for e in want)
        assert cfg.debounce == 1 or any(e.reason == "" and e.level == "CRITICAL"
                                        for e in want)  # (an alert debounced)
        wrong = [e._replace(alert=not e.alert) if rng.random() < 0.05 else e for e in want]
        one, many = MonitorChecker(cfg), MonitorChecker(cfg)
        for s, e in zip(seen, wrong, strict=True):
            one.check_event(*s, e)
        for at in range(0, len(seen), 64):
            many.check_events(seen[at:at + 64], wrong[at:at + 64])
        assert one.to_dicts() == many.to_dicts()
        assert [one.first_failure_at(n) for n, *_ in seen] == [
            many.first_failure_at(n) for n, *_ in seen]


def test_a_batchs_alerts_are_its_rows_alerts() -> None:
    """The alerts of a batch of events (``CutterRows``), by column into a spool and into a
    list: those ``RowTally.add`` finds in the rows one by one."""
    fx = _fixture(4, 500)
    _cfg, steps, events = _steps(fx)
    events = [e._replace(used_pct=12.5) if i % 7 == 0 and e.alert else e
              for i, e in enumerate(events)]
    rows = CutterRows(steps, events)
    plain = RowTally(True, [])
    for r in [_cutter_row(t, res, ev.to_dict()) for (t, res, _), ev in zip(steps, events,
                                                                          strict=True)]:
        plain.add(r)
    values = _direct_values(steps, events)
    assert values is not None
    cols = values_columns(values[0])
    assert cols is not None
    listed, spooled = RowTally(True, []), RowTally(True, Spool(shape=ALERT_ROW))
    listed.add_columns(cols, rows)
    spooled.add_columns(cols, rows)
    assert plain.alerts and listed.alerts == plain.alerts == list(spooled.alerts)
    assert listed.counts() == plain.counts() == spooled.counts()
    reference = Spool()
    reference.extend(plain.alerts)
    assert isinstance(spooled.alerts, Spool)
    assert b"".join(spooled.alerts.indented_body()) == b"".join(reference.indented_body())
    assert b"".join(spooled.alerts.canonical_body()) == b"".join(
        reference.canonical_body())
    unread = RowTally(True, Spool(False, ALERT_ROW))  # (its alerts' dicts never made)
    unread.add_columns(cols, rows)
    assert isinstance(unread.alerts, Spool) and len(unread.alerts) == len(plain.alerts)
    assert b"".join(unread.alerts.indented_body()) == b"".join(reference.indented_body())
    assert b"".join(unread.alerts.canonical_body()) == b"".join(reference.canonical_body())


def test_alert_rows_made_one_by_one_are_those_made_at_once() -> None:
    lazy = AlertRows([3, 9], ["WARNING", "CRITICAL"], [70.0, 99.5], [None, "first"],
                     ["a, b", "값"])
    assert len(lazy) == 2 and list(lazy) == lazy[:] == [lazy[0], lazy[1]]
    assert lazy[-1] == {"request": 9, "level": "CRITICAL", "used_pct": 99.5,
                        "reason": "first", "additional_context": "값"}
    assert list(lazy[1]) == ["request", "level", "used_pct", "reason", "additional_context"]
    assert lazy[1:] == [lazy[1]]


def test_signature_and_state_classes_of_others_are_made_by_their_dicts() -> None:
    """A state's anchor of another class: ``_event_row`` asks its ``to_dict``."""

    class Sig(Signature):
        def to_dict(self) -> dict[str, object]:
            return {**super().to_dict(), "more": 1}

    fx = _fixture(6, 40)
    _cfg, steps, events = _steps(fx)
    for (turn, res, _), ev in zip(steps, events, strict=True):
        a = res.state.anchor
        if a is None:
            continue
        odd = replace(res, state=replace(res.state, anchor=Sig(a.role, a.length, a.hash)))
        assert _event_row(turn, odd, ev)["state"]["anchor"]["more"] == 1
        assert _event_row(turn, odd, ev) == _cutter_row(turn, odd, ev.to_dict())


def test_every_hole_of_the_shape_is_a_column() -> None:
    assert len(CUTTER_HOLES) == CUTTER_ROW.holes[(True,)]
    assert CUTTER_ROW.holes[(False,)] == len(CUTTER_HOLES) - 3
    assert ALERT_ROW.holes[()] == 5 and isinstance(ALERT_ROW, RowShape)
    part = Columns((True,), [[1, 2, 3], ["a", "b", "c"]], 3)
    assert part.cut(0, 3) is part
    cut = part.cut(1, 3)
    assert (cut.n, cut.columns, cut.rows()) == (2, [[2, 3], ["b", "c"]],
                                                ([(2, "b"), (3, "c")], [(True,)] * 2))
