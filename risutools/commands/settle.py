"""A reader's MC305 that a writer's two steps made, found again under the readers' lock.

A status change writes its log line first and its document second, each atomic, under the
catalog's writer lock; readers (``validate``, ``verify``, ``review``) take no lock, so a
long review never holds a writer back.  A reader that reads the log between the two steps
sees the line without the change: MC305 for that component, of a catalog consistent before
and after.  When a run finds MC305 and a writer may have been at work (the catalog's lock is
held now, or a document MC305 names was replaced since the run began), the run is made
again holding the lock shared (:func:`risutools.locking.readers_lock`): no writer is half
way then, and the verdict is the catalog's own (docs/writes.md)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator
from operator import attrgetter
from pathlib import Path

from risutools.canonical import doc_sha256
from risutools.contract.checks_catalog import mc305
from risutools.contract.folders import NDJSON_EXTS
from risutools.contract.loaders import load_file
from risutools.contract.result import DocumentInfo, Result
from risutools.contract.transitions import find_catalog_root
from risutools.errors import RisuError
from risutools.locking import LOCK_NAME, readers_lock, writer_active

#: the rule a writer's two steps can make a reader report
RACED = mc305.id
#: how long before the run's start a document's change still counts (a file system keeps
#: coarse times: a few milliseconds)
SLACK_NS = 50_000_000
#: a finding's rule
_RULE = attrgetter("rule")


def raced(outline: Result, since_ns: int, roots: Iterable[Path] | None = None) -> list[Path]:
    """The catalogs whose MC305 of ``outline`` may be a writer's half-done change: a writer
    holds the catalog's lock now, or a document MC305 names is not the one read (its
    canonical hash now, else its change time since ``since_ns``).  ``roots``: the catalog
    (a review's), else each finding's own."""
    flagged = [d for d in outline.documents  # (each document's rules compared in C)
               if d.file and RACED in map(_RULE, d.findings)]
    if not flagged:
        return []
    places = set(roots) if roots is not None else \
        {r for r in (find_catalog_root(Path(d.file)) for d in flagged) if r is not None}
    replaced = any(_changed(d, since_ns - SLACK_NS) for d in flagged)
    return sorted(r for r in places if replaced or writer_active(r / LOCK_NAME))


def _changed(info: DocumentInfo, since_ns: int) -> bool:
    """Whether the document ``info`` was read from is not the one there now: the file's
    one document's canonical hash against the one read; for a line of an NDJSON file, or a
    document that cannot be read again, whether the file was replaced since ``since_ns``."""
    where = info.path if info.path is not None else info.file
    if info.sha256 is not None and not os.fspath(where).endswith(NDJSON_EXTS):
        try:
            docs = load_file(where).documents
            if len(docs) == 1:
                return doc_sha256(docs[0].doc) != info.sha256
        except (RisuError, OSError, ValueError, TypeError, RecursionError):
            pass
    try:
        return os.stat(where).st_ctime_ns >= since_ns
    except (OSError, ValueError):  # (a name shown escaped, gone since: not known)
        return False


@contextlib.contextmanager
def readers_locks(roots: Iterable[Path]) -> Iterator[None]:
    """Each catalog's lock held shared, in the order of their roots."""
    with contextlib.ExitStack() as stack:
        for root in roots:
            stack.enter_context(readers_lock(root / LOCK_NAME))
        yield
