"""Re-ingest into ``components.ndjson`` (issue 23, goal 3, with ``--ndjson``): a run that
finds the file as the last run that found every line unchanged left it, with the same
outcomes, neither renders, unpacks nor reads anything; any other file, or any other outcome,
is merged as a full run (``--no-cache``) merges it: the same file byte for byte and the same
report."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from test_ingest_reingest import _as_full_run, _catalog, _report, _sources

from risutools.catalog import cache as cache_mod
from risutools.catalog import ingest_write
from risutools.catalog.cache import CachedOutcome, IngestCache
from risutools.catalog.ingest import CACHE_NAME, ingest
from risutools.catalog.ndjson_merge import NDJSON_NAME


@pytest.fixture(autouse=True)
def _no_racy_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cache_mod, "RACY_NS", 0)  # (the files are written just before)


def _settled(tmp: Path) -> tuple[Path, Path]:
    src, out = _sources(tmp), tmp / "cat"
    for _ in range(3):
        ingest(src, out, jobs=1, ndjson=True)
    return src, out


def _full(src: Path, out: Path, tmp: Path) -> Any:
    return _as_full_run(src, out, tmp, ndjson=True)


def _forbid_work(monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(*_: Any, **__: Any) -> Any:
        raise AssertionError("rendered, unpacked or read")

    monkeypatch.setattr(ingest_write, "render", refused)
    monkeypatch.setattr(ingest_write, "write_ndjson", refused)
    monkeypatch.setattr(CachedOutcome, "unpack", refused)
    monkeypatch.setattr(cache_mod, "read_region", refused)


def test_a_settled_ndjson_catalog_is_neither_rendered_nor_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    src, out = _settled(tmp_path)
    twin = tmp_path / "twin"
    shutil.copytree(out, twin)
    full = ingest(src, twin, jobs=1, ndjson=True, use_cache=False)
    with monkeypatch.context() as m:
        _forbid_work(m)
        run = ingest(src, out, jobs=1, ndjson=True)
    assert run.counts()["cached"] == run.counts()["files"]
    assert _catalog(out) == _catalog(twin) and _report(run, out) == _report(full, twin)
    assert run.unchanged and not run.written and len(run.unchanged) > 3


def _edit_line(out: Path, change: Any) -> None:
    target = out / NDJSON_NAME
    lines = target.read_bytes().split(b"\n")
    lines[0] = change(lines[0])
    target.write_bytes(b"\n".join(lines))


def _approved(line: bytes) -> bytes:
    """The line approved, and its content no longer the projection's (a line that differs
    from it only in its lifecycle fields is unchanged: stop 62)."""
    doc = json.loads(line)
    doc["provenance"]["review_status"] = "approved"
    doc["payload"]["reviewed_note"] = "edited after the review"
    return json.dumps(doc, ensure_ascii=False).encode("utf-8")


@pytest.mark.parametrize("edit", [
    pytest.param(lambda out: _edit_line(out, lambda line: line.replace(
        b'"component_version":"1.0.0"', b'"component_version":"1.0.1"', 1)), id="same-size"),
    pytest.param(lambda out: _edit_line(out, _approved), id="approved"),
    pytest.param(lambda out: _edit_line(out, lambda line: b""), id="line-emptied"),
    pytest.param(lambda out: _edit_line(out, lambda line: b"{not json"), id="unreadable"),
    pytest.param(lambda out: os.utime(out / NDJSON_NAME, ns=(1, 1)), id="touched"),
    pytest.param(lambda out: (out / NDJSON_NAME).unlink(), id="removed"),
])
def test_a_changed_ndjson_file_is_merged_as_a_full_run_merges_it(
        tmp_path: Path, edit: Any) -> None:
    """Each edit moves the file's stat: the run merges (and twice more, as a full run)."""
    src, out = _settled(tmp_path)
    target = out / NDJSON_NAME
    st = target.stat() if target.exists() else None
    edit(out)
    if st is not None and target.exists() and target.stat().st_size == st.st_size:
        os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))  # (the same mtime too)
    for _ in range(3):
        _full(src, out, tmp_path)


def test_a_changed_source_merges(tmp_path: Path) -> None:
    src, out = _settled(tmp_path)
    f = src / "186123400_mood-tracker.json"
    f.write_text(f.read_text("utf-8").replace('"description": "', '"description": "x', 1),
                 "utf-8")
    run = _full(src, out, tmp_path)
    assert len(run.written) == 1
    assert run.counts()["cached"] == run.counts()["files"] - 1
    run = _full(src, out, tmp_path)  # (then settled again, and still as a full run)
    assert not run.written


def test_a_reviewed_line_is_asked_every_run(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A run that keeps a reviewed line records nothing: the next one merges again."""
    src, out = _settled(tmp_path)
    _edit_line(out, _approved)
    for _ in range(2):
        assert len(_full(src, out, tmp_path).kept_reviewed) == 1
    calls: list[int] = []
    real = ingest_write.write_ndjson
    monkeypatch.setattr(ingest_write, "write_ndjson",
                        lambda *a: calls.append(1) or real(*a))
    assert len(ingest(src, out, jobs=1, ndjson=True).kept_reviewed) == 1 and calls == [1]


@pytest.mark.parametrize("record", ["another-key", "kept", "another-stat"])
def test_a_forged_ndjson_record_is_not_trusted(tmp_path: Path, record: str) -> None:
    src, out = _settled(tmp_path)
    _edit_line(out, _approved)  # (a file the cache must not call settled)
    cache = IngestCache.load(out / CACHE_NAME)
    st = (out / NDJSON_NAME).stat()
    rec = cache.files[NDJSON_NAME]  # (the record of the settled file: its key is right)
    size, mtime, ctime, ino = st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino
    key = rec[4] if record != "another-key" else "f" * 64
    status = "kept_reviewed" if record == "kept" else "unchanged"
    if record == "another-stat":
        mtime += 1
    cache.files[NDJSON_NAME] = (size, mtime, ctime, ino, key, status, "")
    cache.merge()
    run = _full(src, out, tmp_path)
    assert len(run.kept_reviewed) == 1


def _counting(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    from risutools.catalog import ndjson_merge

    counts = {"render": 0, "unpack": 0, "parse": 0}
    render, unpack, parse = ingest_write.render, CachedOutcome.unpack, ndjson_merge._parse_line

    def counted(name: str, real: Any) -> Any:
        def call(*a: Any, **k: Any) -> Any:
            counts[name] += 1
            return real(*a, **k)
        return call

    monkeypatch.setattr(ingest_write, "render", counted("render", render))
    monkeypatch.setattr(CachedOutcome, "unpack", counted("unpack", unpack))
    monkeypatch.setattr(ndjson_merge, "_parse_line", counted("parse", parse))
    return counts


def _counted_run(src: Path, out: Path, tmp: Path, monkeypatch: pytest.MonkeyPatch
                 ) -> tuple[Any, dict[str, int]]:
    """A run with the cache, what it rendered, unpacked and parsed counted; it gives what a
    full run on a copy of the catalog gives."""
    twin = tmp / "twin"
    shutil.copytree(out, twin)
    full = ingest(src, twin, jobs=1, ndjson=True, use_cache=False)
    counts = _counting(monkeypatch)
    run = ingest(src, out, jobs=1, ndjson=True)
    assert _catalog(out) == _catalog(twin) and _report(run, out) == _report(full, twin)
    return run, counts


def test_a_changed_source_renders_its_line_only(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """One source changed among many: the others' lines are found by their digests (not
    parsed), their documents stay packed and are not rendered."""
    src, out = _settled(tmp_path)
    f = src / "186123400_mood-tracker.json"
    f.write_text(f.read_text("utf-8").replace('"description": "', '"description": "x', 1),
                 "utf-8")
    run, counts = _counted_run(src, out, tmp_path, monkeypatch)
    assert len(run.written) == 1 and len(run.unchanged) > 3
    # the changed source was projected (its line rendered there): its old line is the
    # only one parsed (to index it, then to see it is a candidate's before it is
    # replaced), and nothing cached was unpacked or rendered here
    assert counts == {"render": 0, "unpack": 0, "parse": 2}


def test_a_line_edited_by_hand_is_the_only_one_parsed(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    src, out = _settled(tmp_path)
    _edit_line(out, lambda line: line.replace(b'"component_version":"1.0.0"',
                                              b'"component_version":"1.0.1"', 1))
    run, counts = _counted_run(src, out, tmp_path, monkeypatch)
    assert len(run.written) == 1  # (its line indexed, then seen to be a candidate's)
    assert counts == {"render": 1, "unpack": 1, "parse": 2}


def test_a_document_the_cache_cannot_give_again_is_one_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The file changed between the look at its lines and the merge (here: the look
    answered for a line since removed), and the cache cannot give the document of that line
    again: it is not written this run, said in one line; the other lines stay."""
    from risutools.catalog import ingest as ingest_mod

    src, out = _settled(tmp_path)
    target = out / NDJSON_NAME
    every = ingest_mod.line_digests(target)
    lines = target.read_bytes().split(b"\n")
    target.write_bytes(b"\n".join(lines[1:]))
    monkeypatch.setattr(ingest_mod, "line_digests", lambda _target: every)
    monkeypatch.setattr(CachedOutcome, "unpack", lambda self: False)
    run = ingest(src, out, jobs=1, ndjson=True)
    cid = json.loads(lines[0])["component_id"]
    assert run.collisions == [f"{target}: {cid}: its document could not be read again "
                              "from the cache; not written (the next run writes it)"]
    assert target.read_bytes() == b"\n".join(lines[1:])
    monkeypatch.undo()
    monkeypatch.setattr(cache_mod, "RACY_NS", 0)
    run = ingest(src, out, jobs=1, ndjson=True)  # (the next run writes it)
    assert run.written == [cid] and not run.collisions


def test_runs_of_both_kinds_on_one_catalog_give_what_full_runs_give(tmp_path: Path) -> None:
    """A document's digest is taken of the text its run writes (a JSON file or an NDJSON
    line): a cache made by runs of one kind answers runs of the other as full runs."""
    src, out = _sources(tmp_path), tmp_path / "cat"
    ingest(src, out, jobs=1)
    for ndjson in (False, False, True, True, True, False, False, True, False):
        _as_full_run(src, out, tmp_path, ndjson=ndjson)
