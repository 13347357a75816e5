"""What the Markdown and HTML renderings read of a report's rows, gathered as the replay
makes them.

A long replay keeps its rows in a :class:`~risutools.replay.spool.Spool`, out of memory;
each rendering would read them back (the chart's sweep, the two requests tables) and
decode them again.  :class:`RowViews` is fed each row once, as it is made, with whether
its request is that of a first failure, and keeps what the renderings need, bounded: the
chart's :class:`~risutools.replay.render_html.ChartSweep`, and the rows each table picks
(:class:`~risutools.replay.render_markdown.Picker`).  At rendering time it hands them over
only if they are what the renderings would compute from the report (the same rows, the
same first failures); otherwise the renderings read the rows as before.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from risutools.replay.render_html import MAX_TABLE_ROWS, ChartSweep
from risutools.replay.render_markdown import MAX_ROWS, Picked, Picker, interesting
from risutools.replay.row_columns import RowColumns, pick_columns, sweep_columns


class RowViews:
    """``n``: how many rows the replay will make (the fixture's turns); ``cutter``: the
    context cutter's rows (else the monitor's)."""

    def __init__(self, n: int, cutter: bool) -> None:
        self.n = n
        self.cutter = cutter
        self.count = 0
        self.firsts: set[int] = set()  # requests with a first failure
        self.sweep = ChartSweep(n, cutter)
        self.markdown = Picker(MAX_ROWS)
        self.html = Picker(MAX_TABLE_ROWS)
        #: every row while at most MAX_TABLE_ROWS (none kept when the replay makes more: the
        #: page's table then shows the rows it picks, :meth:`html_parts`)
        self.head: list[dict[str, Any]] = []
        self._head_kept = n <= MAX_TABLE_ROWS

    def add(self, row: dict[str, Any], first: bool, still: bool = False) -> None:
        """The next row; ``first``: some invariant failed for the first time at it;
        ``still``: it is no event of any kind (:func:`~risutools.replay.run.quiet`: the
        chart takes its line points only, and it is not
        :func:`~risutools.replay.render_markdown.interesting`)."""
        self.count += 1
        self.sweep.add(row, still)
        if first:
            self.firsts.add(row["request"])
            self.markdown.add(row, True, False)
            self.html.add(row, True, False)
        elif not still and interesting(row):  # (neither table takes a row not worth a look)
            self.markdown.add(row, False, True)
            self.html.add(row, False, True)
        if self.count <= MAX_TABLE_ROWS and self._head_kept:
            self.head.append(row)

    def add_columns(self, rows: Sequence[dict[str, Any]], firsts: list[bool],
                    cols: RowColumns) -> None:
        """:meth:`add` of each row of a context cutter's batch in order (``firsts``: each
        one's ``first``), by column (:mod:`~risutools.replay.row_columns`); only the rows
        kept are read (``rows[i]``, the first :data:`MAX_TABLE_ROWS` of the run)."""
        before = self.count
        self.count += len(rows)
        sweep_columns(self.sweep, cols, rows)
        if any(firsts):
            self.firsts.update(rows[i]["request"] for i in cols.where(firsts))
        pick_columns(self.markdown, rows, firsts, cols)
        pick_columns(self.html, rows, firsts, cols)
        if before < MAX_TABLE_ROWS and self._head_kept:
            self.head.extend(rows[:MAX_TABLE_ROWS - before])

    def fits(self, report: dict[str, Any]) -> bool:
        """The report holds the rows fed, and the first failures they were fed with."""
        firsts = {inv["first_failure"]["request"] for inv in report["invariants"]
                  if inv["first_failure"]}
        return (self.count == self.n == len(report["requests"]) and firsts == self.firsts
                and self.cutter == (report["simulation"] == "context-cutter"))

    def rows_needed(self) -> bool:
        """The page may yet list every row (more than :data:`MAX_TABLE_ROWS` made, and
        each fed so far worth a look): once one is not, the page's table picks its rows
        and the renderings read none (:meth:`complete`), whatever comes after."""
        return self.n > MAX_TABLE_ROWS and self.html.qualified() == self.count

    def complete(self, report: dict[str, Any]) -> bool:
        """The renderings read nothing of the report's rows: the views fit it, and the page's
        table is kept (not every row past 400 worth a look: the page then lists them all)."""
        if not self.fits(report):
            return False
        return self.count <= MAX_TABLE_ROWS or self.html.picked()[1] != self.count

    def markdown_picked(self, report: dict[str, Any]) -> Picked | None:
        """The Markdown table's rows (:func:`~risutools.replay.render_markdown.pick_rows`)."""
        return self.markdown.picked() if self.fits(report) else None

    def html_parts(self, report: dict[str, Any]) -> tuple[ChartSweep | None, Picked | None]:
        """The chart's sweep and the HTML requests table's rows (None: not kept, read them)."""
        if not self.fits(report):
            return None, None
        if self.count <= MAX_TABLE_ROWS:
            return self.sweep, (self.head, self.count)
        shown, total = self.html.picked()
        # every row qualifies: the table shows them all, which are not kept here
        return self.sweep, ((shown, total) if total != self.count else None)
