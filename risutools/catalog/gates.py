"""Every gate of a review-status transition and of a runtime switch (G1-G15): one unit each.

A gate is a function decorated with :func:`risutools.checks.registry.check` (scope
``promotion``): its id, the name output shows (the title: ``transition``, ``digests`` ...),
the statuses it guards (``targets=``, groups of the lifecycle table
:mod:`risutools.settings.lifecycle`) and its docstring (what ``risutools rule G4`` or
``risutools rule digests`` shows) are declared with its code.  It takes the
:class:`GateContext` of one transition and returns ``(verdict, reason)`` with verdict
``pass``, ``fail`` or ``n/a`` (it ran and found it does not apply, e.g. the replay gate for
a component without ``context.*``); nothing defaults to ``pass``.  G1-G9 guard review-status
transitions, G10-G13 runtime switches (G2 guards both).

``promote``, ``activate``/``deactivate`` and the review's promotion board run
:func:`run_gates`: the gates the registry holds for the target (:func:`gates_for`).
A new gate: a function here with ``@check("G14", "error", "promotion", "name",
targets=lifecycle.SOME_GROUP)`` and its docstring; cases in
``risutools/checks/cases/G14.yaml``; ``python -m risutools.commands.docs``.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from risutools.catalog.approvals import Approval, ApprovalVerdict, chain_check, find_approval
from risutools.catalog.catalog import Catalog, Entry
from risutools.catalog.graph import Graph
from risutools.catalog.rerun import replayed_again
from risutools.checks.registry import Check, check, registered_checks, sort_key
from risutools.contract import rules as mc
from risutools.contract.checks_catalog import mc104, mc305
from risutools.contract.loaders import LoadedDocument
from risutools.contract.sourcestore import SourceStore
from risutools.contract.transitions import (
    CatalogLog,
    UsedRecords,
    candidate_lines,
    check_chain,
    used_records,
)
from risutools.contract.validate import (
    DocumentInfo,
    Result,
    RuleFilter,
    Verification,
    validate_document,
)
from risutools.contract.verify import VerifyContext, mc202, mc203, verify_refs
from risutools.findings import Finding
from risutools.settings import lifecycle
from risutools.settings.config import Settings
from risutools.settings.simulations import CUTTER_CAPS, MONITOR_CAP, simulation_of

PASS, FAIL, NA = "pass", "fail", "n/a"
# The document rules whose verdict can change when review_status, runtime_status,
# publishable or lineage.promotion_status change; every other rule (and MC100: the
# statuses stay within their enums) gives the new document the findings of the old one.
STATUS_RULES = tuple(c.id for c in (mc.mc103, mc.mc301, mc.mc302, mc.mc303, mc.mc600))
# catalog-level (MC104, MC305: the history gate) and digest rules (the digests gate) are
# not the contract gate's
NOT_CONTRACT_GATE = tuple(c.id for c in (mc104, mc305, mc202, mc203))


class NewDocument:
    """The document a transition would write, made when it is first read (a gate that reads
    only the current document's findings and hashes never makes it: the review's board
    plans a transition for every candidate)."""

    __slots__ = ("_doc", "_make")

    def __init__(self, make: Callable[[], dict[str, Any]]) -> None:
        self._make = make
        self._doc: dict[str, Any] | None = None

    def __call__(self) -> dict[str, Any]:
        if self._doc is None:
            self._doc = self._make()
        return self._doc


@dataclass
class GateContext:
    """What the gates of one transition look at (shared indexes are built once)."""

    cat: Catalog
    entry: Entry
    to: str  # target review_status, or "active"/"inactive" for a runtime switch
    new: NewDocument  # the new document (:attr:`new_doc`), made when a gate reads it
    log: CatalogLog
    #: the capability graph the gates that read other components look at
    #: (:data:`CATALOG_GATES`), or what makes it when one first does (:attr:`graph`)
    graph_of: Graph | Callable[[], Graph]
    approvals: list[Approval]
    skip_log_line: int | None = None  # an interrupted transition being completed
    verifications: list[Verification] | None = None  # digest checks (computed lazily)
    approval: ApprovalVerdict | None = None
    # the current document's findings (from a catalog-wide validate): the gates then rerun
    # only the rules that read the status fields a transition changes
    base_findings: list[Finding] | None = None
    # those rules' findings on the new document (:func:`status_findings`), or their errors
    # alone (:func:`status_errors`: what the contract gate reads of them), when they were
    # found while the document was at hand (the review's first pass)
    status_found: Sequence[Finding] | None = None

    @property
    def new_doc(self) -> dict[str, Any]:
        return self.new()

    @property
    def graph(self) -> Graph:
        """The capability graph (made when first read: a step whose gates read no other
        component never reads the catalog)."""
        if not isinstance(self.graph_of, Graph):
            self.graph_of = self.graph_of()
        return self.graph_of


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


# --------------------------------------------------------------------------- review status


@check("G1", "error", "promotion", "transition", targets=lifecycle.TARGETS)
def transition(ctx: GateContext) -> tuple[str, str]:
    """The target is the next lifecycle step from the current status (candidate ->
    pending_human_review -> approved -> promoted -> retired; any -> rejected).

    Why: A status that skips a step skips the review that step stands for.

    Fix: Promote one step at a time, with an approval for each."""
    frm = ctx.entry.review_status
    act = lifecycle.action_for(frm, ctx.to)
    if act is None:
        return FAIL, (f"{frm or '(none)'} -> {ctx.to} is not a lifecycle step (candidate -> "
                      "pending_human_review -> approved -> promoted -> retired; any -> rejected)")
    return PASS, f"{frm} -> {ctx.to} needs a {act!r} approval"


@check("G2", "error", "promotion", "history", targets=lifecycle.HISTORY_GUARDED)
def history(ctx: GateContext) -> tuple[str, str]:
    """The document ends its recorded chain of approved transitions (MC305); a candidate has no
    lines moving it on.  A rejection needs only the status chain: it records a document that
    changed after its last line as it is.  A log that cannot be read, or a line of it that
    cannot be read and may name the component (its id in it, or a `\\u` escape that may
    spell it), fails it: never an empty history.  Another document of the catalog holding
    its component_id (a copy, another version) fails it: a line names the id alone, and
    would move that one too.

    Why: A status edited by hand would promote a component nobody approved.

    Fix: Restore the document to the status its transitions record, then use `risutools
    promote`."""
    e = ctx.entry
    log = ctx.log
    if (why := log.unreadable_for(e.component_id)) is not None:  # (never an empty history)
        return FAIL, why
    if others := ctx.cat.others_of(e):  # (a line names the id: it would move them too)
        more = f" (+{len(others) - 1} more)" if len(others) > 1 else ""
        return FAIL, (f"{others[0]}{more} holds this component_id too: "
                      "transitions.ndjson names a component by its id, so a line written "
                      "for this document would move that one; give each its own id, or "
                      "remove the copy")
    if ctx.skip_log_line is not None:
        log = _without_line(log, e.component_id, ctx.skip_log_line)
    if e.review_status == lifecycle.START:
        if not log.names(e.component_id):  # (the document itself is read only if one does)
            return PASS, "candidate: transitions.ndjson has no line naming it"
        return FAIL, candidate_lines(log, e.component_id, e.doc) or ""

    counts = chain_check(ctx.cat.settings)
    msgs = list(check_chain(log, e.component_id, e.review_status, e.base_sha256, e.doc,
                            counts=counts, names=e.names))
    if msgs and ctx.to == lifecycle.REJECTED and not list(check_chain(
            log, e.component_id, e.review_status, e.base_sha256, unrecorded_ok=True,
            counts=counts)):
        # rejection is always open: the status chain holds, and the rejection's line records
        # the change no line has
        return PASS, f"{msgs[0].split(';')[0]}; the rejection records this document as it is"
    if msgs:
        return FAIL, msgs[0]
    return PASS, "the document ends its recorded, approved chain of transitions"


def _used(ctx: GateContext) -> UsedRecords:
    """The approval records the log's lines used (a line being completed left out: its
    record is the one the step uses)."""
    log = ctx.log
    if ctx.skip_log_line is not None:
        log = _without_line(log, ctx.entry.component_id, ctx.skip_log_line)
    return used_records(log)


def _without_line(log: CatalogLog, cid: str, line: int) -> CatalogLog:
    out = CatalogLog(log.root, dict(log.by_component), list(log.problems), log.exists,
                     dict(log.runtime), broken=log.broken, broken_past=log.broken_past)
    out.by_component[cid] = [s for s in log.by_component.get(cid, []) if s[0] != line]
    out.runtime[cid] = [s for s in log.runtime.get(cid, []) if s[0] != line]
    return out


def _new_doc_findings(ctx: GateContext, cfg: Settings) -> list[Finding]:
    """The new document's findings as the contract gate reads them (every error; with
    :attr:`GateContext.status_found` the status rules' errors may come alone)."""
    if ctx.base_findings is None:
        return validate_document(ctx.new_doc, config=cfg)
    out = [f for f in ctx.base_findings if f.rule not in STATUS_RULES]
    found = ctx.status_found
    return out + (list(found) if found is not None else status_findings(ctx.new_doc, cfg))


def status_findings(new_doc: dict[str, Any], cfg: Settings) -> list[Finding]:
    """The findings of the rules that read the status fields (:data:`STATUS_RULES`) on the
    document a transition would write, checked with the contract gate's settings
    (:func:`gate_config`)."""
    out = []
    for rule, fn in _status_rules():
        for ptr, msg in fn(new_doc, cfg):
            sev = mc.effective_severity(rule, new_doc, cfg)
            if sev != "off":
                out.append(mc.make_finding(rule, sev, msg, None, None, ptr))
    return out


def status_errors(new_doc: dict[str, Any], cfg: Settings) -> list[Finding]:
    """The errors among :func:`status_findings` (what the contract gate reads of them), in
    order: a rule whose findings on ``new_doc`` are not errors (its severity there is
    another, or ``off``) is not run."""
    out = []
    for rule, fn in _status_rules():
        sev = mc.effective_severity(rule, new_doc, cfg)
        if sev == "off" or not _made_an_error(rule, sev):
            continue
        for ptr, msg in fn(new_doc, cfg):
            out.append(mc.make_finding(rule, sev, msg, None, None, ptr))
    return out


#: (rule, severity) -> whether a finding made with that severity is an error
_ERROR_AT: dict[tuple[str, str], bool] = {}


def _made_an_error(rule: str, sev: str) -> bool:
    """Whether ``make_finding`` makes an error of a finding of ``rule`` at ``sev`` (asked
    once a pair)."""
    known = _ERROR_AT.get((rule, sev))
    if known is None:
        known = _ERROR_AT[rule, sev] = \
            mc.make_finding(rule, sev, "", None, None, "").severity == "error"
    return known


#: (the document rules it was taken from, those of :data:`STATUS_RULES` in their order)
_STATUS_FNS: list[Any] = [None, ()]


def _status_rules() -> tuple[tuple[str, Callable[..., Any]], ...]:
    """The (id, function) of :data:`STATUS_RULES` among the document rules, in the order
    they run (taken once from ``rules.DOCUMENT_RULES``, again should it be another)."""
    rules = mc.DOCUMENT_RULES
    if _STATUS_FNS[0] is not rules:
        _STATUS_FNS[:] = [rules, tuple((r, fn) for r, fn in rules if r in STATUS_RULES)]
    found: tuple[tuple[str, Callable[..., Any]], ...] = _STATUS_FNS[1]
    return found


#: the settings with the promotion gate on, made once for the settings they were made from
_GATE_CONFIG: dict[str, tuple[Settings, Settings]] = {}


def gate_config(cfg: Settings, to: str) -> Settings:
    """The settings the contract gate checks a move to ``to`` with: ``cfg``, with MC600
    (narrative) as an error from approved on (the promotion gate)."""
    if to not in lifecycle.NARRATIVE_REQUIRED:
        return cfg
    made = _GATE_CONFIG.get(to)
    if made is None or made[0] is not cfg:
        made = _GATE_CONFIG[to] = (cfg, cfg.with_promotion_gate())
    return made[1]


@check("G3", "error", "promotion", "contract", targets=lifecycle.CONTRACT_GATED)
def contract(ctx: GateContext) -> tuple[str, str]:
    """The new document passes the contract rules; from approved on MC600 (narrative) is an
    error.

    Why: A component that breaks the contract at its next status would be recorded as
    reviewed while being invalid.

    Fix: Fix the findings `risutools validate` reports for the document, then promote again."""
    gate_cfg = gate_config(ctx.cat.config, ctx.to)
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
    ld = entry.loaded
    if ld is None:  # an entry holding its document's head: the document read back
        ld = LoadedDocument(entry.key[0], entry.key[1], entry.doc, entry.fmt, entry.path)
    result = Result("verify")
    sources = cat.sources  # (asked once: it checks the store stays in the repository)
    store = SourceStore(sources if sources and sources.is_dir() else None)
    ctx = VerifyContext(store, cat.config, RuleFilter(), True, result)
    info = DocumentInfo(entry.where(), entry.line, entry.component_id, entry.version,
                        entry.doc_sha256)
    verify_refs(ctx, info, ld)
    return result.verifications


@check("G4", "error", "promotion", "digests", targets=lifecycle.APPROVED)
def digests(ctx: GateContext) -> tuple[str, str]:
    """MC200/MC201 pass and every source_refs digest is verified (source store, notes,
    replays/); a source that is not at hand fails.

    Why: An approval vouches for exact bytes; an unverified digest approves something nobody
    read.

    Fix: Configure `sources:` (or `--sources`) so every referenced file is at hand, and
    re-project when a digest differs."""
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


@check("G5", "error", "promotion", "active-code", targets=lifecycle.REVIEWED)
def active_code(ctx: GateContext) -> tuple[str, str]:
    """No active code in payload or projection (MC500).

    Why: The catalog describes modules; code in it could run where the catalog is read.

    Fix: Describe the code in prose, or move it out of payload and projection."""
    rule = mc.mc500
    if ctx.base_findings is not None and ctx.cat.config.severities.get(rule.id) != "off":
        # the statuses are never scanned for code: the old document's findings hold
        hits = [(f.pointer, f.message) for f in ctx.base_findings if f.rule == rule.id]
    else:
        hits = list(rule(ctx.new_doc, ctx.cat.config))
    for ptr, msg in hits:
        return FAIL, f"{rule.id} at {ptr}: {msg}"
    return PASS, "no active code in payload or projection"


@check("G6", "error", "promotion", "replay", targets=lifecycle.APPROVED)
def replay(ctx: GateContext) -> tuple[str, str]:
    """When the component declares a context.* capability and its provides select a
    reference simulation: replay_status is passed, and every referenced replay report is
    verified (MC203: its digest, and read back as a replay-report-v1 whose hash is its own,
    of this component and of the simulation its capabilities select, of the fixture it is
    named for, its verdict the one its own invariants give) and says passed itself, and,
    when a file of its fixture's digest is at hand (replays/ or the source store), replaying
    that fixture here with the report's configuration concludes what the report does (else
    the verdict says it was not replayed again); otherwise n/a (a component that only
    requires context.*, or provides one no simulation replays, has nothing to replay: no
    replay could pass, and it could never be approved).

    Why: A context component that was never replayed may lose or rewrite what the user
    wrote.

    Fix: Run `risutools replay run ... --update` until it passes."""
    return replay_check(ctx.entry, lambda: verifications(ctx))


def replay_check(e: Entry, found: Callable[[], list[Verification]]) -> tuple[str, str]:
    """G6's verdict for ``e`` (``found``: its digest checks, asked for only when its
    replay_status is passed): what the gate says, and the review board's path to approved
    with it (never on a weaker test)."""
    ctxcaps = [c for c in e.caps("provides") + e.caps("requires") if c.startswith("context.")]
    if not ctxcaps:
        return NA, "declares no context.* capability"
    if simulation_of(e.caps("provides")) is None:  # (else no replay could ever pass: a dead end)
        return NA, (f"declares {ctxcaps[0]}, but no reference simulation replays it (its "
                    f"provides names none of {', '.join((*CUTTER_CAPS, MONITOR_CAP))}): "
                    "nothing to replay")
    status = e.get("projection", "replay_status")
    if status != "passed":
        return FAIL, (f"declares {ctxcaps[0]} but replay_status is {status!r}; run "
                      f"`risutools replay run {shlex.quote(e.where())} --fixture FIXTURE "
                      "--update` until it passes")
    reps = [v for v in found() if v.source.startswith("replay:")]
    if not reps:
        return FAIL, "replay_status is passed but no replay report is referenced (MC203)"
    return _reports_check(e, reps)


def _reports_check(e: Entry, reps: list[Verification]) -> tuple[str, str]:
    """G6 over the replay reports ``e`` references (some at least): each verified, saying
    passed, and what its fixture gives when replayed again here (:mod:`.rerun`)."""
    bad = [v for v in reps if v.status != "verified"]
    if bad:
        return FAIL, f"replay report {bad[0].source}: {bad[0].detail}"
    failed = [v for v in reps if v.verdict != "passed"]
    if failed:  # (the report's own verdict: the document's word is not enough)
        return FAIL, (f"replay_status is passed but the report {failed[0].detail} says "
                      f"{failed[0].verdict!r}; re-run the replay with --update until it "
                      "passes")
    again = [replayed_again(v.evidence, e.doc) for v in reps if v.evidence is not None]
    wrong = [words for agrees, words in again if agrees is False]
    if wrong:  # (the report's word against the reference simulation's own run)
        return FAIL, f"replay report {reps[0].source}: {wrong[0]}"
    said = f"; {again[0][1]}" if again else ""
    return PASS, f"replay passed, report verified ({reps[0].detail}){said}"


@check("G7", "error", "promotion", "conflict", targets=lifecycle.APPROVED)
def conflict(ctx: GateContext) -> tuple[str, str]:
    """No conflict with an active or promoted component (either side's conflicts names what the
    other provides), live by its document or by the log's last line for it; it fails
    "cannot tell" while a component may be unseen: a catalog file or a log line that cannot
    be read, or one the log says is live with no document read.

    Why: Two conflicting components approved together would both be switched on.

    Fix: Retire or deactivate the other component, or resolve the conflict."""
    hits = ctx.graph.conflicts_with(ctx.entry, "live")
    if hits:
        o, c = hits[0]
        return FAIL, (f"conflicts with {o.component_id} ({o.review_status}, "
                      f"{o.runtime_status}){ctx.graph.by_log(o)} over {c!r}")
    if (blind := _blind(ctx)) is not None:
        return FAIL, blind
    return PASS, "no conflict with an active or promoted component"


def _blind(ctx: GateContext, pool: str = "live") -> str | None:
    """Why a gate that reads the other components of ``pool`` (live, or active) cannot tell
    (None: it can): :meth:`~risutools.catalog.graph.Graph.cannot_tell`."""
    return ctx.graph.cannot_tell(ctx.entry, pool)


@check("G8", "error", "promotion", "inactive", targets=lifecycle.LEAVING)
def inactive(ctx: GateContext) -> tuple[str, str]:
    """A rejected or retired component is not active.

    Why: A component leaving the lifecycle must not keep running.

    Fix: `risutools deactivate` it first."""
    rt = ctx.entry.runtime_status
    if rt == "active":
        return FAIL, "the component is active; `risutools deactivate` it first"
    return PASS, f"runtime_status is {rt or '(none)'}"


@check("G9", "error", "promotion", "approval", targets=lifecycle.TARGETS)
def approval(ctx: GateContext) -> tuple[str, str]:
    """A human approval for exactly this action, on exactly the current base hash and version,
    signed and allowed where required; an approval of another hash is stale.

    Why: Review status is a human decision; an approval of other bytes approves something
    else.

    Fix: Record an approval with `risutools approve` (with `--sign` where signatures are
    required) after reading the current document."""
    act = lifecycle.action_for(ctx.entry.review_status, ctx.to)
    if act is None:
        return FAIL, "no lifecycle step, so no approval can match"
    ctx.approval = find_approval(ctx.cat, ctx.entry, act, ctx.approvals, _used(ctx))
    return (PASS if ctx.approval.ok else FAIL), ctx.approval.reason


# --------------------------------------------------------------------------- runtime switch


@check("G10", "error", "promotion", "runtime-state", targets=lifecycle.RUNTIME_STATES)
def runtime_state(ctx: GateContext) -> tuple[str, str]:
    """The switch starts from the other runtime state.

    Why: Activating an active component (or the reverse) means the caller's view is out of
    date.

    Fix: Read the component's runtime_status and switch it the other way."""
    rt = ctx.entry.runtime_status
    want_from = "inactive" if ctx.to == "active" else "active"
    if rt != want_from:
        return FAIL, f"runtime_status is {rt or '(none)'!r}, not {want_from!r}"
    return PASS, f"{rt} -> {ctx.to}"


@check("G11", "error", "promotion", "review-status", targets=(lifecycle.ACTIVE,))
def review_status(ctx: GateContext) -> tuple[str, str]:
    """Only approved or promoted components are active (MC302).

    Why: An active component that nobody approved runs unreviewed.

    Fix: Promote the component to approved first."""
    rs = ctx.entry.review_status
    if rs not in lifecycle.APPROVED:
        return FAIL, f"only approved or promoted components may be active (MC302); it is {rs!r}"
    return PASS, f"review_status is {rs}"


@check("G12", "error", "promotion", "active-conflict", targets=(lifecycle.ACTIVE,))
def active_conflict(ctx: GateContext) -> tuple[str, str]:
    """No conflict with an active component (active by its document or by the log's last
    switch); it fails "cannot tell" while an active component may be unseen (a catalog file
    or a log line that cannot be read, or one the log says is active with no document
    read).

    Why: Two conflicting components active together break each other.

    Fix: Deactivate the other component first (or mend what cannot be read, or restore the
    document the log names)."""
    hits = ctx.graph.conflicts_with(ctx.entry, "active")
    if hits:
        o, c = hits[0]
        return FAIL, (f"conflicts with the active component {o.component_id}"
                      f"{ctx.graph.by_log(o)} over {c!r}")
    if (blind := _blind(ctx, "active")) is not None:
        return FAIL, blind
    return PASS, "no conflict with an active component"


@check("G13", "error", "promotion", "exclusive", targets=(lifecycle.ACTIVE,))
def exclusive(ctx: GateContext) -> tuple[str, str]:
    """No second active provider (by its document or by the log's last switch) of an exclusive
    capability; n/a when the component provides none; it fails "cannot tell" while an
    active component may be unseen (a catalog file or a log line that cannot be read, or
    one the log says is active with no document read).

    Why: An exclusive capability (one context cutter, say) has one provider at a time.

    Fix: Deactivate the active provider first (or mend what cannot be read, or restore the
    document the log names)."""
    hits = ctx.graph.exclusive_rivals(ctx.entry)
    if hits:
        o, c = hits[0]
        return FAIL, (f"{o.component_id}{ctx.graph.by_log(o)} is already an active "
                      f"provider of the exclusive capability {c!r}; deactivate it first")
    mine = [c for c in ctx.entry.caps("provides") if c in ctx.graph.exclusive]
    if not mine:
        return NA, "provides no exclusive capability"
    if (blind := _blind(ctx, "active")) is not None:
        return FAIL, blind
    return PASS, f"the only active provider of {', '.join(mine)}"


@check("G14", "error", "promotion", "switch-approval", targets=lifecycle.RUNTIME_STATES)
def switch_approval(ctx: GateContext) -> tuple[str, str]:
    """Where signatures are required (catalog.require_signatures): a signed approval for
    exactly this switch (action activate or deactivate) on the current base hash (which
    leaves the runtime fields out); n/a where they are not.

    Why: Switching a component on or off changes what runs; where every transition needs a
    signed human record, so does a switch.

    Fix: Record the switch's approval with `risutools approve COMPONENT --action activate
    (or deactivate) --reviewer NAME --sign KEY`, then switch again."""
    act = lifecycle.SWITCH_ACTION[ctx.to]
    if not ctx.cat.settings.require_signatures:
        return NA, f"signatures are not required: a switch needs no {act!r} approval"
    ctx.approval = find_approval(ctx.cat, ctx.entry, act, ctx.approvals, _used(ctx))
    return (PASS if ctx.approval.ok else FAIL), ctx.approval.reason


@check("G15", "error", "promotion", "publish", targets=(lifecycle.PUBLISHED,))
def publish(ctx: GateContext) -> tuple[str, str]:
    """Publishing (publishable: true) needs a promoted component that is not yet publishable,
    a new document that passes MC303 (a passed replay for a context.* component), and a human
    approval with action publish on the current base hash (signed and allowed where
    required).

    Why: Publishing hands a component to others; it is a decision of its own, made on
    exactly the bytes a person read.

    Fix: Promote the component first, record `risutools approve COMPONENT --action publish`
    (with `--sign` where signatures are required), then `risutools publish COMPONENT`."""
    e = ctx.entry
    if e.review_status not in lifecycle.PUBLISH_FROM:
        return FAIL, f"only a promoted component is published; it is {e.review_status!r}"
    if e.get("provenance", "publishable") is True:
        return FAIL, "it is publishable already"
    for ptr, msg in mc.mc303(ctx.new_doc, ctx.cat.config):
        return FAIL, f"{mc.mc303.id} at {ptr}: {msg}"
    ctx.approval = find_approval(ctx.cat, e, lifecycle.PUBLISH, ctx.approvals, _used(ctx))
    return (PASS if ctx.approval.ok else FAIL), ctx.approval.reason


# --------------------------------------------------------------------------- the engine

#: the gates that read other components of the catalog: they run again under the catalog's
#: lock just before a write (:func:`risutools.catalog.promote.execute`), on the catalog as
#: it is then, so two conflicting steps taken at once cannot both pass
CATALOG_GATES: tuple[Check, ...] = (conflict, active_conflict, exclusive)

#: the gate of the step itself runs first (a step the lifecycle does not have, or a switch
#: from the wrong state, is what a reader looks for first); the others follow in id order
STEP_GATES: tuple[Check, ...] = (transition, runtime_state)


@cache
def gates_for(to: str) -> tuple[Check, ...]:
    """The gates the registry holds for the target ``to`` (a review status, or a runtime
    state for a switch), in the order they run and are shown."""
    found = [c for c in registered_checks().values()
             if c.scope == "promotion" and to in c.targets]
    return tuple(sorted(found, key=lambda c: (c not in STEP_GATES, sort_key(c))))


def reads_catalog(to: str) -> bool:
    """Whether a step to ``to`` runs a gate that reads other components
    (:data:`CATALOG_GATES`)."""
    return any(g in CATALOG_GATES for g in gates_for(to))


def run_gates(ctx: GateContext) -> list[Verdict]:
    """Every gate of ``ctx.to``, each verdict under the gate's name."""
    out = []
    for gate in gates_for(ctx.to):
        run = gate.run  # (what calling the check does, without its call)
        verdict, reason = run(ctx) if run is not None else gate(ctx)
        out.append(Verdict(gate.title, verdict, reason))
    return out
