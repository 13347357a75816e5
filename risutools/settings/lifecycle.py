"""The review lifecycle, as one table: states, the action of each step, the decision a
reviewer makes there, which statuses each kind of gate guards, and the runtime switch.

Every part of risutools that names a status reads it here: the contract rules (MC103,
MC301-MC305, MC600), the transition log (MC305's chain), approvals (an action and the status
it moves to), the gates of ``promote``/``activate`` (the targets each guards), review packets
(the next step and its decision), the review's promotion board, and the command line's choice
lists.  The schema's ``review_status`` enum (``schemas/matrix-component-v1.schema.json``) is
checked against :data:`STATES` by a test; ``docs/catalog.md`` draws the same table.

::

    candidate --request_review--> pending_human_review --approve--> approved
        --promote--> promoted --retire--> retired
    any state but rejected --reject--> rejected
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from risutools.canonical import (
    Kept,
    doc_sha256,
    plain_canonical,
    sha256_alike,
)


@dataclass(frozen=True)
class Step:
    """One forward step: ``frm`` --``action``--> ``to``, and what a reviewer decides there."""

    frm: str
    action: str
    to: str
    decision: str  # the task of a review packet at ``frm`` (``packet --instruction``'s default)


#: where every component starts (``ingest`` and ``project`` write it)
START = "candidate"
#: every review status, in lifecycle order
STATES: tuple[str, ...] = ("candidate", "pending_human_review", "approved", "promoted",
                           "rejected", "retired")
#: the forward steps, in order: each state has at most one
STEPS: tuple[Step, ...] = (
    Step("candidate", "request_review", "pending_human_review",
         "decide whether to request human review (candidate -> pending_human_review) "
         "or reject"),
    Step("pending_human_review", "approve", "approved",
         "decide approve or reject for promotion to approved"),
    Step("approved", "promote", "promoted", "decide promote or reject (approved -> promoted)"),
    Step("promoted", "retire", "retired", "decide whether to retire the promoted component"),
)
#: the status and action that leave every state but itself
REJECTED = "rejected"
REJECT = "reject"
#: the review actions, in the order the command line lists them
REVIEW_ACTIONS: tuple[str, ...] = ("request_review", "approve", "reject", "promote", "retire")
#: the runtime switch's actions: an approval for them is needed where signatures are required
ACTIVATE, DEACTIVATE = "activate", "deactivate"
#: publishing: ``publishable`` set true through its own approval and gate (MC303: only a
#: promoted component, with a passed replay when it declares context.*)
PUBLISH, PUBLISHED = "publish", "publishable"
PUBLISH_FROM: tuple[str, ...] = ("promoted",)
#: every approval action: the review's, then the switch's, then publishing
ACTIONS: tuple[str, ...] = (*REVIEW_ACTIONS, ACTIVATE, DEACTIVATE, PUBLISH)
#: the statuses ``promote --to`` may name (every state a step or a rejection reaches)
TARGETS: tuple[str, ...] = tuple(s for s in STATES if s != START)
#: statuses past the start: a document there must end a chain of recorded transitions
PAST_START: tuple[str, ...] = TARGETS
#: statuses a human approved (the approval stands): what may be switched active, and from
#: where the digests, replay and conflict gates guard a step
APPROVED: tuple[str, ...] = ("approved", "promoted")
#: statuses a human reviews or approved: the steps to them must carry no active code
REVIEWED: tuple[str, ...] = ("pending_human_review", *APPROVED)
#: statuses whose document must pass the contract at the step (the contract gate)
CONTRACT_GATED: tuple[str, ...] = ("pending_human_review", "approved", "promoted", "retired")
#: statuses that need a complete narrative (MC600 is an error there)
NARRATIVE_REQUIRED: tuple[str, ...] = ("approved", "promoted", "retired")
#: statuses that leave the lifecycle: the component must not stay active
LEAVING: tuple[str, ...] = ("rejected", "retired")
#: statuses the review's promotion board shows (a decision is pending)
BOARD: tuple[str, ...] = ("candidate", "pending_human_review")
#: the runtime switch: ``activate`` sets the first, ``deactivate`` the second
ACTIVE, INACTIVE = "active", "inactive"
RUNTIME_STATES: tuple[str, ...] = (ACTIVE, INACTIVE)
#: what the history gate guards: every step, switching a component on, and publishing it
HISTORY_GUARDED: tuple[str, ...] = (*TARGETS, ACTIVE, PUBLISHED)
#: runtime state -> the action of the switch to it
SWITCH_ACTION: dict[str, str] = {ACTIVE: ACTIVATE, INACTIVE: DEACTIVATE}
#: fields a runtime switch changes: the base hash (:func:`base_sha256`) leaves them out, so
#: a switch does not make an approval in flight stale
RUNTIME_FIELDS: tuple[str, ...] = ("/provenance/runtime_status",)
#: the runtime state every component starts in (``ingest`` and ``project`` write it): a
#: document past candidate is in the state its last runtime line switched it to, else this
START_RUNTIME = INACTIVE

#: the fields of an approval record, every one text (``note`` may be absent)
APPROVAL_FIELDS = ("component_id", "component_version", "action", "reviewer", "at",
                   "base_sha256", "note")
#: the fields of a transition line that are text wherever they are present (the readers
#: compare them and look them up: a list or a mapping there is a broken line)
LOG_TEXT_FIELDS = ("component_id", "kind", "from_status", "to_status", "before_sha256",
                   "after_sha256", "continues", "from_runtime", "to_runtime", "reason",
                   "report_sha256", "actor", "at", "tool_version")

#: the kinds of line in ``transitions.ndjson``: a status step (no ``kind``), a runtime switch,
#: and evidence recorded into a document past the start (a replay verdict)
STATUS_LINE, RUNTIME_LINE, EVIDENCE_LINE, PUBLISH_LINE = "status", "runtime", "evidence", \
    "publish"
#: what an evidence line may change, as JSON pointers (each line records every value it
#: changed, before and after, so the history gate can undo it and check the hash it names)
EVIDENCE_POINTERS: tuple[str, ...] = ("/projection/replay_status",
                                      "/provenance/availability_verdict",
                                      "/provenance/source_refs")
#: statuses where evidence is recorded with a log line (a candidate has no chain to keep)
EVIDENCE_LOGGED: tuple[str, ...] = PAST_START
#: content evidence -- curator notes applied by ``ingest``, a re-projection of the same
#: module bytes -- may change what a projection writes (these subtrees), and only while a
#: decision is pending: the next approval then reads the new content.  Past approval a
#: component's content changes only through a new review (a forged content line there would
#: change an approved component that no reviewer read).
CONTENT_POINTERS: tuple[str, ...] = ("/capabilities", "/payload", "/projection",
                                     "/provenance/source_refs")
CONTENT_EVIDENCE: tuple[str, ...] = ("pending_human_review",)
#: what no evidence ever changes: the lifecycle's own fields (a step, a switch, publishing)
LIFECYCLE_POINTERS: tuple[str, ...] = ("/provenance/review_status", *RUNTIME_FIELDS,
                                       "/provenance/publishable",
                                       "/payload/idea_layers/lineage/promotion_status")

_NEXT: dict[str, Step] = {s.frm: s for s in STEPS}
_BY_PAIR: dict[tuple[str, str], str] = {(s.frm, s.to): s.action for s in STEPS}
#: action -> the status it moves a component to
TARGET_OF: dict[str, str] = {s.action: s.to for s in STEPS} | {REJECT: REJECTED}
#: action -> the runtime state it switches a component to
SWITCH_TO: dict[str, str] = {a: s for s, a in SWITCH_ACTION.items()}


def next_step(status: str) -> Step | None:
    """The forward step from ``status`` (None at the end of the lifecycle)."""
    return _NEXT.get(status)


def action_for(frm: str, to: str) -> str | None:
    """The action of the step ``frm`` -> ``to`` (``reject`` from any state but rejected),
    or None when the lifecycle has no such step."""
    if to == REJECTED and frm in STATES and frm != REJECTED:
        return REJECT
    return _BY_PAIR.get((frm, to))


def open_actions(status: str, runtime: str, published: bool = False) -> tuple[str, ...]:
    """The approval actions a component in ``status`` (runtime ``runtime``) can use next: its
    forward step, ``reject`` (every state but rejected), the switch to the other runtime
    state (only approved or promoted components are switched on), and ``publish`` (a
    promoted component not yet publishable)."""
    out = [a for a, to in TARGET_OF.items() if action_for(status, to) == a]
    if runtime == ACTIVE:
        out.append(DEACTIVATE)
    elif status in APPROVED:
        out.append(ACTIVATE)
    if status in PUBLISH_FROM and not published:
        out.append(PUBLISH)
    return tuple(a for a in ACTIONS if a in out)


def without_runtime(doc: Any) -> Any:
    """``doc`` without its runtime fields (:data:`RUNTIME_FIELDS`; the mappings on their
    paths copied, ``doc`` never changed)."""
    if not isinstance(doc, dict):
        return doc
    out = dict(doc)
    for path, key in _runtime_paths():
        parent: Any = out
        for k in path:
            child = parent.get(k)
            if not isinstance(child, dict):
                break
            parent[k] = child = dict(child)
            parent = child
        else:
            parent.pop(key, None)
    return out


#: (the fields they were taken from, each field's keys to its mapping and its own key)
_RUNTIME_PATHS: list[Any] = [None, ()]


def _runtime_paths() -> tuple[tuple[tuple[str, ...], str], ...]:
    """:data:`RUNTIME_FIELDS` split into their keys (once; again should it be another)."""
    if _RUNTIME_PATHS[0] is not RUNTIME_FIELDS:
        split = [ptr.split("/")[1:] for ptr in RUNTIME_FIELDS]
        _RUNTIME_PATHS[:] = [RUNTIME_FIELDS, tuple((tuple(k[:-1]), k[-1]) for k in split)]
    paths: tuple[tuple[tuple[str, ...], str], ...] = _RUNTIME_PATHS[1]
    return paths


def base_sha256(doc: Any) -> str:
    """THE base hash of a document: the canonical hash (:func:`doc_sha256`) of the document
    without its runtime fields.  What approvals, packets, ``approve --base/--packet``, the
    gates and the transition log name, computed here only: a runtime switch does not change
    it, so it does not make other approvals stale.  (Compare-and-swap of a write is on the
    file's own bytes: another thing.)"""
    return doc_sha256(without_runtime(doc))


def plain_base_sha256(doc: Any, kept: Kept | None = None) -> str:
    """:func:`base_sha256` of a document the loaders' fast path parsed (plain JSON values
    only, at most 64 levels: :func:`~risutools.values.fast_json`), written by orjson at once
    (:func:`~risutools.canonical.plain_canonical`, the bytes :func:`canonical` gives such a
    value) without walking the document first to find that out; any other document, and
    one orjson refuses, by :func:`base_sha256`.  ``kept``: the hash of the beginning of the
    document's own canonical bytes (:func:`~risutools.canonical.sha256_kept`), which the
    base's share up to its runtime fields: not hashed again (:func:`sha256_alike`)."""
    canon = plain_canonical(without_runtime(doc))
    return sha256_alike(canon, kept) if canon is not None else base_sha256(doc)


#: where a document's canonical bytes and its base's part (:func:`runtime_mark`): at the
#: first runtime field's key, which the base leaves out
RUNTIME_KEYS: tuple[bytes, ...] = tuple(
    b'"' + ptr.rsplit("/", 1)[1].encode() + b'":' for ptr in RUNTIME_FIELDS)


def runtime_mark(canon: bytes) -> int:
    """How many of the first bytes of ``canon`` (a document's canonical bytes) its base's
    canonical bytes likely share (:func:`plain_base_sha256`): those before the comma or
    brace ahead of the first runtime field's key found, or 0.  A guess only: whoever shares
    a hash on it compares the bytes first."""
    at = min((i for i in map(canon.find, RUNTIME_KEYS) if i > 0), default=0)
    return at - 1 if at > 1 else 0


def base_names(doc: Any) -> frozenset[str]:
    """The hashes a transition line may name ``doc`` by: its base hash, and its whole-document
    hash (:func:`doc_sha256`, runtime fields included), which lines written before the base
    hash left the runtime fields out name (a log is append-only: old lines stay as written)."""
    return frozenset((base_sha256(doc), doc_sha256(doc)))


def evidence_may_change(pointer: str, status: str) -> bool:
    """Whether an evidence line of a component in ``status`` may change ``pointer``: a
    replay's fields (:data:`EVIDENCE_POINTERS`) always; while a decision is pending
    (:data:`CONTENT_EVIDENCE`) also what a projection writes (:data:`CONTENT_POINTERS`),
    never a lifecycle field (:data:`LIFECYCLE_POINTERS`) nor a value holding one."""
    if pointer in EVIDENCE_POINTERS:
        return True
    if status not in CONTENT_EVIDENCE:
        return False
    inside = any(pointer == p or pointer.startswith(p + "/") for p in CONTENT_POINTERS)
    touches = any(pointer == p or p.startswith(pointer + "/") or pointer.startswith(p + "/")
                  for p in LIFECYCLE_POINTERS)
    return inside and not touches
