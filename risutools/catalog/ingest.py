"""Batch ingest: a folder tree of downloads -> a catalog of matrix-component-v1 documents.

The pipeline for one source file is ``formats.read_path`` (one streaming pass:
SHA-256 of the whole file while the module is parsed, assets skipped) ->
``projection.project`` per module (a ``.charx`` yields its embedded
``module.risum``).  Around it this module adds what a batch needs:

* discovery by content (``formats.detect``), not by extension;
* an incremental cache (:mod:`risutools.catalog.cache`): a file whose size, mtime and
  ctime are unchanged is not hashed again, and a file whose SHA-256 was already
  projected by this tool version (same post id, language and notes) is not read;
* any ``concurrent.futures`` executor (a process pool on all cores by default;
  Dask's distributed client offers the same interface);
* de-duplication by SHA-256: identical bytes are one source; the copy with the
  larger post id is kept and the others are listed as its duplicates;
* deterministic writes through the one write path (:mod:`risutools.fsio`: atomic,
  compare-and-swap under the catalog folder's lock, modes kept); only a document
  that reads as ``review_status: candidate`` is ever replaced: a reviewed one is
  kept (``kept_reviewed``), and one that cannot be read (a merge conflict, a
  trailing comma, a torn NDJSON line, bytes that are not UTF-8, not a regular
  file) is kept byte for byte and reported (``kept_unreadable``, exit 1);
* a bad file is recorded (path + one-line reason) and the run goes on;
* file names that are not UTF-8 are shown escaped (``\\xNN``) and cached by their
  exact bytes.

Layout: this module runs the batch (:func:`ingest`, the cache check of each file, the
duplicates); :mod:`~risutools.catalog.walk` finds the files,
:mod:`~risutools.catalog.sourcefile` does the work of one file (in a worker),
:mod:`~risutools.catalog.pool` runs it, :mod:`~risutools.catalog.staging` writes the temp
files, :mod:`~risutools.catalog.ingest_write` (and :mod:`~risutools.catalog.ndjson_merge`)
writes the catalog, :mod:`~risutools.catalog.render` gives a document's text and file name,
and :mod:`~risutools.catalog.outcome` holds what the run reports.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from concurrent.futures import Executor
from pathlib import Path
from typing import Any

from risutools.catalog.cache import CachedOutcome, IngestCache
from risutools.catalog.cache_keys import SourceStat, result_key, source_stat
from risutools.catalog.ingest_facts import write_facts
from risutools.catalog.ingest_sweeps import FolderSweeps
from risutools.catalog.ingest_write import ndjson_key, ndjson_settled, write_catalog
from risutools.catalog.ndjson_merge import NDJSON_NAME, line_digests
from risutools.catalog.outcome import IngestResult, SourceOutcome
from risutools.catalog.pool import run_sources
from risutools.catalog.render import render, safe_name, under
from risutools.catalog.sourcefile import StageSpec, process_batch, process_file
from risutools.catalog.staging import Stager
from risutools.catalog.walk import NOT_RISU, discover, find_sources
from risutools.collector import alive_frozen, cycles_paused
from risutools.contract.notesfind import (
    NotesIndex,
    document_keys,
    find_notes,
    notes_index,
    notes_name_by_id,
    notes_signature,
    orphans,
)
from risutools.errors import UsageError
from risutools.fsio import display_path, sweep_temp_files, syncfs_available, write_lock
from risutools.projection import post_id_from_name
from risutools.projection.run import grades
from risutools.projection.text import check_lang
from risutools.safeio import FoundFile, check_inside, own_folder, require_folder
from risutools.settings.catalog import CACHE_DIR, FACTS_DIR, default_jobs
from risutools.settings.config import Settings
from risutools.targets import check_target, make_folder, os_error_line

CACHE_NAME = f"{CACHE_DIR}/ingest.msgpack"
_FACTS_PREFIX = FACTS_DIR + "/"  # (a facts file's name in the cache)

ProgressFn = Callable[[int, int], None]  # (files_done, bytes_done)


def ingest(
    src: str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    ndjson: bool = False,
    lang: str = "en",
    notes_dir: str | os.PathLike[str] | None = None,
    jobs: int | None = None,
    executor: Executor | None = None,
    use_cache: bool = True,
    on_start: Callable[[int, int], None] | None = None,
    on_progress: ProgressFn | None = None,
    settings: Settings | None = None,
) -> IngestResult:
    """Ingest every supported file below ``src`` into the catalog folder ``out``.

    ``executor``: any :class:`concurrent.futures.Executor` (the caller owns it);
    without one, ``jobs`` worker processes are used (default: all cores;
    ``jobs=1`` runs in this process).  ``on_start(files, bytes)`` and
    ``on_progress(files_done, bytes_done)`` feed a progress display.  ``settings`` (the
    CLI's layered configuration): ``exclude:`` globs skip files of ``src``; ``rules:``,
    ``--select``/``--ignore`` grade the analysis findings documents show.
    """
    _check_options(lang, jobs, executor, notes_dir)
    src_p, out_p = Path(src), Path(out)
    _check_folders(src_p, out_p)
    _prepare_catalog(out_p)
    notes_s, notes_sig, notes_ix = _notes(out_p, notes_dir, executor)
    notes_sig += _grades_signature(settings)  # (part of every cache key)
    unlisted: list[tuple[str, str]] = []
    frozen = contextlib.ExitStack()
    with cycles_paused():  # (the cache and a source's bookkeeping: acyclic, by the thousand)
        cache = IngestCache.load(out_p / CACHE_NAME, use_cache)
        sweeps = FolderSweeps.begin(out_p, cache, out_p / FACTS_DIR)
        run = _Run(src_p, out_p, lang, notes_sig, cache, on_progress)
        run.notes = notes_ix
        run.verify = not ndjson
        files, skipped = run.find(unlisted)
        if settings is not None and settings.exclude:
            files = [item for item in files if not settings.is_excluded(item[1])]
        todo = run.plan(files, on_start)
        # the cache and the cached sources: frozen before the collector resumes, so neither
        # its next pass nor those the projections trigger walk them
        frozen.enter_context(alive_frozen())
    with frozen:
        own_pool = executor is None and (jobs if jobs is not None else default_jobs()) > 1
        stage = _stage_spec(out_p, ndjson, executor) if todo else None  # (nothing to stage)
        try:
            result = _run(run, todo, files, skipped, unlisted, (lang, notes_s, ndjson, jobs),
                          executor, stage, settings)
        except KeyboardInterrupt:  # Ctrl-C: the workers are stopped; none of the temp files
            sweep_temp_files(out_p, own=True)  # staged will be committed: removed; what was
            raise  # committed (each document whole) stays, the cache is not saved
        if own_pool and stage is not None:
            sweep_temp_files(out_p)  # what a worker that died left (named after this process)
        with cycles_paused():
            if notes_s is not None and run.notes is not None:
                result.notices.extend(_orphan_notes(result, notes_s, run.notes))
            _save_cache(run.cache, set(run.outcomes) | run.not_risu, sweeps)
    return result


def _run(run: _Run, todo: list[tuple[str, str, int]], files: list[tuple[str, str, str]],
         skipped: list[str], unlisted: list[tuple[str, str]], how: tuple[str, Any, bool, Any],
         executor: Executor | None, stage: StageSpec | None, settings: Settings | None
         ) -> IngestResult:
    """Project the sources to do and write the catalog (the staged files in one Stager)."""
    lang, notes_s, ndjson, jobs = how
    out_p = run.out
    with Stager(out_p, enabled=not ndjson and executor is not None) as stager:
        run.stager = stager
        formats = {path: fmt for path, _, fmt in files}
        found = run.found if executor is None else None  # (a cluster's machine: its own ids)
        if todo:
            run_sources(todo, lang, notes_s, ndjson, jobs, executor, run.finished, stage, settings,
                        formats, found)
        key = ndjson_key([run.outcomes[k] for k in sorted(run.outcomes)]) \
            if ndjson and notes_s is None and not unlisted else None
        settled = ndjson_settled(run.cache, out_p / NDJSON_NAME, key)
        # (NDJSON: a cached source whose every line the file holds is not unpacked)
        lines = line_digests(out_p / NDJSON_NAME) if ndjson and not settled else None
        with cycles_paused():
            again = run.unpack_needed(lines=lines)
        if again:  # packed outcomes that did not fit: projected again, here
            run_sources(again, lang, notes_s, ndjson, 1, None, run.finished, stage, settings,
                        formats, run.found)
            key, settled = None, False  # (other outcomes: the lines are merged)
        with cycles_paused():
            result = _result(run, unlisted, skipped)
            write_catalog(result, out_p, ndjson, stager, run.cache, (key, settled))
            write_facts(result, out_p, run.cache)
    return result


def _result(run: _Run, unlisted: list[tuple[str, str]], skipped: list[str]) -> IngestResult:
    """The run's outcomes, with the files the walk could not list, in path order and
    deduplicated."""
    lost = {rel: SourceOutcome(path=display_path(rel), size=0, error=why)
            for rel, why in unlisted if rel not in run.outcomes}
    outcomes = {**run.outcomes, **lost}
    result = IngestResult(sources=[outcomes[k] for k in sorted(outcomes)],
                          skipped=skipped,
                          notices=[run.cache.problem] if run.cache.problem else [])
    _deduplicate(result.sources)
    return result


def _keys_decide(index: NotesIndex | None, ids: list[str]) -> bool:
    """Whether the notes file of one of these components is decided by its document's keys
    (a ``for:`` or its notes' digest), not its id alone (:func:`notes_by_id`).  Only when
    some notes file has a ``for:``: without one, a component whose id takes no notes file
    took none when it was projected (under the same notes: the cache's key holds their
    digest), so its document records no notes digest, and its keys find nothing."""
    return index is not None and bool(index.by_for) and any(
        not notes_name_by_id(index, cid)[0] for cid in ids)


def _orphan_notes(result: IngestResult, notes: str, index: NotesIndex) -> list[str]:
    """One line per notes file that no component of this run took (by its id, a slug
    alias, ``for:`` or the digest its document records): a name that matches nothing.  A
    cached source's documents left packed (:meth:`_Run.unpack_needed`): its ids decide."""
    # (files several of which name one module by its for: say so as notes-ambiguous)
    used: set[str] = {n for names in index.for_many.values() for n in names}
    for s in result.sources:
        if s.status != "ok":
            continue
        if isinstance(s, CachedOutcome) and not s.unpacked:
            named = (notes_name_by_id(index, cid)[1] for cid in s.ids)
            used.update(name for name in named if name is not None)
            continue
        for doc in s.documents:
            found = find_notes(notes, str(doc.get("component_id", "")), index=index,
                               **document_keys(doc))
            if found is not None:
                used.add(found.name)
    # (a notes file a source took and could not read failed that source: its line says so)
    left = orphans(notes, used, index)
    failed = _said_failing(notes, left, [s.error for s in result.sources if s.error])
    return [f"notes/{display_path(n)}: matches no component of this run (not its id, a slug "
            "alias, nor a `for:` of a module read); rename it after its component "
            "(notes/<component_id>.yaml), or give it a `for:`" for n in left if n not in failed]


def _said_failing(notes: str, names: list[str], errors: list[str]) -> set[str]:
    """The notes files (of ``names``) a failed source's line begins with (``<path>:``),
    found by each line's prefixes that end in ``:`` and could be such a path (one pass over
    the lines, not one a notes file: a catalog whose notes fail by the thousand)."""
    shown = {display_path(os.path.join(notes, n)) + ":": n for n in names}
    longest = max(map(len, shown), default=0)
    out: set[str] = set()
    for e in errors:
        at = e.find(":")
        while 0 <= at < longest:
            n = shown.get(e[:at + 1])
            if n is not None:
                out.add(n)
            at = e.find(":", at + 1)
    return out


def _grades_signature(settings: Settings | None) -> str:
    """What the settings change in the documents, for the cache key ("" when nothing is
    configured, so an unconfigured run keeps its keys)."""
    if settings is None:
        return ""

    g = grades(settings)
    return "\0" + g if g else ""


def _check_options(
    lang: str, jobs: int | None, executor: Executor | None,
    notes_dir: str | os.PathLike[str] | None,
) -> None:

    check_lang(lang)
    if executor is None and jobs is not None and jobs < 1:
        raise UsageError("--jobs", f"must be at least 1, not {jobs}")
    if notes_dir is not None:
        require_folder(notes_dir, "the notes folder")


def _check_folders(src: Path, out: Path) -> None:
    require_folder(src, "the source folder")
    check_target(out, folder=True)  # the catalog: a folder, with no file above it


def _notes(
    out: Path, notes_dir: str | os.PathLike[str] | None, executor: Executor | None
) -> tuple[str | None, str, NotesIndex | None]:
    """(the notes folder as the workers see it, or None without one; its digest; its
    index).  The catalog's own ``notes/`` must stay inside the catalog (a link elsewhere is
    refused: its files would be projected into the documents); a folder named by
    ``--notes`` is the caller's.  The folder is read once, for the index and the digest
    both, unless it holds a ``*.yaml`` the index does not read (then the digest reads it)."""
    notes = Path(notes_dir) if notes_dir is not None else out / "notes"
    if notes_dir is None:
        check_inside(out, notes)
    if not notes.is_dir():
        return None, "", None
    notes_s = str(notes)
    if executor is not None:
        notes_s = os.path.abspath(notes_s)  # a worker may run in another folder (a cluster)
    index = notes_index(notes_s)
    signature = index.signature if index.signature is not None else notes_signature(notes)
    return notes_s, signature, index


def _stage_spec(out: Path, ndjson: bool, executor: Executor | None) -> StageSpec | None:
    """Documents are staged where they are rendered (in this process or a worker of its
    own pool; never by another executor's workers, which may run on other machines)."""
    if ndjson or executor is not None:
        return None

    return StageSpec(os.fspath(out), os.getpid(), sync=not syncfs_available())


def _save_cache(cache: IngestCache, seen: set[str], sweeps: FolderSweeps) -> None:
    sweeps.record()
    cache.prune(seen)
    try:
        cache.save()
    except OSError as exc:
        raise os_error_line(exc, cache.path) from None


#: what :meth:`_Run._verify` takes a document of an NDJSON catalog to be (its facts file
#: is then checked: what a run that finds its line unchanged writes)
_FACTS_ONLY = ("unchanged", "")


class _Run:
    """The bookkeeping of one run: cache hits, outcomes as they arrive, progress."""

    def __init__(self, src: Path, out: Path, lang: str, notes_sig: str, cache: IngestCache,
                 on_progress: ProgressFn | None) -> None:
        self.src, self.out, self.lang, self.notes_sig = src, out, lang, notes_sig
        self.cache = cache
        self.on_progress = on_progress
        self.outcomes: dict[str, SourceOutcome] = {}
        self.rels: dict[str, str] = {}  # each file's exact relative path, by its path
        # the stat of each file as planned (cache.source_stat): the cache's key for it (taken before
        # the file is read, so a file that changes while it is read is read again next time)
        self.stats: dict[str, SourceStat | None] = {}
        self.stager: Stager | None = None
        # whether a cached document's catalog file is checked by its stat (its facts file
        # always is; NDJSON: no document files)
        self.verify = True
        self.folder = under(os.fspath(out))
        self.facts_folder = under(self.folder + FACTS_DIR)
        # (stat, cached outcome) of each file the walk asked the cache about (:meth:`known`)
        self.known_stats: dict[str, tuple[SourceStat | None, CachedOutcome | None]] = {}
        self.not_risu: set[str] = set()  # the files known not to be Risu files (relative)
        self.paths: dict[str, str] = {}  # each file's path, by its exact relative path
        # each file's lstat as the walk found it (through the folder it listed), and its
        # (device, inode): a worker reads that file only
        self.walked: dict[str, os.stat_result] = {}
        self.found: dict[str, FoundFile] = {}
        self.files = 0
        self.bytes = 0
        #: the notes folder's index, taken once (None: no notes folder)
        self.notes: NotesIndex | None = None

    def known(self, path: str, rel: str, found: os.stat_result) -> str | None:
        """The format of a file the cache knows (its stat as the walk ``found`` it is the
        one recorded, with an outcome of these settings): such a file is not opened to
        sniff it.  Its stat and cached outcome are kept for :meth:`plan`."""
        st = self._found(path, found)
        if st is not None and self.cache.known_not_risu(rel, st):
            self.not_risu.add(rel)
            return NOT_RISU
        hit = self.cache.lookup(rel, path, self.lang, post_id_from_name(path), self.notes_sig,
                                st)
        self.known_stats[path] = (st, hit)
        return hit.format if hit is not None else None

    def find(self, unlisted: list[tuple[str, str]]
             ) -> tuple[list[tuple[str, str, str]], list[str]]:
        """The walk (:func:`find_sources`), the cache asked about each file; the files it
        sniffed as not Risu files recorded (:meth:`not_risu_sniffed`)."""
        sniffed: list[tuple[str, str]] = []
        found = find_sources(self.src, self.out, unlisted,
                             self.known if self.cache.enabled else None, self.walked, sniffed)
        self.not_risu_sniffed(sniffed)
        return found

    def not_risu_sniffed(self, sniffed: list[tuple[str, str]]) -> None:
        """Record the files the walk sniffed as not Risu files, at the stat the walk took
        before it sniffed each (:meth:`known`): the next run does not open them."""
        for path, rel in sniffed:
            st = self.known_stats.get(path, (None, None))[0]
            if st is not None:
                self.cache.store_not_risu(rel, st)
                self.not_risu.add(rel)

    def plan(
        self, files: list[tuple[str, str, str]], on_start: Callable[[int, int], None] | None
    ) -> list[tuple[str, str, int]]:
        """The files to read: (path, relative path as shown, size); cache hits are done."""

        pre = self.known_stats
        found = [pre.get(path) or (self._found(path, self.walked.get(path)), None)
                 for path, _, _ in files]
        sizes = [st[0] if st is not None else 0 for st, _ in found]
        if on_start:
            on_start(len(files), sum(sizes))
        todo: list[tuple[str, str, int]] = []
        lookup = self.cache.enabled
        for (path, rel, _fmt), size, (st, hit) in zip(files, sizes, found, strict=True):
            self.rels[path] = rel
            self.stats[path] = st
            shown = display_path(rel)
            if hit is None and lookup and path not in pre:
                hit = self.cache.lookup(rel, path, self.lang, post_id_from_name(path),
                                        self.notes_sig, st)
            if hit is None:
                todo.append((path, shown, size))
                continue
            hit.path, hit.size, hit.cached = shown, size, True
            self._verify(hit, self.verify)
            self.outcomes[rel] = hit
            self.paths[rel] = path
            self.files += 1
            self.bytes += size
        self.known_stats = {}
        if self.on_progress and self.files:
            self.on_progress(self.files, self.bytes)
        return todo

    def _found(self, path: str, st: os.stat_result | None) -> SourceStat | None:
        """What the cache compares of the file's stat as the walk found it
        (:func:`source_stat`; None: none); its (device, inode) kept for the worker that
        reads it, which reads that file only."""
        if st is None:
            return None
        self.found[path] = (st.st_dev, st.st_ino)
        return source_stat(st)

    def _verify(self, hit: CachedOutcome, documents: bool) -> None:
        """Which of a cached source's documents (``documents``: else its facts only, as
        an NDJSON catalog has them) and facts the catalog holds already, by the cache's
        record of each file's stat: those are neither rendered nor read.  A source with
        one that is not (or none recorded) is unpacked later (``settled`` False)."""
        ids = hit.ids
        if len(hit.digests) != len(ids) or len(hit.facts_digests) != len(ids):
            return
        verify, folder, facts_folder = self.cache.verify, self.folder, self.facts_folder
        verified, facts_verified = hit.verified, hit.facts_verified
        settled = True
        for cid, digest, fdigest in zip(ids, hit.digests, hit.facts_digests, strict=True):
            name = safe_name(cid) + ".json"
            done = verify(name, folder + name, digest) if documents else _FACTS_ONLY
            if documents:
                verified.append(done)
            if done is None:
                settled = False
                facts_verified.append(None)
                continue
            facts = verify(_FACTS_PREFIX + name, facts_folder + name, fdigest)
            facts_verified.append(facts)
            if facts is None and done[0] != "kept_reviewed":
                settled = False  # (a reviewed document's facts are not written)
        hit.settled = settled

    def unpack_needed(self, lines: set[str] | None = None) -> list[tuple[str, str, int]]:
        """Unpack the documents of the cached sources that need them: a document or facts
        file not verified, an id a source of other bytes has too (the writer compares
        their documents; sources of the same bytes are one source, the others duplicates
        it never reads: :func:`_deduplicate`), or one whose notes file only its document's
        keys decide (:func:`_keys_decide`); with ``lines`` (NDJSON: the digests of the
        file's lines), a document whose line is not there; those whose packed documents do
        not fit are forgotten and returned, to project."""
        seen: dict[str, str] = {}  # id -> the bytes (sha256) of the first source with it
        shared: set[str] = set()
        for outcome in self.outcomes.values():
            if not outcome.error:
                sha = outcome.sha256 or f"\0{id(outcome)}"  # (no digest: a source alone)
                for cid in outcome.component_ids():
                    if seen.setdefault(cid, sha) != sha:
                        shared.add(cid)
        again: list[tuple[str, str, int]] = []
        for rel, outcome in list(self.outcomes.items()):
            if (not isinstance(outcome, CachedOutcome) or outcome.error
                    or not (_keys_decide(self.notes, outcome.ids) or not outcome.settled
                            or (shared and not shared.isdisjoint(outcome.ids))
                            or (lines is not None and not (
                                outcome.digests and lines.issuperset(outcome.digests))))):
                continue
            if not outcome.unpack():
                self.cache.forget(outcome, self.lang, self.notes_sig)
                del self.outcomes[rel]
                self.files -= 1
                self.bytes -= outcome.size
                again.append((self.paths[rel], outcome.path, outcome.size))
        return again

    def finished(self, outcome: SourceOutcome, path: str) -> None:
        rel = self.rels[path]
        self.outcomes[rel] = outcome
        if self.stager is not None:
            self.stager.stage(outcome)
        self.cache.store(rel, outcome, path, self.lang, self.notes_sig,
                         self.stats.get(path))
        self.files += 1
        self.bytes += outcome.size
        if self.on_progress:
            self.on_progress(self.files, self.bytes)


def _prepare_catalog(out: Path) -> None:
    """Create the catalog folder, check it can be written (the lock file is made there),
    and remove the temp files a killed run left in the cache's folder (in the catalog's:
    once the cache is read, :class:`FolderSweeps`).  OS failures are one line (exit 2)."""
    try:
        make_folder(out)
        with write_lock(out / NDJSON_NAME):
            pass
        # the cache's folder: never a link (leading elsewhere, or to a folder of the
        # catalog: what is swept, read and written there stays in a folder of its own)
        own_folder(out, (out / CACHE_NAME).parent, f"{CACHE_DIR}/")
        own_folder(out, out / FACTS_DIR, f"{FACTS_DIR}/")  # (refused before any document)
        sweep_temp_files((out / CACHE_NAME).parent)
    except OSError as exc:
        raise os_error_line(exc, out) from None


def _post_rank(post_id: str | None) -> int:
    return int(post_id) if post_id and post_id.isdigit() else -1


def _deduplicate(sources: list[SourceOutcome]) -> None:
    """Identical bytes are one source: keep the larger post id, list the others."""
    groups: dict[str, list[SourceOutcome]] = {}
    for s in sources:
        if s.sha256 and not s.error:
            groups.setdefault(s.sha256, []).append(s)
    for members in groups.values():
        if len(members) < 2:
            continue
        members.sort(key=lambda s: (-_post_rank(s.post_id), s.path))
        keep = members[0]
        for other in members[1:]:
            other.duplicate_of = keep.path


__all__ = [
    "NDJSON_NAME",
    "IngestResult",
    "SourceOutcome",
    "discover",
    "ingest",
    "process_batch",
    "process_file",
    "render",
    "result_key",
]
