"""Gate G6 replays a report's fixture again when it is at hand (risutools/catalog/rerun.py).

A replay report is a claim: MC203 proves the file is the one recorded and that its summary
follows from its own invariants, so a report written by hand whose invariants say "passed"
verified as well as a real one, and G6 passed on it.  Now, when a file of the fixture's
digest is in the catalog's ``replays/`` (or the source store), G6 runs the simulation over
it with the report's configuration, and the report must conclude what the run does.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from test_catalog_support import CUTTER, fresh_catalog

from risutools.canonical import indented, self_hash
from risutools.catalog.catalog import Catalog
from risutools.catalog.promote import plan
from risutools.replay.api import run_component

#: a conversation the module is switched off for from the first request: the cutter's
#: invariants are not checked (R1 not-checked; the monitor's still are)
_OFF = """\
fixture: conversation-v1
name: switched-off
config: {enabled: false, tokenizer_profile: 1, message_overhead: 0, max_context: 40,
         preserve_latest: 1}
messages:
  - {id: s0, role: system, content: "0123456789"}
turns:
  - append: [{role: user, content: "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}]
  - append: [{role: assistant, content: "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"}]
"""


@pytest.fixture
def cat(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> Path:
    return fresh_catalog(tmp_path_factory, tmp_path)


def _gate(cat: Path) -> tuple[str, str]:
    c = Catalog.open(cat)
    p = plan(c, c.resolve(CUTTER), "approved", kind="status")  # (G1 fails; G6 runs anyway)
    (v,) = [v for v in p.verdicts if v.gate == "replay"]
    return v.verdict, v.reason


def _forged_pass(report: dict[str, Any]) -> dict[str, Any]:
    """``report`` (a real one, not-checked) edited by hand to say R1 passed, as the writer
    would write a passed report (its summary following from its invariants, its hash its
    own): what MC203 alone cannot tell from a real one."""
    n = report["summary"]["requests"]
    for inv in report["invariants"]:
        if inv["id"] == "R1":
            inv.update(verdict="passed", requests_checked=n)
    s = report["summary"]
    s["verdict"] = "passed"
    s["not_checked_invariants"] = [i for i in s["not_checked_invariants"] if i != "R1"]
    report["report_sha256"] = self_hash(report)
    return report


def _record(cat: Path, report: Path) -> None:
    """The cutter's document naming ``report`` as its replay evidence, replay passed."""
    p = cat / f"{CUTTER}.json"
    doc = json.loads(p.read_text("utf-8"))
    refs = [r for r in doc["provenance"]["source_refs"]
            if not r["source_id"].startswith("replay:")]
    refs.append({"source_id": "replay:switched-off", "source_version": "replay-report-v1",
                 "sha256": "sha256:" + hashlib.sha256(report.read_bytes()).hexdigest()})
    doc["provenance"]["source_refs"] = refs
    doc["projection"]["replay_status"] = "passed"
    doc["provenance"]["availability_verdict"] = "available"
    p.write_text(json.dumps(doc, indent=2, ensure_ascii=False), "utf-8")


def _forge(cat: Path, tmp_path: Path, fixture_in_replays: bool) -> None:
    fx = tmp_path / "switched-off.yaml"
    fx.write_text(_OFF, "utf-8")
    real = tmp_path / "real.json"
    run_component(cat / f"{CUTTER}.json", fx, output=real)
    report = json.loads(real.read_text("utf-8"))
    r1 = [i for i in report["invariants"] if i["id"] == "R1"]
    assert r1[0]["verdict"] == "not-checked"  # (the honest run: the cutter off, no R1)
    forged = cat / "replays" / "forged.json"
    forged.write_bytes(indented(_forged_pass(report)))
    if fixture_in_replays:
        shutil.copy(fx, cat / "replays" / "switched-off.yaml")
    _record(cat, forged)


def test_a_forged_pass_over_a_fixture_at_hand_fails_g6(cat: Path, tmp_path: Path) -> None:
    _forge(cat, tmp_path, fixture_in_replays=True)
    verdict, reason = _gate(cat)
    assert verdict == "fail", reason
    assert "replaying its fixture 'switched-off' here gives" in reason
    assert "R1 not-checked (the report: passed)" in reason


def test_a_forged_pass_without_its_fixture_says_it_was_not_replayed(
        cat: Path, tmp_path: Path) -> None:
    """Without the fixture the report stands on its digest (the spec's G6), and the verdict
    says it was not replayed again: never that it was."""
    _forge(cat, tmp_path, fixture_in_replays=False)
    verdict, reason = _gate(cat)
    assert verdict == "pass", reason
    assert "not replayed again" in reason and "replayed again over" not in reason


def test_a_real_report_whose_fixture_is_at_hand_is_replayed_again(cat: Path) -> None:
    fx = Path(__file__).resolve().parents[1] / "fixtures" / "replay" / "anchor-edit.yaml"
    assert _gate(cat)[0] == "pass"
    shutil.copy(fx, cat / "replays" / "anchor-edit.yaml")
    verdict, reason = _gate(cat)
    assert verdict == "pass", reason
    assert "replayed again over 'anchor-edit': passed, each invariant as the report" in reason


def test_a_fixture_changed_in_replays_is_not_replayed_as_the_reports(cat: Path) -> None:
    """A file of another digest under the fixture's name is not the report's fixture: it is
    not found, and nothing is replayed over it."""
    fx = Path(__file__).resolve().parents[1] / "fixtures" / "replay" / "anchor-edit.yaml"
    (cat / "replays" / "anchor-edit.yaml").write_bytes(fx.read_bytes() + b"# changed\n")
    verdict, reason = _gate(cat)
    assert verdict == "pass" and "not replayed again" in reason, reason


def test_one_fixture_named_by_many_reports_is_replayed_once(
        cat: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A catalog's documents may all name one (hostile, long) fixture: it is replayed once a
    process, the answer shared (bounded: 64 runs kept)."""
    from risutools.catalog import rerun

    fx = Path(__file__).resolve().parents[1] / "fixtures" / "replay" / "anchor-edit.yaml"
    shutil.copy(fx, cat / "replays" / "anchor-edit.yaml")
    calls: list[object] = []
    real = rerun._run
    monkeypatch.setattr(rerun, "_run", lambda *a: calls.append(a) or real(*a))
    monkeypatch.setattr(rerun, "_RUNS", {})
    first, second = _gate(cat), _gate(cat)
    assert first == second and first[0] == "pass" and "replayed again over" in first[1]
    assert len(calls) == 1
