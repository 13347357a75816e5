"""Writing each generated document's facts summary (``facts/<component_id>.json``,
``component-facts-v1``: :mod:`risutools.projection.facts`) at the end of an ingest run, in
component id order, each atomic and compare-and-swap.  The summary of a component a person
moved past ``candidate`` (its document was kept) is kept too.  The ``facts/`` folder is also
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
from risutools.fsio import atomic_write, fsync_directory, os_error_line
from risutools.projection.facts import FACTS_DIR
from risutools.safeio import FileRefused, read_regular

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
    changed = 0
    try:
        folder.mkdir(exist_ok=True)
        for cid in sorted(facts):
            changed += _write_one(folder / (safe_name(cid) + ".json"),
                                  document_json(facts[cid]).encode("utf-8"))
        if changed:
            fsync_directory(folder)
    except OSError as exc:
        raise os_error_line(exc, folder) from None
    return changed


def _write_one(target: Path, data: bytes) -> int:
    if not os.path.lexists(target):
        atomic_write(target, data, sync_dir=False, expect_absent=True)
        return 1
    try:
        current = read_regular(target, MAX_FACTS_BYTES)
    except FileRefused:
        return 0  # not a regular file, or too large: left as it is (the review says so)
    if current == data:
        return 0
    try:
        atomic_write(target, data, sync_dir=False,
                     expect_sha256=hashlib.sha256(current).hexdigest())
    except WriteConflict:
        return 0  # changed while this run read it: the next run writes it
    return 1
