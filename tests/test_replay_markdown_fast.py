"""The Markdown requests table's cells of a string spelled once a table (``_seen_cells``)
are what ``_cell`` spells of each, whatever the string and however often it comes."""

from __future__ import annotations

from typing import Any

from risutools.replay.render_markdown import _cell, _cutter_row, _monitor_row, _seen_cells

WORDS: list[Any] = ["CRITICAL", "WARNING", "", "-", "12", "1.5", "3/4", "a|b", "*x*", "<b>",
                    "www.example.com", "@team", "1. item", "\x1b[31m", "`tick`", None, True,
                    False, 7, 2.5, {"used": 3}, ["a", None], "CRITICAL", "a|b", "-"]


class _Str(str):
    """A string that is not a plain one (never taken from what was seen)."""


def test_a_seen_cell_is_its_cell() -> None:
    cell = _seen_cells()
    for _ in range(2):
        for v in [*WORDS, _Str("a|b"), _Str("plain")]:
            assert cell(v) == _cell(v), v


def test_the_rows_with_their_cells_seen_are_the_rows() -> None:
    failing = {3: "R1, R<2>"}
    rows: list[dict[str, Any]] = []
    for k, (level, reason) in enumerate(zip(WORDS, reversed(WORDS), strict=True)):
        rows.append({"request": k, "messages_in": 5, "messages_out": 4, "tokens_in": 900,
                     "tokens_out": 800, "dropped": 1, "continuity_dropped": 0,
                     "budget_dropped": 1, "anchor": "found", "fallback": k % 2 == 0,
                     "budget_unreachable": k % 3 == 0,
                     "monitor": {"level": level, "alert_reason": reason, "used_pct": reason,
                                 "metrics": {"x": 1}}})
    cell = _seen_cells()
    for r in rows + rows:
        assert _cutter_row(r, failing, cell) == _cutter_row(r, failing)
        assert _monitor_row(r, failing, cell) == _monitor_row(r, failing)
