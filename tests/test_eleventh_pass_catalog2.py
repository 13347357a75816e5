"""An eleventh pass over small catalog and contract defects left by earlier helpers
(stop 65, ``catalog2``): each test reproduces a defect and fails before its fix.

- The full-lane review packet built its relations from the documents alone: a component
  the log says is promoted (an approval cut short between its log line and its document)
  was no conflict of the packet's component, and a catalog file that could not be read
  was not said, where gate G7 fails naming the one and "cannot tell" for the other.  The
  packet now reads the graph the review's gates judge by.
- ``analyze a.risum a.risum`` (or ``./a.risum``, the absolute path, a link to it) analysed
  and reported the module twice; ``validate cat catlink/doc.json`` (the folder reached
  through a link to it) was an MC104 duplicate of itself: a file named twice is read once,
  known by its real path.
- A link inside a catalog to one of its documents (``cat/link.json -> cat/doc.json``) was
  read as a second document, an MC104 duplicate of its target (validate, verify, review,
  and every command that reads the catalog); now a folder walk reads a link to a file it
  reads already as that file, once, and says so once; a link leading out stays refused.
- ``validate --skip-non-documents facts/doc.json`` run above a catalog whose own folder is
  named ``facts`` (or notes, approvals, replays) skipped the document, and ``validate .``
  there found no document: a catalog's own folders were told by the path's spelling.  Now
  they are judged below the catalog's root, as every command finds it; the shipped hooks'
  ``exclude:`` names files by their own name only.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from harness import FIXTURES, ROOT, SEED, run_cli
from test_catalog_support import (
    CUTTER,
    approve_and_promote,
    doc_path,
    fresh_catalog,
)

from risutools.catalog.catalog import Catalog
from risutools.catalog.packet import build_packet
from risutools.catalog.promote import plan
from risutools.catalog.review import review_catalog

FOE = "module.risu.174678332.cutter-foe"


# ---- a packet shows the conflicts the gates count ------------------------------------------

def _foe(cat: Path) -> None:
    """A pending component that conflicts with what the cutter provides."""
    doc = json.loads(doc_path(cat, CUTTER).read_text("utf-8"))
    doc["component_id"] = FOE
    doc["provenance"]["runtime_status"] = "inactive"
    doc["provenance"]["review_status"] = "pending_human_review"
    doc["capabilities"]["provides"] = ["context.protected_roles"]
    doc["capabilities"]["conflicts"] = ["context.token_budget"]
    (cat / "foe.json").write_text(json.dumps(doc), "utf-8")


@pytest.fixture
def promoted_by_log(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> Path:
    """The cutter promoted by a process killed between the log's line and the document:
    transitions.ndjson says promoted, the document still says approved."""
    c = fresh_catalog(tmp_path_factory, tmp_path)
    approve_and_promote(c, CUTTER, "request_review", "pending_human_review")
    approve_and_promote(c, CUTTER, "approve", "approved")
    before = doc_path(c, CUTTER).read_bytes()
    approve_and_promote(c, CUTTER, "promote", "promoted")
    (c / "promoted.bytes").write_bytes(doc_path(c, CUTTER).read_bytes())
    doc_path(c, CUTTER).write_bytes(before)  # (the line written, the document not)
    _foe(c)
    return c


def _packet(cat: Path, lane: str) -> dict:
    c = Catalog.open(cat)
    return build_packet(c, c.resolve(FOE), lane)


def test_a_full_packet_names_the_logs_promoted_conflict(promoted_by_log: Path) -> None:
    c = Catalog.open(promoted_by_log)
    gate = {v.gate: v for v in plan(c, c.resolve(FOE), "approved").verdicts}["conflict"]
    assert gate.verdict == "fail" and CUTTER in gate.reason  # (what the gate judges by)
    rel = _packet(promoted_by_log, "full")["relations"]
    assert [x["component_id"] for x in rel["conflicts"]] == [CUTTER]
    assert rel["conflicts"][0]["capability"] == "context.token_budget"
    assert rel["conflicts"][0]["live_by_log"] == (
        "promoted by transitions.ndjson line 3, its document says approved")
    assert "cannot_tell" not in rel


def test_a_light_packet_needs_full_context_for_the_logs_conflict(promoted_by_log: Path
                                                                 ) -> None:
    got = [r for r in _packet(promoted_by_log, "light")["needs_full_context"]
           if r["reason"] == "conflict"]
    assert got and CUTTER in got[0]["detail"]
    assert "transitions.ndjson line 3" in got[0]["detail"]


def test_a_packet_says_cannot_tell_where_the_gate_does(
        tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    """A catalog file that cannot be read may hold a conflicting component: gate G7 fails
    "cannot tell"; the packet says so too, never an empty list of conflicts alone."""
    c = fresh_catalog(tmp_path_factory, tmp_path)
    _foe(c)
    (c / "broken.json").write_text('{"review_status": "promoted", "capabilities": '
                                   '{"provides": ["context.token_budget"], ', "utf-8")
    cat = Catalog.open(c)
    gate = {v.gate: v for v in plan(cat, cat.resolve(FOE), "approved").verdicts}["conflict"]
    assert gate.verdict == "fail" and gate.reason.startswith("cannot tell"), gate.reason
    full = _packet(c, "full")
    assert full["relations"]["conflicts"] == []
    assert full["relations"]["cannot_tell"] == gate.reason
    light = _packet(c, "light")["needs_full_context"]
    assert {"reason": "cannot-tell", "detail": gate.reason} in light


def test_a_catalog_read_whole_packs_as_before(promoted_by_log: Path) -> None:
    """A document agreeing with the log: no ``live_by_log``, no ``cannot_tell``."""
    doc_path(promoted_by_log, CUTTER).write_bytes(
        (promoted_by_log / "promoted.bytes").read_bytes())  # (the activation completed)
    rel = _packet(promoted_by_log, "full")["relations"]
    assert [x["component_id"] for x in rel["conflicts"]] == [CUTTER]
    assert "live_by_log" not in rel["conflicts"][0] and "cannot_tell" not in rel


# ---- a file named twice is analysed once ---------------------------------------------------

MODULE = FIXTURES / "analysis" / "context-cutter.module.json"


@pytest.mark.parametrize("names", [
    ("a.json", "a.json"),
    ("a.json", "./a.json"),
    ("a.json", "{abs}/a.json"),
    ("a.json", "sub/../a.json"),
    ("a.json", "link.json"),
    ("a.json", "sublink/../a.json", "a.json"),
])
def test_a_file_named_twice_is_analysed_once(tmp_path: Path, names: tuple[str, ...]) -> None:
    (tmp_path / "a.json").write_bytes(MODULE.read_bytes())
    (tmp_path / "sub").mkdir()
    (tmp_path / "link.json").symlink_to("a.json")
    (tmp_path / "sublink").symlink_to("sub")
    args = [n.format(abs=tmp_path) for n in names]
    text = run_cli("analyze", *args, cwd=tmp_path)
    assert text.returncode == 0, text.stderr
    assert text.stdout.count("provides: ui.toggles") == 1, text.stdout
    got = run_cli("analyze", "-f", "json", *args, cwd=tmp_path)
    shown = json.loads(got.stdout)
    assert isinstance(shown, list) and len(shown) == 1  # (several names: an array, as ever)


def test_two_files_are_still_two_analyses(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_bytes(MODULE.read_bytes())
    (tmp_path / "b.json").write_bytes(MODULE.read_bytes())
    p = run_cli("analyze", "a.json", "b.json", "a.json", cwd=tmp_path)
    assert p.returncode == 0 and p.stdout.count("provides: ui.toggles") == 2, p.stdout


def test_a_missing_file_named_twice_is_said_once(tmp_path: Path) -> None:
    p = run_cli("analyze", "gone.json", "./gone.json", cwd=tmp_path)
    assert p.returncode == 2 and p.stderr.count("gone.json") == 1, p.stderr


@pytest.mark.parametrize("command", ["validate", "verify"])
@pytest.mark.parametrize("names", [("cat", "catlink/doc.json"), ("catlink", "cat"),
                                   ("cat/doc.json", "catlink/doc.json")])
def test_a_document_reached_through_a_linked_folder_is_read_once(
        tmp_path: Path, command: str, names: tuple[str, ...]) -> None:
    (tmp_path / "cat").mkdir()
    (tmp_path / "cat" / "doc.json").write_bytes(SEED.read_bytes())
    (tmp_path / "catlink").symlink_to("cat")
    p = run_cli(command, *names, cwd=tmp_path)
    assert p.returncode == 0 and "MC104" not in p.stdout, p.stdout + p.stderr
    assert "1 document, 1 file" in p.stdout, p.stdout


# ---- a link to a document of the catalog is that document ----------------------------------

def _linked(root: Path) -> Path:
    cat = root / "cat"
    (cat / "sub").mkdir(parents=True)
    (cat / "doc.json").write_bytes(SEED.read_bytes())
    (cat / "link.json").symlink_to("doc.json")  # (sorts after its target)
    (cat / "a-link.json").symlink_to("sub/../doc.json")  # (before it, and spelt otherwise)
    (cat / "sub" / "up.json").symlink_to("../doc.json")
    return cat


@pytest.mark.parametrize("command", ["validate", "verify"])
def test_a_link_to_a_document_of_the_folder_is_that_document(tmp_path: Path, command: str
                                                              ) -> None:
    _linked(tmp_path)
    p = run_cli(command, "cat", cwd=tmp_path)
    assert p.returncode == 0 and "MC104" not in p.stdout, p.stdout + p.stderr
    assert "1 document, 1 file" in p.stdout
    assert p.stdout.count("link(s) to a file already read") == 1  # (said once)
    assert "3 link(s) to a file already read, read once as that file: " \
        "cat/a-link.json -> cat/doc.json and 2 more" in p.stdout, p.stdout
    got = json.loads(run_cli(command, "-f", "json", "cat", cwd=tmp_path).stdout)
    assert got["links_read_once"] == ["cat/a-link.json -> cat/doc.json",
                                      "cat/link.json -> cat/doc.json",
                                      "cat/sub/up.json -> cat/doc.json"]
    assert [d["file"] for d in got["documents"]] == ["cat/doc.json"]


def test_two_links_to_one_file_are_read_once(tmp_path: Path) -> None:
    """Two links to one file the walk does not read itself (a catalog folder of its own):
    the first read, the second that file again."""
    cat = tmp_path / "cat"
    (cat / "facts").mkdir(parents=True)
    (cat / "facts" / "kept.json").write_bytes(SEED.read_bytes())
    (cat / "one.json").symlink_to("facts/kept.json")
    (cat / "two.json").symlink_to("facts/kept.json")
    p = run_cli("validate", "cat", cwd=tmp_path)
    assert p.returncode == 0 and "MC104" not in p.stdout, p.stdout
    assert "1 document, 1 file" in p.stdout
    assert "cat/two.json -> cat/one.json" in p.stdout


def test_the_catalog_reads_a_linked_document_once(tmp_path: Path) -> None:
    cat = _linked(tmp_path)
    c = Catalog.open(cat)
    assert [c.rel(e.path) for e in c.entries()] == ["doc.json"]
    rv = review_catalog(Catalog.open(cat))
    assert not [f for f in rv.result.findings if f.rule == "MC104"]


def test_a_link_leading_out_is_still_refused(tmp_path: Path) -> None:
    cat = _linked(tmp_path)
    (tmp_path / "elsewhere.json").write_bytes(SEED.read_bytes())
    (cat / "out.json").symlink_to(tmp_path / "elsewhere.json")
    p = run_cli("validate", "cat", cwd=tmp_path)
    assert p.returncode == 2 and "MC001" in p.stdout and "cat/out.json" in p.stdout, p.stdout
    assert "MC104" not in p.stdout


# ---- a catalog's own folders are judged below its root -------------------------------------

def _named(root: Path, name: str) -> Path:
    """A catalog whose own folder is called ``name``, holding a document, its log, and a
    ``facts/`` of its own with a record that holds a component_id."""
    cat = root / name
    (cat / "facts").mkdir(parents=True)
    (cat / "doc.json").write_bytes(SEED.read_bytes())
    (cat / "transitions.ndjson").write_text("", "utf-8")
    cid = json.loads(SEED.read_text("utf-8"))["component_id"]
    (cat / "facts" / "rec.json").write_text(json.dumps({"component_id": cid}), "utf-8")
    return cat


@pytest.mark.parametrize("name", ["facts", "notes", "approvals", "replays"])
@pytest.mark.parametrize("command", ["validate", "verify"])
def test_a_catalog_named_as_an_own_folder_is_read(tmp_path: Path, name: str,
                                                  command: str) -> None:
    _named(tmp_path, name)
    p = run_cli(command, "--skip-non-documents", f"{name}/doc.json", cwd=tmp_path)
    assert p.returncode == 0 and "1 document, 1 file" in p.stdout, p.stdout + p.stderr
    assert "skipped" not in p.stdout
    p = run_cli(command, "--skip-non-documents", f"{tmp_path}/{name}/doc.json",
                cwd=tmp_path / name / "facts")
    assert p.returncode == 0 and "1 document, 1 file" in p.stdout, p.stdout + p.stderr
    p = run_cli(command, ".", cwd=tmp_path)  # (a walk from above enters it, not its facts/)
    assert p.returncode == 0 and "1 document, 1 file" in p.stdout, p.stdout + p.stderr


@pytest.mark.parametrize("name", ["facts", "cat"])
def test_the_catalogs_own_folder_is_still_skipped(tmp_path: Path, name: str) -> None:
    """Its own ``facts/`` is passed over, named from above, from within it, or by an
    absolute path."""
    _named(tmp_path, name)
    for cwd, named in ((tmp_path, f"{name}/facts/rec.json"),
                       (tmp_path / name / "facts", "rec.json"),
                       (tmp_path / name, f"{tmp_path}/{name}/facts/rec.json")):
        p = run_cli("validate", "--skip-non-documents", named, cwd=cwd)
        assert p.returncode == 0 and "1 non-document file(s) skipped" in p.stdout, \
            (named, p.stdout + p.stderr)


def test_the_hooks_leave_the_folders_to_risutools() -> None:
    """The shipped hooks' ``exclude:`` dropped ``facts/doc.json`` by its spelling, before
    risutools saw it; it now names files by their own name only."""
    for hook in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text("utf-8"))[:2]:
        ex = re.compile(hook["exclude"])
        assert not ex.search("facts/doc.json") and not ex.search("notes/cat/doc.json")
        assert ex.search("transitions.ndjson") and ex.search("cat/.risutools.yaml")


@pytest.mark.parametrize("order", ["file-first", "folder-first"])
def test_a_named_file_and_its_folder_in_either_order_are_one_document(
        tmp_path: Path, order: str) -> None:
    """A file named on the command line is known by its device and inode (no ``realpath``
    a file: stop 65), and matched against a folder's files by its real path whichever comes
    first; through a link too."""
    cat = tmp_path / "cat"
    cat.mkdir()
    (cat / "doc.json").write_bytes(SEED.read_bytes())
    (tmp_path / "alias.json").symlink_to(cat / "doc.json")
    for named in ("cat/doc.json", "./cat/../cat/doc.json", "alias.json"):
        args = [named, "cat"] if order == "file-first" else ["cat", named]
        r = run_cli("validate", "-f", "json", *args, cwd=tmp_path)
        out = json.loads(r.stdout)
        assert r.returncode == 0, (named, r.stdout, r.stderr)
        assert out["summary"]["documents"] == 1, (named, out["summary"])


def test_named_files_twice_by_other_spellings_are_one_document(tmp_path: Path) -> None:
    (tmp_path / "doc.json").write_bytes(SEED.read_bytes())
    (tmp_path / "link.json").symlink_to(tmp_path / "doc.json")
    r = run_cli("validate", "-f", "json", "doc.json", "./doc.json", str(tmp_path / "doc.json"),
                "link.json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["summary"]["documents"] == 1
