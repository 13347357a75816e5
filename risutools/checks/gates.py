"""The gates of ``promote`` and ``activate`` (G1-G13), declared in the check registry.

The gates' logic (what each looks at, the statuses it guards) stays in
:mod:`risutools.catalog.gates`; a gate is named in output by its title
(``transition``, ``digests`` ...), and ``risutools rule G4`` or ``risutools rule digests``
explains it.  G1-G9 guard review-status transitions, G10-G13 runtime switches (G2 guards
both).
"""

from __future__ import annotations

from risutools.checks.registry import declare

G1 = declare(
    "G1", "error", "promotion", "transition",
    summary="The target is the next lifecycle step from the current status (candidate -> "
    "pending_human_review -> approved -> promoted -> retired; any -> rejected).",
    why="A status that skips a step skips the review that step stands for.",
    fix="Promote one step at a time, with an approval for each.")
G2 = declare(
    "G2", "error", "promotion", "history",
    summary="The document ends its recorded chain of approved transitions (MC305); a "
    "candidate has no lines moving it on.",
    why="A status edited by hand would promote a component nobody approved.",
    fix="Restore the document to the status its transitions record, then use `risutools "
    "promote`.")
G3 = declare(
    "G3", "error", "promotion", "contract",
    summary="The new document passes the contract rules; from approved on MC600 (narrative) "
    "is an error.",
    why="A component that breaks the contract at its next status would be recorded as "
    "reviewed while being invalid.",
    fix="Fix the findings `risutools validate` reports for the document, then promote again.")
G4 = declare(
    "G4", "error", "promotion", "digests",
    summary="MC200/MC201 pass and every source_refs digest is verified (source store, notes, "
    "replays/); a source that is not at hand fails.",
    why="An approval vouches for exact bytes; an unverified digest approves something "
    "nobody read.",
    fix="Configure `sources:` (or `--sources`) so every referenced file is at hand, and "
    "re-project when a digest differs.")
G5 = declare(
    "G5", "error", "promotion", "active-code",
    summary="No active code in payload or projection (MC500).",
    why="The catalog describes modules; code in it could run where the catalog is read.",
    fix="Describe the code in prose, or move it out of payload and projection.")
G6 = declare(
    "G6", "error", "promotion", "replay",
    summary="When the component declares a context.* capability: replay_status is passed "
    "and a referenced replay report is verified by digest (MC203); otherwise n/a.",
    why="A context component that was never replayed may lose or rewrite what the user "
    "wrote.",
    fix="Run `risutools replay run ... --update` until it passes.")
G7 = declare(
    "G7", "error", "promotion", "conflict",
    summary="No conflict with an active or promoted component (either side's conflicts "
    "names what the other provides).",
    why="Two conflicting components approved together would both be switched on.",
    fix="Retire or deactivate the other component, or resolve the conflict.")
G8 = declare(
    "G8", "error", "promotion", "inactive",
    summary="A rejected or retired component is not active.",
    why="A component leaving the lifecycle must not keep running.",
    fix="`risutools deactivate` it first.")
G9 = declare(
    "G9", "error", "promotion", "approval",
    summary="A human approval for exactly this action, on exactly the current base hash and "
    "version, signed and allowed where required; an approval of another hash is stale.",
    why="Review status is a human decision; an approval of other bytes approves something "
    "else.",
    fix="Record an approval with `risutools approve` (with `--sign` where signatures are "
    "required) after reading the current document.")
G10 = declare(
    "G10", "error", "promotion", "runtime-state",
    summary="The switch starts from the other runtime state.",
    why="Activating an active component (or the reverse) means the caller's view is out of "
    "date.",
    fix="Read the component's runtime_status and switch it the other way.")
G11 = declare(
    "G11", "error", "promotion", "review-status",
    summary="Only approved or promoted components are active (MC302).",
    why="An active component that nobody approved runs unreviewed.",
    fix="Promote the component to approved first.")
G12 = declare(
    "G12", "error", "promotion", "active-conflict",
    summary="No conflict with an active component.",
    why="Two conflicting components active together break each other.",
    fix="Deactivate the other component first.")
G13 = declare(
    "G13", "error", "promotion", "exclusive",
    summary="No second active provider of an exclusive capability; n/a when the component "
    "provides none.",
    why="An exclusive capability (one context cutter, say) has one provider at a time.",
    fix="Deactivate the active provider first.")
