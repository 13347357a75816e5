"""A transition's or a runtime switch's gates, as ``promote``/``activate`` print them."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from risutools.catalog.promote import Plan


def render_plan(p: Plan, dry_run: bool) -> str:
    """The head line (component, file, from -> to, base hash), one row per gate (its verdict,
    name and reason), the notes, and why it was refused (or that a dry run passed)."""
    e = p.entry
    head = (f"{'runtime' if p.kind == 'runtime' else 'promote'} {e.component_id} "
            f"({e.where()}): {p.from_state or '(none)'} -> {p.to}  base {e.base_sha256[:19]}…")
    rows = [head]
    width = max((len(v.gate) for v in p.verdicts), default=4)
    for v in p.verdicts:
        mark = {"pass": "pass", "fail": "FAIL", "n/a": "n/a "}[v.verdict]
        rows.append(f"  {mark}  {v.gate.ljust(width)}  {v.reason}")
    rows.extend(f"  note: {n}" for n in p.notes)
    failed = [v.gate for v in p.verdicts if v.failed]
    if failed:
        rows.append(f"refused: {len(failed)} gate(s) failed ({', '.join(failed)})")
    elif dry_run:
        rows.append("dry run: every gate passes; nothing written")
    return "\n".join(rows)
