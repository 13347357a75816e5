"""The review lifecycle is one table (risutools.settings.lifecycle): the schema's enums,
the steps, the actions and the command line's choices all agree with it."""

from __future__ import annotations

from harness import run_cli

from risutools.resources import load_schema
from risutools.settings import lifecycle as lc


def _enum(*path: str) -> list[str]:
    node = load_schema("matrix-component-v1.schema.json")
    for key in path:
        node = node["properties"][key]
    return list(node["enum"])


def test_the_schema_names_the_same_states() -> None:
    assert tuple(_enum("provenance", "review_status")) == lc.STATES
    assert tuple(_enum("payload", "idea_layers", "lineage", "promotion_status")) == lc.STATES
    assert set(lc.RUNTIME_STATES) <= set(_enum("provenance", "runtime_status"))


def test_the_steps_walk_from_the_start_to_the_end() -> None:
    status, walked = lc.START, [lc.START]
    while (step := lc.next_step(status)) is not None:
        assert step.frm == status and lc.action_for(step.frm, step.to) == step.action
        assert lc.TARGET_OF[step.action] == step.to and step.decision
        status = step.to
        walked.append(status)
    assert walked == ["candidate", "pending_human_review", "approved", "promoted", "retired"]
    assert lc.next_step("rejected") is None and lc.next_step("bogus") is None


def test_reject_leaves_every_state_but_rejected() -> None:
    for s in lc.STATES:
        assert lc.action_for(s, lc.REJECTED) == (None if s == lc.REJECTED else lc.REJECT)
    assert lc.action_for("candidate", "approved") is None  # no skipping a step
    assert lc.action_for("approved", "candidate") is None  # nor going back
    assert lc.action_for("bogus", lc.REJECTED) is None


def test_actions_and_targets_come_from_the_steps() -> None:
    assert set(lc.REVIEW_ACTIONS) == {s.action for s in lc.STEPS} | {lc.REJECT}
    assert set(lc.ACTIONS) == set(lc.REVIEW_ACTIONS) | set(lc.SWITCH_ACTION.values()) | {
        lc.PUBLISH}
    assert {lc.SWITCH_TO[a] for a in lc.SWITCH_ACTION.values()} == set(lc.RUNTIME_STATES)
    assert set(lc.TARGETS) == {s.to for s in lc.STEPS} | {lc.REJECTED}
    assert lc.START not in lc.TARGETS and set(lc.TARGET_OF.values()) == set(lc.TARGETS)
    for group in (lc.APPROVED, lc.REVIEWED, lc.CONTRACT_GATED, lc.NARRATIVE_REQUIRED, lc.LEAVING,
                  lc.BOARD):
        assert set(group) <= set(lc.STATES)
    assert all(lc.next_step(s) is not None for s in lc.BOARD)


def test_the_command_line_lists_the_table() -> None:
    approve = run_cli("approve", "-h").stdout
    promote = run_cli("promote", "-h").stdout
    assert " | ".join(lc.ACTIONS) in " ".join(approve.split())
    assert " | ".join(lc.TARGETS) in " ".join(promote.split())


def test_open_actions_follow_the_table() -> None:
    assert lc.open_actions("candidate", "inactive") == ("request_review", "reject")
    assert lc.open_actions("approved", "inactive") == ("reject", "promote", "activate")
    assert lc.open_actions("promoted", "active") == ("reject", "retire", "deactivate",
                                                     "publish")
    assert lc.open_actions("promoted", "inactive", published=True) == ("reject", "retire",
                                                                       "activate")
    assert lc.open_actions("rejected", "inactive") == ()
    assert lc.open_actions("pending_human_review", "inactive") == ("approve", "reject")
