"""The base hash leaves the runtime fields out (issue 20): approvals, packets, `approve
--base/--packet`, the gates and the transition log name the canonical hash of the document
without `provenance.runtime_status`, so a runtime switch does not make an approval in flight
stale; the log checks the runtime state apart; a content change still does.  Catalogs written
before (whole-document hashes in the log) still validate and are continued."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from harness import FIXTURES, run_cli
from test_catalog_support import (
    CUTTER,
    doc_path,
    fresh_catalog,
    load,
    log_lines,
    require_signatures,
)
from test_lifecycle_forgery import _key, needs_ssh

from risutools.canonical import doc_sha256

FIXTURE = FIXTURES / "replay" / "anchor-edit.yaml"


def _ok(*args: Any) -> str:
    r = run_cli(*args)
    assert r.returncode == 0, (args, r.stdout, r.stderr)
    return str(r.stdout)


def _valid(cat: Path) -> None:
    r = run_cli("validate", cat, "-f", "concise")
    assert r.returncode == 0 and "MC305" not in r.stdout, r.stdout


def _hash(cat: Path) -> str:
    return _ok("hash", "-q", doc_path(cat, CUTTER)).strip()


def _review(cat: Path) -> dict[str, Any]:
    r = run_cli("review", cat, "-f", "json", "-j", "1")
    data: dict[str, Any] = json.loads(r.stdout)
    return data


def _state(cat: Path, action: str) -> list[str]:
    return [a["state"] for a in _review(cat)["approvals"] if a["action"] == action]


def _packet(cat: Path, out: Path) -> Path:
    _ok("packet", CUTTER, "--lane", "light", "-o", out, "--catalog", cat)
    (p,) = out.glob("*.json")
    return p


def test_the_base_hash_is_the_document_without_its_runtime_fields() -> None:
    from risutools.settings.lifecycle import base_names, base_sha256

    doc = json.loads((FIXTURES / "documents" / "seed-000-context-cutter.json").read_text())
    active = {**doc, "provenance": {**doc["provenance"], "runtime_status": "active"}}
    bare = {**doc, "provenance": {k: v for k, v in doc["provenance"].items()
                                  if k != "runtime_status"}}
    # by hand: sha256 of the canonical JSON (keys sorted, no spaces) without the field
    want = "sha256:" + hashlib.sha256(json.dumps(
        bare, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    assert base_sha256(doc) == base_sha256(active) == base_sha256(bare) == want
    assert doc_sha256(doc) != doc_sha256(active)  # (the whole document: what a write compares)
    assert base_names(doc) == {want, doc_sha256(doc)}
    assert doc["provenance"]["runtime_status"] == "inactive"  # never changed
    retitled = {**doc, "projection": {**doc["projection"], "title": "another title"}}
    assert base_sha256(retitled) != want


@needs_ssh
def test_an_approval_made_while_inactive_holds_across_a_signed_activation(
        tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    cat = fresh_catalog(tmp_path_factory, tmp_path)
    key, line = _key(tmp_path, "kim")
    (cat / ".allowed_signers").write_text(line)
    require_signatures(cat, ".allowed_signers")
    for action, to in (("request_review", "pending_human_review"), ("approve", "approved")):
        _ok("approve", CUTTER, "--action", action, "--reviewer", "kim", "--sign", key,
            "--catalog", cat)
        _ok("promote", CUTTER, "--to", to, "--catalog", cat)
    base = _hash(cat)
    pk = _packet(cat, tmp_path / "packets")  # read while inactive
    assert json.loads(pk.read_text())["base_sha256"] == base
    _ok("approve", CUTTER, "--action", "promote", "--reviewer", "kim", "--sign", key,
        "--catalog", cat)
    _ok("approve", CUTTER, "--action", "activate", "--reviewer", "kim", "--sign", key,
        "--catalog", cat)
    _ok("activate", CUTTER, "--catalog", cat)
    doc = load(doc_path(cat, CUTTER))
    assert doc["provenance"]["runtime_status"] == "active"
    last = log_lines(cat)[-1]
    assert (last["kind"], last["from_runtime"], last["to_runtime"]) == \
        ("runtime", "inactive", "active")
    assert last["before_sha256"] == last["after_sha256"] == base == _hash(cat)
    assert last["approval"]["file"].startswith(f"approvals/{CUTTER}--activate--")
    # the promote approval made while inactive is still current
    assert _state(cat, "promote") == ["current"]
    # so is the packet read before the activation: approve --packet accepts it
    r = run_cli("approve", CUTTER, "--action", "reject", "--reviewer", "kim", "--sign", key,
                "--packet", pk, "--catalog", cat)
    assert r.returncode == 0, r.stderr
    (rec,) = [yaml.safe_load(p.read_text()) for p in (cat / "approvals").glob("*--reject--*")]
    assert rec["read"]["base_sha256"] == rec["base_sha256"] == base
    _valid(cat)
    # a content change (replay evidence recorded into the document) makes them stale
    _ok("replay", "run", doc_path(cat, CUTTER), "-x", FIXTURE, "--update")
    assert _hash(cat) != base
    assert _state(cat, "promote") == ["stale"] and _state(cat, "reject") == ["stale"]
    r = run_cli("approve", CUTTER, "--action", "promote", "--reviewer", "kim", "--sign", key,
                "--packet", pk, "--catalog", cat)
    assert r.returncode == 1 and "base-moved" in r.stderr
    r = run_cli("promote", CUTTER, "--to", "promoted", "--catalog", cat)
    assert r.returncode == 1 and "stale approval" in r.stdout
    # approved again at the new base, the promotion goes through, active as it is
    _ok("approve", CUTTER, "--action", "promote", "--reviewer", "kim", "--sign", key,
        "--catalog", cat)
    _ok("promote", CUTTER, "--to", "promoted", "--catalog", cat)
    assert load(doc_path(cat, CUTTER))["provenance"]["runtime_status"] == "active"
    _valid(cat)


def test_an_approval_in_flight_survives_a_switch_and_promotes(
        tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    cat = fresh_catalog(tmp_path_factory, tmp_path)
    for action, to in (("request_review", "pending_human_review"), ("approve", "approved")):
        _ok("approve", CUTTER, "--action", action, "--reviewer", "kim", "--catalog", cat)
        _ok("promote", CUTTER, "--to", to, "--catalog", cat)
    base = _hash(cat)
    _ok("approve", CUTTER, "--action", "promote", "--reviewer", "kim", "--base", base,
        "--catalog", cat)
    _ok("activate", CUTTER, "--catalog", cat)
    _ok("deactivate", CUTTER, "--catalog", cat)
    _ok("activate", CUTTER, "--catalog", cat)
    assert _hash(cat) == base
    _ok("promote", CUTTER, "--to", "promoted", "--catalog", cat)
    lines = log_lines(cat)
    assert [ln.get("kind", "status") for ln in lines] == [
        "status", "status", "runtime", "runtime", "runtime", "status"]
    assert lines[-1]["before_sha256"] == base
    _valid(cat)
    rv = run_cli("review", cat, "-f", "concise")
    assert rv.returncode == 0 and "RV20" not in rv.stdout, rv.stdout


def test_a_runtime_status_no_switch_recorded_fails_validate(
        tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    cat = fresh_catalog(tmp_path_factory, tmp_path)
    for action, to in (("request_review", "pending_human_review"), ("approve", "approved")):
        _ok("approve", CUTTER, "--action", action, "--reviewer", "kim", "--catalog", cat)
        _ok("promote", CUTTER, "--to", to, "--catalog", cat)
    p = doc_path(cat, CUTTER)
    text = p.read_text("utf-8")
    p.write_text(text.replace('"runtime_status": "inactive"', '"runtime_status": "active"'))
    v = run_cli("validate", cat, "-f", "concise")
    assert v.returncode == 1
    assert "runtime_status is 'active' but transitions.ndjson records no switch (it starts " \
           "'inactive')" in v.stdout
    r = run_cli("activate", CUTTER, "--catalog", cat)  # the history gate says the same
    assert r.returncode == 1
    p.write_text(text)
    _ok("activate", CUTTER, "--catalog", cat)
    p.write_text(p.read_text("utf-8").replace('"runtime_status": "active"',
                                              '"runtime_status": "quarantined"'))
    v = run_cli("validate", cat, "-f", "concise")
    assert v.returncode == 1 and "runtime_status is 'quarantined' but transitions.ndjson " \
        "line 3 switched it to 'active'" in v.stdout


def test_an_interrupted_switch_is_found_and_completed(
        tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    """A switch's line leaves the base hash as it is: the line written and the document not
    is told by the runtime state, and re-running the switch completes it."""
    cat = fresh_catalog(tmp_path_factory, tmp_path)
    for action, to in (("request_review", "pending_human_review"), ("approve", "approved")):
        _ok("approve", CUTTER, "--action", action, "--reviewer", "kim", "--catalog", cat)
        _ok("promote", CUTTER, "--to", to, "--catalog", cat)
    p = doc_path(cat, CUTTER)
    before = p.read_bytes()
    _ok("activate", CUTTER, "--catalog", cat)
    p.write_bytes(before)  # as if the process died between its line and its document
    rv = run_cli("review", cat, "-f", "concise")
    assert "RV205" in rv.stdout
    out = _ok("activate", CUTTER, "--catalog", cat)
    assert "completes the interrupted transition on transitions.ndjson line 3" in out
    assert len(log_lines(cat)) == 3
    assert load(p)["provenance"]["runtime_status"] == "active"
    _valid(cat)


def _legacy(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> Path:
    """A catalog as an older risutools wrote it: its log and approval name whole-document
    hashes (runtime fields included)."""
    cat = fresh_catalog(tmp_path_factory, tmp_path)
    p = doc_path(cat, CUTTER)
    doc = load(p)
    h0 = doc_sha256(doc)
    (cat / "approvals").mkdir()
    ap = cat / "approvals" / f"{CUTTER}--request_review--{h0[7:19]}.yaml"
    ap.write_text(yaml.safe_dump({
        "component_id": CUTTER, "component_version": doc["component_version"],
        "action": "request_review", "reviewer": "kim", "at": "2026-11-01T00:00:00+00:00",
        "base_sha256": h0, "note": ""}))
    doc["provenance"]["review_status"] = "pending_human_review"
    doc["payload"]["idea_layers"]["lineage"]["promotion_status"] = "pending_human_review"
    p.write_text(json.dumps(doc, ensure_ascii=False, indent=1) + "\n")
    line = {"component_id": CUTTER, "from_status": "candidate",
            "to_status": "pending_human_review", "before_sha256": h0,
            "after_sha256": doc_sha256(doc),
            "approval": {"file": f"approvals/{ap.name}",
                         "sha256": "sha256:" + hashlib.sha256(ap.read_bytes()).hexdigest()},
            "at": "2026-11-01T00:00:00+00:00", "tool_version": "0.1.0"}
    (cat / "transitions.ndjson").write_text(json.dumps(line) + "\n")
    return cat


def test_a_catalog_written_with_whole_document_hashes_still_validates_and_goes_on(
        tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    cat = _legacy(tmp_path_factory, tmp_path)
    old_end = log_lines(cat)[-1]["after_sha256"]
    assert old_end != _hash(cat)  # the old line names the whole document
    _valid(cat)
    assert _state(cat, "request_review") == ["used"]
    # an approval recorded before, not yet used, names the whole-document hash: stale
    doc = load(doc_path(cat, CUTTER))
    (cat / "approvals" / "old-approve.yaml").write_text(yaml.safe_dump({
        "component_id": CUTTER, "component_version": doc["component_version"],
        "action": "approve", "reviewer": "kim", "at": "2026-11-02T00:00:00+00:00",
        "base_sha256": old_end, "note": ""}))
    assert _state(cat, "approve") == ["stale"]
    r = run_cli("promote", CUTTER, "--to", "approved", "--catalog", cat)
    assert r.returncode == 1 and "stale approval: approvals/old-approve.yaml" in r.stdout
    (cat / "approvals" / "old-approve.yaml").unlink()
    # approved again (base hash), the chain goes on: the new line continues the old one
    _ok("approve", CUTTER, "--action", "approve", "--reviewer", "kim", "--catalog", cat)
    _ok("promote", CUTTER, "--to", "approved", "--catalog", cat)
    new = log_lines(cat)[-1]
    assert new["before_sha256"] != old_end and new["continues"] == old_end
    assert new["after_sha256"] == _hash(cat)
    _ok("activate", CUTTER, "--catalog", cat)
    assert "continues" not in log_lines(cat)[-1]  # (a base hash from here on)
    _valid(cat)
    rv = run_cli("review", cat, "-f", "concise")
    assert rv.returncode == 0 and "RV20" not in rv.stdout, rv.stdout
    # an unrecorded edit is still an unrecorded edit
    p = doc_path(cat, CUTTER)
    p.write_text(p.read_text("utf-8").replace('"flagship": false', '"flagship": true'))
    assert run_cli("validate", cat).returncode == 1


def test_the_contract_fixture_catalog_written_before_still_validates(tmp_path: Path) -> None:
    cat = tmp_path / "catalog"
    shutil.copytree(FIXTURES / "contract" / "catalog", cat)
    lines = log_lines(cat)
    doc = load(cat / "components" / "approved-cutter.json")
    assert lines[-1]["after_sha256"] == doc_sha256(doc)  # a whole-document hash
    v = run_cli("validate", cat / "components" / "approved-cutter.json", "-f", "concise")
    assert "MC305" not in v.stdout, v.stdout
