"""An error line that quotes what it was given stays one readable line however long that
was: past ``MAX_WHY`` characters its reason shows its head and its tail (where the advice
is) and how many characters were left out.  Once, ``--select`` with a 5,000-character id
echoed all of it, and so did an unknown command or option value."""

from __future__ import annotations

from pathlib import Path

import pytest
from harness import run_cli

from risutools.errors import MAX_WHY, Code, ConfigError, bounded

ROOT = Path(__file__).parents[1]
MODULE = ROOT / "fixtures" / "sources" / "174678332_context-cutter.risum"
HUGE = "X" * 5000


def test_bounded_keeps_head_tail_and_the_count() -> None:
    assert bounded("short") == "short"
    assert bounded("a" * MAX_WHY) == "a" * MAX_WHY
    text = "h" * 3000 + "the advice"
    shown = bounded(text)
    assert len(shown) < MAX_WHY + 60
    assert shown.startswith("h" * 700) and shown.endswith("the advice")
    assert f"({len(text) - 900:,} characters not shown)" in shown


def test_an_errors_one_line_is_bounded() -> None:
    err = ConfigError(Code.UNKNOWN_RULE, f"no rule matches {HUGE!r} (see the list)",
                      where=HUGE)
    line = err.one_line()
    assert len(line) < 2 * MAX_WHY + 200
    assert line.endswith("(see the list)")


@pytest.mark.parametrize("args", [
    ("analyze", str(MODULE), "--select", HUGE),
    ("analyze", str(MODULE), "--ignore", "RA1," + HUGE),
    (HUGE,),  # an unknown command
    ("validate", "-f", HUGE, str(MODULE)),  # a value out of its choices
    ("review", "--jobs", "9" * 5000),  # a number out of its range
])
def test_a_huge_value_gives_one_bounded_line(args: tuple[str, ...]) -> None:
    res = run_cli(*args)
    assert res.returncode == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("risutools"), lines
    assert len(lines[0]) < MAX_WHY + 300, len(lines[0])
    assert "characters not shown" in lines[0]
