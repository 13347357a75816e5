"""A re-ingest of a tree that holds the same files more than once (a collection copied into
two folders): a cached source whose component ids only sources of the same bytes share is
not unpacked again, since sources of the same bytes are one source (the others duplicates
the writer never reads).  Ids that sources of other bytes share (one module in two
containers, two modules under one post id) are still unpacked and compared: the same
warning and the same collision, run after run (840 copies of the real corpus's files:
95 us a file, now 32; bench/RESULTS.md, round 33)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from harness import SOURCES

from risutools.catalog import cache as cache_mod
from risutools.catalog.ingest import ingest
from risutools.formats import read_path


def _tree(root: Path) -> Path:
    """Folders ``a`` and ``b``, each the fixtures' sources, a module's JSON export beside
    its .risum (one module in two containers), and another module under the same post id
    (a collision); ``b`` is ``a`` again, byte for byte."""
    a = root / "src" / "a"
    shutil.copytree(SOURCES, a)
    (module,) = read_path(SOURCES / "174678332_context-cutter.risum")
    data = dict(module.data)
    data["type"] = "risuModule"
    data.pop("assets", None)
    (a / "174678332_cutter.json").write_text(json.dumps(data, ensure_ascii=False), "utf-8")
    data["lorebook"] = [*data.get("lorebook", []), {"key": "x", "content": "a note",
                                                     "comment": "x", "mode": "normal"}]
    (a / "174678332_other.json").write_text(json.dumps(data, ensure_ascii=False), "utf-8")
    shutil.copytree(a, root / "src" / "b")
    return root / "src"


def test_twins_are_not_unpacked_again_other_bytes_still_are(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cache_mod, "RACY_NS", 0)  # (the sources were just written)
    src, out = _tree(tmp_path), tmp_path / "cat"
    first = ingest(src, out, jobs=1)
    ingest(src, out, jobs=1)  # (the cache then records the catalog's files: all settled)
    unpacked: list[str] = []
    real = cache_mod.CachedOutcome.unpack

    def counted(self: cache_mod.CachedOutcome) -> bool:
        unpacked.append(self.path)
        return real(self)

    monkeypatch.setattr(cache_mod.CachedOutcome, "unpack", counted)
    again = ingest(src, out, jobs=1)
    assert again.counts()["cached"] == len(again.sources) > 0
    # the same result, run after run: the collision and the other container's warning
    assert again.collisions == first.collisions and len(again.collisions) == 1
    warned = sorted(w for s in again.sources for w in s.warnings)
    assert warned == sorted(w for s in first.sources for w in s.warnings)
    assert any("another container" in w for w in warned)
    assert [s.to_dict() for s in again.sources] == [s.to_dict() for s in first.sources]
    # only the sources whose ids other bytes share were unpacked: the three of post
    # 174678332 (two containers of one module, and the other module), in each folder
    assert sorted(unpacked) == sorted(f"{d}/{n}" for d in "ab" for n in (
        "174678332_context-cutter.risum", "174678332_cutter.json", "174678332_other.json"))
