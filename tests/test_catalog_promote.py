"""approve / promote / activate / deactivate: gates, refusals, compare-and-swap, the log."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from harness import approve, switch
from test_catalog_support import (
    CUTTER,
    MOOD,
    approve_and_promote,
    doc_path,
    fresh_catalog,
    load,
    log_lines,
    run,
    to_promoted,
)

from risutools.catalog.catalog import Catalog
from risutools.catalog.gates import gates_for
from risutools.catalog.promote import plan
from risutools.contract.validate import validate_paths
from risutools.errors import ConfigError, DocumentError, UsageError


@pytest.fixture
def cat(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> Path:
    return fresh_catalog(tmp_path_factory, tmp_path)


def _verdicts(cat: Path, cid: str, to: str, kind: str = "status") -> dict[str, tuple[str, str]]:
    c = Catalog.open(cat)
    p = plan(c, c.resolve(cid), to, kind=kind)
    return {v.gate: (v.verdict, v.reason) for v in p.verdicts}


def test_refused_without_approval_then_accepted(cat: Path) -> None:
    before = doc_path(cat, CUTTER).read_bytes()
    r = run("promote", CUTTER, "--to", "pending_human_review", "--catalog", str(cat), cwd=cat)
    assert r.returncode == 1
    assert "FAIL  approval" in r.stdout and "no 'request_review' approval" in r.stdout
    assert doc_path(cat, CUTTER).read_bytes() == before
    assert not (cat / "transitions.ndjson").exists()
    r = run("approve", CUTTER, "--action", "request_review", "--reviewer", "kim", cwd=cat)
    assert r.returncode == 0, r.stderr
    r = run("promote", CUTTER, "--to", "pending_human_review", cwd=cat)
    assert r.returncode == 0, r.stdout + r.stderr
    doc = load(doc_path(cat, CUTTER))
    assert doc["provenance"]["review_status"] == "pending_human_review"
    assert doc["payload"]["idea_layers"]["lineage"]["promotion_status"] == \
        "pending_human_review"
    (line,) = log_lines(cat)
    assert line["from_status"] == "candidate" and line["to_status"] == "pending_human_review"
    assert line["approval"]["file"].startswith("approvals/")
    assert validate_paths([cat]).exit_code() == 0


def test_whole_lifecycle_and_runtime_switches_keep_the_chain(cat: Path) -> None:
    to_promoted(cat)
    assert switch(CUTTER, "active", "runtime", False, False, str(cat)) == 0
    assert load(doc_path(cat, CUTTER))["provenance"]["runtime_status"] == "active"
    assert validate_paths([cat]).exit_code() == 0  # MC305 follows runtime lines too
    # retiring an active component is refused until it is deactivated
    approve(CUTTER, "retire", "kim", "", None, str(cat))
    v = _verdicts(cat, CUTTER, "retired")
    assert v["inactive"][0] == "fail"
    assert switch(CUTTER, "retired", "status", False, False, str(cat)) == 1
    assert switch(CUTTER, "inactive", "runtime", False, False, str(cat)) == 0
    # the retire approval named the active document's hash: a runtime switch does not make it
    # stale (issue 20: the same reviewed content in the other runtime state)
    v = _verdicts(cat, CUTTER, "retired")
    assert v["approval"][0] == "pass", v["approval"]
    assert switch(CUTTER, "retired", "status", False, False, str(cat)) == 0
    lines = log_lines(cat)
    assert [x.get("to_status") or x.get("to_runtime") for x in lines] == [
        "pending_human_review", "approved", "promoted", "active", "inactive", "retired"]
    for a, b in itertools.pairwise(lines):
        assert b["before_sha256"] == a["after_sha256"]
    assert validate_paths([cat]).exit_code() == 0


def test_every_gate_reports_and_can_fail(cat: Path) -> None:
    # approved-step gates on a candidate that has not been through review
    v = _verdicts(cat, MOOD, "approved")
    assert v["transition"][0] == "fail"
    assert v["approval"][0] == "fail"
    assert {g.title for g in gates_for("approved")} == set(v)
    # the mood tracker lacks narrative: MC600 is an error under the gate
    approve_and_promote(cat, MOOD, "request_review", "pending_human_review")
    approve(MOOD, "approve", "kim", "", None, str(cat))
    v = _verdicts(cat, MOOD, "approved")
    assert v["contract"][0] == "fail" and "MC600" in v["contract"][1]
    assert v["approval"][0] == "pass"
    assert v["replay"][0] == "n/a"
    assert switch(MOOD, "approved", "status", False, False, str(cat)) == 1


def test_digest_gate_fails_without_the_source_store(cat: Path) -> None:
    (cat / ".risutools.yaml").write_text("{}\n")
    approve_and_promote(cat, CUTTER, "request_review", "pending_human_review")
    v = _verdicts(cat, CUTTER, "approved")
    assert v["digests"][0] == "fail" and "could not be verified" in v["digests"][1]


def test_replay_gate_fails_when_the_replay_did_not_pass(cat: Path) -> None:
    p = doc_path(cat, CUTTER)
    doc = load(p)
    doc["projection"]["replay_status"] = "not_run"
    doc["provenance"]["availability_verdict"] = "untested"
    p.write_text(json.dumps(doc, ensure_ascii=False, indent=1))
    approve_and_promote(cat, CUTTER, "request_review", "pending_human_review")
    v = _verdicts(cat, CUTTER, "approved")
    assert v["replay"][0] == "fail" and "not_run" in v["replay"][1]


def test_stale_approval_is_refused(cat: Path) -> None:
    approve(CUTTER, "request_review", "kim", "", None, str(cat))
    p = doc_path(cat, CUTTER)
    doc = load(p)
    doc["projection"]["summary"] = doc["projection"]["summary"] + " (edited)"
    p.write_text(json.dumps(doc, ensure_ascii=False, indent=1))
    r = run("promote", CUTTER, "--to", "pending_human_review", cwd=cat)
    assert r.returncode == 1
    assert "stale approval" in r.stdout


def _record_anyway(cat: Path, cid: str, action: str) -> None:
    """An approval record written without the command (as a script could)."""
    from risutools.catalog.approvals import build_record, dump_record, record_path

    c = Catalog.open(cat)
    rec = build_record(c.resolve(cid), action, "kim", "")
    path = record_path(c, rec)
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(dump_record(rec))


def test_approval_of_another_action_does_not_count(cat: Path) -> None:
    r = run("approve", CUTTER, "--action", "approve", "--reviewer", "kim", cwd=cat)
    assert r.returncode == 2 and "action-not-next" in r.stderr  # not its next step
    _record_anyway(cat, CUTTER, "approve")
    v = _verdicts(cat, CUTTER, "pending_human_review")
    assert v["approval"][0] == "fail"


def test_dry_run_writes_nothing(cat: Path) -> None:
    approve(CUTTER, "request_review", "kim", "", None, str(cat))
    before = doc_path(cat, CUTTER).read_bytes()
    r = run("promote", CUTTER, "--to", "pending_human_review", "--dry-run", "--json", cwd=cat)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["ok"] is True and out["written"] is False
    assert all(g["verdict"] in ("pass", "n/a") for g in out["gates"])
    assert doc_path(cat, CUTTER).read_bytes() == before
    assert not (cat / "transitions.ndjson").exists()


def test_no_command_skips_a_step_or_goes_back(cat: Path) -> None:
    with pytest.raises(ConfigError):
        approve(CUTTER, "promote", "kim", "", None, str(cat))
    _record_anyway(cat, CUTTER, "promote")
    v = _verdicts(cat, CUTTER, "promoted")
    assert v["transition"][0] == "fail"
    for target in ("candidate", "shipped"):  # the choices: the lifecycle's targets
        with pytest.raises(UsageError, match="is not one of pending_human_review, approved"):
            _verdicts(cat, CUTTER, target)


def test_forged_status_cannot_be_promoted_or_activated(cat: Path) -> None:
    p = doc_path(cat, CUTTER)
    doc = load(p)
    doc["provenance"]["review_status"] = "approved"
    doc["payload"]["idea_layers"]["lineage"]["promotion_status"] = "approved"
    p.write_text(json.dumps(doc, ensure_ascii=False, indent=1))
    approve(CUTTER, "promote", "kim", "", None, str(cat))
    assert _verdicts(cat, CUTTER, "promoted")["history"][0] == "fail"
    assert _verdicts(cat, CUTTER, "active", "runtime")["history"][0] == "fail"


def test_activation_gates(cat: Path) -> None:
    v = _verdicts(cat, CUTTER, "active", "runtime")
    assert v["review-status"][0] == "fail"  # a candidate is never active
    assert {g.title for g in gates_for("active")} == set(v)
    to_promoted(cat)
    # a second promoted provider of the exclusive context.token_budget, already active
    rival = json.loads(doc_path(cat, CUTTER).read_text("utf-8"))
    rival["component_id"] = "module.risu.174678332.rival-cutter"
    rival["provenance"]["runtime_status"] = "active"
    (cat / "rival.json").write_text(json.dumps(rival, ensure_ascii=False))
    v = _verdicts(cat, CUTTER, "active", "runtime")
    assert v["exclusive"][0] == "fail" and "rival-cutter" in v["exclusive"][1]
    rival["capabilities"]["provides"] = ["regex.transform"]
    rival["capabilities"]["conflicts"] = ["context.anchor_continuity"]
    (cat / "rival.json").write_text(json.dumps(rival, ensure_ascii=False))
    v = _verdicts(cat, CUTTER, "active", "runtime")
    assert v["exclusive"][0] == "pass"
    assert v["active-conflict"][0] == "fail" and "context.anchor_continuity" in \
        v["active-conflict"][1]
    assert switch(CUTTER, "active", "runtime", False, False, str(cat)) == 1
    (cat / "rival.json").unlink()
    assert switch(CUTTER, "active", "runtime", False, False, str(cat)) == 0
    assert switch(CUTTER, "active", "runtime", False, False, str(cat)) == 1  # already active


def test_promotion_refuses_a_conflict_with_a_promoted_component(cat: Path) -> None:
    approve_and_promote(cat, CUTTER, "request_review", "pending_human_review")
    other = json.loads(doc_path(cat, MOOD).read_text("utf-8"))
    other["component_id"] = "module.risu.186123400.blocker"
    other["provenance"]["review_status"] = "promoted"
    other["capabilities"]["conflicts"] = ["context.token_budget"]
    (cat / "blocker.json").write_text(json.dumps(other, ensure_ascii=False))
    v = _verdicts(cat, CUTTER, "approved")
    assert v["conflict"][0] == "fail" and "blocker" in v["conflict"][1]


def test_component_lookup_errors(cat: Path) -> None:
    c = Catalog.open(cat)
    with pytest.raises(DocumentError) as e:
        c.resolve("module.risu.1.nothing")
    assert e.value.code == "unknown-component"
    r = run("promote", "module.risu.1.nothing", "--to", "approved", cwd=cat)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    r = run("approve", CUTTER, "--action", "bless", "--reviewer", "kim", cwd=cat)
    assert r.returncode == 2 and "usage: Invalid value for --action: 'bless'" in r.stderr
    r = run("approve", CUTTER, "--action", "approve", "--reviewer", " ", cwd=cat)
    assert r.returncode == 2 and "usage: Invalid value for --reviewer" in r.stderr
    r = run("promote", CUTTER, "--to", "approved", cwd=cat.parent)
    assert r.returncode == 2 and "no-catalog" in r.stderr


def test_document_given_by_path(cat: Path) -> None:
    approve(str(doc_path(cat, CUTTER)), "request_review", "kim", "", None, None)
    r = run("promote", str(doc_path(cat, CUTTER)), "--to", "pending_human_review",
            cwd=cat.parent)
    assert r.returncode == 0, r.stdout + r.stderr


def test_ndjson_catalog_line_is_replaced_and_others_kept(tmp_path: Path,
                                                         cat: Path) -> None:
    from risutools.canonical import canonical

    nd = tmp_path / "nd"
    nd.mkdir()
    docs = [load(p) for p in sorted(cat.glob("*.json"))]
    (nd / "components.ndjson").write_bytes(b"".join(canonical(d) + b"\n" for d in docs))
    (nd / "approvals").mkdir()
    before = (nd / "components.ndjson").read_bytes().split(b"\n")
    approve(MOOD, "request_review", "kim", "", None, str(nd))
    assert switch(MOOD, "pending_human_review", "status", False, False, str(nd)) == 0
    after = (nd / "components.ndjson").read_bytes().split(b"\n")
    changed = [i for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b]
    assert len(changed) == 1 and len(before) == len(after)
    assert json.loads(after[changed[0]])["provenance"]["review_status"] == \
        "pending_human_review"
    assert validate_paths([nd]).exit_code() == 0
