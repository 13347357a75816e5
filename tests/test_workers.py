"""The workers of risutools' own pools (``risutools.workers``): a worker ends with the
process that made its pool (``kill -9``, a CI job's timeout), and a Ctrl-C stops the pool
at once.  Review's pool is shown here, with real processes (ingest's: in
``test_ingest_pool_start.py`` and ``test_lifecycle_interrupt.py``).

Review's workers once had neither: a killed review left its workers blocked for ever (on a
task queue, or writing a result no one reads), and a Ctrl-C waited for every chunk left."""

from __future__ import annotations

import gc
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from harness import ROOT, process_gone, wait_gone
from test_catalog_support import fresh_catalog

from risutools import workers

LINUX = sys.platform.startswith("linux")


def _worker_exit(parent: int, direct: bool = True) -> int:
    """The exit code of a forked child that runs the worker's start-up check with
    ``parent`` as the pool's process (0: it went on)."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            workers.die_with_parent(parent, direct)
        finally:
            os._exit(0)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork")
def test_a_worker_whose_parent_is_another_process_ends_at_once() -> None:
    assert _worker_exit(os.getpid()) == 0  # its parent: goes on
    stranger = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert _worker_exit(stranger.pid) == 1  # (as a worker orphaned before its check)
        assert _worker_exit(stranger.pid, direct=False) == 0  # (a fork server's worker)
    finally:
        stranger.kill()
        stranger.wait()


#: a review on a pool (a chunk a file) whose every chunk takes a minute: the workers are
#: busy when the test kills or interrupts the review
_SLOW_REVIEW = """
import sys, time
from risutools.catalog import review_pass
from risutools.catalog.catalog import Catalog
from risutools.catalog.review import review_catalog

def slow(paths):
    time.sleep(60)

review_pass.CHUNK, review_pass.PARALLEL_MIN = 1, 1
review_pass._survey_files = slow  # (forked: the workers run it too)
review_catalog(Catalog.open(sys.argv[1]), jobs=3)
"""


def _workers(pid: int) -> list[int]:
    """The children of ``pid`` that are forks of it (its command line: not the resource
    tracker multiprocessing may start beside a pool)."""
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
        own = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return []
    found = []
    for child in map(int, text.split()):
        try:
            if Path(f"/proc/{child}/cmdline").read_bytes() == own:
                found.append(child)
        except OSError:
            pass
    return found


def _slow_review(cat: Path) -> tuple[subprocess.Popen[bytes], list[int]]:
    """The review started, with its two workers running (their pids).  A review whose pool
    is not seen within 30 s is started once more (the second must show it), and either
    failure says what the review printed."""
    said = []
    for _ in range(2):
        child = subprocess.Popen([sys.executable, "-c", _SLOW_REVIEW, str(cat)],
                                 env={**os.environ, "PYTHONPATH": str(ROOT)},
                                 stderr=subprocess.PIPE)
        found = _pool_of(child)
        if found:
            return child, found
        child.kill()
        _, err = child.communicate()
        said.append(f"exit {child.returncode}: {err.decode(errors='replace')[-1500:]}")
    raise AssertionError(f"the review's pool did not start: {said}")


def _pool_of(child: subprocess.Popen[bytes]) -> list[int]:
    """The pool's two workers: the same two children alive at two looks 0.3 s apart (a
    child forked for a moment, before it runs another program, shares the command line);
    [] when the review ended or 30 s went by."""
    deadline = time.monotonic() + 30
    before: list[int] = []
    while time.monotonic() < deadline and child.poll() is None:
        found = [w for w in _workers(child.pid) if not process_gone(w)]
        if len(found) == 2 and found == before:
            return found
        before = found
        time.sleep(0.3 if len(found) == 2 else 0.02)
    return []


@pytest.mark.skipif(not LINUX, reason="the parent-death signal and /proc are Linux's")
def test_a_killed_reviews_workers_end(tmp_path_factory: pytest.TempPathFactory,
                                      tmp_path: Path) -> None:
    child, pool = _slow_review(fresh_catalog(tmp_path_factory, tmp_path / "cat"))
    try:
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
        assert wait_gone(pool, 10), "the workers outlived the review"
    finally:
        for p in pool:
            if not process_gone(p):
                os.kill(p, signal.SIGKILL)


@pytest.mark.skipif(not LINUX, reason="/proc")
def test_ctrl_c_stops_a_reviews_pool_at_once(tmp_path_factory: pytest.TempPathFactory,
                                             tmp_path: Path) -> None:
    child, pool = _slow_review(fresh_catalog(tmp_path_factory, tmp_path / "cat"))
    try:
        t = time.monotonic()
        os.kill(child.pid, signal.SIGINT)
        _, err = child.communicate(timeout=20)
        assert time.monotonic() - t < 10, "Ctrl-C waited for the chunks left"
        assert child.returncode != 0 and b"KeyboardInterrupt" in err
        assert wait_gone(pool, 5)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        for p in pool:
            if not process_gone(p):
                os.kill(p, signal.SIGKILL)


def _collector_after(collector: bool | None, before: bool) -> bool:
    """Whether the cycle collector runs in a forked child that had it ``before`` and then
    ran the worker's start-up with ``collector``."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            (gc.enable if before else gc.disable)()
            workers.die_with_parent(os.getppid(), True, collector)
            os._exit(11 if gc.isenabled() else 10)
        finally:
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    assert code in (10, 11), code
    return code == 11


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork")
def test_a_workers_collector_is_the_one_its_pool_asks_for() -> None:
    was = gc.isenabled()
    try:
        for before in (True, False):
            assert _collector_after(True, before) is True
            assert _collector_after(False, before) is False
            assert _collector_after(None, before) is before  # (as it came)
    finally:
        (gc.enable if was else gc.disable)()


def test_reviews_workers_keep_the_collector_paused_as_the_review_does(
        tmp_path_factory: pytest.TempPathFactory, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A review runs with the cycle collector paused (its values are acyclic); its forked
    workers keep it so: the worker's start-up does not turn it back on."""
    from risutools.catalog import review_pass
    from risutools.catalog.catalog import Catalog
    from risutools.catalog.review import review_catalog

    seen = tmp_path / "seen"
    read = review_pass._survey_files

    def spy(paths: list[Path]) -> object:
        with open(seen, "a") as f:
            f.write(f"{os.getpid()} {gc.isenabled()}\n")
        return read(paths)

    monkeypatch.setattr(review_pass, "CHUNK", 1)
    monkeypatch.setattr(review_pass, "PARALLEL_MIN", 1)
    monkeypatch.setattr(review_pass, "_survey_files", spy)
    # the parent takes no chunk (on a loaded machine it could take them all before a worker
    # started, and nothing would be seen): every chunk is a worker's
    monkeypatch.setattr(review_pass.Claims, "take_last", lambda self, chunks: None)
    review_catalog(Catalog.open(fresh_catalog(tmp_path_factory, tmp_path / "cat")), jobs=3)
    lines = [line.split() for line in seen.read_text().splitlines()]
    assert {pid for pid, _ in lines} - {str(os.getpid())}, "no worker read a chunk"
    assert {state for _, state in lines} == {"False"}
