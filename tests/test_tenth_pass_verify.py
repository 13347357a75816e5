"""A tenth pass over the digest checks (stop 64): each test reproduces a defect and fails
before its fix.

- ``--select``/``--ignore`` switched MC201, MC202 and MC203 off silently: they read only a
  digest MC200 passed ("MC200 says it"), so with MC200 not kept a malformed digest passed
  (``validate --select MC201``, ``validate --ignore MC200``, ``verify --select
  MC202,MC203``: ok, exit 0).  A check now declares what it needs (``needs=``: MC200 for
  MC201-MC203, MC100 for MC600, the mechanism that ran MC100 with MC600): a filter that
  keeps it keeps what it needs, and ``--ignore`` of a needed check is refused (exit 2).
  ``--select ''`` and ``--select ,`` were read as no selection; an empty id is refused.
- A forged replay report verified (MC203, and through it gate G6): the reader checked the
  layout, ``report_sha256``, the component and the counts, then returned the summary's
  verdict as it was: a report whose summary said ``passed`` over a failed error invariant
  (its hash worked out again), the report of another fixture under ``replay:<name>``, and
  a document saying ``replay_status: passed`` over a report that failed all verified.
"""

from __future__ import annotations

import copy
import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from harness import FIXTURES, SEED, run_cli
from test_replay_browser import RESURRECT  # (R5 fails: a message dropped comes back)

from risutools.canonical import indented, self_hash
from risutools.checks.registry import RuleFilter, check_selection
from risutools.contract.reportcheck import read_report
from risutools.errors import UsageError

VERIFY = FIXTURES / "contract" / "verify"
UPPER = "sha256:" + "A" * 64


def write(path: Path, doc: Any) -> Path:
    path.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def seed() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(SEED.read_text(encoding="utf-8"))
    return doc


# ------------------------------------------------------------------ selection and needs


@pytest.mark.parametrize("args", [("--select", "MC201"), ("--select", "MC2"),
                                  ("--select", "MC201,MC300")])
def test_a_selected_prompt_digest_check_never_passes_a_malformed_digest(
        tmp_path: Path, args: tuple[str, ...]) -> None:
    doc = seed()
    doc["projection"]["prompt_sha256"] = UPPER
    r = run_cli("validate", *args, write(tmp_path / "bad.json", doc))
    assert r.returncode == 1, r.stdout + r.stderr
    assert "MC200 /projection/prompt_sha256" in r.stdout


def test_ignoring_what_a_kept_check_needs_is_refused(tmp_path: Path) -> None:
    doc = seed()
    doc["projection"]["prompt_sha256"] = UPPER
    bad = write(tmp_path / "bad.json", doc)
    r = run_cli("validate", "--ignore", "MC200", bad)
    assert r.returncode == 2 and "MC200 cannot be ignored while MC201 run" in r.stderr
    r = run_cli("verify", "--ignore", "MC200", bad)
    assert r.returncode == 2 and "MC201, MC202, MC203" in r.stderr
    # ignoring the checks that need it too is what was asked: nothing of MC2 is reported
    r = run_cli("validate", "--ignore", "MC200,MC201", bad)
    assert r.returncode == 0 and "MC20" not in r.stdout


def test_selected_source_and_report_digest_checks_never_pass_a_malformed_digest(
        tmp_path: Path) -> None:
    for item in VERIFY.iterdir():
        (shutil.copytree if item.is_dir() else shutil.copy)(item, tmp_path / item.name)
    shutil.copytree(FIXTURES / "contract" / "store", tmp_path / "store")
    doc = json.loads((tmp_path / "verified.json").read_text(encoding="utf-8"))
    for ref in doc["provenance"]["source_refs"]:
        ref["sha256"] = UPPER
    v = write(tmp_path / "v.json", doc)
    for sel in ("MC202,MC203", "MC203", "MC202"):
        r = run_cli("verify", "--sources", tmp_path / "store", "--require-sources",
                    "--select", sel, v, cwd=tmp_path)
        assert r.returncode == 1, (sel, r.stdout)
        assert "MC200 /provenance/source_refs/0/sha256" in r.stdout


def test_a_filter_keeps_what_a_kept_check_needs() -> None:
    flt = RuleFilter(["MC201"])
    assert flt.keep("MC200") and flt.keep("MC201") and not flt.keep("MC300")
    assert RuleFilter(["MC600"]).keep("MC100")
    assert RuleFilter(["MC203"]).keep("MC200")
    # what is named in --ignore is never kept for another's sake
    assert not RuleFilter((), ["MC200", "MC201"]).keep("MC200")


@pytest.mark.parametrize("value", ["", ",", " , ", "MC201,,MC202"])
def test_an_empty_rule_id_is_refused(tmp_path: Path, value: str) -> None:
    with pytest.raises(UsageError, match="empty rule id"):
        check_selection("validate", [value])
    with pytest.raises(UsageError, match="empty rule id"):
        check_selection("validate", (), [value])
    r = run_cli("validate", "--select", value, SEED)
    assert r.returncode == 2 and "empty rule id" in r.stderr


# ------------------------------------------------------------------ forged replay reports

def replayed(tmp_path: Path) -> Path:
    """A document with the honest (failed: R5) replay report of ``resurrect``."""
    shutil.copy(SEED, tmp_path / "doc.json")
    (tmp_path / "replays").mkdir()
    (tmp_path / "resurrect.yaml").write_text(RESURRECT, encoding="utf-8")
    r = run_cli("replay", "run", "doc.json", "-x", "resurrect.yaml", "-o", "replays/r.json",
                "--update", cwd=tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    return tmp_path / "doc.json"


def passed_with(doc_path: Path, report: bytes, ref: str = "replay:resurrect") -> None:
    """The report written, the document's reference its digest, the document passed."""
    (doc_path.parent / "replays" / "r.json").write_bytes(report)
    doc = json.loads(doc_path.read_text(encoding="utf-8"))
    for r in doc["provenance"]["source_refs"]:
        if r["source_id"] == ref:
            r["sha256"] = "sha256:" + hashlib.sha256(report).hexdigest()
    doc["projection"]["replay_status"] = "passed"
    doc["provenance"]["availability_verdict"] = "available"
    write(doc_path, doc)


def forged(report: dict[str, Any]) -> bytes:
    report["report_sha256"] = self_hash(report)
    return indented(report)


@pytest.mark.parametrize("edit", [
    {"verdict": "passed"},
    {"verdict": "passed", "failed_invariants": []},
    {"failed_invariants": []},
    {"verdict": "passed", "failed_invariants": [], "warned_invariants": ["R5"]},
])
def test_a_report_whose_summary_does_not_follow_from_its_invariants_is_refused(
        tmp_path: Path, edit: dict[str, Any]) -> None:
    doc = replayed(tmp_path)
    report = json.loads((tmp_path / "replays" / "r.json").read_text(encoding="utf-8"))
    report["summary"].update(edit)
    passed_with(doc, forged(report))
    r = run_cli("verify", "doc.json", cwd=tmp_path)
    assert r.returncode == 1, r.stdout
    assert "MC203" in r.stdout and "does not follow from the checks" in r.stdout


def test_an_invariant_whose_verdict_does_not_follow_from_its_counts_is_refused(
        tmp_path: Path) -> None:
    doc = replayed(tmp_path)
    report = json.loads((tmp_path / "replays" / "r.json").read_text(encoding="utf-8"))
    for inv in report["invariants"]:  # every invariant said passed, failures and all
        inv["verdict"] = "passed" if inv["verdict"] == "failed" else inv["verdict"]
    report["summary"].update(verdict="passed", failed_invariants=[])
    passed_with(doc, forged(report))
    r = run_cli("verify", "doc.json", cwd=tmp_path)
    assert r.returncode == 1 and "invariant R5 says 'passed'" in r.stdout, r.stdout


def test_the_report_of_another_fixture_is_refused(tmp_path: Path) -> None:
    doc = replayed(tmp_path)
    r = run_cli("replay", "run", "doc.json", "-x", FIXTURES / "replay" / "anchor-edit.yaml",
                "-o", "other.json", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    passed_with(doc, (tmp_path / "other.json").read_bytes())
    r = run_cli("verify", "doc.json", cwd=tmp_path)
    assert r.returncode == 1, r.stdout
    assert "the report is of fixture 'anchor-edit', the reference names replay:resurrect" \
        in r.stdout


def test_a_document_that_contradicts_its_verified_reports_fails(tmp_path: Path) -> None:
    doc_path = replayed(tmp_path)
    doc = json.loads(doc_path.read_text(encoding="utf-8"))
    doc["projection"]["replay_status"] = "passed"
    doc["provenance"]["availability_verdict"] = "available"
    write(doc_path, doc)
    r = run_cli("verify", "doc.json", cwd=tmp_path)
    assert r.returncode == 1, r.stdout
    assert "MC203 /projection/replay_status  replay_status is 'passed' but the report " \
        "replays/r.json says 'failed'" in r.stdout


def test_the_reader_gate_g6_trusts_gives_a_forged_summary_no_verdict(tmp_path: Path) -> None:
    doc = replayed(tmp_path)
    report = json.loads((tmp_path / "replays" / "r.json").read_text(encoding="utf-8"))
    report["summary"]["verdict"] = "passed"
    data = forged(report)
    passed_with(doc, data)
    found = read_report(tmp_path / "replays" / "r.json", hashlib.sha256(data).hexdigest(),
                        report["component_id"], "resurrect", simulation="context-cutter")
    assert found.problem is not None and found.verdict is None
    honest = copy.deepcopy(report)
    honest["summary"]["verdict"] = "failed"
    data = forged(honest)
    found = read_report(_written(tmp_path, data), hashlib.sha256(data).hexdigest(),
                        report["component_id"], "resurrect", simulation="context-cutter")
    assert found.problem is None and found.verdict == "failed"


def _written(tmp_path: Path, data: bytes) -> Path:
    (tmp_path / "h.json").write_bytes(data)
    return tmp_path / "h.json"


# ---- the configuration's rules: a needed check turned off (stop 64) -----------------------

@pytest.mark.parametrize("rules", ["MC200: off", "MC200: 'off'", "MC20: off\n  MC201: error"])
def test_a_configuration_turning_off_what_a_check_needs_is_refused(tmp_path: Path,
                                                                  rules: str) -> None:
    (tmp_path / ".risutools.yaml").write_text(f"rules:\n  {rules}\n", "utf-8")
    doc = json.loads(SEED.read_text("utf-8"))
    doc["projection"]["prompt_sha256"] = "sha256:" + "A" * 64
    (tmp_path / "bad.json").write_text(json.dumps(doc), "utf-8")
    r = run_cli("validate", "bad.json", cwd=tmp_path)
    assert r.returncode == 2 and "cannot be off while MC201" in r.stderr


def test_turning_a_check_off_with_what_it_needs_is_allowed(tmp_path: Path) -> None:
    (tmp_path / ".risutools.yaml").write_text("rules:\n  MC2: off\n", "utf-8")
    shutil.copy(SEED, tmp_path / "doc.json")
    assert run_cli("validate", "doc.json", cwd=tmp_path).returncode == 0
