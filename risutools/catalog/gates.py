"""Every gate of a review-status transition and of a runtime switch, as data, in one place.

``PROMOTION_GATES`` / ``RUNTIME_GATES`` are lists of :class:`Gate` (its declaration in
the check registry, :mod:`risutools.checks.gates`; the targets it applies to; the check).
A check returns ``(verdict, reason)`` with verdict ``pass``, ``fail`` or ``n/a`` (it
ran and found it does not apply, e.g. the replay gate for a component without
``context.*``); nothing defaults to ``pass``.  ``promote``, ``activate``/``deactivate``,
``review``'s promotion board and packets all run these lists.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from risutools.catalog.approvals import Approval, ApprovalVerdict, find_approval
from risutools.catalog.catalog import Catalog, Entry
from risutools.catalog.graph import Graph
from risutools.checks import gates as G
from risutools.checks.registry import Check as Declared
from risutools.contract import rules as mc
from risutools.contract.checks_catalog import mc104, mc305
from risutools.contract.transitions import CatalogLog, check_chain
from risutools.contract.validate import Verification
from risutools.contract.verify import mc202, mc203
from risutools.findings import Finding
from risutools.settings import lifecycle
from risutools.settings.config import Settings

PASS, FAIL, NA = "pass", "fail", "n/a"
# The document rules whose verdict can change when review_status, runtime_status,
# publishable or lineage.promotion_status change; every other rule (and MC100: the
# statuses stay within their enums) gives the new document the findings of the old one.
STATUS_RULES = tuple(c.id for c in (mc.mc103, mc.mc301, mc.mc302, mc.mc303, mc.mc600))
# catalog-level (MC104, MC305: the history gate) and digest rules (the digests gate) are
# not the contract gate's
NOT_CONTRACT_GATE = tuple(c.id for c in (mc104, mc305, mc202, mc203))


@dataclass
class GateContext:
    """What the gates of one transition look at (shared indexes are built once)."""

    cat: Catalog
    entry: Entry
    to: str  # target review_status, or "active"/"inactive" for a runtime switch
    new_doc: dict[str, Any]
    log: CatalogLog
    graph: Graph
    approvals: list[Approval]
    skip_log_line: int | None = None  # an interrupted transition being completed
    verifications: list[Verification] | None = None  # digest checks (computed lazily)
    approval: ApprovalVerdict | None = None
    # the current document's findings (from a catalog-wide validate): the gates then rerun
    # only the rules that read the status fields a transition changes
    base_findings: list[Finding] | None = None


Check = Callable[[GateContext], tuple[str, str]]


@dataclass(frozen=True)
class Gate:
    declared: Declared  # its registry entry (``risutools rule G4``: summary, why, fix)
    targets: tuple[str, ...]  # the statuses this gate guards
    check: Check

    @property
    def id(self) -> str:
        """The name output shows (``digests``): the registry entry's title."""
        return self.declared.title


@dataclass(frozen=True)
class Verdict:
    gate: str
    verdict: str  # pass | fail | n/a
    reason: str

    @property
    def failed(self) -> bool:
        return self.verdict == FAIL

    def to_dict(self) -> dict[str, str]:
        return {"gate": self.gate, "verdict": self.verdict, "reason": self.reason}


# --------------------------------------------------------------------------- checks


def _transition(ctx: GateContext) -> tuple[str, str]:
    frm = ctx.entry.review_status
    act = lifecycle.action_for(frm, ctx.to)
    if act is None:
        return FAIL, (f"{frm or '(none)'} -> {ctx.to} is not a lifecycle step (candidate -> "
                      "pending_human_review -> approved -> promoted -> retired; any -> rejected)")
    return PASS, f"{frm} -> {ctx.to} needs a {act!r} approval"


def _history(ctx: GateContext) -> tuple[str, str]:
    e = ctx.entry
    log = ctx.log
    if ctx.skip_log_line is not None:
        log = _without_line(log, e.component_id, ctx.skip_log_line)
    if e.review_status == "candidate":
        lines = log.by_component.get(e.component_id, [])
        if lines:
            ln, rec = lines[-1]
            return FAIL, (f"the document says candidate but transitions.ndjson line {ln} moved "
                          f"it to {rec.get('to_status')!r}; restore the document")
        return PASS, "candidate with no recorded transitions"
    msgs = list(check_chain(log, e.component_id, e.review_status, e.base_sha256))
    if msgs:
        return FAIL, msgs[0]
    return PASS, "the document ends its recorded, approved chain of transitions"


def _without_line(log: CatalogLog, cid: str, line: int) -> CatalogLog:
    out = CatalogLog(log.root, dict(log.by_component), list(log.problems), log.exists,
                     dict(log.runtime))
    out.by_component[cid] = [s for s in log.by_component.get(cid, []) if s[0] != line]
    out.runtime[cid] = [s for s in log.runtime.get(cid, []) if s[0] != line]
    return out


def _new_doc_findings(ctx: GateContext, cfg: Settings) -> list[Finding]:
    from risutools.contract.validate import validate_document

    if ctx.base_findings is None:
        return validate_document(ctx.new_doc, config=cfg)
    out = [f for f in ctx.base_findings if f.rule not in STATUS_RULES]
    for rule, fn in mc.DOCUMENT_RULES:
        if rule in STATUS_RULES:
            for ptr, msg in fn(ctx.new_doc, cfg):
                sev = mc.effective_severity(rule, ctx.new_doc, cfg)
                if sev != "off":
                    out.append(mc.make_finding(rule, sev, msg, None, None, ptr))
    return out


def _contract(ctx: GateContext) -> tuple[str, str]:
    gate_cfg = ctx.cat.config.with_promotion_gate() if ctx.to in lifecycle.NARRATIVE_REQUIRED \
        else ctx.cat.config
    found = _new_doc_findings(ctx, gate_cfg)
    errors = [f for f in found if f.severity == "error" and f.rule not in NOT_CONTRACT_GATE]
    if errors:
        f = errors[0]
        more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
        return FAIL, f"{f.rule} at {f.pointer or '/'}: {f.message}{more}"
    mc600 = f" ({mc.mc600.id} narrative as an error)" if gate_cfg.promotion_gate else ""
    return PASS, f"the new document passes the contract rules{mc600}"


def verifications(ctx: GateContext) -> list[Verification]:
    if ctx.verifications is None:
        ctx.verifications = verify_entry(ctx.cat, ctx.entry)
    return ctx.verifications


def verify_entry(cat: Catalog, entry: Entry) -> list[Verification]:
    """MC202/MC203 for one document, with the catalog's source store and replays/."""
    from risutools.contract.validate import DocumentInfo, Result, RuleFilter
    from risutools.contract.verify import SourceStore, VerifyContext, verify_refs

    if entry.loaded is None:
        return []
    result = Result("verify")
    store = SourceStore(cat.sources if cat.sources and cat.sources.is_dir() else None)
    ctx = VerifyContext(store, cat.config, RuleFilter(), True, result)
    info = DocumentInfo(entry.where(), entry.line, entry.component_id, entry.version,
                        entry.base_sha256)
    verify_refs(ctx, info, entry.loaded)
    return result.verifications


def _digests(ctx: GateContext) -> tuple[str, str]:
    for fn in (mc.mc200, mc.mc201):
        for ptr, msg in fn(ctx.entry.doc, ctx.cat.config):
            return FAIL, f"{ptr}: {msg}"
    vs = verifications(ctx)
    bad = [v for v in vs if v.status != "verified"]
    if bad:
        v = bad[0]
        what = "does not match" if v.status == "mismatch" else "could not be verified"
        return FAIL, f"{v.source} {what}: {v.detail}"
    if not any(not v.source.startswith("replay:") for v in vs):
        return FAIL, "no source digest was verified (no source_refs to check)"
    return PASS, f"prompt digest and {len(vs)} source digest(s) verified"


def _active_code(ctx: GateContext) -> tuple[str, str]:
    rule = mc.mc500
    if ctx.base_findings is not None and ctx.cat.config.severities.get(rule.id) != "off":
        # the statuses are never scanned for code: the old document's findings hold
        hits = [(f.pointer, f.message) for f in ctx.base_findings if f.rule == rule.id]
    else:
        hits = list(rule(ctx.new_doc, ctx.cat.config))
    for ptr, msg in hits:
        return FAIL, f"{rule.id} at {ptr}: {msg}"
    return PASS, "no active code in payload or projection"


def _replay(ctx: GateContext) -> tuple[str, str]:
    e = ctx.entry
    ctxcaps = [c for c in e.caps("provides") + e.caps("requires") if c.startswith("context.")]
    if not ctxcaps:
        return NA, "declares no context.* capability"
    status = e.get("projection", "replay_status")
    if status != "passed":
        return FAIL, (f"declares {ctxcaps[0]} but replay_status is {status!r}; run "
                      "`risutools replay run ... --update` until it passes")
    reps = [v for v in verifications(ctx) if v.source.startswith("replay:")]
    if not reps:
        return FAIL, "replay_status is passed but no replay report is referenced (MC203)"
    bad = [v for v in reps if v.status != "verified"]
    if bad:
        return FAIL, f"replay report {bad[0].source}: {bad[0].detail}"
    return PASS, f"replay passed, report verified ({reps[0].detail})"


def _conflict(ctx: GateContext) -> tuple[str, str]:
    hits = ctx.graph.conflicts_with(ctx.entry, "live")
    if hits:
        o, c = hits[0]
        return FAIL, (f"conflicts with {o.component_id} ({o.review_status}, "
                      f"{o.runtime_status}) over {c!r}")
    return PASS, "no conflict with an active or promoted component"


def _approval(ctx: GateContext) -> tuple[str, str]:
    act = lifecycle.action_for(ctx.entry.review_status, ctx.to)
    if act is None:
        return FAIL, "no lifecycle step, so no approval can match"
    ctx.approval = find_approval(ctx.cat, ctx.entry, act, ctx.approvals)
    return (PASS if ctx.approval.ok else FAIL), ctx.approval.reason


def _inactive(ctx: GateContext) -> tuple[str, str]:
    rt = ctx.entry.runtime_status
    if rt == "active":
        return FAIL, "the component is active; `risutools deactivate` it first"
    return PASS, f"runtime_status is {rt or '(none)'}"


# --- runtime switches


def _rt_state(ctx: GateContext) -> tuple[str, str]:
    rt = ctx.entry.runtime_status
    want_from = "inactive" if ctx.to == "active" else "active"
    if rt != want_from:
        return FAIL, f"runtime_status is {rt or '(none)'!r}, not {want_from!r}"
    return PASS, f"{rt} -> {ctx.to}"


def _rt_review(ctx: GateContext) -> tuple[str, str]:
    rs = ctx.entry.review_status
    if rs not in lifecycle.APPROVED:
        return FAIL, f"only approved or promoted components may be active (MC302); it is {rs!r}"
    return PASS, f"review_status is {rs}"


def _rt_conflict(ctx: GateContext) -> tuple[str, str]:
    hits = ctx.graph.conflicts_with(ctx.entry, "active")
    if hits:
        o, c = hits[0]
        return FAIL, f"conflicts with the active component {o.component_id} over {c!r}"
    return PASS, "no conflict with an active component"


def _rt_exclusive(ctx: GateContext) -> tuple[str, str]:
    hits = ctx.graph.exclusive_rivals(ctx.entry)
    if hits:
        o, c = hits[0]
        return FAIL, (f"{o.component_id} is already an active provider of the exclusive "
                      f"capability {c!r}; deactivate it first")
    mine = [c for c in ctx.entry.caps("provides") if c in ctx.graph.exclusive]
    if not mine:
        return NA, "provides no exclusive capability"
    return PASS, f"the only active provider of {', '.join(mine)}"



PROMOTION_GATES: tuple[Gate, ...] = (
    Gate(G.G1, lifecycle.TARGETS, _transition),
    Gate(G.G2, lifecycle.TARGETS, _history),
    Gate(G.G3, lifecycle.CONTRACT_GATED, _contract),
    Gate(G.G4, lifecycle.APPROVED, _digests),
    Gate(G.G5, ("pending_human_review", *lifecycle.APPROVED), _active_code),
    Gate(G.G6, lifecycle.APPROVED, _replay),
    Gate(G.G7, lifecycle.APPROVED, _conflict),
    Gate(G.G8, lifecycle.LEAVING, _inactive),
    Gate(G.G9, lifecycle.TARGETS, _approval),
)

RUNTIME_GATES: tuple[Gate, ...] = (
    Gate(G.G10, lifecycle.RUNTIME_STATES, _rt_state),
    Gate(G.G2, (lifecycle.ACTIVE,), _history),
    Gate(G.G11, (lifecycle.ACTIVE,), _rt_review),
    Gate(G.G12, (lifecycle.ACTIVE,), _rt_conflict),
    Gate(G.G13, (lifecycle.ACTIVE,), _rt_exclusive),
)


def targets_of(declared: Declared) -> tuple[str, ...]:
    """The statuses a declared gate guards, over both tables (for the docs' gate table)."""
    out: list[str] = []
    for g in PROMOTION_GATES + RUNTIME_GATES:
        if g.declared is declared:
            out += [t for t in g.targets if t not in out]
    return tuple(out)


def run_gates(gates: tuple[Gate, ...], ctx: GateContext) -> list[Verdict]:
    out = []
    for g in gates:
        if ctx.to not in g.targets:
            continue
        verdict, reason = g.check(ctx)
        out.append(Verdict(g.id, verdict, reason))
    return out
