"""The backtracking checks of one module's patterns share a step budget
(``walk_text.MODULE_PATTERN_STEPS``), besides each pattern's own: 8,000 distinct patterns of
800 characters built to be slow took ``analyze`` 37 s on a module of 8.6 MB (the fuzzer's
finding; at 20 s a MB, the 64 MiB bound would have been 20 minutes).  Past the budget a
pattern is not checked and one RA205 (a warning) says so; the real corpus's largest module takes
4,128 steps of the 12 million."""

from __future__ import annotations

import time

import pytest

from risutools.analysis import analyze, walk_text
from risutools.formats.model import Module

SLOW = "(" + "|".join(["\\w+"] * 200) + ")*x{}"


def _module(n: int) -> Module:
    return Module({"name": "rx", "id": "rx", "regex": [
        {"comment": "", "in": SLOW.format(k), "out": "", "type": "editdisplay", "flag": "g"}
        for k in range(n)]})


def _risky(a: object) -> int:
    """The patterns found risky (each one RA201 a shape, named by its place)."""
    return len({f.evidence for f in a.findings if f.rule == "RA201"})  # type: ignore[attr-defined]


def test_many_slow_patterns_are_checked_within_the_modules_budget() -> None:
    t0 = time.process_time()
    a = analyze(_module(2_000))
    took = time.process_time() - t0
    unchecked = [f for f in a.findings if f.rule == "RA205" and "steps to check" in f.message]
    assert len(unchecked) == 1, [f.message for f in a.findings if f.rule == "RA205"][:3]
    assert "not checked" in unchecked[0].message
    # (the budget, not the patterns' number: 2,000 of them took 9 s before; a generous
    # bound for a slow machine, never a timed test of speed)
    assert took < 6, took


@pytest.mark.parametrize("n", [1, 20])
def test_a_few_patterns_are_all_checked(n: int) -> None:
    a = analyze(_module(n))
    assert not [f for f in a.findings if f.rule == "RA205" and "steps to check" in f.message]
    assert _risky(a) == n  # (each is a risk: checked)


def test_the_budget_is_charged_what_each_check_took(monkeypatch: pytest.MonkeyPatch) -> None:
    """With room for one pattern's own allowance (each check takes about a third of it),
    the first few are checked and the rest are not."""
    one = walk_text.steps_allowed(len(SLOW.format(0)))
    monkeypatch.setattr(walk_text, "MODULE_PATTERN_STEPS", one)
    a = analyze(_module(10))
    assert 1 <= _risky(a) < 10
    assert any(f.rule == "RA205" and "steps to check" in f.message for f in a.findings)
