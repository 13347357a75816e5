"""Bound approvals (issue 20): `approve --packet` records the packet's task id, lane and base
hash, and refuses (exit 1, nothing written) when the document moved on since, saying what
changed; `--base` does the same for a hash; without either the record says so."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from harness import FIXTURES, run_cli
from test_catalog_support import CUTTER, doc_path, fresh_catalog

FIXTURE = FIXTURES / "replay" / "anchor-edit.yaml"


@pytest.fixture
def pending(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> Path:
    cat = fresh_catalog(tmp_path_factory, tmp_path)
    assert run_cli("approve", CUTTER, "--action", "request_review", "--reviewer", "kim",
                   "--catalog", cat).returncode == 0
    assert run_cli("promote", CUTTER, "--to", "pending_human_review", "--catalog",
                   cat).returncode == 0
    return cat


def _packet(cat: Path, out: Path) -> Path:
    r = run_cli("packet", CUTTER, "--lane", "light", "-o", out, "--catalog", cat)
    assert r.returncode == 0, r.stderr
    (p,) = out.glob("*.json")
    return p


def _records(cat: Path, action: str) -> list[dict[str, Any]]:
    return [yaml.safe_load(p.read_text()) for p in sorted((cat / "approvals").glob(
        f"*--{action}--*.yaml"))]


def _base(cat: Path) -> str:
    return run_cli("hash", "-q", doc_path(cat, CUTTER)).stdout.strip()


def test_an_approval_names_the_packet_it_read(pending: Path, tmp_path: Path) -> None:
    import json

    pk = _packet(pending, tmp_path / "packets")
    packet = json.loads(pk.read_text())
    r = run_cli("approve", CUTTER, "--action", "approve", "--reviewer", "kim", "--packet", pk,
                "--catalog", pending)
    assert r.returncode == 0, r.stderr
    assert f"packet task {packet['task']['id']}, light lane" in r.stdout
    (rec,) = _records(pending, "approve")
    assert rec["read"] == {"how": "packet", "packet": pk.name, "task_id": packet["task"]["id"],
                           "lane": "light", "base_sha256": _base(pending)}
    assert rec["base_sha256"] == _base(pending)
    assert run_cli("promote", CUTTER, "--to", "approved", "--catalog", pending).returncode == 0


def test_a_packet_older_than_the_document_cannot_be_approved(pending: Path,
                                                              tmp_path: Path) -> None:
    pk = _packet(pending, tmp_path / "packets")
    old = _base(pending)
    r = run_cli("replay", "run", doc_path(pending, CUTTER), "-x", FIXTURE, "--update")
    assert r.returncode == 0
    r = run_cli("approve", CUTTER, "--action", "approve", "--reviewer", "kim", "--packet", pk,
                "--catalog", pending)
    assert r.returncode == 1 and r.stdout == ""
    (line,) = r.stderr.splitlines()
    assert "base-moved" in line and f"the packet's base {old[:19]}" in line
    assert "transitions.ndjson line 2: evidence (replay run --update: fixture anchor-edit" in line
    assert "changed: /provenance/source_refs/2/sha256" in line
    assert _records(pending, "approve") == []  # nothing written
    # the same with --base
    r = run_cli("approve", CUTTER, "--action", "approve", "--reviewer", "kim", "--base", old,
                "--catalog", pending)
    assert r.returncode == 1 and "--base base" in r.stderr and "line 2: evidence" in r.stderr
    assert _records(pending, "approve") == []
    # a new packet (the current document) is approved
    pk2 = _packet(pending, tmp_path / "packets2")
    assert run_cli("approve", CUTTER, "--action", "approve", "--reviewer", "kim",
                   "--packet", pk2, "--catalog", pending).returncode == 0


def test_base_and_no_binding_are_recorded(pending: Path) -> None:
    now = _base(pending)
    r = run_cli("approve", CUTTER, "--action", "reject", "--reviewer", "kim", "--base", now,
                "--catalog", pending)
    assert r.returncode == 0 and "the base read" in r.stdout
    r = run_cli("approve", CUTTER, "--action", "approve", "--reviewer", "kim",
                "--catalog", pending)
    assert r.returncode == 0 and "without a packet" in r.stdout
    assert _records(pending, "reject")[0]["read"] == {"how": "base", "base_sha256": now}
    assert _records(pending, "approve")[0]["read"]["how"] == "none"


@pytest.mark.parametrize("args, code, says", [
    (("--base", "sha256:abc"), 2, "--base"),
    (("--base", "sha256:" + "0" * 64, "--packet", "x.json"), 2, "not both"),
    (("--packet", "missing.json"), 2, "not-found"),  # (what every read says of it)
])
def test_bad_bindings_are_one_line(pending: Path, args: tuple[str, ...], code: int,
                                   says: str) -> None:
    r = run_cli("approve", CUTTER, "--action", "approve", "--reviewer", "kim", *args,
                "--catalog", pending)
    assert r.returncode == code and says in r.stderr and len(r.stderr.splitlines()) == 1
    assert _records(pending, "approve") == []


def test_a_packet_of_another_component_or_not_a_packet(pending: Path, tmp_path: Path) -> None:
    import json

    pk = _packet(pending, tmp_path / "p")
    data = json.loads(pk.read_text())
    data["component"]["component_id"] = "module.risu.1.other"
    other = tmp_path / "other.json"
    other.write_text(json.dumps(data))
    notpk = tmp_path / "not.json"
    notpk.write_text('{"packet": "x"}')
    for f, says in ((other, "the packet is for module.risu.1.other"),
                    (notpk, "not a review-packet-v1 packet")):
        r = run_cli("approve", CUTTER, "--action", "approve", "--reviewer", "kim",
                    "--packet", f, "--catalog", pending)
        assert r.returncode == 2 and says in r.stderr and "bad-packet" in r.stderr
    assert _records(pending, "approve") == []
