"""The eleventh pass over the catalog (stop 65): what the gates that read other components
(G7, G12, G13) count as live.

The graph they read took each component's state from its document alone.  A document that
says less than the log's last line for it -- an ``activate`` killed after its log line and
before its document was written (the write-ahead order of the one write path), or a status
edited back by hand -- left a component the log says is active out of the active pool, and
a rival provider of an exclusive capability (or a component conflicting with it) passed
G13/G12 and was switched on beside it.  Now a component is live (active) when its document
or the log says so, and the verdict names the log line.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
import test_action
from harness import FIXTURES, switch
from test_action import _check, _results, needs_git
from test_catalog_support import (
    CUTTER,
    MOOD,
    approve_and_promote,
    doc_path,
    fresh_catalog,
    run,
    to_promoted,
)

from risutools.catalog.catalog import Catalog
from risutools.catalog.promote import plan
from risutools.catalog.review import review_catalog

runner = test_action.runner  # (the action's fixtures: a workspace, a base and its clone)
repo = test_action.repo
SOURCES = FIXTURES / "sources"
RIVAL = "module.risu.174678332.rival-cutter"
FOE = "module.risu.174678332.cutter-foe"


def _other(cat: Path, cid: str, name: str, **caps: list[str]) -> None:
    """A promoted, inactive copy of the cutter under another id (its capabilities
    replaced by ``caps`` where given)."""
    doc = json.loads(doc_path(cat, CUTTER).read_text("utf-8"))
    doc["component_id"] = cid
    doc["provenance"]["runtime_status"] = "inactive"
    doc["capabilities"].update(caps)
    (cat / name).write_text(json.dumps(doc, ensure_ascii=False), "utf-8")


@pytest.fixture
def cut_short(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> Path:
    """The cutter promoted, then activated by a process killed between the log's line and
    the document: transitions.ndjson says active, the document still says inactive."""
    c = fresh_catalog(tmp_path_factory, tmp_path)
    to_promoted(c)
    before = doc_path(c, CUTTER).read_bytes()
    assert switch(CUTTER, "active", "runtime", False, False, str(c)) == 0
    doc_path(c, CUTTER).write_bytes(before)  # (the line written, the document not)
    _other(c, RIVAL, "rival.json")
    _other(c, FOE, "foe.json", provides=["context.protected_roles"],
           conflicts=["context.token_budget"])
    return c


def _verdicts(cat: Path, cid: str) -> dict[str, tuple[str, str]]:
    c = Catalog.open(cat)
    p = plan(c, c.resolve(cid), "active", kind="runtime")
    return {v.gate: (v.verdict, v.reason) for v in p.verdicts}


def test_the_logs_active_provider_fails_exclusive(cut_short: Path) -> None:
    v = _verdicts(cut_short, RIVAL)
    assert v["exclusive"][0] == "fail", v["exclusive"]
    assert CUTTER in v["exclusive"][1]
    assert "active by transitions.ndjson line 4, its document says inactive" in \
        v["exclusive"][1]


def test_the_logs_active_component_fails_active_conflict(cut_short: Path) -> None:
    v = _verdicts(cut_short, FOE)
    assert v["active-conflict"][0] == "fail", v["active-conflict"]
    assert CUTTER in v["active-conflict"][1] and "transitions.ndjson line 4" in \
        v["active-conflict"][1]


def test_the_logs_promoted_component_fails_conflict(tmp_path_factory: pytest.TempPathFactory,
                                                   tmp_path: Path) -> None:
    """The cutter promoted by a process killed between the log's line and the document
    (the log says promoted, the document approved): a pending component conflicting with
    what the cutter provides fails the conflict gate of its approval, in promote's plan and
    on the review's board."""
    c = fresh_catalog(tmp_path_factory, tmp_path)
    approve_and_promote(c, CUTTER, "request_review", "pending_human_review")
    approve_and_promote(c, CUTTER, "approve", "approved")
    before = doc_path(c, CUTTER).read_bytes()
    approve_and_promote(c, CUTTER, "promote", "promoted")
    doc_path(c, CUTTER).write_bytes(before)  # (the line written, the document not)
    _other(c, FOE, "foe.json", provides=["context.protected_roles"],
           conflicts=["context.token_budget"])
    foe = json.loads((c / "foe.json").read_text("utf-8"))
    foe["provenance"]["review_status"] = "pending_human_review"
    (c / "foe.json").write_text(json.dumps(foe), "utf-8")
    cat = Catalog.open(c)
    got = {v.gate: (v.verdict, v.reason)
           for v in plan(cat, cat.resolve(FOE), "approved").verdicts}
    assert got["conflict"][0] == "fail", got["conflict"]
    assert "promoted by transitions.ndjson line 3, its document says approved" in \
        got["conflict"][1]
    rv = review_catalog(Catalog.open(c))
    row = next(r for r in rv.data["board"] if r["component_id"] == FOE)
    gates = {g["gate"]: g for g in row["gates"]}
    assert gates["conflict"]["verdict"] == "fail", gates["conflict"]
    assert "transitions.ndjson line 3" in gates["conflict"]["reason"]


def test_the_cut_short_activation_itself_still_completes(cut_short: Path) -> None:
    v = _verdicts(cut_short, CUTTER)
    assert all(verdict != "fail" for verdict, _ in v.values()), v
    assert switch(CUTTER, "active", "runtime", False, False, str(cut_short)) == 0
    doc = json.loads(doc_path(cut_short, CUTTER).read_text("utf-8"))
    assert doc["provenance"]["runtime_status"] == "active"


def test_a_document_agreeing_with_the_log_reads_as_before(cut_short: Path) -> None:
    assert switch(CUTTER, "active", "runtime", False, False, str(cut_short)) == 0
    v = _verdicts(cut_short, RIVAL)
    assert v["exclusive"][0] == "fail" and "transitions.ndjson" not in v["exclusive"][1]
    assert switch(CUTTER, "inactive", "runtime", False, False, str(cut_short)) == 0
    v = _verdicts(cut_short, RIVAL)
    assert v["exclusive"][0] == "pass" and v["active-conflict"][0] == "pass"


# --------------------------------------------------------------------------- the action's pins
# With ``base-ref``, the action looked the log (and the configuration) up on the base branch
# under ``path`` as given: an absolute path (``${{ github.workspace }}/cat``) is no name in
# a git tree, so the base branch "had no log" -- an empty base log that every rewritten log
# extends -- and "no configuration" -- the defaults: the pins were silently dropped.


@needs_git
@pytest.mark.parametrize("spelling", ["absolute", "dotted"])
def test_the_action_pins_the_log_whatever_the_paths_spelling(runner: Path, repo: Path,
                                                             spelling: str) -> None:
    shutil.copytree(runner / "snap", repo / "cat", dirs_exist_ok=True)  # (a rollback)
    path = str(repo / "cat") if spelling == "absolute" else "./cat/../cat/."
    code, out, err = _check(runner, repo, path=path, **{"base-ref": "main"})
    assert code == 0 and out["exit-code"] == "1", err
    assert "no transition log" not in err and "no configuration" not in err, err
    assert [r for r in _results(repo) if r["ruleId"] == "MC306"]


@needs_git
@pytest.mark.parametrize("path", ["/", "..", "cat/../..", "{elsewhere}"])
def test_a_path_outside_the_working_folder_cannot_be_pinned(runner: Path, repo: Path,
                                                            path: str) -> None:
    path = path.format(elsewhere=runner / "snap")
    code, out, err = _check(runner, repo, path=path, **{"base-ref": "main"})
    assert code == 2 and out == {}, err
    assert "is not inside the working folder" in err, err


@needs_git
@pytest.mark.parametrize("what", ["subfolder", "document"])
def test_the_action_pins_the_log_of_the_catalog_a_path_is_in(runner: Path, repo: Path,
                                                            what: str) -> None:
    """``path`` naming a subfolder of the catalog, or one of its documents: the catalog's
    own log is pinned (risutools checks that log), never "no log on the base branch"."""
    shutil.copytree(runner / "snap", repo / "cat", dirs_exist_ok=True)  # (a rollback)
    doc = "module.risu.174678332.context-cutter.json"
    if what == "subfolder":
        (repo / "cat" / "docs").mkdir()
        (repo / "cat" / doc).rename(repo / "cat" / "docs" / doc)
        path = "cat/docs"
    else:
        path = f"cat/{doc}"
    code, out, err = _check(runner, repo, path=path, **{"base-ref": "main"})
    assert "no transition log" not in err, err
    assert code == 0 and out["exit-code"] == "1", err
    assert [r for r in _results(repo) if r["ruleId"] == "MC306"]


# --------------------------------------------------------------------------- own folders
# The catalog's own folders a command writes files into (facts/, approvals/, notes/,
# replays/, .risutools-cache/) were refused only when they led out of the catalog: a link
# to a folder inside was written through.  ``facts -> .`` (a pull request can commit one)
# made the next ingest write each component's facts summary over its document; an
# ``approvals -> .`` record, a ``replays -> .`` report or a ``notes -> .`` scaffold landed
# among the documents, read as documents.  Now such a folder must be a folder of its own:
# a link, wherever it leads, is refused (``not-a-directory``, one line, exit 2), nothing
# written.


def _files(cat: Path) -> dict[str, bytes]:
    return {p.relative_to(cat).as_posix(): p.read_bytes()
            for p in sorted(cat.rglob("*")) if p.is_file() and not p.is_symlink()}


def _link_home(cat: Path, name: str, to: str) -> None:
    folder = cat / name
    if folder.is_dir() and not folder.is_symlink():
        shutil.rmtree(folder)
    folder.symlink_to(to, target_is_directory=True)


def _one_line(stderr: str) -> str:
    lines = [x for x in stderr.splitlines() if x.strip()]
    assert len(lines) == 1, stderr
    return lines[0]


@pytest.mark.parametrize(("name", "to"), [("facts", "."), ("facts", "sub"),
                                          (".risutools-cache", "."),
                                          (".risutools-cache", "facts")])
def test_ingest_never_writes_through_a_link_to_a_folder_inside(
        tmp_path_factory: pytest.TempPathFactory, tmp_path: Path, name: str, to: str) -> None:
    c = fresh_catalog(tmp_path_factory, tmp_path)
    (c / "sub").mkdir()
    _link_home(c, name, to)
    before = _files(c)
    r = run("ingest", str(SOURCES), "-o", str(c), "-q", "-j", "1", cwd=tmp_path)
    assert r.returncode == 2, (r.stdout, r.stderr)
    line = _one_line(r.stderr)
    assert "not-a-directory" in line and f"{name}/" in line and "symbolic link" in line
    assert _files(c) == before  # (no document, no facts, no cache written anywhere)


@pytest.mark.parametrize("to", [".", "notes", "replays"])
def test_approve_never_writes_through_a_link_to_a_folder_inside(
        tmp_path_factory: pytest.TempPathFactory, tmp_path: Path, to: str) -> None:
    c = fresh_catalog(tmp_path_factory, tmp_path)
    _link_home(c, "approvals", to)
    before = _files(c)
    r = run("approve", CUTTER, "--action", "request_review", "--reviewer", "kim",
            "--catalog", str(c), cwd=tmp_path)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "not-a-directory" in _one_line(r.stderr) and "approvals/" in r.stderr
    assert _files(c) == before


def test_notes_init_never_writes_through_a_link_to_a_folder_inside(
        tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    c = fresh_catalog(tmp_path_factory, tmp_path)
    (c / "elsewhere-in").mkdir()
    _link_home(c, "notes", "elsewhere-in")
    before = _files(c)
    r = run("notes", "init", MOOD, "--catalog", str(c), cwd=tmp_path)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "not-a-directory" in _one_line(r.stderr) and "notes/" in r.stderr
    assert _files(c) == before


def test_replay_update_never_writes_through_a_link_to_a_folder_inside(
        tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    c = fresh_catalog(tmp_path_factory, tmp_path)
    _link_home(c, "replays", ".")
    before = _files(c)
    r = run("replay", "run", str(doc_path(c, CUTTER)), "--fixture",
            str(FIXTURES / "replay" / "anchor-edit.yaml"), "--update", cwd=tmp_path)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "not-a-directory" in _one_line(r.stderr) and "replays/" in r.stderr
    assert _files(c) == before


def test_real_folders_are_written_as_before(tmp_path_factory: pytest.TempPathFactory,
                                            tmp_path: Path) -> None:
    c = fresh_catalog(tmp_path_factory, tmp_path)
    r = run("ingest", str(SOURCES), "-o", str(c), "-q", "-j", "1", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    r = run("approve", CUTTER, "--action", "request_review", "--reviewer", "kim",
            "--catalog", str(c), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert list((c / "approvals").glob("*.yaml"))


@pytest.mark.parametrize("queue", [False, True])
def test_packet_never_writes_through_a_link_to_a_folder_inside(
        tmp_path_factory: pytest.TempPathFactory, tmp_path: Path, queue: bool) -> None:
    """``packets -> .`` committed in the catalog, ``packet`` run from the catalog's folder
    with its default ``-o packets``: the packet's JSON and Markdown went among the
    documents (the JSON then read as a document that cannot be one)."""
    c = fresh_catalog(tmp_path_factory, tmp_path)
    _link_home(c, "packets", ".")
    before = _files(c)
    how = ["--queue", "packets", "--status", "candidate"] if queue else [CUTTER]
    r = run("packet", *how, "--lane", "light", cwd=c)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "not-a-directory" in _one_line(r.stderr) and "packets" in r.stderr
    assert _files(c) == before


# --------------------------------------------------------------------------- the board's path
# The review board's "path to approved" said a part was done on a weaker test than the gate
# that will judge it: the narrative "written" wherever the configuration turned MC600 off
# (the contract gate checks it from approved on whatever the settings say), and the replay
# "done" on the document's replay_status alone (G6 also wants a referenced, verified report
# whose own verdict is passed).


def _path(cat: Path, cid: str) -> dict[str, dict[str, str]]:
    rv = review_catalog(Catalog.open(cat))
    row = next(r for r in rv.data["board"] if r["component_id"] == cid)
    return {p["part"]: p for p in row["path"]}


def test_the_narrative_is_checked_where_the_configuration_turns_mc600_off(
        tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    c = fresh_catalog(tmp_path_factory, tmp_path)
    assert _path(c, MOOD)["narrative"]["state"] == "missing"
    with (c / ".risutools.yaml").open("a", encoding="utf-8") as f:
        f.write('rules:\n  MC600: "off"\n')
    part = _path(c, MOOD)["narrative"]
    assert part["state"] == "missing" and "MC600" in part["detail"], part
    assert _path(c, CUTTER)["narrative"]["state"] == "done"  # (its notes write it)


def test_a_passed_replay_status_without_its_report_is_not_done(
        tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    c = fresh_catalog(tmp_path_factory, tmp_path)
    assert _path(c, CUTTER)["replay"] == {"part": "replay", "state": "done",
                                          "detail": "replay_status passed"}
    doc = json.loads(doc_path(c, CUTTER).read_text("utf-8"))
    refs = doc["provenance"]["source_refs"]
    doc["provenance"]["source_refs"] = [r for r in refs
                                        if not r["source_id"].startswith("replay:")]
    assert len(doc["provenance"]["source_refs"]) == len(refs) - 1
    doc_path(c, CUTTER).write_text(json.dumps(doc), "utf-8")
    part = _path(c, CUTTER)["replay"]
    assert part["state"] == "missing", part
    assert "no replay report is referenced" in part["detail"], part


@pytest.mark.parametrize("kind", ["file", "fifo"])
def test_ingest_says_a_facts_folder_that_is_no_folder_before_writing(tmp_path: Path,
                                                                     kind: str) -> None:
    """``facts`` a file or a FIFO: ingest wrote every document, then stopped at the facts
    (exit 2, a catalog half written); now it stops first, nothing written."""
    c = tmp_path / "cat"
    c.mkdir()
    if kind == "file":
        (c / "facts").write_text("x\n")
    else:
        os.mkfifo(c / "facts")
    r = run("ingest", str(SOURCES), "-o", str(c), "-q", "-j", "1", "--no-cache",
            cwd=tmp_path)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "not-a-directory" in _one_line(r.stderr) and "facts" in r.stderr
    assert not list(c.glob("*.json"))
