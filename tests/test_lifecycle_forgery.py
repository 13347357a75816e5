"""CI catches forgery (issue 20): `validate` checks the transition log against the documents
and the approval records and, where signatures are required, their signatures against
allowed_signers -- with the decision `promote` and `review` use.  The trust root can be
pinned on the command line (`--allowed-signers FILE`), and a configuration may not point it
outside its repository."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from harness import run_cli
from test_catalog_support import (
    CUTTER,
    doc_path,
    fresh_catalog,
    load,
    log_lines,
    require_signatures,
)

from risutools.settings.lifecycle import base_sha256

needs_ssh = pytest.mark.skipif(
    shutil.which("ssh-keygen") is None and not os.environ.get("RISUTOOLS_REQUIRE_SSH"),
    reason="ssh-keygen (openssh-client) is not installed")


def _key(tmp: Path, name: str) -> tuple[Path, str]:
    k = tmp / f"key-{name}"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(k)],
                   check=True)
    kind, blob = (tmp / f"key-{name}.pub").read_text().split()[:2]
    return k, f"{name} {kind} {blob}\n"


@pytest.fixture
def signed_cat(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
               ) -> tuple[Path, Path, Path]:
    """A catalog requiring signatures, its cutter moved to pending with a signed approval;
    (catalog, kim's key, the signers file as the base branch has it)."""
    cat = fresh_catalog(tmp_path_factory, tmp_path)
    (cat / ".git").mkdir()  # the repository root (where a configuration's paths must stay)
    key, line = _key(tmp_path, "kim")
    (cat / ".allowed_signers").write_text(line)
    pinned = tmp_path / "base-branch-signers"
    pinned.write_text(line)
    cfg = (cat / ".risutools.yaml").read_text()
    (cat / ".risutools.yaml").write_text(
        cfg + "catalog:\n  allowed_signers: .allowed_signers\n  require_signatures: true\n")
    r = run_cli("approve", CUTTER, "--action", "request_review", "--reviewer", "kim",
                "--sign", key, "--catalog", cat)
    assert r.returncode == 0, r.stderr
    assert run_cli("promote", CUTTER, "--to", "pending_human_review", "--catalog",
                   cat).returncode == 0
    assert run_cli("validate", cat).returncode == 0
    return cat, key, pinned


def _forge(cat: Path, signature: str | None = None) -> None:
    """What a script with write access does: the status edited, an approval written by
    hand, a log line appended (every hash right)."""
    p = doc_path(cat, CUTTER)
    doc = load(p)
    base = base_sha256(doc)
    rec = {"component_id": CUTTER, "component_version": doc["component_version"],
           "action": "approve", "reviewer": "kim", "at": "2026-12-02T00:00:00+00:00",
           "base_sha256": base, "note": ""}
    if signature is not None:
        rec["signature"] = signature
    ap = cat / "approvals" / "forged.yaml"
    ap.write_text(json.dumps(rec))
    doc["provenance"]["review_status"] = "approved"
    doc["payload"]["idea_layers"]["lineage"]["promotion_status"] = "approved"
    p.write_text(json.dumps(doc, ensure_ascii=False, indent=2) + "\n")
    import hashlib

    line = {"component_id": CUTTER, "from_status": "pending_human_review",
            "to_status": "approved", "before_sha256": base, "after_sha256": base_sha256(doc),
            "approval": {"file": "approvals/forged.yaml",
                         "sha256": "sha256:" + hashlib.sha256(ap.read_bytes()).hexdigest()},
            "at": "2026-12-02T00:00:00+00:00", "tool_version": "0.1.0"}
    with open(cat / "transitions.ndjson", "a") as f:
        f.write(json.dumps(line) + "\n")


@needs_ssh
def test_an_unsigned_forgery_fails_validate_review_and_promote_alike(
        signed_cat: tuple[Path, Path, Path]) -> None:
    cat, _, _ = signed_cat
    _forge(cat)
    v = run_cli("validate", cat, "-f", "concise")
    assert v.returncode == 1
    (line,) = [x for x in v.stdout.splitlines() if "MC305" in x]
    assert "approvals/forged.yaml' (line 2) does not count as an approval: signature " \
           "unsigned" in line and "signatures are required" in line
    rv = run_cli("review", cat, "-f", "concise")
    assert rv.returncode == 1 and "does not count as an approval: signature unsigned" in rv.stdout
    pr = run_cli("promote", CUTTER, "--to", "promoted", "--catalog", cat, "--dry-run")
    assert pr.returncode == 1
    assert "FAIL  history" in pr.stdout and "signature unsigned" in pr.stdout
    # the record alone (no line) is also reported by the review (RV303), not by validate
    assert "RV303" in rv.stdout


@needs_ssh
def test_a_key_the_pull_request_added_counts_only_until_the_trust_root_is_pinned(
        signed_cat: tuple[Path, Path, Path], tmp_path: Path) -> None:
    cat, _, pinned = signed_cat
    mallory, line = _key(tmp_path, "mallory")
    # the pull request adds its own key for "kim" to the repository's signers file
    with open(cat / ".allowed_signers", "a") as f:
        f.write(line.replace("mallory", "kim", 1))
    _forge(cat)
    (cat / "approvals" / "forged.yaml").unlink()
    lines = (cat / "transitions.ndjson").read_text().splitlines()[:-1]
    (cat / "transitions.ndjson").write_text("\n".join(lines) + "\n")
    doc = load(doc_path(cat, CUTTER))
    doc["provenance"]["review_status"] = "pending_human_review"
    doc["payload"]["idea_layers"]["lineage"]["promotion_status"] = "pending_human_review"
    doc_path(cat, CUTTER).write_text(json.dumps(doc, ensure_ascii=False, indent=2) + "\n")
    r = run_cli("approve", CUTTER, "--action", "approve", "--reviewer", "kim", "--sign",
                mallory, "--catalog", cat)
    assert r.returncode == 0, r.stderr
    assert run_cli("promote", CUTTER, "--to", "approved", "--catalog", cat).returncode == 0
    assert run_cli("validate", cat).returncode == 0  # the PR's own trust root accepts it
    v = run_cli("validate", cat, "--allowed-signers", pinned, "-f", "concise")
    assert v.returncode == 1 and "signature not_allowed" in v.stdout, v.stdout
    assert len([x for x in v.stdout.splitlines() if "MC305" in x]) == 1


@needs_ssh
def test_a_bad_signature_in_the_chain_is_an_error(signed_cat: tuple[Path, Path, Path]) -> None:
    cat, _, pinned = signed_cat
    (ap,) = (cat / "approvals").glob("*.yaml")
    text = ap.read_text()
    lines = text.splitlines()
    i = next(n for n, ln in enumerate(lines) if "BEGIN SSH SIGNATURE" in ln) + 2
    lines[i] = lines[i][:-4] + ("AAAA" if not lines[i].endswith("AAAA") else "BBBB")
    ap.write_text("\n".join(lines) + "\n")
    # (the log line names the record's old bytes: MC305 says so, and that it does not count)
    v = run_cli("validate", cat, "--allowed-signers", pinned, "-f", "concise")
    assert v.returncode == 1 and "changed after it was recorded" in v.stdout
    assert "signature bad" in v.stdout


def test_without_required_signatures_an_unsigned_chain_is_valid(
        tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    cat = fresh_catalog(tmp_path_factory, tmp_path)
    run_cli("approve", CUTTER, "--action", "request_review", "--reviewer", "kim",
            "--catalog", cat)
    assert run_cli("promote", CUTTER, "--to", "pending_human_review", "--catalog",
                   cat).returncode == 0
    assert run_cli("validate", cat).returncode == 0
    # a status with no log line is an error
    lines = log_lines(cat)
    assert len(lines) == 1
    (cat / "transitions.ndjson").write_text("")
    v = run_cli("validate", cat, "-f", "concise")
    assert v.returncode == 1 and "records no transition" in v.stdout


def test_the_trust_root_stays_inside_the_repository(
        tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    cat = fresh_catalog(tmp_path_factory, tmp_path)
    outside = tmp_path / "elsewhere-signers"
    outside.write_text("")
    require_signatures(cat, "../elsewhere-signers")
    v = run_cli("validate", cat)
    assert v.returncode == 2 and "config-signers-outside" in v.stderr
    assert len(v.stderr.strip().splitlines()) == 1
    assert run_cli("validate", cat, "--allow-config-signers-outside").returncode == 0
    assert run_cli("validate", cat, "--allowed-signers", outside).returncode == 0
    m = run_cli("validate", cat, "--allowed-signers", tmp_path / "missing")
    assert m.returncode == 2 and "not-found" in m.stderr


def _signed_step(cat: Path, key: Path, action: str, to: str | None) -> None:
    r = run_cli("approve", CUTTER, "--action", action, "--reviewer", "kim", "--sign", key,
                "--catalog", cat)
    assert r.returncode == 0, r.stderr
    if to is not None:
        r = run_cli("promote", CUTTER, "--to", to, "--catalog", cat)
        assert r.returncode == 0, r.stdout


@needs_ssh
def test_a_switch_needs_a_signed_approval_where_signatures_are_required(
        signed_cat: tuple[Path, Path, Path]) -> None:
    cat, key, pinned = signed_cat
    _signed_step(cat, key, "approve", "approved")
    # an approval of the next step, made before the switch, is not made stale by it
    _signed_step(cat, key, "promote", None)
    r = run_cli("activate", CUTTER, "--catalog", cat)
    assert r.returncode == 1 and "FAIL  switch-approval" in r.stdout
    r = run_cli("approve", CUTTER, "--action", "activate", "--reviewer", "kim",
                "--catalog", cat)  # unsigned: does not count
    assert r.returncode == 0
    assert run_cli("activate", CUTTER, "--catalog", cat).returncode == 1
    _signed_step(cat, key, "activate", None)
    r = run_cli("activate", CUTTER, "--catalog", cat)
    assert r.returncode == 0, r.stdout
    line = log_lines(cat)[-1]
    assert line["kind"] == "runtime" and line["approval"]["file"].endswith(".yaml")
    assert run_cli("validate", cat, "--allowed-signers", pinned).returncode == 0
    # the promote approval (on the inactive document) still holds
    r = run_cli("promote", CUTTER, "--to", "promoted", "--catalog", cat)
    assert r.returncode == 0, r.stdout
    assert run_cli("validate", cat, "--allowed-signers", pinned).returncode == 0
    rv = run_cli("review", cat, "-f", "concise")
    assert "RV303" not in rv.stdout  # the unsigned activate record is superseded
    assert rv.returncode == 0, rv.stdout


@needs_ssh
def test_a_hand_written_switch_fails_validate(signed_cat: tuple[Path, Path, Path]) -> None:
    cat, key, pinned = signed_cat
    _signed_step(cat, key, "approve", "approved")
    p = doc_path(cat, CUTTER)
    doc = load(p)
    before = base_sha256(doc)
    doc["provenance"]["runtime_status"] = "active"
    p.write_text(json.dumps(doc, ensure_ascii=False, indent=2) + "\n")
    line = {"kind": "runtime", "component_id": CUTTER, "from_runtime": "inactive",
            "to_runtime": "active", "before_sha256": before, "after_sha256": base_sha256(doc),
            "actor": "script", "at": "2026-12-02T00:00:00+00:00", "tool_version": "0.1.0"}
    with open(cat / "transitions.ndjson", "a") as f:
        f.write(json.dumps(line) + "\n")
    v = run_cli("validate", cat, "--allowed-signers", pinned, "-f", "concise")
    assert v.returncode == 1 and "a runtime switch with no approval" in v.stdout


@needs_ssh
def test_a_signed_approval_supersedes_an_unsigned_one(
        signed_cat: tuple[Path, Path, Path]) -> None:
    cat, key, _ = signed_cat
    assert run_cli("approve", CUTTER, "--action", "approve", "--reviewer", "kim",
                   "--catalog", cat).returncode == 0
    rv = run_cli("review", cat, "-f", "concise")
    assert rv.returncode == 1 and "RV303" in rv.stdout
    _signed_step(cat, key, "approve", None)
    rv = run_cli("review", cat, "-f", "json")
    data = json.loads(rv.stdout)
    states = sorted(a["state"] for a in data["approvals"] if a["action"] == "approve")
    assert states == ["current", "superseded"]
    assert rv.returncode == 0 and "RV303" not in rv.stdout
