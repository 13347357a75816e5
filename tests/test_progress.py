"""The ingest progress (issue 24): it moves by bytes as files are done, from the start of
the run, with a time left computed from the bytes done -- held here with a fake clock."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest
from harness import SOURCES

from risutools.catalog.ingest import ingest
from risutools.report.ingest_text import IngestProgress
from risutools.report.progress import ByteProgress, clock_text, status_text

MB = 1_000_000


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_no_estimate_before_a_byte_is_done() -> None:
    clock = Clock()
    p = ByteProgress(clock)
    assert p.finding and status_text(p) == "finding files"
    p.start(10, 100 * MB)
    clock.now += 3
    assert p.left() is None
    assert status_text(p) == "0/10 files  0 B/100.0 MB  - B/s  ETA -:--:--"


def test_the_time_left_comes_from_the_bytes_done() -> None:
    clock = Clock()
    p = ByteProgress(clock)
    p.start(10, 100 * MB)
    clock.now += 2
    p.update(1, 10 * MB)  # 10 MB in 2 s since the start: 5 MB/s, 90 MB left: 18 s
    assert p.rate() == 5 * MB and p.left() == 18
    assert status_text(p) == "1/10 files  10.0 MB/100.0 MB  5.0 MB/s  ETA 0:00:18"
    clock.now += 1
    p.update(4, 30 * MB)  # since the first report: 20 MB in 1 s; 70 MB left: 3.5 s
    assert p.rate() == 20 * MB and p.left() == 3.5
    assert status_text(p).endswith("20.0 MB/s  ETA 0:00:04")
    clock.now += 1  # nothing done for a second: the rate falls, the estimate grows
    assert p.rate() == 10 * MB and p.left() == 7


def test_bytes_from_the_cache_do_not_speed_up_the_estimate() -> None:
    clock = Clock()
    p = ByteProgress(clock)
    p.start(100, 100 * MB)
    p.update(50, 50 * MB)  # half known from the cache, at once
    clock.now += 10
    p.update(60, 60 * MB)  # then 10 MB in 10 s: 1 MB/s, 40 MB left
    assert p.rate() == 1 * MB and p.left() == 40


def test_once_every_byte_is_done_it_says_the_catalog_is_written() -> None:
    clock = Clock()
    p = ByteProgress(clock)
    p.start(2, 2 * MB)
    clock.now += 1
    p.update(2, 2 * MB)
    clock.now += 7  # writing the catalog takes a while: no frozen "ETA 0:00:01"
    assert p.finishing and p.left() == 0
    assert status_text(p) == "2/2 files  2.0 MB/2.0 MB  writing the catalog"


def test_an_empty_run_has_no_division_by_zero() -> None:
    clock = Clock()
    p = ByteProgress(clock)
    p.start(0, 0)
    assert p.finishing and status_text(p).endswith("writing the catalog")


@pytest.mark.parametrize(("seconds", "shown"), [
    (None, "-:--:--"), (0, "0:00:00"), (0.2, "0:00:01"), (59.5, "0:01:00"),
    (3600 + 61, "1:01:01"),
])
def test_clock_text(seconds: float | None, shown: str) -> None:
    assert clock_text(seconds) == shown


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_bar_shows_from_the_start_and_follows_the_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    src = tmp_path / "src"
    src.mkdir()
    for name in ("174678332_context-cutter.risum", "182004771_net-summarizer.risum",
                 "183120336_asset-pack.risum"):
        shutil.copy(SOURCES / name, src)
    total = sum(f.stat().st_size for f in src.iterdir())
    monkeypatch.setattr("sys.stderr", _Terminal())
    clock = Clock()
    seen: list[str] = []
    with IngestProgress(enabled=True, color=False, clock=clock) as bar:
        bar_columns = bar._progress.columns
        task = bar._progress.tasks[0]
        seen.append(str(bar_columns[2].render(task)))  # before anything is found

        def update(files: int, done: int) -> None:
            clock.now += 1  # each file takes a second
            bar.update(files, done)
            seen.append(str(bar_columns[2].render(bar._progress.tasks[0])))
            assert bar._progress.tasks[0].completed == done  # the bar is the bytes

        ingest(src, tmp_path / "cat", jobs=1, use_cache=False, on_start=bar.start,
               on_progress=update)
    assert seen[0] == "finding files"
    assert len(seen) == 4 and seen[-1].endswith("writing the catalog")
    assert f"/{total / 1000:,.1f} kB" in seen[1]
    assert seen[1].startswith("1/3 files") and "ETA 0:00:0" in seen[1]
    assert seen[2].startswith("2/3 files")
