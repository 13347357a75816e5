"""The HTML page's quick spellings are its reference ones: a table cell (``_cell``) is
``html_value(_txt(v))`` whatever the value, the chart's lines' y (``YScale.heights``) is
``YScale.y`` to the last bit, on every scale, and a line's points (``_line_points``) are each
group's figures spelled as ``_f`` spells them."""

from __future__ import annotations

import random
from typing import Any

import pytest

from risutools.printable import html_value
from risutools.replay.render_html import (
    _CUTTER_HEAD,
    KINDS,
    YScale,
    _cell,
    _cutter_cells,
    _cutter_row,
    _line_points,
    _requests_section,
    _table,
    _txt,
    y_scale,
)

CELLS: list[Any] = [
    0, -3, 10**30, True, False, None, 0.5, float("nan"), "", "12/34", "0+7", "found",
    "found (fallback)", "a & b", "<b>", 'q"u', "it's", "\x1b[31m", "\u202e", "\u3000", "탭\t",
    "line\nbreak", "CRITICAL", "-", [], [1, "<"], {"a": None, "b": "&"}, 1e16, (1, 2),
]


def test_a_cell_is_its_reference_spelling() -> None:
    seen: dict[str, str] = {}
    for _ in range(2):  # (the second time from what was seen)
        for v in CELLS:
            assert _cell(v, seen) == html_value(_txt(v)), v
            assert _cell(v) == html_value(_txt(v)), v


def test_a_table_is_its_cells_joined() -> None:
    body = [CELLS[:5], [], CELLS[5:]]
    want = ("<table><thead><tr><th>a</th><th>&lt;b&gt;</th></tr></thead><tbody>"
            + "".join("<tr>" + "".join(f"<td>{html_value(_txt(v))}</td>" for v in row)
                      + "</tr>" for row in body) + "</tbody></table>")
    assert _table(["a", "<b>"], body) == want
    attrs = [' id="x"', "", ' class="y"']
    assert _table(["a"], body, attrs).count('<tr id="x">') == 1


def test_a_group_of_markers_title_needs_no_escape() -> None:
    """A group's tooltip (``requests a-b: count x label``) is written as it is: the kinds'
    labels, and any figures, are what html_value leaves as they are."""
    for label, _ in KINDS.values():
        title = f"requests 1-14: 3 x {label}"
        assert html_value(title) == title


@pytest.mark.parametrize("scale", [(1200, 0, 900), (8000, 7000, 400000), (1000, 900, 1500),
                                   (100, 100, 10**7), (128000, 0, 0)])
def test_the_lines_y_is_y(scale: tuple[int, int, int]) -> None:
    ys = y_scale(*scale)
    rng = random.Random(sum(scale))
    top = max(ys.log_top or 0, ys.lin_top) * 3
    values: list[float] = [0, 1, ys.lin_top - 1, ys.lin_top, ys.lin_top + 1, top]
    values += [rng.randrange(0, top) for _ in range(2000)]
    values += [rng.uniform(0, top) for _ in range(500)]
    if ys.log_top:
        values += [ys.log_top, ys.log_top + 1, float(ys.lin_top)]
    heights = ys.heights(values)
    for v, h in zip(values, heights, strict=True):
        assert h.hex() == ys.y(v).hex(), v


def test_the_lines_y_without_a_log_band_past_its_top() -> None:
    ys = YScale(1000, None)
    values = [999, 1000, 1001, 5000.5]
    assert [h.hex() for h in ys.heights(values)] == [ys.y(v).hex() for v in values]


def _points_reference(line: list[list[Any]], n: int, x: Any, y: Any) -> str:
    """The points as they were spelled, each slot's centre worked out for each group."""
    size = max(1, -(-n // 720))
    pts: list[str] = []
    for lo, lo_v, hi, hi_v in line:
        a = lo - lo % size + 1
        b = min(n, a + size - 1)
        xx = f"{x((a + b) / 2):.1f}"
        order = [hi_v] if lo == hi else [lo_v, hi_v] if lo < hi else [hi_v, lo_v]
        pts += [f"{xx},{y(v):.1f}" for v in order]
    return " ".join(pts)


@pytest.mark.parametrize("n", [1, 7, 720, 721, 1440, 10_000, 33_333])
def test_the_lines_points_with_the_slots_spelled_once(n: int) -> None:
    """A slot's centre spelled once for both lines (``xs``), and a value's height once, are
    what each group's spelling gives: both lines' points as the reference spells them,
    whichever line comes first."""
    rng = random.Random(n)
    size = max(1, -(-n // 720))
    lines = []
    for _ in range(2):
        line = []
        for start in range(0, n, size):
            lo, hi = (rng.randrange(start, min(n, start + size)) for _ in range(2))
            lo_v, hi_v = (rng.choice([rng.randrange(10**6), rng.randrange(9) * 1000])
                          for _ in range(2))  # (equal values now and then: spelled once)
            line.append([lo, lo_v, hi, hi_v])
        lines.append(line)
    x = lambda i: 60 + 720 * (i - 0.5) / n  # noqa: E731
    scale = YScale(5000, 10**6)
    y, heights = scale.y, scale.heights
    for first, second in (lines, lines[::-1]):
        xs: dict[int, str] = {}
        assert _line_points(first, n, x, heights, xs) == _points_reference(first, n, x, y)
        assert _line_points(second, n, x, heights, xs) == _points_reference(second, n, x, y)
        assert _line_points(second, n, x, heights) == _points_reference(second, n, x, y)


def test_the_points_of_no_group_and_of_odd_figures() -> None:
    """No group: no points; figures that spell with a sign, a tie or past a million: as
    ``_f`` spells each one (``x``'s figures taken as they come)."""
    assert _line_points([], 10, float, YScale(1000, None).heights) == ""
    line = [[0, 1, 0, 1], [1, 2, 3, 4], [5, 6, 4, 7]]  # (slots centred on 1, 2 and 5)
    centres = {1: -0.04, 2: 0.25, 5: 1e7 + 0.05}

    def x(i: float) -> float:
        return centres[int(i)]

    def y(v: Any) -> float:
        return float(v * 0.05 - 0.15)

    want = _points_reference(line, 4, x, y)
    assert want == "-0.0,-0.1 0.2,-0.0 0.2,0.1 10000000.1,0.2 10000000.1,0.2"
    assert _line_points(line, 4, x, lambda values: [y(v) for v in values]) == want


class _Int(int):
    """An int that spells itself as markup."""

    def __str__(self) -> str:
        return "<i>"

    def __format__(self, spec: str) -> str:
        return "<i>"


def _cutter_row_values() -> list[dict[str, Any]]:
    """Rows of a context cutter's report, most as a replay makes them, some not (a count
    that is no int, a flag that is no bool): each read as the table reads it."""
    base: dict[str, Any] = {
        "request": 1, "enabled": True, "messages_in": 12, "messages_out": 9,
        "tokens_in": 4000, "tokens_out": 3100, "dropped": 3, "continuity_dropped": 1,
        "budget_dropped": 2, "anchor": "found", "fallback": False,
        "budget_unreachable": False,
        "monitor": {"level": "CRITICAL", "metrics": None, "alert_reason": "a & b"},
    }
    changes: list[dict[str, Any]] = [
        {}, {"fallback": True, "anchor": "lost"}, {"anchor": "<b>"},
        {"enabled": False, "budget_unreachable": True},
        {"monitor": {"level": None, "metrics": {"used": 3}, "alert_reason": None}},
        {"monitor": {"level": "", "metrics": "x'y", "alert_reason": "\x1b[31m"}},
        {"tokens_out": -5}, {"dropped": 10**30},
        {"tokens_in": 4000.0}, {"dropped": True}, {"messages_in": "7<"},
        {"enabled": 1}, {"budget_unreachable": None}, {"budget_dropped": _Int(2)},
        {"request": _Int(3)},
    ]
    return [{**base, **change, "request": change.get("request", k + 1)}
            for k, change in enumerate(changes)]


def _requests_reference(rows: list[dict[str, Any]], failing: dict[Any, list[str]]) -> str:
    """The requests table as it was spelled: each row's cells, then :func:`_table`."""
    body = [_cutter_cells(r) for r in rows]
    for r, row in zip(rows, body, strict=True):
        row.append(", ".join(failing.get(r["request"], [])) or None)
    attrs = [f' id="req-{r["request"]}"' + (' class="failing"' if r["request"] in failing
                                           else "") for r in rows]
    return _table([*_CUTTER_HEAD, "first failure of"], body, attrs)


def test_the_cutter_requests_table_is_its_cells_joined() -> None:
    """The cutter's rows spelled at once (``_cutter_row``), the others cell by cell: the
    table each row's cells give (``_table``), failing rows marked and listed."""
    rows = _cutter_row_values()
    quick = [r for r in rows if _cutter_row(r, {}, {}) is not None]
    assert 0 < len(quick) < len(rows)  # (both spellings are used)
    for failing in ({}, {2: ["R1"], 5: ["R2", "<R3>"], 9: ["R4"]}):
        report = {"simulation": "context-cutter", "invariants": [
            {"id": i, "first_failure": {"request": req}}
            for req, ids in failing.items() for i in ids], "requests": rows}
        got = _requests_section(report, (rows, len(rows)))
        assert got == ["<h2>Requests</h2>", _requests_reference(rows, failing)]
