"""Human-readable findings, grouped per file; ANSI colours only when asked for."""

from __future__ import annotations

from typing import TYPE_CHECKING

from risutools.contract.result import no_store_note, not_checked
from risutools.printable import text_value
from risutools.report._common import summary_line

if TYPE_CHECKING:
    from risutools.contract.validate import Result

_COLOURS = {"error": "\x1b[31m", "warning": "\x1b[33m", "info": "\x1b[36m"}
_BOLD = "\x1b[1m"
_DIM = "\x1b[2m"
_RESET = "\x1b[0m"


def render_text(result: Result, *, color: bool = False) -> str:
    """Findings grouped by file (files in order, findings by line), then a summary."""

    def paint(code: str, s: str) -> str:
        return f"{code}{s}{_RESET}" if color else s

    by_file: dict[str, list[str]] = {}
    for f in result.findings:
        where = f"{f.line}" if f.line else "-"
        ptr = f" {text_value(f.pointer)}" if f.pointer else ""
        sev = paint(_COLOURS.get(f.severity, ""), f"{f.severity:<7}")
        # a message quotes what the file holds: one line, no escape sequence of its own
        by_file.setdefault(text_value(f.file) if f.file else "(no file)", []).append(
            f"  {where:>5}  {sev} {paint(_BOLD, f.rule)}{paint(_DIM, ptr)}  "
            f"{text_value(f.message)}"
        )
    lines: list[str] = []
    for file in sorted(by_file):
        lines.append(paint(_BOLD, file))
        lines.extend(by_file[file])
        lines.append("")
    if result.command == "verify":
        unchecked = {id(v) for v in not_checked(result)}
        away = [v for v in result.verifications
                if v.status == "not_at_hand" and id(v) not in unchecked]
        note = no_store_note(result)
        if note:
            lines.append(paint(_BOLD, note))
            lines.append("")
        if away:
            lines.append(paint(_BOLD, "not verified (source not at hand):"))
            for v in away:
                loc = f"{v.file}:{v.line}" if v.line else v.file
                lines.append(f"  {text_value(loc)}  {text_value(v.component_id or '?')}  "
                             f"{text_value(v.source)}")
            lines.append("")
    status = result.verdict()[0]  # "failed" also for --strict warnings and unread files
    colour = _COLOURS["error"] if status == "failed" else "\x1b[32m"
    lines.append(f"{paint(colour, status)}: {summary_line(result)}")
    return "\n".join(lines) + "\n"
