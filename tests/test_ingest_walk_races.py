"""A source folder that changes between ingest's walk and the read of a file: a worker reads
the file the walk found there, or nothing.  The walk never follows a symbolic link; before,
the read did, so a file replaced by a link (or a folder of its path replaced by one) while
the run went on was read from wherever the link led, and its content projected into the
catalog.  Each form is simulated at its seam: after the walk's sniff (before the plan's
look at the file), and after the plan (just before the worker opens it)."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from risutools.catalog import sourcefile, walk
from risutools.catalog.ingest import ingest

SECRET = "Private Notes Of The User"


def _module(name: str, mid: str) -> str:
    return json.dumps({"type": "risuModule", "name": name, "description": "d", "id": mid,
                       "lorebook": [], "regex": [], "trigger": []})


def _tree(tmp: Path) -> tuple[Path, Path, Path]:
    """(source folder, catalog, a folder outside the source with a module of the user's
    own, named as the source's file is)."""
    src, outside = tmp / "src", tmp / "private"
    (src / "sub").mkdir(parents=True)
    (src / "sub" / "100_mod.json").write_text(_module("Downloaded", "id-d"), "utf-8")
    (src / "200_other.json").write_text(_module("Other", "id-o"), "utf-8")
    outside.mkdir()
    (outside / "100_mod.json").write_text(_module(SECRET, "id-secret"), "utf-8")
    return src, tmp / "cat", outside


def _link_file(src: Path, outside: Path) -> None:
    victim = src / "sub" / "100_mod.json"
    victim.unlink()
    victim.symlink_to(outside / "100_mod.json")


def _link_folder(src: Path, outside: Path) -> None:
    shutil.rmtree(src / "sub")
    (src / "sub").symlink_to(outside, target_is_directory=True)


def _renamed_over(src: Path, outside: Path) -> None:
    tmp = src / "sub" / "new.part"
    tmp.write_text(_module(SECRET, "id-new"), "utf-8")
    os.replace(tmp, src / "sub" / "100_mod.json")


SWAPS: dict[str, Callable[[Path, Path], None]] = {
    "file-to-link": _link_file, "folder-to-link": _link_folder, "renamed-over": _renamed_over,
}  # (a FIFO put there was already refused without blocking: safeio opens with O_NONBLOCK)
WHY = {"file-to-link": "symbolic link", "folder-to-link": "no longer the file",
       "renamed-over": "no longer the file"}


@pytest.mark.parametrize("seam", ["after-sniff", "before-read"])
@pytest.mark.parametrize("swap", sorted(SWAPS))
@pytest.mark.parametrize("jobs", [1, 2])
def test_a_source_swapped_after_the_walk_is_never_read_from_elsewhere(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seam: str, swap: str,
        jobs: int) -> None:
    src, out, outside = _tree(tmp_path)
    done: list[bool] = []

    def once() -> None:
        if not done:
            done.append(True)
            SWAPS[swap](src, outside)

    if seam == "after-sniff":
        sniff = walk.detect

        def detect(path: Any) -> Any:
            fmt = sniff(path)
            if os.fspath(path).endswith("100_mod.json"):
                once()
            return fmt

        monkeypatch.setattr(walk, "detect", detect)
    else:
        read = sourcefile.read_path

        def read_path(path: Any, **kw: Any) -> Any:
            if os.fspath(path).endswith("100_mod.json"):
                once()
            return read(path, **kw)

        monkeypatch.setattr(sourcefile, "read_path", read_path)
        jobs = 1  # (the swap runs in the process that reads: this one)
    run = ingest(src, out, jobs=jobs, use_cache=False)
    assert done
    (failed,) = run.failures
    assert failed.path == "sub/100_mod.json" and failed.error is not None
    assert WHY[swap] in failed.error and "\n" not in failed.error
    texts = [p.read_text("utf-8") for p in out.rglob("*.json")]
    assert texts and not any(SECRET in t or "private-notes" in t for t in texts)
    assert any("module.risu.200.other" in t for t in texts)  # the rest is ingested


def test_the_next_run_reads_a_file_replaced_while_a_run_read_the_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A regular file renamed over the one the walk found: refused in that run (one line),
    read by the next; nothing of it is cached as the old file's."""
    src, out, outside = _tree(tmp_path)
    read = sourcefile.read_path
    done: list[bool] = []

    def read_path(path: Any, **kw: Any) -> Any:
        if os.fspath(path).endswith("100_mod.json") and not done:
            done.append(True)
            _renamed_over(src, outside)
        return read(path, **kw)

    monkeypatch.setattr(sourcefile, "read_path", read_path)
    first = ingest(src, out, jobs=1)
    assert [s.path for s in first.failures] == ["sub/100_mod.json"]
    monkeypatch.undo()
    again = ingest(src, out, jobs=1)
    assert again.failures == [] and any("private-notes" in w for w in again.written)


@pytest.mark.parametrize("by", ["link", "another-folder"])
def test_a_subfolder_replaced_before_the_walk_enters_it_is_not_entered(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, by: str) -> None:
    """The parent's listing found a folder; by the time the walk enters it, a link (or
    another folder moved there) is in its place: not entered, one line, exit 1; before,
    the walk listed wherever the link led and ingested the files there."""
    src, out, outside = _tree(tmp_path)
    (src / "a").mkdir()
    (src / "a" / "300_first.json").write_text(_module("First", "id-f"), "utf-8")
    sniff = walk.detect
    done: list[bool] = []

    def detect(path: Any) -> Any:
        if os.fspath(path).endswith("300_first.json") and not done:
            done.append(True)  # (a/ is walked before sub/, whose listing is already made)
            os.rename(src / "sub", tmp_path / "old")  # (kept: its inode is not reused)
            if by == "link":
                (src / "sub").symlink_to(outside, target_is_directory=True)
            else:
                shutil.copytree(outside, tmp_path / "moved")
                os.rename(tmp_path / "moved", src / "sub")
        return sniff(path)

    monkeypatch.setattr(walk, "detect", detect)
    run = ingest(src, out, jobs=1, use_cache=False)
    assert done
    (failed,) = run.failures
    assert failed.path == "sub/" and failed.error is not None and "\n" not in failed.error
    assert "no longer the folder the walk found there" in failed.error
    texts = [p.read_text("utf-8") for p in out.rglob("*.json")]
    assert not any(SECRET in t for t in texts)
    assert sorted(s.path for s in run.sources if s.status == "ok") == [
        "200_other.json", "a/300_first.json"]
