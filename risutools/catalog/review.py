"""``risutools review CATALOG``: everything wrong, duplicated, in conflict or ready, read-only.

Sections of the result (``catalog-review-v1``):
- ``documents``: per document the contract findings (MC100-MC600, MC104, MC305) and the
  digest verification (MC202/MC203; what could not be checked is said, not passed);
- ``graph``: capability graph problems (:mod:`risutools.catalog.graph`);
- ``duplicates``: documents of different components built from the same source file;
- ``id_collisions``: one component_id in more than one document;
- ``chain``: the transition log itself (broken lines, lines for unknown components,
  hash continuity from one line of a component to the next, unfinished writes);
- ``approvals``: every record with its state (current, used, stale, orphan, unreadable)
  and signature (verified, unsigned, bad, not_allowed, unchecked);
- ``counts``: review and runtime statuses, findings, approvals;
- ``board``: for every candidate and pending component, each gate of its next step.
Nothing is written.  Exit code (CLI): 1 when anything is an error.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from risutools import __version__
from risutools.catalog.approvals import Approval, load_approvals
from risutools.catalog.catalog import Catalog, Entry
from risutools.catalog.graph import Graph
from risutools.catalog.packet import NEXT_STEP, used_approvals
from risutools.contract.loaders import display_path
from risutools.contract.transitions import CatalogLog
from risutools.contract.validate import Result, Verification
from risutools.findings import Finding

REVIEW_FORMAT = "catalog-review-v1"
BOARD_STATES = ("candidate", "pending_human_review")
# The review's own finding ids (the contract's MC ids are in contract/rules.py).
REVIEW_CHECKS = {
    "RV-GRAPH": "capability graph: unmet requirement, conflict or exclusive capability "
                "between active/promoted components",
    "RV-CHAIN": "transition log: broken line, unknown component, hash discontinuity, "
                "unfinished write",
    "RV-APPROVAL": "approval record: unreadable, stale, orphan, bad or missing signature",
}


@dataclass
class Review:
    catalog: str
    data: dict[str, Any] = field(default_factory=dict)
    result: Result = field(default_factory=Result)  # every finding, for sarif/github/text

    @property
    def findings(self) -> list[Finding]:
        return self.result.findings

    @property
    def errors(self) -> int:
        return int(self.data["counts"]["errors"])

    def exit_code(self) -> int:
        return 1 if self.errors else 0


def _f(f: Finding) -> dict[str, Any]:
    return f.to_dict()


def review_catalog(cat: Catalog, *, sources: str | None = None) -> Review:
    from risutools.contract.validate import validate_paths
    from risutools.contract.verify import verify_paths

    cfg = cat.config
    validated = validate_paths([cat.root], cfg)
    src = sources if sources is not None else (str(cfg.sources) if cfg.sources else None)
    verified = verify_paths([cat.root], src, config=cfg)
    entries = cat.entries()
    graph = Graph(entries)
    log = cat.log()
    approvals = load_approvals(cat)
    rv = Review(cat.root.name)
    # digest checks: MC202/MC203 only (MC200/MC201 are in validate's findings already)
    digest: dict[tuple[str, int | None], list[Finding]] = {}
    for d in verified.documents:
        digest[(d.file, d.line)] = [f for f in d.findings if f.rule in ("MC202", "MC203")]
    for info in validated.documents:
        info.findings = sorted(info.findings + digest.get((info.file, info.line), []),
                               key=Finding.sort_key)
    findings: list[Finding] = []  # the review's own (RV-*)
    documents = _documents(validated, entries)
    graph_problems = [{"kind": g.kind, "severity": g.severity, "component_id": g.component_id,
                       "file": g.where, "message": g.message, "related": list(g.related)}
                      for g in graph.problems()]
    for g in graph.problems():
        file, _, tail = g.where.rpartition(":")
        where = (file, int(tail)) if file and tail.isdigit() else (g.where, None)
        findings.append(Finding("RV-GRAPH", _sev(g.severity), f"{g.component_id}: {g.message}",
                                file=where[0], line=where[1]))
    duplicates = _duplicates(entries)
    collisions = _collisions(entries)
    chain = _chain(cat, log, entries)
    for c in chain:
        findings.append(Finding("RV-CHAIN", _sev(c["severity"]), c["message"],
                                file=display_path(cat.log_path), line=c.get("line")))
    appr = _approvals(cat, approvals, entries, log)
    for a in appr:
        if a["severity"] in ("error", "warning"):
            findings.append(Finding("RV-APPROVAL", _sev(a["severity"]), a["message"],
                                    file=display_path(cat.root / a["file"])))
    board = _board(cat, entries, graph, log, approvals, verified.verifications, validated)
    rv.result = Result("review", documents=validated.documents,
                       file_findings=validated.file_findings + findings,
                       files=validated.files, skipped=validated.skipped)
    everything = rv.result.findings
    errors = sum(1 for f in everything if f.severity == "error")
    warnings = sum(1 for f in everything if f.severity == "warning")
    rv.data = {
        "review": REVIEW_FORMAT, "catalog": cat.root.name, "tool_version": __version__,
        "counts": {
            "documents": len(documents), "errors": errors, "warnings": warnings,
            "review_status": dict(sorted(Counter(e.review_status or "(none)"
                                                 for e in entries).items())),
            "runtime_status": dict(sorted(Counter(e.runtime_status or "(none)"
                                                  for e in entries).items())),
            "approvals": dict(sorted(Counter(a["state"] for a in appr).items())),
            "signatures": dict(sorted(Counter(a["signature"] for a in appr).items())),
            "unsigned_approvals": sum(1 for a in appr if a["signature"] == "unsigned"),
            "verifications": dict(sorted(Counter(v.status
                                                 for v in verified.verifications).items())),
            "ready": sum(1 for b in board if b["ready"]),
        },
        "file_findings": [_f(f) for f in validated.file_findings + findings],
        "documents": documents,
        "verifications": [{"file": v.file, "line": v.line, "component_id": v.component_id,
                           "source": v.source, "status": v.status, "detail": v.detail}
                          for v in verified.verifications],
        "graph": graph_problems, "duplicates": duplicates, "id_collisions": collisions,
        "chain": chain, "approvals": appr, "board": board,
    }
    return rv


def _sev(s: str) -> Any:
    return "error" if s == "error" else "warning" if s == "warning" else "info"


def _documents(validated: Result, entries: list[Entry]) -> list[dict[str, Any]]:
    status = {(e.loaded.file, e.loaded.line): e for e in entries if e.loaded is not None}
    out = []
    for d in validated.documents:
        e = status.get((d.file, d.line))
        fs = d.findings
        out.append({
            "file": d.file, "line": d.line, "component_id": d.component_id,
            "component_version": d.component_version, "base_sha256": d.sha256,
            "review_status": e.review_status if e else None,
            "runtime_status": e.runtime_status if e else None,
            "errors": sum(1 for f in fs if f.severity == "error"),
            "warnings": sum(1 for f in fs if f.severity == "warning"),
            "findings": [_f(f) for f in fs],
        })
    return out


def _source_of(e: Entry) -> str | None:
    refs = e.get("provenance", "source_refs")
    if isinstance(refs, list) and refs and isinstance(refs[0], dict):
        s = refs[0].get("sha256")
        return s if isinstance(s, str) else None
    return None


def _duplicates(entries: list[Entry]) -> list[dict[str, Any]]:
    by: dict[str, list[Entry]] = {}
    for e in entries:
        s = _source_of(e)
        if s is not None:
            by.setdefault(s, []).append(e)
    out = []
    for s, group in sorted(by.items()):
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
            for cid, group in sorted(by.items()) if len(group) > 1]


def _chain(cat: Catalog, log: CatalogLog, entries: list[Entry]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"line": ln, "component_id": None, "severity": "error",
                                  "message": why} for ln, why in log.problems]
    known = {e.component_id: e for e in entries}
    cids = sorted(set(log.by_component) | set(log.runtime))
    for cid in cids:
        lines = sorted(log.by_component.get(cid, []) + log.runtime.get(cid, []),
                       key=lambda s: s[0])
        if cid not in known:
            out.append({"line": lines[0][0], "component_id": cid, "severity": "warning",
                        "message": f"transitions.ndjson names {cid}, which no document of the "
                        "catalog has (removed or renamed?)"})
            continue
        prev: dict[str, Any] | None = None
        for ln, rec in lines:
            if rec.get("kind") == "runtime":
                frm, to = rec.get("from_runtime"), rec.get("to_runtime")
                if (frm, to) not in (("inactive", "active"), ("active", "inactive")):
                    out.append({"line": ln, "component_id": cid, "severity": "error",
                                "message": f"runtime line {ln}: {frm!r} -> {to!r} is not a "
                                "runtime switch"})
            if prev is not None and rec.get("before_sha256") != prev.get("after_sha256"):
                out.append({"line": ln, "component_id": cid, "severity": "error", "message": (
                    f"line {ln} starts from {str(rec.get('before_sha256'))[:19]}… but the "
                    f"previous line for {cid} ended at {str(prev.get('after_sha256'))[:19]}…; "
                    "a change between them was not recorded, or a line was edited")})
            prev = rec
        e = known[cid]
        last = lines[-1][1]
        if last.get("after_sha256") != e.base_sha256 and \
                last.get("before_sha256") == e.base_sha256:
            out.append({"line": lines[-1][0], "component_id": cid, "severity": "error",
                        "message": f"line {lines[-1][0]} records a change of {cid} that was "
                        "never written (interrupted); re-run the same command to complete it"})
    return out


def _approvals(cat: Catalog, approvals: list[Approval], entries: list[Entry],
               log: CatalogLog) -> list[dict[str, Any]]:
    used = used_approvals(log)
    current = {e.component_id: e.base_sha256 for e in entries}
    req = cat.settings.require_signatures
    out = []
    for a in approvals:
        row: dict[str, Any] = {"file": a.file, "component_id": a.field("component_id"),
                               "action": a.field("action"), "reviewer": a.field("reviewer"),
                               "base_sha256": a.field("base_sha256")}
        if a.problem:
            row.update(state="unreadable", signature="unchecked", severity="error",
                       message=a.problem)
            out.append(row)
            continue
        sig = a.signature(cat)
        row["signature"] = sig.status
        cid = a.field("component_id")
        if a.file.removeprefix("approvals/") in used:
            state = "used"
        elif cid not in current:
            state = "orphan"
        elif a.field("base_sha256") == current[cid]:
            state = "current"
        else:
            state = "stale"
        row["state"] = state
        sev, msg = "info", f"{state}, signature {sig.status}"
        if sig.status in ("bad", "not_allowed"):
            sev, msg = "error", f"signature {sig.status}: {sig.detail}"
        elif req and sig.status != "verified":
            sev, msg = "error", ("signatures are required and this record's is "
                                 f"{sig.status} ({sig.detail}); it counts as no approval")
        elif state == "stale":
            sev, msg = "warning", ("stale: it approved base "
                                   f"{a.field('base_sha256')[:19]}… but {cid} is now "
                                   f"{current[cid][:19]}…; approve the current version")
        elif state == "orphan":
            sev, msg = "warning", f"no document of the catalog is {cid}"
        row.update(severity=sev, message=msg)
        out.append(row)
    return out


def _board(cat: Catalog, entries: list[Entry], graph: Graph, log: CatalogLog,
           approvals: list[Approval], verifications: list[Verification], validated: Result
           ) -> list[dict[str, Any]]:
    from risutools.catalog.promote import plan

    found = {(d.file, d.line): d.findings for d in validated.documents}
    by_doc: dict[tuple[str, int | None], list[Verification]] = {}
    for v in verifications:
        by_doc.setdefault((v.file, v.line), []).append(v)
    out = []
    for e in sorted(entries, key=lambda e: (e.component_id, e.where())):
        if e.review_status not in BOARD_STATES:
            continue
        to = NEXT_STEP[e.review_status][1]
        key = (e.loaded.file, e.loaded.line) if e.loaded is not None else ("", None)
        p = plan(cat, e, to, graph=graph, log=log, approvals=approvals,
                 verifications=by_doc.get(key, []), base_findings=found.get(key))
        out.append({"component_id": e.component_id, "file": e.where(),
                    "from": e.review_status, "to": to, "ready": p.ok,
                    "blocked_by": [v.gate for v in p.verdicts if v.failed],
                    "gates": [v.to_dict() for v in p.verdicts]})
    return out
