"""Hostile catalogs (issue 21): nothing written outside the catalog, nothing read from a
device or through a link leaving it, no log taken for an empty history, ids that never
become paths, and small inputs that are one line and exit 2.

Each test attacks one class of failure in several forms (a file outside, a linked folder on
the path, a linked document, a dangling link; a FIFO, ``/dev/zero``, ``/dev/null``, a file
past its bound).  Commands run in real child processes with a time limit and a memory cap
(:mod:`hostile_catalog`): before the fixes some of them hung or read until memory ran out.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from harness import FIXTURES, approve
from hostile_catalog import (
    SECRET,
    catalog_copy,
    cli,
    in_child,
    one_line,
    snapshot,
    sparse_file,
)
from test_catalog_support import CUTTER, doc_path, log_lines

TO = "pending_human_review"


@pytest.fixture
def cat(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> Path:
    return catalog_copy(tmp_path_factory, tmp_path)


@pytest.fixture
def elsewhere(tmp_path: Path) -> Path:
    d = tmp_path / "elsewhere"
    d.mkdir()
    return d


def _records(cat: Path) -> list[str]:
    d = cat / "approvals"
    return sorted(p.name for p in d.iterdir()) if d.is_dir() and not d.is_symlink() else []


# --------------------------------------------------------------------------- writes outside


def _place_document(form: str, cat: Path, elsewhere: Path) -> tuple[str, list[str], Path]:
    """The component argument and options that name the cutter's document through
    ``form``, and the file outside the catalog that must not change."""
    doc = doc_path(cat, CUTTER)
    if form == "file-outside":
        shutil.copy(doc, elsewhere / "doc.json")
        return str(elsewhere / "doc.json"), ["--catalog", str(cat)], elsewhere / "doc.json"
    if form == "linked-folder-on-the-path":
        shutil.copy(doc, elsewhere / "doc.json")
        (cat / "linked").symlink_to(elsewhere, target_is_directory=True)
        return str(cat / "linked" / "doc.json"), ["--catalog", str(cat)], elsewhere / "doc.json"
    shutil.move(doc, elsewhere / doc.name)  # the catalog's document is a link to a file outside
    doc.symlink_to(elsewhere / doc.name)
    if form == "linked-document-by-id":
        return CUTTER, ["--catalog", str(cat)], elsewhere / doc.name
    if form == "linked-document-by-path":
        return str(doc), ["--catalog", str(cat)], elsewhere / doc.name
    assert form == "linked-document-found-from-its-folder"
    return doc.name, [], elsewhere / doc.name


FORMS = ("file-outside", "linked-folder-on-the-path", "linked-document-by-id",
         "linked-document-by-path", "linked-document-found-from-its-folder")


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("command", ["promote", "activate", "approve"])
def test_a_document_outside_the_catalog_is_refused(cat: Path, elsewhere: Path, form: str,
                                                   command: str) -> None:
    approve(CUTTER, "request_review", "kim", "", None, str(cat))
    records = _records(cat)
    arg, opts, outside = _place_document(form, cat, elsewhere)
    before = snapshot(elsewhere)
    extra = {"promote": ["--to", TO], "activate": [],
             "approve": ["--action", "request_review", "--reviewer", "kim"]}[command]
    r = cli(command, arg, *opts, *extra, cwd=cat)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "outside-catalog" in one_line(r.stderr)
    assert snapshot(elsewhere) == before  # not rewritten, no lock file beside it
    assert not (elsewhere / ".risutools.lock").exists()
    assert outside.read_bytes() == before[outside.relative_to(elsewhere).as_posix()]
    assert log_lines(cat) == [] and _records(cat) == records


@pytest.mark.parametrize("form", ["link-to-a-folder", "dangling-link", "link-to-a-link"])
def test_an_approvals_folder_leading_outside_is_never_written(cat: Path, elsewhere: Path,
                                                              form: str) -> None:
    foreign = elsewhere / "foreign"
    if form != "dangling-link":
        foreign.mkdir()
    if form == "link-to-a-link":
        (cat / "inner").symlink_to(foreign, target_is_directory=True)
        (cat / "approvals").symlink_to(cat / "inner", target_is_directory=True)
    else:
        (cat / "approvals").symlink_to(foreign, target_is_directory=True)
    r = cli("approve", CUTTER, "--action", "request_review", "--reviewer", "kim", cwd=cat)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "outside-catalog" in one_line(r.stderr)
    assert not foreign.exists() or list(foreign.iterdir()) == []
    # promote stops the same way; review says it cannot read the folder
    r = cli("promote", CUTTER, "--to", TO, cwd=cat)
    assert r.returncode == 2 and "outside-catalog" in one_line(r.stderr)
    r = cli("review", str(cat), "-q", "-f", "json", cwd=cat)
    assert r.returncode == 1
    (row,) = json.loads(r.stdout)["approvals"]
    assert row["state"] == "unreadable" and "outside" in row["message"]


@pytest.mark.parametrize("form", ["link-to-a-file", "dangling-link"])
@pytest.mark.parametrize("command", ["approve", "promote"])
def test_a_lock_file_link_is_never_followed(cat: Path, elsewhere: Path, form: str,
                                            command: str) -> None:
    if command == "promote":
        approve(CUTTER, "request_review", "kim", "", None, str(cat))
    target = elsewhere / "target"
    if form == "link-to-a-file":
        target.write_bytes(b"keep me\n")
    (cat / ".risutools.lock").unlink(missing_ok=True)  # (a lock file from the ingest)
    (cat / ".risutools.lock").symlink_to(target)
    args = (["--to", TO] if command == "promote"
            else ["--action", "request_review", "--reviewer", "kim"])
    before = snapshot(elsewhere)
    r = cli(command, CUTTER, *args, cwd=cat)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "symbolic link" in one_line(r.stderr)
    assert snapshot(elsewhere) == before  # not truncated, not created
    assert log_lines(cat) == []


def test_a_log_link_leading_outside_is_neither_read_nor_written(cat: Path,
                                                                elsewhere: Path) -> None:
    approve(CUTTER, "request_review", "kim", "", None, str(cat))
    (elsewhere / "log").write_bytes(b"")
    (cat / "transitions.ndjson").symlink_to(elsewhere / "log")
    r = cli("promote", CUTTER, "--to", TO, cwd=cat)
    assert r.returncode == 2 and "outside-catalog" in one_line(r.stderr)
    assert (elsewhere / "log").read_bytes() == b""
    r = cli("review", str(cat), "-q", "-f", "json", cwd=cat)
    assert r.returncode == 1
    assert any("outside" in c["message"] for c in json.loads(r.stdout)["chain"])


# --------------------------------------------------------------------------- ids as paths

EVIL_IDS = {
    "dot-dot": "../../elsewhere/secret",
    "absolute": "<ELSEWHERE>/secret",
    "dot-dot-deeper": "x/../../../elsewhere/secret",
}


def _evil_document(cat: Path, elsewhere: Path, form: str) -> str:
    cid = EVIL_IDS[form].replace("<ELSEWHERE>", str(elsewhere))
    (cat / "notes" / "x").mkdir(exist_ok=True)  # so that notes/x/.. resolves
    (elsewhere / "secret.yaml").write_text(f"secret: {SECRET}\n")
    doc = json.loads(doc_path(cat, CUTTER).read_text("utf-8"))
    doc["component_id"] = cid
    (cat / "evil.json").write_text(json.dumps(doc, ensure_ascii=False, indent=2), "utf-8")
    return cid


@pytest.mark.parametrize("form", sorted(EVIL_IDS))
def test_a_component_id_never_becomes_a_path(cat: Path, elsewhere: Path, tmp_path: Path,
                                             form: str) -> None:
    cid = _evil_document(cat, elsewhere, form)
    before = snapshot(elsewhere)
    out = tmp_path / "packets"
    r = cli("packet", cid, "--lane", "full", "-o", str(out), "--catalog", str(cat), cwd=cat)
    assert r.returncode == 0, r.stderr
    files = list(out.rglob("*"))
    assert files and all(p.parent == out for p in files)  # no separator in a name
    assert all(SECRET not in p.read_text("utf-8") for p in files)
    notes = json.loads(next(p for p in files if p.suffix == ".json").read_text())
    assert notes["relations"]["notes"] == {
        "unreadable": "the component_id is not a plain name; no notes file is read"}
    for args in (["review", str(cat), "-q", "-f", "json"], ["verify", str(cat / "evil.json"),
                                                            "-f", "json"]):
        r = cli(*args, cwd=cat)
        assert SECRET not in r.stdout and "secret.yaml" not in r.stdout + r.stderr
    r = cli("approve", str(cat / "evil.json"), "--action", "request_review", "--reviewer",
            "kim", cwd=cat)
    assert r.returncode == 0, r.stderr
    (record,) = (cat / "approvals").iterdir()
    assert record.parent == cat / "approvals" and not record.name.startswith(".")
    # (the schema refuses such an id before a replay runs; the report's name never uses it)
    r = cli("replay", "run", str(cat / "evil.json"), "-x",
            str(FIXTURES / "replay" / "anchor-edit.yaml"), "--update", cwd=cat)
    assert r.returncode == 2, r.stderr
    assert snapshot(elsewhere) == before


def test_plain_ids() -> None:
    from risutools.pathnames import id_file_stem, plain_id

    assert plain_id(CUTTER) and plain_id("x") and plain_id("A_b-1.c")
    for bad in ("", ".", "..", "a/b", "a\\b", "../x", ".hidden", "a..b", "a\nb", "a b",
                "x" * 151, None, 3):
        assert not plain_id(bad), bad
        if isinstance(bad, str):
            stem = id_file_stem(bad)
            assert "/" not in stem and not stem.startswith(".") and ".." not in stem
            assert stem and len(stem) <= 150
    assert id_file_stem(CUTTER) == CUTTER


# --------------------------------------------------------------------------- devices, bounds


def _hostile_file(path: Path, kind: str, elsewhere: Path) -> None:
    if path.exists() or path.is_symlink():
        path.unlink()
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "dev-null":
        path.symlink_to("/dev/null")
    elif kind == "too-large":
        from risutools.contract.transitions import MAX_LOG_BYTES

        sparse_file(path, MAX_LOG_BYTES + 1)
    elif kind == "dangling-link":
        path.symlink_to(elsewhere / "nothing")
    else:
        assert kind == "link-outside"
        (elsewhere / "file").write_text("component_id: x\n")
        path.symlink_to(elsewhere / "file")


LOG_KINDS = ("fifo", "dev-zero", "dev-null", "too-large")


@pytest.mark.parametrize("kind", LOG_KINDS)
def test_a_log_that_cannot_be_read_is_an_error_not_an_empty_history(
        cat: Path, elsewhere: Path, kind: str) -> None:
    approve(CUTTER, "request_review", "kim", "", None, str(cat))
    log = cat / "transitions.ndjson"
    _hostile_file(log, kind, elsewhere)
    size = log.stat().st_size if kind == "too-large" else None
    doc = doc_path(cat, CUTTER).read_bytes()
    for extra in ([], ["--dry-run"], ["--json"]):
        r = cli("promote", CUTTER, "--to", TO, *extra, cwd=cat)
        assert r.returncode == 2, (kind, extra, r.stdout, r.stderr)
        assert "transitions.ndjson" in one_line(r.stderr)
    r = cli("activate", CUTTER, cwd=cat)
    assert r.returncode == 2 and "transitions.ndjson" in one_line(r.stderr)
    assert doc_path(cat, CUTTER).read_bytes() == doc  # nothing moved
    if size is not None:
        assert log.stat().st_size == size  # nothing appended
    r = cli("review", str(cat), "-q", "-f", "json", cwd=cat)
    assert r.returncode == 1, r.stdout  # an error, not "no log"
    chain = json.loads(r.stdout)["chain"]
    assert any(c["rule"] == "RV201" and "cannot read transitions.ndjson" in c["message"]
               for c in chain), chain
    r = cli("review", str(cat), "-q", cwd=cat)
    assert r.returncode == 1 and "cannot read transitions.ndjson" in r.stdout


APPROVAL_KINDS = ("fifo", "dev-zero", "dev-null", "dangling-link", "link-outside")


@pytest.mark.parametrize("kind", APPROVAL_KINDS)
def test_an_approval_file_that_cannot_be_read_is_reported(cat: Path, elsewhere: Path,
                                                          kind: str) -> None:
    approve(CUTTER, "request_review", "kim", "", None, str(cat))
    (good,) = (cat / "approvals").iterdir()
    name = good.name.replace(".yaml", "-2.yaml")  # named for the cutter: promote opens it
    _hostile_file(cat / "approvals" / name, kind, elsewhere)
    r = cli("review", str(cat), "-q", "-f", "json", cwd=cat)
    assert r.returncode == 1
    rows = {a["file"]: a for a in json.loads(r.stdout)["approvals"]}
    row = rows[f"approvals/{name}"]
    assert row["state"] == "unreadable" and row["rule"] == "RV301", row
    assert "cannot read" in row["message"]
    r = cli("promote", CUTTER, "--to", TO, cwd=cat)  # the good record still counts
    assert r.returncode == 0, (r.stdout, r.stderr)


# --------------------------------------------------------------------------- follow-up reads


def _swap(cat: Path, elsewhere: Path, what: str, kind: str) -> None:
    from risutools.contract.transitions import MAX_LOG_BYTES

    if what == "document":
        target = doc_path(cat, CUTTER)
    elif what == "approval":
        (target,) = (cat / "approvals").iterdir()
    else:
        target = cat / "transitions.ndjson"
    if kind == "link-outside":
        shutil.copy(target, elsewhere / "copy")
        target.unlink()
        target.symlink_to(elsewhere / "copy")
    elif kind == "too-large":
        sparse_file(target, MAX_LOG_BYTES + 1)
    else:
        _hostile_file(target, kind, elsewhere)


def _plan_swap_execute(cat: str, elsewhere: str, what: str, kind: str) -> Any:
    from risutools.catalog.catalog import Catalog
    from risutools.catalog.promote import execute, plan

    c = Catalog.open(cat)
    p = plan(c, c.resolve(CUTTER), TO)
    assert p.ok, [v.reason for v in p.verdicts if v.failed]
    _swap(Path(cat), Path(elsewhere), what, kind)
    return execute(c, p)


SWAPS = [("document", "fifo"), ("document", "dev-zero"), ("document", "link-outside"),
         ("approval", "fifo"), ("approval", "dev-zero"), ("log", "fifo"), ("log", "dev-zero"),
         ("log", "too-large"), ("log", "link-outside")]


@pytest.mark.parametrize(("what", "kind"), SWAPS)
def test_execute_reads_again_only_regular_bounded_files_inside(
        cat: Path, elsewhere: Path, what: str, kind: str) -> None:
    approve(CUTTER, "request_review", "kim", "", None, str(cat))
    if what == "log":
        (cat / "transitions.ndjson").write_bytes(b"")
    got = in_child(_plan_swap_execute, str(cat), str(elsewhere), what, kind)
    assert isinstance(got, tuple) and got[0] == "raised", got
    assert got[1] in ("FileRefused", "WriteConflict", "RisuError"), got
    if what == "log" and kind != "too-large":
        assert not (cat / "transitions.ndjson").is_file() or \
            (cat / "transitions.ndjson").is_symlink()


def _cas_write(target: str, base: str) -> Any:
    from risutools.fsio import atomic_write

    atomic_write(target, b"new\n", expect_sha256=base)
    return "wrote"


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "link-to-the-same-bytes"])
def test_the_compare_and_swap_never_reads_through_a_link_or_a_device(tmp_path: Path,
                                                                     kind: str) -> None:
    import hashlib

    old = b"old\n"
    target = tmp_path / "doc.json"
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "dev-zero":
        target.symlink_to("/dev/zero")
    else:
        (tmp_path / "real.json").write_bytes(old)
        target.symlink_to(tmp_path / "real.json")
    got = in_child(_cas_write, str(target), hashlib.sha256(old).hexdigest())
    assert got[0] == "raised" and got[2] == "not-a-file", got
    if kind == "link-to-the-same-bytes":
        assert (tmp_path / "real.json").read_bytes() == old and target.is_symlink()


def _packet_names(cat: str, out: str) -> tuple[str, str]:
    from risutools.catalog.catalog import Catalog
    from risutools.catalog.packet import build_packet, packet_files

    c = Catalog.open(cat)
    j, m = packet_files(build_packet(c, c.resolve(CUTTER), "light"), Path(out))
    return str(j), str(m)


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "link-outside"])
@pytest.mark.parametrize("which", [0, 1])
def test_a_packet_path_that_is_not_a_packet_file_is_refused(cat: Path, elsewhere: Path,
                                                            tmp_path: Path, kind: str,
                                                            which: int) -> None:
    out = tmp_path / "packets"
    out.mkdir()
    names = in_child(_packet_names, str(cat), str(out))
    _hostile_file(Path(names[which]), kind, elsewhere)
    before = snapshot(elsewhere)
    r = cli("packet", CUTTER, "--lane", "light", "-o", str(out), cwd=cat)
    assert r.returncode == 2 and "not-a-file" in one_line(r.stderr), (r.stdout, r.stderr)
    assert snapshot(elsewhere) == before


# --------------------------------------------------------------------------- small ones


@pytest.mark.parametrize("epoch", [
    "253402300800", "99999999999999999999999",
    "9" * 5000,  # (int() refused it past 4,300 digits: an internal error; stop 65)
    "abc", "12x", "-5", "1e9", "１７",  # (malformed: was ignored, the clock's time recorded)
])
def test_source_date_epoch_past_year_9999_is_one_line(cat: Path, epoch: str) -> None:
    r = cli("approve", CUTTER, "--action", "request_review", "--reviewer", "kim", cwd=cat,
            env={"SOURCE_DATE_EPOCH": epoch})
    assert r.returncode == 2 and "SOURCE_DATE_EPOCH" in one_line(r.stderr), r.stderr
    assert _records(cat) == []


# --------------------------------------------------------------------------- cost


def _approval_files_opened(cat: str) -> list[str]:
    import sys

    from risutools.catalog.catalog import Catalog
    from risutools.catalog.promote import plan

    opened: set[str] = set()

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event == "open" and isinstance(args[0], (str, bytes, os.PathLike)):
            p = os.fsdecode(args[0])
            if f"{os.sep}approvals{os.sep}" in p:
                opened.add(os.path.basename(p))

    sys.addaudithook(hook)  # (in a forked child: the hook goes with it)
    c = Catalog.open(cat)
    p = plan(c, c.resolve(CUTTER), TO)
    assert p.ok, [v.reason for v in p.verdicts if v.failed]
    return sorted(opened)


def test_promote_opens_only_its_own_approval_records(cat: Path) -> None:
    """A promotion's cost does not grow with the catalog's other records: with 300 records
    of other components (and of another action of this one), it opens only the records
    whose name is one of its component and step (an index by file name)."""
    approve(CUTTER, "request_review", "kim", "", None, str(cat))
    (mine,) = (cat / "approvals").iterdir()
    text = mine.read_text("utf-8")
    for n in range(300):
        other = f"module.risu.{n:09d}.other"
        (cat / "approvals" / f"{other}--request_review--{n:012x}.yaml").write_text(
            text.replace(CUTTER, other), "utf-8")
    (cat / "approvals" / f"{CUTTER}--approve--{0:012x}.yaml").write_text(text, "utf-8")
    got = in_child(_approval_files_opened, str(cat))
    assert got == [mine.name], got


# --------------------------------------------------------------------------- ingest ids

HOSTILE_NAMES = ["../../etc/x", "a/b\\c", "\x1b]0;t\x07\x1b[2J", "x\n::error::y",
                 "\u202eevil", ".hidden", "..", "<script>alert(1)</script>", "#", ""]


def test_ingest_makes_plain_ids_whatever_the_module_is_called(tmp_path: Path) -> None:
    """Ingest never writes an id that is not a plain name (it would become a path, or
    reach a report): module names with separators, ``..``, ESC, line breaks, bidi
    overrides, markup or nothing at all give plain ids, one file each, in the catalog."""
    from risutools.catalog.ingest import ingest
    from risutools.formats.risum import write_risum
    from risutools.pathnames import plain_id

    src = tmp_path / "src"
    src.mkdir()
    for i, name in enumerate(HOSTILE_NAMES):
        mod = {"name": name, "description": name, "id": f"00000000-0000-4000-8000-{i:012d}",
               "lorebook": [{"key": "k", "content": name, "comment": name, "mode": "normal"}],
               "assets": []}
        (src / f"{300 + i}_{i}.risum").write_bytes(write_risum(mod, []))
    out = tmp_path / "cat"
    assert ingest(src, out, lang="en", jobs=1, use_cache=False).ok
    docs = sorted(out.glob("*.json"))
    assert len(docs) == len(HOSTILE_NAMES)
    for p in docs:
        cid = json.loads(p.read_text("utf-8"))["component_id"]
        assert plain_id(cid) and p.name == f"{cid}.json", cid
    # facts/: each document's facts summary (issue 19), named like the document
    assert sorted(x.name for x in out.iterdir() if x.is_dir()) in (
        ["facts"], [".risutools-cache", "facts"])
    assert sorted(p.name for p in (out / "facts").iterdir()) == sorted(p.name for p in docs)


# --------------------------------------------------------------------------- records


@pytest.mark.parametrize("option", ["--reviewer", "--note"])
@pytest.mark.parametrize("value", ["kim\n  pass  digests      all verified", "kim\x1b[2J",
                                   "kim\r", "kim\x1b]0;title\x07", "kim\u202e", "kim\x00",
                                   "kim\u2028x", "kim\x9b31m"])
def test_approve_refuses_control_characters(cat: Path, option: str, value: str) -> None:
    """A record is one line of plain text a person later reads (``promote`` shows the
    reviewer): a line break, ESC, OSC, NUL, a bidi override or a C1 control is refused."""
    from harness import run_cli

    args = {"--reviewer": value, "--note": "read it"}
    if option == "--note":
        args = {"--reviewer": "kim", "--note": value}
    r = run_cli("approve", CUTTER, "--action", "request_review",
                *[x for kv in args.items() for x in kv], cwd=cat)
    assert r.returncode == 2, (r.stdout, r.stderr)
    line = one_line(r.stderr)
    assert f"usage: Invalid value for {option}: holds the control character" in line, line
    assert "\x1b" not in line
    assert _records(cat) == []


def test_records_read_a_folder_at_a_time_are_read_as_one_at_a_time(
        cat: Path, elsewhere: Path) -> None:
    """The review reads every record with each folder's place resolved once: what it reads
    and how it names each record (nested folders, a link to a record inside, each hostile
    kind) is what reading that record alone gives."""
    from risutools.catalog.approvals import load_approval, load_approvals
    from risutools.catalog.catalog import Catalog

    approve(CUTTER, "request_review", "kim", "", None, str(cat))
    (good,) = (cat / "approvals").iterdir()
    nested = cat / "approvals" / "2026" / "12"
    nested.mkdir(parents=True)
    shutil.copy(good, nested / good.name)
    (nested / "inside-link.yaml").symlink_to(good)
    for n, kind in enumerate((*APPROVAL_KINDS, "too-large")):
        _hostile_file((nested if n % 2 else cat / "approvals") / f"{kind}.yaml", kind,
                      elsewhere)
    c = Catalog.open(cat)
    together = load_approvals(c)
    alone = [load_approval(c, a.path) for a in together]
    assert len(together) == 2 + 1 + len(APPROVAL_KINDS) + 1
    seen = [(a.file, a.sha256, a.record, a.problem) for a in together]
    assert seen == [(a.file, a.sha256, a.record, a.problem) for a in alone]
    assert {a.file for a in together if a.record is not None} == {
        f"approvals/{good.name}", f"approvals/2026/12/{good.name}",
        "approvals/2026/12/inside-link.yaml"}
    assert all(a.problem.startswith("cannot read") for a in together
               if a.record is None), seen


# --------------------------------------------------------------------------- ingest's folders

SOURCES = FIXTURES / "sources"
MOOD_NOTES = "module.risu.186123400.mood-tracker.yaml"


def _linked(cat: Path, name: str, target: Path, form: str) -> None:
    """``cat/name`` a link to ``target`` (a folder), one way or another."""
    if form == "link-to-a-folder":
        target.mkdir(exist_ok=True)
        (cat / name).symlink_to(target, target_is_directory=True)
    elif form == "link-to-a-link":
        target.mkdir(exist_ok=True)
        (cat / ".inner").symlink_to(target, target_is_directory=True)
        (cat / name).symlink_to(cat / ".inner", target_is_directory=True)
    else:  # a dangling link: where a write would create the folder
        (cat / name).symlink_to(target, target_is_directory=True)


@pytest.mark.parametrize("form", ["link-to-a-folder", "link-to-a-link", "dangling-link"])
def test_an_ingest_cache_folder_leading_outside_is_never_used(tmp_path: Path, elsewhere: Path,
                                                              form: str) -> None:
    """The cache's folder, linked out of the catalog: nothing swept, read or written there
    (its temp files, the cache, its .gitignore); one line, exit 2."""
    cat = tmp_path / "fresh"
    cat.mkdir()
    target = elsewhere / "cache"
    _linked(cat, ".risutools-cache", target, form)
    if target.is_dir():  # (what a sweep would remove, and a cache that would be read)
        (target / f".x.risutools-tmp-{2**22 + 7}-0123abcd").write_bytes(b"keep me")
    before = snapshot(elsewhere)
    r = cli("ingest", SOURCES, "-o", cat, "-q", cwd=tmp_path)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "outside-catalog" in one_line(r.stderr)
    assert snapshot(elsewhere) == before
    assert not list(cat.glob("*.json"))  # (stopped before any document)


@pytest.mark.parametrize("form", ["link-to-a-folder", "link-to-a-link"])
def test_a_notes_folder_leading_outside_is_never_read(tmp_path: Path, elsewhere: Path,
                                                      form: str) -> None:
    """The catalog's notes/, linked out of it: its files would become the documents'
    narrative (ingest) and its names findings (review); both refuse, one line, exit 2."""
    cat = tmp_path / "fresh"
    cat.mkdir()
    target = elsewhere / "notes"
    _linked(cat, "notes", target, form)
    text = (FIXTURES / "notes" / MOOD_NOTES).read_text("utf-8")
    (target / MOOD_NOTES).write_text(text.replace("slug:", f"# {SECRET}\nslug:", 1), "utf-8")
    r = cli("ingest", SOURCES, "-o", cat, "-q", cwd=tmp_path)
    assert r.returncode == 2 and "outside-catalog" in one_line(r.stderr), r.stderr
    assert not list(cat.glob("*.json"))
    r = cli("review", cat, "-q", "-f", "json", cwd=tmp_path)
    assert r.returncode == 2 and "outside-catalog" in one_line(r.stderr), r.stderr


def test_a_notes_file_that_is_a_link_is_not_a_notes_file(tmp_path: Path, elsewhere: Path) -> None:
    """notes/<id>.yaml, a link to a file outside: not read, as the notes index reads no
    link; the same file in place is (the test can tell)."""
    note = FIXTURES / "notes" / MOOD_NOTES
    outside = elsewhere / "stolen.yaml"
    shutil.copy(note, outside)
    for how in ("in place", "linked"):
        cat = tmp_path / how.replace(" ", "-")
        (cat / "notes").mkdir(parents=True)
        if how == "in place":
            shutil.copy(note, cat / "notes" / MOOD_NOTES)
        else:
            (cat / "notes" / MOOD_NOTES).symlink_to(outside)
        r = cli("ingest", SOURCES, "-o", cat, "-q", "--no-cache", cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        doc = json.loads((cat / "module.risu.186123400.mood-tracker.json").read_text("utf-8"))
        refs = [ref.get("source_version") for ref in doc["provenance"]["source_refs"]]
        assert ("notes.yaml" in refs) is (how == "in place"), (how, refs)


# --------------------------------------------------------------------------- folders' links


def _doc_with(cat: Path, where: Path, key: str) -> None:
    """A copy of the cutter's document at ``where``, with one field of its own (``key``:
    what an MC100 finding names once the file is read)."""
    doc = json.loads(doc_path(cat, CUTTER).read_text("utf-8"))
    doc[key] = SECRET
    doc["component_id"] = f"{CUTTER}-{key.replace('_', '-')}"
    where.write_text(json.dumps(doc, ensure_ascii=False), "utf-8")


@pytest.mark.parametrize("command", ["validate", "review"])
@pytest.mark.parametrize("form", ["link-to-a-file", "link-to-a-link", "dangling-link"])
def test_a_document_link_leading_out_of_the_folder_is_never_read(
        cat: Path, elsewhere: Path, command: str, form: str) -> None:
    """A file of the folder (the catalog) that is a link to a file outside it: reported as
    refused (MC001, ``outside-catalog``), never read; a link that stays inside is read."""
    outside = elsewhere / "doc.json"
    if form != "dangling-link":
        _doc_with(cat, outside, "x_outside")
    if form == "link-to-a-link":
        (elsewhere / "hop.json").symlink_to(outside)
        (cat / "leak.json").symlink_to(elsewhere / "hop.json")
    else:
        (cat / "leak.json").symlink_to(outside)
    _doc_with(cat, cat / "inside.txt", "x_inside")
    (cat / "inside-link.json").symlink_to(cat / "inside.txt")  # (stays inside: read)
    args = ["validate", "-f", "json", cat] if command == "validate" else \
        ["review", cat, "-q", "-f", "json"]
    r = cli(*args, cwd=cat)
    assert r.returncode in (1, 2), (r.stdout, r.stderr)
    found = [f for f in _findings(json.loads(r.stdout)) if "leak.json" in str(f.get("file"))]
    assert [(f["rule"], f["code"]) for f in found] == [("MC001", "outside-catalog")], found
    assert "x_inside" in r.stdout  # (the link inside was read: its own field is reported)
    assert "x_outside" not in r.stdout + r.stderr and SECRET not in r.stdout + r.stderr


def _findings(report: Any) -> list[dict[str, Any]]:
    """Every finding of a validate or review JSON report, wherever it sits."""
    if isinstance(report, dict):
        if "rule" in report and "message" in report:
            return [report]
        return [f for v in report.values() for f in _findings(v)]
    if isinstance(report, list):
        return [f for v in report for f in _findings(v)]
    return []


# ------------------------------------------- links in replays/, notes/ and the source store


def test_a_replays_link_leading_out_is_never_written_through(cat: Path, elsewhere: Path
                                                             ) -> None:
    (elsewhere / f"{CUTTER}--anchor-edit.md").write_text("precious")
    shutil.rmtree(cat / "replays")
    (cat / "replays").symlink_to(elsewhere, target_is_directory=True)
    before = snapshot(elsewhere)
    r = cli("replay", "run", doc_path(cat, CUTTER), "-x",
            FIXTURES / "replay" / "anchor-edit.yaml", "--update", cwd=cat)
    assert r.returncode == 2 and "outside-catalog" in one_line(r.stderr), r.stderr
    assert snapshot(elsewhere) == before
    v = cli("verify", cat, cwd=cat)  # (the report it records is not read from there)
    assert v.returncode == 1 and "MC203" in v.stdout and "leads outside" in v.stdout


@pytest.mark.parametrize("target", ["secret", "/dev/zero", "/proc/kmsg"])
def test_a_notes_link_leading_out_is_never_read(cat: Path, elsewhere: Path,
                                                target: str) -> None:
    """A notes file that is a link out of the catalog (to a file, a device, a procfs file
    whose read blocks) is not read: verify could not run (MC001, exit 2) and its digest is a
    mismatch; review fails on it; neither hangs."""
    note = cat / "notes" / f"{CUTTER}.yaml"
    if target == "secret":
        (elsewhere / "n.yaml").write_bytes(note.read_bytes())
        target = str(elsewhere / "n.yaml")
    note.unlink()
    note.symlink_to(target)
    v = cli("verify", cat, "-f", "json", cwd=cat)
    assert v.returncode == 2, v.stderr
    outcome = [x for x in json.loads(v.stdout)["verifications"]
               if x["source"].endswith("notes.yaml")]
    assert [x["status"] for x in outcome] == ["mismatch"]
    r = cli("review", cat, "-q", "-j", "1", cwd=cat)
    assert r.returncode == 1 and "leads outside the catalog" in r.stdout


def test_review_keeps_the_configurations_store_inside_the_repository(cat: Path) -> None:
    (cat / ".risutools.yaml").write_text("sources: /proc\n")
    r = cli("review", cat, "-q", "-j", "1", cwd=cat)
    assert r.returncode == 2 and "config-sources-outside" in one_line(r.stderr)
    ok = cli("review", cat, "-q", "-j", "1", "--sources", FIXTURES / "sources", cwd=cat)
    assert ok.returncode in (0, 1), ok.stderr  # (the user's word: --sources anywhere)


def test_a_hard_linked_log_is_not_appended_to(cat: Path, elsewhere: Path) -> None:
    approve(CUTTER, "request_review", "kim", "", None, str(cat))
    assert cli("promote", CUTTER, "--to", TO, "--catalog", cat, cwd=cat).returncode == 0
    outside = elsewhere / "log.ndjson"
    os.replace(cat / "transitions.ndjson", outside)
    os.link(outside, cat / "transitions.ndjson")
    approve(CUTTER, "approve", "kim", "", None, str(cat))
    before, doc = outside.read_bytes(), doc_path(cat, CUTTER).read_bytes()
    r = cli("promote", CUTTER, "--to", "approved", "--catalog", cat, "--sources",
            FIXTURES / "sources", cwd=cat)
    assert r.returncode == 2 and "hard link" in one_line(r.stderr), r.stderr
    assert outside.read_bytes() == before and doc_path(cat, CUTTER).read_bytes() == doc
