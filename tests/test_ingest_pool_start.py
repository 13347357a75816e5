"""Ingest's own pool under each way Python starts a worker (``fork``, ``forkserver``,
``spawn``): the same catalog, workers that end with the process that started them, and
the start method chosen by what the process runs (``risutools.catalog.pool``).

``forkserver`` is Python 3.14's default on Linux: there, a worker's parent is the fork
server, not the process that made the pool.  The pool once took the default, and the
worker's start-up check took that server for a dead parent: every file of a pool failed
("worker-failed").  The pool now chooses its start method, and never the fork server on Linux
(its workers are the server's children: they outlive a killed parent)."""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from harness import ROOT, SOURCES, process_gone, wait_gone

from risutools.catalog import pool
from risutools.catalog.ingest import ingest

LINUX = sys.platform.startswith("linux")
METHODS = [m for m in ("fork", "forkserver", "spawn")
           if m in multiprocessing.get_all_start_methods()]


def _catalog_bytes(out: Path) -> dict[str, bytes]:
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*"))
            if p.is_file() and ".risutools-cache" not in p.parts}


def _context(method: str) -> multiprocessing.context.BaseContext:
    ctx = multiprocessing.get_context(method)
    if method == "forkserver":
        ctx.set_forkserver_preload([pool.__name__])
    return ctx


@pytest.mark.parametrize("method", METHODS)
def test_each_start_method_writes_the_catalog_one_process_writes(
        method: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    one = ingest(SOURCES, tmp_path / "one", jobs=1, use_cache=False)
    chosen: list[str] = []

    def context() -> multiprocessing.context.BaseContext:
        chosen.append(method)
        return _context(method)

    monkeypatch.setattr(pool, "pool_context", context)
    two = ingest(SOURCES, tmp_path / "two", jobs=2, use_cache=False)
    assert chosen == [method]  # (the pool ran: its workers made these documents)
    assert [s.error for s in two.sources] == [s.error for s in one.sources]
    assert not any("worker-failed" in (s.error or "") for s in two.sources)
    assert _catalog_bytes(tmp_path / "two") == _catalog_bytes(tmp_path / "one")
    assert len(_catalog_bytes(tmp_path / "one")) > 2


@pytest.mark.skipif(not LINUX, reason="the choice is made on Linux only")
def test_fork_alone_spawn_beside_a_thread() -> None:
    alone = "fork" if threading.active_count() == 1 else "spawn"
    assert pool.pool_context().get_start_method() == alone
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert pool.pool_context().get_start_method() == "spawn"
    finally:
        stop.set()
        other.join()
    assert pool.pool_context().get_start_method() == alone


_POOL_CHILD = """
import multiprocessing, os, sys, threading, time
from risutools.catalog import pool
if sys.argv[1] == "thread":  # (a progress bar's thread, say: the pool then spawns)
    threading.Thread(target=time.sleep, args=(60,), daemon=True).start()
with pool._own_pool(2) as ex:
    list(ex.map(time.sleep, [0.1] * 4))  # (every worker started, and past its check)
    print(ex._mp_context.get_start_method(), *sorted(ex._processes), flush=True)
    time.sleep(60)
"""


@pytest.mark.skipif(not LINUX, reason="the parent-death signal is Linux's")
@pytest.mark.parametrize(("how", "method"), [("alone", "fork"), ("thread", "spawn")])
def test_the_workers_end_when_the_process_that_made_the_pool_is_killed(
        how: str, method: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen([sys.executable, "-c", _POOL_CHILD, how], env=env,
                             stdout=subprocess.PIPE)
    try:
        assert child.stdout is not None
        chosen, *pids = child.stdout.readline().decode().split()
        assert chosen == method
        workers = [int(p) for p in pids]
        assert workers and os.getpid() not in workers and child.pid not in workers
        assert not any(map(process_gone, workers))  # (alive, after their start-up check)
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
        assert wait_gone(workers, 20), f"{method}: workers outlived their pool"
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()


@pytest.mark.skipif("forkserver" not in METHODS, reason="no fork server here")
def test_a_program_whose_default_is_the_fork_server_ingests_on_its_pool(
        tmp_path: Path) -> None:
    """Python 3.14 on Linux: the default start method is ``forkserver``; ``ingest -j 2``
    (a subprocess whose default is set so) writes the catalog one process writes."""
    ingest(SOURCES, tmp_path / "one", jobs=1, use_cache=False)
    script = ("import multiprocessing, sys\n"
              "multiprocessing.set_start_method('forkserver')\n"
              "from risutools.cli import main\n"
              "sys.argv = ['risutools', 'ingest', sys.argv[1], '-o', sys.argv[2], '-j', '2',"
              " '--no-cache']\n"
              "main()\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", script, str(SOURCES), str(tmp_path / "two")],
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "worker-failed" not in done.stdout + done.stderr
    assert _catalog_bytes(tmp_path / "two") == _catalog_bytes(tmp_path / "one")


def test_ingests_workers_get_the_collector_as_the_run_has_it() -> None:
    """A spawned worker would otherwise run with the collector the program's main module
    left it (``risutools.__main__`` turns it off while the modules load)."""
    import gc

    was = gc.isenabled()
    try:
        for state in (True, False):
            (gc.enable if state else gc.disable)()
            ex = pool._own_pool(1)
            try:
                assert ex._initargs == (os.getpid(), True, state)
            finally:
                ex.shutdown()
    finally:
        (gc.enable if was else gc.disable)()
