"""Helpers shared by the findings renderers (text, concise, json, github, sarif, junit)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from risutools.printable import display

if TYPE_CHECKING:
    from risutools.contract.validate import Result


def one_line(text: str) -> str:
    """``text`` on one line: line breaks, other control characters and bidi/format
    characters escaped; spaces of every script (U+3000 ...) kept as they are."""
    return display(text)


def summary_line(result: Result) -> str:
    c = result.counts()
    unit = "module" if result.command == "analyze" else "document"
    parts = [
        f"{c['errors']} error{'s' if c['errors'] != 1 else ''}",
        f"{c['warnings']} warning{'s' if c['warnings'] != 1 else ''}",
        f"{c['documents']} {unit}{'s' if c['documents'] != 1 else ''}",
        f"{c['files']} file{'s' if c['files'] != 1 else ''}",
    ]
    line = ", ".join(parts)
    if result.skipped:
        line += f" ({len(result.skipped)} non-document file(s) skipped)"
    if result.command == "verify":
        v = result.verifications
        ok = sum(1 for x in v if x.status == "verified")
        bad = sum(1 for x in v if x.status == "mismatch")
        away = sum(1 for x in v if x.status == "not_at_hand")
        line += f"; digests: {ok} verified, {bad} mismatched, {away} not at hand"
    return line + result.verdict()[1]
