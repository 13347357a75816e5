"""The ingest cache's delta file (issue 23, goal 3): a run that changed a few entries appends
them to ``ingest.msgpack.delta`` instead of writing the whole cache again.  A torn, forged,
oversized or stale delta is never trusted: whatever it holds, each run gives what a full run
(``--no-cache``) gives on the same catalog, byte for byte."""

from __future__ import annotations

import binascii
import hashlib
import json
import multiprocessing
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import msgpack
import pytest
from harness import SOURCES

from risutools import __version__
from risutools.catalog import cache as cache_mod
from risutools.catalog.cache import IngestCache, delta_path
from risutools.catalog.ingest import CACHE_NAME, ingest
from risutools.catalog.outcome import IngestResult

CHANGED = "186123400_mood-tracker.json"


@pytest.fixture(autouse=True)
def _no_racy_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    # (as in test_ingest_reingest: the tests record catalog files of any age)
    monkeypatch.setattr(cache_mod, "RACY_NS", 0)


def _catalog(out: Path) -> dict[str, bytes]:
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*"))
            if p.is_file() and ".risutools-cache" not in p.parts}


def _report(result: IngestResult, out: Path) -> dict[str, Any]:
    data = result.to_dict()
    data["counts"].pop("cached")
    data["notices"] = [n for n in data["notices"] if "cache-unreadable" not in n
                       and "too-large" not in n]
    return json.loads(json.dumps(data).replace(str(out), "<catalog>"))


def _as_full_run(src: Path, out: Path, tmp: Path) -> IngestResult:
    """The cached run on ``out``, and a full run on a copy of it: the same catalog and
    report; returns the cached run."""
    twin = tmp / f"twin-{len(list(tmp.glob('twin-*')))}"
    shutil.copytree(out, twin, symlinks=True)
    full = ingest(src, twin, jobs=1, use_cache=False)
    run = ingest(src, out, jobs=1)
    assert _catalog(out) == _catalog(twin)
    assert _report(run, out) == _report(full, twin)
    return run


def _settled(tmp: Path) -> tuple[Path, Path]:
    src, out = tmp / "src", tmp / "cat"
    shutil.copytree(SOURCES, src)
    for _ in range(3):
        ingest(src, out, jobs=1)
    return src, out


def _change(src: Path, tag: str) -> None:
    f = src / CHANGED
    mod = json.loads(f.read_text("utf-8"))
    mod["description"] = f"{mod.get('description', '')} {tag}"
    f.write_text(json.dumps(mod, ensure_ascii=False), "utf-8")


def _files(out: Path) -> tuple[Path, Path]:
    main = out / CACHE_NAME
    return main, delta_path(main)


def _lines(delta: Path) -> list[bytes]:
    return delta.read_bytes().split(b"\n")[:-1]


def _cached(run: IngestResult, name: str) -> bool:
    return next(s for s in run.sources if s.path == name).cached


def _line(main: Path, payload: bytes) -> bytes:
    """A delta line for ``payload`` bound to the main file as it is, with a right digest."""
    st = main.stat()
    binding = f"{cache_mod.CACHE_FORMAT}:{__version__}:{st.st_size}:{st.st_mtime_ns}:" \
              f"{st.st_ino}".encode()
    body = binding + b" " + binascii.b2a_base64(payload, newline=False)
    return hashlib.sha256(body).hexdigest().encode() + b" " + body + b"\n"


def test_a_changed_source_is_appended_and_the_main_file_left_alone(tmp_path: Path) -> None:
    src, out = _settled(tmp_path)
    main, delta = _files(out)
    before, st = main.read_bytes(), main.stat()
    lines = _lines(delta) if delta.exists() else []
    _change(src, "one")
    run = _as_full_run(src, out, tmp_path)
    assert not _cached(run, CHANGED) and run.counts()["cached"] == run.counts()["files"] - 1
    assert main.read_bytes() == before and main.stat().st_ino == st.st_ino
    new = _lines(delta)
    assert new[:len(lines)] == lines and len(new) == len(lines) + 1  # one line appended
    run = _as_full_run(src, out, tmp_path)  # answered from the delta
    assert run.counts()["cached"] == run.counts()["files"] and run.notices == []
    assert main.read_bytes() == before


def test_nothing_changed_writes_nothing(tmp_path: Path) -> None:
    src, out = _settled(tmp_path)
    _change(src, "one")
    ingest(src, out, jobs=1)
    ingest(src, out, jobs=1)  # (records the rewritten documents)
    main, delta = _files(out)
    stats = [(p.stat().st_mtime_ns, p.stat().st_size) for p in (main, delta)]
    run = ingest(src, out, jobs=1)
    assert run.counts()["cached"] == run.counts()["files"]
    assert [(p.stat().st_mtime_ns, p.stat().st_size) for p in (main, delta)] == stats


@pytest.mark.parametrize("damage", ["cut", "digest", "cut-then-appended"])
def test_a_torn_delta_line_is_not_used_and_merged(tmp_path: Path, damage: str) -> None:
    """An append cut short (bytes after the last newline), a line whose digest does not match,
    or a cut line that a later append ended with its newline: not used (no notice: a crash is
    no fault of the cache's), the source looked at again, and the run merges."""
    src, out = _settled(tmp_path)
    main, delta = _files(out)
    _change(src, "one")
    ingest(src, out, jobs=1)
    data = delta.read_bytes()
    last = data[:-1].rfind(b"\n") + 1  # where the last line starts
    if damage == "cut":
        delta.write_bytes(data[:-40])
    elif damage == "digest":
        flip = b"A" if data[-20:-19] != b"A" else b"B"
        delta.write_bytes(data[:-20] + flip + data[-19:])
    else:
        delta.write_bytes(data[:-40] + b"\n" + data[last:])  # the cut line, then it whole
    torn = ingest(src, out.parent / "probe", jobs=1)  # (a look at what loading gives)
    assert torn.ok
    cache = IngestCache.load(main)
    assert cache.problem is None and cache.rewrite and cache.dirty
    run = _as_full_run(src, out, tmp_path)
    assert run.notices == []
    assert _cached(run, CHANGED) is (damage == "cut-then-appended")
    assert delta.read_bytes() == b""  # merged: the main file holds everything
    run = _as_full_run(src, out, tmp_path)
    assert run.counts()["cached"] == run.counts()["files"]


@pytest.mark.parametrize("payload, why", [
    (b"\xc1", "not a valid cache"),  # not msgpack
    (msgpack.packb([7, "x"]), "expected shape"),  # a record of no kind
    (msgpack.packb([1, "k", None, [], None, ["a"], [], [], "not bytes"]), "expected shape"),
    (msgpack.packb([0, ["a"], [1], [2], [3]]), "expected shape"),  # a column missing
    # (format 6's record of source stats: no change time)
    (msgpack.packb([0, ["a"], [1], [2], ["0" * 64]]), "expected shape"),
    (b"\xdd\xff\xff\xff\xff", "not a valid cache"),  # a 4-billion-slot array claim
])
def test_a_forged_delta_line_is_one_line_and_a_full_run(tmp_path: Path, payload: bytes,
                                                        why: str) -> None:
    """A line with a right digest and binding (not a crash: written on purpose) whose records
    do not fit: the whole cache is ignored with one line, and rebuilt."""
    src, out = _settled(tmp_path)
    main, delta = _files(out)
    with delta.open("ab") as f:
        f.write(_line(main, payload))
    run = _as_full_run(src, out, tmp_path)
    (line,) = run.notices
    assert "cache-unreadable" in line and why in line and "\n" not in line
    assert delta.name in line and run.counts()["cached"] == 0
    assert delta.read_bytes() == b""
    run = _as_full_run(src, out, tmp_path)
    assert run.notices == [] and run.counts()["cached"] == run.counts()["files"]


def test_a_delta_line_with_entries_of_its_own_is_used(tmp_path: Path) -> None:
    """(The forged lines above fail for what they hold, not for how they are made.)"""
    _, out = _settled(tmp_path)
    main, delta = _files(out)
    delta.write_bytes(_line(main, msgpack.packb([0, ["x.json"], [1], [2], [3], ["0" * 64]])))
    cache = IngestCache.load(main)
    assert cache.problem is None and not cache.rewrite
    assert cache.stat["x.json"] == (1, 2, 3, "0" * 64)


def test_an_oversized_delta_is_one_line_and_rebuilt(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    src, out = _settled(tmp_path)
    _, delta = _files(out)
    _change(src, "one")
    ingest(src, out, jobs=1)
    assert delta.stat().st_size > 64
    monkeypatch.setattr(cache_mod, "MAX_DELTA_BYTES", 64)
    run = _as_full_run(src, out, tmp_path)
    (line,) = run.notices
    assert "64" in line and delta.name in line and "rebuilt" in line and "\n" not in line
    assert run.counts()["cached"] == 0 and delta.read_bytes() == b""


def test_a_delta_made_against_another_main_file_is_not_used(tmp_path: Path) -> None:
    """A merge by another run replaced the main file: the delta's lines (made against the
    one before) are not used, whatever they hold."""
    src, out = _settled(tmp_path)
    main, delta = _files(out)
    _change(src, "one")
    ingest(src, out, jobs=1)
    assert _lines(delta)
    copy = main.with_name("copy")
    shutil.copy2(main, copy)
    os.replace(copy, main)  # the same bytes, another file (inode)
    run = _as_full_run(src, out, tmp_path)
    assert run.notices == [] and not _cached(run, CHANGED)
    assert delta.read_bytes() == b""


def test_an_append_after_a_merge_by_another_run_is_not_used(tmp_path: Path) -> None:
    """Run A read the cache, run B merged, then A appends: A's line is bound to the main
    file A read, so no one uses it (its entries are looked at again)."""
    _, out = _settled(tmp_path)
    main, _ = _files(out)
    a = IngestCache.load(main)
    assert not a.rewrite
    IngestCache.load(main).merge()  # run B
    a.stat["late.json"] = (1, 2, 3, "0" * 64)
    a.fresh[0].add("late.json")
    a.dirty = True
    a.save()  # appended, bound to the file A read
    again = IngestCache.load(main)
    assert again.problem is None and again.rewrite and "late.json" not in again.stat


def test_records_for_removed_sources_stay_until_a_merge(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    src, out = _settled(tmp_path)
    main, delta = _files(out)
    _change(src, "one")
    ingest(src, out, jobs=1)  # the changed source's entries: in the delta
    (src / CHANGED).unlink()
    monkeypatch.setattr(cache_mod, "WASTE_FRACTION", 0)  # never merged for waste
    before = main.read_bytes()
    _as_full_run(src, out, tmp_path)
    assert main.read_bytes() == before  # nothing new to write: nothing written
    assert CHANGED in IngestCache.load(main).stat  # still on disk, unused
    monkeypatch.setattr(cache_mod, "WASTE_FRACTION", 10**6)  # any waste merges
    run = _as_full_run(src, out, tmp_path)
    assert run.notices == [] and delta.read_bytes() == b""
    assert CHANGED not in IngestCache.load(main).stat  # dropped by the merge


def test_the_default_waste_bound(tmp_path: Path) -> None:
    """More than a quarter of the entries on disk unused: merged; fewer: left."""
    src, out = _settled(tmp_path)
    main, _ = _files(out)
    cache = IngestCache.load(main)
    entries = cache.on_disk
    assert entries == len(cache.stat) + len(cache.results) + len(cache.files)
    names = sorted(p.name for p in src.iterdir())
    (src / names[0]).unlink()  # a few entries (its stat, its result, its files)
    before = main.read_bytes()
    ingest(src, out, jobs=1)
    assert main.read_bytes() == before
    for name in names[1:6]:  # most of them
        (src / name).unlink()
    ingest(src, out, jobs=1)
    assert main.read_bytes() != before
    cache = IngestCache.load(main)
    assert cache.on_disk == len(cache.stat) + len(cache.results) + len(cache.files)


def test_the_delta_is_merged_when_it_would_outgrow_its_room(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    src, out = _settled(tmp_path)
    main, delta = _files(out)
    size = main.stat().st_size
    monkeypatch.setattr(cache_mod, "DELTA_FLOOR", 0)
    monkeypatch.setattr(cache_mod, "DELTA_FRACTION", size)  # room: a byte
    before = main.read_bytes()
    _change(src, "one")
    run = _as_full_run(src, out, tmp_path)
    assert not _cached(run, CHANGED)
    assert main.read_bytes() != before and delta.read_bytes() == b""
    monkeypatch.undo()
    monkeypatch.setattr(cache_mod, "RACY_NS", 0)
    _change(src, "two")
    before = main.read_bytes()
    _as_full_run(src, out, tmp_path)
    assert main.read_bytes() == before and len(_lines(delta)) == 1


def test_an_older_format_cache_is_ignored_and_rebuilt(tmp_path: Path) -> None:
    """A cache of format 8 (no SHA-256 of its region of packed outcomes): ignored silently
    (a full run), then written anew; the delta lines that were bound to it are not used
    either."""
    src, out = _settled(tmp_path)
    main, delta = _files(out)
    IngestCache.load(main).merge()
    unpacker = msgpack.Unpacker(raw=False)
    unpacker.feed(main.read_bytes())
    records = list(unpacker)
    assert records[0] == [10, __version__] == [cache_mod.CACHE_FORMAT, __version__]
    records[0] = [8, __version__]
    assert records[1][0] == 3
    records[1] = [3, records[1][2]]  # (format 8's region: no digest)
    main.write_bytes(b"".join(msgpack.packb(r, use_bin_type=True) for r in records))
    delta.write_bytes(_line(main, msgpack.packb([0, ["x.json"], [1], [2], [3], ["0" * 64]]))
                      .replace(b"10:", b"8:", 1))
    run = _as_full_run(src, out, tmp_path)
    assert run.notices == [] and run.counts()["cached"] == 0
    assert main.read_bytes()[:2] == msgpack.packb([10, __version__])[:2]
    assert delta.read_bytes() == b""
    assert "x.json" not in IngestCache.load(main).stat


def _append_many(main: str, who: int, n: int) -> None:
    for i in range(n):
        cache = IngestCache.load(Path(main))
        key = f"{who}-{i}"
        cache.results[key] = (None, [], None, [], [], [], os.urandom(40_000) + key.encode())
        cache.used.add(key)
        cache.fresh[1].add(key)
        cache.dirty = True
        cache.save()


def test_concurrent_appends_stay_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two processes appending at once (each line ~55 KB: more than a pipe's atomic write):
    every line whole, in one piece, all used."""
    main = tmp_path / "c" / "ingest.msgpack"
    main.parent.mkdir()
    IngestCache(main).merge()
    monkeypatch.setattr(cache_mod, "DELTA_FLOOR", 64 << 20)  # (never merged here)
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_append_many, args=(str(main), who, 12)) for who in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    cache = IngestCache.load(main)
    assert cache.problem is None and not cache.rewrite
    assert len(_lines(delta_path(main))) == 24
    assert sorted(cache.results) == sorted(f"{w}-{i}" for w in range(2) for i in range(12))
    assert all(v[6].endswith(k.encode()) for k, v in cache.results.items())


@pytest.mark.parametrize("column", range(2, 9))
def test_a_result_column_of_another_length_is_one_line_and_a_full_run(tmp_path: Path,
                                                                      column: int) -> None:
    """Results are stored as columns: one a row shorter than the keys is not of the shape."""
    src, out = _settled(tmp_path)
    main, _ = _files(out)
    IngestCache.load(main).merge()
    unpacker = msgpack.Unpacker(raw=False)
    unpacker.feed(main.read_bytes())
    records = list(unpacker)
    result = next(r for r in records if r[0] == 1)
    assert len(result[1]) > 1
    del result[column][-1]
    main.write_bytes(b"".join(msgpack.packb(r, use_bin_type=True) for r in records))
    (line,) = _as_full_run(src, out, tmp_path).notices
    assert "cache-unreadable" in line and "expected shape" in line


def test_the_cache_folder_tells_git_to_ignore_it(tmp_path: Path) -> None:
    """A catalog kept in git never commits the cache by accident: its folder holds a
    ``.gitignore`` of its own (written with the cache when missing; one already there is
    kept byte for byte)."""
    _, out = _settled(tmp_path)
    main, _ = _files(out)
    marker = main.parent / ".gitignore"
    assert marker.read_bytes() == cache_mod.GITIGNORE
    if shutil.which("git") is not None:
        subprocess.run(["git", "init", "-q", str(out)], check=True)
        shown = subprocess.run(["git", "-C", str(out), "status", "--porcelain",
                                "--untracked-files=all"], capture_output=True, text=True,
                               check=True).stdout
        assert shown and ".risutools-cache" not in shown  # (the documents are listed)
    mine = b"# mine\n!ingest.msgpack\n"
    marker.write_bytes(mine)
    IngestCache.load(main).merge()
    assert marker.read_bytes() == mine
    marker.unlink()
    IngestCache.load(main).merge()
    assert marker.read_bytes() == cache_mod.GITIGNORE
