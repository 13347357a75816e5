"""Review packets: the light and full lanes, needs_full_context, queue hand-off."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from harness import approve
from test_catalog_support import (
    CUTTER,
    MOOD,
    approve_and_promote,
    doc_path,
    fresh_catalog,
    load,
    run,
)

from risutools.catalog.catalog import Catalog
from risutools.catalog.packet import WITHHELD, build_packet


@pytest.fixture
def cat(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> Path:
    return fresh_catalog(tmp_path_factory, tmp_path)


def _packet(cat: Path, cid: str, lane: str, **kw: Any) -> dict[str, Any]:
    c = Catalog.open(cat)
    return build_packet(c, c.resolve(cid), lane, **kw)


def test_light_packet_holds_only_the_fragment(cat: Path) -> None:
    p = _packet(cat, MOOD, "light", actor="bot")
    e = Catalog.open(cat).resolve(MOOD)
    assert p["lane"] == "light" and p["actor"] == "bot"
    assert p["base_sha256"] == e.base_sha256
    assert p["document"] == e.doc
    assert p["task"]["instruction"].startswith("decide whether to request human review")
    assert p["task"]["action"] == "request_review"
    assert "relations" not in p
    assert p["needs_full_context"] == []
    facts = p["permission_facts"]
    assert facts["capabilities"]["requires"] == e.caps("requires")
    assert facts["policy"]["review_status"] == "candidate"
    assert any(f["rule"] == "MC600" and f["pointer"] == "/payload" for f in facts["findings"])
    assert not any(k in json.dumps(p) for k in ("model", "provider"))


def test_full_packet_adds_relations(cat: Path) -> None:
    approve_and_promote(cat, CUTTER, "request_review", "pending_human_review")
    p = _packet(cat, CUTTER, "full", escalates="task-0000")
    rel = p["relations"]
    assert p["task"]["escalates"] == "task-0000"
    assert [h["to_status"] for h in rel["transition_history"]] == ["pending_human_review"]
    assert rel["notes"] is not None  # the curator notes of the cutter
    assert rel["replay_reports"] and rel["replay_reports"][0]["verdict"] == "passed"
    assert set(rel["providers_of_requirements"]) == set(
        Catalog.open(cat).resolve(CUTTER).caps("requires"))
    light = _packet(cat, CUTTER, "light")
    assert light["task"]["id"] != p["task"]["id"]


def test_light_packet_says_when_it_cannot_decide(cat: Path) -> None:
    approve(MOOD, "request_review", "kim", "", None, str(cat))
    p = doc_path(cat, MOOD)
    doc = load(p)
    doc["capabilities"]["requires"].append("context.monitor")
    doc["capabilities"]["conflicts"] = ["context.token_budget"]
    p.write_text(json.dumps(doc, ensure_ascii=False, indent=1))
    other = load(doc_path(cat, CUTTER))
    other["provenance"]["review_status"] = "promoted"
    (cat / "live.json").write_text(json.dumps(other, ensure_ascii=False))
    (cat / "twin.json").write_text(json.dumps(doc, ensure_ascii=False))  # same id
    sibling = dict(doc, component_id="module.risu.186123400.sibling")  # same source
    (cat / "sibling.json").write_text(json.dumps(sibling, ensure_ascii=False))
    pk = _packet(cat, str(p), "light")
    reasons = {r["reason"] for r in pk["needs_full_context"]}
    assert reasons == {"unmet-requirement", "conflict", "id-collision", "shared-source",
                       "stale-approval"}
    assert "relations" not in pk  # it never widens itself


def test_code_is_withheld_from_the_packet(cat: Path) -> None:
    p = doc_path(cat, MOOD)
    doc = load(p)
    doc["payload"]["triggers"].append("function onInput(x) local y = getChatVar('a') end")
    p.write_text(json.dumps(doc, ensure_ascii=False, indent=1))
    pk = _packet(cat, MOOD, "light")
    assert WITHHELD in pk["document"]["payload"]["triggers"]
    assert "getChatVar('a')" not in json.dumps(pk, ensure_ascii=False)


def test_cli_packet_files_are_deterministic(cat: Path, tmp_path: Path) -> None:
    out = tmp_path / "pk"
    r = run("packet", MOOD, "--lane", "light", "-o", str(out), "--actor", "kim", cwd=cat)
    assert r.returncode == 0, r.stderr
    files = sorted(out.iterdir())
    assert [f.suffix for f in files] == [".json", ".md"]
    first = [f.read_bytes() for f in files]
    r = run("packet", MOOD, "--lane", "light", "-o", str(out), "--actor", "kim", cwd=cat)
    assert [f.read_bytes() for f in sorted(out.iterdir())] == first
    md = files[1].read_text()
    assert "# Review packet" in md and "base hash" in md
    r = run("packet", MOOD, "--lane", "wide", "-o", str(out), cwd=cat)
    assert r.returncode == 2 and "usage: Invalid value for --lane: 'wide'" in r.stderr
    r = run("packet", MOOD, "--lane", "light", "--escalates", "task-1", cwd=cat)
    assert r.returncode == 2


def test_queue_hands_off_bounded_light_packets(cat: Path, tmp_path: Path) -> None:
    q = tmp_path / "queue"
    r = run("packet", "--lane", "light", "--queue", str(q), "--status", "candidate",
            "--limit", "3", "--actor", "loop", cwd=cat)
    assert r.returncode == 0, r.stderr
    (handoff,) = q.glob("handoff-*.json")
    rec = json.loads(handoff.read_text())
    assert rec["who"] == "loop" and rec["when"] and rec["queued"] == 3
    assert rec["matched"] == 9 and rec["left_out"] == 6
    for item in rec["packets"]:
        pk = json.loads((q / item["packet"]).read_text())
        assert pk["lane"] == "light" and pk["base_sha256"] == item["base_sha256"]
    r = run("packet", "--lane", "full", "--queue", str(q), "--status", "candidate", cwd=cat)
    assert r.returncode == 2
    r = run("packet", "--lane", "light", "--queue", str(q), cwd=cat)
    assert r.returncode == 2


def test_full_packet_never_reads_a_device_or_a_fifo(cat: Path) -> None:
    """Replay reports in a catalog are read as regular files only, bounded: one linked to
    /dev/zero (or a FIFO) gives no verdict instead of hanging the packet."""
    import os

    c = Catalog.open(cat)
    bad = c.replays_dir / f"{CUTTER}--zero.json"
    if os.path.exists("/dev/zero"):
        bad.symlink_to("/dev/zero")
    else:
        os.mkfifo(bad)
    p = _packet(cat, CUTTER, "full")
    reports = {r["file"]: r for r in p["relations"]["replay_reports"]}
    assert reports[c.rel(bad)]["verdict"] is None
    assert [r["verdict"] for r in reports.values()].count("passed") == 1
