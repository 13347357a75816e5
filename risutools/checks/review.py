"""The findings of ``risutools review`` about the catalog as a whole (RV101-RV305),
declared in the check registry.

The review's logic stays in :mod:`risutools.catalog.review` (and the capability graph in
:mod:`risutools.catalog.graph`, whose problem kinds are the RV1xx titles); the contract's
own findings (MC...) are reported by the review too, under their ids.  RV1xx: the
capability graph, RV2xx: the transition log, RV3xx: approval records.  Severity is the
default; RV101 is a warning while the component that needs the capability is not active.
"""

from __future__ import annotations

from risutools.checks.registry import declare

RV101 = declare(
    "RV101", "error", "catalog", "unmet-requirement",
    summary="A live component requires a capability that no active or promoted component "
    "and no host hook provides (an error when the component is active, else a warning).",
    why="The component will not work where it is switched on, and nothing at run time "
    "says why.",
    fix="Promote a provider of the capability, or drop the requirement.")
RV102 = declare(
    "RV102", "error", "catalog", "active-conflict",
    summary="Two active components conflict (either side's conflicts names what the other "
    "provides).",
    why="Conflicting components active together break each other.",
    fix="Deactivate one of them (`risutools deactivate`).")
RV103 = declare(
    "RV103", "error", "catalog", "exclusive-capability",
    summary="More than one active component provides an exclusive capability.",
    why="An exclusive capability (one context cutter, say) has one provider at a time.",
    fix="Keep one provider active and deactivate the others.")

RV201 = declare(
    "RV201", "error", "catalog", "broken-log-line",
    summary="A line of transitions.ndjson is not a valid transition record.",
    why="The log is the catalog's history: a line that cannot be read hides a change.",
    fix="Restore the line from version control; never edit the log by hand.")
RV202 = declare(
    "RV202", "warning", "catalog", "unknown-component",
    summary="transitions.ndjson names a component that no document of the catalog has.",
    why="A component whose history is recorded was removed or renamed without a record.",
    fix="Restore the document, or retire the component through `risutools promote` "
    "before removing it.")
RV203 = declare(
    "RV203", "error", "catalog", "bad-runtime-line",
    summary="A runtime line of transitions.ndjson is not a switch between inactive and "
    "active.",
    why="A runtime line that is not a switch records a state the tools never write.",
    fix="Restore the line from version control.")
RV204 = declare(
    "RV204", "error", "catalog", "hash-discontinuity",
    summary="A component's log line does not start from the hash the previous line for "
    "it ended at.",
    why="A change between the two lines was not recorded, or a line was edited.",
    fix="Find the unrecorded change in version control; record changes only with "
    "`risutools promote`.")
RV205 = declare(
    "RV205", "error", "catalog", "unfinished-write",
    summary="The last log line of a component records a change the document does not "
    "have (the write was interrupted).",
    why="The log and the document disagree until the write is completed.",
    fix="Re-run the same command to complete it.")

RV301 = declare(
    "RV301", "error", "catalog", "unreadable-approval",
    summary="An approval record cannot be read (not YAML, a missing field, a bad value).",
    why="An approval nobody can read counts as no approval, and may hide a mistake.",
    fix="Write the record again with `risutools approve`.")
RV302 = declare(
    "RV302", "error", "catalog", "bad-signature",
    summary="An approval's signature does not verify, or its signer is not in "
    "allowed_signers.",
    why="A signature that fails is a forged or altered record, or a reviewer the catalog "
    "does not trust.",
    fix="Remove the record and approve again with an allowed key (`risutools approve "
    "--sign KEY`).")
RV303 = declare(
    "RV303", "error", "catalog", "missing-signature",
    summary="Signatures are required (catalog.require_signatures) and an approval is not "
    "signed by an allowed signer.",
    why="Where signatures are required, an unsigned record counts as no approval.",
    fix="Approve again with `risutools approve --sign KEY`.")
RV304 = declare(
    "RV304", "warning", "catalog", "stale-approval",
    summary="An approval names a base hash the component no longer has.",
    why="It approved other bytes than the current document.",
    fix="Read the current document and approve it again.")
RV305 = declare(
    "RV305", "warning", "catalog", "orphan-approval",
    summary="An approval names a component that no document of the catalog has.",
    why="The component was removed or renamed; the record approves nothing.",
    fix="Remove the record, or restore the document.")
