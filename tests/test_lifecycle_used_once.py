"""An approval record approves one step, and a candidate's log names no step (found by a
fuzzing pass, stop 42).

A switch (activate/deactivate) leaves the base hash as it was, so an ``activate`` record
used once still named the current base hash: it let the component be switched on again
later with no new decision.  And a line written by hand for a candidate (any kind) passed
``validate`` and ``review``: MC305 read only documents past candidate."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from harness import run_cli
from test_catalog_support import CUTTER, MOOD, doc_path, fresh_catalog, load, log_lines
from test_lifecycle_forgery import needs_ssh, signed_cat  # noqa: F401 (a fixture)

from risutools.settings.lifecycle import base_sha256

ZERO = "sha256:" + "0" * 64


def _ok(*args: str | Path) -> None:
    r = run_cli(*args)
    assert r.returncode == 0, (args, r.stdout, r.stderr)


def _switched_on_and_off(cat: Path, key: Path) -> None:
    """The cutter approved, then switched on and off, each with its own signed record."""
    _ok("approve", CUTTER, "--action", "approve", "--reviewer", "kim", "--sign", key,
        "--catalog", cat)
    _ok("promote", CUTTER, "--to", "approved", "--catalog", cat)
    for action in ("activate", "deactivate"):  # (each switch's command is its action)
        _ok("approve", CUTTER, "--action", action, "--reviewer", "kim", "--sign", key,
            "--catalog", cat)
        _ok(action, CUTTER, "--catalog", cat)
    _ok("validate", cat)


@needs_ssh
def test_a_used_switch_approval_does_not_switch_again(
        signed_cat: tuple[Path, Path, Path]) -> None:  # noqa: F811
    cat, key, _ = signed_cat
    _switched_on_and_off(cat, key)
    before = (cat / "transitions.ndjson").read_bytes()
    r = run_cli("activate", CUTTER, "--catalog", cat)
    assert r.returncode == 1, r.stdout
    assert "used by a recorded step already" in r.stdout + r.stderr
    assert (cat / "transitions.ndjson").read_bytes() == before
    assert load(doc_path(cat, CUTTER))["provenance"]["runtime_status"] == "inactive"
    # a new record switches it (a note of its own: the same fields in the same second are
    # the record already used, tests/test_lifecycle_record_identity.py)
    _ok("approve", CUTTER, "--action", "activate", "--reviewer", "kim", "--sign", key,
        "--note", "on again", "--catalog", cat)
    _ok("activate", CUTTER, "--catalog", cat)
    _ok("validate", cat)


@needs_ssh
def test_a_log_that_uses_a_record_twice_fails_validate_and_review(
        signed_cat: tuple[Path, Path, Path]) -> None:  # noqa: F811
    cat, key, _ = signed_cat
    _switched_on_and_off(cat, key)
    on = next(r for r in log_lines(cat) if r.get("to_runtime") == "active")
    p = doc_path(cat, CUTTER)
    doc = load(p)
    doc["provenance"]["runtime_status"] = "active"  # what the replayed switch would write
    p.write_text(json.dumps(doc, ensure_ascii=False, indent=2) + "\n")
    again = {**on, "at": "2026-12-05T00:00:00+00:00"}
    with open(cat / "transitions.ndjson", "a", encoding="utf-8") as f:
        f.write(json.dumps(again) + "\n")
    for command in ("validate", "review"):
        r = run_cli(command, cat)
        assert r.returncode == 1, (command, r.stdout)
        assert "was already used by line" in r.stdout, command


def _forged_line(cat: Path, **fields: object) -> None:
    rec = {"component_id": MOOD, "before_sha256": ZERO, "after_sha256": ZERO,
           "at": "2026-01-01T00:00:00+00:00", "tool_version": "0.1.0", **fields}
    (cat / "transitions.ndjson").write_text(json.dumps(rec) + "\n", "utf-8")


FORGED = {
    "a step": {"from_status": "candidate", "to_status": "pending_human_review",
               "approval": {"file": "approvals/x.yaml", "sha256": ZERO}},
    "a switch": {"kind": "runtime", "from_runtime": "inactive", "to_runtime": "active"},
    "a publish": {"kind": "publish", "from_publishable": False, "to_publishable": True,
                  "approval": {"file": "approvals/x.yaml", "sha256": ZERO}},
}


@pytest.mark.parametrize("kind", sorted(FORGED))
def test_a_line_naming_a_candidate_fails_validate_review_and_the_gate(
        kind: str, tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    cat = fresh_catalog(tmp_path_factory, tmp_path / "cat")
    assert load(doc_path(cat, MOOD))["provenance"]["review_status"] == "candidate"
    _forged_line(cat, **FORGED[kind])
    for command in ("validate", "review"):
        r = run_cli(command, cat)
        assert r.returncode == 1, (command, r.stdout)
        assert "review_status is 'candidate' but transitions.ndjson line 1" in r.stdout, command
    r = run_cli("promote", MOOD, "--to", "pending_human_review", "--dry-run", "--catalog", cat)
    assert r.returncode == 1
    assert "transitions.ndjson line 1 moved it to" in r.stdout + r.stderr
    assert "candidate with no recorded transitions" not in r.stdout + r.stderr


def test_a_candidate_whose_first_step_was_not_written_is_told_to_re_run(
        tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    """The command wrote its line and stopped before the document (write-ahead): the gate
    names that case (validate, which keeps no candidate's body, names both)."""
    cat = fresh_catalog(tmp_path_factory, tmp_path / "cat")
    base = base_sha256(load(doc_path(cat, MOOD)))
    ap = cat / "approvals" / "r.yaml"
    ap.parent.mkdir(exist_ok=True)
    ap.write_text("component_id: x\n")
    _forged_line(cat, from_status="candidate", to_status="pending_human_review",
                 before_sha256=base, after_sha256=ZERO,
                 approval={"file": "approvals/r.yaml",
                           "sha256": "sha256:" + hashlib.sha256(ap.read_bytes()).hexdigest()})
    r = run_cli("promote", MOOD, "--to", "rejected", "--dry-run", "--catalog", cat)
    assert "re-run that command to complete it" in r.stdout + r.stderr
    r = run_cli("validate", cat)
    assert r.returncode == 1 and "re-run the command that wrote the line" in r.stdout


def test_a_candidate_no_line_names_passes(tmp_path_factory: pytest.TempPathFactory,
                                          tmp_path: Path) -> None:
    cat = fresh_catalog(tmp_path_factory, tmp_path / "cat")
    r = run_cli("promote", MOOD, "--to", "pending_human_review", "--dry-run", "--catalog", cat)
    assert "candidate: transitions.ndjson has no line naming it" in r.stdout + r.stderr
