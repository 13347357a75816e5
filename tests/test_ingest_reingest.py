"""Re-ingest with the cache (issue 23, goal 3): a source whose stat the cache knows is neither
read nor sniffed, and a document (and facts file) whose stat the cache recorded is neither
rendered nor read.  Whatever the cache holds, each run must give what a full run
(``--no-cache``) gives on the same catalog: the same files, byte for byte, and the same
report."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import msgpack
import pytest
from harness import SOURCES

from risutools import __version__
from risutools.catalog import cache as cache_mod
from risutools.catalog.cache import CachedOutcome, IngestCache
from risutools.catalog.cache_packed import unpack_outcome
from risutools.catalog.ingest import CACHE_NAME, ingest
from risutools.catalog.outcome import IngestResult


@pytest.fixture(autouse=True)
def _no_racy_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    # a catalog file changed less than RACY_NS before a run is not recorded by it; the
    # tests run fast, so they record files of any age (each file is still written before
    # the run that records it starts)
    monkeypatch.setattr(cache_mod, "RACY_NS", 0)


def _catalog(out: Path) -> dict[str, bytes]:
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*"))
            if p.is_file() and ".risutools-cache" not in p.parts}


def _report(result: IngestResult, out: Path) -> dict[str, Any]:
    """The report, less the count of cache hits and the notice of a cache not used."""
    data = result.to_dict()
    data["counts"].pop("cached")
    data["notices"] = [n for n in data["notices"] if "cache-unreadable" not in n]
    return json.loads(json.dumps(data).replace(str(out), "<catalog>"))


def _as_full_run(src: Path, out: Path, tmp: Path, **kw: Any) -> IngestResult:
    """Run ingest with the cache on ``out`` and, on a copy of ``out`` as it was, a full run;
    assert both give the same catalog and the same report; returns the cached run's."""
    twin = tmp / f"twin-{len(list(tmp.glob('twin-*')))}"
    shutil.copytree(out, twin, symlinks=True)
    full = ingest(src, twin, jobs=1, use_cache=False, **kw)
    run = ingest(src, out, jobs=1, **kw)
    assert _catalog(out) == _catalog(twin)
    assert _report(run, out) == _report(full, twin)
    return run


def _sources(tmp: Path) -> Path:
    src = tmp / "src"
    shutil.copytree(SOURCES, src)
    return src


def _settled(tmp: Path) -> tuple[Path, Path]:
    """A catalog ingested, then re-ingested twice (the second run records its files)."""
    src, out = _sources(tmp), tmp / "cat"
    for _ in range(3):
        ingest(src, out, jobs=1)
    return src, out


def _verified(run: IngestResult) -> int:
    return sum(1 for s in run.sources for v in s.verified if v is not None)


def test_a_settled_catalog_is_neither_rendered_nor_read(tmp_path: Path) -> None:
    src, out = _settled(tmp_path)
    run = _as_full_run(src, out, tmp_path)
    docs = run.counts()["components"]
    assert docs > 3 and _verified(run) == docs
    assert run.counts()["cached"] == run.counts()["files"]
    # nothing was unpacked: the documents stayed packed in the cache
    cached = [s for s in run.sources if isinstance(s, CachedOutcome)]
    assert cached and all(s.packed is not None for s in cached if s.status == "ok")
    assert run.unchanged and not run.written


def test_a_document_edited_by_hand_is_found(tmp_path: Path) -> None:
    src, out = _settled(tmp_path)
    doc = sorted(out.glob("*.json"))[0]
    st = doc.stat()
    data = doc.read_bytes()
    assert b'"component_version": "1.0.0"' in data
    doc.write_bytes(data.replace(b'"component_version": "1.0.0"',
                                 b'"component_version": "1.0.1"', 1))  # the same size
    os.utime(doc, ns=(st.st_atime_ns, st.st_mtime_ns))  # and the same mtime
    run = _as_full_run(src, out, tmp_path)
    assert run.written == [doc.name]  # a candidate: put back as the run generates it
    # moved past candidate by hand: kept, as a full run keeps it
    value = json.loads(doc.read_text("utf-8"))
    value["provenance"]["review_status"] = "approved"
    doc.write_text(json.dumps(value, ensure_ascii=False, indent=1) + "\n", "utf-8")
    run = _as_full_run(src, out, tmp_path)
    assert run.kept_reviewed and doc.name not in run.unchanged
    # a reviewed document kept as it is: the history gate's answer depends only on its
    # bytes and the generated document, so while neither moves the cache answers it (as
    # a full run does)
    for _ in range(2):
        run = _as_full_run(src, out, tmp_path)
        assert run.kept_reviewed == [value["component_id"]]
    assert _verified(run) == run.counts()["components"]


@pytest.mark.parametrize("how", ["rewritten", "renamed over"])
def test_a_source_with_other_bytes_of_the_same_size_and_mtime_is_read_again(
        tmp_path: Path, how: str) -> None:
    """Other bytes of the same size, given the old modification time (``cp -p``,
    ``rsync -t``, an archive that stamps every file alike; or a file renamed over it): the
    change time tells; the run gives what a full run gives."""
    src, out = _settled(tmp_path)
    mood = src / "186123400_mood-tracker.json"
    st = mood.stat()
    data = mood.read_bytes()
    at = data.index(b"Records the mood")
    other = data[:at] + b"Notes the mood " + data[at + 15:]
    assert len(other) == len(data) and other != data
    time.sleep(0.05)  # (past the file system's clock tick: another change time)
    if how == "rewritten":
        mood.write_bytes(other)
    else:
        (src / ".new").write_bytes(other)
        os.replace(src / ".new", mood)
    os.utime(mood, ns=(st.st_atime_ns, st.st_mtime_ns))
    now = mood.stat()
    assert (now.st_size, now.st_mtime_ns) == (st.st_size, st.st_mtime_ns)
    run = _as_full_run(src, out, tmp_path)
    assert run.counts()["cached"] == run.counts()["files"] - 1
    doc = next(p for p in out.glob("*.json") if "186123400" in p.name)
    digest = "sha256:" + hashlib.sha256(other).hexdigest()
    assert digest in doc.read_text("utf-8") and doc.name in run.written


def test_a_facts_file_edited_by_hand_is_found(tmp_path: Path) -> None:
    src, out = _settled(tmp_path)
    facts = sorted((out / "facts").glob("*.json"))[0]
    facts.write_text(facts.read_text("utf-8").replace("{", "{ ", 1), "utf-8")
    _as_full_run(src, out, tmp_path)


def test_a_removed_document_is_written_again(tmp_path: Path) -> None:
    src, out = _settled(tmp_path)
    doc = sorted(out.glob("*.json"))[0]
    doc.unlink()
    run = _as_full_run(src, out, tmp_path)
    assert run.written == [doc.name]


def test_a_changed_notes_file_renders_the_documents_again(tmp_path: Path) -> None:
    src, out = _settled(tmp_path)
    name = "module.risu.174678332.context-cutter.yaml"
    notes = out / "notes"
    notes.mkdir()
    text = (SOURCES.parent / "notes" / name).read_text("utf-8")
    (notes / name).write_text(text, "utf-8")
    run = _as_full_run(src, out, tmp_path)
    assert run.written == ["module.risu.174678332.context-cutter.json"]
    assert run.counts()["cached"] == 0  # (the notes are part of every key)
    _as_full_run(src, out, tmp_path)
    _as_full_run(src, out, tmp_path)
    assert "context.anchor_continuity" in text
    (notes / name).write_text(text.replace("context.anchor_continuity", "context.other"),
                              "utf-8")
    run = _as_full_run(src, out, tmp_path)
    assert run.written == ["module.risu.174678332.context-cutter.json"]
    body = (out / "module.risu.174678332.context-cutter.json").read_text("utf-8")
    assert "context.other" in body and "context.anchor_continuity" not in body


def test_changed_settings_render_the_documents_again(tmp_path: Path) -> None:
    from risutools.settings.config import resolve_settings

    src, out = _settled(tmp_path)
    settings = resolve_settings(None, [str(out)], select=(), ignore=("RA",), exclude=())
    run = _as_full_run(src, out, tmp_path, settings=settings)
    assert run.counts()["cached"] == 0


def test_a_touched_source_with_the_same_bytes(tmp_path: Path) -> None:
    src, out = _settled(tmp_path)
    first = sorted(p for p in src.iterdir() if p.suffix == ".risum")[0]
    st = first.stat()
    os.utime(first, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    run = _as_full_run(src, out, tmp_path)
    again = next(s for s in run.sources if s.path == first.name)
    assert not again.cached  # read and hashed again: the same bytes, the same documents
    assert not run.written
    run = _as_full_run(src, out, tmp_path)
    assert run.counts()["cached"] == run.counts()["files"]


def _sha(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def _records(out: Path) -> list[Any]:
    """The cache's records, after its delta is merged into the main file."""
    IngestCache.load(out / CACHE_NAME).merge()
    unpacker = msgpack.Unpacker(raw=False)
    unpacker.feed((out / CACHE_NAME).read_bytes())
    return list(unpacker)


def _write_records(out: Path, records: list[Any]) -> None:
    (out / CACHE_NAME).write_bytes(b"".join(msgpack.packb(r, use_bin_type=True)
                                            for r in records))


@pytest.mark.parametrize("field, value", [
    (2, 7),  # format: not a string
    (3, ["fine", 1]),  # a warning that is not a string
    (5, "module.x"),  # the ids: not a list
    (6, ["0" * 64] * 9),  # digests for documents that are not there
    (8, "packed"),  # the packed outcome: a string, not bytes
    (4, 5),  # an error that is not a string
    (7, ["0" * 64] * 9),  # facts digests for documents that are not there
    (6, "0" * 64),  # digests: a string, not a list
])
def test_a_wrong_typed_result_is_one_line_and_a_full_run(tmp_path: Path, field: int,
                                                         value: Any) -> None:
    src, out = _settled(tmp_path)
    records = _records(out)
    assert records[0] == [cache_mod.CACHE_FORMAT, __version__]
    result = next(r for r in records if r[0] == 1)  # (columns: the first row changed)
    result[field][0] = value
    _write_records(out, records)
    run = _as_full_run(src, out, tmp_path)
    (line,) = run.notices
    assert "cache-unreadable" in line and "expected shape" in line and "\n" not in line


@pytest.mark.parametrize("column, value", [
    (2, "12"),  # a size that is not an int
    (4, 1.5),  # a ctime that is not an int
    (7, "written"),  # a status the cache never records
])
def test_a_wrong_typed_file_record_is_one_line_and_a_full_run(tmp_path: Path, column: int,
                                                              value: Any) -> None:
    src, out = _settled(tmp_path)
    records = _records(out)
    files = next(r for r in records if r[0] == 2)
    files[column][0] = value
    _write_records(out, records)
    (line,) = _as_full_run(src, out, tmp_path).notices
    assert "cache-unreadable" in line


def test_an_oversized_record_is_one_line_and_a_full_run(tmp_path: Path) -> None:
    src, out = _settled(tmp_path)
    records = _records(out)
    result = next(r for r in records if r[0] == 1)
    result[3] = ["w"] * (cache_mod.MAX_CACHE_ITEMS + 1)
    _write_records(out, records)
    (line,) = _as_full_run(src, out, tmp_path).notices
    assert "cache-unreadable" in line and "exceeds" in line


@pytest.mark.parametrize("packed", [
    b"\xc1",  # not msgpack
    msgpack.packb([[{"component_id": "someone.else"}], [{}]]),  # another component
    msgpack.packb([[], []]),  # no documents
    b"\x92" + b"\x91" * 300 + b"\xc0",  # nesting
])
def test_a_forged_packed_outcome_is_projected_again(tmp_path: Path, packed: bytes) -> None:
    """Records of the right types, a packed outcome that does not fit: when its documents
    are needed (its file is gone), the source is projected again, as a full run does."""
    src, out = _settled(tmp_path)
    records = _records(out)
    result = next(r for r in records if r[0] == 1)  # (columns: one row's outcome)
    row = next(i for i, ids in enumerate(result[5]) if len(ids) == 1)
    result[8][row] = packed
    victim = result[5][row][0]
    _write_records(out, records)
    (out / f"{victim.lower()}.json").unlink()
    run = _as_full_run(src, out, tmp_path)
    assert run.notices == [] and run.written == [f"{victim.lower()}.json"]
    _as_full_run(src, out, tmp_path)  # and the cache was mended


@pytest.mark.parametrize("span", [
    [0, 10**9],  # past the region
    [10**9, 0],  # starts past it
    [-1, 5],
    [0, -1],
    [1],
    [1, 2, 3],
    ["0", 1],
    [0, 1.5],
    [True, 1],
    [],
])
def test_a_packed_outcome_outside_the_region_is_one_line_and_a_full_run(
        tmp_path: Path, span: list[Any]) -> None:
    src, out = _settled(tmp_path)
    records = _records(out)
    assert records[1][0] == 3 and isinstance(records[1][2], bytes)  # the region
    result = next(r for r in records if r[0] == 1)
    assert all(isinstance(p, list) for p in result[8])  # (each one placed in the region)
    result[8][0] = span
    _write_records(out, records)
    run = _as_full_run(src, out, tmp_path)
    (line,) = run.notices
    assert "cache-unreadable" in line and "expected shape" in line and "\n" not in line
    assert run.counts()["cached"] == 0


@pytest.mark.parametrize("damage, why", [
    (lambda head, region, rest: head + b"\x93\x03\xc4\x20" + bytes(32) + b"\xc6"
     + (10**6).to_bytes(4, "big") + b"x",
     "truncated"),  # a region said to end past the end of the file
    (lambda head, region, rest: head + msgpack.packb([3, bytes(32), "not bytes"]) + rest,
     "expected shape"),
    (lambda head, region, rest: head + msgpack.packb([4, _sha(region), region]) + rest,
     "expected shape"),
    (lambda head, region, rest: head + rest, "expected shape"),  # no region at all
    (lambda head, region, rest: head, "expected shape"),  # the header alone
    (lambda head, region, rest: head + msgpack.packb([3, _sha(region), region])[:-1] + rest,
     "not a valid cache"),  # a region a byte short: the records start a byte early
    (lambda head, region, rest: head + msgpack.packb([3, _sha(region), region]) + rest[:-3],
     "truncated"),
])
def test_a_damaged_region_is_one_line_and_a_full_run(tmp_path: Path, damage: Any,
                                                     why: str) -> None:
    src, out = _settled(tmp_path)
    records = _records(out)
    head = msgpack.packb(records[0])
    region = records[1][2]
    rest = b"".join(msgpack.packb(r, use_bin_type=True) for r in records[2:])
    (out / CACHE_NAME).write_bytes(damage(head, region, rest))
    run = _as_full_run(src, out, tmp_path)
    (line,) = run.notices
    assert "cache-unreadable" in line and why in line and "\n" not in line
    assert run.counts()["cached"] == 0
    run = _as_full_run(src, out, tmp_path)  # and rebuilt
    assert run.notices == [] and run.counts()["cached"] == run.counts()["files"]


def test_another_sources_packed_outcome_is_projected_again(tmp_path: Path) -> None:
    """Two results whose places in the region are swapped (each a whole, valid outcome, of
    another component): when their documents are needed, both are projected again."""
    src, out = _settled(tmp_path)
    records = _records(out)
    result = next(r for r in records if r[0] == 1)
    one = [i for i, ids in enumerate(result[5]) if len(ids) == 1]
    a, b = one[0], one[1]
    result[8][a], result[8][b] = result[8][b], result[8][a]
    _write_records(out, records)
    victims = sorted(f"{result[5][i][0].lower()}.json" for i in (a, b))
    for name in victims:
        (out / name).unlink()
    run = _as_full_run(src, out, tmp_path)
    assert run.notices == [] and sorted(run.written) == victims
    assert run.counts()["cached"] == run.counts()["files"] - 2


def test_nothing_changed_reads_no_packed_outcome(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A run with nothing changed, and one with a source changed, never read the region of
    packed outcomes (a merge does)."""
    src, out = _settled(tmp_path)

    def refused(*_: Any) -> bytes | None:
        raise AssertionError("the region was read")

    monkeypatch.setattr(cache_mod, "read_region", refused)
    run = _as_full_run(src, out, tmp_path)
    assert run.counts()["cached"] == run.counts()["files"] and not run.written
    f = src / "186123400_mood-tracker.json"
    f.write_text(f.read_text("utf-8").replace('"description": "', '"description": "x', 1),
                 "utf-8")
    run = _as_full_run(src, out, tmp_path)
    assert run.counts()["cached"] == run.counts()["files"] - 1 and run.written
    with pytest.raises(AssertionError, match="the region was read"):
        IngestCache.load(out / CACHE_NAME).merge()


def test_a_main_file_replaced_since_it_was_read_gives_no_packed_outcome(tmp_path: Path) -> None:
    """The region is read from the file the run read at its start (the same inode, size and
    times), never from one that replaced it since: those outcomes are then misses."""
    _, out = _settled(tmp_path)
    main = out / CACHE_NAME
    IngestCache.load(main).merge()
    cache = IngestCache.load(main)
    placed = [v for v in cache.results.values() if isinstance(v[6], list)]
    assert placed and cache.region is not None
    packed = cache.packed_bytes(placed[0][6])
    assert packed is not None and unpack_outcome(packed, placed[0][3]) is not None
    cache = IngestCache.load(main)
    copy = main.with_name("copy")
    shutil.copy2(main, copy)
    os.replace(copy, main)  # the same bytes, another file
    assert cache.packed_bytes(placed[0][6]) is None and cache.region is None
    cache.merge()  # what could not be read again is dropped, the rest kept
    again = IngestCache.load(main)
    assert again.problem is None and not again.results and again.stat


def test_a_merge_keeps_every_packed_outcome(tmp_path: Path) -> None:
    _, out = _settled(tmp_path)
    main = out / CACHE_NAME
    before = IngestCache.load(main)
    held = {k: before.packed_bytes(v[6]) for k, v in before.results.items()}
    assert held and all(held.values())
    before.merge()
    before.merge()  # (what it holds after a merge refers to the file it wrote)
    assert {k: before.packed_bytes(v[6]) for k, v in before.results.items()} == held
    after = IngestCache.load(main)
    assert {k: after.packed_bytes(v[6]) for k, v in after.results.items()} == held
    assert {k: v[:6] for k, v in after.results.items()} == \
        {k: v[:6] for k, v in before.results.items()}


def test_a_forged_file_record_for_another_text_is_not_trusted(tmp_path: Path) -> None:
    """A file record whose digest is not the text the run would write: compared as usual."""
    src, out = _settled(tmp_path)
    records = _records(out)
    files = next(r for r in records if r[0] == 2)
    files[6] = ["f" * 64] * len(files[6])
    _write_records(out, records)
    doc = out / next(name for name in files[1] if "/" not in name)
    # (its content changed: a file only spelled otherwise is left as the user keeps it)
    doc.write_text(doc.read_text("utf-8").replace("{", '{"x-edited": 1, ', 1), "utf-8")
    run = _as_full_run(src, out, tmp_path)
    assert run.notices == [] and doc.name in run.written


def test_replay_evidence_is_carried_over_by_a_settled_catalog(
        tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    """A candidate a replay was recorded into: each run keeps its verdict (and says so), the
    runs that no longer read it as well."""
    from test_catalog_support import CUTTER, doc_path, fresh_catalog

    cat = fresh_catalog(tmp_path_factory, tmp_path)
    src = _sources(tmp_path)
    before = doc_path(cat, CUTTER).read_bytes()
    for _ in range(3):
        run = _as_full_run(src, cat, tmp_path, lang="ko")
        assert run.evidence_kept == [CUTTER] and run.evidence_stale == []
        assert doc_path(cat, CUTTER).read_bytes() == before
    cutter = next(s for s in run.sources for cid in s.component_ids() if cid == CUTTER)
    assert cutter.verified and None not in cutter.verified  # (not read, not rendered)


def _damage_region(out: Path, old: bytes, new: bytes) -> None:
    """``old`` (a run of text in the packed outcomes) changed to ``new`` of the same length:
    every length and shape still fits; only the region's SHA-256 tells."""
    IngestCache.load(out / CACHE_NAME).merge()
    data = (out / CACHE_NAME).read_bytes()
    assert len(old) == len(new) and data.count(old) >= 1
    (out / CACHE_NAME).write_bytes(data.replace(old, new))


@pytest.mark.parametrize("ndjson, removed, old, new", [
    # a document's sentence (the documents removed: the packed ones are unpacked to write)
    (False, "*.json", b"contains no executable code", b"contains no execut7ble code"),
    # a document's id inside its text, as long as the real one
    (False, "*.json", b"risu:174678332", b"risu:174678333"),
    # a facts file's field (the facts removed)
    (False, "facts/*.json", b"context-cutter", b"context-cuttex"),
    # an NDJSON catalog: every cached outcome is unpacked
    (True, "components.ndjson", b"contains no executable code", b"contains no execut7ble code"),
])
def test_a_damaged_byte_in_the_region_never_becomes_a_document(
        tmp_path: Path, ndjson: bool, removed: str, old: bytes, new: bytes) -> None:
    """A byte of the packed outcomes changed on disk (bit rot, a hand edit) whose lengths
    and shapes still fit: the region's SHA-256 differs, so nothing of it is unpacked; the
    sources are projected again, the catalog is the full run's, one notice says why, and
    the next run's cache is whole again.  (Before, the changed text was written into the
    document.)"""
    src, out = _sources(tmp_path), tmp_path / "cat"
    for _ in range(3):
        ingest(src, out, jobs=1, ndjson=ndjson)
    _damage_region(out, old, new)
    for p in out.glob(removed):
        p.unlink()
    run = _as_full_run(src, out, tmp_path, ndjson=ndjson)
    (line,) = run.notices
    assert "cache-unreadable" in line and "SHA-256" in line and "\n" not in line
    assert not any(new in p.read_bytes() for p in out.rglob("*.json*") if p.is_file()
                   and ".risutools-cache" not in p.parts)
    run = _as_full_run(src, out, tmp_path, ndjson=ndjson)  # the cache merged: whole again
    assert run.notices == [] and run.counts()["cached"] == run.counts()["files"]
    assert new not in (out / CACHE_NAME).read_bytes()
