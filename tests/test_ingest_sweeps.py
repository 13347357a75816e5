"""Ingest's sweeps of the temp files a killed writer left (risutools.catalog.ingest_sweeps):
a catalog folder the cache recorded as swept, and unchanged since, is not listed again; any
change to it (a temp file made there, by anyone) lists it again, and a dead writer's temp
file is removed as it always was."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from harness import SOURCES

from risutools.catalog import cache as cache_mod
from risutools.catalog.ingest import ingest
from risutools.errors import RisuError
from risutools.fsio import TMP_MARK

FOLDERS = ("", ".risutools-cache", "facts")


@pytest.fixture(autouse=True)
def _no_racy_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    # (a folder changed less than RACY_NS before a run is not recorded: the tests run fast)
    monkeypatch.setattr(cache_mod, "RACY_NS", 0)


@pytest.fixture
def listed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The folders listed (``os.listdir``, what a sweep does), as absolute paths."""
    calls: list[str] = []
    real = os.listdir

    def listdir(path: str | bytes = ".") -> list[str] | list[bytes]:  # type: ignore[misc]
        calls.append(os.path.abspath(os.fsdecode(path)))
        return real(path)

    monkeypatch.setattr(os, "listdir", listdir)
    return calls


def _catalog_listed(calls: list[str], out: Path) -> set[str]:
    names = {os.path.abspath(out / f) if f else os.path.abspath(out): f or "."
             for f in FOLDERS}
    return {names[c] for c in calls if c in names}


def _files(out: Path) -> dict[str, bytes]:
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*"))
            if p.is_file() and ".risutools-cache" not in p.parts}


def _dead_pid() -> int:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    return int(done.stdout)


def _temp(folder: Path, pid: int) -> Path:
    p = folder / f".x.json{TMP_MARK}{pid}-0123abcd"
    p.write_bytes(b"half a document")
    return p


def _settled(tmp: Path, listed: list[str]) -> Path:
    """A catalog ingested, then run again until its folders are recorded as swept."""
    out = tmp / "cat"
    ingest(SOURCES, out, jobs=1)
    ingest(SOURCES, out, jobs=1)  # (the folders settled: swept, and recorded)
    listed.clear()
    return out


def test_a_recorded_folder_is_not_listed_again(tmp_path: Path, listed: list[str]) -> None:
    out = tmp_path / "cat"
    ingest(SOURCES, out, jobs=1)
    listed.clear()
    ingest(SOURCES, out, jobs=1)
    assert _catalog_listed(listed, out) == {".", ".risutools-cache", "facts"}
    before = _files(out)
    listed.clear()
    ingest(SOURCES, out, jobs=1)
    assert _catalog_listed(listed, out) == {".risutools-cache"}  # (a few files: every run)
    assert _files(out) == before


def test_a_dead_writers_temp_file_is_removed_after_a_record(
        tmp_path: Path, listed: list[str]) -> None:
    out = _settled(tmp_path, listed)
    dead = _dead_pid()
    left = [_temp(out, dead), _temp(out / "facts", dead)]
    ingest(SOURCES, out, jobs=1)
    assert not any(p.exists() for p in left)
    assert _catalog_listed(listed, out) == {".", ".risutools-cache", "facts"}


def test_a_live_writers_temp_file_keeps_its_folder_listed(
        tmp_path: Path, listed: list[str]) -> None:
    """A live writer's temp file is spared, and the folder is not recorded as swept: were
    that writer killed, its file would still be found."""
    out = _settled(tmp_path, listed)
    alive = _temp(out / "facts", os.getppid())
    for _ in range(2):
        listed.clear()
        ingest(SOURCES, out, jobs=1)
        assert "facts" in _catalog_listed(listed, out)
        assert alive.exists()


def test_without_the_cache_the_catalog_is_listed_every_run(
        tmp_path: Path, listed: list[str]) -> None:
    out = _settled(tmp_path, listed)
    for _ in range(2):
        listed.clear()
        ingest(SOURCES, out, jobs=1, use_cache=False)
        assert {".", ".risutools-cache"} <= _catalog_listed(listed, out)


def test_a_folder_changed_just_before_the_run_is_swept_not_recorded(
        tmp_path: Path, listed: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder whose stat changed less than RACY_NS before the run is swept (the
    catalog's, the cache's) but not recorded: each run lists it; ``facts/``, written by no
    run here, is left to the first write there."""
    out = tmp_path / "cat"
    ingest(SOURCES, out, jobs=1)
    monkeypatch.setattr(cache_mod, "RACY_NS", 10**15)
    for _ in range(2):
        listed.clear()
        ingest(SOURCES, out, jobs=1)
        assert _catalog_listed(listed, out) == {".", ".risutools-cache"}


def test_a_catalog_given_through_a_link_is_swept_and_recorded(
        tmp_path: Path, listed: list[str]) -> None:
    """The catalog's path may be a link the user made (~/catalog -> /data/catalog): its
    folder is swept as any, and recorded."""
    real = tmp_path / "real"
    real.mkdir()
    out = tmp_path / "cat"
    out.symlink_to(real, target_is_directory=True)
    ingest(SOURCES, out, jobs=1)
    dead = _temp(real, _dead_pid())
    listed.clear()
    ingest(SOURCES, out, jobs=1)
    assert not dead.exists()
    ingest(SOURCES, out, jobs=1)  # (the folder changed by that removal: swept, recorded)
    listed.clear()
    ingest(SOURCES, out, jobs=1)
    assert os.path.abspath(out) not in listed


def test_a_facts_link_is_never_listed(tmp_path: Path, listed: list[str]) -> None:
    """facts/ replaced by a link to a folder elsewhere: the sweeps never list it (the write
    of facts refuses it, one line)."""
    out = tmp_path / "cat"
    ingest(SOURCES, out, jobs=1)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    bait = _temp(elsewhere, _dead_pid())
    import shutil

    shutil.rmtree(out / "facts")
    (out / "facts").symlink_to(elsewhere, target_is_directory=True)
    listed.clear()
    try:
        ingest(SOURCES, out, jobs=1)
    except RisuError as exc:  # (the refusal is the write of facts: one line)
        assert "facts" in str(exc)
    assert os.path.abspath(elsewhere) not in listed and bait.exists()
