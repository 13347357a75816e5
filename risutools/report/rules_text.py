"""``risutools rule [ID]``: one check's page, or a list of checks, as text."""

from __future__ import annotations

import textwrap
from collections.abc import Iterable

from risutools.checks.registry import Check


def _wrap(label: str, text: str) -> list[str]:
    return textwrap.wrap(f"{label}{text}", 88, subsequent_indent="  ",
                         break_long_words=False, break_on_hyphens=False)


def page(c: Check, example: str | None) -> str:
    """A check's page: what, why, how to fix, whether ``validate --fix`` fixes it, and its
    first firing case (``example``) when it has one."""
    lines = [f"{c.id} {c.title} ({c.severity}, scope: {c.scope})", ""]
    lines += [*_wrap("", c.summary), ""]
    lines += [*_wrap("Why: ", c.why), ""]
    lines += _wrap("Fix: ", c.fix)
    if c.fixable:
        lines += _wrap("", "Fixable: `risutools validate --fix` applies the exact fix (candidates "
                       "only; review state is never written).")
    if example:
        lines += ["", "Example (fires):"]
        lines += ["  " + ln for ln in example.splitlines()]
    return "\n".join(lines) + "\n"


def rule_lines(checks: Iterable[Check]) -> str:
    """One line per check: id, severity, scope, ``[*]`` when ``validate --fix`` fixes it,
    title, summary (cut to one line)."""
    out = []
    for c in checks:
        summary = c.summary if len(c.summary) <= 60 else c.summary[:59] + "…"
        mark = "[*]" if c.fixable else "   "
        out.append(f"{c.id:<6} {c.severity:<7} {c.scope:<9} {mark} {c.title:<28} {summary}")
    return "\n".join(out) + "\n"
