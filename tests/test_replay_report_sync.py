"""A replay's three report files are durable as the others written by the tools are: each
fsynced before it is put in place (renamed over its name), and their folder fsynced after
they are all in place, once (it was once after each), also when a later one fails."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest

from risutools.replay import api as api_mod
from risutools.replay.api import write_report_files
from risutools.replay.fixture import load_fixture
from risutools.replay.run import build_report, replay_cutter
from risutools.settings.replay import load_replay_config

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "replay"


def _report() -> dict[str, Any]:
    fx = load_fixture(FIX / "anchor-edit.yaml")
    cfg = load_replay_config(None, fx.config)
    return build_report(replay_cutter(fx, cfg, spool=True), fx, cfg, None)


def _watched(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, Any]]:
    """What is fsynced (a folder, or a file by its inode) and renamed, in order."""
    events: list[tuple[str, Any]] = []
    fsync, replace = os.fsync, os.replace

    def synced(fd: int) -> None:
        st = os.fstat(fd)
        events.append(("folder", None) if stat.S_ISDIR(st.st_mode) else ("file", st.st_ino))
        fsync(fd)

    def replaced(src: Any, dst: Any) -> None:
        events.append(("in place", Path(dst).name))
        replace(src, dst)

    monkeypatch.setattr(os, "fsync", synced)
    monkeypatch.setattr(os, "replace", replaced)
    return events


def test_each_file_synced_before_it_is_in_place_and_the_folder_once_after(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    report = _report()
    target = tmp_path / "r.json"
    target.write_bytes(b"old")  # (replaced)
    events = _watched(monkeypatch)
    paths, _ = write_report_files(report, target)
    want: list[tuple[str, Any]] = []
    for p in paths:
        want += [("file", p.stat().st_ino), ("in place", p.name)]
    assert events == [*want, ("folder", None)]


def test_the_files_in_place_before_a_failure_are_synced_with_their_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    report = _report()

    def broken(*args: Any) -> str:
        raise RuntimeError("the page")

    monkeypatch.setattr(api_mod, "render_html", broken)
    events = _watched(monkeypatch)
    with pytest.raises(RuntimeError, match="the page"):
        write_report_files(report, tmp_path / "r.json")
    json_file, md_file = tmp_path / "r.json", tmp_path / "r.md"
    assert events == [("file", json_file.stat().st_ino), ("in place", "r.json"),
                      ("file", md_file.stat().st_ino), ("in place", "r.md"), ("folder", None)]
    assert not (tmp_path / "r.html").exists()
