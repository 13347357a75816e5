"""Writing each generated document's facts summary (``facts/<component_id>.json``,
``component-facts-v1``: :mod:`risutools.projection.facts`) at the end of an ingest run, in
component id order: each staged (one syncfs for the batch), then put in place atomic and
compare-and-swap.  The summary of a component a person moved past ``candidate`` whose
projection changed and was kept out of its document is kept too; one whose document holds
this run's projection is written from it.  The ``facts/`` folder is also
what tells a catalog made by ``ingest`` from any other folder (:data:`catalog.MARKERS`)."""

from __future__ import annotations

import hashlib
import os
import stat
import time
from pathlib import Path

from risutools.canonical import document_json
from risutools.catalog.cache import IngestCache
from risutools.catalog.outcome import IngestResult, SourceOutcome
from risutools.catalog.render import safe_name
from risutools.errors import WriteConflict
from risutools.fsio import (
    StagedWrite,
    commit_staged,
    discard_staged,
    fsync_directory,
    stage_write,
    sync_filesystem,
    syncfs_available,
)
from risutools.safeio import FileRefused, own_folder, read_regular
from risutools.settings.catalog import FACTS_DIR
from risutools.targets import make_folder, os_error_line

MAX_FACTS_BYTES = 1 << 20


def write_facts(result: IngestResult, out: Path, memo: IngestCache | None = None) -> int:
    """Write the facts of every document the run generated (the first source of an id, as
    the documents); returns how many files were written or changed.  ``memo``: the cache,
    which tells which facts files hold their text already (:attr:`SourceOutcome.
    facts_verified`: neither rendered nor read) and records the others as compared."""
    kept = result.facts_kept  # (a reviewed document that holds this run's projection, as
    # after an ingest killed between its document and its facts, gets its facts again)
    facts: dict[str, tuple[SourceOutcome, int]] = {}
    for s in result.sources:
        if s.status != "ok":
            continue
        for k, cid in enumerate(s.component_ids()):
            if cid not in kept:
                facts.setdefault(cid, (s, k))
    if not facts:
        return 0
    folder = out / FACTS_DIR
    # a facts/ that leads elsewhere, or is a link at all, is refused (one line, exit 2)
    own_folder(out, folder, f"{FACTS_DIR}/")
    # (the ones the cache verified are neither read nor written: a run with 10 changed
    # among 2,000 stages, sorts and looks at those 10 only)
    todo = {cid: job for cid, job in facts.items() if not _verified(*job)}
    if not todo:
        return 0
    batch = syncfs_available()  # one syncfs for the batch, else an fsync a file
    staged: list[tuple[StagedWrite, str | None]] = []
    changed = 0
    before = time.time_ns()
    try:
        make_folder(folder)
        for cid in sorted(todo):
            job = _one(folder, cid, *todo[cid], batch, memo, before)
            if job is not None:
                staged.append(job)
        if staged and batch:
            sync_filesystem(folder)
        changed = sum(_commit(job, base) for job, base in staged)
        if changed:
            fsync_directory(folder)
    except OSError as exc:
        raise os_error_line(exc, folder) from None
    finally:
        for pending, _ in staged:
            if not pending.done:
                discard_staged(pending)
    return changed


def _one(folder: Path, cid: str, s: SourceOutcome, k: int, batch: bool,
         memo: IngestCache | None, before: int) -> tuple[StagedWrite, str | None] | None:
    """The staged write of one component's facts file the cache did not verify (None:
    nothing to write); one found holding its text is recorded."""
    name = safe_name(cid) + ".json"
    text = s.facts_texts[k] if len(s.facts_texts) > k else document_json(s.facts[k])
    job, st = _stage(folder / name, text.encode("utf-8"), batch)
    if job is None and st is not None and memo is not None and len(s.facts_digests) > k:
        memo.remember(f"{FACTS_DIR}/{name}", st, s.facts_digests[k], "unchanged", "", before)
    return job


def _verified(s: SourceOutcome, k: int) -> bool:
    """Whether the cache verified the ``k``-th facts file of ``s`` (it holds its text)."""
    return len(s.facts_verified) > k and s.facts_verified[k] is not None


def _stage(target: Path, data: bytes, batch: bool
           ) -> tuple[tuple[StagedWrite, str | None] | None, os.stat_result | None]:
    """The staged write of ``target`` and the sha256 of the bytes it replaces (None: there
    was nothing), or None when it already holds ``data`` (then with its stat as it was
    before it was read) or is not a regular file."""
    try:
        st = os.lstat(target)
    except OSError:  # (not there, or its folder cannot be looked in: as os.path.lexists)
        return (stage_write(target, data, sync=not batch, absent=True), None), None
    if not stat.S_ISREG(st.st_mode):
        return None, None  # a link, FIFO, device or folder: left as it is (the review says
        # so); never read through
    try:  # (the file looked at: no link followed, no wait on a FIFO put there since)
        current = read_regular(target, MAX_FACTS_BYTES, found=(st.st_dev, st.st_ino))
    except FileRefused:
        return None, None  # too large, or replaced since: left as it is (the review says so)
    if current == data:
        return None, st
    return (stage_write(target, data, sync=not batch), hashlib.sha256(current).hexdigest()), None


def _commit(job: StagedWrite, base: str | None) -> int:
    try:
        if base is None:
            commit_staged(job, expect_absent=True, sync_dir=False)
        else:
            commit_staged(job, expect_sha256=base, sync_dir=False)
    except WriteConflict:
        return 0  # changed while this run read it: the next run writes it
    return 1
