"""``promote`` (review-status transitions) and ``activate``/``deactivate`` (runtime switches).

Order of a write, all under the catalog lock (:mod:`risutools.catalog.writes`):
1. the document's file is read again; its canonical hash (the whole document) must still
   be the one the gates ran on, and the log must not have grown for this component since
   (else "changed since you read it", exit 1);
2. the gates that read other components (conflicts, exclusive capabilities) run again
   on the catalog loaded again, and the approval file must still have the bytes the gate
   accepted;
3. the transition line is appended to ``transitions.ndjson`` (write-ahead: it
   names ``before_sha256`` and ``after_sha256``, base hashes: a runtime switch leaves the
   base hash as it is);
4. the new document replaces the old one atomically (CAS on the bytes read).
A process killed between 3 and 4 leaves the old document and a line whose
``before_sha256`` is the document's hash (:func:`transitions.unwritten`): re-running the
same command finds
that line, checks that the new document it computes has the line's
``after_sha256``, and only writes the document (it never appends twice).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from risutools import __version__
from risutools.canonical import prefixed
from risutools.catalog.approvals import MAX_APPROVAL_BYTES, Approval, load_approvals, now_iso
from risutools.catalog.catalog import Catalog, Entry
from risutools.catalog.gates import (
    CATALOG_GATES,
    FAIL,
    GateContext,
    NewDocument,
    Verdict,
    gates_for,
    run_gates,
)
from risutools.catalog.graph import Graph, gate_neighbours
from risutools.catalog.writes import (
    append_log,
    catalog_lock,
    conflict_error,
    current_bytes,
    link,
    log_now,
    write_document,
)
from risutools.contract.transitions import CatalogLog, read_log, unwritten
from risutools.contract.validate import Verification
from risutools.errors import Code, UsageError, WriteConflict
from risutools.findings import Finding
from risutools.jsonplaces import PARSE_INT
from risutools.safeio import FileRefused, read_inside
from risutools.settings import lifecycle


def new_document(doc: dict[str, Any], to: str) -> dict[str, Any]:
    """``doc`` with ``review_status`` (and ``lineage.promotion_status``, when the document
    has a lineage) set to ``to``; leaving the lifecycle (rejected, retired) also clears
    ``publishable`` (MC303).  Only the mappings on the changed paths are copied; ``doc`` is
    never changed."""
    new = dict(doc)
    prov = new.get("provenance")
    if isinstance(prov, dict):
        prov = new["provenance"] = dict(prov)
        prov["review_status"] = to
        if to in ("rejected", "retired") and prov.get("publishable") is True:
            prov["publishable"] = False
    payload = new.get("payload")
    layers = payload.get("idea_layers") if isinstance(payload, dict) else None
    lineage = layers.get("lineage") if isinstance(layers, dict) else None
    if isinstance(payload, dict) and isinstance(layers, dict) and isinstance(lineage, dict):
        payload = new["payload"] = dict(payload)
        layers = payload["idea_layers"] = dict(layers)
        lineage = layers["lineage"] = dict(lineage)
        lineage["promotion_status"] = to
    return new


def runtime_document(doc: dict[str, Any], to: str) -> dict[str, Any]:
    """``doc`` switched to runtime state ``to``, or (``to`` = ``publishable``) published."""
    new = dict(doc)
    prov = new.get("provenance")
    if isinstance(prov, dict):
        prov = new["provenance"] = dict(prov)
        if to == lifecycle.PUBLISHED:
            prov["publishable"] = True
        else:
            prov["runtime_status"] = to
    return new


@dataclass
class Plan:
    kind: str  # "status" | "runtime"
    entry: Entry
    to: str
    new: NewDocument  # the new document (:attr:`new_doc`), made when first read
    verdicts: list[Verdict]
    log_lines: int  # lines for this component in the log when read
    log_size: int  # bytes of the log when read
    resume_line: int | None = None  # an interrupted transition this run completes
    approval: Approval | None = None
    notes: list[str] = field(default_factory=list)
    _after: str | None = None
    last_after: Any = None  # where the component's last log line ended (``writes.link``)

    @property
    def new_doc(self) -> dict[str, Any]:
        return self.new()

    @property
    def after_sha256(self) -> str:
        """The new document's base hash (computed when asked: the board never needs it)."""
        if self._after is None:
            self._after = lifecycle.base_sha256(self.new_doc)
        return self._after

    @property
    def ok(self) -> bool:
        return not any(v.failed for v in self.verdicts)

    @property
    def from_state(self) -> str:
        if self.kind == "publish":
            return f"publishable {str(self.entry.get('provenance', 'publishable')).lower()}"
        return self.entry.review_status if self.kind == "status" else self.entry.runtime_status

    def to_dict(self) -> dict[str, Any]:
        return {"component_id": self.entry.component_id, "file": self.entry.where(),
                "kind": self.kind, "from": self.from_state, "to": self.to,
                "base_sha256": self.entry.base_sha256, "after_sha256": self.after_sha256,
                "ok": self.ok, "gates": [v.to_dict() for v in self.verdicts],
                "resumes_line": self.resume_line}


def _lines(log: CatalogLog, cid: str) -> list[tuple[int, dict[str, Any]]]:
    return sorted(log.by_component.get(cid, []) + log.runtime.get(cid, []),
                  key=lambda s: s[0])


def _interrupted(log: CatalogLog, entry: Entry,
                 lines: list[tuple[int, dict[str, Any]]] | None = None
                 ) -> tuple[int, dict[str, Any]] | None:
    """The last line for the component when it was written but its document was not
    (``lines``: the component's lines, :func:`_lines`, when already at hand)."""
    if lines is None:
        lines = _lines(log, entry.component_id)
    if not lines:
        return None
    ln, rec = lines[-1]
    return (ln, rec) if unwritten(rec, entry.doc, entry.names) else None


def plan(cat: Catalog, entry: Entry, to: str, *, kind: str = "status",
         graph: Graph | None = None, log: CatalogLog | None = None,
         approvals: list[Approval] | None = None,
         verifications: list[Verification] | None = None,
         base_findings: list[Finding] | None = None,
         status_found: Sequence[Finding] | None = None) -> Plan:
    """Run every gate of ``entry`` -> ``to``; nothing is written.  ``base_findings``: the
    current document's findings; ``status_found``: the status rules' findings on the new
    document (:func:`~risutools.catalog.gates.status_findings`), or their errors alone
    (:func:`~risutools.catalog.gates.status_errors`), when already found."""
    _check_target(to, kind)
    if log is None:
        log = read_log(cat.root, only=entry.component_id)
        if log.refused is not None:  # never an empty history: nothing moves (exit 2)
            raise log.refused
    graph_of = graph if graph is not None else lambda: gate_neighbours(cat, entry)
    make = new_document if kind == "status" else runtime_document
    new = NewDocument(lambda: make(entry.doc, to))
    if approvals is None:  # only the records named for this component and step (an index)
        act = lifecycle.action_for(entry.review_status, to) if kind == "status" else \
            lifecycle.PUBLISH if kind == "publish" else \
            lifecycle.SWITCH_ACTION.get(to) if cat.settings.require_signatures else None
        approvals = load_approvals(cat, component=entry.component_id, action=act) \
            if act is not None else []
    ctx = GateContext(cat, entry, to, new, log, graph_of, approvals)
    ctx.verifications = verifications
    ctx.base_findings = base_findings
    ctx.status_found = status_found
    mine = _lines(log, entry.component_id)
    p = Plan(kind, entry, to, new, [], len(mine), log.size)
    p.last_after = mine[-1][1].get("after_sha256") if mine else None
    hit = _interrupted(log, entry, mine)
    if hit is not None and not _resumes(p, hit):
        return p
    ctx.skip_log_line = p.resume_line
    p.verdicts = run_gates(ctx)
    if ctx.approval is not None:
        p.approval = ctx.approval.approval
    if hit is not None and kind == "status":
        _same_approval(p, hit[1])
    return p


def _check_target(to: str, kind: str) -> None:
    valid = lifecycle.TARGETS if kind == "status" else (lifecycle.PUBLISHED,) \
        if kind == "publish" else lifecycle.RUNTIME_STATES
    if to not in valid:  # (nothing moves a component back to the start)
        raise UsageError("--to", f"{to!r} is not one of {', '.join(valid)}")


def _resumes(p: Plan, hit: tuple[int, dict[str, Any]]) -> bool:
    """Whether this run completes the interrupted transition ``hit`` (the same change);
    otherwise the plan is refused."""
    ln, rec = hit
    same = rec.get("after_sha256") in lifecycle.base_names(p.new_doc) and (
        rec.get("to_status") == p.to if p.kind == "status" else
        rec.get("to_publishable") is True if p.kind == "publish" else
        rec.get("to_runtime") == p.to)
    if not same:
        p.verdicts.append(Verdict("interrupted", "fail", (
            f"transitions.ndjson line {ln} records a change of this document that was "
            f"never written (to {rec.get('to_status') or rec.get('to_runtime')!r}); re-run "
            "that command to complete it")))
        return False
    p.resume_line = ln
    p.notes.append(f"completes the interrupted transition on transitions.ndjson line {ln}")
    return True


def _same_approval(p: Plan, rec: dict[str, Any]) -> None:
    """The approval the interrupted line names must be the one the gate found."""
    appr = rec.get("approval") if isinstance(rec.get("approval"), dict) else {}
    if p.approval is not None and isinstance(appr, dict) and \
            appr.get("file") != p.approval.file:
        p.verdicts.append(Verdict("interrupted", "fail", (
            f"the interrupted line names approval {appr.get('file')!r}, the gate found "
            f"{p.approval.file!r}")))


def execute(cat: Catalog, p: Plan, *, actor: str = "") -> int:
    """Write the plan (it must be ``ok``); returns the transition log line number.

    Under the catalog lock, everything the gates read is read again: the document (its
    hash), the log (no new line for this component), the approval (its bytes), and, for a
    step whose gates look at other components (conflicts, exclusive capabilities), the
    whole catalog, on which those gates run again: two conflicting activations started at
    once cannot both pass."""
    assert p.ok, "execute() needs a plan whose gates all passed"
    e = p.entry
    with catalog_lock(cat):
        raw, _ = current_bytes(cat, e)
        before = log_now(cat)
        grown = _new_lines_for(before, e.component_id, p.log_size)
        if grown:
            raise conflict_error(e, f"transitions.ndjson {grown}")
        _recheck_catalog_gates(cat, p)
        if p.resume_line is not None:
            write_document(cat, e, raw, p.new_doc)
            return p.resume_line
        a = p.approval
        if a is not None:  # (a status step always has one; a switch where signatures are
            _same_approval_bytes(cat, a)  # required)
        if p.kind == "status":
            assert a is not None
            frm = e.review_status
            assert lifecycle.action_for(frm, p.to) is not None
            rec: dict[str, Any] = {
                "component_id": e.component_id, "from_status": frm, "to_status": p.to,
                "before_sha256": e.base_sha256, "after_sha256": p.after_sha256,
                "approval": {"file": a.file, "sha256": a.sha256}, "at": now_iso(),
                "tool_version": __version__}
        elif p.kind == "publish":
            assert a is not None
            rec = {"kind": lifecycle.PUBLISH_LINE, "component_id": e.component_id,
                   "from_publishable": e.get("provenance", "publishable") is True,
                   "to_publishable": True, "before_sha256": e.base_sha256,
                   "after_sha256": p.after_sha256, "actor": actor,
                   "approval": {"file": a.file, "sha256": a.sha256}, "at": now_iso(),
                   "tool_version": __version__}
        else:
            rec = {"kind": "runtime", "component_id": e.component_id,
                   "from_runtime": e.runtime_status, "to_runtime": p.to,
                   "before_sha256": e.base_sha256, "after_sha256": p.after_sha256,
                   "actor": actor, "at": now_iso(), "tool_version": __version__}
            if a is not None:
                rec["approval"] = {"file": a.file, "sha256": a.sha256}
        line = append_log(cat, link(rec, e, p.last_after), before)
        write_document(cat, e, raw, p.new_doc)
        return line


def _same_approval_bytes(cat: Catalog, a: Approval) -> None:
    """The approval file still has the bytes the gate accepted (read bounded, inside)."""
    try:
        appr_now = prefixed(_sha(read_inside(cat.root, a.path, MAX_APPROVAL_BYTES)))
    except FileRefused:
        appr_now = ""
    if appr_now != a.sha256:
        raise WriteConflict(Code.WRITE_CONFLICT, f"approval {a.file}: {CHANGED_APPR}",
                            path=a.file)


def _recheck_catalog_gates(cat: Catalog, p: Plan) -> None:
    """The gates of ``p.to`` that read other components (:data:`gates.CATALOG_GATES`), run
    again on the catalog as it is now (loaded again, under the lock); a gate that fails now
    is a lost compare-and-swap (exit 1).  Read of the catalog: the files that may hold the
    document's component_id (its own file, and a link to it) and the components it may
    conflict with (:func:`~risutools.catalog.graph.neighbours`)."""
    wide = [g for g in gates_for(p.to) if g in CATALOG_GATES]
    if not wide:
        return
    now = Catalog(cat.root, cat.config, cat.settings)
    graph = gate_neighbours(now, p.entry, own=True)
    here = [x for x in graph.entries if x.path == p.entry.path and x.line == p.entry.line]
    if len(here) != 1 or here[0].doc_sha256 != p.entry.doc_sha256:
        raise conflict_error(p.entry, "the document is no longer where it was read")
    ctx = GateContext(now, here[0], p.to, p.new, CatalogLog(now.root), graph, [])
    for gate in wide:
        verdict, reason = gate(ctx)
        if verdict == FAIL:
            raise conflict_error(p.entry, f"the {gate.title} gate fails now: {reason}")


def _new_lines_for(data: bytes | None, cid: str, since: int) -> str:
    """Why the log is not as read (lines for ``cid`` after byte ``since``, or shrunk); ''."""
    if data is None:
        return "is gone" if since else ""
    if len(data) < since:
        return "is shorter than when it was read"
    tail = data[since:]
    needle = cid.encode("utf-8")
    n = 0
    for raw in tail.split(b"\n"):
        if needle in raw or b"\\u" in raw:  # (an escape may spell the id)
            try:
                rec = json.loads(raw, parse_int=PARSE_INT)
            except (ValueError, RecursionError):  # (json reads nesting by recursion)
                n += 1  # a broken line that may name it: not what was read
                continue
            if isinstance(rec, dict) and rec.get("component_id") == cid:
                n += 1
    return f"has {n} new line(s) for it" if n else ""


CHANGED_APPR = "changed since you read it (approvals are never edited)"


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
