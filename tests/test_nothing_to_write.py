"""A re-ingest with nothing to write asks nothing of the file system's durability: no
``syncfs`` looked up (libc through ``ctypes``, about 1.5 ms of start-up), no stage made for
documents; a run with something to write still asks for it (the check could fail)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from harness import SOURCES

from risutools.catalog import cache as cache_mod
from risutools.catalog import ingest as ingest_mod
from risutools.catalog import ingest_facts
from risutools.catalog.ingest import ingest


@pytest.fixture(autouse=True)
def _no_racy_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cache_mod, "RACY_NS", 0)  # (files of any age are recorded)


def _count_syncfs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    asked: list[str] = []

    def facts() -> bool:
        asked.append("facts")
        return False

    def documents() -> bool:
        asked.append("documents")
        return False

    monkeypatch.setattr(ingest_facts, "syncfs_available", facts)
    monkeypatch.setattr(ingest_mod, "syncfs_available", documents)
    return asked


def _change_one(src: Path) -> None:
    """Change the description of the first module source of ``src``."""
    module = next(p for p in sorted(src.rglob("*.json"))
                  if isinstance(json.loads(p.read_text("utf-8")), dict)
                  and "description" in json.loads(p.read_text("utf-8")))
    data = json.loads(module.read_text("utf-8"))
    data["description"] = str(data["description"]) + " (changed)"
    module.write_text(json.dumps(data, ensure_ascii=False), "utf-8")


def test_nothing_changed_asks_for_no_sync(tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    src, out = tmp_path / "src", tmp_path / "cat"
    shutil.copytree(SOURCES, src)
    ingest(src, out, jobs=1)
    ingest(src, out, jobs=1)  # (every file recorded by now)
    before = {p: p.read_bytes() for p in out.rglob("*.json")}
    asked = _count_syncfs(monkeypatch)
    result = ingest(src, out, jobs=1)
    assert asked == []
    assert result.ok and not result.failures
    assert {p: p.read_bytes() for p in out.rglob("*.json")} == before

    # one source changed: its document and facts are written, made durable as before
    _change_one(src)
    ingest(src, out, jobs=1)
    assert "documents" in asked and "facts" in asked


def test_one_changed_among_many_looks_at_its_own_facts_only(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A re-ingest with one source changed stages (and reads back) the facts files of that
    source's components only, not every facts file of the catalog the cache verified."""
    src, out = tmp_path / "src", tmp_path / "cat"
    shutil.copytree(SOURCES, src)
    ingest(src, out, jobs=1)
    ingest(src, out, jobs=1)  # (every file recorded by now)
    _change_one(src)
    staged: list[str] = []
    stage = ingest_facts._stage

    def counting(target: Path, *args: object) -> object:
        staged.append(target.name)
        return stage(target, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(ingest_facts, "_stage", counting)
    result = ingest(src, out, jobs=1)
    assert result.ok and not result.failures
    facts_files = len(list((out / "facts").glob("*.json")))
    assert facts_files > 3 and 1 <= len(staged) < facts_files, (staged, facts_files)
