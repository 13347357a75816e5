"""The HTML page's quick spellings are its reference ones: a table cell (``_cell``) is
``html_value(_txt(v))`` whatever the value, and the chart's lines' y (``YScale.y_of``) is
``YScale.y`` to the last bit, on every scale."""

from __future__ import annotations

import random
from typing import Any

import pytest

from risutools.printable import html_value
from risutools.replay.render_html import YScale, _cell, _line_points, _table, _txt, y_scale

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


@pytest.mark.parametrize("scale", [(1200, 0, 900), (8000, 7000, 400000), (1000, 900, 1500),
                                   (100, 100, 10**7), (128000, 0, 0)])
def test_the_lines_y_is_y(scale: tuple[int, int, int]) -> None:
    ys = y_scale(*scale)
    y_at = ys.y_of()
    rng = random.Random(sum(scale))
    top = max(ys.log_top or 0, ys.lin_top) * 3
    values: list[float] = [0, 1, ys.lin_top - 1, ys.lin_top, ys.lin_top + 1, top]
    values += [rng.randrange(0, top) for _ in range(2000)]
    values += [rng.uniform(0, top) for _ in range(500)]
    if ys.log_top:
        values += [ys.log_top, ys.log_top + 1, float(ys.lin_top)]
    for v in values:
        assert y_at(v).hex() == ys.y(v).hex(), v


def test_the_lines_y_without_a_log_band_past_its_top() -> None:
    ys = YScale(1000, None)
    for v in (999, 1000, 1001, 5000.5):
        assert ys.y_of()(v).hex() == ys.y(v).hex()


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
    y = YScale(5000, 10**6).y_of()
    for first, second in (lines, lines[::-1]):
        xs: dict[int, str] = {}
        assert _line_points(first, n, x, y, xs) == _points_reference(first, n, x, y)
        assert _line_points(second, n, x, y, xs) == _points_reference(second, n, x, y)
        assert _line_points(second, n, x, y) == _points_reference(second, n, x, y)
