"""The findings of ``risutools review`` about the catalog as a whole (RV101-RV305, RV601; the
interactions' RV401-RV408 and the lineage's RV501-RV502 are in their own modules): one
unit each.

A unit is a function decorated with :func:`risutools.checks.registry.check` (scope
``catalog``) whose docstring is its documentation (``risutools rule RV204``).  The hundreds
digit says what it reads, and the review's catalog pass (:mod:`risutools.catalog.review`)
hands each unit that input:

- RV1xx, the capability graph: ``unit(graph)`` yields :class:`GraphProblem` (its ``kind`` is
  the unit's title; the severity is the default, RV101 a warning while the component that
  needs the capability is not active);
- RV2xx, the transition log: ``unit(facts: LogFacts)`` yields ``(line, component_id,
  message)``;
- RV3xx, one approval record: ``unit(facts: ApprovalFacts)`` returns the message of its
  finding, or None; a record has at most one finding, the first unit that fires, in id order.

The contract's own findings (MC...) are reported by the review too, under their ids.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache, cached_property
from pathlib import Path
from typing import Any

from risutools.catalog.approvals import SUPERSEDED, Approval, SignatureCheck, counts
from risutools.catalog.catalog import Entry
from risutools.catalog.graph import Graph, is_active, is_live
from risutools.checks.registry import Check, check, of_family
from risutools.contract.notesfind import document_keys, find_notes, notes_index, orphans
from risutools.contract.transitions import CatalogLog, unwritten
from risutools.settings import lifecycle

LogLines = list[tuple[int, dict[str, Any]]]
#: what a unit reads: the hundreds of its number (RV1xx the graph, RV2xx the log ...)
GRAPH, LOG, APPROVAL = 1, 2, 3
NOTES = 6  # (RV4xx, RV5xx: the facts and interactions, risutools.catalog.interactions)


@cache
def units(reads: int) -> tuple[Check, ...]:
    """The registered units that read one kind of input (:data:`GRAPH`, :data:`LOG`,
    :data:`APPROVAL` or :data:`NOTES`), in id order."""
    return tuple(c for c in of_family("RV").values()
                 if int(c.id.removeprefix(c.family)) // 100 == reads)


@dataclass(frozen=True)
class GraphProblem:
    kind: str  # the title of the RV1xx unit that found it
    severity: str  # error | warning
    component_id: str
    where: str
    message: str
    related: tuple[str, ...] = ()


# --------------------------------------------------------------------------- RV1xx: graph


@check("RV101", "error", "catalog", "unmet-requirement")
def unmet_requirement(graph: Graph) -> Iterator[GraphProblem]:
    """A live component requires a capability that no active or promoted component and no host
    hook provides (an error when the component is active, else a warning).

    Why: The component will not work where it is switched on, and nothing at run time says
    why.

    Fix: Promote a provider of the capability, or drop the requirement."""
    for e in graph.entries:
        if is_live(e):
            sev = "error" if is_active(e) else "warning"
            for c in graph.unmet(e):
                yield GraphProblem(
                    "unmet-requirement", sev, e.component_id, e.where(),
                    f"requires {c!r} but no active or promoted component and no host hook "
                    "provides it; promote a provider or drop the requirement")


@check("RV102", "error", "catalog", "active-conflict")
def active_conflict(graph: Graph) -> Iterator[GraphProblem]:
    """Two active components conflict (either side's conflicts names what the other provides).

    Why: Conflicting components active together break each other.

    Fix: Deactivate one of them (`risutools deactivate`)."""
    for e in graph.entries:
        if not is_active(e):
            continue
        for o, c in graph.conflicts_with(e, "active"):
            if e.component_id < o.component_id or (
                    e.component_id == o.component_id and e.where() < o.where()):
                yield GraphProblem(
                    "active-conflict", "error", e.component_id, e.where(),
                    f"active together with {o.component_id}, and the two conflict "
                    f"over {c!r}; deactivate one (`risutools deactivate`)",
                    (o.component_id,))


@check("RV103", "error", "catalog", "exclusive-capability")
def exclusive_capability(graph: Graph) -> Iterator[GraphProblem]:
    """More than one active component provides an exclusive capability.

    Why: An exclusive capability (one context cutter, say) has one provider at a time.

    Fix: Keep one provider active and deactivate the others."""
    for c in sorted(graph.exclusive):
        act = [p for p in graph.providers.get(c, ()) if is_active(p)]
        if len(act) > 1:
            names = ", ".join(sorted(p.component_id for p in act))
            first = min(act, key=lambda p: (p.component_id, p.where()))
            yield GraphProblem(
                "exclusive-capability", "error", first.component_id, first.where(),
                f"{len(act)} active components provide the exclusive capability {c!r} "
                f"({names}); keep one active", tuple(sorted(p.component_id for p in act)))


# --------------------------------------------------------------------------- RV2xx: the log


@dataclass
class LogFacts:
    """The transition log and the catalog's documents by component id."""

    log: CatalogLog
    known: dict[str, Entry]

    @cached_property
    def components(self) -> list[tuple[str, LogLines]]:
        """Every component the log names, by id, with its lines (status and runtime) in
        file order."""
        log = self.log
        return [(cid, sorted(log.by_component.get(cid, []) + log.runtime.get(cid, []),
                             key=lambda s: s[0]))
                for cid in sorted(set(log.by_component) | set(log.runtime))]

    def documented(self) -> Iterator[tuple[str, LogLines]]:
        """The components that a document of the catalog has."""
        return ((cid, lines) for cid, lines in self.components if cid in self.known)


Row = tuple[int | None, str | None, str]  # (line, component_id, message)


@check("RV201", "error", "catalog", "broken-log-line", guards=True)
def broken_log_line(facts: LogFacts) -> Iterator[Row]:
    """A line of transitions.ndjson is not a valid transition record.

    Why: The log is the catalog's history: a line that cannot be read hides a change.

    Fix: Restore the line from version control; never edit the log by hand."""
    for ln, why in facts.log.problems:
        yield ln, None, why


@check("RV202", "warning", "catalog", "unknown-component")
def unknown_component(facts: LogFacts) -> Iterator[Row]:
    """transitions.ndjson names a component that no document of the catalog has.

    Why: A component whose history is recorded was removed or renamed without a record.

    Fix: Restore the document, or retire the component through `risutools promote` before
    removing it."""
    for cid, lines in facts.components:
        if cid not in facts.known:
            yield lines[0][0], cid, (f"transitions.ndjson names {cid}, which no document of "
                                     "the catalog has (removed or renamed?)")


@check("RV203", "error", "catalog", "bad-runtime-line", guards=True)
def bad_runtime_line(facts: LogFacts) -> Iterator[Row]:
    """A runtime line of transitions.ndjson is not a switch between inactive and active.

    Why: A runtime line that is not a switch records a state the tools never write.

    Fix: Restore the line from version control."""
    for cid, lines in facts.documented():
        for ln, rec in lines:
            if rec.get("kind") == "runtime":
                frm, to = rec.get("from_runtime"), rec.get("to_runtime")
                if (frm, to) not in (("inactive", "active"), ("active", "inactive")):
                    yield ln, cid, f"runtime line {ln}: {frm!r} -> {to!r} is not a runtime switch"


@check("RV204", "error", "catalog", "hash-discontinuity", guards=True)
def hash_discontinuity(facts: LogFacts) -> Iterator[Row]:
    """A component's log line does not start from the hash the previous line for it ended at.

    Why: A change between the two lines was not recorded, or a line was edited.

    Fix: Find the unrecorded change in version control; record changes only with `risutools
    promote`."""
    for cid, lines in facts.documented():
        prev: dict[str, Any] | None = None
        for ln, rec in lines:
            # (a rejection records a document as it is, a change no line had included)
            if prev is not None and prev.get("after_sha256") not in \
                    (rec.get("before_sha256"), rec.get("continues")) \
                    and rec.get("to_status") != lifecycle.REJECTED:
                yield ln, cid, (
                    f"line {ln} starts from {str(rec.get('before_sha256'))[:19]}… but the "
                    f"previous line for {cid} ended at {str(prev.get('after_sha256'))[:19]}…; "
                    "a change between them was not recorded, or a line was edited")
            prev = rec


@check("RV205", "error", "catalog", "unfinished-write", guards=True)
def unfinished_write(facts: LogFacts) -> Iterator[Row]:
    """The last log line of a component records a change the document does not have (the write
    was interrupted).

    Why: The log and the document disagree until the write is completed.

    Fix: Re-run the same command to complete it."""
    for cid, lines in facts.documented():
        ln, last = lines[-1]
        known = facts.known[cid]
        if unwritten(last, known.doc, known.names):
            yield ln, cid, (f"line {ln} records a change of {cid} that was never written "
                            "(interrupted); re-run the same command to complete it")


# --------------------------------------------------------------------------- RV3xx: approvals


@dataclass
class ApprovalFacts:
    """One approval record as the review sees it."""

    approval: Approval
    state: str  # unreadable | used | orphan | current | stale (approvals.standing) | superseded
    signature: SignatureCheck | None  # None when the record cannot be read
    required: bool  # catalog.require_signatures
    base_now: str | None  # the base hash of the component it names (None: no document)


@check("RV301", "error", "catalog", "unreadable-approval", guards=True)
def unreadable_approval(facts: ApprovalFacts) -> str | None:
    """An approval record cannot be read (not YAML, a missing field, a bad value), or holds
    what `risutools approve` would not write (a reviewer or note that is not one line of
    plain text, a blank reviewer, an `at` that is no ISO 8601 date and time with its zone,
    a `read` naming another base than the one it approves).

    Why: An approval nobody can read counts as no approval, and may hide a mistake; one
    written by hand past the command's rules could show a forged line to whoever reads it,
    and the gates count only what the command could have written.

    Fix: Write the record again with `risutools approve`."""
    return facts.approval.problem if facts.state == "unreadable" else None


@check("RV302", "error", "catalog", "bad-signature", guards=True)
def bad_signature(facts: ApprovalFacts) -> str | None:
    """An approval's signature does not verify, or its signer is not in allowed_signers.

    Why: A signature that fails is a forged or altered record, or a reviewer the catalog
    does not trust.

    Fix: Remove the record and approve again with an allowed key (`risutools approve --sign
    KEY`)."""
    sig = facts.signature
    if sig is not None and sig.status in ("bad", "not_allowed"):
        return f"signature {sig.status}: {sig.detail}"
    return None


@check("RV303", "error", "catalog", "missing-signature", guards=True)
def missing_signature(facts: ApprovalFacts) -> str | None:
    """Signatures are required (catalog.require_signatures) and an approval is not signed by an
    allowed signer.

    Why: Where signatures are required, an unsigned record counts as no approval.  A record
    whose decision (component, action, base hash) a signed record also holds is superseded,
    and not reported.

    Fix: Approve again with `risutools approve --sign KEY`."""
    sig = facts.signature
    if facts.required and sig is not None and not counts(sig, True) \
            and facts.state != SUPERSEDED:
        return (f"signatures are required and this record's is {sig.status} ({sig.detail}); "
                "it counts as no approval")
    return None


@check("RV304", "warning", "catalog", "stale-approval")
def stale_approval(facts: ApprovalFacts) -> str | None:
    """An approval names a base hash the component no longer has.

    Why: It approved other bytes than the current document.

    Fix: Read the current document and approve it again."""
    if facts.state != "stale":
        return None
    a = facts.approval
    return (f"stale: it approved base {a.field('base_sha256')[:19]}… but "
            f"{a.field('component_id')} is now {str(facts.base_now)[:19]}…; approve the "
            "current version")


@check("RV305", "warning", "catalog", "orphan-approval")
def orphan_approval(facts: ApprovalFacts) -> str | None:
    """An approval names a component that no document of the catalog has.

    Why: The component was removed or renamed; the record approves nothing.

    Fix: Remove the record, or restore the document."""
    if facts.state != "orphan":
        return None
    return f"no document of the catalog is {facts.approval.field('component_id')}"


# --------------------------------------------------------------------------- RV6xx: notes


@dataclass
class NotesFacts:
    """The catalog's notes folder and its documents."""

    folder: Path
    entries: list[Entry]


@check("RV601", "warning", "catalog", "orphan-notes")
def orphan_notes(facts: NotesFacts) -> Iterator[tuple[str, str]]:
    """A curator notes file (notes/*.yaml) matches no component of the catalog: not its id,
    nor a slug alias of its stable id, nor a `for:` naming its source digest, nor the
    digest a document records for its notes.

    Why: Notes that apply to nothing are a curator's work lost, usually to a misspelled
    file name or a component renamed by hand.

    Fix: Rename the file after its component (`notes/<component_id>.yaml`), or give it a
    `for:` naming the module's source digest."""
    used: set[str] = set()
    index = notes_index(facts.folder)  # (taken once: each lookup O(1))
    for e in facts.entries:
        found = find_notes(facts.folder, e.component_id, index=index,
                           **document_keys(e.parts))
        if found is not None:
            used.add(found.name)
    for name in orphans(facts.folder, used, index):
        yield f"notes/{name}", (f"notes/{name} matches no component of the catalog; rename "
                                "it after its component, or give it a `for:`")
