"""The one write path (risutools.fsio) and what ingest does with documents it cannot read."""

from __future__ import annotations

import hashlib
import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from harness import ROOT, run_cli

from risutools.catalog.ingest import NDJSON_NAME, ingest
from risutools.errors import RisuError, WriteConflict
from risutools.formats.risum import write_risum
from risutools.fsio import (
    LOCK_NAME,
    append_line,
    atomic_write,
    display_path,
    sweep_temp_files,
    write_lock,
)

ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, cwd=cwd)


def sha(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


def _risum(path: Path, name: str, text: str = "hello") -> Path:
    mod = {
        "name": name,
        "description": "test module",
        "id": "00000000-0000-4000-8000-000000000001",
        "lorebook": [{"key": "k", "content": text, "comment": "c", "mode": "normal"}],
        "assets": [],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(write_risum(mod, []))
    return path


def _temps(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob("*") if ".risutools-tmp-" in p.name)


# ---- atomic_write ------------------------------------------------------------------


def test_conflict_message_and_nothing_changed(tmp_path: Path) -> None:
    p = tmp_path / "d.json"
    atomic_write(p, b"one", expect_absent=True)
    p.write_bytes(b"theirs")
    with pytest.raises(WriteConflict) as exc:
        atomic_write(p, b"mine", expect_sha256=sha(b"one"))
    line = exc.value.one_line()
    assert "changed since you read it" in line and "\n" not in line and str(p) in line
    assert p.read_bytes() == b"theirs"
    with pytest.raises(WriteConflict) as exc2:
        atomic_write(p, b"mine", expect_absent=True)
    assert "changed since you read it" in exc2.value.one_line()
    p.unlink()
    with pytest.raises(WriteConflict) as exc3:
        atomic_write(p, b"mine", expect_sha256=sha(b"theirs"))
    assert "changed since you read it" in exc3.value.one_line() and not p.exists()
    assert _temps(tmp_path) == []


def test_mode_kept_on_rewrite_and_umask_for_new_files(tmp_path: Path) -> None:
    old = os.umask(0o027)
    try:
        new = tmp_path / "new.json"
        atomic_write(new, b"x")
        assert stat.S_IMODE(new.stat().st_mode) == 0o640  # 0o666 less the umask, not 0o600
        cas = tmp_path / "cas.json"
        atomic_write(cas, b"x", expect_absent=True)
        assert stat.S_IMODE(cas.stat().st_mode) == 0o640
        append_line(tmp_path / "log.ndjson", b"{}")
        assert stat.S_IMODE((tmp_path / "log.ndjson").stat().st_mode) == 0o640
        os.umask(0o002)
        shared = tmp_path / "shared.json"
        atomic_write(shared, b"x")
        assert stat.S_IMODE(shared.stat().st_mode) == 0o664
    finally:
        os.umask(old)
    for mode in (0o644, 0o664, 0o600, 0o444, 0o755):
        os.chmod(new, mode)
        data = new.read_bytes()
        atomic_write(new, data + b"+", expect_sha256=sha(data))
        assert stat.S_IMODE(new.stat().st_mode) == mode
        atomic_write(new, data + b"++")  # a plain write keeps it too
        assert stat.S_IMODE(new.stat().st_mode) == mode


def test_stale_temp_files_removed_live_ones_kept(tmp_path: Path) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    dead_pid = int(dead.stdout)
    stale = tmp_path / f".d.json.risutools-tmp-{dead_pid}-0123abcd"
    live = tmp_path / f".d.json.risutools-tmp-{os.getppid()}-0123abcd"  # our parent runs
    other = tmp_path / ".d.json.risutools-tmp-x"  # not our pattern: never touched
    for p in (stale, live, other):
        p.write_bytes(b"partial")
    assert sweep_temp_files(tmp_path) == [stale]
    assert not stale.exists() and live.exists() and other.exists()
    # the first write into a folder sweeps it too (in a fresh process)
    stale.write_bytes(b"partial")
    target = str(tmp_path / "d.json")
    code = f"from risutools.fsio import atomic_write; atomic_write({target!r}, b'x')"
    subprocess.run([sys.executable, "-c", code], env=ENV, check=True)
    assert not stale.exists() and live.exists()


def test_lock_is_reentrant_and_excludes_other_processes(tmp_path: Path) -> None:
    p = tmp_path / "d.json"
    atomic_write(p, b"one")
    code = (
        "import sys; from risutools.fsio import write_lock\n"
        "try:\n"
        f"    with write_lock({str(p)!r}, timeout=0.2): pass\n"
        "except Exception as e: print(e); sys.exit(3)\n"
    )
    with write_lock(p):
        atomic_write(p, b"two", expect_sha256=sha(b"one"))  # nested: no deadlock
        r = subprocess.run([sys.executable, "-c", code], env=ENV, capture_output=True,
                           text=True, check=False)
        assert r.returncode == 3 and "locked" in r.stdout
    r = subprocess.run([sys.executable, "-c", code], env=ENV, capture_output=True, text=True,
                       check=False)
    assert r.returncode == 0, r.stdout
    assert (tmp_path / LOCK_NAME).is_file()


# ---- append_line ---------------------------------------------------------------------


def test_append_line_appends_only_and_cas(tmp_path: Path) -> None:
    log = tmp_path / "transitions.ndjson"
    assert append_line(log, b'{"n":1}') == 0
    first = log.read_bytes()
    assert append_line(log, b'{"n":2}\n', expect_size=len(first)) == len(first)
    assert log.read_bytes() == b'{"n":1}\n{"n":2}\n'
    with pytest.raises(WriteConflict) as exc:
        append_line(log, b'{"n":3}', expect_size=len(first))
    assert "changed since you read it" in exc.value.one_line()
    with pytest.raises(WriteConflict):
        append_line(log, b'{"n":3}', expect_sha256=sha(first))
    append_line(log, b'{"n":3}', expect_sha256="sha256:" + sha(log.read_bytes()))
    with pytest.raises(ValueError):
        append_line(log, b"two\nlines")
    assert log.read_bytes() == b'{"n":1}\n{"n":2}\n{"n":3}\n'


def test_append_line_torn_tail(tmp_path: Path) -> None:
    log = tmp_path / "transitions.ndjson"
    log.write_bytes(b'{"n":1}\n{"n":2')  # a write cut short
    with pytest.raises(RisuError) as exc:
        append_line(log, b'{"n":3}')
    assert exc.value.code == "torn-line" and "\n" not in exc.value.one_line()
    assert log.read_bytes() == b'{"n":1}\n{"n":2'
    assert append_line(log, b'{"n":3}', torn_tail="newline") == len(b'{"n":1}\n{"n":2\n')
    assert log.read_bytes() == b'{"n":1}\n{"n":2\n{"n":3}\n'


def test_append_line_refuses_non_regular(tmp_path: Path) -> None:
    (tmp_path / "dir.ndjson").mkdir()
    with pytest.raises((RisuError, OSError)):
        append_line(tmp_path / "dir.ndjson", b"{}")
    target = tmp_path / "real.ndjson"
    target.write_bytes(b"")
    (tmp_path / "link.ndjson").symlink_to(target)
    with pytest.raises(OSError):
        append_line(tmp_path / "link.ndjson", b"{}")
    assert target.read_bytes() == b""


def test_display_path_escapes_non_utf8() -> None:
    name = os.fsdecode(b"\xc7\xd1\xb1\xdb.risum")  # "한글" in CP949
    assert display_path(name) == "\\xc7\\xd1\\xb1\\xdb.risum"
    assert display_path("한글.risum") == "한글.risum"


# ---- ingest: documents it cannot read are kept --------------------------------------


def _one_source(tmp: Path, text: str = "hello") -> Path:
    src = tmp / "src"
    _risum(src / "101_alpha.risum", "alpha", text)
    return src


def _doc_path(out: Path) -> Path:
    docs = [p for p in out.glob("*.json")]
    assert len(docs) == 1
    return docs[0]


BROKEN = {
    "merge-conflict": b'<<<<<<< HEAD\n{"a": 1}\n=======\n{"a": 2}\n>>>>>>> other\n',
    "trailing-comma": b'{"component_id": "x", "provenance": {"review_status": "approved"},}\n',
    "not-utf8": b'{"component_id": "x", "title": "\xff"}\n',
    "no-status": b'{"component_id": "x"}\n',
}


@pytest.mark.parametrize("kind", sorted(BROKEN))
def test_ingest_keeps_an_unreadable_json_document(tmp_path: Path, kind: str) -> None:
    src = _one_source(tmp_path)
    out = tmp_path / "cat"
    assert ingest(src, out, jobs=1).ok
    doc = _doc_path(out)
    doc.write_bytes(BROKEN[kind])
    _risum(src / "101_alpha.risum", "alpha", "changed text")
    r = cli("ingest", str(src), "-o", str(out), "-q")
    assert r.returncode == 1, r.stderr
    assert doc.read_bytes() == BROKEN[kind]
    result = ingest(src, out, jobs=1)
    assert not result.ok and len(result.kept_unreadable) == 1
    line = result.kept_unreadable[0]
    assert "\n" not in line and doc.name in line and "not written" in line
    assert doc.read_bytes() == BROKEN[kind]


def test_ingest_keeps_a_document_that_is_a_folder_or_link(tmp_path: Path) -> None:
    src = _one_source(tmp_path)
    out = tmp_path / "cat"
    ingest(src, out, jobs=1)
    doc = _doc_path(out)
    saved = doc.read_bytes()
    doc.unlink()
    doc.mkdir()
    r = cli("ingest", str(src), "-o", str(out), "-q", "--json")
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert any("not a regular file" in m for m in json.loads(r.stdout)["kept_unreadable"])
    doc.rmdir()
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_bytes(saved.replace(b"candidate", b"approved"))
    doc.symlink_to(elsewhere)
    _risum(src / "101_alpha.risum", "alpha", "changed")
    result = ingest(src, out, jobs=1)
    assert doc.is_symlink() and any("symbolic link" in m for m in result.kept_unreadable)


def test_ingest_replaces_a_candidate_and_keeps_a_reviewed_one(tmp_path: Path) -> None:
    src = _one_source(tmp_path)
    out = tmp_path / "cat"
    ingest(src, out, jobs=1)
    doc = _doc_path(out)
    first = doc.read_bytes()
    _risum(src / "101_alpha.risum", "alpha", "second text")
    result = ingest(src, out, jobs=1)
    assert result.ok and result.written == [doc.name] and doc.read_bytes() != first
    reviewed = doc.read_bytes().replace(b'"candidate"', b'"approved"', 1)
    doc.write_bytes(reviewed)
    _risum(src / "101_alpha.risum", "alpha", "third text")
    result = ingest(src, out, jobs=1)
    assert result.ok and len(result.kept_reviewed) == 1 and doc.read_bytes() == reviewed


def _ndjson_catalog(tmp: Path) -> tuple[Path, Path, list[bytes]]:
    src = tmp / "src"
    _risum(src / "101_alpha.risum", "alpha")
    _risum(src / "102_beta.risum", "beta")
    out = tmp / "cat"
    assert ingest(src, out, jobs=1, ndjson=True).ok
    lines = (out / NDJSON_NAME).read_bytes().split(b"\n")
    assert lines[-1] == b"" and len(lines) == 3
    return src, out, lines[:2]


def test_ndjson_u2028_line_is_not_torn_and_approved_kept(tmp_path: Path) -> None:
    src, out, (a, b) = _ndjson_catalog(tmp_path)
    doc = json.loads(a)
    doc["provenance"]["review_status"] = "approved"
    doc["projection"]["title"] = "line\u2028separator"
    approved = json.dumps(doc, ensure_ascii=False).encode("utf-8")
    assert "\u2028".encode() in approved
    (out / NDJSON_NAME).write_bytes(approved + b"\n" + b + b"\n")
    _risum(src / "101_alpha.risum", "alpha", "new")
    _risum(src / "102_beta.risum", "beta", "new")
    result = ingest(src, out, jobs=1, ndjson=True)
    assert result.ok, result.kept_unreadable
    got = (out / NDJSON_NAME).read_bytes().split(b"\n")
    assert got[0] == approved and got[1] != b and got[2] == b""
    assert result.kept_reviewed == [doc["component_id"]]


def test_ndjson_unreadable_line_and_stray_bytes_kept(tmp_path: Path) -> None:
    src, out, (a, b) = _ndjson_catalog(tmp_path)
    torn = a[: len(a) // 2] + b"\xff"  # a torn line that names its component
    raw = torn + b"\n" + b + b"\n"
    (out / NDJSON_NAME).write_bytes(raw)
    _risum(src / "101_alpha.risum", "alpha", "new")
    _risum(src / "102_beta.risum", "beta", "new")
    r = cli("ingest", str(src), "-o", str(out), "--ndjson", "--json")
    assert r.returncode == 1, r.stderr
    report = json.loads(r.stdout)
    [msg] = report["kept_unreadable"]
    assert "line 1" in msg and "not written" in msg
    got = (out / NDJSON_NAME).read_bytes()
    assert got.startswith(torn + b"\n")  # byte for byte, the \xff too
    assert got.split(b"\n")[1] != b and got.endswith(b"\n") and got.count(b"\n") == 2


def test_ndjson_line_of_unknown_component_leaves_the_file(tmp_path: Path) -> None:
    src, out, (a, b) = _ndjson_catalog(tmp_path)
    raw = a + b"\n" + b"{not json at all,\n" + b
    (out / NDJSON_NAME).write_bytes(raw)  # and no final newline
    _risum(src / "102_beta.risum", "beta", "new")
    result = ingest(src, out, jobs=1, ndjson=True)
    assert not result.ok and "line 2" in result.kept_unreadable[0]
    assert (out / NDJSON_NAME).read_bytes() == raw


def test_ndjson_duplicate_id_kept(tmp_path: Path) -> None:
    src, out, (a, b) = _ndjson_catalog(tmp_path)
    raw = a + b"\n" + b + b"\n" + b + b"\n"
    (out / NDJSON_NAME).write_bytes(raw)
    _risum(src / "102_beta.risum", "beta", "new")
    result = ingest(src, out, jobs=1, ndjson=True)
    assert not result.ok and "duplicate-id" in result.kept_unreadable[0]
    assert (out / NDJSON_NAME).read_bytes() == raw


# ---- ingest: names that are not UTF-8, OS errors ------------------------------------


def test_non_utf8_file_name(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    name = os.fsdecode(b"103_\xc7\xd1\xb1\xdb.risum")
    _risum(src / name, "hangul")
    _risum(src / "101_alpha.risum", "alpha")
    time.sleep(1.1)  # (a source changed less than a second before a run is not recorded)
    out = tmp_path / "cat"
    for fmt in ("--json", "-q", None):
        args = ["ingest", str(src), "-o", str(out)] + ([fmt] if fmt else [])
        r = cli(*args)
        assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
        if fmt == "--json":
            paths = [s["path"] for s in json.loads(r.stdout)["sources"]]
            assert "103_\\xc7\\xd1\\xb1\\xdb.risum" in paths
    assert (out / ".risutools-cache" / "ingest.msgpack").is_file()
    (src / os.fsdecode(b"104_\xc7\xd2.risum")).write_bytes(b"\x6f\x00broken")  # a bad one
    for fmt in ("--json", "-q", None):
        args = ["ingest", str(src), "-o", str(out)] + ([fmt] if fmt else [])
        r = cli(*args)
        assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
        shown = "104_\\xc7\\xd2.risum"
        if fmt == "--json":
            [bad] = [x for x in json.loads(r.stdout)["sources"] if x["status"] == "failed"]
            assert bad["path"] == shown and shown in bad["error"]
        else:
            assert shown in r.stderr
        assert "\ufffd" not in r.stdout + r.stderr and "\\udc" not in r.stdout + r.stderr
    (src / os.fsdecode(b"104_\xc7\xd2.risum")).unlink()
    result = ingest(src, out, jobs=1)
    assert result.ok and all(s.cached for s in result.sources)
    assert "103_\\xc7\\xd1\\xb1\\xdb.risum" in [s.path for s in result.sources]


def test_output_under_a_file_is_one_line(tmp_path: Path) -> None:
    src = _one_source(tmp_path)
    f = tmp_path / "afile"
    f.write_bytes(b"x")
    for out in (f / "cat", f):
        r = cli("ingest", str(src), "-o", str(out))
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert "internal error" not in r.stderr and "Traceback" not in r.stderr
    assert f.read_bytes() == b"x"


def test_unwritable_catalog_is_one_line(tmp_path: Path) -> None:
    src = _one_source(tmp_path)
    out = tmp_path / "cat"
    out.mkdir()
    (out / LOCK_NAME).mkdir()  # the lock cannot be made: as for a read-only folder
    r = cli("ingest", str(src), "-o", str(out))
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "unwritable" in r.stderr and "internal error" not in r.stderr


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_read_only_catalog_is_one_line(tmp_path: Path) -> None:
    src = _one_source(tmp_path)
    out = tmp_path / "cat"
    out.mkdir()
    out.chmod(0o555)
    try:
        r = cli("ingest", str(src), "-o", str(out))
    finally:
        out.chmod(0o755)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "unwritable" in r.stderr and "internal error" not in r.stderr


def test_ingest_leaves_no_temp_or_document_named_like_the_lock(tmp_path: Path) -> None:
    src = _one_source(tmp_path)
    out = tmp_path / "cat"
    ingest(src, out, jobs=1)
    names = sorted(p.name for p in out.iterdir())
    assert LOCK_NAME in names and _temps(out) == []
    r = cli("validate", str(out))
    assert r.returncode == 0, r.stdout + r.stderr


def test_notes_entry_that_is_a_folder_is_one_line(tmp_path: Path) -> None:
    src = _one_source(tmp_path)
    out = tmp_path / "cat"
    (out / "notes" / "x.yaml").mkdir(parents=True)
    r = cli("ingest", str(src), "-o", str(out))
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "x.yaml: not-a-file: is a folder" in r.stderr


def test_threads_of_one_process_lose_no_update(tmp_path: Path) -> None:
    """Read, add one, compare-and-swap; retry on a conflict: 8 threads x 25 increments."""
    from concurrent.futures import ThreadPoolExecutor

    counter = tmp_path / "n.txt"
    atomic_write(counter, b"0")
    conflicts = []

    def bump(_i: int) -> None:
        while True:
            raw = counter.read_bytes()
            try:
                atomic_write(counter, str(int(raw) + 1).encode(), expect_sha256=sha(raw),
                             sync_dir=False)
                return
            except WriteConflict:
                conflicts.append(1)

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(bump, range(200)))
    assert counter.read_bytes() == b"200"
    assert _temps(tmp_path) == []


def test_ndjson_catalog_that_is_a_fifo_is_kept_not_read(tmp_path: Path) -> None:
    src = _one_source(tmp_path)
    out = tmp_path / "cat"
    out.mkdir()
    os.mkfifo(out / NDJSON_NAME)  # reading it would block forever
    result = ingest(src, out, jobs=1, ndjson=True)
    assert not result.ok and "not a regular file" in result.kept_unreadable[0]
    assert stat.S_ISFIFO(os.lstat(out / NDJSON_NAME).st_mode)


def test_lock_file_writable_by_whoever_may_write_the_folder(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        shared = tmp_path / "shared"
        shared.mkdir()
        shared.chmod(0o2775)  # a team's catalog: group-writable
        p = shared / "d.json"
        atomic_write(p, b"1")
        atomic_write(p, b"2", expect_sha256=sha(b"1"))
        assert stat.S_IMODE((shared / LOCK_NAME).stat().st_mode) == 0o664
        private = tmp_path / "private"
        private.mkdir(mode=0o755)
        atomic_write(private / "d.json", b"1")
        atomic_write(private / "d.json", b"2", expect_sha256=sha(b"1"))
        assert stat.S_IMODE((private / LOCK_NAME).stat().st_mode) == 0o644
    finally:
        os.umask(old)


def test_replay_update_that_cannot_write_is_one_line(tmp_path: Path) -> None:
    seed = ROOT / "fixtures" / "documents" / "seed-000-context-cutter.json"
    doc = tmp_path / "c.json"
    doc.write_bytes(seed.read_bytes())
    (tmp_path / LOCK_NAME).mkdir()  # the folder's lock cannot be taken
    r = cli("replay", "run", str(doc), "-x", str(ROOT / "fixtures" / "replay" / "toggle.yaml"),
            "--update")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    # (what is in the way, named: the lock's name is a folder)
    assert f"{LOCK_NAME}: not-a-file: is a folder, not a file" in r.stderr, r.stderr
    assert "internal error" not in r.stderr
    assert doc.read_bytes() == seed.read_bytes()


@pytest.mark.parametrize("size", [0, 1, 65535, 65536, (1 << 20) - 1, 1 << 20, (3 << 20) + 7])
def test_streamed_digests_are_the_files_whatever_the_buffer(tmp_path: Path, size: int) -> None:
    """The streamed SHA-256 (a buffer sized from the file's size, at most 1 MiB) is the
    file's, small or spanning several buffers, and when the file is longer than said."""
    import hashlib

    from risutools.fsio import sha256_file, sha256_stream
    from risutools.safeio import sha256_regular

    data = bytes(range(256)) * (size // 256 + 1)
    p = tmp_path / "f"
    p.write_bytes(data[:size])
    want = hashlib.sha256(data[:size]).hexdigest()
    assert sha256_file(p) == want == sha256_regular(p, size + 1)
    with open(p, "rb", buffering=0) as f:
        assert sha256_stream(f, size=size // 3) == want  # (said shorter: read on all the same)


def _fsyncs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: calls.append(fd) or real(fd))
    return calls


def test_write_many_writes_each_file_durable_together(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from risutools import fsio

    writes = [(tmp_path / "out" / ("a" if i % 2 else "b") / f"f{i}.bin", b"x" * i)
              for i in range(200)]
    fsyncs = _fsyncs(monkeypatch)
    syncs: list[str] = []
    real = fsio.sync_filesystem
    monkeypatch.setattr(fsio, "sync_filesystem", lambda p: syncs.append(str(p)) or real(p))
    fsio.write_many(writes, expect_absent=True)
    assert all(p.read_bytes() == data for p, data in writes)
    assert not [p for p in tmp_path.rglob("*") if fsio.TMP_MARK in p.name]
    if fsio.syncfs_available():
        assert len(syncs) == 1 and len(fsyncs) <= 2  # (one syncfs; each folder once)
    else:
        assert len(fsyncs) <= len(writes) + 2


def test_write_many_stops_at_a_conflict_and_leaves_no_temp_file(tmp_path: Path) -> None:
    from risutools import fsio

    writes = [(tmp_path / f"f{i}.bin", b"new") for i in range(5)]
    writes[2][0].write_bytes(b"somebody's")
    with pytest.raises(WriteConflict):
        fsio.write_many(writes, expect_absent=True)
    assert [p.read_bytes() for p, _ in writes[:3]] == [b"new", b"new", b"somebody's"]
    assert not any(p.exists() for p, _ in writes[3:])
    assert not [p for p in tmp_path.iterdir() if fsio.TMP_MARK in p.name]


def test_unpack_of_many_assets_does_not_fsync_each(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two fsyncs an asset made a .risum of 65,536 empty frames (330 KB) take minutes."""
    from risutools.formats import rpack
    from risutools.formats.unpack import unpack
    from risutools.fsio import syncfs_available

    main = json.dumps({"type": "risuModule",
                       "module": {"name": "m", "id": "x", "description": ""}}).encode()
    n = 3000
    data = (b"\x6f\x00" + len(main).to_bytes(4, "little") + rpack.encode(main)
            + b"\x01\x00\x00\x00\x00" * n + b"\x00")
    src = tmp_path / "many.risum"
    src.write_bytes(data)
    fsyncs = _fsyncs(monkeypatch)
    unpack(src, tmp_path / "out")
    assert len(list((tmp_path / "out" / "assets").iterdir())) == n
    if syncfs_available():
        assert len(fsyncs) < 20


def test_append_line_refuses_a_file_of_several_names(tmp_path: Path) -> None:
    """An append changes the bytes under every name of the file: a log hard-linked to a
    file elsewhere is not appended to (its other name is left as it was)."""
    from risutools import fsio

    outside = tmp_path / "outside.ndjson"
    outside.write_bytes(b'{"a": 1}\n')
    log = tmp_path / "cat" / "transitions.ndjson"
    log.parent.mkdir()
    os.link(outside, log)
    with pytest.raises(RisuError) as err:
        fsio.append_line(log, b'{"b": 2}')
    assert err.value.code == "not-a-file" and "hard link" in err.value.why
    assert outside.read_bytes() == b'{"a": 1}\n'
    log.unlink()  # (a file of its own again: appended to)
    log.write_bytes(b'{"a": 1}\n')
    fsio.append_line(log, b'{"b": 2}')
    assert log.read_bytes() == b'{"a": 1}\n{"b": 2}\n'
