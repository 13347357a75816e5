"""Evidence kept on re-ingest (issue 20): while the module's bytes are unchanged a re-ingest
keeps the recorded replay verdict and its report reference; when they changed the verdict
becomes `stale` with the reason, never silently `not_run`; the summary counts both."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from harness import FIXTURES, run_cli
from test_catalog_support import CUTTER, MOOD, doc_path, fresh_catalog, load


def _ingest(cat: Path, *extra: str) -> tuple[int, str, str]:
    r = run_cli("ingest", FIXTURES / "sources", "-o", cat, "--lang", "ko", "-j", "1",
                "--no-cache", *extra)
    return r.returncode, r.stdout, r.stderr


def test_unchanged_bytes_keep_the_verdict_and_the_report(
        tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    cat = fresh_catalog(tmp_path_factory, tmp_path)
    before = doc_path(cat, CUTTER).read_bytes()
    assert load(doc_path(cat, CUTTER))["projection"]["replay_status"] == "passed"
    code, out, err = _ingest(cat)
    assert code == 0, err
    assert doc_path(cat, CUTTER).read_bytes() == before  # kept: byte for byte
    assert "replay verdicts kept" in out and "replay verdicts stale" in out
    rows = {ln.split("│")[1].strip(): ln.split("│")[2].strip()
            for ln in out.splitlines() if ln.count("│") >= 3}
    assert rows["replay verdicts kept"] == "1" and rows["replay verdicts stale"] == "0"
    assert run_cli("validate", cat).returncode == 0


def test_changed_bytes_make_the_verdict_stale_with_the_reason(
        tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    cat = fresh_catalog(tmp_path_factory, tmp_path)
    p = doc_path(cat, CUTTER)
    doc = load(p)
    # the replay was recorded on other module bytes than the sources now hold
    old = "sha256:" + "1" * 64
    doc["provenance"]["source_refs"][0]["sha256"] = old
    p.write_text(json.dumps(doc, ensure_ascii=False, indent=1) + "\n", "utf-8")
    report_ref = [r for r in doc["provenance"]["source_refs"]
                  if r["source_id"].startswith("replay:")]
    code, out, err = _ingest(cat, "--json")
    assert code == 0, err
    summary = json.loads(out)
    assert summary["counts"]["evidence_stale"] == 1 and summary["counts"]["evidence_kept"] == 0
    (line,) = summary["evidence_stale"]
    assert line.startswith(f"{CUTTER}: the module's bytes changed since the replay "
                           f"({old[:19]}… -> sha256:")
    assert "replay_status passed -> stale" in line
    new = load(p)
    assert new["projection"]["replay_status"] == "stale"
    assert new["provenance"]["availability_verdict"] == "untested"
    assert new["provenance"]["source_refs"][0]["sha256"] != old  # the new module's digest
    assert [r for r in new["provenance"]["source_refs"]
            if r["source_id"].startswith("replay:")] == report_ref
    assert run_cli("validate", cat).returncode == 0
    # the text summary says so too, one line on standard error
    code, out, err = _ingest(cat)
    assert "stale" not in err  # already stale: kept as it is (nothing new to say)


def test_a_component_without_evidence_gets_a_fresh_projection(
        tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    cat = fresh_catalog(tmp_path_factory, tmp_path)
    assert load(doc_path(cat, MOOD))["projection"]["replay_status"] == "not_run"
    code, out, _ = _ingest(cat, "--json")
    assert code == 0
    s = json.loads(out)
    assert MOOD not in " ".join(s["evidence_kept"] + s["evidence_stale"])
    assert load(doc_path(cat, MOOD))["projection"]["replay_status"] == "not_run"
