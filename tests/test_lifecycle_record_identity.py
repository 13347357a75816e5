"""A record is what it says, not the file that holds it (adversarial pass, life44).

A record approves one step, and which records the log used was decided by the file name a
line gives.  So a copy of a used ``activate`` record under another name, a symbolic link to
it, the same record written again as JSON with its keys in another order, or a line that
spells the used record's path another way (``approvals/./x.yaml``) was a record no line had
used: ``activate`` switched the component on again with it, and a hand-written line using
it passed ``validate`` and ``review``.  A record's identity is now the SHA-256 of what its
signature covers (``transitions.record_key``), whatever file holds it."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import yaml
from harness import run_cli
from test_catalog_support import CUTTER, doc_path, load, log_lines
from test_lifecycle_forgery import needs_ssh, signed_cat  # noqa: F401 (a fixture)
from test_lifecycle_used_once import _ok, _switched_on_and_off


def _used_activate_record(cat: Path) -> Path:
    on = next(r for r in log_lines(cat) if r.get("to_runtime") == "active")
    return cat / on["approval"]["file"]


def _refused_switch(cat: Path) -> None:
    before = (cat / "transitions.ndjson").read_bytes()
    r = run_cli("activate", CUTTER, "--catalog", cat)
    assert r.returncode == 1, r.stdout
    assert "used by a recorded step already" in r.stdout, r.stdout
    assert (cat / "transitions.ndjson").read_bytes() == before
    assert load(doc_path(cat, CUTTER))["provenance"]["runtime_status"] == "inactive"


def _as_json(record: Path, to: Path) -> None:
    """The record written again: JSON, its keys reversed (the same signed bytes)."""
    rec = yaml.safe_load(record.read_text("utf-8"))
    to.write_text(json.dumps(dict(reversed(list(rec.items()))), indent=3) + "\n", "utf-8")


@needs_ssh
def test_another_file_holding_a_used_record_does_not_switch_again(
        signed_cat: tuple[Path, Path, Path]) -> None:  # noqa: F811
    cat, key, pinned = signed_cat
    _switched_on_and_off(cat, key)
    used = _used_activate_record(cat)
    copy, link, again = (cat / "approvals" / n for n in ("copy.yaml", "link.yaml", "zz.json"))
    copy.write_bytes(used.read_bytes())
    _refused_switch(cat)
    copy.unlink()
    os.symlink(used.name, link)
    _refused_switch(cat)
    link.unlink()
    _as_json(used, again)
    _refused_switch(cat)
    # the review calls it used, not current
    r = run_cli("review", cat, "-q", "-f", "json")
    rows = {a["file"]: a["state"] for a in json.loads(r.stdout)["approvals"]}
    assert rows["approvals/zz.json"] == "used", rows
    again.unlink()
    # a new decision switches it
    _ok("approve", CUTTER, "--action", "activate", "--reviewer", "kim", "--sign", key,
        "--note", "on again", "--catalog", cat)
    _ok("activate", CUTTER, "--catalog", cat)
    _ok("validate", cat, "--allowed-signers", pinned)


def _replayed_switch(cat: Path, name: str, data: bytes) -> None:
    """A line written by hand switching the cutter on again with the record ``name``."""
    on = next(r for r in log_lines(cat) if r.get("to_runtime") == "active")
    line = {**on, "at": "2026-12-05T00:00:00+00:00",
            "approval": {"file": name, "sha256": "sha256:" + hashlib.sha256(data).hexdigest()}}
    with open(cat / "transitions.ndjson", "a", encoding="utf-8") as f:
        f.write(json.dumps(line) + "\n")
    p = doc_path(cat, CUTTER)
    doc = load(p)
    doc["provenance"]["runtime_status"] = "active"
    p.write_text(json.dumps(doc, ensure_ascii=False, indent=2) + "\n")


@needs_ssh
def test_a_line_using_a_used_record_under_another_name_fails_validate_and_review(
        signed_cat: tuple[Path, Path, Path], tmp_path: Path) -> None:  # noqa: F811
    cat, key, pinned = signed_cat
    _switched_on_and_off(cat, key)
    used = _used_activate_record(cat)
    rel = used.relative_to(cat).as_posix()
    pristine = tmp_path / "pristine"
    os.rename(cat, pristine)
    for how in ("copy", "link", "json", "dot", "approvals-less"):
        if cat.exists():
            shutil.rmtree(cat)
        shutil.copytree(pristine, cat, symlinks=True)
        data = used.read_bytes()
        if how == "copy":
            name = "approvals/copy.yaml"
            (cat / name).write_bytes(data)
        elif how == "link":
            name = "approvals/link.yaml"
            os.symlink(used.name, cat / name)
        elif how == "json":
            name = "approvals/zz.json"
            _as_json(used, cat / name)
            data = (cat / name).read_bytes()
        elif how == "dot":
            name = rel.replace("approvals/", "approvals/./")
        else:
            name = rel.removeprefix("approvals/")  # the same file, named the short way
        _replayed_switch(cat, name, data)
        for command in ("validate", "review"):
            r = run_cli(command, cat, "--allowed-signers", pinned) if command == "validate" \
                else run_cli(command, cat, "-q")
            assert r.returncode == 1, (how, command, r.stdout)
            assert "was already used by line" in r.stdout, (how, command, r.stdout)


@needs_ssh
def test_approve_refuses_to_write_the_record_a_line_already_used(
        signed_cat: tuple[Path, Path, Path]) -> None:  # noqa: F811
    """The same fields in the same second (SOURCE_DATE_EPOCH) are the record already used:
    it could approve nothing, so nothing is written and the line says why."""
    cat, key, _ = signed_cat
    env = {**os.environ, "SOURCE_DATE_EPOCH": "1796000000"}
    _ok("approve", CUTTER, "--action", "approve", "--reviewer", "kim", "--sign", key,
        "--catalog", cat)
    _ok("promote", CUTTER, "--to", "approved", "--catalog", cat)
    for action in ("activate", "deactivate"):
        r = run_cli("approve", CUTTER, "--action", action, "--reviewer", "kim", "--sign", key,
                    "--catalog", cat, env=env)
        assert r.returncode == 0, r.stderr
        _ok(action, CUTTER, "--catalog", cat)
    files = sorted((cat / "approvals").iterdir())
    r = run_cli("approve", CUTTER, "--action", "activate", "--reviewer", "kim", "--sign", key,
                "--catalog", cat, env=env)
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert r.stderr.count("\n") == 1 and "record-used" in r.stderr, r.stderr
    assert "SOURCE_DATE_EPOCH" in r.stderr and "Traceback" not in r.stderr
    assert sorted((cat / "approvals").iterdir()) == files
    r = run_cli("approve", CUTTER, "--action", "activate", "--reviewer", "kim", "--sign", key,
                "--note", "on again", "--catalog", cat, env=env)
    assert r.returncode == 0, r.stderr
    _ok("activate", CUTTER, "--catalog", cat)
    _ok("validate", cat)
