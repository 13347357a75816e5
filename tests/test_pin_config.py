"""A pull request's ``.risutools.yaml`` is input it wrote (pin44): ``exclude:`` hides a
forged document from ``validate --allowed-signers``.  CI pins the configuration with
``--config FILE`` (the base branch's copy), which replaces the catalog's own -- nothing of
the pull request's file is read, no key merged.  Where the whole catalog is checked, a
component the log names with no document checked (removed, renamed, or left out by
``exclude:``) is a warning (MC307), so a hidden document with a history shows."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from harness import run_cli
from test_catalog_support import CUTTER, MOOD, doc_path, fresh_catalog, load

EVIL = "module.risu.999.evil"


def _ok(*args: str | Path) -> str:
    r = run_cli(*args)
    assert r.returncode == 0, (args, r.stdout, r.stderr)
    return str(r.stdout)


@pytest.fixture
def cat(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> Path:
    """The catalog with the cutter approved (two log lines); the base branch's
    configuration kept apart as CI keeps it (``base.yaml``)."""
    cat = fresh_catalog(tmp_path_factory, tmp_path)
    for action, to in (("request_review", "pending_human_review"), ("approve", "approved")):
        _ok("approve", CUTTER, "--action", action, "--reviewer", "kim", "--catalog", cat)
        _ok("promote", CUTTER, "--to", to, "--catalog", cat)
    shutil.copy(cat / ".risutools.yaml", tmp_path / "base.yaml")
    _ok("validate", cat)
    return cat


def _forge(cat: Path) -> None:
    """A new document, promoted and active by hand, in a folder the pull request's
    configuration excludes."""
    doc = load(doc_path(cat, MOOD))
    doc["component_id"] = EVIL
    doc["provenance"]["review_status"] = "promoted"
    doc["provenance"]["runtime_status"] = "active"
    (cat / "drafts").mkdir()
    (cat / "drafts" / "evil.json").write_text(json.dumps(doc, ensure_ascii=False))
    with open(cat / ".risutools.yaml", "a", encoding="utf-8") as f:
        f.write('exclude: ["drafts/*"]\n')


@pytest.mark.parametrize("command", [("validate",), ("review", "-q")])
def test_the_base_branchs_configuration_sees_the_forged_document(
        cat: Path, tmp_path: Path, command: tuple[str, ...]) -> None:
    _forge(cat)
    _ok(*command, cat)  # the pull request's own configuration hides it
    # (a pinned configuration's paths are its copy's: the store is named apart)
    store = ("--sources", cat / ".store") if command[0] == "review" else ()
    r = run_cli(*command, cat, "--config", tmp_path / "base.yaml", *store, "-f", "concise")
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert any("evil.json" in x and " MC305 " in x for x in r.stdout.splitlines()), r.stdout


def test_config_replaces_the_catalogs_own_configuration(cat: Path, tmp_path: Path) -> None:
    """No key of the pull request's file is read with --config: not its exclude:, not its
    catalog: section (signatures required there, not in the base)."""
    (cat / ".pr-signers").write_text("")
    _forge(cat)
    with open(cat / ".risutools.yaml", "a", encoding="utf-8") as f:
        f.write("catalog: {allowed_signers: .pr-signers, require_signatures: true}\n")
    r = run_cli("validate", cat, "-f", "concise")
    assert r.returncode == 1 and " MC305 " in r.stdout and "evil" not in r.stdout, r.stdout
    r = run_cli("validate", cat, "--config", tmp_path / "base.yaml", "-f", "json")
    found = json.loads(r.stdout)["findings"]
    mc305 = [f for f in found if f["rule"] == "MC305"]
    assert mc305 and all("evil.json" in f["file"] for f in mc305), mc305  # signatures not


@pytest.mark.parametrize("config", ["missing", "folder"])
def test_a_config_that_cannot_be_read_stops_the_run(cat: Path, tmp_path: Path,
                                                    config: str) -> None:
    """Never the catalog's own configuration instead."""
    p = tmp_path / "gone.yaml"
    if config == "folder":
        p.mkdir()
    for command in (("validate",), ("review", "-q")):
        r = run_cli(*command, cat, "--config", p)
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert "gone.yaml" in r.stderr


def _hide_the_cutter(cat: Path, edit: bool = True) -> None:
    """The approved cutter moved to drafts/ (and edited), drafts/ excluded."""
    doc = load(doc_path(cat, CUTTER))
    if edit:
        doc["projection"]["prompt"] = "edited after approval"
    (cat / "drafts").mkdir()
    (cat / "drafts" / "cutter.json").write_text(json.dumps(doc, ensure_ascii=False))
    doc_path(cat, CUTTER).unlink()
    with open(cat / ".risutools.yaml", "a", encoding="utf-8") as f:
        f.write('exclude: ["drafts/*"]\n')


def test_a_document_with_a_history_left_out_is_a_warning(cat: Path) -> None:
    _hide_the_cutter(cat)
    r = run_cli("validate", cat, "-f", "concise")
    assert r.returncode == 0, (r.stdout, r.stderr)  # a warning: CI pins the configuration
    [line] = [x for x in r.stdout.splitlines() if " MC307 " in x]
    assert "transitions.ndjson:1:" in line and CUTTER in line, line
    assert "left out of the check by exclude: drafts/*" in line and "--config" in line, line
    assert run_cli("validate", cat, "--strict").returncode == 1
    assert " RV202 " in run_cli("review", cat, "-q", "-f", "concise").stdout  # (review's own)


def test_a_removed_document_is_a_warning_without_exclude(cat: Path) -> None:
    doc_path(cat, CUTTER).unlink()
    r = run_cli("validate", cat, "-f", "concise")
    [line] = [x for x in r.stdout.splitlines() if " MC307 " in x]
    assert "removed or renamed;" in line and "exclude" not in line, line


def test_only_a_whole_catalog_is_asked(cat: Path) -> None:
    """Files named alone (a pre-commit hook's changed files) are a part of the catalog:
    the log's other components are not missing."""
    r = run_cli("validate", doc_path(cat, MOOD), "-f", "concise")
    assert r.returncode == 0 and " MC307 " not in r.stdout, r.stdout
    r = run_cli("validate", cat, "-f", "concise")
    assert " MC307 " not in r.stdout, r.stdout
