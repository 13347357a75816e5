"""Staged writes (write + fsync early, rename at the end) and batched tasks of ingest."""

from __future__ import annotations

import json
import os
import shutil
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from risutools.catalog import pool, render, sourcefile, staging
from risutools.catalog.ingest import ingest
from risutools.errors import WriteConflict
from risutools.formats.risum import write_risum
from risutools.fsio import commit_staged, discard_staged, stage_write, sweep_temp_files

TMP = ".risutools-tmp-"


def _temps(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob("*") if TMP in p.name)


def _risum(path: Path, name: str, assets: int = 0) -> None:
    mod = {
        "name": name,
        "description": "staging test",
        "id": "00000000-0000-4000-8000-000000000001",
        "lorebook": [{"key": "k", "content": name, "comment": "c", "mode": "normal"}],
        "assets": [[f"a{i}", "", "png"] for i in range(assets)],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(write_risum(mod, [os.urandom(50 + i) for i in range(assets)]))


# -- fsio: stage / commit / discard ------------------------------------------------------


def test_staged_bytes_are_not_in_place_until_committed(tmp_path: Path) -> None:
    target = tmp_path / "doc.json"
    staged = stage_write(target, b"new\n")
    assert not target.exists()
    assert _temps(tmp_path) and (tmp_path / _temps(tmp_path)[0]).read_bytes() == b"new\n"
    # a sweep by this process leaves a staged file alone (a write in flight)
    assert sweep_temp_files(tmp_path) == []
    commit_staged(staged, expect_absent=True)
    assert target.read_bytes() == b"new\n" and _temps(tmp_path) == []
    with pytest.raises(ValueError):
        commit_staged(staged)


def test_discard_removes_the_temp_file_and_nothing_else(tmp_path: Path) -> None:
    target = tmp_path / "doc.json"
    target.write_bytes(b"old\n")
    staged = stage_write(target, b"new\n")
    discard_staged(staged)
    discard_staged(staged)  # twice is harmless
    assert target.read_bytes() == b"old\n" and _temps(tmp_path) == []
    with pytest.raises(ValueError):
        commit_staged(staged)


def test_a_lost_compare_and_swap_removes_the_staged_file(tmp_path: Path) -> None:
    target = tmp_path / "doc.json"
    staged = stage_write(target, b"mine\n")
    target.write_bytes(b"someone else\n")  # appeared after staging
    with pytest.raises(WriteConflict):
        commit_staged(staged, expect_absent=True)
    assert target.read_bytes() == b"someone else\n" and _temps(tmp_path) == []
    staged = stage_write(target, b"mine\n")
    with pytest.raises(WriteConflict):
        commit_staged(staged, expect_sha256="0" * 64)
    assert target.read_bytes() == b"someone else\n" and _temps(tmp_path) == []


def test_commit_keeps_the_mode_the_target_has_at_commit_time(tmp_path: Path) -> None:
    import hashlib

    target = tmp_path / "doc.json"
    target.write_bytes(b"old\n")
    os.chmod(target, 0o644)
    staged = stage_write(target, b"new\n")
    os.chmod(target, 0o640)  # changed between staging and commit
    commit_staged(staged, expect_sha256=hashlib.sha256(b"old\n").hexdigest())
    assert target.read_bytes() == b"new\n"
    assert (os.stat(target).st_mode & 0o777) == 0o640


# -- ingest: no temp file survives whatever the decision ------------------------------


def test_unused_staged_documents_leave_no_temp_files(tmp_path: Path) -> None:
    src, out = tmp_path / "src", tmp_path / "cat"
    for i in range(6):
        _risum(src / f"{100 + i}_m{i}.risum", f"Module {i}", assets=i % 2)
    shutil.copy(src / "100_m0.risum", src / "900_m0-copy.risum")  # a duplicate: staged, unused
    first = ingest(src, out, jobs=1, use_cache=False)
    assert first.ok and first.counts()["written"] == 6 and _temps(out) == []
    before = {p.name: p.read_bytes() for p in out.glob("*.json")}
    # unchanged documents: not staged again, not rewritten
    again = ingest(src, out, jobs=2, use_cache=False)
    assert again.counts()["unchanged"] == 6 and _temps(out) == []
    assert {p.name: p.read_bytes() for p in out.glob("*.json")} == before
    # a reviewed document and an unreadable one are kept byte for byte
    names = sorted(before)
    reviewed, broken = out / names[0], out / names[1]
    doc = json.loads(reviewed.read_text(encoding="utf-8"))
    doc["provenance"]["review_status"] = "approved"
    reviewed.write_text(json.dumps(doc), encoding="utf-8")
    broken.write_bytes(b"<<<<<<< HEAD\n")
    kept = {reviewed.name: reviewed.read_bytes(), broken.name: broken.read_bytes()}
    third = ingest(src, out, jobs=1, use_cache=False, lang="ko")  # every document changes
    assert len(third.kept_reviewed) == 1 and len(third.kept_unreadable) == 1
    assert third.counts()["written"] == 4
    assert {n: (out / n).read_bytes() for n in kept} == kept
    assert _temps(out) == []


def test_a_staging_failure_is_one_line_and_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from risutools.errors import RisuError

    src, out = tmp_path / "src", tmp_path / "cat"
    for i in range(3):
        _risum(src / f"{100 + i}_m{i}.risum", f"Module {i}")

    def full(target: Path, data: bytes, **_: Any) -> Any:
        raise OSError(28, "No space left on device", str(target))

    monkeypatch.setattr(staging, "stage_write", full)
    with pytest.raises(RisuError) as err:
        ingest(src, out, jobs=1, use_cache=False)
    assert err.value.code == "unwritable" and "No space left" in err.value.why
    assert "\n" not in err.value.one_line() and "2 more" in err.value.why
    assert list(out.glob("*.json")) == [] and _temps(out) == []


@pytest.mark.parametrize("where", ["stage", "commit", "cached"])
def test_a_write_failure_that_names_no_file_still_says_where(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """A full disk's ENOSPC (or EIO, EDQUOT) from ``write()`` carries no file name: the
    line names the first document not written, in id order, so the user knows where
    (before: ``unwritable: cannot write: No space left on device (and 2 more)``, no path).
    The forms: staging the temp file, committing it, writing a cached source's document."""
    from risutools.catalog import ingest_write
    from risutools.errors import RisuError

    src, out = tmp_path / "src", tmp_path / "cat"
    for i in range(3):
        _risum(src / f"{100 + i}_m{i}.risum", f"Module {i}")
    if where == "cached":
        from risutools.catalog import cache

        monkeypatch.setattr(cache, "RACY_NS", 0)  # (sources just written: recorded all the same)
        ingest(src, out, jobs=1)
        for p in out.glob("*.json"):
            p.unlink()

    def full(*_: Any, **__: Any) -> Any:
        raise OSError(28, "No space left on device")

    if where == "stage":
        monkeypatch.setattr(staging, "stage_write", full)
    elif where == "commit":
        monkeypatch.setattr(ingest_write, "commit_staged", full)
    else:
        monkeypatch.setattr(ingest_write, "atomic_write", full)
    with pytest.raises(RisuError) as err:
        ingest(src, out, jobs=1, use_cache=where == "cached")
    line = err.value.one_line()
    assert err.value.code == "unwritable" and "No space left" in line and "\n" not in line
    assert err.value.path is not None and err.value.path.endswith("module.risu.100.module-0.json")
    assert line.startswith(str(out / "module.risu.100.module-0.json") + ": ")
    assert "2 more" in line and _temps(out) == []


def test_staged_documents_are_made_durable_before_any_rename(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With syncfs: temp files without an fsync each, then one syncfs, then the renames;
    without it: one fsync per temp file.  Either way nothing is renamed before it is
    durable."""
    import risutools.fsio as fsio

    src, out = tmp_path / "src", tmp_path / "cat"
    for i in range(3):
        _risum(src / f"{100 + i}_m{i}.risum", f"Module {i}")
    events: list[tuple[str, str]] = []  # (what, the temp file it concerns)
    real_fsync, real_replace, real_link = os.fsync, os.replace, os.link

    def fsync(fd: int) -> None:
        where = os.readlink(f"/proc/self/fd/{fd}")
        events.append(("fsync-dir" if os.path.isdir(where) else "fsync", where))
        real_fsync(fd)

    def link(a: Any, b: Any, **kw: Any) -> None:
        events.append(("rename", os.fspath(a)))
        real_link(a, b, **kw)

    def replace(a: Any, b: Any) -> None:
        events.append(("rename", os.fspath(a)))
        real_replace(a, b)

    def syncfs(path: Any) -> None:
        events.append(("syncfs", os.fspath(path)))

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "link", link)
    monkeypatch.setattr(os, "replace", replace)
    if fsio.syncfs_available():
        monkeypatch.setattr(staging, "sync_filesystem", syncfs)
        ingest(src, out, jobs=1, use_cache=False)
        docs = [e for e, w in events if e != "fsync-dir" and "/facts/" not in w]
        assert docs == ["syncfs", "rename", "rename", "rename"]
        assert len(list(out.glob("*.json"))) == 3
    events.clear()
    shutil.rmtree(out)
    monkeypatch.setattr(fsio, "_syncfs", False)  # a kernel without syncfs(2)
    ingest(src, out, jobs=1, use_cache=False)
    # each temp file is fsynced (in a staging thread) before its own rename
    renamed = [(i, tmp) for i, (e, tmp) in enumerate(events)
               if e == "rename" and "/facts/" not in tmp]  # the documents' (facts/ apart)
    assert len(renamed) == 3
    for i, tmp in renamed:
        assert ("fsync", os.path.realpath(tmp)) in events[:i]
    assert len(list(out.glob("*.json"))) == 3


def test_a_failed_syncfs_is_one_line_and_renames_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import risutools.fsio as fsio
    from risutools.errors import RisuError

    if not fsio.syncfs_available():
        pytest.skip("no syncfs(2) here: each staged file is fsynced instead")
    src, out = tmp_path / "src", tmp_path / "cat"
    for i in range(3):
        _risum(src / f"{100 + i}_m{i}.risum", f"Module {i}")

    def broken(path: Any) -> None:
        raise OSError(5, "Input/output error", str(path))

    monkeypatch.setattr(staging, "sync_filesystem", broken)
    with pytest.raises(RisuError) as err:
        ingest(src, out, jobs=1, use_cache=False)
    assert "Input/output error" in err.value.one_line() and "\n" not in err.value.one_line()
    assert list(out.glob("*.json")) == [] and _temps(out) == []


def test_sync_filesystem_flushes_or_says_why(tmp_path: Path) -> None:
    import risutools.fsio as fsio

    if fsio.syncfs_available():
        fsio.sync_filesystem(tmp_path)  # returns: the kernel flushed it
        with pytest.raises(OSError):
            fsio.sync_filesystem(tmp_path / "missing")


# -- documents staged where they are rendered (this process or a worker) ---------------


def test_a_worker_stages_its_documents_named_after_the_collecting_process(
    tmp_path: Path,
) -> None:
    import pickle

    src, out = tmp_path / "src", tmp_path / "cat"
    _risum(src / "100_m.risum", "Module")
    out.mkdir()
    spec = sourcefile.StageSpec(os.fspath(out), owner=424242, sync=False)
    got = sourcefile.process_file(str(src / "100_m.risum"), "100_m.risum", "en", None, stage=spec)
    assert got.error is None and got.staged is not None and len(got.staged) == 1
    tmp = got.staged[0]
    assert isinstance(tmp, str) and f"{TMP}424242-" in Path(tmp).name
    assert Path(tmp).parent == out and got.rendered == [""]  # the text stays in the file
    assert Path(tmp).read_text(encoding="utf-8") == render.render(got.documents[0], False)
    assert not list(out.glob("*.json"))  # nothing in place yet
    assert pickle.loads(pickle.dumps(got)).staged == got.staged  # travels back from a worker
    # the same document already in place: nothing staged, the text kept for the compare
    target = out / f"{render.safe_name(got.documents[0]['component_id'])}.json"
    target.write_text(render.render(got.documents[0], False), encoding="utf-8")
    again = sourcefile.process_file(str(src / "100_m.risum"), "100_m.risum", "en", None, stage=spec)
    assert again.staged == [None] and again.rendered == [target.read_text(encoding="utf-8")]


def test_worker_staged_documents_are_durable_before_any_rename(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """-j 2: the workers write the temp files; the collecting process flushes them with one
    syncfs while no document is in place yet, then renames them."""
    import risutools.fsio as fsio

    if not fsio.syncfs_available():
        pytest.skip("no syncfs(2) here: each staged file is fsynced by its worker")
    src, out = tmp_path / "src", tmp_path / "cat"
    for i in range(4):
        _risum(src / f"{100 + i}_m{i}.risum", f"Module {i}")
    seen: list[tuple[list[str], list[str]]] = []

    def syncfs(path: Any) -> None:
        seen.append((_temps(out), sorted(p.name for p in out.glob("*.json"))))

    monkeypatch.setattr(staging, "sync_filesystem", syncfs)
    result = ingest(src, out, jobs=2, use_cache=False)
    assert result.ok and result.counts()["written"] == 4
    assert len(seen) == 1
    temps, docs = seen[0]
    assert len(temps) == 4 and docs == []
    assert all(f"{TMP}{os.getpid()}-" in t for t in temps)  # named after this process
    assert _temps(out) == [] and len(list(out.glob("*.json"))) == 4


def test_what_a_lost_worker_staged_is_removed_at_the_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A temp file a worker wrote but never reported (it died) is named after this process:
    the end of the run removes it."""
    src, out = tmp_path / "src", tmp_path / "cat"
    for i in range(3):
        _risum(src / f"{100 + i}_m{i}.risum", f"Module {i}")
    real = sourcefile._stage_documents

    def leaky(outcome: Any, spec: Any) -> None:
        real(outcome, spec)
        stage_write(Path(spec.folder) / "lost.json", b"{}", owner=spec.owner)  # unreported

    monkeypatch.setattr(sourcefile, "_stage_documents", leaky)
    result = ingest(src, out, jobs=2, use_cache=False)
    assert result.ok and result.counts()["written"] == 3
    assert _temps(out) == [] and not (out / "lost.json").exists()


# -- batched tasks ---------------------------------------------------------------------


def test_batches_cover_every_file_once_largest_first() -> None:
    todo = [(Path(f"/s/{i}"), f"{i}", size) for i, size in
            enumerate([10, 5_000_000, 40 << 20, 3, 7, 1 << 20] * 50)]
    batches = pool.batches(todo, workers=2)
    flat = [item for b in batches for item in b]
    assert sorted(flat) == sorted(todo)
    assert [t[2] for t in flat] == sorted((t[2] for t in todo), reverse=True)
    assert len(batches) >= 16  # at least ~8 tasks a worker
    for b in batches:
        assert len(b) <= pool.BATCH_FILES
        assert len(b) == 1 or sum(t[2] for t in b) <= pool.BATCH_BYTES
    assert pool.batches([], workers=2) == []


class _Dying(ThreadPoolExecutor):
    """An executor whose every task fails, as if its worker died."""

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Future[Any]:
        def die() -> Any:
            raise RuntimeError("worker lost")

        return super().submit(die)


def test_a_failed_task_reports_each_of_its_files(tmp_path: Path) -> None:
    src = tmp_path / "src"
    for i in range(5):
        _risum(src / f"{100 + i}_m{i}.risum", f"Module {i}")
    with _Dying(2) as pool:
        result = ingest(src, tmp_path / "cat", executor=pool, use_cache=False)
    assert not result.ok and len(result.failures) == 5
    assert all("worker-failed" in (s.error or "") and "worker lost" in (s.error or "")
               for s in result.failures)
    assert sorted(s.path for s in result.failures) == [f"{100 + i}_m{i}.risum"
                                                       for i in range(5)]


@pytest.mark.parametrize("cid", [
    "module.risu.100.a-b_c", "Module.RISU.100.X", "a/b\\c d", "..hidden..", "...", "",
    "한국어", "\u0130stanbul", "tab\tnew\nline", "x" * 300,
])
def test_safe_names_keep_only_lowercase_ascii_digits_dot_dash_underscore(cid: str) -> None:
    allowed = set("abcdefghijklmnopqrstuvwxyz0123456789.-_")
    want = "".join(c if c in allowed else "_" for c in cid.lower()).strip(".") or "component"
    assert render.safe_name(cid) == want
