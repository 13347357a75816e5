"""``--statistics``: how many findings each check gave (ruff's ``--statistics``).

Text: one line per id, the most frequent first (then by id): count, id, ``[*]`` when
``validate --fix`` fixes it, title.  JSON: an array of ``{code, name, count, fixable}``.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import TYPE_CHECKING

from risutools.checks.registry import registered_checks, sort_key
from risutools.report.color import painter

if TYPE_CHECKING:
    from risutools.contract.validate import Result

STATISTICS_FORMATS = ("text", "concise", "json")


def _rows(result: Result) -> list[tuple[str, int, str, bool]]:
    checks = result.checks or registered_checks()
    counts = Counter(f.rule for f in result.findings)
    ordered = sorted(counts, key=lambda r: (-counts[r], sort_key(r)))
    out = []
    for rid in ordered:
        c = checks.get(rid)
        out.append((rid, counts[rid], c.title if c else "", bool(c and c.fixable)))
    return out


def render_statistics(result: Result, fmt: str, *, color: bool = False) -> str:
    """The count per id, then (text) the total: ``Found N findings (E errors, W warnings).``"""
    rows = _rows(result)
    if fmt == "json":
        return json.dumps([{"code": r, "name": t, "count": n, "fixable": f}
                           for r, n, t, f in rows], indent=1) + "\n"
    paint = painter(color)
    width = max((len(str(n)) for _, n, _, _ in rows), default=1)
    lines = [f"{paint('bold', f'{n:>{width}}')}  {paint('bold', f'{r:<6}')} "
             f"{'[*]' if f else '   '} {t}" for r, n, t, f in rows]
    c = result.counts()
    total = len(result.findings)
    lines.append(f"Found {total} finding{'s' if total != 1 else ''} ({c['errors']} "
                 f"error{'s' if c['errors'] != 1 else ''}, {c['warnings']} "
                 f"warning{'s' if c['warnings'] != 1 else ''}).")
    return "\n".join(lines) + "\n"


def fixable_line(n: int, *, color: bool = False) -> str:
    """ruff's hint: ``[*] N fixable with `risutools validate --fix`.``"""
    return f"{painter(color)('ok', '[*]')} {n} fixable with `risutools validate --fix`.\n"
