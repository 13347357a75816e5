"""The verdicts of the replay invariants and the summary that follows from them, in one
place: the replay writes its report's summary with :func:`summary_of`, and the reader of a
report (MC203, and through it gate G6) works it out again from the report's own invariants
before it trusts the verdict.  The severities come from the generated index
:data:`risutools.checks.ids.INVARIANT_SEVERITY` (a warning that failed -- R9 -- is
``warned``: it neither fails the replay nor leaves it unchecked).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from risutools.checks.ids import INVARIANT_SEVERITY

PASSED, FAILED, NOT_CHECKED = "passed", "failed", "not-checked"


def verdict_of(checked: int, failures: int) -> str:
    """The one rule for every verdict: a pass needs at least one check that ran."""
    if failures:
        return FAILED
    return PASSED if checked else NOT_CHECKED


def summary_verdict(verdicts: Iterable[str]) -> str:
    """A replay's verdict: failed if any check failed, passed if at least one ran, else
    not-checked (no applicable invariant: a replay that checked nothing never passes)."""
    seen = set(verdicts)
    if FAILED in seen:
        return FAILED
    return PASSED if PASSED in seen else NOT_CHECKED


def summary_of(invariants: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """What a report's summary says of its invariants (each with ``id`` and ``verdict``):
    its ``verdict``, ``failed_invariants``, ``warned_invariants`` and
    ``not_checked_invariants``."""
    invs = list(invariants)
    warned = [i["id"] for i in invs
              if i["verdict"] == FAILED and INVARIANT_SEVERITY.get(i["id"]) == "warning"]
    return {
        "verdict": summary_verdict(PASSED if i["id"] in warned else i["verdict"]
                                   for i in invs),
        "failed_invariants": [i["id"] for i in invs
                              if i["verdict"] == FAILED and i["id"] not in warned],
        "warned_invariants": warned,
        "not_checked_invariants": [i["id"] for i in invs if i["verdict"] == NOT_CHECKED],
    }
