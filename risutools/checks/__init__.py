"""The check registry: every id the toolkit reports (MC rules, RA findings, replay
invariants R1-R8 and M1-M3, the promotion and runtime gates G1-G13, the review's
catalog findings RV101-RV305), declared once.

See :mod:`risutools.checks.registry` for the model, ``docs/contract.md`` ("The check
registry") for how a check is added, and ``python -m risutools.checks.docs`` for the
generated documentation tables.
"""

from risutools.checks.registry import (
    REGISTRY,
    Check,
    RuleFilter,
    all_checks,
    check,
    declare,
    get,
    of_family,
)

__all__ = [
    "REGISTRY",
    "Check",
    "RuleFilter",
    "all_checks",
    "check",
    "declare",
    "get",
    "of_family",
]
