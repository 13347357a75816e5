"""A batch of the context cutter's rows read by column: what the summary's tally, the chart's
sweep and the tables' pickers take of a batch, in a few C calls a column, not a few calls a
row.

Each consumer's row-at-a-time code (:meth:`~risutools.replay.run.RowTally.add`,
:meth:`~risutools.replay.render_html.ChartSweep.add`,
:meth:`~risutools.replay.render_markdown.Picker.add`) stays the reference: the batch adds
what it would add row after row, the same counts, peaks, groups, line points and picks, the
same row objects in the same order.  That holds because the columns it compares are of the
types those comparisons are exact for, which :func:`row_columns` checks: ``request``,
``tokens_in``, ``tokens_out``, ``dropped`` and ``budget_dropped`` exact ``int`` (a total
order: ``max`` is the last strict rise, ``== 0`` is falsy), ``anchor`` a ``str``, the
monitor's ``level`` a ``str`` or ``None``, ``monitor`` and ``ops`` dicts.  A batch of other
rows (another cutter's, a key missing) gives None and is added a row at a time, as before.

With those types a row is :func:`~risutools.replay.run.quiet` exactly when it is not
:func:`~risutools.replay.render_markdown.interesting` and its module is on; a quiet row adds
no event to any of them, so the events are counted over the whole batch.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from itertools import compress, repeat
from operator import add, eq, floordiv, gt, indexOf, is_not, itemgetter, not_, sub
from typing import Any

from risutools.replay.render_html import ChartSweep
from risutools.replay.render_markdown import Picker

_INTS = frozenset({int})
_LEVELS = frozenset({str, type(None)})
_TOP = itemgetter("request", "tokens_in", "tokens_out", "dropped", "budget_dropped", "anchor",
                  "budget_unreachable", "enabled", "orphaned_tool_results", "monitor", "ops")
_MONITOR = itemgetter("alert", "level")
_TOGGLE = itemgetter("toggle")


class RowColumns:
    """The columns of a batch of cutter rows (:func:`row_columns`), and which rows are of
    each kind of event (indices into the batch)."""

    def __init__(self, columns: Sequence[Sequence[Any]], alert: Sequence[Any],
                 level: Sequence[Any], toggle: Sequence[Any]) -> None:
        (self.request, self.tokens_in, self.tokens_out, self.dropped, self.budget_dropped,
         self.anchor, self.unreachable, self.enabled, self.orphaned, _, _) = columns
        self.alert, self.level = alert, level
        self.n = len(alert)
        self.lost = list(map(eq, self.anchor, repeat("lost")))
        toggled = map(is_not, toggle, repeat(None))
        #: :func:`~risutools.replay.render_markdown.interesting` of each row
        self.worth = list(map(any, zip(self.budget_dropped, self.lost, self.unreachable,
                                       alert, toggled, self.orphaned, strict=True)))

    def where(self, flags: Any) -> list[int]:
        """The indices of the rows whose flag is true."""
        return list(compress(range(self.n), flags))

    @cached_property
    def marks(self) -> dict[str, list[int]]:
        """The rows of each kind of event (:meth:`kinds`' names), the alerts of both levels
        together (``"alert"``, last): found once a batch, for the chart's sweep
        (:meth:`kinds`) and the summary's tally
        (:meth:`~risutools.replay.run.RowTally.add_columns`), which only read them."""
        # (``compress`` asks each flag's truth itself: a column is its own flags)
        return {
            "cut": self.where(self.budget_dropped),
            "unreachable": self.where(self.unreachable),
            "anchor-lost": self.where(self.lost),
            "off": self.where(map(not_, self.enabled)),
            "orphan": self.where(self.orphaned),
            "alert": self.where(self.alert),
        }

    def kinds(self) -> dict[str, list[int]]:
        """The rows of each kind of event, as :func:`~risutools.replay.render_html._kinds`
        names them."""
        *events, (_, alerts) = self.marks.items()
        level = self.level
        return {
            **dict(events),
            "alert-critical": [i for i in alerts if level[i] == "CRITICAL"],
            "alert-warning": [i for i in alerts if level[i] != "CRITICAL"],
        }


def row_columns(rows: Sequence[dict[str, Any]]) -> RowColumns | None:
    """The batch's columns, or None when a row lacks a key or a column is not of the type
    the batch's comparisons are exact for (the module's text)."""
    if not rows or set(map(type, rows)) != {dict}:
        return None
    try:
        columns = list(zip(*map(_TOP, rows), strict=True))
        monitors, ops = columns[9], columns[10]
        if set(map(type, monitors)) != {dict} or set(map(type, ops)) != {dict}:
            return None
        alert, level = zip(*map(_MONITOR, monitors), strict=True)
        toggle = tuple(map(_TOGGLE, ops))
    except KeyError:
        return None
    for column in columns[:5]:
        if set(map(type, column)) != _INTS:
            return None
    if set(map(type, columns[5])) != {str} or not _LEVELS.issuperset(map(type, level)):
        return None
    return RowColumns(columns, alert, level, toggle)


def cuts(cols: RowColumns) -> int:
    """The rows with ``budget_dropped > 0``."""
    return sum(map(gt, cols.budget_dropped, repeat(0)))


def sweep_columns(sw: ChartSweep, cols: RowColumns, rows: Sequence[dict[str, Any]]) -> None:
    """``sw.add(row, quiet(row))`` for each row of the batch, in order."""
    i0 = sw.added
    sw.added += cols.n
    top = max(cols.tokens_in)
    if top > sw.peak_in:
        sw.peak_in = top
    if sw.cutter:
        top = max(cols.tokens_out)
        if top > sw.peak_out:
            sw.peak_out = top
    size = sw._marker_size
    block_of: list[int] = []  # (each row's marker block, found when a kind has an event)
    for kind, sel in cols.kinds().items():
        if not sel:
            continue
        sw.counts[kind] += len(sel)
        if not block_of:
            block_of = list(map(floordiv, map(sub, cols.request, repeat(1)), repeat(size)))
        blocks = list(map(block_of.__getitem__, sel))
        groups = sw.groups[kind]
        for block in dict.fromkeys(blocks):  # (in order: each block's first row)
            g = groups.get(block)
            if g is None:
                g = groups[block] = [0, rows[sel[blocks.index(block)]]]
            g[0] += blocks.count(block)
        if kind == "off":
            for i in sel:
                req = cols.request[i]
                if sw.off and sw.off[-1][1] == req - 1:
                    sw.off[-1][1] = req
                else:
                    sw.off.append([req, req])
    for key, line in sw.lines.items():
        _fold_line(line, cols.tokens_in if key == "tokens_in" else cols.tokens_out, i0,
                   sw._line_size)


def _fold_line(line: list[list[Any]], values: Sequence[int], i0: int, size: int) -> None:
    """:meth:`ChartSweep.add`'s line groups for ``values`` at positions ``i0``, ``i0 + 1``,
    ...: a group begins at each position that ``size`` divides ([first lowest position,
    value, first highest position, value]); each other value lowers or raises its group's
    figures where it is strictly below or above them, so a run's first extreme wins.  The
    groups that begin in the batch are made a C call a figure (a run's first lowest and
    highest: ``min``, ``max``, their first index)."""
    n = len(values)
    at = min(n, -i0 % size)  # the values of the group the batch continues
    if at:
        run = values[:at]
        g = line[-1]
        low, high = min(run), max(run)
        if low < g[1]:
            g[0], g[1] = i0 + run.index(low), low
        if high > g[3]:
            g[2], g[3] = i0 + run.index(high), high
    if at >= n:
        return
    starts = range(at, n, size)
    runs = list(map(values.__getitem__, map(slice, starts, range(at + size, n + size, size))))
    lows, highs = list(map(min, runs)), list(map(max, runs))
    first = range(i0 + at, i0 + n, size)
    line.extend(map(list, zip(map(add, first, map(indexOf, runs, lows)), lows,
                              map(add, first, map(indexOf, runs, highs)), highs,
                              strict=True)))


def pick_columns(picker: Picker, rows: Sequence[dict[str, Any]], firsts: Sequence[bool],
                 cols: RowColumns) -> None:
    """``picker.add(row, first, worth)`` for each row of the batch (``first``: its request is
    that of a first failure; ``worth``: interesting, not first) in order: the rows of a first
    failure kept, and the others worth a look fed one by one till the picker keeps no more
    of them (its rows in order, full), then counted at once when each is at or past its
    last (only the rows fed are read)."""
    sel = cols.where(cols.worth)
    if any(firsts):
        picker.first.extend(map(rows.__getitem__, cols.where(firsts)))
        sel = [i for i in sel if not firsts[i]]
    rest, cap = picker.rest, picker.cap
    fed = 0
    while fed < len(sel) and not (picker._ordered and len(rest) >= cap):  # (till it is full)
        picker.add(rows[sel[fed]], False, True)
        fed += 1
    sel = sel[fed:]
    if not sel:
        return
    last = rest[-1]["request"] if rest else None
    if type(last) is int and min(cols.request[i] for i in sel) >= last:
        picker.total += len(sel)
        return
    for i in sel:
        picker.add(rows[i], False, True)
