"""Whether an approval is current is decided with the records the log used, everywhere
(pin44): a full packet's ``current`` flag and the review board's path to approved called
``standing()`` without them, so a record a log line had used showed as current there while
the gates refused it.  ``standing`` now takes the used records with no default
(:class:`risutools.contract.transitions.UsedRecords`, made only from a log)."""

from __future__ import annotations

import hashlib
import inspect
import json
from pathlib import Path

import pytest
from harness import run_cli
from test_catalog_support import CUTTER, fresh_catalog, require_signatures
from test_lifecycle_forgery import _key, needs_ssh

from risutools.catalog import approvals


def _ok(*args: str | Path) -> str:
    r = run_cli(*args)
    assert r.returncode == 0, (args, r.stdout, r.stderr)
    return str(r.stdout)


def _record(cat: Path, action: str) -> Path:
    [p] = sorted((cat / "approvals").glob(f"*--{action}--*.yaml"))
    return p


@needs_ssh
def test_a_used_activation_is_not_current_in_a_full_packet(
        tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    """Switched on and off where signatures are required: the activation's record still
    names the base hash (a switch leaves it as it was), but a line used it; the gate refuses
    it, and so does the packet."""
    cat = fresh_catalog(tmp_path_factory, tmp_path)
    key, line = _key(tmp_path, "kim")
    (cat / ".allowed_signers").write_text(line)
    require_signatures(cat, ".allowed_signers")
    sign = ("--reviewer", "kim", "--sign", key, "--catalog", cat)
    for action, to in (("request_review", "pending_human_review"), ("approve", "approved")):
        _ok("approve", CUTTER, "--action", action, *sign)
        _ok("promote", CUTTER, "--to", to, "--catalog", cat)
    _ok("replay", "run", cat / f"{CUTTER}.json", "--fixture",
        Path(__file__).parent.parent / "fixtures" / "replay" / "anchor-edit.yaml", "--update")
    for action in ("activate", "deactivate"):
        _ok("approve", CUTTER, "--action", action, *sign)
        _ok(action, CUTTER, "--catalog", cat)
    gate = run_cli("activate", CUTTER, "--catalog", cat, "--dry-run")
    assert gate.returncode == 1 and "was used by a recorded step already" in gate.stdout, \
        gate.stdout
    out = tmp_path / "packets"
    _ok("packet", CUTTER, "--lane", "full", "--catalog", cat, "-o", out)
    [packet] = out.glob("*.json")
    rows = json.loads(packet.read_text("utf-8"))["relations"]["approvals"]
    activation = [r for r in rows if r["action"] == "activate"]
    assert len(activation) == 1 and activation[0]["current"] is False, rows
    assert not [r for r in rows if r["current"]], rows  # every record was used


def test_the_board_path_asks_what_the_gate_asks(tmp_path_factory: pytest.TempPathFactory,
                                                tmp_path: Path) -> None:
    """A pending component's approve record, named by a line that used it (a line of
    another component): the approval gate refuses it, and the path to approved says the
    approval is missing (it said done)."""
    cat = fresh_catalog(tmp_path_factory, tmp_path)
    _ok("approve", CUTTER, "--action", "request_review", "--reviewer", "kim", "--catalog", cat)
    _ok("promote", CUTTER, "--to", "pending_human_review", "--catalog", cat)
    _ok("approve", CUTTER, "--action", "approve", "--reviewer", "kim", "--catalog", cat)
    rec = _record(cat, "approve")
    line = {"component_id": "module.risu.1.ghost", "from_status": "candidate",
            "to_status": "pending_human_review", "before_sha256": "sha256:01",
            "after_sha256": "sha256:02",
            "approval": {"file": f"approvals/{rec.name}",
                         "sha256": "sha256:" + hashlib.sha256(rec.read_bytes()).hexdigest()},
            "at": "2026-12-02T00:00:00+00:00", "tool_version": "0.1.0"}
    with open(cat / "transitions.ndjson", "a", encoding="utf-8") as f:
        f.write(json.dumps(line) + "\n")
    r = run_cli("review", cat, "-q", "-f", "json")
    board = {row["component_id"]: row for row in json.loads(r.stdout)["board"]}
    row = board[CUTTER]
    assert "approval" in row["blocked_by"], row
    [part] = [p for p in row["path"] if p["part"] == "approvals"]
    assert part["state"] == "missing" and "approve" in part["detail"], row["path"]


def test_standing_cannot_be_asked_without_the_used_records() -> None:
    for fn in (approvals.standing, approvals.find_approval):
        used = inspect.signature(fn).parameters["used"]
        assert used.default is inspect.Parameter.empty, fn
