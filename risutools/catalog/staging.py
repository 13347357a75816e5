"""Ingest's temp files: each document is staged (written whole next to its target) as soon as
its source is done, so that only the renames remain at the end of a run (:class:`Stager`)."""

from __future__ import annotations

import os
import stat
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import suppress
from pathlib import Path
from typing import Any

from risutools.catalog.outcome import SourceOutcome
from risutools.catalog.render import safe_name, under
from risutools.errors import RisuError, WriteConflict
from risutools.fsio import (
    StagedWrite,
    adopt_staged,
    discard_staged,
    stage_write,
    sync_filesystem,
    syncfs_available,
)
from risutools.safeio import FileRefused, read_regular

# staging runs while this process may be projecting too: fewer threads, less GIL contention
STAGE_THREADS = 4


class Stager:
    """The temp files of the documents, written as soon as each source is done while the
    other sources go on: at the end only the renames remain, and one fsync of the folder.
    Each document is still atomic and compare-and-swap
    (:func:`risutools.fsio.commit_staged`); a temp file that is not used (a duplicate, a
    collision, an unchanged or reviewed document) is removed, and one a ``kill -9`` left
    is swept by the next run.

    Who writes them, and how they are made durable (each document's bytes are durable
    before its name points at them, so a crash never leaves a torn or empty document):

    * in this process (``-j 1``) or a worker of ingest's own pool: the process that
      rendered the document writes its temp file (:class:`StageSpec`; no text travels
      back), and this one adopts it.  Where the kernel has ``syncfs(2)`` (Linux) the temp
      files are not fsynced one by one: :meth:`flush` makes all of them durable with one
      ``syncfs`` before the first rename (measured: less CPU and less waiting than
      2,000 fsyncs);
    * another executor's workers (a Dask cluster: they may run on other machines) send
      the text back, and ``STAGE_THREADS`` threads here write and fsync each temp file
      while the workers go on (``enabled``)."""

    def __init__(self, out: Path, *, enabled: bool) -> None:
        self.out = out
        self.folder = under(os.fspath(out))  # + a file name = str(out / name)
        self.enabled = enabled
        self.pool: Any = None
        self.jobs: dict[tuple[str, int], Future[StagedWrite | None] | Staged] = {}
        self.adopted = False  # temp files written by a StageSpec (unsynced when syncfs exists)

    def __enter__(self) -> Stager:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True)
        for fut in self.jobs.values():  # whatever was not committed: removed
            with suppress(Exception):
                staged = fut.result()
                if staged is not None:
                    discard_staged(staged)

    def stage(self, outcome: SourceOutcome) -> None:
        if outcome.staged is not None:
            self._adopt(outcome, outcome.staged)
            return
        if not self.enabled or outcome.error or len(outcome.rendered) != len(outcome.documents):
            return
        if self.pool is None:
            self.pool = ThreadPoolExecutor(STAGE_THREADS)
        for k, (doc, text) in enumerate(zip(outcome.documents, outcome.rendered, strict=True)):
            target = self.out / f"{safe_name(str(doc['component_id']))}.json"
            self.jobs[(outcome.path, k)] = self.pool.submit(stage_one, target,
                                                            text.encode("utf-8"))

    def _adopt(self, outcome: SourceOutcome, staged: list[str | OSError | None]) -> None:

        for k, (doc, entry) in enumerate(zip(outcome.documents, staged, strict=True)):
            if isinstance(entry, OSError):  # raised where it is committed, like a thread's
                done = Staged(None, entry)
            elif entry is None:
                done = Staged(None)
            else:
                target = self.folder + safe_name(str(doc["component_id"])) + ".json"
                done = Staged(adopt_staged(target, entry))
                self.adopted = True
            self.jobs[(outcome.path, k)] = done

    def flush(self) -> None:
        """Make every staged file durable before any of them is renamed into place (one
        ``syncfs`` for all of them; without syncfs each was fsynced as it was written)."""

        if self.adopted and syncfs_available():
            sync_filesystem(self.out)

    def take(self, source: str, k: int) -> Future[StagedWrite | None] | Staged | None:
        return self.jobs.get((source, k))


class Staged:
    """A staging that is already done (the process that rendered the document wrote its
    temp file): like a finished Future, without one's lock and condition."""

    __slots__ = ("error", "staged")

    def __init__(self, staged: StagedWrite | None, error: OSError | None = None) -> None:
        self.staged = staged
        self.error = error

    def result(self) -> StagedWrite | None:
        """The staged write (None: the target held the bytes already), or the OSError of
        the staging raised."""
        if self.error is not None:
            raise self.error
        return self.staged


def stage_one(
    target: str | Path, data: bytes, *, sync: bool = True, owner: int | None = None
) -> StagedWrite | None:
    """Stage ``data`` for ``target`` unless the target already holds exactly it, or is
    not a regular file (a link, a FIFO, a device, a folder: nothing is staged, and the
    write reports it and leaves it as it is).  A target that is not there is staged
    without looking at it again (``absent``: the commit checks it again under
    compare-and-swap, whatever happened in between)."""
    try:
        st = os.lstat(target)
    except FileNotFoundError:
        return _staged(target, data, sync, owner, absent=True)
    except OSError:
        pass
    else:
        if not stat.S_ISREG(st.st_mode) or (st.st_size == len(data)
                                            and _holds(target, st, data)):
            return None
    return _staged(target, data, sync, owner)


def _staged(target: str | Path, data: bytes, sync: bool, owner: int | None,
            absent: bool = False) -> StagedWrite | None:
    """:func:`stage_write`, or nothing when it refuses the target (one made a link or a
    FIFO since it was looked at): the write then finds it and reports it."""
    try:
        return stage_write(target, data, sync=sync, owner=owner, absent=absent)
    except WriteConflict:
        raise
    except RisuError:
        return None


def _holds(path: str | Path, st: os.stat_result, data: bytes) -> bool:
    """Whether the file ``st`` found at ``path`` holds exactly ``data``: read at most that
    many bytes (and one more), without following a link or waiting on a FIFO put there
    since the look (either is refused: then it does not)."""
    try:
        return read_regular(path, len(data), found=(st.st_dev, st.st_ino)) == data
    except (FileRefused, OSError):
        return False
