"""Findings of the ninth pass on the catalog side (stop 63), each a test that fails before
its fix:

* ``promote`` passed the history gate, and wrote, while ``transitions.ndjson`` held a line
  naming the component that could not be read ("no line naming it"): a log line that
  cannot be read and may name the component (its id in it, or a ``\\u`` escape that may
  spell it) fails G2; a promotion's read of the log no longer skips a line whose id is
  spelled with escapes;
* a ``pyproject.toml`` that is a link leading out of the catalog was read (its values
  applied, or quoted in an error), where a ``.risutools.yaml`` so was refused: now
  ``outside-catalog`` too, before it is read;
* ``review`` of a catalog whose every document is left out said "0 errors, 9 warnings, 0
  documents", exit 0, once it had notes or a log (their warnings counted as something
  found): ``no-documents``, exit 2, as ``validate`` says, unless something is an error;
* a document that cannot be read (a line of ``components.ndjson``, a JSON file not named
  for its id) made ``approve``/``packet``/``promote`` of its id say "no document ... (and
  no such file)", ``unknown-component``: any document that cannot be read may be the one
  sought, so it is ``unreadable-document`` naming it, its line and why;
* a lock file that is a Unix socket gave "unwritable: cannot write: No such device or
  address" (``open`` fails before the type is looked at), where a FIFO, a device or a
  folder there is ``not-a-file``: now ``not-a-file`` too;
* a document whose ``source_refs`` held only its curator notes' entry (no digest of the
  module it came from) passed ``validate`` and every gate up to ``approved`` ("1 source
  digest verified"): MC102 says ``source_refs[0]`` is the Risu attachment, never the
  notes' entry;
* a FIFO (or a device, a socket) named ``x.risum`` in an ingest's source folder was passed
  over in silence, where a file so named is "never passed over": a failed source,
  ``not-a-file``, exit 1, never opened.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
from pathlib import Path

import pytest
from harness import ROOT, run_cli

CUTTER = "module.risu.174678332.context-cutter"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cat = tmp_path_factory.mktemp("cat9") / "cat"
    assert run_cli("ingest", ROOT / "fixtures" / "sources", "-o", cat, "-q").returncode == 0
    return cat


@pytest.fixture
def cat(built: Path, tmp_path: Path) -> Path:
    out = tmp_path / "cat"
    shutil.copytree(built, out, symlinks=True)
    return out


def _escaped(text: str) -> str:
    """``text`` with every character written as a JSON ``\\u`` escape."""
    return "".join(f"\\u{ord(c):04x}" for c in text)


@pytest.mark.parametrize("line", [
    # a hand-made line naming it that is not JSON
    '{"component_id":"' + CUTTER + '","from_status":"candidate","to_status":"rejected", oops}',
    # nested past the reader's depth
    '{"component_id":"' + CUTTER + '","x":' + "[" * 200 + "1" + "]" * 200 + "}",
    # its id spelled with escapes, the line broken
    '{"component_id":"' + _escaped(CUTTER) + '","from_status":"candidate" "to_status":"x"}',
])
def test_a_log_line_that_may_name_it_and_cannot_be_read_fails_history(
        cat: Path, line: str) -> None:
    (cat / "transitions.ndjson").write_text(line + "\n", "utf-8")
    assert run_cli("approve", CUTTER, "--action", "request_review", "--reviewer", "kim",
                   cwd=cat).returncode == 0
    before = (cat / f"{CUTTER}.json").read_bytes()
    done = run_cli("promote", CUTTER, "--to", "pending_human_review", cwd=cat)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "FAIL  history" in done.stdout and "line 1 may name it" in done.stdout
    assert (cat / f"{CUTTER}.json").read_bytes() == before
    assert (cat / "transitions.ndjson").read_text("utf-8") == line + "\n"


def test_a_line_spelled_with_escapes_is_read_as_its_history(cat: Path) -> None:
    """A rejection whose component id is written with escapes names the component: the
    candidate's history is not empty (the gate fails, as the full read says)."""
    rec = {"component_id": CUTTER, "from_status": "candidate", "to_status": "rejected",
           "before_sha256": "sha256:" + "0" * 64, "after_sha256": "sha256:" + "1" * 64,
           "approval": {"file": "approvals/x.yaml", "sha256": "0" * 64}, "at": "2026-01-01"}
    text = json.dumps(rec).replace(json.dumps(CUTTER), f'"{_escaped(CUTTER)}"')
    (cat / "transitions.ndjson").write_text(text + "\n", "utf-8")
    assert run_cli("approve", CUTTER, "--action", "request_review", "--reviewer", "kim",
                   cwd=cat).returncode == 0
    done = run_cli("promote", CUTTER, "--to", "pending_human_review", cwd=cat)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "FAIL  history" in done.stdout


def test_a_broken_line_of_another_component_leaves_history_alone(cat: Path) -> None:
    line = '{"component_id":"module.risu.1.other","to_status":"rejected", oops}'
    (cat / "transitions.ndjson").write_text(line + "\n", "utf-8")
    assert run_cli("approve", CUTTER, "--action", "request_review", "--reviewer", "kim",
                   cwd=cat).returncode == 0
    done = run_cli("promote", CUTTER, "--to", "pending_human_review", cwd=cat)
    assert "pass  history" in done.stdout, done.stdout + done.stderr


# ---- a pyproject.toml linked out of the catalog is never read ---------------------------

@pytest.mark.parametrize("body", [
    '[tool.risutools]\nrules = {MC600 = "OUTSIDE-SECRET-VALUE"}\n',
    '[tool.risutools]\nexclude = ["*"]\n',  # (valid: it was applied, exit 0)
])
def test_a_pyproject_linked_out_of_the_catalog_is_refused(cat: Path, tmp_path: Path,
                                                          body: str) -> None:
    elsewhere = tmp_path / "elsewhere.toml"
    elsewhere.write_text(body, "utf-8")
    (cat / "pyproject.toml").symlink_to(elsewhere)
    done = run_cli("review", ".", "-q", "-f", "concise", cwd=cat)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "outside-catalog" in done.stderr and "OUTSIDE-SECRET" not in done.stderr


# ---- every document left out: no verdict, notes and log or not --------------------------

@pytest.mark.parametrize("how", ["--exclude", "exclude:"])
def test_a_review_with_every_document_left_out_is_no_documents(cat: Path, how: str) -> None:
    shutil.copytree(ROOT / "fixtures" / "notes", cat / "notes")
    line = {"component_id": "module.risu.1.gone", "from_status": "candidate",
            "to_status": "rejected"}
    (cat / "transitions.ndjson").write_text(json.dumps(line) + "\n", "utf-8")
    args = ["review", ".", "-q", "-f", "concise"]
    if how == "--exclude":
        args += ["--exclude", "*.json"]
    else:
        (cat / ".risutools.yaml").write_text('exclude: ["*.json"]\n', "utf-8")
    done = run_cli(*args, cwd=cat)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "no-documents" in done.stderr and done.stdout == ""


# ---- an id sought among documents that cannot be read ------------------------------------

MOOD = "module.risu.186123400.mood-tracker"


def test_an_unreadable_ndjson_line_is_said_where_an_id_is_sought(tmp_path: Path) -> None:
    cat = tmp_path / "cat"
    assert run_cli("ingest", ROOT / "fixtures" / "sources", "-o", cat, "--ndjson",
                   "-q").returncode == 0
    path = cat / "components.ndjson"
    lines = path.read_bytes().split(b"\n")
    at = next(i for i, line in enumerate(lines) if MOOD.encode() in line)
    lines[at] = lines[at][:-1] + b',"component_version":"9"}'  # (a key twice)
    path.write_bytes(b"\n".join(lines))
    for args in (["approve", MOOD, "--action", "request_review", "--reviewer", "kim"],
                 ["promote", MOOD, "--to", "pending_human_review"]):
        done = run_cli(*args, cwd=cat)
        assert done.returncode == 2, done.stdout + done.stderr
        assert f"unreadable-document: no document read with component_id '{MOOD}': " \
               f"components.ndjson:{at + 1}: duplicate key" in done.stderr, done.stderr


def test_an_unreadable_file_not_named_for_its_id_is_said(cat: Path) -> None:
    doc = cat / f"{MOOD}.json"
    doc.rename(cat / "renamed.json")
    (cat / "renamed.json").write_bytes(doc.with_name("renamed.json").read_bytes()[:-40])
    done = run_cli("approve", MOOD, "--action", "request_review", "--reviewer", "kim",
                   cwd=cat)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "unreadable-document" in done.stderr and "renamed.json" in done.stderr


# ---- a lock file that is a socket -------------------------------------------------------

def test_a_lock_file_that_is_a_socket_is_not_a_file(cat: Path) -> None:
    (cat / ".risutools.lock").unlink(missing_ok=True)
    with socket.socket(socket.AF_UNIX) as sock:
        try:
            sock.bind(str(cat / ".risutools.lock"))
        except OSError as exc:  # (a path too long for a socket's address)
            pytest.skip(f"cannot bind a socket there: {exc}")
        done = run_cli("approve", CUTTER, "--action", "request_review", "--reviewer", "kim",
                       cwd=cat)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "not-a-file: the lock file is not a regular file" in done.stderr
    assert not (cat / "approvals").exists() or not list((cat / "approvals").iterdir())


# ---- a document tied to no module bytes ----------------------------------------------------

def test_a_document_whose_only_digest_is_its_notes_is_refused(tmp_path: Path) -> None:
    cat = tmp_path / "cat"
    shutil.copytree(ROOT / "fixtures" / "notes", cat / "notes")
    assert run_cli("ingest", ROOT / "fixtures" / "sources", "-o", cat, "-q").returncode == 0
    path = cat / f"{MOOD}.json"
    doc = json.loads(path.read_text("utf-8"))
    refs = doc["provenance"]["source_refs"]
    assert [r["source_version"] for r in refs][-1] == "notes.yaml"
    doc["provenance"]["source_refs"] = refs[-1:]
    path.write_text(json.dumps(doc, ensure_ascii=False, indent=1) + "\n", "utf-8")
    done = run_cli("validate", path.name, "-f", "concise", cwd=cat)
    assert done.returncode == 1 and "MC102" in done.stdout, done.stdout
    assert "/provenance/source_refs/0/source_version" in done.stdout
    assert run_cli("approve", MOOD, "--action", "request_review", "--reviewer", "kim",
                   cwd=cat).returncode == 0
    done = run_cli("promote", MOOD, "--to", "pending_human_review", cwd=cat)
    assert done.returncode == 1 and "FAIL  contract     MC102" in done.stdout, done.stdout


# ---- a FIFO named as a Risu file in an ingest's sources -----------------------------------

def test_a_fifo_named_as_a_risu_file_is_a_failed_source(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(ROOT / "fixtures" / "sources" / "174678332_context-cutter.risum", src)
    os.mkfifo(src / "x.risum")
    os.mkfifo(src / "notes.txt")  # (not named as a Risu file: not one of the sources)
    done = run_cli("ingest", src, "-o", tmp_path / "cat", "-q")
    assert done.returncode == 1, done.stdout + done.stderr
    said = done.stdout + done.stderr
    assert "x.risum: not-a-file: is a FIFO (named pipe)" in said and "notes.txt" not in said
    assert (tmp_path / "cat" / f"{CUTTER}.json").is_file()
