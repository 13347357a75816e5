"""Eleventh pass, spec conformance: clauses of replay.md and catalog-and-promotion.md that the
code broke or did not check."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import yaml
from harness import approve, run_cli
from test_catalog_support import CUTTER, fresh_catalog

from risutools.catalog.catalog import Catalog
from risutools.catalog.promote import plan


@pytest.fixture
def cat(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> Path:
    return fresh_catalog(tmp_path_factory, tmp_path)


def _approval_gate(cat: Path, to: str) -> tuple[str, str]:
    c = Catalog.open(cat)
    p = plan(c, c.resolve(CUTTER), to, kind="status")
    (v,) = [v for v in p.verdicts if v.gate == "approval"]
    return v.verdict, v.reason


# catalog-and-promotion.md, "A catalog on disk": an approval's `at` is "ISO 8601 with zone".
# A time without a zone (or a date alone, which Python reads as a naive midnight) names no
# instant; a record written by hand with one was counted as an approval.
@pytest.mark.parametrize("at", ["2026-12-01T10:00:00", "2026-12-01", "2026-12-01 10:00",
                                "20261201T100000"])
def test_approval_at_without_zone_is_no_approval(cat: Path, at: str) -> None:
    approve(CUTTER, "request_review", "kim", "", None, str(cat))
    (rec_path,) = (cat / "approvals").glob("*request_review*.yaml")
    rec = yaml.safe_load(rec_path.read_text("utf-8"))
    assert _approval_gate(cat, "pending_human_review")[0] == "pass"  # as written: with zone
    rec["at"] = at
    rec_path.write_text(yaml.safe_dump(rec, sort_keys=False), "utf-8")
    verdict, reason = _approval_gate(cat, "pending_human_review")
    assert verdict == "fail", reason


@pytest.mark.parametrize("at", ["2026-12-01T10:00:00Z", "2026-12-01T10:00:00+09:00",
                                "2026-12-01T10:00:00.5-05:30"])
def test_approval_at_with_zone_still_counts(cat: Path, at: str) -> None:
    approve(CUTTER, "request_review", "kim", "", None, str(cat))
    (rec_path,) = (cat / "approvals").glob("*request_review*.yaml")
    rec = yaml.safe_load(rec_path.read_text("utf-8"))
    rec["at"] = at
    rec_path.write_text(yaml.safe_dump(rec, sort_keys=False), "utf-8")
    verdict, reason = _approval_gate(cat, "pending_human_review")
    assert verdict == "pass", reason


# replay.md section 4: "Which reference simulation applies is decided by the component's
# capabilities"; catalog-and-promotion.md: approve/promote need "a replay report that passed".
# A report of the monitor alone (`replay monitor`, with or without the document) says nothing
# of a context cutter's invariants R1-R8, yet MC203 verified it and gate G6 passed on it.
_FIXTURE = """\
fixture: conversation-v1
name: hand-made
config: {tokenizer_profile: 1, message_overhead: 0, max_context: 50, preserve_latest: 1}
messages:
  - {id: s0, role: system, content: "0123456789"}
turns:
  - append: [{role: user, content: "aaaaaaaaaaaaaaaaaaaa"}]
  - append: [{role: assistant, content: "bbbbbbbbbbbbbbbbbbbb"}]
"""


def _cutter_doc(cat: Path) -> Path:
    return cat / f"{CUTTER}.json"


def _reference(cat: Path, report: Path) -> None:
    """The cutter's document (a candidate: edited by hand freely) naming ``report`` as its
    replay evidence, replay_status passed."""
    p = _cutter_doc(cat)
    doc = json.loads(p.read_text("utf-8"))
    refs = [r for r in doc["provenance"]["source_refs"]
            if not r["source_id"].startswith("replay:")]
    refs.append({"source_id": "replay:hand-made", "source_version": "replay-report-v1",
                 "sha256": "sha256:" + hashlib.sha256(report.read_bytes()).hexdigest()})
    doc["provenance"]["source_refs"] = refs
    doc["projection"]["replay_status"] = "passed"
    doc["provenance"]["availability_verdict"] = "available"
    p.write_text(json.dumps(doc, indent=2, ensure_ascii=False), "utf-8")


def _replay_gate(cat: Path) -> tuple[str, str]:
    c = Catalog.open(cat)
    p = plan(c, c.resolve(CUTTER), "approved", kind="status")  # (G1 fails; G6 runs anyway)
    (v,) = [v for v in p.verdicts if v.gate == "replay"]
    return v.verdict, v.reason


@pytest.mark.parametrize("with_doc", [False, True])
def test_a_monitor_report_is_no_replay_of_a_cutter(cat: Path, tmp_path: Path,
                                                   with_doc: bool) -> None:
    fx = tmp_path / "hand-made.yaml"
    fx.write_text(_FIXTURE, "utf-8")
    report = cat / "replays" / "monitor-alone.json"
    doc = [_cutter_doc(cat)] if with_doc else []
    r = run_cli("replay", "monitor", *doc, "-x", fx, "-o", report)
    assert r.returncode == 0, r.stderr
    assert json.loads(report.read_text("utf-8"))["summary"]["verdict"] == "passed"
    _reference(cat, report)
    verdict, reason = _replay_gate(cat)
    assert verdict == "fail", reason
    assert "context-cutter" in reason or "names no component" in reason, reason
    r = run_cli("verify", _cutter_doc(cat))
    assert r.returncode == 1 and "MC203" in r.stdout, r.stdout + r.stderr


def test_the_cutter_report_replay_run_writes_still_counts(cat: Path, tmp_path: Path) -> None:
    fx = tmp_path / "hand-made.yaml"
    fx.write_text(_FIXTURE, "utf-8")
    r = run_cli("replay", "run", _cutter_doc(cat), "-x", fx, "--update")
    assert r.returncode == 0, r.stdout + r.stderr
    verdict, reason = _replay_gate(cat)
    assert verdict == "pass", reason


def test_a_cutter_report_is_no_replay_of_a_monitor(cat: Path, tmp_path: Path) -> None:
    fx = tmp_path / "hand-made.yaml"
    fx.write_text(_FIXTURE, "utf-8")
    r = run_cli("replay", "run", _cutter_doc(cat), "-x", fx, "--update")
    assert r.returncode == 0, r.stdout + r.stderr
    p = _cutter_doc(cat)
    doc = json.loads(p.read_text("utf-8"))  # now a monitor: its cutter report describes none
    doc["capabilities"]["provides"] = ["context.monitor"]
    p.write_text(json.dumps(doc, indent=2, ensure_ascii=False), "utf-8")
    verdict, reason = _replay_gate(cat)
    assert verdict == "fail" and "context-monitor" in reason, reason


# catalog-and-promotion.md, review lanes: "An approval names the packet (task id, lane, base
# hash) its reviewer read; a packet older than the document cannot be approved."  `approve`
# refuses one, but a record whose `read` names another base than the one it approves (written
# by hand, or edited before signing) counted at G9: nothing read the records' `read` again.
def _edited_record(cat: Path, change: dict[str, object]) -> None:
    (rec_path,) = (cat / "approvals").glob("*request_review*.yaml")
    rec = yaml.safe_load(rec_path.read_text("utf-8"))
    rec.update(change)
    rec_path.write_text(yaml.safe_dump(rec, sort_keys=False), "utf-8")


_OLD = "sha256:" + "ab" * 32


@pytest.mark.parametrize("read", [
    {"how": "packet", "packet": "p.json", "task_id": "task-0123456789abcdef", "lane": "full",
     "base_sha256": _OLD},
    {"how": "base", "base_sha256": _OLD},
    {"how": "base"},
    {"how": "glanced"},
    "the whole thing",
])
def test_an_approval_whose_reviewer_read_another_base_is_no_approval(
        cat: Path, read: object) -> None:
    approve(CUTTER, "request_review", "kim", "", None, str(cat))
    assert _approval_gate(cat, "pending_human_review")[0] == "pass"
    _edited_record(cat, {"read": read})
    verdict, reason = _approval_gate(cat, "pending_human_review")
    assert verdict == "fail", reason
    r = run_cli("review", cat, "-f", "json")
    assert "RV301" in r.stdout, r.stdout[-2000:]


def test_an_approval_bound_to_what_it_approves_still_counts(cat: Path) -> None:
    base = Catalog.open(cat).resolve(CUTTER).base_sha256
    approve(CUTTER, "request_review", "kim", "", None, str(cat))
    for read in ({"how": "base", "base_sha256": base},
                 {"how": "packet", "packet": "p.json", "task_id": "task-0123456789abcdef",
                  "lane": "light", "base_sha256": base},
                 {"how": "none", "note": "made without a packet or --base"}):
        _edited_record(cat, {"read": read})
        verdict, reason = _approval_gate(cat, "pending_human_review")
        assert verdict == "pass", (read, reason)
    (rec_path,) = (cat / "approvals").glob("*request_review*.yaml")
    rec = yaml.safe_load(rec_path.read_text("utf-8"))
    del rec["read"]  # (a record made before approve bound it)
    rec_path.write_text(yaml.safe_dump(rec, sort_keys=False), "utf-8")
    assert _approval_gate(cat, "pending_human_review")[0] == "pass"


# catalog-and-promotion.md: "No reachable state is a dead end".  G6 asked a passed replay of
# any component declaring a context.* capability, provides or requires, but `replay run` runs
# a simulation only for what provides selects: a component that only requires
# context.token_budget (or provides a context.* name a catalog adds) could never be replayed,
# so never approved.  Now G6 is n/a there, saying why; a cutter still needs its replay.
@pytest.mark.parametrize("caps", [
    {"provides": [], "requires": ["context.token_budget"]},
    {"provides": ["context.summary_memory"], "requires": []},
])
def test_a_context_component_no_simulation_replays_is_no_dead_end(
        cat: Path, caps: dict[str, list[str]]) -> None:
    p = _cutter_doc(cat)
    doc = json.loads(p.read_text("utf-8"))
    doc["capabilities"].update(caps)
    p.write_text(json.dumps(doc, indent=2, ensure_ascii=False), "utf-8")
    r = run_cli("replay", "run", str(p), "-x", str(_write_fixture(cat)))
    assert "no applicable simulation" in r.stdout + r.stderr  # (nothing could be replayed)
    verdict, reason = _replay_gate(cat)
    assert verdict == "n/a", reason
    assert "no reference simulation replays it" in reason


def test_a_cutter_still_needs_its_replay(cat: Path) -> None:
    assert _replay_gate(cat)[0] == "pass"  # (the fresh catalog's cutter: replayed)
    p = _cutter_doc(cat)
    doc = json.loads(p.read_text("utf-8"))
    doc["projection"]["replay_status"] = "not_run"
    doc["provenance"]["availability_verdict"] = "untested"
    p.write_text(json.dumps(doc, indent=2, ensure_ascii=False), "utf-8")
    verdict, reason = _replay_gate(cat)
    assert verdict == "fail" and "replay_status" in reason, reason


def _write_fixture(cat: Path) -> Path:
    fx = cat.parent / "fx-dead-end.yaml"
    fx.write_text(_FIXTURE, "utf-8")
    return fx
