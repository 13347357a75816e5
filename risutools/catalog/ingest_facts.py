"""Writing each generated document's facts summary (``facts/<component_id>.json``,
``component-facts-v1``: :mod:`risutools.projection.facts`) at the end of an ingest run, in
component id order: each staged (one syncfs for the batch), then put in place atomic and
compare-and-swap.  The summary of a component a person moved past ``candidate`` (its
document was kept) is kept too.  The ``facts/`` folder is also
what tells a catalog made by ``ingest`` from any other folder (:data:`catalog.MARKERS`)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from risutools.canonical import document_json
from risutools.catalog.outcome import IngestResult
from risutools.catalog.render import safe_name
from risutools.errors import WriteConflict
from risutools.fsio import (
    StagedWrite,
    commit_staged,
    discard_staged,
    fsync_directory,
    os_error_line,
    stage_write,
    sync_filesystem,
    syncfs_available,
)
from risutools.projection.facts import FACTS_DIR
from risutools.safeio import FileRefused, check_inside, read_regular

MAX_FACTS_BYTES = 1 << 20


def write_facts(result: IngestResult, out: Path) -> int:
    """Write the facts of every document the run generated (the first source of an id, as
    the documents); returns how many files were written or changed."""
    kept = set(result.kept_reviewed)
    facts: dict[str, dict[str, Any]] = {}
    for s in result.sources:
        if s.status != "ok" or len(s.facts) != len(s.documents):
            continue
        for doc, f in zip(s.documents, s.facts, strict=True):
            cid = str(doc.get("component_id"))
            if cid not in kept:
                facts.setdefault(cid, f)
    if not facts:
        return 0
    folder = out / FACTS_DIR
    batch = syncfs_available()  # one syncfs for the batch, else an fsync a file
    staged: list[tuple[StagedWrite, str | None]] = []
    changed = 0
    check_inside(out, folder)  # a facts/ that leads elsewhere is refused (one line, exit 2)
    try:
        folder.mkdir(exist_ok=True)
        for cid in sorted(facts):
            job = _stage(folder / (safe_name(cid) + ".json"),
                         document_json(facts[cid]).encode("utf-8"), batch)
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


def _stage(target: Path, data: bytes, batch: bool) -> tuple[StagedWrite, str | None] | None:
    """The staged write of ``target`` and the sha256 of the bytes it replaces (None: there
    was nothing), or None when it already holds ``data`` or is not a regular file."""
    if not os.path.lexists(target):
        return stage_write(target, data, sync=not batch, absent=True), None
    try:
        current = read_regular(target, MAX_FACTS_BYTES)
    except FileRefused:
        return None  # not a regular file, or too large: left as it is (the review says so)
    if current == data:
        return None
    return stage_write(target, data, sync=not batch), hashlib.sha256(current).hexdigest()


def _commit(job: StagedWrite, base: str | None) -> int:
    try:
        if base is None:
            commit_staged(job, expect_absent=True, sync_dir=False)
        else:
            commit_staged(job, expect_sha256=base, sync_dir=False)
    except WriteConflict:
        return 0  # changed while this run read it: the next run writes it
    return 1
