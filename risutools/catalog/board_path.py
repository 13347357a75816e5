"""Each board row's whole path to ``approved``: what is still missing for the component to
get there, not only the gate of its next step (narrative, replay, digests, approvals)."""

from __future__ import annotations

from typing import Any

from risutools.catalog.approvals import Approval, find_approval
from risutools.catalog.catalog import Catalog, Entry
from risutools.catalog.gates import NA, PASS, replay_check
from risutools.contract.rules import mc600
from risutools.contract.transitions import UsedRecords
from risutools.contract.validate import Verification
from risutools.findings import Finding
from risutools.settings import lifecycle

GOAL = "approved"


def steps_to(status: str, goal: str = GOAL) -> list[lifecycle.Step]:
    """The forward steps from ``status`` to ``goal`` (empty at or past it)."""
    out: list[lifecycle.Step] = []
    step = lifecycle.next_step(status)
    while step is not None and status != goal:
        out.append(step)
        if step.to == goal:
            return out
        step = lifecycle.next_step(step.to)
    return out if out and out[-1].to == goal else []


#: status -> the actions of its steps to :data:`GOAL` (:func:`steps_to`), made once a status
_WANTED: dict[str, tuple[str, ...]] = {}


def _wanted(status: str) -> tuple[str, ...]:
    got = _WANTED.get(status)
    if got is None:
        got = _WANTED[status] = tuple(s.action for s in steps_to(status))
    return got


def path_to_approved(cat: Catalog, e: Entry, findings: list[Finding] | None,
                     verifications: list[Verification],
                     approvals: list[Approval], used: UsedRecords) -> list[dict[str, Any]]:
    """The four parts of the path, each ``done``, ``missing`` or ``n/a``, with a detail
    (``used``: the records the log's lines used, which approve no further step).  An
    approval is done when the approval gate would take it (:func:`find_approval`: read,
    named for the component and the action, current, of the document's version, signed
    and allowed where signatures are required), never on a weaker test."""
    if findings is None or cat.config.severities.get(mc600.id) == "off":
        # (the gate checks the narrative from approved on whatever the settings say: the
        # findings a configuration turned off hold no verdict, so the rule runs here)
        narrative = list(mc600(e.doc, cat.config))
    else:
        narrative = [f for f in findings if f.rule == mc600.id]
    replay, why = replay_check(e, lambda: verifications)  # (G6's own verdict: the
    # document's replay_status alone said "done" of a report missing, failed or forged)
    status = e.get("projection", "replay_status")
    if replay == PASS or status != "passed":
        why = f"replay_status {status}"
    bad = [v.status for v in verifications if v.status != "verified"]
    wanted = list(_wanted(e.review_status))
    # (no record of the component: none approves a step, so no verdict is worded for it)
    missing = [act for act in wanted
               if not approvals or not find_approval(cat, e, act, approvals, used).ok]
    return [
        _part("narrative", not narrative, "situation, core and invariants written"
              if not narrative else f"{mc600.id}: write them in the curator notes"),
        {"part": "replay", "state": "n/a", "detail": "no context.* capability"}
        if replay == NA else _part("replay", replay == PASS, why),
        _part("digests", bool(verifications) and not bad,
              "every digest verified" if verifications and not bad else
              (", ".join(sorted(set(bad))) if bad else "no digest checked")),
        _part("approvals", not missing,
              f"{len(wanted) - len(missing)} of {len(wanted)}"
              + (f": missing {', '.join(missing)}" if missing else "")),
    ]


def _part(name: str, done: bool, detail: str) -> dict[str, Any]:
    return {"part": name, "state": "done" if done else "missing", "detail": detail}
