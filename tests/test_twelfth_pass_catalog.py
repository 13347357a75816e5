"""A twelfth hostile pass over the catalog commands (stop 66, ``h4``): each test reproduces a
defect and fails before its fix.

- A second document of a component_id (a pull request's copy ``zz.json`` of a document,
  or the same component at another version) made every lifecycle command refuse the id as
  ambiguous, "name the file"; named by its file, the copy was promoted (every gate passed)
  and the line written for it moved the other document too: transitions.ndjson names a
  component by its id alone, and ``validate`` then failed MC305 on the document nobody
  touched.  Gate G2 (history) now fails while another document of the catalog holds the
  id, naming it, for a promotion, an activation and a publication alike, whether the
  command named the file or the review's board planned the step.
- A log that starts with a byte order mark was reported as "not valid JSON: Expecting value
  at column 1": the exact JSON path now names the mark (the line is still refused).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from harness import run_cli
from test_catalog_support import CUTTER, doc_path, fresh_catalog


def _copy(cat: Path, version: str | None) -> Path:
    """A second document of the cutter's id: a byte copy, or the same at ``version``."""
    doc = json.loads(doc_path(cat, CUTTER).read_text("utf-8"))
    if version is not None:
        doc["component_version"] = version
    copy = cat / "zz.json"
    copy.write_text(json.dumps(doc, ensure_ascii=False, indent=2), "utf-8")
    return copy


@pytest.mark.parametrize("version", [None, "1.0.1"])
def test_a_second_document_of_an_id_is_not_promoted_by_its_file(
        tmp_path_factory: pytest.TempPathFactory, tmp_path: Path, version: str | None) -> None:
    cat = fresh_catalog(tmp_path_factory, tmp_path)
    copy = _copy(cat, version)
    before = doc_path(cat, CUTTER).read_bytes(), copy.read_bytes()
    assert run_cli("approve", copy, "--catalog", cat, "--action", "request_review",
                   "--reviewer", "kim").returncode == 0
    done = run_cli("promote", copy, "--catalog", cat, "--to", "pending_human_review")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "FAIL  history" in done.stdout
    assert f"{CUTTER}.json holds this component_id too" in done.stdout
    assert (doc_path(cat, CUTTER).read_bytes(), copy.read_bytes()) == before
    assert not (cat / "transitions.ndjson").exists()
    assert run_cli("validate", cat, "--select", "MC305").returncode == 0


def test_the_board_blocks_both_documents_of_an_id(
        tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    cat = fresh_catalog(tmp_path_factory, tmp_path)
    _copy(cat, "1.0.1")
    done = run_cli("review", cat, "-f", "json")
    board = json.loads(done.stdout)["board"]
    text = json.dumps(board)
    assert text.count("holds this component_id too") >= 2, text[:2000]


def test_one_document_of_an_id_is_promoted_as_before(
        tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    cat = fresh_catalog(tmp_path_factory, tmp_path)
    path = doc_path(cat, CUTTER)
    assert run_cli("approve", path, "--catalog", cat, "--action", "request_review",
                   "--reviewer", "kim").returncode == 0
    done = run_cli("promote", path, "--catalog", cat, "--to", "pending_human_review")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "pass  history" in done.stdout


def test_a_log_that_starts_with_a_byte_order_mark_is_named_as_such(
        tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    """A ``transitions.ndjson`` an editor saved with a byte order mark was reported as "not
    valid JSON: Expecting value at column 1" (a document with one is read): the line is
    still refused (the log is append-only, its bytes hashed), and the message names the mark
    and what to do; any other broken line is worded as before."""
    cat = fresh_catalog(tmp_path_factory, tmp_path)
    log = cat / "transitions.ndjson"
    raw = b'{"component_id": "module.risu.1.x", "to_status": "candidate"}\n'
    log.write_bytes(b"\xef\xbb\xbf" + raw)
    out = run_cli("validate", cat, "-f", "concise")
    line = [x for x in out.stdout.splitlines() if "transitions.ndjson:1:" in x]
    assert len(line) == 1 and "byte order mark (U+FEFF)" in line[0] and "remove it" in line[0]
    assert "Expecting value" not in line[0]
    log.write_bytes(b"x" + raw)  # (not a mark: json's own words)
    out = run_cli("validate", cat, "-f", "concise")
    assert "Expecting value at column 1" in out.stdout and "byte order mark" not in out.stdout


def test_an_ndjson_line_with_a_mark_inside_a_file_is_named_too() -> None:
    """The exact JSON path names a mark wherever a text it parses begins with one (an
    NDJSON line past the first, a whole text)."""
    from risutools.values import parse_json_exact

    _doc, problem = parse_json_exact('\ufeff{"a": 1}', line=7)
    assert problem is not None and "byte order mark" in problem.message and problem.line == 7
    _doc, problem = parse_json_exact('\ufeff{"a": 1}', line=None)
    assert problem is not None and "at line 1 column 1" in problem.message
    _doc, problem = parse_json_exact('{"a": \ufeff1}', line=None)  # (not at the start)
    assert problem is not None and "byte order mark" not in problem.message
