"""Defects a fuzzing pass over the lifecycle commands found (stop 42), each as a class:
a packet is never replaced; a packets' folder named through the catalog stays in it;
every person-written option a record keeps is one line of plain text; a file that holds
no component is not hashed, approved or moved; a signers file that is not a file says
so; a file of several YAML documents is not read as its first."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from harness import run_cli
from test_catalog_support import CUTTER, MOOD, fresh_catalog


@pytest.fixture
def cat(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> Path:
    return fresh_catalog(tmp_path_factory, tmp_path / "cat")


def _packet(cat: Path, out: Path, *more: str) -> tuple[int, str]:
    r = run_cli("packet", MOOD, "--lane", "light", "-o", out, "--catalog", cat, *more)
    return r.returncode, r.stdout + r.stderr


def test_a_packet_is_never_replaced(cat: Path) -> None:
    out = cat / "pk"
    code, said = _packet(cat, out, "--actor", "alice")
    assert code == 0, said
    md = next(out.glob("*.md"))
    md.write_bytes(md.read_bytes() + b"my notes\n")
    files = {p: p.read_bytes() for p in out.iterdir()}
    code, said = _packet(cat, out, "--actor", "bob")
    assert code == 1 and "write-conflict" in said and "never replaced" in said, said
    assert {p: p.read_bytes() for p in out.iterdir()} == files  # (the JSON untouched too)


def test_the_same_packet_again_is_left_as_it_is(cat: Path) -> None:
    out = cat / "pk"
    assert _packet(cat, out, "--actor", "alice")[0] == 0
    files = {p: p.stat().st_mtime_ns for p in out.iterdir()}
    assert _packet(cat, out, "--actor", "alice")[0] == 0
    assert {p: p.stat().st_mtime_ns for p in out.iterdir()} == files


def test_a_packets_folder_linked_out_of_the_catalog_is_refused(cat: Path, tmp_path: Path
                                                                ) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (cat / "packets").symlink_to(elsewhere)
    for args in (("-o", cat / "packets"), ("-o", cat / "packets" / "deeper")):
        r = run_cli("packet", MOOD, "--lane", "light", *args, "--catalog", cat)
        assert r.returncode == 2 and "outside-catalog" in r.stdout + r.stderr, r.stderr
    r = run_cli("packet", "--lane", "light", "--queue", cat / "packets", "--status",
                "candidate", "--catalog", cat)
    assert r.returncode == 2 and "outside-catalog" in r.stdout + r.stderr
    assert list(elsewhere.iterdir()) == []
    # run from the catalog's own folder, with the default folder name
    here = os.getcwd()
    try:
        os.chdir(cat)
        r = run_cli("packet", MOOD, "--lane", "light")
    finally:
        os.chdir(here)
    assert r.returncode == 2 and list(elsewhere.iterdir()) == []


def test_a_packets_folder_the_user_names_elsewhere_is_written(cat: Path, tmp_path: Path
                                                               ) -> None:
    code, said = _packet(cat, tmp_path / "mine")
    assert code == 0, said
    assert len(list((tmp_path / "mine").glob("*.json"))) == 1


TEXT_OPTIONS = [
    ("packet", MOOD, "--lane", "light", "--actor", "x\x1b[31my"),
    ("packet", MOOD, "--lane", "full", "--instruction", "do\x07"),
    ("packet", MOOD, "--lane", "full", "--escalates", "task-\u202e"),
    ("activate", CUTTER, "--by", "x\x1b[31my\u202e"),
    ("deactivate", CUTTER, "--by", "a\nb"),
    ("publish", CUTTER, "--by", "a\rb"),
]


@pytest.mark.parametrize("args", TEXT_OPTIONS, ids=lambda a: f"{a[0]}{a[-2]}")
def test_person_written_options_are_one_line_of_plain_text(cat: Path,
                                                          args: tuple[str, ...]) -> None:
    log = cat / "transitions.ndjson"
    before = log.read_bytes() if log.exists() else None
    r = run_cli(*args, "--catalog", cat)
    assert r.returncode == 2 and "control character" in r.stdout + r.stderr, r.stderr
    assert (log.read_bytes() if log.exists() else None) == before
    assert not (cat / "packets").exists()


@pytest.mark.parametrize("field,value", [("lane", "\x1b[31mheavy"), ("lane", "medium"),
                                         ("base_sha256", "sha256:zz"),
                                         ("task", {"id": "task-\x1b"})])
def test_approve_refuses_a_packet_risutools_did_not_write(cat: Path, field: str,
                                                          value: object) -> None:
    out = cat / "pk"
    assert _packet(cat, out)[0] == 0
    p = next(out.glob("*.json"))
    pk = json.loads(p.read_text("utf-8"))
    pk[field] = value
    p.write_text(json.dumps(pk), "utf-8")
    r = run_cli("approve", MOOD, "--action", "request_review", "--reviewer", "kim",
                "--packet", p, "--catalog", cat)
    assert r.returncode == 2 and "bad-packet" in r.stdout + r.stderr, r.stderr
    assert not list((cat / "approvals").glob(f"{MOOD}--*")) if (cat / "approvals").exists() \
        else True


@pytest.mark.parametrize("content", ["[]\n", '"s"\n', '{"a": 1}\n', "component_id: [1]\n"])
def test_a_file_holding_no_component_is_not_hashed_or_moved(cat: Path, content: str) -> None:
    f = cat / ("x.yaml" if ":" in content else "x.json")
    f.write_text(content, "utf-8")
    r = run_cli("hash", f)
    assert r.returncode == 2 and "unsupported-document" in r.stdout + r.stderr, r.stdout
    assert "sha256:" not in r.stdout
    r = run_cli("promote", f, "--to", "retired", "--dry-run", "--catalog", cat)
    assert r.returncode == 2 and "not a component document" in r.stdout + r.stderr


def test_hash_goes_on_past_a_file_holding_no_component(cat: Path, tmp_path: Path) -> None:
    bad = tmp_path / "a.json"
    bad.write_text("[]", "utf-8")
    r = run_cli("hash", bad, next(cat.glob("*.json")))
    assert r.returncode == 2 and r.stdout.count("sha256:") == 1


@pytest.mark.parametrize("kind", ["fifo", "folder", "missing"])
def test_a_signers_file_that_is_not_a_file_says_what_it_is(cat: Path, tmp_path: Path,
                                                           kind: str) -> None:
    p = tmp_path / "signers"
    if kind == "fifo":
        os.mkfifo(p)
    elif kind == "folder":
        p.mkdir()
    r = run_cli("validate", cat, "--allowed-signers", p)
    said = r.stdout + r.stderr
    assert r.returncode == 2
    assert ("not-found" if kind == "missing" else "not-a-file") in said, said


def test_a_configuration_of_two_yaml_documents_is_refused(cat: Path) -> None:
    cfg = cat / ".risutools.yaml"
    cfg.write_text(cfg.read_text("utf-8") + "---\nbogus_key: 1\n", "utf-8")
    r = run_cli("review", cat)
    assert r.returncode == 2 and "several YAML documents" in r.stdout + r.stderr


def test_an_approval_record_of_two_yaml_documents_is_unreadable(cat: Path) -> None:
    r = run_cli("approve", MOOD, "--action", "request_review", "--reviewer", "kim",
                "--catalog", cat)
    assert r.returncode == 0, r.stderr
    rec = next((cat / "approvals").glob(f"{MOOD}--*"))
    rec.write_text(rec.read_text("utf-8") + "---\nreviewer: mallory\n", "utf-8")
    r = run_cli("promote", MOOD, "--to", "pending_human_review", "--catalog", cat)
    assert r.returncode == 1
    r = run_cli("review", cat, "-f", "json")
    assert "several YAML documents" in r.stdout


def test_a_report_into_a_fifo_no_one_reads_is_one_line_not_a_wait(cat: Path) -> None:
    """A catalog can hold a FIFO under a report's name: with no reader, opening it for
    writing would wait for ever; it is one line, exit 2."""
    fifo = cat / "review.json"
    os.mkfifo(fifo)
    r = run_cli("review", cat, "-f", "json", "-o", fifo)
    assert r.returncode == 2 and "FIFO that no process reads" in r.stderr, r.stderr


def test_a_review_report_named_through_a_link_out_of_the_catalog_is_refused(
        cat: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (cat / "out").symlink_to(elsewhere)
    r = run_cli("review", cat, "-f", "json", "-o", cat / "out" / "review.json")
    assert r.returncode == 2 and "outside-catalog" in r.stdout + r.stderr, r.stderr
    assert list(elsewhere.iterdir()) == []
    r = run_cli("review", cat, "-f", "json", "-o", tmp_path / "mine.json")  # (the user's)
    assert r.returncode in (0, 1) and (tmp_path / "mine.json").exists()
