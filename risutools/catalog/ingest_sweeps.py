"""Which of the catalog's folders an ingest run sweeps of the temp files a killed writer
left (:func:`risutools.fsio.sweep_temp_files`), and which it need not list.

Listing a folder of 2,000 documents costs about a millisecond; a run sweeps the catalog's
folder as it starts, and ``facts/`` before its first write there (the cache's own folder,
a few files that the cache's save changes, is swept every run).  A folder
the cache recorded as swept (:meth:`IngestCache.remember_folder`: its size, times and
inode) and whose stat is still that one has had no entry made or removed since, so no temp
file: it is not listed again (:func:`risutools.fsio.mark_swept`).

A folder is recorded only when this run's sweep found no temp file in it (none removed,
none of a live writer spared), it had not changed for ``RACY_NS`` before the sweep (a
change in the same clock tick as the listing cannot hide behind an unchanged stat), and it
is unchanged when the run ends.  A run that writes into a folder leaves it unrecorded: the
next run lists it.  A ``facts/`` folder neither recorded nor written is swept (and so
recorded) only once it has settled.  Without the cache (``--no-cache``) every folder is
swept as it always was.
"""

from __future__ import annotations

import os
import stat as stat_mod
from pathlib import Path

from risutools.catalog import cache as ingest_cache
from risutools.catalog.cache import IngestCache
from risutools.fsio import mark_swept, sweep_temp_files
from risutools.targets import os_error_line

#: a folder's stat as the cache compares it
_Key = tuple[int, int, int, int]


def _key(st: os.stat_result) -> _Key:
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


def _stat(path: Path, *, follow: bool) -> os.stat_result:
    return os.stat(path) if follow else os.lstat(path)


class FolderSweeps:
    """The sweeps of one run: :meth:`begin` as it starts, :meth:`record` before the cache
    is saved."""

    def __init__(self, out: Path, cache: IngestCache, facts: Path) -> None:
        self.cache = cache
        # (the cache's name of each folder, its path, and whether it is swept as the run
        # starts even when it has not settled): the catalog's (the path the user gave, a
        # link or not), facts/ (inside the catalog: never a link, see write_facts)
        self.folders = [(f"{path.relative_to(out).as_posix()}/", path, eager)
                        for path, eager in ((out, True), (facts, False))]
        self.candidates: list[tuple[str, Path, bool, _Key]] = []

    @classmethod
    def begin(cls, out: Path, cache: IngestCache, facts: Path) -> FolderSweeps:
        """The sweeps of a run that starts: :meth:`start` done (an OS failure: one line,
        exit 2)."""
        sweeps = cls(out, cache, facts)
        try:
            sweeps.start()
        except OSError as exc:
            raise os_error_line(exc, out) from None
        return sweeps

    def start(self) -> None:
        """Sweep each folder the cache does not vouch for (``facts/``: once settled)."""
        settled_before = self.cache.started_ns - ingest_cache.RACY_NS
        for name, path, eager in self.folders:
            try:
                st = _stat(path, follow=eager)
            except FileNotFoundError:
                continue
            if not stat_mod.S_ISDIR(st.st_mode):
                continue
            if self.cache.folder_swept(name, st):
                mark_swept(path)
                continue
            settled = max(st.st_mtime_ns, st.st_ctime_ns) < settled_before
            if not (eager or (settled and self.cache.enabled)):
                continue  # (swept before the run's first write there)
            spared: list[Path] = []
            removed = sweep_temp_files(path, spared=spared)
            if settled and not removed and not spared and self.cache.enabled:
                self.candidates.append((name, path, eager, _key(st)))

    def record(self) -> None:
        """Record each folder swept clean as the run started and unchanged since."""
        for name, path, follow, seen in self.candidates:
            try:
                st = _stat(path, follow=follow)
            except OSError:
                continue
            if _key(st) == seen:
                self.cache.remember_folder(name, st)
