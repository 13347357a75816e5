"""Content evidence (issue 20): curator notes that `ingest` applies to a reviewed document,
and a re-projection of the same module bytes, are logged `evidence` lines naming the digest
they come from (the notes, the module's source), accepted by the history gate, counted in the
ingest summary; only while a decision is pending -- an approved component's content changes
only through a new review -- and never past what evidence may change."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from harness import FIXTURES, run_cli
from test_catalog_support import CUTTER, doc_path, load, log_lines

SOURCE = FIXTURES / "sources" / "174678332_context-cutter.risum"
REQUIRES = ["hook.edit_request", "global_state_kv", "hook.chat_start"]


def _ok(*args: Any) -> str:
    r = run_cli(*args)
    assert r.returncode == 0, (args, r.stdout, r.stderr)
    return str(r.stdout)


def _ingest(tmp: Path, cat: Path, *more: str) -> Any:
    return run_cli("ingest", tmp / "src", "-o", cat, "-j", "1", "--no-cache", *more)


@pytest.fixture
def pending(tmp_path: Path) -> Path:
    """The cutter ingested (no notes), then moved to pending_human_review."""
    (tmp_path / "src").mkdir()
    shutil.copy(SOURCE, tmp_path / "src" / SOURCE.name)
    cat = tmp_path / "cat"
    assert _ingest(tmp_path, cat).returncode == 0
    _ok("approve", CUTTER, "--action", "request_review", "--reviewer", "kim", "--catalog", cat)
    _ok("promote", CUTTER, "--to", "pending_human_review", "--catalog", cat)
    return cat


@pytest.fixture
def approved(tmp_path: Path) -> Path:
    """The cutter with its curator notes (a whole narrative) and a passed replay, approved."""
    (tmp_path / "src").mkdir()
    shutil.copy(SOURCE, tmp_path / "src" / SOURCE.name)
    cat = tmp_path / "cat"
    (cat / "notes").mkdir(parents=True)
    shutil.copy(FIXTURES / "notes" / f"{CUTTER}.yaml", cat / "notes")
    (cat / ".store").mkdir()  # (the store the digests gate reads: inside the repository,
    shutil.copy(SOURCE, cat / ".store" / SOURCE.name)  # as a configuration's must be)
    (cat / ".risutools.yaml").write_text("sources: .store\n")
    assert _ingest(tmp_path, cat).returncode == 0
    _ok("replay", "run", doc_path(cat, CUTTER), "-x", FIXTURES / "replay" / "anchor-edit.yaml",
        "--update")
    for action, to in (("request_review", "pending_human_review"), ("approve", "approved")):
        _ok("approve", CUTTER, "--action", action, "--reviewer", "kim", "--catalog", cat)
        _ok("promote", CUTTER, "--to", to, "--catalog", cat)
    return cat


def _fill_requires(cat: Path) -> Path:
    """`notes init`, then the curator uncomments `requires` and adds what was missed."""
    _ok("notes", "init", CUTTER, "--catalog", cat)
    notes = cat / "notes" / f"{CUTTER}.yaml"
    lines = notes.read_text("utf-8").splitlines()
    lines[lines.index("# capabilities:")] = "capabilities:"
    i = next(i for i, ln in enumerate(lines) if ln.startswith("#   requires: "))
    lines[i] = "  requires: " + json.dumps(REQUIRES)
    notes.write_text("\n".join(lines) + "\n", "utf-8")
    return notes


def _valid(cat: Path) -> None:
    r = run_cli("validate", cat, "-f", "concise")
    assert r.returncode == 0 and "MC305" not in r.stdout, r.stdout


def test_notes_applied_to_a_pending_component_are_a_logged_evidence_line(
        pending: Path, tmp_path: Path) -> None:
    cat = pending
    out = tmp_path / "packets"
    _ok("packet", CUTTER, "--lane", "light", "-o", out, "--catalog", cat)
    (old_packet,) = out.glob("*.json")
    before = _ok("hash", "-q", doc_path(cat, CUTTER)).strip()
    notes = _fill_requires(cat)
    digest = "sha256:" + hashlib.sha256(notes.read_bytes()).hexdigest()
    r = _ingest(tmp_path, cat, "--json")
    assert r.returncode == 0, r.stderr
    run = json.loads(r.stdout)
    assert run["counts"]["evidence_logged"] == 1 and run["counts"]["kept_reviewed"] == 0
    assert run["evidence_logged"] == [f"{CUTTER}: transitions.ndjson line 2: ingest: curator "
                                      f"notes applied ({digest})"]
    doc = load(doc_path(cat, CUTTER))
    assert doc["capabilities"]["requires"] == REQUIRES
    assert doc["provenance"]["review_status"] == "pending_human_review"
    line = log_lines(cat)[-1]
    assert line["kind"] == "evidence" and line["notes_sha256"] == digest
    assert line["before_sha256"] == before
    assert line["after_sha256"] == _ok("hash", "-q", doc_path(cat, CUTTER)).strip()
    assert [c["pointer"] for c in line["changes"]] == ["/capabilities/requires",
                                                       "/provenance/source_refs"]
    assert line["changes"][0] == {"pointer": "/capabilities/requires",
                                  "before": ["hook.edit_request", "chat_state_kv",
                                             "global_state_kv"],
                                  "after": REQUIRES}
    _valid(cat)
    # the packet read before is refused; the next approval names the new base hash
    r = run_cli("approve", CUTTER, "--action", "approve", "--reviewer", "kim", "--packet",
                old_packet, "--catalog", cat)
    assert r.returncode == 1 and "line 2: evidence (ingest: curator notes applied" in r.stderr
    _ok("approve", CUTTER, "--action", "approve", "--reviewer", "kim", "--catalog", cat)
    # the history gate accepts the line, the approval names the new base (the replay and
    # digests gates want a replay and the source store: not what this test is about)
    d = run_cli("promote", CUTTER, "--to", "approved", "--dry-run", "--json", "--catalog", cat)
    gates = {g["gate"]: g["verdict"] for g in json.loads(d.stdout)["gates"]}
    assert gates["history"] == "pass" and gates["approval"] == "pass", gates
    # a second ingest finds nothing new: no line
    r = _ingest(tmp_path, cat, "--json")
    assert json.loads(r.stdout)["counts"]["evidence_logged"] == 0
    assert len(log_lines(cat)) == 2


def test_the_summary_counts_and_names_the_logged_evidence(pending: Path, tmp_path: Path
                                                         ) -> None:
    _fill_requires(pending)
    r = _ingest(tmp_path, pending)
    assert r.returncode == 0
    assert "reviewed re-projected (logged)" in r.stdout
    (line,) = [x for x in r.stderr.splitlines() if x.startswith("evidence: ")]
    assert line.startswith(f"evidence: {CUTTER}: transitions.ndjson line 2: ingest: curator "
                           "notes applied (sha256:")


def test_a_re_projection_without_notes_names_the_source_digest(pending: Path,
                                                               tmp_path: Path) -> None:
    notes = _fill_requires(pending)
    assert _ingest(tmp_path, pending).returncode == 0
    notes.unlink()  # the curator takes the notes back: the projection as generated
    r = _ingest(tmp_path, pending, "--json")
    assert json.loads(r.stdout)["counts"]["evidence_logged"] == 1
    line = log_lines(pending)[-1]
    source = "sha256:" + hashlib.sha256(SOURCE.read_bytes()).hexdigest()
    assert line["kind"] == "evidence" and line["source_sha256"] == source
    assert line["reason"] == f"ingest: re-projected from {source}"
    assert "notes_sha256" not in line
    assert load(doc_path(pending, CUTTER))["capabilities"]["requires"] == [
        "hook.edit_request", "chat_state_kv", "global_state_kv"]
    _valid(pending)


def test_an_approved_component_keeps_its_content(approved: Path, tmp_path: Path) -> None:
    cat = approved
    text = doc_path(cat, CUTTER).read_bytes()
    lines = len(log_lines(cat))
    notes = cat / "notes" / f"{CUTTER}.yaml"
    notes.write_text(notes.read_text("utf-8").replace(
        "capabilities:\n", "capabilities:\n  requires: [hook.chat_start]\n", 1), "utf-8")
    r = _ingest(tmp_path, cat, "--json")
    run = json.loads(r.stdout)
    assert run["counts"]["evidence_logged"] == 0 and run["counts"]["kept_reviewed"] == 1
    assert f"{CUTTER}: kept as reviewed: approved: its content changes only through a new " \
           "review" in run["notices"][0]
    assert doc_path(cat, CUTTER).read_bytes() == text and len(log_lines(cat)) == lines
    _valid(cat)


def test_a_forged_content_line_past_pending_fails_validate(approved: Path) -> None:
    """The same content change written by hand with an evidence line is accepted while a
    decision is pending only: on an approved component MC305 refuses it."""
    from risutools.settings.lifecycle import base_sha256

    cat = approved
    p = doc_path(cat, CUTTER)
    doc = load(p)
    before = base_sha256(doc)
    old = doc["capabilities"]["requires"]
    doc["capabilities"]["requires"] = REQUIRES
    p.write_text(json.dumps(doc, ensure_ascii=False, indent=1) + "\n", "utf-8")
    forged = {"kind": "evidence", "component_id": CUTTER, "reason": "ingest: notes",
              "notes_sha256": "sha256:" + "0" * 64,
              "changes": [{"pointer": "/capabilities/requires", "before": old,
                           "after": REQUIRES}],
              "before_sha256": before, "after_sha256": base_sha256(doc)}
    with open(cat / "transitions.ndjson", "a", encoding="utf-8") as f:
        f.write(json.dumps(forged) + "\n")
    r = run_cli("validate", cat, "-f", "concise")
    assert r.returncode == 1
    assert "an evidence line changes '/capabilities/requires'; evidence changes only " \
           "/projection/replay_status" in r.stdout
    # nor may evidence ever touch a lifecycle field, pending or not
    from risutools.settings.lifecycle import evidence_may_change

    assert evidence_may_change("/capabilities/requires", "pending_human_review")
    assert not evidence_may_change("/capabilities/requires", "approved")
    assert not evidence_may_change("/payload/idea_layers/lineage/promotion_status",
                                   "pending_human_review")
    assert not evidence_may_change("/payload/idea_layers/lineage", "pending_human_review")
    assert not evidence_may_change("/payload", "pending_human_review")
    assert evidence_may_change("/payload/idea_layers/lineage/origin", "pending_human_review")
    assert not evidence_may_change("/provenance/review_status", "pending_human_review")
    assert evidence_may_change("/projection/replay_status", "approved")


def test_a_reviewed_component_kept_is_answered_from_the_cache_while_nothing_moves(
        approved: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The history gate's answer for a reviewed document kept as it is depends on its bytes
    and the generated document only: a re-run with neither changed gives the same answer
    (the same notice) without asking the gate again; a change to either asks it again.
    Each run gives what a run without the cache gives."""
    from risutools.catalog import cache as cache_mod
    from risutools.catalog import ingest_write
    from risutools.catalog.ingest import ingest

    monkeypatch.setattr(cache_mod, "RACY_NS", 0)
    cat = approved
    notes = cat / "notes" / f"{CUTTER}.yaml"
    notes.write_text(notes.read_text("utf-8").replace(
        "capabilities:\n", "capabilities:\n  requires: [hook.chat_start]\n", 1), "utf-8")
    asked: list[Path] = []
    real = ingest_write.record_reprojection
    monkeypatch.setattr(ingest_write, "record_reprojection",
                        lambda path, doc: asked.append(path) or real(path, doc))

    def run() -> tuple[list[str], list[str], int]:
        """(kept, notices, whether the gate was asked) of a run with the cache."""
        before = len(asked)
        r = ingest(tmp_path / "src", cat, jobs=1)
        was_asked = len(asked) - before
        full = _ingest(tmp_path, cat, "--json")  # (no cache: the gate asked)
        want = json.loads(full.stdout)
        assert r.kept_reviewed == want["kept_reviewed"] and r.notices == want["notices"]
        return r.kept_reviewed, r.notices, was_asked

    first = run()
    assert first[:2] == ([CUTTER], first[1]) and "kept as reviewed: approved:" in first[1][0]
    assert first[2] == 1
    for _ in range(2):  # (the first run recorded the answer: then it is the cache's)
        assert run() == (*first[:2], 0)
    doc = doc_path(cat, CUTTER)
    doc.write_bytes(doc.read_bytes())  # the same bytes, written again: asked again
    assert run() == (*first[:2], 1)
    assert run() == (*first[:2], 0)
    notes.write_text(notes.read_text("utf-8").replace(
        "requires: [hook.chat_start]", "requires: [hook.chat_start, chat_state_kv]", 1),
        "utf-8")  # another generated document: asked again
    again = run()
    assert again[0] == [CUTTER] and again[2] == 1
