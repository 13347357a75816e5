"""``risutools review CATALOG``: everything wrong, duplicated, in conflict or ready, read-only.

Sections of the result (``catalog-review-v1``):
- ``documents``: per document the contract findings (MC100-MC600, MC104, MC305) and the
  digest verification (MC202/MC203; what could not be checked is said, not passed);
- ``graph``: capability graph problems (:mod:`risutools.catalog.graph`);
- ``duplicates``: documents of different components built from the same part (member) of
  the same source file (a ``.charx``'s card and its module are two parts);
- ``id_collisions``: one component_id in more than one document;
- ``chain``: the transition log itself (broken lines, lines for unknown components,
  hash continuity from one line of a component to the next, unfinished writes);
- ``approvals``: every record with its state (current, used, stale, orphan, unreadable)
  and signature (verified, unsigned, bad, not_allowed, unchecked; not_read: the record
  could not be read);
- ``file_findings``: the review's own findings, one check id each (RV101-RV601, the units
  of :mod:`risutools.catalog.review_checks`, ``interaction_checks`` and
  ``lineage_checks``), after ``rules:``, ``--select`` and ``--ignore``;
- ``counts``: review and runtime statuses, findings, approvals;
- ``board``: for every candidate and pending component, each gate of its next step.
Nothing is written.  Exit code (CLI): 1 when anything is an error.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from risutools import __version__
from risutools.catalog.approvals import (
    SUPERSEDED,
    Approval,
    chain_check,
    load_approvals,
    standing,
)
from risutools.catalog.board_path import path_to_approved
from risutools.catalog.catalog import Catalog, Entry, source_part
from risutools.catalog.graph import Graph, whole_graph
from risutools.catalog.interactions import FactsStore
from risutools.catalog.promote import plan
from risutools.catalog.review_checks import (
    APPROVAL,
    GRAPH,
    LOG,
    NOTES,
    ApprovalFacts,
    GraphProblem,
    LogFacts,
    NotesFacts,
    units,
)
from risutools.catalog.review_interactions import attach_risk, interactions
from risutools.catalog.review_pass import (
    ProgressFn,
    entries_of,
    first_pass,
    probes,
)
from risutools.checks.registry import Check
from risutools.collector import cycles_paused_set_aside
from risutools.contract.shown import display_path
from risutools.contract.transitions import CatalogLog, used_records
from risutools.contract.validate import (
    DocumentInfo,
    Result,
    RuleFilter,
    Verification,
    catalog_checks,
)
from risutools.findings import Finding, sorted_findings
from risutools.rowspool import Rows
from risutools.safeio import require_folder
from risutools.settings import lifecycle
from risutools.settings.config import Settings

if TYPE_CHECKING:  # (concurrent.futures: only a run on a pool or a cluster imports it)
    from concurrent.futures import Executor

REVIEW_FORMAT = "catalog-review-v1"


@dataclass
class Review:
    catalog: str
    data: dict[str, Any] = field(default_factory=dict)
    #: the findings formats' result (sarif, github, ...) but its file findings, which wait
    #: in :attr:`found` until :attr:`result` is asked for
    outline: Result = field(default_factory=Result)
    found: FileFindings | None = None

    @property
    def result(self) -> Result:
        """Every finding, for the findings formats (its file findings read back once)."""
        if self.found is not None:
            self.outline.file_findings = list(self.found)
            self.found = None
        return self.outline

    @property
    def findings(self) -> list[Finding]:
        return self.result.findings

    def serious(self) -> list[Finding]:
        """The errors and warnings, sorted (:attr:`findings` less the infos, the file
        findings read back without keeping the others)."""
        if self.found is None:
            return [f for f in self.findings if f.severity in SERIOUS]
        out = [f for f in self.found if f.severity in SERIOUS]
        out += [f for d in self.outline.documents for f in d.findings if f.severity in SERIOUS]
        return sorted_findings(out)

    @property
    def errors(self) -> int:
        return int(self.data["counts"]["errors"])

    def exit_code(self) -> int:
        return 1 if self.errors else 0


SERIOUS = ("error", "warning")
_FINDING_FIELDS = tuple(x.name for x in fields(Finding))


def _f(f: Finding) -> dict[str, Any]:
    """``f.to_dict()`` without ``asdict``'s deep copies (every field is a str or an int)."""
    out = {}
    for name in _FINDING_FIELDS:
        v = getattr(f, name)
        if v is not None and v != "":
            out[name] = v
    return out


class FileFindings:
    """The review's file findings (the contract's, then its own), kept in two row spools:
    as the report writes them (:attr:`rows`), and whole, read back as findings for a
    findings format (``for f in found``); the errors and warnings counted."""

    def __init__(self, findings: Iterable[Finding]) -> None:
        self.rows = Rows()
        self._whole = Rows()
        self.errors = self.warnings = 0
        for f in findings:
            self.rows.append(_f(f))
            self._whole.append({name: getattr(f, name) for name in _FINDING_FIELDS})
            self.errors += f.severity == "error"
            self.warnings += f.severity == "warning"

    def __iter__(self) -> Iterator[Finding]:
        for row in self._whole:
            yield Finding(**row)

    def __len__(self) -> int:
        return len(self.rows)


def _check_documents(cat: Catalog, sources: str | None, jobs: int | None,
                     progress: ProgressFn | None, executor: Executor | None,
                     base_log: Path | None = None, log: CatalogLog | None = None
                     ) -> tuple[Result, list[Verification], FactsStore]:
    """The first pass (:func:`~risutools.catalog.review_pass.first_pass`: every document
    read once, its rules and digests checked, its summary kept, on all cores or on
    ``executor``), then MC104 and MC305 (and MC306 with ``base_log``; ``log``: the
    catalog's log, as the review read it); the catalog's
    entries hold each document's head and its facts, found with it (packed in the store
    returned)."""
    cfg = cat.config
    # (a store the configuration names stays in its repository, as verify asks)
    src = Path(sources) if sources is not None else cfg.source_store()
    if src is not None:
        require_folder(src, "the source store")
    first = first_pass(cat.root, cfg, src, jobs, progress, executor)
    result = Result("review", files=first.files, skipped=first.skipped)
    result.file_findings = list(first.problems)
    result.documents = [s.info for s in first.surveyed]
    cat.adopt_entries(entries_of(first.surveyed), first.problems)
    catalog_checks(probes(first.surveyed), result, cfg, RuleFilter(), chain_check(cat.settings),
                   cat.root, base_log, log)
    for s in first.surveyed:  # the file as found, read by MC305 only (an entry keeps its own)
        s.info.path = None
    return result, [v for s in first.surveyed for v in s.verifications], first.facts


def review_catalog(cat: Catalog, *, sources: str | None = None, jobs: int | None = None,
                   progress: ProgressFn | None = None, executor: Executor | None = None,
                   base_log: Path | None = None) -> Review:
    """The review of ``cat``; ``executor``: any ``concurrent.futures`` executor (a Dask
    cluster's) that runs the per-document part, the document rules; ``base_log``: the base
    branch's transition log, which the catalog's must extend (MC306).

    The cycle collector is paused meanwhile, and in the program's own run what the review
    keeps is then set aside from its passes
    (:func:`risutools.collector.cycles_paused_set_aside`)."""
    with cycles_paused_set_aside():
        return _review_catalog(cat, sources, jobs, progress, executor, base_log)


def _review_catalog(cat: Catalog, sources: str | None, jobs: int | None,
                    progress: ProgressFn | None, executor: Executor | None,
                    base_log: Path | None = None) -> Review:
    log = cat.log()  # (read once: MC305, the chain section, the approvals and the board)
    log.chain_memo = {}  # (MC305 and the board's history gate ask the same chains)
    validated, verifications, store = _check_documents(cat, sources, jobs, progress, executor,
                                                       base_log, log)
    entries = cat.entries()
    graph = whole_graph(entries, cat.load_problems, log)
    approvals = load_approvals(cat)
    rv = Review(cat.root.name)
    problems = _graph_problems(graph)
    chain = _chain(log, entries)
    appr = _approvals(cat, approvals, entries, log)
    own = _own_findings(cat, problems, chain, appr)  # the review's own (RV...)
    inter = interactions(str(cat.root), entries, store)  # RV4xx, over per-document summaries
    notes = _notes_findings(cat, entries)
    # the board's gates read every contract finding; the report only what the settings keep
    board = _board(cat, entries, graph, log, approvals, verifications, validated)
    _settle(validated, cat.config)
    found = FileFindings(itertools.chain(validated.file_findings, cat.config.applied(
        itertools.chain(own, inter.findings(), notes))))
    documents = Rows(attach_risk(_documents(validated, entries), inter))
    rv.outline = Result("review", documents=validated.documents, files=validated.files,
                        skipped=validated.skipped)
    rv.found = found
    rv.data = {
        "review": REVIEW_FORMAT, "catalog": cat.root.name, "tool_version": __version__,
        "counts": _counts(validated.documents, found, documents, entries, appr,
                          verifications, board.ready),
        "file_findings": found.rows,
        "documents": documents,
        "verifications": Rows({"file": v.file, "line": v.line,
                               "component_id": v.component_id, "source": v.source,
                               "status": v.status, "detail": v.detail}
                              for v in verifications),
        "graph": [{"kind": g.kind, "severity": g.severity, "component_id": g.component_id,
                   "file": g.where, "message": g.message, "related": list(g.related)}
                  for g in problems],
        "duplicates": _duplicates(entries), "id_collisions": _collisions(entries),
        "chain": chain, "approvals": appr, "board": board,
        "interactions": inter.section(), "lineage": inter.lineage_section(),
    }
    rv.data["counts"]["log_entries"] = sum(len(v) for v in log.by_component.values()) + \
        sum(len(v) for v in log.runtime.values())
    return rv


def _notes_findings(cat: Catalog, entries: list[Entry]) -> list[Finding]:
    """The notes folder's units (none without one; a folder that leads out
    of the catalog is refused, as ``replays/``)."""
    cat.inside(cat.notes_dir, "notes/")
    if not cat.notes_dir.is_dir():
        return []
    facts = NotesFacts(cat.notes_dir, entries)
    return [Finding(unit.id, _sev(unit.severity), msg, file=display_path(cat.root / rel))
            for unit in units(NOTES) for rel, msg in unit(facts)]


def _own_findings(cat: Catalog, problems: list[GraphProblem], chain: list[dict[str, Any]],
                  appr: list[dict[str, Any]]) -> list[Finding]:
    """The review's own findings (RV...): the graph's, the log's, the approvals'."""
    findings: list[Finding] = []
    titles = {c.title: c for c in units(GRAPH)}
    for g in problems:
        file, _, tail = g.where.rpartition(":")
        where = (file, int(tail)) if file and tail.isdigit() else (g.where, None)
        findings.append(Finding(titles[g.kind].id, _sev(g.severity),
                                f"{g.component_id}: {g.message}", file=where[0], line=where[1]))
    for c in chain:
        findings.append(Finding(c["rule"], _sev(c["severity"]), c["message"],
                                file=display_path(cat.log_path), line=c.get("line")))
    for a in appr:
        if a["severity"] in ("error", "warning"):
            findings.append(Finding(a["rule"], _sev(a["severity"]), a["message"],
                                    file=display_path(cat.root / a["file"])))
    return findings


def _counts(documents: list[DocumentInfo], found: FileFindings,
            rows: Sequence[dict[str, Any]], entries: list[Entry], appr: list[dict[str, Any]],
            verifications: list[Verification], ready: int) -> dict[str, Any]:
    """The report's counts; its errors and warnings: the file findings' and the documents'
    (every finding of the result, counted where it is kept)."""
    severities = Counter(f.severity for d in documents for f in d.findings)
    return {
        "documents": len(rows),
        "errors": found.errors + severities["error"],
        "warnings": found.warnings + severities["warning"],
        "review_status": _tally(e.review_status or "(none)" for e in entries),
        "runtime_status": _tally(e.runtime_status or "(none)" for e in entries),
        "approvals": _tally(a["state"] for a in appr),
        "signatures": _tally(a["signature"] for a in appr),
        "unsigned_approvals": sum(1 for a in appr if a["signature"] == "unsigned"),
        "verifications": _tally(v.status for v in verifications),
        "ready": ready,
    }


def _tally(values: Iterable[str]) -> dict[str, int]:
    return dict(sorted(Counter(values).items()))


def _graph_problems(graph: Graph) -> list[GraphProblem]:
    """What the RV1xx units find in the capability graph, by place, kind and message."""
    out = [p for unit in units(GRAPH) for p in unit(graph)]
    out.sort(key=lambda p: (p.where, p.kind, p.message))
    return out


def _settle(validated: Result, cfg: Settings) -> None:
    """The contract findings as reported: ``--select``/``--ignore`` applied (their
    severities are already the configured ones)."""
    keep = _kept(cfg.rule_filter().keep)
    validated.file_findings = [f for f in validated.file_findings if keep(f.rule)]
    for d in validated.documents:
        if d.findings:
            d.findings = [f for f in d.findings if keep(f.rule)]


def _kept(keep: Callable[[str], bool]) -> Callable[[str], bool]:
    """``keep``, asked once a rule (a catalog's findings name a few dozen rules)."""
    answers: dict[str, bool] = {}

    def kept(rule: str) -> bool:
        got = answers.get(rule)
        if got is None:
            got = answers[rule] = keep(rule)
        return got

    return kept


def _row(check: Check, severity: str, **fields: Any) -> dict[str, Any]:
    return {"rule": check.id, "severity": severity, **fields}


def _sev(s: str) -> Any:
    return "error" if s == "error" else "warning" if s == "warning" else "info"


def _documents(validated: Result, entries: list[Entry]) -> Iterator[dict[str, Any]]:
    status = {e.key: e for e in entries}
    for d in validated.documents:
        e = status.get((d.file, d.line))
        fs = d.findings
        severities = [f.severity for f in fs]
        yield {
            "file": d.file, "line": d.line, "component_id": d.component_id,
            "component_version": d.component_version,
            "base_sha256": e.base_sha256 if e is not None else d.sha256,
            "review_status": e.review_status if e else None,
            "runtime_status": e.runtime_status if e else None,
            "errors": severities.count("error"),
            "warnings": severities.count("warning"),
            "findings": [_f(f) for f in fs],
        }


def _source_of(e: Entry) -> tuple[str, str] | None:
    """The source file's digest and the part of it the component comes from
    (:func:`~risutools.catalog.catalog.source_part`): as the review's first pass found it
    (the entry's label), else read from its head."""
    if e.label is not None:
        return e.label[2]
    return source_part(e.get("provenance", "source_refs"))


def _duplicates(entries: list[Entry]) -> list[dict[str, Any]]:
    by: dict[tuple[str, str], list[Entry]] = {}
    for e in entries:
        src = _source_of(e)
        if src is not None:
            by.setdefault(src, []).append(e)
    out = []
    for (s, _part), group in sorted(kv for kv in by.items() if len(kv[1]) > 1):  # (one: no)
        ids = sorted({e.component_id for e in group})
        if len(ids) > 1:
            out.append({"sha256": s, "components": ids,
                        "files": sorted(e.where() for e in group)})
    return out


def _collisions(entries: list[Entry]) -> list[dict[str, Any]]:
    by: dict[str, list[Entry]] = {}
    for e in entries:
        by.setdefault(e.component_id, []).append(e)
    return [{"component_id": cid, "files": sorted(e.where() for e in group),
             "versions": sorted({e.version for e in group})}
            for cid, group in sorted(kv for kv in by.items() if len(kv[1]) > 1)]


def _chain(log: CatalogLog, entries: list[Entry]) -> list[dict[str, Any]]:
    """What the RV2xx units find in the log: the broken lines first (in file order), then
    by component, line and check."""
    facts = LogFacts(log, {e.component_id: e for e in entries})
    rows = [_row(unit, unit.severity, line=ln, component_id=cid, message=msg)
            for unit in units(LOG) for ln, cid, msg in unit(facts)]
    rows.sort(key=lambda r: (0,) if r["component_id"] is None else
              (1, r["component_id"], r["line"], r["rule"]))
    return rows


def _approvals(cat: Catalog, approvals: list[Approval], entries: list[Entry],
               log: CatalogLog) -> list[dict[str, Any]]:
    """Every approval record with its state and signature, and the finding of the first
    RV3xx unit that fires on it (else an ``info`` row)."""
    used = used_records(log)
    by_id = {e.component_id: e for e in entries}
    req = cat.settings.require_signatures
    signed = _signed_keys(cat, approvals)
    out = []
    for a in approvals:
        cid = a.field("component_id")
        row: dict[str, Any] = {"file": a.file, "component_id": cid,
                               "action": a.field("action"), "reviewer": a.field("reviewer"),
                               "base_sha256": a.field("base_sha256")}
        if a.problem:
            row.update(state="unreadable", signature="not_read")  # (never checked)
            facts = ApprovalFacts(a, "unreadable", None, req, None)
        else:
            sig = a.signature(cat)
            row["signature"] = sig.status
            e = by_id.get(cid)
            base = e.base_sha256 if e is not None else None
            row["state"] = standing(a, base, used)
            if not sig.ok and _key(a) in signed:  # a signed record of the same decision
                row["state"] = SUPERSEDED
            facts = ApprovalFacts(a, row["state"], sig, req, base)
        for unit in units(APPROVAL):
            msg = unit(facts)
            if msg is not None:
                row.update(severity=unit.severity, message=msg, rule=unit.id)
                break
        else:
            row.update(severity="info", message=f"{row['state']}, signature {row['signature']}")
        out.append(row)
    return out


def _key(a: Approval) -> tuple[str, str, str]:
    return a.field("component_id"), a.field("action"), a.field("base_sha256")


def _signed_keys(cat: Catalog, approvals: list[Approval]) -> set[tuple[str, str, str]]:
    """(component, action, base) of every record with a verified signature: an unsigned
    record of the same decision is superseded (RV303 does not fire on it)."""
    return {_key(a) for a in approvals if not a.problem and a.record is not None
            and a.record.get("signature") is not None and a.signature(cat).ok}


class Board(Rows):
    """The board's rows, and how many of them are ready."""

    def __init__(self) -> None:
        super().__init__()
        self.ready = 0


class _ReadOnce:
    """An entry's way to read its document back, reading it once: the gates of one plan
    then share one copy (and none is read when no gate reads the document)."""

    __slots__ = ("_doc", "_read")

    def __init__(self, read: Callable[[], dict[str, Any]]) -> None:
        self._read = read
        self._doc: dict[str, Any] | None = None

    def __call__(self) -> dict[str, Any]:
        if self._doc is None:
            self._doc = self._read()
        return self._doc


def _board(cat: Catalog, entries: list[Entry], graph: Graph, log: CatalogLog,
           approvals: list[Approval], verifications: list[Verification], validated: Result
           ) -> Board:
    found = {(d.file, d.line): d.findings for d in validated.documents}
    by_doc: dict[tuple[str, int | None], list[Verification]] = {}
    for v in verifications:
        by_doc.setdefault((v.file, v.line), []).append(v)
    records: dict[str, list[Approval]] = {}
    for a in approvals:  # each component's own (every gate and part of the path asks for
        records.setdefault(a.field("component_id"), []).append(a)  # those alone)
    out = Board()
    used = used_records(log)
    for e in sorted(entries, key=lambda e: (e.component_id, e.where())):
        if e.review_status not in lifecycle.BOARD:
            continue
        step = lifecycle.next_step(e.review_status)
        assert step is not None  # every state on the board has one
        to = step.to
        key = e.key
        made = e.status_found
        reload = e.reload
        if reload is not None:  # read back once for all its gates, if one reads it
            e.reload = _ReadOnce(reload)
        try:
            own = records.get(e.component_id, [])
            p = plan(cat, e, to, graph=graph, log=log, approvals=own,
                     verifications=by_doc.get(key, []), base_findings=found.get(key),
                     status_found=made[1] if made is not None and made[0] == to else None)
            path = path_to_approved(cat, e, found.get(key), by_doc.get(key, []), own, used)
        finally:
            e.reload = reload
        blocked = [v.gate for v in p.verdicts if v.failed]
        ready = not blocked  # (Plan.ok: no verdict failed, told from the list made anyway)
        out.append({"component_id": e.component_id, "file": e.where(),
                    "from": e.review_status, "to": to, "ready": ready,
                    "blocked_by": blocked,
                    "gates": [v.to_dict() for v in p.verdicts], "path": path})
        out.ready += ready
    return out
