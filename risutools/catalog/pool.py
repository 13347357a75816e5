"""Running the per-file work: in this process, on ingest's own pool of worker processes, or on
any ``concurrent.futures`` executor (a Dask cluster).  Small files travel in batches, the
large ones start first; a worker that dies fails its files and the run goes on."""

from __future__ import annotations

import gc
import multiprocessing
import os
import sys
import threading
from collections.abc import Callable
from concurrent.futures import Executor, Future, ProcessPoolExecutor, as_completed
from multiprocessing.context import BaseContext

from risutools.catalog.outcome import SourceOutcome
from risutools.catalog.sourcefile import StageSpec, process_batch, process_file
from risutools.contract.notesfind import notes_index
from risutools.errors import Code
from risutools.safeio import FoundFile
from risutools.settings.catalog import MAX_JOBS, default_jobs
from risutools.settings.config import Settings
from risutools.workers import die_with_parent, stop_pool

BATCH_BYTES = 32 << 20  # a task holds small files up to this many bytes ...


BATCH_FILES = 32  # ... and at most this many files (one large file is a task of its own)


def batches(todo: list[tuple[str, str, int]], workers: int) -> list[list[tuple[str, str, int]]]:
    """Largest files first (the long ones start early and the tail stays short), small
    files grouped up to BATCH_BYTES / BATCH_FILES, with at least ~8 tasks per worker."""
    order = sorted(todo, key=lambda t: (-t[2], t[1]))
    most = max(1, min(BATCH_FILES, len(order) // max(1, workers * 8)))
    out: list[list[tuple[str, str, int]]] = []
    cur: list[tuple[str, str, int]] = []
    size = 0
    for item in order:
        if cur and (size + item[2] > BATCH_BYTES or len(cur) >= most):
            out.append(cur)
            cur, size = [], 0
        cur.append(item)
        size += item[2]
    if cur:
        out.append(cur)
    return out


def run_sources(
    todo: list[tuple[str, str, int]],
    lang: str,
    notes_dir: str | None,
    ndjson: bool,
    jobs: int | None,
    executor: Executor | None,
    finished: Callable[[SourceOutcome, str], None],
    stage: StageSpec | None = None,
    settings: Settings | None = None,
    formats: dict[str, str] | None = None,
    found: dict[str, FoundFile] | None = None,
) -> None:
    """Project each source of ``todo`` (path, shown relative path, size) and pass its outcome
    to ``finished``.  ``formats``: what the walk detected; ``found``: the (device, inode)
    the walk found at each path (a worker reads that file only; not for another
    executor's workers, which may see other device numbers)."""
    # (no more processes than files, nor than MAX_JOBS: `-j 300` of 9 files forked 300, and
    # `-j 2147483648` overflowed; another executor keeps its own count)
    workers = min(jobs if jobs is not None else default_jobs(), len(todo), MAX_JOBS)
    fmts = formats if formats is not None else {}
    ids = found if found is not None else {}
    if executor is None and (workers <= 1 or len(todo) == 1):
        _in_process(todo, (lang, notes_dir, ndjson), finished, stage, settings, fmts, ids)
        return
    own = executor is None
    pool: Executor = executor if executor is not None else _own_pool(workers)
    # another executor's workers may run in another folder (a cluster): absolute paths
    where: Callable[[str], str] = str if own else os.path.abspath
    try:
        futures: dict[Future[list[SourceOutcome]], list[tuple[str, str, int]]] = {
            pool.submit(process_batch,
                        [(where(p), rel, fmts.get(p), size, ids.get(p))
                         for p, rel, size in batch],
                        lang, notes_dir, ndjson, stage, settings): batch
            for batch in batches(todo, workers)
        }
        for fut in as_completed(futures):
            batch = futures[fut]
            try:
                outcomes = fut.result()
                if len(outcomes) != len(batch):
                    raise RuntimeError(f"{len(outcomes)} results for {len(batch)} files")
            except Exception as exc:  # a worker died: report its files, go on
                outcomes = [
                    SourceOutcome(path=rel, size=size, error=f"{rel}: worker-failed: {exc!r}")
                    for _, rel, size in batch
                ]
            for (path, _, _), outcome in zip(batch, outcomes, strict=True):
                finished(outcome, path)
    except BaseException:  # Ctrl-C (or an exit): stop now, whatever the workers are doing
        if own:
            stop_pool(pool)
            own = False
        raise
    finally:
        if own:
            pool.shutdown()


def _in_process(todo: list[tuple[str, str, int]], how: tuple[str, str | None, bool],
                finished: Callable[[SourceOutcome, str], None], stage: StageSpec | None,
                settings: Settings | None, fmts: dict[str, str],
                ids: dict[str, FoundFile]) -> None:
    """:func:`run_sources` in this process, one file after another (the notes folder's
    index taken once for the run)."""
    lang, notes_dir, ndjson = how
    notes = notes_index(notes_dir) if notes_dir else None
    for path, rel, size in todo:
        try:
            outcome = process_file(path, rel, lang, notes_dir, None, ndjson, stage,
                                   settings, fmts.get(path), size, ids.get(path), notes)
        except MemoryError:  # (one file past memory: said, and the others go on, as a
            outcome = SourceOutcome(path=rel, size=size, error=out_of_memory(rel))  # pool)
        finished(outcome, path)


def out_of_memory(rel: str) -> str:
    """The failure of a file whose reading or analysis ran out of memory (the others go on)."""
    return f"{rel}: {Code.TOO_LARGE}: not enough memory to read and analyse this file"


def _own_pool(workers: int) -> ProcessPoolExecutor:
    """Ingest's own pool: its workers started as :func:`pool_context` says, each with its
    cycle collector as this process has it now, and ending with this process."""
    ctx = pool_context()
    direct = ctx.get_start_method() in ("fork", "spawn")
    return ProcessPoolExecutor(workers, mp_context=ctx, initializer=die_with_parent,
                               initargs=(os.getpid(), direct, gc.isenabled()))


def pool_context() -> BaseContext:
    """How ingest's own pool starts its workers (each way writes the same catalog: tested).

    * Linux, while this process runs no other thread: ``fork``.  A worker starts with every
      module this process has loaded; nothing is imported again.
    * Linux with another thread running (a progress bar's, on a terminal): ``spawn``.  No
      thread's locks are copied into a worker (why Python 3.14 no longer forks by default),
      and each worker is still this process's own child, so it ends when this process
      does (:func:`~risutools.workers.die_with_parent`).  Not ``forkserver``, Python
      3.14's default: its workers are the fork server's children, which outlive a killed
      parent.
    * Elsewhere: the platform's default (``spawn`` on macOS and Windows), or the start
      method the program set (``multiprocessing.set_start_method``)."""
    if sys.platform.startswith("linux"):
        alone = threading.active_count() == 1
        if alone and "fork" in multiprocessing.get_all_start_methods():
            return multiprocessing.get_context("fork")
        return multiprocessing.get_context("spawn")
    return multiprocessing.get_context()
