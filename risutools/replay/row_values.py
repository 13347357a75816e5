"""A context cutter's rows, and their values as the spool and the columns read them.

A row is the dicts of a request's turn, the cutter's result and the monitor's event
(:func:`_cutter_row`); a spooled replay makes few of them (:class:`CutterRows`: a row made
when one is read) and writes the rest from their scalars, read where :func:`_cutter_row`
reads them (:func:`_direct_values`, in the order of the rows' template's holes,
:data:`CUTTER_HOLES`), a batch of one template transposed once (:func:`by_column`) for the
spool (:meth:`~.row_form.RowShape.forms_of_columns`) and for the tally's and the views'
columns (:func:`given_columns`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import repeat
from operator import eq, is_not, itemgetter
from typing import Any, overload

from risutools.replay.cutter import CutResult, CutterState, Signature
from risutools.replay.fixture import Turn
from risutools.replay.mirror import Change, Step
from risutools.replay.monitor import MonitorEvent
from risutools.replay.row_columns import RowColumns
from risutools.replay.spool import Columns, Given, RowValues


def _ops(turn: Turn) -> dict[str, Any]:
    return {
        "appended": len(turn.append),
        "edited": len(turn.edit),
        "deleted": len(turn.delete),
        "toggle": turn.toggle,
    }


def _cutter_row(turn: Turn, res: CutResult, ev: dict[str, Any],
                state: dict[str, Any] | None = None) -> dict[str, Any]:
    """A request's row; ``state``: its cutter state's dict when the caller made it
    (:func:`_event_row`), else ``res.state.to_dict()``."""
    return {
        "request": turn.number,
        "ops": _ops(turn),
        "enabled": res.enabled,
        "messages_in": res.messages_in,
        "messages_out": res.messages_out,
        "tokens_in": res.tokens_in,
        "tokens_out": res.tokens_out,
        "removable": res.removable,
        "dropped": res.dropped,
        "continuity_dropped": res.continuity_dropped,
        "budget_dropped": res.budget_dropped,
        "anchor": res.anchor,
        "fallback": res.fallback,
        "budget_unreachable": res.budget_unreachable,
        "orphaned_tool_results": res.orphaned_tool_results,
        "state": res.state.to_dict() if state is None else state,
        "monitor": ev,
    }


def _event_row(turn: Turn, res: CutResult, ev: MonitorEvent) -> dict[str, Any]:
    """:func:`_cutter_row` of the monitor's event ``ev`` (its ``to_dict``), the dicts of the
    event and of the state and its anchor written here as their ``to_dict`` writes them when
    they are this module's :class:`CutterState` and :class:`Signature` (one call, not four)."""
    st = res.state
    a = st.anchor
    if type(st) is not CutterState or type(a) not in _ANCHORS:
        return _cutter_row(turn, res, ev.to_dict())
    return _cutter_row(
        turn, res,
        {"metrics": ev.metrics, "used_pct": ev.used_pct, "remaining_pct": ev.remaining_pct,
         "level": ev.level, "alert": ev.alert, "alert_reason": ev.reason or None},
        {"omitted_count": st.omitted_count,
         "anchor": None if a is None else {"role": a.role, "length": a.length, "hash": a.hash},
         "estimated_tokens": st.estimated_tokens})


class CutterRows(Sequence[dict[str, Any]]):
    """A batch's rows (:func:`_cutter_row` of each request, the monitor's events
    :class:`MonitorEvent` themselves), each made when first read and kept: what a spooled
    replay reads of a batch's rows is its values (:func:`_direct_values`), and a few rows
    (the tables', the chart's, the alerts'), not every row's dicts."""

    def __init__(self, batch: list[tuple[Turn, CutResult, Step | Change | None]],
                 events: list[MonitorEvent]) -> None:
        self._batch = batch
        self._events = events
        self._made: list[dict[str, Any] | None] = [None] * len(batch)

    def __len__(self) -> int:
        return len(self._made)

    @overload
    def __getitem__(self, i: int) -> dict[str, Any]: ...

    @overload
    def __getitem__(self, i: slice) -> list[dict[str, Any]]: ...

    def __getitem__(self, i: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self._made)))]
        row = self._made[i]
        if row is None:
            turn, res, _ = self._batch[i]
            row = self._made[i] = _event_row(turn, res, self._events[i])
        return row

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return map(self.__getitem__, range(len(self._made)))

    def events(self, at: list[int]) -> list[MonitorEvent]:
        """The monitor's events of the rows at ``at`` (the values of their ``monitor``)."""
        return list(map(self._events.__getitem__, at))


#: the scalars of a context cutter's row, in the order of :data:`CUTTER_ROW`'s holes (its
#: keys sorted, each object's in place); ``state.anchor``'s three only when it is not null
CUTTER_HOLES: tuple[tuple[str, ...], ...] = (
    ("anchor",), ("budget_dropped",), ("budget_unreachable",), ("continuity_dropped",),
    ("dropped",), ("enabled",), ("fallback",), ("messages_in",), ("messages_out",),
    ("monitor", "alert"), ("monitor", "alert_reason"), ("monitor", "level"),
    ("monitor", "metrics"), ("monitor", "remaining_pct"), ("monitor", "used_pct"),
    ("ops", "appended"), ("ops", "deleted"), ("ops", "edited"), ("ops", "toggle"),
    ("orphaned_tool_results",), ("removable",), ("request",),
    ("state", "anchor", "hash"), ("state", "anchor", "length"), ("state", "anchor", "role"),
    ("state", "estimated_tokens"), ("state", "omitted_count"), ("tokens_in",), ("tokens_out",),
)
_WITH_ANCHOR = len(CUTTER_HOLES)


def _cutter_values(batch: list[tuple[Turn, CutResult, Step | Change | None]],
                   rows: list[dict[str, Any]]) -> RowValues | None:
    """The batch's rows (:func:`_cutter_row` of its requests) as :class:`~.spool.Spool`
    writes them from :data:`CUTTER_ROW`'s templates (:meth:`~.row_form.RowShape.forms_of`):
    each row's scalars (:data:`CUTTER_HOLES`) and template; None when a row's state or
    monitor (the cutter's and the monitor's objects, not this module's) is not a dict of
    exactly the shape's keys (the batch is then read from its rows)."""
    try:
        values = list(map(_row_values, batch, rows))
    except (KeyError, _OffShape):
        return None
    return values, list(zip(map(eq, map(len, values), repeat(_WITH_ANCHOR))))


#: where :func:`values_columns` reads each column in a row's values (the first 22 of every
#: row, with or without its anchor; the tokens last)
_AT = {p[0]: i for i, p in enumerate(CUTTER_HOLES[:22]) if len(p) == 1}
_IN, _OUT = itemgetter(-2), itemgetter(-1)
_INTS, _LEVELS = {int}, frozenset({str, type(None)})


def values_columns(values: list[tuple[Any, ...]]) -> RowColumns | None:
    """:func:`~.row_columns.row_columns` of a batch's rows from their values
    (:func:`_cutter_values`: their monitor and ops dicts): the same columns, the same
    types asked of them (None when one is not of its type)."""
    head = list(zip(*values, strict=False))  # (each row's first 22 are the same keys')
    return _columns(head, tuple(map(_IN, values)), tuple(map(_OUT, values)))


def given_columns(given: Columns) -> RowColumns | None:
    """:func:`values_columns` of a batch's values given by column (:func:`by_column`)."""
    columns = given.columns
    return _columns(columns, columns[-2], columns[-1])


def _columns(head: Sequence[Sequence[Any]], tokens_in: Sequence[Any], tokens_out: Sequence[Any]
             ) -> RowColumns | None:
    """The batch's :class:`RowColumns` from its values' columns (the first 22 of
    :data:`CUTTER_HOLES`) and its tokens, each checked of its type."""
    at = _AT
    request, anchor, level = head[at["request"]], head[at["anchor"]], head[_LEVEL]
    columns = [request, tokens_in, tokens_out, head[at["dropped"]], head[at["budget_dropped"]],
               anchor, head[at["budget_unreachable"]], head[at["enabled"]],
               head[at["orphaned_tool_results"]], (), ()]
    for column in columns[:5]:
        if set(map(type, column)) != _INTS:
            return None
    if set(map(type, anchor)) != {str} or not _LEVELS.issuperset(map(type, level)):
        return None
    return RowColumns(columns, head[_ALERT], level, head[_TOGGLE])


_ALERT, _LEVEL, _TOGGLE = (CUTTER_HOLES.index(("monitor", "alert")),
                           CUTTER_HOLES.index(("monitor", "level")),
                           CUTTER_HOLES.index(("ops", "toggle")))


class _OffShape(Exception):
    """A row whose state or monitor is not a dict of exactly the shape's keys."""


def _row_values(step: tuple[Turn, CutResult, Step | Change | None], row: dict[str, Any]
                ) -> tuple[Any, ...]:
    """One row's scalars (:data:`CUTTER_HOLES`), read where :func:`_cutter_row` read them."""
    turn, res, _ = step
    ops, st, mon = row["ops"], row["state"], row["monitor"]
    if type(st) is not dict or type(mon) is not dict or len(st) != 3 or len(mon) != 6:
        raise _OffShape
    head = (res.anchor, res.budget_dropped, res.budget_unreachable, res.continuity_dropped,
            res.dropped, res.enabled, res.fallback, res.messages_in, res.messages_out,
            mon["alert"], mon["alert_reason"], mon["level"], mon["metrics"],
            mon["remaining_pct"], mon["used_pct"],
            ops["appended"], ops["deleted"], ops["edited"], ops["toggle"],
            res.orphaned_tool_results, res.removable, turn.number)
    tail = (st["estimated_tokens"], st["omitted_count"], res.tokens_in, res.tokens_out)
    a = st["anchor"]
    if a is None:
        return head + tail
    if type(a) is not dict or len(a) != 3:
        raise _OffShape
    anchor = (a["hash"], a["length"], a["role"])
    return head + anchor + tail


def _direct_values(batch: list[tuple[Turn, CutResult, Step | Change | None]],
                   events: list[MonitorEvent]) -> RowValues | None:
    """:func:`_cutter_values` of the batch's rows (:class:`CutterRows`) read where
    :func:`_cutter_row` reads them, the dicts it makes of its objects included (this
    module's :class:`MonitorEvent`, the cutter's :class:`CutterState` and
    :class:`Signature`: their ``to_dict``), not made; None when a state or an anchor is of
    another class (the batch is then read from its rows)."""
    states = [res.state for _turn, res, _obs in batch]
    if set(map(type, states)) != {CutterState}:
        return None
    anchors = [st.anchor for st in states]
    if not _ANCHORS.issuperset(map(type, anchors)):
        return None
    # (one row's scalars, CUTTER_HOLES, its anchor's three when it has one: written out
    # here, not a call a row)
    values = [
        (res.anchor, res.budget_dropped, res.budget_unreachable, res.continuity_dropped,
         res.dropped, res.enabled, res.fallback, res.messages_in, res.messages_out,
         ev.alert, ev.reason or None, ev.level, ev.metrics, ev.remaining_pct, ev.used_pct,
         len(turn.append), len(turn.delete), len(turn.edit), turn.toggle,
         res.orphaned_tool_results, res.removable, turn.number,
         st.estimated_tokens, st.omitted_count, res.tokens_in, res.tokens_out) if a is None
        else (res.anchor, res.budget_dropped, res.budget_unreachable, res.continuity_dropped,
              res.dropped, res.enabled, res.fallback, res.messages_in, res.messages_out,
              ev.alert, ev.reason or None, ev.level, ev.metrics, ev.remaining_pct, ev.used_pct,
              len(turn.append), len(turn.delete), len(turn.edit), turn.toggle,
              res.orphaned_tool_results, res.removable, turn.number, a.hash, a.length, a.role,
              st.estimated_tokens, st.omitted_count, res.tokens_in, res.tokens_out)
        for (turn, res, _obs), ev, st, a in zip(batch, events, states, anchors, strict=True)]
    return values, list(zip(map(is_not, anchors, repeat(None))))


_ANCHORS = frozenset({Signature, type(None)})


def by_column(values: RowValues | None) -> Given | None:
    """``values`` by column (:class:`~.spool.Columns`: one transposition, which the spool and
    :func:`given_columns` both read) when its rows are all of one template."""
    if values is None:
        return None
    rows, kinds = values
    first = kinds[0]
    if kinds.count(first) != len(kinds) or set(map(len, rows)) != {len(rows[0])}:
        return values
    return Columns(first, list(zip(*rows, strict=True)), len(rows))
