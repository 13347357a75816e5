"""From a command's result to what the command line writes: the report (to standard output
or ``-o FILE``) and the lines before it on standard error.

:func:`present` dispatches on the result's ``kind`` (each result type of
``risutools.commands`` names its kind); the renderers it calls are the reporter table's
(:mod:`risutools.report.reporters`).  Nothing here runs a command or decides an exit code.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from risutools.canonical import canonical, document_json
from risutools.pathnames import safe_line
from risutools.report._common import one_line
from risutools.report.inspect_text import render_inspect_text
from risutools.report.reporters import render
from risutools.report.rules_text import page, rule_lines
from risutools.report.statistics import render_statistics

if TYPE_CHECKING:
    from risutools.commands.analyze import Analyzed
    from risutools.commands.hash import HashResult
    from risutools.commands.inspect import InspectResult
    from risutools.commands.pack import Packed
    from risutools.commands.project import Projected
    from risutools.commands.rule import RuleResult
    from risutools.commands.unpack import Unpacked
    from risutools.commands.validate import Validation
    from risutools.errors import RisuError


@dataclass
class Rendered:
    """What to write: ``out`` (None: nothing) and the lines for standard error, written
    before it (``err_first``) or after it (a summary first, then its warnings)."""

    out: str | None
    err: list[str] = field(default_factory=list)
    err_first: bool = True


def _findings(v: Validation, *, fmt: str, output: str | None, color: bool,
              statistics: bool) -> Rendered:
    """validate and verify: what ``--fix`` did, verify's note when no source was checked
    (the text report says it itself), one line per path that could not be read, then the
    report -- except a text report on standard output when nothing at all could be read
    (the lines say it all)."""
    result, err = v.result, []
    if v.fixed is not None:
        err += [f"risutools: {note}" for note in v.fixed.notes]
        per_rule = ", ".join(f"{r} {n}" for r, n in sorted(v.fixed.fixed.items()))
        err.append(f"fixed {v.fixed.total} finding(s) in {len(v.fixed.files)} file(s)"
                   + (f" ({per_rule})" if per_rule else ""))
    if v.note and (fmt != "text" or statistics or output):
        err.append(f"risutools: verify: {v.note}")
    unreadable = result.unreadable()
    err += [safe_line(f"risutools: {f.file}: {f.rule}: {f.message}") for f in unreadable]
    nothing_read = not result.files and not result.documents
    if fmt == "text" and output is None and nothing_read and unreadable:
        return Rendered(None, err)
    text = (render_statistics(result, fmt) if statistics
            else render(fmt, result, color=color))
    return Rendered(text, err)


def refusal(exc: RisuError) -> str:
    """The one line a refused input gets: ``risutools: <file>: <where>: <code>: <why>``."""
    return safe_line(f"risutools: {exc.one_line()}")


def _hash(h: HashResult, **_: Any) -> Rendered:
    err: list[str] = []
    lines: list[str] = []
    for f in h.files:
        if f.error is not None:
            err.append(refusal(f.error))
        err += [safe_line(f"risutools: {p}") for p in f.problems]
        lines += f.lines
    return Rendered("".join(x + "\n" for x in lines), err)


def _inspect(r: InspectResult, **_: Any) -> Rendered:
    err = [refusal(f.error) for f in r.files if f.error is not None]
    if r.as_json:
        doc = [f.to_dict() for f in r.files]
        return Rendered(json.dumps(doc, ensure_ascii=False, indent=2, sort_keys=True) + "\n", err)
    out: list[str] = []
    for f in r.files:
        if f.error is not None:
            continue
        if not f.summaries:
            out.append(f"{f.path}\n  character card without module.risum: no module to inspect")
        out += [render_inspect_text(s) for s in f.summaries]
    return Rendered("".join(x + "\n" for x in out), err)


def _unpack(u: Unpacked, **_: Any) -> Rendered:
    m = u.manifest

    def wrote(key: str) -> tuple[int, int]:
        items = [a for a in m.get(key) or [] if isinstance(a, dict)]
        return sum(1 for a in items if a.get("file")), sum(1 for a in items if not a.get("file"))

    written, missing = wrote("assets")
    what = "module.json" if m.get("module") else "no module (card without module.risum)"
    parts = [what, f"{written} asset file(s)" + (f" ({missing} without data)" if missing else "")]
    if "card_assets" in m:
        card, skipped = wrote("card_assets")
        parts.append("card.json" if m.get("card") else "no card.json")
        parts.append(f"{card} card asset file(s)" + (f" ({skipped} skipped)" if skipped else ""))
    err = []
    for w in m.get("anomalies") or []:
        where = f"{w.get('where')}: " if w.get("where") else ""
        err.append(one_line(f"warning: {u.file}: {where}{w.get('code')}: {w.get('message')}"))
    for a in m.get("card_assets") or []:
        if isinstance(a, dict) and not a.get("file"):
            err.append(one_line(f"warning: {u.file}: card asset {a.get('member')!r} not written: "
                                f"{a.get('skipped')}"))
    return Rendered(f"unpacked {u.file} -> {u.out}: {', '.join(parts)}, manifest.json\n", err,
                    err_first=False)


def _pack(p: Packed, **_: Any) -> Rendered:
    return Rendered(f"packed {p.src} -> {p.out} ({p.size} bytes)\n")


def _analysis(a: Analyzed, *, fmt: str, output: str | None, color: bool,
              statistics: bool) -> Rendered:
    """analyze: every format renders the files merged, but text and JSON, which show each
    file's facts (several files in JSON: an array of the per-file objects)."""
    err = [refusal(e) for e in a.refused]
    if statistics:
        return Rendered(render_statistics(a.merged, fmt), err)
    if fmt not in ("text", "json"):
        return Rendered(render(fmt, a.merged, color=color), err)
    if fmt == "json" and a.given > 1:
        doc = [json.loads(render(fmt, r)) for r in a.results]
        return Rendered(json.dumps(doc, ensure_ascii=False, indent=1) + "\n", err)
    return Rendered("".join(render(fmt, r, color=color) for r in a.results), err)


def _rule(r: RuleResult, **_: Any) -> Rendered:
    return Rendered(page(r.page, r.example) if r.page is not None else rule_lines(r.listed))


def _project(p: Projected, **_: Any) -> Rendered:
    """The files written, or the document (several: one canonical NDJSON line each, a
    catalog ``validate`` reads as is)."""
    if p.written:
        return Rendered("", [f"wrote {path}" for path in p.written])
    if len(p.documents) == 1:
        return Rendered(document_json(p.documents[0]))
    return Rendered("".join(canonical(d).decode("utf-8") + "\n" for d in p.documents))


_PRESENTERS: dict[str, Callable[..., Rendered]] = {
    "project": _project,
    "rule": _rule,
    "analysis": _analysis,
    "findings": _findings,
    "hash": _hash,
    "inspect": _inspect,
    "unpack": _unpack,
    "pack": _pack,
}


def present(result: Any, **how: Any) -> Rendered:
    """``result`` as its kind's presenter writes it (``fmt``, ``output``, ``color``,
    ``statistics`` as the command line gave them)."""
    return _PRESENTERS[result.kind](result, **how)
