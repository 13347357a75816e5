"""Re-ingest (issue 23): a file whose stat the cache knows is not opened to tell its format;
a changed file, a new one, and every file of a run without the cache are."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from harness import SOURCES

from risutools.catalog import cache as cache_mod
from risutools.catalog import walk
from risutools.catalog.ingest import ingest


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    real = walk.detect

    def detect(path: str) -> str | None:
        seen.append(os.path.basename(path))
        return real(path)

    monkeypatch.setattr(walk, "detect", detect)
    return seen


def _summary(r: object) -> list[tuple[str, str | None, bool, list[str]]]:
    return [(s.path, s.format, s.cached, [d["component_id"] for d in s.documents])
            for s in r.sources]  # type: ignore[attr-defined]


def test_known_files_are_not_sniffed_again(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cache_mod, "RACY_NS", 0)  # (the sources were just written)
    src, out = tmp_path / "src", tmp_path / "catalog"
    shutil.copytree(SOURCES, src)
    (src / "notes.txt").write_text("not a Risu file", "utf-8")
    first = ingest(src, out, jobs=1)
    names = sorted(p.name for p in src.iterdir())

    seen = _counting(monkeypatch)
    again = ingest(src, out, jobs=1)
    # only the file that is not a Risu file (the cache holds no outcome for it) is opened
    assert seen == ["notes.txt"]
    assert all(s.cached for s in again.sources)
    assert [(p, f, ids) for p, f, _, ids in _summary(again)] == \
        [(p, f, ids) for p, f, _, ids in _summary(first)]
    assert again.skipped == first.skipped == ["notes.txt"]

    # a changed file (another size) and a new one are sniffed; the others are not
    seen.clear()
    mood = src / "186123400_mood-tracker.json"
    mood.write_bytes(mood.read_bytes() + b"\n")
    shutil.copy(src / "174678332_context-cutter.risum", src / "190000001_copy.risum")
    third = ingest(src, out, jobs=1)
    assert sorted(seen) == ["186123400_mood-tracker.json", "190000001_copy.risum",
                            "notes.txt"]
    formats = {s.path: s.format for s in third.sources}
    before = {s.path: s.format for s in first.sources}
    assert formats["186123400_mood-tracker.json"] == before["186123400_mood-tracker.json"]
    assert formats["190000001_copy.risum"] == before["174678332_context-cutter.risum"]
    assert not [s for s in third.sources if s.error]

    # without the cache every file is sniffed
    seen.clear()
    ingest(src, out, jobs=1, use_cache=False)
    assert sorted(seen) == sorted([*names, "190000001_copy.risum"])
