"""Human-readable findings, grouped per file; ANSI colours only when asked for."""

from __future__ import annotations

from typing import TYPE_CHECKING

from risutools.contract.result import no_store_note, not_checked
from risutools.printable import no_commands, text_value
from risutools.report._common import summary_line
from risutools.report.color import painter

if TYPE_CHECKING:
    from risutools.contract.validate import Result


def render_text(result: Result, *, color: bool = False) -> str:
    """Findings grouped by file (files in order, findings by line), then a summary."""
    paint = painter(color)
    by_file: dict[str, list[str]] = {}
    for f in result.findings:
        where = f"{f.line}" if f.line else "-"
        ptr = f" {text_value(f.pointer)}" if f.pointer else ""
        sev = paint(f.severity, f"{f.severity:<7}")
        # a message quotes what the file holds: one line, no escape sequence of its own
        by_file.setdefault(text_value(f.file) if f.file else "(no file)", []).append(
            f"  {where:>5}  {sev} {paint('bold', f.rule)}{paint('dim', ptr)}  "
            f"{text_value(f.message)}"
        )
    lines: list[str] = []
    for file in sorted(by_file):
        lines.append(paint("bold", file))
        lines.extend(by_file[file])
        lines.append("")
    if result.command == "verify":
        unchecked = {id(v) for v in not_checked(result)}
        away = [v for v in result.verifications
                if v.status == "not_at_hand" and id(v) not in unchecked]
        note = no_store_note(result)
        if note:
            lines.append(paint("bold", note))
            lines.append("")
        if away:
            lines.append(paint("bold", "not verified (source not at hand):"))
            for v in away:
                loc = f"{v.file}:{v.line}" if v.line else v.file
                lines.append(f"  {text_value(loc)}  {text_value(v.component_id or '?')}  "
                             f"{text_value(v.source)}")
            lines.append("")
    status = result.verdict()[0]  # "failed" also for --strict warnings and unread files
    lines.append(f"{paint('error' if status == 'failed' else 'ok', status)}: "
                 f"{summary_line(result)}")
    return no_commands("\n".join(lines) + "\n")  # (a file named ::error::x.json)
