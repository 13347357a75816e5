"""How many processes ingest and review use when -j is not given: the cores this process
may run on (its CPU affinity), asked in one place (risutools.settings.catalog)."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from risutools.catalog import review_pass
from risutools.catalog.catalog import Catalog
from risutools.catalog.ingest import ingest
from risutools.catalog.review import review_catalog
from risutools.settings.catalog import default_jobs

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ROOT / "fixtures" / "sources"


def test_the_affinity_counts_not_the_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "cpu_count", lambda: 64)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {3}, raising=False)
    assert default_jobs() == 1
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 7}, raising=False)
    assert default_jobs() == 4


def test_without_an_affinity_every_core_of_the_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(os, "sched_getaffinity", raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 6)
    assert default_jobs() == 6
    monkeypatch.setattr(os, "cpu_count", lambda: None)  # (the system does not say)
    assert default_jobs() == 1


def test_an_affinity_the_system_refuses_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(pid: int) -> set[int]:
        raise OSError(38, "Function not implemented")

    monkeypatch.setattr(os, "sched_getaffinity", refused, raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 3)
    assert default_jobs() == 3
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(), raising=False)
    assert default_jobs() == 1  # (never no process at all)


def test_the_cores_are_asked_in_one_place() -> None:
    asked = re.compile(r"\b(?:cpu_count|sched_getaffinity|process_cpu_count)\s*\(")
    places = sorted(
        p.relative_to(ROOT).as_posix() for p in (ROOT / "risutools").rglob("*.py")
        if asked.search(p.read_text(encoding="utf-8")))
    assert places == ["risutools/settings/catalog.py"]


def _no_fork(monkeypatch: pytest.MonkeyPatch) -> None:
    """One core allowed of a machine said to have 8: a fork (a pool) fails the test."""
    monkeypatch.setattr(os, "cpu_count", lambda: 8)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0}, raising=False)

    def fork() -> int:
        raise AssertionError("a process was forked on one allowed core")

    monkeypatch.setattr(os, "fork", fork)


def test_ingest_and_review_run_in_one_process_on_one_allowed_core(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    src = tmp_path / "src"
    shutil.copytree(SOURCES, src)
    out = tmp_path / "catalog"
    _no_fork(monkeypatch)
    result = ingest(src, out)  # (several files: a pool if more cores were allowed)
    assert len(list(out.glob("*.json"))) >= 5, result
    # (a catalog this small is never shared out: every file its own chunk here)
    monkeypatch.setattr(review_pass, "CHUNK", 1)
    monkeypatch.setattr(review_pass, "PARALLEL_MIN", 1)
    review = review_catalog(Catalog.open(out))
    assert review.data["documents"], review.data.keys()
