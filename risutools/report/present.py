"""From a command's result to what the command line writes: the report (to standard output
or ``-o FILE``) and the lines before it on standard error.

:func:`present` dispatches on the result's ``kind`` (each result type of
``risutools.commands`` names its kind); the renderers it calls are the reporter table's
(:mod:`risutools.report.reporters`).  Nothing here runs a command or decides an exit code.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from risutools.canonical import canonical, document_json
from risutools.pathnames import safe_line, show_name
from risutools.printable import json_bytes_text, json_text, text_value
from risutools.report._common import line_pieces, one_line
from risutools.report.ingest_text import render_summary
from risutools.report.inspect_text import render_inspect_text
from risutools.report.plan_text import render_plan
from risutools.report.reporters import render, render_pieces
from risutools.report.rules_text import page, rule_lines
from risutools.report.statistics import fixable_line, render_statistics

if TYPE_CHECKING:
    from risutools.commands.analyze import Analyzed
    from risutools.commands.approve import Approved
    from risutools.commands.hash import HashResult
    from risutools.commands.ingest import Ingested
    from risutools.commands.inspect import InspectResult
    from risutools.commands.notes_init import NotesWritten
    from risutools.commands.pack import Packed
    from risutools.commands.packet import Packets
    from risutools.commands.project import Projected
    from risutools.commands.promote import Switched
    from risutools.commands.replay_monitor import Monitored
    from risutools.commands.replay_run import Replayed
    from risutools.commands.replay_synth import Synthesized
    from risutools.commands.review import Reviewed
    from risutools.commands.rule import RuleResult
    from risutools.commands.unpack import Unpacked
    from risutools.commands.validate import Validation
    from risutools.errors import RisuError


@dataclass
class Rendered:
    """What to write: ``out`` (None: nothing) and the lines for standard error, written
    before it (``err_first``) or after it (a summary first, then its warnings)."""

    #: the text, or its pieces in order (written as they come; a piece of bytes: UTF-8)
    out: str | Iterable[str | bytes] | None
    #: (a list, or lines made as they are written: ``hash``'s)
    err: Iterable[str] = field(default_factory=list)
    err_first: bool = True
    #: files to write besides (``ingest --report FILE``: the run as JSON), first
    files: list[tuple[str, str]] = field(default_factory=list)
    #: a view printed by the terminal library itself (``ingest``'s summary table), last
    show: Callable[[], None] | None = None


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
    err += [safe_line(f"risutools: {f.file}: {f.code or f.rule}: {f.message}")
            for f in unreadable]
    nothing_read = not result.files and not result.documents
    if fmt == "text" and output is None and nothing_read and unreadable:
        return Rendered(None, err)
    text = (render_statistics(result, fmt, color=color) if statistics
            else render(fmt, result, color=color))
    if v.fixable and fmt in ("text", "concise"):  # for people, as ruff says it
        text += fixable_line(v.fixable, color=color)
    return Rendered(text, err)


def refusal(exc: RisuError) -> str:
    """The one line a refused input gets: ``risutools: <file>: <where>: <code>: <why>``."""
    return safe_line(f"risutools: {exc.one_line()}")


def _hash(h: HashResult, **_: Any) -> Rendered:
    """The lines and the problems read back from their spools as they are written: nothing
    of a long file's is held whole (``hash`` of a 58 MB NDJSON file held 1 GB)."""
    def err() -> Iterator[str]:
        for f in h.files:
            if f.error is not None:
                yield refusal(f.error)
            yield from (safe_line(f"risutools: {p['line']}") for p in f.problems)

    def out() -> Iterator[str | bytes]:  # (each one line, whatever a command put in it;
        # nothing for a file that gave none, as sha256sum prints nothing for it)
        return line_pieces((safe_line(r["line"]) for f in h.files for r in f.lines), none="")

    return Rendered(out(), err())


def _inspect(r: InspectResult, **_: Any) -> Rendered:
    err = [refusal(f.error) for f in r.files if f.error is not None]
    if r.as_json:
        doc = [f.to_dict() for f in r.files]
        return Rendered(json_text(json.dumps(doc, ensure_ascii=False, indent=2, sort_keys=True))
                        + "\n", err)
    out: list[str] = []
    for f in r.files:
        if f.error is not None:
            continue
        if not f.summaries:
            out.append(f"{show_name(f.path)}\n  character card without module.risum: no module "
                       "to inspect")
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
    return Rendered(f"unpacked {show_name(u.file)} -> {show_name(u.out)}: {', '.join(parts)}, "
                    "manifest.json\n", err,
                    err_first=False)


def _pack(p: Packed, **_: Any) -> Rendered:
    return Rendered(f"packed {show_name(p.src)} -> {show_name(p.out)} ({p.size} bytes)\n")


def _analysis(a: Analyzed, *, fmt: str, output: str | None, color: bool,
              statistics: bool) -> Rendered:
    """analyze: every format renders the files merged, but text and JSON, which show each
    file's facts (several files in JSON: an array of the per-file objects)."""
    err = [refusal(e) for e in a.refused]
    if statistics:
        return Rendered(render_statistics(a.merged, fmt, color=color), err)
    if fmt not in ("text", "json"):
        return Rendered(render(fmt, a.merged, color=color), err)
    if fmt == "json" and a.given > 1:
        doc = [json.loads(render(fmt, r)) for r in a.results]
        return Rendered(json_text(json.dumps(doc, ensure_ascii=False, indent=1)) + "\n", err)
    return Rendered("".join(render(fmt, r, color=color) for r in a.results), err)


def _rule(r: RuleResult, **_: Any) -> Rendered:
    return Rendered(page(r.page, r.example) if r.page is not None else rule_lines(r.listed))


def _project(p: Projected, **_: Any) -> Rendered:
    """The files written, or the document (several: one canonical NDJSON line each, a
    catalog ``validate`` reads as is)."""
    if p.written:
        return Rendered("", [f"wrote {show_name(path)}" for path in p.written])
    # (JSON on a terminal: a module's C1 control or bidi override as a \uXXXX escape, the
    # same values)
    if len(p.documents) == 1:
        return Rendered(json_text(document_json(p.documents[0])))
    return Rendered("".join(json_bytes_text(canonical(d)) + "\n" for d in p.documents))


def _approve(a: Approved | NotesWritten, **_: Any) -> Rendered:
    return Rendered(text_value(a.line) + "\n")  # (it names the component and its version)


def _switch(s: Switched, **_: Any) -> Rendered:
    """The gates (text, or JSON with ``--json``) and what was written; a write that lost its
    compare-and-swap: the gates, then the one line saying so."""
    p = s.plan
    if s.conflict is not None:
        if s.as_json:
            body = json_text(json.dumps({**p.to_dict(), "ok": False,
                                         "error": s.conflict.one_line()},
                                        ensure_ascii=False, indent=1))
        else:
            body = render_plan(p, s.dry_run)
        return Rendered(body + "\n", [refusal(s.conflict)], err_first=False)
    if s.as_json:
        d = p.to_dict()
        d["written"] = bool(s.done)
        return Rendered(json_text(json.dumps(d, ensure_ascii=False, indent=1, sort_keys=True))
                        + "\n")
    return Rendered(render_plan(p, s.dry_run) + "\n"
                    + (text_value(s.done) + "\n" if s.done else ""))


def _packet(r: Packets, **_: Any) -> Rendered:
    if r.record is not None:
        rec = r.record
        return Rendered(f"queued {rec['queued']} light packet(s) of {rec['matched']} {r.status} "
                        f"component(s) in {show_name(r.queue or '')}; hand-off record "
                        f"{show_name(r.handoff or '')}"
                        + (f" ({rec['left_out']} left out by --limit)" if rec["left_out"] else "")
                        + "\n")
    assert r.packet is not None and r.files is not None
    p, (jpath, mpath) = r.packet, r.files
    extra = ""
    if p["needs_full_context"]:
        why = ", ".join(sorted({text_value(n["reason"]) for n in p["needs_full_context"]}))
        extra = f"; needs_full_context ({why})"
    return Rendered(f"wrote {show_name(jpath)} and {show_name(mpath)} "
                    f"(task {text_value(p['task']['id'])}, {r.lane} lane{extra})\n")


def _review(r: Reviewed, *, fmt: str, color: bool = False, statistics: bool = False,
            **_: Any) -> Rendered:
    """The review in ``fmt``; ``--statistics``: the count of each finding instead."""
    if statistics:
        return Rendered(render_statistics(r.review.result, fmt))
    return Rendered(render_pieces(fmt, r.review, color=color, kind=r.kind))


def _replay_run(r: Replayed, **_: Any) -> Rendered:
    o = r.outcome
    if o.report is None:
        return Rendered(text_value(o.message) + "\n")
    s = o.report["summary"]
    failed = ", ".join(s["failed_invariants"]) or "none"
    warned = ", ".join(s.get("warned_invariants", []))
    lines = [f"{o.simulation}: {s['requests']} request(s), verdict {s['verdict']} "
             f"(failed invariants: {failed}" + (f"; warnings: {warned}" if warned else "")
             + f"); report {show_name(o.written[0])}"]
    if o.updated:
        logged = "" if o.log_line is None else \
            f" (evidence, transitions.ndjson line {o.log_line}: the next approval names " \
            "the new base hash)"
        lines.append(f"updated {show_name(r.component)}{logged}")
    elif o.message:
        lines.append(text_value(o.message))
    return Rendered("".join(x + "\n" for x in lines))


def _replay_monitor(m: Monitored, **_: Any) -> Rendered:
    return Rendered(_monitor_lines(m.report))


def _monitor_lines(report: dict[str, Any]) -> Iterator[str]:
    """A line a request (and what an alert injects), the notes, then the counts: written
    as they are made (a streamed report's rows are read back from its spool once)."""
    injected = {a["request"]: a.get("additional_context", "") for a in report["alerts"]}
    for row in report["requests"]:
        mon = row["monitor"]
        level = mon["level"] or f"({mon['metrics']} metrics)"
        used = "-" if mon["used_pct"] is None else f"{mon['used_pct']:.1f}%"
        alert = f"  ALERT ({mon['alert_reason']})" if mon["alert"] else ""
        yield (f"request {row['request']:>5}  {row['tokens_in']:>8} tokens  {used:>7}  "
               f"{level}{alert}\n")
        if row["request"] in injected:  # what the alert injects, as the agent reads it
            yield f"  additionalContext: {text_value(injected[row['request']])}\n"
    for n in report.get("monitor_notes", []):
        yield f"note: {text_value(n)}\n"
    summary = report["summary"]
    comp = report.get("component")
    tied = f"; {text_value(comp['component_id'])} at {comp['doc_sha256']}" if comp else ""
    yield f"{summary['requests']} request(s), {summary['alerts']} alert(s){tied}\n"


def _replay_synth(s: Synthesized, **_: Any) -> Rendered:
    return Rendered(f"wrote {show_name(s.output)}: {len(s.data['turns'])} turn(s), {s.messages} "
                    "messages, "
                    f"{s.size} bytes\n")


def _ingest(i: Ingested, *, as_json: bool, quiet: bool, report: str | None,
            elapsed: Callable[[], float], color: bool, **_: Any) -> Rendered:
    """The run as JSON (``--json``, and the ``--report`` file), the summary table, or with
    ``-q`` only what failed, collided, was kept or is worth a notice."""
    r = i.result
    text = (json_text(json.dumps(r.to_dict(), ensure_ascii=False, indent=1)) + "\n"
            if as_json or report else "")  # (not made when nothing shows it)
    files = [(report, text)] if report else []
    if as_json:
        return Rendered(text, files=files)
    if not quiet:
        return Rendered(None, files=files, show=lambda: render_summary(r, elapsed(), color=color))
    err = [f"failed: {s.error}" for s in r.failures]
    err += [*r.collisions, *r.kept_unreadable, *r.notices]
    return Rendered(None, err, files=files)


_PRESENTERS: dict[str, Callable[..., Rendered]] = {
    "ingest": _ingest,
    "replay-run": _replay_run,
    "replay-monitor": _replay_monitor,
    "replay-synth": _replay_synth,
    "review": _review,
    "packet": _packet,
    "approve": _approve,
    "notes": _approve,
    "switch": _switch,
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
