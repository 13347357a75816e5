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
    # no file is opened: not even the one that is not a Risu file (recorded as such)
    assert seen == []
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
    assert sorted(seen) == ["186123400_mood-tracker.json", "190000001_copy.risum"]
    formats = {s.path: s.format for s in third.sources}
    before = {s.path: s.format for s in first.sources}
    assert formats["186123400_mood-tracker.json"] == before["186123400_mood-tracker.json"]
    assert formats["190000001_copy.risum"] == before["174678332_context-cutter.risum"]
    assert not [s for s in third.sources if s.error]

    # without the cache every file is sniffed
    seen.clear()
    ingest(src, out, jobs=1, use_cache=False)
    assert sorted(seen) == sorted([*names, "190000001_copy.risum"])


def _not_risu_records(out: Path) -> dict[str, tuple[int, int, int, str]]:
    loaded = cache_mod.IngestCache.load(out / ".risutools-cache" / "ingest.msgpack")
    assert loaded.problem is None
    return {k: v for k, v in loaded.stat.items() if v[3] == cache_mod.NOT_RISU}


def test_a_file_that_is_not_risu_is_sniffed_again_when_its_stat_moves(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The verdict "not a Risu file" holds for the stat it was sniffed at only: a file
    touched, rewritten, replaced by a module, or removed and written again is looked at
    again; a module replaced by other bytes becomes such a file."""
    monkeypatch.setattr(cache_mod, "RACY_NS", 0)
    src, out = tmp_path / "src", tmp_path / "catalog"
    shutil.copytree(SOURCES, src)
    notes, other = src / "notes.txt", src / "other.json"
    notes.write_text("not a Risu file", "utf-8")
    other.write_text('{"name": "x", "not": "an export"}', "utf-8")
    ingest(src, out, jobs=1)
    assert sorted(_not_risu_records(out)) == ["notes.txt", "other.json"]
    seen = _counting(monkeypatch)

    # the same bytes, touched: another change time, so sniffed again (and still skipped)
    os.utime(notes, ns=(1, 1))
    r = ingest(src, out, jobs=1)
    assert seen == ["notes.txt"] and r.skipped == ["notes.txt", "other.json"]
    seen.clear()
    assert ingest(src, out, jobs=1).skipped == ["notes.txt", "other.json"] and seen == []

    # a module written over the JSON that was none: sniffed, read, ingested
    shutil.copy(src / "186123400_mood-tracker.json", other)
    r = ingest(src, out, jobs=1)
    assert seen == ["other.json"] and r.skipped == ["notes.txt"]
    assert [s.format for s in r.sources if s.path == "other.json"] == ["json-module"]
    assert "other.json" not in _not_risu_records(out)

    # a module overwritten with other bytes: no longer a Risu file, and recorded as such
    seen.clear()
    mood = src / "186123400_mood-tracker.json"
    mood.write_text("plain text now", "utf-8")
    r = ingest(src, out, jobs=1)
    assert seen == ["186123400_mood-tracker.json"]
    assert "186123400_mood-tracker.json" in r.skipped
    assert "186123400_mood-tracker.json" in _not_risu_records(out)

    # a file removed, then written again with the same bytes: sniffed (another change time)
    notes.unlink()
    ingest(src, out, jobs=1)
    seen.clear()
    notes.write_text("not a Risu file", "utf-8")
    assert "notes.txt" in ingest(src, out, jobs=1).skipped and seen == ["notes.txt"]


def test_a_file_changed_as_the_run_began_is_not_recorded(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file that is not a Risu file, changed less than RACY_NS before the run: its stat is
    not recorded (a write in the same clock tick could leave it as it was), so the next
    run sniffs it again; without the cache nothing is recorded at all."""
    src, out = tmp_path / "src", tmp_path / "catalog"
    src.mkdir()
    (src / "notes.txt").write_text("not a Risu file", "utf-8")  # (just written: racy)
    ingest(src, out, jobs=1)
    assert _not_risu_records(out) == {}
    seen = _counting(monkeypatch)
    ingest(src, out, jobs=1)
    assert seen == ["notes.txt"]
    monkeypatch.setattr(cache_mod, "RACY_NS", 0)
    ingest(src, out, jobs=1, use_cache=False)
    assert not (out / ".risutools-cache" / "ingest.msgpack").exists() or \
        _not_risu_records(out) == {}
