"""Findings sort by their places with numbers as numbers: ``/modules/2`` before
``/modules/10``, ``trigger[2]`` before ``trigger[10]`` (as text, 10 came first)."""

from __future__ import annotations

import pytest

from risutools.findings import Finding, in_number_order, sorted_findings


@pytest.mark.parametrize(("first", "then"), [
    ("/modules/2", "/modules/10"),
    ("/a/1/b", "/a/2"),
    ("/a/9", "/a/b"),  # (text after a number stays text: digits sort before letters)
    ("/a", "/a/0"),
    ("trigger[2].effect[1] line 41", "trigger[10].effect[0] line 4"),
    ("lorebook[3] line 9", "lorebook[3] line 10"),
    ("/x/" + "9" * 40, "/x/" + "1" + "0" * 40),  # long runs: no number made, order kept
    ("/x/5", "/x/5x"),
    ("", "/"),
])
def test_places_in_number_order(first: str, then: str) -> None:
    assert in_number_order(first) < in_number_order(then)
    assert not in_number_order(then) < in_number_order(first)


def test_findings_sorted_by_pointer_and_evidence_as_numbers() -> None:
    at = [Finding("MC201", "error", "m", file="d.json", pointer=f"/capabilities/{i}")
          for i in (10, 2, 1, 33)]
    assert [f.pointer for f in sorted_findings(at)] == [
        "/capabilities/1", "/capabilities/2", "/capabilities/10", "/capabilities/33"]
    ev = [Finding("RA101", "warning", "m", evidence=f"trigger[{i}].effect[0] line {n}")
          for i, n in ((10, 5), (2, 30), (2, 4))]
    assert [f.evidence for f in sorted_findings(ev)] == [
        "trigger[2].effect[0] line 4", "trigger[2].effect[0] line 30",
        "trigger[10].effect[0] line 5"]
    # the line still comes before the place, the file before the line
    mixed = [Finding("MC201", "error", "m", file="b", line=1, pointer="/a/1"),
             Finding("MC201", "error", "m", file="a", line=9, pointer="/a/2"),
             Finding("MC201", "error", "m", file="a", line=3, pointer="/a/10")]
    assert [(f.file, f.line) for f in sorted_findings(mixed)] == [("a", 3), ("a", 9), ("b", 1)]
