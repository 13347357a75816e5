"""A transition's or a runtime switch's gates, as ``promote``/``activate`` print them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from risutools.printable import text_value

if TYPE_CHECKING:
    from risutools.catalog.promote import Plan


def render_plan(p: Plan, dry_run: bool) -> str:
    """The head line (component, file, from -> to, base hash), one row per gate (its verdict,
    name and reason), the notes, and why it was refused (or that a dry run passed)."""
    e = p.entry
    verb = {"runtime": "runtime", "publish": "publish"}.get(p.kind, "promote")
    head = (f"{verb} {text_value(e.component_id)} "
            f"({text_value(e.where())}): {text_value(p.from_state or '(none)')} -> {p.to}  "
            f"base {e.base_sha256[:19]}…")
    rows = [head]
    width = max((len(v.gate) for v in p.verdicts), default=4)
    for v in p.verdicts:
        mark = {"pass": "pass", "fail": "FAIL", "n/a": "n/a "}[v.verdict]
        # a reason quotes catalog values (ids, reviewer names, log fields): one line each
        rows.append(f"  {mark}  {v.gate.ljust(width)}  {text_value(v.reason)}")
    rows.extend(f"  note: {text_value(n)}" for n in p.notes)
    failed = [v.gate for v in p.verdicts if v.failed]
    if failed:
        rows.append(f"refused: {len(failed)} gate(s) failed ({', '.join(failed)})")
    elif dry_run:
        rows.append("dry run: every gate passes; nothing written")
    return "\n".join(rows)
