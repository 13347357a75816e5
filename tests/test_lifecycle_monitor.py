"""`replay monitor DOC -x FIXTURE` (issue 20): the report is tied to the monitor's document
by digest; the monitor's own bridge-file records are read (both percentages when they agree,
one line naming the conflict when not); each alert shows the text it would inject."""

from __future__ import annotations

import json
from pathlib import Path

from harness import FIXTURES, run_cli

BRIDGE = """fixture: conversation-v1
name: bridge
config: {max_context: 1000}
messages:
  - {id: s0, role: system, content: "bridge records"}
turns:
  - metrics: {session_id: abc, used_pct: 40, remaining_percentage: 60, timestamp: 1764640000}
  - metrics: {session_id: abc, used_pct: 66, remaining_percentage: 34, timestamp: 1764640010}
  - metrics: {session_id: abc, used_pct: 50, remaining_percentage: 20, timestamp: 1764640020}
"""


def _monitor_doc(tmp: Path) -> Path:
    doc = json.loads((FIXTURES / "documents" / "seed-000-context-cutter.json").read_text())
    doc["component_id"] = "module.risu.1.context-monitor"
    doc["capabilities"]["provides"] = ["context.monitor"]
    p = tmp / "monitor.json"
    p.write_text(json.dumps(doc, ensure_ascii=False, indent=1) + "\n", "utf-8")
    return p


def test_the_report_names_the_document_and_the_text_each_alert_injects(tmp_path: Path) -> None:
    doc = _monitor_doc(tmp_path)
    out = tmp_path / "r.json"
    r = run_cli("replay", "monitor", doc, "-x", FIXTURES / "replay" / "monitor.yaml", "-o", out)
    assert r.returncode == 0, r.stderr
    report = json.loads(out.read_text())
    digest = run_cli("hash", "-q", doc).stdout.strip()
    assert report["component"] == {"component_id": "module.risu.1.context-monitor",
                                   "component_version": "1.0.0", "doc_sha256": digest}
    warn = next(a for a in report["alerts"] if a["level"] == "WARNING")
    crit = next(a for a in report["alerts"] if a["level"] == "CRITICAL")
    assert "finish the current task; start nothing complex" in warn["additional_context"]
    assert "stop now and save your state" in crit["additional_context"]
    assert warn["additional_context"].startswith("Context 65.0% used, 35.0% left")
    shown = [x for x in r.stdout.splitlines() if "additionalContext:" in x]
    assert len(shown) == len(report["alerts"]) and f"at {digest}" in r.stdout
    # without a document the report names none (as before)
    r = run_cli("replay", "monitor", "-x", FIXTURES / "replay" / "monitor.yaml", "-o", out)
    assert r.returncode == 0 and json.loads(out.read_text())["component"] is None


def test_bridge_records_agree_or_the_conflict_is_one_line(tmp_path: Path) -> None:
    fx = tmp_path / "bridge.yaml"
    fx.write_text(BRIDGE, "utf-8")
    out = tmp_path / "r.json"
    r = run_cli("replay", "monitor", "-x", fx, "-o", out)
    assert r.returncode == 0, r.stderr
    report = json.loads(out.read_text())
    rows = [x["monitor"] for x in report["requests"]]
    assert [m["used_pct"] for m in rows] == [40.0, 66.0, 80.0]  # turn 3: the remaining share
    assert [m["level"] for m in rows] == ["NORMAL", "WARNING", "CRITICAL"]
    (note,) = report["monitor_notes"]
    assert note == ("turn 3: metrics: the bridge record says used_pct 50 and "
                    "remaining_percentage 20, which do not add up to 100; the monitor takes "
                    "remaining_percentage (what its thresholds compare)")
    assert f"note: {note}" in r.stdout


def test_bad_bridge_records_are_one_line(tmp_path: Path) -> None:
    for bad, says in (("{session_id: '', used_pct: 1}", "session_id"),
                      ("{remaining_percentage: 120}", "remaining_percentage"),
                      ("{remaining_pct: 10, remaining_percentage: 10}", "not both"),
                      ("{timestamp: -1}", "timestamp")):
        fx = tmp_path / "bad.yaml"
        fx.write_text(BRIDGE.replace(
            "{session_id: abc, used_pct: 40, remaining_percentage: 60, timestamp: 1764640000}",
            bad), "utf-8")
        r = run_cli("replay", "monitor", "-x", fx)
        assert r.returncode == 2 and says in r.stderr and len(r.stderr.splitlines()) == 1, bad
