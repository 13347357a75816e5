"""Run a replay: fixture + configuration (+ component) -> ``replay-report-v1``.

Which reference simulation applies is decided by the component's
``capabilities.provides`` (:mod:`risutools.settings.simulations`, the one table): any of
``context.token_budget``, ``context.anchor_continuity``, ``context.protected_roles``
selects the context cutter (with the monitor observing); otherwise ``context.monitor``
selects the monitor alone; otherwise there is no applicable simulation.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from operator import or_
from typing import Any, overload

from risutools import __version__
from risutools.canonical import indented, prefixed, self_hash
from risutools.checks.outcomes import summary_of
from risutools.errors import Code, ReplayError
from risutools.replay.checker import INVARIANTS, InvariantChecker
from risutools.replay.cutter import ContextCutter, CutResult
from risutools.replay.fixture import Fixture, Message, Turn
from risutools.replay.mirror import Change, Step
from risutools.replay.monitor import (
    ContextMonitor,
    MonitorEvent,
    additional_context,
    observe_many,
)
from risutools.replay.monitor_checker import MonitorChecker
from risutools.replay.render_markdown import interesting
from risutools.replay.row_columns import RowColumns, cuts, row_columns
from risutools.replay.row_form import Nullable, RowShape
from risutools.replay.row_values import (
    CutterRows,
    _cutter_row,
    _cutter_values,
    _direct_values,
    _ops,
    by_column,
    given_columns,
    values_columns,
)
from risutools.replay.spool import (
    Columns,
    Given,
    Keep,
    Spool,
    canonical_pieces,
    indented_pieces,
)
from risutools.settings.catalog import REPLAY_REPORT
from risutools.settings.lifecycle import base_sha256
from risutools.settings.replay import ReplayConfig
from risutools.settings.simulations import CUTTER_CAPS as CUTTER_CAPS
from risutools.settings.simulations import MONITOR_CAP as MONITOR_CAP
from risutools.settings.simulations import SIM_CUTTER as SIM_CUTTER
from risutools.settings.simulations import SIM_MONITOR as SIM_MONITOR
from risutools.settings.simulations import select_simulation as select_simulation

REPORT_TAG = REPLAY_REPORT


@dataclass
class ReplayRun:
    simulation: str
    #: a list, or a :class:`Spool` (a long run: the rows kept out of memory)
    rows: list[dict[str, Any]] | Spool = field(default_factory=list)
    checker: InvariantChecker | None = None
    monitor_checker: MonitorChecker | None = None
    #: the alerts and the summary's counts, added as the rows are made (None: read from
    #: the rows by :func:`build_report`)
    tally: RowTally | None = None
    #: called with each row as it is made, and whether an invariant failed for the first
    #: time at its request (what a renderer gathers: :class:`~.row_views.RowViews`)
    watch: Watch | None = None
    #: called with a batch of rows, whether an invariant failed for the first time at each
    #: one's request, and their columns (:func:`~.row_columns.row_columns`): ``watch`` of
    #: each row, in order (what :meth:`~.row_views.RowViews.add_columns` does); given with
    #: ``watch``, which a batch that is not taken by column goes to, row by row
    watch_many: WatchMany | None = None

    def add_rows(self, rows: Sequence[dict[str, Any]], firsts: list[bool],
                 values: Given | None = None) -> None:
        """:meth:`add` of each row in order (``firsts``: each one's ``first``), a context
        cutter's batch tallied and watched by column when its columns are of the types that
        is exact for (:func:`~.row_columns.row_columns`) and the watcher takes a batch;
        ``values``: the rows' scalars and templates (by row or by column), for a spool to
        write them from (:meth:`~.spool.Spool.extend`)."""
        tally, watch = self.tally, self.watch
        cols = None
        if (self.simulation == SIM_CUTTER and (watch is None or self.watch_many is not None)
                and (tally is not None or watch is not None)):
            cols = (row_columns(rows) if values is None
                    else given_columns(values) if isinstance(values, Columns)
                    else values_columns(values[0]))
        if cols is None:
            for row, first in zip(rows, firsts, strict=True):
                self.add(row, first)
            return
        # (watched, then tallied, then kept: a spool asks the watcher whether to keep rows
        # to be read back, :data:`~.spool.Keep`, of the rows made so far)
        if self.watch_many is not None:
            self.watch_many(rows, firsts, cols)
        if tally is not None:
            tally.add_columns(cols, rows)
        if isinstance(self.rows, Spool):
            self.rows.extend(rows, values)
        else:
            self.rows.extend(rows)

    def add(self, row: dict[str, Any], first: bool = False) -> None:
        """One request's row, tallied as it is kept (whether it is :func:`quiet` asked
        once for the tally and the watcher; watched, tallied, then kept, as
        :meth:`add_rows`)."""
        tally, watch = self.tally, self.watch
        if tally is not None or watch is not None:
            still = quiet(row, self.simulation == SIM_CUTTER)
            if watch is not None:
                watch(row, first, still)
            if tally is not None:
                tally.add(row, still)
        self.rows.append(row)


#: a row as it is made, whether an invariant failed for the first time at its request, and
#: whether the row is :func:`quiet`
Watch = Callable[[dict[str, Any], bool, bool], None]
#: a batch of rows, whether an invariant failed for the first time at each, their columns
WatchMany = Callable[[Sequence[dict[str, Any]], list[bool], RowColumns], None]


def quiet(r: dict[str, Any], cutter: bool) -> bool:
    """A row that is no event of any kind: no cut, no budget_unreachable, no anchor lost,
    the module on, no orphaned tool result (a cutter's row), no alert and no toggle.  Such a
    row adds nothing but its peaks and line points to the tally (:class:`RowTally`) and the
    chart (:class:`~risutools.replay.render_html.ChartSweep`), and is not
    :func:`~risutools.replay.render_markdown.interesting`: each of them is told so, not
    asking the row again.  (``budget_dropped == 0``, not falsy: the tally compares it
    with ``> 0``, which another falsy value would not pass the same way.)"""
    if not cutter:  # (the monitor's rows: an alert or a toggle, as the tables ask)
        return not interesting(r)
    if r["monitor"]["alert"] or r["ops"]["toggle"] is not None:
        return False
    return (r["budget_dropped"] == 0 and not r["budget_unreachable"]
            and r["anchor"] != "lost" and bool(r["enabled"])
            and not r["orphaned_tool_results"])


#: the keys of a row's ``ops`` (:func:`_ops`) and ``monitor`` (``MonitorEvent.to_dict``)
_OPS_KEYS: dict[str, None] = dict.fromkeys(("appended", "edited", "deleted", "toggle"))
_MONITOR_KEYS: dict[str, None] = dict.fromkeys(
    ("metrics", "used_pct", "remaining_pct", "level", "alert", "alert_reason"))
#: a context cutter's row (:func:`_cutter_row`): its batches written from templates
CUTTER_ROW = RowShape({
    **dict.fromkeys((
        "request", "enabled", "messages_in", "messages_out", "tokens_in", "tokens_out",
        "removable", "dropped", "continuity_dropped", "budget_dropped", "anchor",
        "fallback", "budget_unreachable", "orphaned_tool_results")),
    "ops": _OPS_KEYS,
    "state": {"omitted_count": None, "estimated_tokens": None,
              "anchor": Nullable(dict.fromkeys(("role", "length", "hash")))},
    "monitor": _MONITOR_KEYS,
})
#: an alert (:meth:`RowTally._alert`): a context cutter's written from their values
ALERT_ROW = RowShape(dict.fromkeys(
    ("request", "level", "used_pct", "reason", "additional_context")))
#: the monitor's row alone (:func:`replay_monitor`)
MONITOR_ROW = RowShape({"request": None, "ops": _OPS_KEYS, "messages_in": None,
                        "tokens_in": None, "monitor": _MONITOR_KEYS})


def _like(rows: list[dict[str, Any]] | Spool) -> list[dict[str, Any]] | Spool:
    """An empty list of the kind of ``rows`` (the alerts go where the rows go)."""
    return Spool() if isinstance(rows, Spool) else []


def apply_turn(cutter: ContextCutter, turn: Turn) -> None:
    for m in turn.append:
        cutter.append(m)
    for mid, content in turn.edit:
        cutter.edit(mid, content)
    for mid in turn.delete:
        cutter.delete(mid)


#: ``Change(*fields)`` of a tuple of all its fields, without the named tuple's ``__new__``
#: (a Python function: half the cost of making one, once a request)
_change: Callable[[tuple[Any, ...]], Change] = partial(tuple.__new__, Change)


#: the messages the checker may be handed over a replay: those the output gains or loses,
#: request by request (a whole history observed: each request's lists).  A switch of the
#: module sends, then withdraws, the whole history, which the cutter does in a few steps
#: and the checker message by message (about 0.4 us each, a switch's in one pass:
#: ``Mirror._send_all``): past this, the fixture is refused at the turn that crosses it,
#: about 10 s in (docs/replay.md, Bounds)
MAX_MOVED = 20_000_000


def _too_many_moved(turn: Turn) -> ReplayError:
    return ReplayError(Code.BAD_FIXTURE, f"the output gains or loses more than "
                       f"{MAX_MOVED:,} messages over the replay (each switch of the module "
                       f"moves the whole history)", where=f"turn {turn.number}")


def iterate_cutter(
    fixture: Fixture,
    config: ReplayConfig,
    cutter_factory: Callable[[ReplayConfig], ContextCutter] = ContextCutter,
    *,
    observe: bool = True,
) -> Iterator[tuple[Turn, CutResult, Step | Change | None]]:
    """Yield (turn, result, observation) per request; observations are None if not ``observe``.

    The observation is a :class:`Change` (the turn's operations from the fixture and
    the cutter's ``output_delta``: O(change) per request) unless the cutter's class
    overrides ``output()``, whose whole list is then observed as a :class:`Step`.  The
    messages observed are at most :data:`MAX_MOVED` (``bad-fixture`` past it).
    """
    cutter = cutter_factory(config)
    for m in fixture.messages:
        cutter.append(m)
    by_delta = type(cutter).output is ContextCutter.output
    # The checker's view of the input is rebuilt here from the fixture, not read
    # from the cutter's own mirror: a cutter that mishandles an edit or a delete
    # must not also hand the checker the history it got wrong.
    history: dict[str, Message] = {} if by_delta else {m.id: m for m in fixture.messages}
    pending: list[Message] = list(fixture.messages)
    enabled = config.enabled
    moved = 0
    for turn in fixture.iter_turns():
        try:
            apply_turn(cutter, turn)
        except ReplayError as exc:  # from the mirror: name the turn
            exc.where = f"turn {turn.number}"
            raise
        if turn.toggle is not None:
            enabled = turn.toggle
        result = cutter.request(enabled)
        obs: Step | Change | None = None
        if observe and by_delta:
            sent, withdrawn = cutter.output_delta(result)
            moved += len(sent) + len(withdrawn)
            if moved > MAX_MOVED:
                raise _too_many_moved(turn)
            # (the turn's own lists: the checker reads a change, it never changes one)
            obs = _change((
                turn.number, enabled, [*pending, *turn.append] if pending else turn.append,
                turn.edit, turn.delete, sent, withdrawn, result.budget_unreachable,
            ))
            if pending:  # (the header's messages, handed over with the first turn's)
                pending = []
        elif observe:
            _apply_plain(history, turn)
            moved += 2 * len(history)
            if moved > MAX_MOVED:
                raise _too_many_moved(turn)
            obs = Step(
                turn.number,
                enabled,
                list(history.values()),
                cutter.output(result),
                result.budget_unreachable,
            )
        yield turn, result, obs


def _apply_plain(history: dict[str, Message], turn: Turn) -> None:
    """The turn's operations on a plain id -> message mapping (insertion order kept)."""
    for m in turn.append:
        history[m.id] = m
    for mid, content in turn.edit:
        old = history[mid]
        history[mid] = Message(mid, old.role, content)
    for mid in turn.delete:
        del history[mid]


#: requests the cutter makes before the checkers and the rows take them, each step over
#: all of them (their observations are the cutter's snapshots: frozen results, new lists)
REQUESTS_AT_ONCE = 512



def replay_cutter(
    fixture: Fixture,
    config: ReplayConfig,
    cutter_factory: Callable[[ReplayConfig], ContextCutter] = ContextCutter,
    monitor_factory: Callable[[ReplayConfig], ContextMonitor] = ContextMonitor,
    *,
    spool: bool = False,
    watch: Watch | None = None,
    readable: Keep = True,
    watch_many: WatchMany | None = None,
) -> ReplayRun:
    """The cutter, checked (R1-R9), with the monitor observing it, checked too (M1-M3);
    ``spool``: its rows kept in a :class:`Spool`, out of memory (``readable``: to be read
    back); ``watch``: called with each row (:attr:`ReplayRun.watch`), ``watch_many`` with
    each batch instead when given (:attr:`ReplayRun.watch_many`).

    :data:`REQUESTS_AT_ONCE` requests at a time: the cutter makes them, then R1-R9 check
    them, then the monitor observes them, then M1-M3 check it, then their rows are made,
    each step over all of them before the next (each request's steps in the same order, so
    the same report; each step's code stays in the processor's caches: bench/RESULTS.md,
    round 12)."""
    checker, mcheck = InvariantChecker(config), MonitorChecker(config)
    run = ReplayRun(SIM_CUTTER, Spool(readable, CUTTER_ROW) if spool else [], checker=checker,
                    monitor_checker=mcheck, watch=watch, watch_many=watch_many)
    if spool:  # (a list of rows is tallied by build_report)
        run.tally = RowTally(True, Spool(readable, ALERT_ROW))  # (read back as the rows)
    monitor = monitor_factory(config)
    steps = iterate_cutter(fixture, config, cutter_factory)
    while batch := list(itertools.islice(steps, REQUESTS_AT_ONCE)):
        for _turn, _res, obs in batch:
            assert obs is not None
            checker.check(obs)
        seen = [(turn.number, res.tokens_out, turn.metrics) for turn, res, _obs in batch]
        events = observe_many(monitor, seen)
        rows: Sequence[dict[str, Any]]
        values: Given | None = None
        if spool and set(map(type, events)) == {MonitorEvent}:
            # (the monitor's own events: checked and written from their fields, the rows'
            # dicts made only where one is read: :class:`CutterRows`)
            mcheck.check_events(seen, events)
            rows = CutterRows(batch, events)
            values = by_column(_direct_values(batch, events))
        else:
            dicts = [ev.to_dict() for ev in events]
            for (turn, res, _obs), row_ev in zip(batch, dicts, strict=True):
                mcheck.check(turn.number, res.tokens_out, turn.metrics, row_ev)
            rows = [_cutter_row(turn, res, mon)
                    for (turn, res, _obs), mon in zip(batch, dicts, strict=True)]
        if spool and values is None:
            values = _cutter_values(batch, list(rows))
        run.add_rows(rows, _first_failures(checker, mcheck, [t.number for t, _, _ in batch]),
                     values)
    return run


def _first_failures(checker: InvariantChecker, mcheck: MonitorChecker,
                    requests: list[int]) -> list[bool]:
    """Whether some invariant of either checker failed for the first time at each of
    ``requests`` (``checker.first_failure_at(q) or mcheck.first_failure_at(q)``): a few C
    calls a batch when neither method is overridden."""
    if (type(checker).first_failure_at is InvariantChecker.first_failure_at
            and type(mcheck).first_failure_at is MonitorChecker.first_failure_at):
        return list(map(or_, checker.first_failures(requests), mcheck.first_failures(requests)))
    return [checker.first_failure_at(q) or mcheck.first_failure_at(q) for q in requests]


def replay_monitor(
    fixture: Fixture,
    config: ReplayConfig,
    monitor_factory: Callable[[ReplayConfig], ContextMonitor] = ContextMonitor,
    *,
    spool: bool = False,
    watch: Watch | None = None,
    readable: Keep = True,
) -> ReplayRun:
    """The monitor alone: usage = the whole history's estimate (nothing is cut); M1-M3."""
    mcheck = MonitorChecker(config)
    run = ReplayRun(SIM_MONITOR, Spool(readable, MONITOR_ROW) if spool else [],
                    monitor_checker=mcheck,
                    watch=watch)
    if spool:
        run.tally = RowTally(False, _like(run.rows))
    monitor = monitor_factory(config)
    for turn, res, _ in iterate_cutter(fixture, config, observe=False):
        ev = monitor.observe(turn.number, res.tokens_in, turn.metrics).to_dict()
        mcheck.check(turn.number, res.tokens_in, turn.metrics, ev)
        run.add(
            {
                "request": turn.number,
                "ops": _ops(turn),
                "messages_in": res.messages_in,
                "tokens_in": res.tokens_in,
                "monitor": ev,
            },
            mcheck.first_failure_at(turn.number),
        )
    return run


def run_simulation(simulation: str, fixture: Fixture, config: ReplayConfig, *,
                   spool: bool = False, watch: Watch | None = None,
                   readable: Keep = True, watch_many: WatchMany | None = None) -> ReplayRun:
    """``spool``: the rows kept out of memory (:class:`Spool`), for a report streamed to
    its files (:func:`report_pieces`), ``readable``: to be read back (a function: while it
    says so, :data:`~risutools.replay.spool.Keep`); ``watch``: called
    with each row as it is made (``watch_many``: with each batch, a context cutter's)."""
    if simulation == SIM_CUTTER:
        return replay_cutter(fixture, config, spool=spool, watch=watch, readable=readable,
                             watch_many=watch_many)
    if simulation == SIM_MONITOR:
        return replay_monitor(fixture, config, spool=spool, watch=watch, readable=readable)
    raise ValueError(simulation)


def build_report(
    run: ReplayRun,
    fixture: Fixture,
    config: ReplayConfig,
    component: dict[str, Any] | None,
) -> dict[str, Any]:
    """The ``replay-report-v1`` of a run, its ``report_sha256`` included."""
    rows = run.rows
    # alerts and counts: tallied during the run, else one pass over the rows
    tally = run.tally or RowTally.of(rows, run.simulation == SIM_CUTTER, _like(rows))
    alerts = tally.alerts
    counts = tally.counts()
    invariants = _invariants(run)
    comp = _component(component)
    report: dict[str, Any] = {
        "report": REPORT_TAG,
        "tool": {"name": "risutools", "version": __version__},
        "simulation": run.simulation,
        "component_id": comp["component_id"] if comp else None,
        "component": comp,
        "fixture": {"name": fixture.name, "file": fixture.file, "sha256": fixture.sha256},
        "config": config.to_dict(),
        "summary": _summary(counts, invariants),
        "invariants": invariants,
        "alerts": alerts,
        "requests": rows,
    }
    notes = fixture.notes()
    if notes:  # bridge records whose two percentages disagree, one line each
        report["monitor_notes"] = notes
    report["report_sha256"] = report_hash(report)
    return report


class RowTally:
    """The alerts and the summary's counts of a run's rows, added one by one."""

    def __init__(self, cutter: bool, alerts: list[dict[str, Any]] | Spool) -> None:
        self.cutter = cutter
        self.alerts = alerts
        self.n = self.cuts = self.losses = self.unreachable = self.disabled = 0
        self.orphaned = 0
        self.peak_in: int | None = None
        self.peak_out: int | None = None
        self.max_dropped: int | None = None

    @classmethod
    def of(cls, rows: Sequence[dict[str, Any]], cutter: bool,
           alerts: list[dict[str, Any]] | Spool) -> RowTally:
        tally = cls(cutter, alerts)
        for r in rows:
            tally.add(r)
        return tally

    def add(self, r: dict[str, Any], still: bool = False) -> None:
        """The next row; ``still``: it is :func:`quiet` (its peaks are all it adds)."""
        self.n += 1
        v = r["tokens_in"]
        if self.peak_in is None or v > self.peak_in:
            self.peak_in = v
        if self.cutter:
            v = r["tokens_out"]
            if self.peak_out is None or v > self.peak_out:
                self.peak_out = v
            v = r["dropped"]
            if self.max_dropped is None or v > self.max_dropped:
                self.max_dropped = v
        if still:
            return
        if r["monitor"]["alert"]:
            self.add_alert(r)
        if self.cutter:
            self.cuts += r["budget_dropped"] > 0
            self.losses += r["anchor"] == "lost"
            self.unreachable += bool(r["budget_unreachable"])
            self.disabled += not r["enabled"]
            self.orphaned += bool(r["orphaned_tool_results"])

    def add_alert(self, r: dict[str, Any]) -> None:
        """The alert of a row whose monitor raised one."""
        self._alert(r["request"], r["monitor"])

    def _alert(self, request: Any, mon: dict[str, Any]) -> None:
        """The alert at ``request`` of a row whose ``monitor`` is ``mon``."""
        self.alerts.append({
            "request": request,
            "level": mon["level"],
            "used_pct": mon["used_pct"],
            "reason": mon["alert_reason"],
            "additional_context": additional_context(mon["level"], mon["used_pct"]),
        })

    def _event_alerts(self, requests: list[Any], events: list[MonitorEvent]) -> None:
        """:meth:`_alert` of each of the monitor's ``events`` (the values of a row's
        ``monitor``) at its request, given to a spool with their values by column
        (:data:`ALERT_ROW`'s holes; their dicts made only if it reads them)."""
        levels: list[Any] = [ev.level for ev in events]
        used: list[Any] = [ev.used_pct for ev in events]
        reasons = [ev.reason or None for ev in events]
        texts = list(map(additional_context, levels, used))
        alerts = AlertRows(requests, levels, used, reasons, texts)
        if isinstance(self.alerts, Spool):
            self.alerts.extend(alerts if not self.alerts.readable else alerts[:],
                               Columns((), [texts, levels, reasons, requests, used],
                                       len(alerts)))
        else:
            self.alerts.extend(alerts[:])

    def add_columns(self, cols: RowColumns, rows: Sequence[dict[str, Any]]) -> None:
        """:meth:`add` of each row of a batch (``quiet`` as :func:`quiet` says), in order, by
        column: a quiet row adds no event (the module's text of :mod:`.row_columns`)."""
        self.n += cols.n
        top = max(cols.tokens_in)
        if self.peak_in is None or top > self.peak_in:
            self.peak_in = top
        if self.cutter:
            top = max(cols.tokens_out)
            if self.peak_out is None or top > self.peak_out:
                self.peak_out = top
            top = max(cols.dropped)
            if self.max_dropped is None or top > self.max_dropped:
                self.max_dropped = top
        marks = cols.marks  # (the rows of each event, found once: the sweep reads them too)
        alerted = marks["alert"]
        if alerted and isinstance(rows, CutterRows):  # (their rows not made for this)
            self._event_alerts([cols.request[i] for i in alerted], rows.events(alerted))
        else:
            for i in alerted:
                self.add_alert(rows[i])
        if self.cutter:
            self.cuts += cuts(cols)  # (``> 0``, as :meth:`add`: not the sweep's ``"cut"``)
            self.losses += len(marks["anchor-lost"])
            self.unreachable += len(marks["unreachable"])
            self.disabled += len(marks["off"])
            self.orphaned += len(marks["orphan"])

    def counts(self) -> dict[str, Any]:
        """The summary's counts (as ``max(..., default=0)`` and ``sum`` over the rows)."""
        counts: dict[str, Any] = {"requests": self.n, "alerts": len(self.alerts),
                                  "peak_tokens_in": self.peak_in or 0}
        if self.cutter:
            counts.update({
                "cuts": self.cuts,
                "anchor_losses": self.losses,
                "budget_unreachable": self.unreachable,
                "disabled_requests": self.disabled,
                "peak_tokens_out": self.peak_out or 0,
                "max_dropped": self.max_dropped or 0,
                "requests_with_orphaned_tool_results": self.orphaned,
            })
        return counts


class AlertRows(Sequence[dict[str, Any]]):
    """Alerts (:meth:`RowTally._alert`'s dicts) of their values by column, each made when
    read (a slice: all of them made)."""

    def __init__(self, requests: list[Any], levels: list[Any], used: list[Any],
                 reasons: list[Any], texts: list[str]) -> None:
        self._columns = (requests, levels, used, reasons, texts)

    def __len__(self) -> int:
        return len(self._columns[0])

    @overload
    def __getitem__(self, i: int) -> dict[str, Any]: ...

    @overload
    def __getitem__(self, i: slice) -> list[dict[str, Any]]: ...

    def __getitem__(self, i: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        q, lv, u, why, text = (c[i] for c in self._columns)
        return {"request": q, "level": lv, "used_pct": u, "reason": why,
                "additional_context": text}


def _invariants(run: ReplayRun) -> list[dict[str, Any]]:
    """The verdicts of the checkers that ran: R1-R9 (the cutter), then M1-M3."""
    invariants: list[dict[str, Any]] = []
    if run.checker is not None:
        invariants = [run.checker.verdicts[k].to_dict() for k in INVARIANTS]
    if run.monitor_checker is not None:
        invariants += run.monitor_checker.to_dicts()
    return invariants


def _summary(counts: dict[str, Any], invariants: list[dict[str, Any]]) -> dict[str, Any]:
    summary: dict[str, Any] = {
        "requests": counts["requests"],
        "alerts": counts["alerts"],
        "peak_tokens_in": counts["peak_tokens_in"],
        # (a warning that failed was checked: it neither fails the replay nor leaves it
        # unchecked; the reader of a report works this out again: checks.outcomes)
        **summary_of(invariants),
    }
    summary.update((k, v) for k, v in counts.items() if k not in summary)
    return summary


def _component(component: dict[str, Any] | None) -> dict[str, Any] | None:
    """Which document was replayed (None for the monitor alone), by its base hash (what
    ``risutools hash`` prints and approvals name)."""
    if component is None:
        return None
    return {
        "component_id": component.get("component_id"),
        "component_version": component.get("component_version"),
        "doc_sha256": base_sha256(component),
    }


def verify_report_hash(report: dict[str, Any]) -> bool:
    return report.get("report_sha256") == report_hash(report)


def report_hash(report: dict[str, Any]) -> str:
    """:func:`risutools.canonical.self_hash` of a report, its spooled lists streamed."""
    if not any(isinstance(v, Spool) for v in report.values()):
        return self_hash(report)
    digest = hashlib.sha256()
    for piece in canonical_pieces({k: v for k, v in report.items() if k != "report_sha256"}):
        digest.update(piece)
    return prefixed(digest.hexdigest())


def report_pieces(report: dict[str, Any]) -> Iterator[bytes]:
    """The report file's bytes in pieces: indented JSON, keys sorted (orjson when it writes
    the same), its spooled lists streamed."""
    if any(isinstance(v, Spool) for v in report.values()):
        yield from indented_pieces(report)
    else:
        yield indented(report)


def report_bytes(report: dict[str, Any]) -> bytes:
    """The report file's bytes (:func:`report_pieces`, joined)."""
    return b"".join(report_pieces(report))
