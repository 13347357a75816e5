"""Batch ingest: a folder tree of downloads -> a catalog of matrix-component-v1 documents.

The pipeline for one source file is ``formats.read_path`` (one streaming pass:
SHA-256 of the whole file while the module is parsed, assets skipped) ->
``projection.project`` per module (a ``.charx`` yields its embedded
``module.risum``).  Around it this module adds what a batch needs:

* discovery by content (``formats.detect``), not by extension;
* an incremental cache (:mod:`risutools.catalog.cache`): a file whose size and
  mtime are unchanged is not hashed again, and a file whose SHA-256 was already
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
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import sys
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from contextlib import suppress
from dataclasses import dataclass, field
from json.encoder import encode_basestring as _encode_str  # json's own escaper (C)
from pathlib import Path
from typing import TYPE_CHECKING, Any

from risutools import __version__
from risutools.catalog.cache import IngestCache, result_key
from risutools.errors import Code, ConfigError, RisuError, WriteConflict

if TYPE_CHECKING:
    from risutools.settings.config import Settings
from risutools.fsio import (
    StagedWrite,
    atomic_write,
    commit_staged,
    discard_staged,
    display_path,
    fsync_directory,
    os_error_line,
    sha256_file,
    stage_write,
    sweep_temp_files,
    write_lock,
)

NDJSON_NAME = "components.ndjson"
CACHE_NAME = ".risutools-cache/ingest.msgpack"

ProgressFn = Callable[[int, int], None]  # (files_done, bytes_done)


@dataclass
class SourceOutcome:
    """What happened to one source file."""

    path: str  # relative to the source folder, with "/" separators
    size: int
    format: str | None = None
    sha256: str | None = None
    post_id: str | None = None
    documents: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    error: str | None = None
    cached: bool = False
    duplicate_of: str | None = None
    # each document as it will be written (rendered in the worker; not cached); "" for
    # a document the worker staged (its temp file holds the text)
    rendered: list[str] = field(default_factory=list, repr=False)
    # per document, when the worker staged it (StageSpec): the temp file, None when the
    # target already held exactly it, or the OSError of the staging
    staged: list[str | OSError | None] | None = field(default=None, repr=False)

    @property
    def status(self) -> str:
        if self.error:
            return "failed"
        if self.duplicate_of:
            return "duplicate"
        if not self.documents:
            return "empty"
        return "ok"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "path": self.path,
            "status": self.status,
            "format": self.format,
            "size": self.size,
            "sha256": self.sha256,
            "post_id": self.post_id,
            "components": sorted(d["component_id"] for d in self.documents),
        }
        if self.duplicate_of:
            out["duplicate_of"] = self.duplicate_of
        if self.error:
            out["error"] = self.error
        if self.warnings:
            out["warnings"] = self.warnings
        return out


@dataclass
class IngestResult:
    sources: list[SourceOutcome]
    written: list[str] = field(default_factory=list)  # catalog files created or changed
    unchanged: list[str] = field(default_factory=list)
    kept_reviewed: list[str] = field(default_factory=list)  # ids a person moved past candidate
    collisions: list[str] = field(default_factory=list)  # one-line messages
    # documents left byte for byte because they cannot be read (one line each, with where)
    kept_unreadable: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # files that are not Risu files
    # one line each for what the run worked around (a cache it could not read and rebuilt)
    notices: list[str] = field(default_factory=list)

    @property
    def failures(self) -> list[SourceOutcome]:
        return [s for s in self.sources if s.status == "failed"]

    @property
    def ok(self) -> bool:
        return not self.failures and not self.collisions and not self.kept_unreadable

    def counts(self) -> dict[str, int]:
        by: dict[str, int] = {}
        for s in self.sources:
            by[s.status] = by.get(s.status, 0) + 1
        return {
            "files": len(self.sources),
            "bytes": sum(s.size for s in self.sources),
            "ok": by.get("ok", 0),
            "failed": by.get("failed", 0),
            "duplicate": by.get("duplicate", 0),
            "empty": by.get("empty", 0),
            "cached": sum(1 for s in self.sources if s.cached),
            "components": sum(len(s.documents) for s in self.sources if s.status == "ok"),
            "written": len(self.written),
            "unchanged": len(self.unchanged),
            "kept_reviewed": len(self.kept_reviewed),
            "collisions": len(self.collisions),
            "kept_unreadable": len(self.kept_unreadable),
            "not_risu": len(self.skipped),
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "tool": f"risutools {__version__}",
            "counts": self.counts(),
            "sources": [s.to_dict() for s in self.sources],
            "written": self.written,
            "unchanged": self.unchanged,
            "kept_reviewed": self.kept_reviewed,
            "collisions": self.collisions,
            "kept_unreadable": self.kept_unreadable,
            "not_risu": self.skipped,
            "notices": self.notices,
        }


# -- discovery ------------------------------------------------------------


def discover(src: Path, exclude: Path | None = None) -> tuple[list[tuple[Path, str]], list[str]]:
    """Every supported file below ``src`` (by content), sorted by relative path.

    Returns ``([(path, format)], [relative paths of files that are not Risu
    files])``.  Symbolic links are not followed; hidden folders are skipped.
    """
    found, skipped = _discover(src, exclude)
    return [(Path(path), fmt) for path, _, fmt in found], skipped


def _discover(
    src: Path, exclude: Path | None = None, unlisted: list[tuple[str, str]] | None = None
) -> tuple[list[tuple[str, str, str]], list[str]]:
    """:func:`discover` as ingest uses it: ``[(the path as text, as ``str(src / rel)``
    spells it; its relative path with "/"; its format)]`` (no path objects: one walk,
    one ``detect`` a file).  ``unlisted`` collects (relative path, why) of what the walk
    could not list or tell the type of."""
    from risutools.formats import detect

    found: list[tuple[str, str, str]] = []
    skipped: list[str] = []
    ex = exclude.resolve() if exclude is not None else None
    for path, rel in _walk(src, ex, unlisted if unlisted is not None else []):
        try:
            fmt = detect(path)
        except RisuError:
            fmt = "unreadable"  # read_path will report the reason
        if fmt is None:
            skipped.append(display_path(rel))
        else:
            found.append((path, rel, fmt))
    return found, skipped


def _under(folder: str) -> str:
    """What a relative path is joined to so that ``_under(folder) + rel`` is
    ``str(Path(folder) / rel)`` (``folder`` as a ``Path`` spells it)."""
    if folder == ".":
        return ""
    return folder if folder.endswith("/") else folder + "/"


def _walk(
    root: Path, exclude: Path | None, unlisted: list[tuple[str, str]]
) -> Iterator[tuple[str, str]]:
    """(path as text, relative path) of every file below ``root`` that is not hidden and
    not a symbolic link, in ``os.walk``'s order (top-down; a folder's files by name, then
    its subfolders by name).  Hidden folders, symbolic links to folders and ``exclude``
    are not entered.  A folder that cannot be listed, or an entry whose type cannot be
    told, is added to ``unlisted`` as (relative path, why): never passed over in silence
    (an entry gone between the listing and the look at it is simply gone).  File types
    come from the folder listing (``d_type``): no stat per file where the file system
    records them."""
    base = _under(os.fspath(root))
    todo: list[tuple[str, str]] = [(os.fspath(root), "")]  # (folder, its relative prefix)
    while todo:
        top, prefix = todo.pop()
        try:
            with os.scandir(top) as it:
                entries = list(it)
        except OSError as exc:
            why = f"{display_path(top)}: unreadable: cannot list the folder: {exc.strerror or exc}"
            unlisted.append((prefix or ".", why))
            continue
        dirs: list[os.DirEntry[str]] = []
        files: list[os.DirEntry[str]] = []
        for entry in entries:
            try:
                is_dir = entry.is_dir()
            except OSError:
                is_dir = False
            (dirs if is_dir else files).append(entry)
        for entry in sorted(files, key=_entry_name):
            name = entry.name
            if name.startswith(".") or not _regular(entry, prefix, unlisted):
                continue
            rel = prefix + name
            yield base + rel, rel
        below: list[tuple[str, str]] = []
        for entry in sorted(dirs, key=_entry_name):
            name = entry.name
            if name.startswith(".") or (exclude is not None
                                        and Path(entry.path).resolve() == exclude):
                continue
            try:
                link = entry.is_symlink()
            except OSError:
                link = False
            if not link:
                below.append((entry.path, prefix + name + "/"))
        todo.extend(reversed(below))  # the first subfolder is walked next


def _entry_name(entry: os.DirEntry[str]) -> str:
    return entry.name


def _regular(entry: os.DirEntry[str], prefix: str, unlisted: list[tuple[str, str]]) -> bool:
    """A regular file, not a symbolic link (from ``d_type`` when the listing has it)."""
    try:
        return not entry.is_symlink() and entry.is_file()
    except FileNotFoundError:
        return False  # removed since the folder was listed
    except OSError as exc:
        why = exc.strerror or exc
        unlisted.append((prefix + entry.name,
                         f"{display_path(entry.path)}: unreadable: cannot tell what it is: {why}"))
        return False


# -- one file (runs in a worker process) -----------------------------------


@dataclass(frozen=True)
class StageSpec:
    """Where a worker writes the temp files of the documents it rendered (the collecting
    process commits them): the catalog folder, the process the temp files are named after
    (the collecting one, so a sweep leaves them alone while it runs) and whether each is
    fsynced (False: the collecting process makes all of them durable with one syncfs)."""

    folder: str
    owner: int
    sync: bool


def process_file(
    path: str,
    rel: str,
    lang: str,
    notes_dir: str | None,
    post_id: str | None = None,
    ndjson: bool = False,
    stage: StageSpec | None = None,
    settings: Settings | None = None,
    fmt: str | None = None,
    size: int | None = None,
) -> SourceOutcome:
    """Read, hash, project and render one source file (and, with ``stage``, write each
    document into its temp file).  Never raises for bad input.  ``settings``: the analysis
    findings a document shows are those the settings report (``rules:``,
    ``--select``/``--ignore``; :meth:`Settings.apply`).  ``fmt``: the format the walk
    detected (``read_path`` does not detect it again); ``size``: the size the walk found
    (not asked for again)."""
    from risutools.formats import read_path
    from risutools.projection import load_notes, post_id_from_name, project
    from risutools.projection.run import graded_analysis

    out = SourceOutcome(path=rel, size=_size(path) if size is None else size)
    out.post_id = post_id if post_id is not None else post_id_from_name(path)
    try:
        modules = read_path(path, fmt=fmt)
        if modules:
            out.sha256 = modules[0].source.sha256 if modules[0].source else None
            out.format = modules[0].source.format if modules[0].source else None
        else:
            out.sha256 = sha256_file(path)
        for module in modules:
            out.warnings.extend(f"{a.where}: {a.code}: {a.message}" for a in module.anomalies)
            graded = graded_analysis(module, settings)
            doc = project(module, post_id=out.post_id, lang=lang, analysis=graded)
            if notes_dir is not None:
                note_file = _under(notes_dir) + f"{doc['component_id']}.yaml"
                if os.path.isfile(note_file):
                    doc = project(
                        module, post_id=out.post_id, lang=lang, notes=load_notes(note_file),
                        analysis=graded,
                    )
            out.documents.append(doc)
        out.rendered = [render(doc, ndjson) for doc in out.documents]
    except RisuError as exc:
        if exc.path is not None:
            exc.path = display_path(exc.path)  # a name that is not UTF-8, escaped
        out.error = exc.one_line()
        out.documents = []
    except OSError as exc:
        out.error = f"{rel}: os-error: {exc.strerror or exc}"
        out.documents = []
    if stage is not None and not ndjson and not out.error:
        _stage_documents(out, stage)
    return out


def _stage_documents(out: SourceOutcome, spec: StageSpec) -> None:
    """Write each rendered document into a temp file next to its target (not in place):
    ``out.staged[k]`` is the temp file, None when the target already holds exactly those
    bytes, or the OSError that stopped it (raised again where it is committed).  A staged
    document's text is not sent back (the temp file holds it)."""
    folder = _under(spec.folder)
    out.staged = []
    for k, (doc, text) in enumerate(zip(out.documents, out.rendered, strict=True)):
        target = folder + _safe_name(str(doc["component_id"])) + ".json"
        try:
            staged = _stage_one(target, text.encode("utf-8"), sync=spec.sync, owner=spec.owner)
        except OSError as exc:
            out.staged.append(exc)
            continue
        if staged is None:
            out.staged.append(None)
        else:
            out.staged.append(os.fspath(staged.tmp))
            out.rendered[k] = ""


def render(doc: dict[str, Any], ndjson: bool) -> str:
    """A document as the catalog stores it: a canonical NDJSON line, or the JSON file text
    (UTF-8, one-space indent, the seed's style: exactly ``canonical.document_json``)."""
    if ndjson:
        from risutools.canonical import canonical

        return canonical(doc).decode("utf-8")
    try:
        return _json_value(doc, "") + "\n"
    except (TypeError, ValueError, RecursionError):
        from risutools.canonical import document_json

        return document_json(doc)  # what the fast path does not take: the same text, or its error


def _json_value(value: Any, indent: str) -> str:
    """``json.dumps(value, ensure_ascii=False, indent=1, allow_nan=False)`` for the plain
    JSON types (dict with str keys, list, str, int, bool, None; floats are left to
    ``json``): the same string escaper (``json.encoder.encode_basestring``) and number
    text, without the encoder's generator per value.  Anything else raises TypeError.
    (A string inside a container is escaped in place, not by a call of its own: most
    values of a document are strings.)"""
    kind = type(value)
    if kind is str:
        return _encode_str(value)
    if kind is dict:
        if not value:
            return "{}"
        inner = indent + " "
        items = []
        for k, v in value.items():
            if type(k) is not str:
                raise TypeError("a key that is not a string")  # json coerces it: left to json
            items.append(_encode_str(k) + ": "
                         + (_encode_str(v) if type(v) is str else _json_value(v, inner)))
        return "{\n" + inner + (",\n" + inner).join(items) + "\n" + indent + "}"
    if kind is list:
        if not value:
            return "[]"
        inner = indent + " "
        return "[\n" + inner + (",\n" + inner).join(
            [_encode_str(v) if type(v) is str else _json_value(v, inner) for v in value]
        ) + "\n" + indent + "]"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if value is None:
        return "null"
    if kind is int:
        return int.__repr__(value)
    raise TypeError(f"not a plain JSON value: {kind.__name__}")


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def _stat(path: str) -> tuple[int, int] | None:
    """(size, modification time in ns), or None when the file cannot be stat'ed."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns


# -- the batch -------------------------------------------------------------


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
    notes_s, notes_sig = _notes(out_p, notes_dir, executor)
    notes_sig += _grades_signature(settings)  # (part of every cache key)
    unlisted: list[tuple[str, str]] = []
    files, skipped = _discover(src_p, exclude=out_p, unlisted=unlisted)
    if settings is not None and settings.exclude:
        files = [item for item in files if not settings.is_excluded(item[1])]
    run = _Run(src_p, out_p, lang, notes_sig, IngestCache.load(out_p / CACHE_NAME, use_cache),
               on_progress)
    todo = run.plan(files, on_start)
    own_pool = executor is None and (jobs if jobs is not None else (os.cpu_count() or 1)) > 1
    stage = _stage_spec(out_p, ndjson, executor)
    with _Stager(out_p, enabled=not ndjson and executor is not None) as stager:
        run.stager = stager
        if todo:
            _run(todo, lang, notes_s, ndjson, jobs, executor, run.finished, stage, settings,
                 {path: fmt for path, _, fmt in files})
        lost = {rel: SourceOutcome(path=display_path(rel), size=0, error=why)
                for rel, why in unlisted if rel not in run.outcomes}
        outcomes = {**run.outcomes, **lost}
        result = IngestResult(sources=[outcomes[k] for k in sorted(outcomes)],
                              skipped=skipped,
                              notices=[run.cache.problem] if run.cache.problem else [])
        _deduplicate(result.sources)
        _write_catalog(result, out_p, ndjson, stager)
    if own_pool and stage is not None:
        sweep_temp_files(out_p)  # what a worker that died left (named after this process)
    _save_cache(run.cache, set(run.outcomes))
    return result


def _grades_signature(settings: Settings | None) -> str:
    """What the settings change in the documents, for the cache key ("" when nothing is
    configured, so an unconfigured run keeps its keys)."""
    if settings is None:
        return ""
    from risutools.projection.run import grades

    g = grades(settings)
    return "\0" + g if g else ""


def _check_options(
    lang: str, jobs: int | None, executor: Executor | None,
    notes_dir: str | os.PathLike[str] | None,
) -> None:
    from risutools.projection.text import check_lang

    check_lang(lang)
    if executor is None and jobs is not None and jobs < 1:
        raise ConfigError(Code.BAD_OPTION, f"must be at least 1, not {jobs}", where="--jobs")
    if notes_dir is not None and not Path(notes_dir).is_dir():
        raise RisuError(Code.NOT_A_DIRECTORY, "the notes folder does not exist or is not a folder",
                        path=str(notes_dir))


def _check_folders(src: Path, out: Path) -> None:
    if not src.is_dir():
        raise RisuError(Code.NOT_A_DIRECTORY, "the source must be a folder", path=str(src))
    if out.exists() and not out.is_dir():
        raise RisuError(Code.NOT_A_DIRECTORY, "the catalog must be a folder",
                        path=display_path(out))


def _notes(
    out: Path, notes_dir: str | os.PathLike[str] | None, executor: Executor | None
) -> tuple[str | None, str]:
    """(the notes folder as the workers see it, or None without one; its digest)."""
    notes = Path(notes_dir) if notes_dir is not None else out / "notes"
    if not notes.is_dir():
        return None, ""
    notes_s = str(notes)
    if executor is not None:
        notes_s = os.path.abspath(notes_s)  # a worker may run in another folder (a cluster)
    return notes_s, _notes_signature(notes)


def _stage_spec(out: Path, ndjson: bool, executor: Executor | None) -> StageSpec | None:
    """Documents are staged where they are rendered (in this process or a worker of its
    own pool; never by another executor's workers, which may run on other machines)."""
    if ndjson or executor is not None:
        return None
    from risutools.fsio import syncfs_available

    return StageSpec(os.fspath(out), os.getpid(), sync=not syncfs_available())


def _save_cache(cache: IngestCache, seen: set[str]) -> None:
    cache.prune(seen)
    try:
        cache.save()
    except OSError as exc:
        raise os_error_line(exc, cache.path) from None


class _Run:
    """The bookkeeping of one run: cache hits, outcomes as they arrive, progress."""

    def __init__(self, src: Path, out: Path, lang: str, notes_sig: str, cache: IngestCache,
                 on_progress: ProgressFn | None) -> None:
        self.src, self.out, self.lang, self.notes_sig = src, out, lang, notes_sig
        self.cache = cache
        self.on_progress = on_progress
        self.outcomes: dict[str, SourceOutcome] = {}
        self.rels: dict[str, str] = {}  # each file's exact relative path, by its path
        # (size, mtime in ns) of each file as planned: the cache's key for it (taken before
        # the file is read, so a file that changes while it is read is read again next time)
        self.stats: dict[str, tuple[int, int] | None] = {}
        self.stager: _Stager | None = None
        self.files = 0
        self.bytes = 0

    def plan(
        self, files: list[tuple[str, str, str]], on_start: Callable[[int, int], None] | None
    ) -> list[tuple[str, str, int]]:
        """The files to read: (path, relative path as shown, size); cache hits are done."""
        from risutools.projection import post_id_from_name

        stats = [_stat(path) for path, _, _ in files]
        sizes = [st[0] if st is not None else 0 for st in stats]
        if on_start:
            on_start(len(files), sum(sizes))
        todo: list[tuple[str, str, int]] = []
        lookup = self.cache.enabled
        for (path, rel, _fmt), size, st in zip(files, sizes, stats, strict=True):
            self.rels[path] = rel
            self.stats[path] = st
            shown = display_path(rel)
            hit = self.cache.lookup(rel, path, self.lang, post_id_from_name(path),
                                    self.notes_sig, st) if lookup else None
            if hit is None:
                todo.append((path, shown, size))
                continue
            hit.path, hit.size, hit.cached = shown, size, True
            self.outcomes[rel] = hit
            self.files += 1
            self.bytes += size
        if self.on_progress and self.files:
            self.on_progress(self.files, self.bytes)
        return todo

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
    and remove the temp files a killed run left.  OS failures are one line (exit 2)."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        with write_lock(out / NDJSON_NAME):
            pass
        sweep_temp_files(out)
        sweep_temp_files((out / CACHE_NAME).parent)
    except OSError as exc:
        raise os_error_line(exc, out) from None


BATCH_BYTES = 32 << 20  # a task holds small files up to this many bytes ...
BATCH_FILES = 32  # ... and at most this many files (one large file is a task of its own)


def process_batch(
    items: Sequence[tuple[str, str] | tuple[str, str, str | None]
                    | tuple[str, str, str | None, int | None]], lang: str,
    notes_dir: str | None, ndjson: bool = False,
    stage: StageSpec | None = None,
    settings: Settings | None = None,
) -> list[SourceOutcome]:
    """:func:`process_file` for several ``(path, shown relative path[, detected format[,
    size]])`` items: one task of a pool or a cluster (small files travel in batches, so the
    per-task cost of the executor -- pickling, a round trip, a Dask scheduler decision --
    is paid once)."""
    return [process_file(item[0], item[1], lang, notes_dir, None, ndjson, stage, settings,
                         item[2] if len(item) > 2 else None,
                         item[3] if len(item) > 3 else None)
            for item in items]


def _batches(todo: list[tuple[str, str, int]], workers: int) -> list[list[tuple[str, str, int]]]:
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


def _run(
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
) -> None:
    workers = jobs if jobs is not None else (os.cpu_count() or 1)
    fmts = formats if formats is not None else {}
    if executor is None and (workers <= 1 or len(todo) == 1):
        for path, rel, size in todo:
            finished(process_file(path, rel, lang, notes_dir, None, ndjson, stage,
                                  settings, fmts.get(path), size), path)
        return
    own = executor is None
    pool: Executor = executor if executor is not None else ProcessPoolExecutor(
        workers, initializer=_die_with_parent, initargs=(os.getpid(),))
    # another executor's workers may run in another folder (a cluster): absolute paths
    where: Callable[[str], str] = str if own else os.path.abspath
    try:
        futures: dict[Future[list[SourceOutcome]], list[tuple[str, str, int]]] = {
            pool.submit(process_batch,
                        [(where(p), rel, fmts.get(p), size) for p, rel, size in batch],
                        lang, notes_dir, ndjson, stage, settings): batch
            for batch in _batches(todo, workers)
        }
        from concurrent.futures import as_completed

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
    finally:
        if own:
            pool.shutdown()


def _die_with_parent(parent: int) -> None:
    """A worker of ingest's own pool ends when the process that started it is killed
    (``kill -9``): without this, a pool worker whose parent is gone waits on its task
    queue for ever (Linux ``prctl(PR_SET_PDEATHSIG, SIGKILL)``; elsewhere nothing)."""
    if sys.platform.startswith("linux"):
        import ctypes
        import signal

        with suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL),
                                                    0, 0, 0)
    if os.getppid() != parent:  # the parent died before the line above ran
        os._exit(1)


_PR_SET_PDEATHSIG = 1


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


# -- writing the catalog ---------------------------------------------------


def _generated(
    result: IngestResult, ndjson: bool
) -> dict[str, tuple[dict[str, Any], str | None, tuple[str, int]]]:
    """component_id -> (document, rendered text or None when a temp file holds it,
    (source path, index)); an id produced twice is a collision."""
    from risutools.projection.project import without_container
    from risutools.projection.text import TYPE_WORDS

    docs: dict[str, tuple[dict[str, Any], str | None, tuple[str, int]]] = {}
    owner: dict[str, str] = {}
    for s in result.sources:
        if s.status != "ok":
            continue
        for k, doc in enumerate(s.documents):
            cid = str(doc["component_id"])
            if cid in docs:
                if docs[cid][0] != doc and (without_container(docs[cid][0])
                                            == without_container(doc)):
                    # one module in two containers (a JSON export and a .risum): one
                    # component, the first source kept
                    kind = TYPE_WORDS["en"].get(str(doc.get("component_type")), "component")
                    s.warnings.append(f"{cid}: the same {kind} as in {owner[cid]} (another "
                                      "container); kept that one")
                elif docs[cid][0] != doc:
                    result.collisions.append(
                        f"{s.path}: id-collision: {cid} is also produced by {owner[cid]}; "
                        "kept the first (give one of them a post id or a notes slug)"
                    )
                continue
            docs[cid] = (doc, _text(s, k, ndjson), (s.path, k))
            owner[cid] = s.path
    return docs


def _text(source: SourceOutcome, k: int, ndjson: bool) -> str | None:
    """Document ``k``'s text: as the worker rendered it, None when the worker wrote it into
    a temp file, rendered here for a cached source."""
    if source.staged is not None and isinstance(source.staged[k], str):
        return None
    if len(source.rendered) == len(source.documents):
        return source.rendered[k]
    return render(source.documents[k], ndjson)


def _review_status(doc: Any) -> str | None:
    """The document's ``provenance.review_status`` when it is a string, else None."""
    prov = doc.get("provenance") if isinstance(doc, dict) else None
    status = prov.get("review_status") if isinstance(prov, dict) else None
    return status if isinstance(status, str) else None


WRITE_THREADS = 8  # fsync-bound: threads overlap the waits
# staging runs while this process may be projecting too: fewer threads, less GIL contention
STAGE_THREADS = 4


class _Stager:
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
        self.folder = _under(os.fspath(out))  # + a file name = str(out / name)
        self.enabled = enabled
        self.pool: Any = None
        self.jobs: dict[tuple[str, int], Future[StagedWrite | None] | _Staged] = {}
        self.adopted = False  # temp files written by a StageSpec (unsynced when syncfs exists)

    def __enter__(self) -> _Stager:
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
            from concurrent.futures import ThreadPoolExecutor

            self.pool = ThreadPoolExecutor(STAGE_THREADS)
        for k, (doc, text) in enumerate(zip(outcome.documents, outcome.rendered, strict=True)):
            target = self.out / f"{_safe_name(str(doc['component_id']))}.json"
            self.jobs[(outcome.path, k)] = self.pool.submit(_stage_one, target,
                                                            text.encode("utf-8"))

    def _adopt(self, outcome: SourceOutcome, staged: list[str | OSError | None]) -> None:
        from risutools.fsio import adopt_staged

        for k, (doc, entry) in enumerate(zip(outcome.documents, staged, strict=True)):
            if isinstance(entry, OSError):  # raised where it is committed, like a thread's
                done = _Staged(None, entry)
            elif entry is None:
                done = _Staged(None)
            else:
                target = self.folder + _safe_name(str(doc["component_id"])) + ".json"
                done = _Staged(adopt_staged(target, entry))
                self.adopted = True
            self.jobs[(outcome.path, k)] = done

    def flush(self) -> None:
        """Make every staged file durable before any of them is renamed into place (one
        ``syncfs`` for all of them; without syncfs each was fsynced as it was written)."""
        from risutools.fsio import sync_filesystem, syncfs_available

        if self.adopted and syncfs_available():
            sync_filesystem(self.out)

    def take(self, source: str, k: int) -> Future[StagedWrite | None] | _Staged | None:
        return self.jobs.get((source, k))


class _Staged:
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


def _stage_one(
    target: str | Path, data: bytes, *, sync: bool = True, owner: int | None = None
) -> StagedWrite | None:
    """Stage ``data`` for ``target`` unless the target already holds exactly it.  A target
    that is not there is staged without looking at it again (``absent``: the commit
    checks it again under compare-and-swap, whatever happened in between)."""
    try:
        st = os.lstat(target)
    except FileNotFoundError:
        return stage_write(target, data, sync=sync, owner=owner, absent=True)
    except OSError:
        pass
    else:
        try:
            if stat.S_ISREG(st.st_mode) and _read_bytes(target) == data:
                return None
        except OSError:
            pass
    return stage_write(target, data, sync=sync, owner=owner)


def _read_bytes(path: str | Path) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def _write_catalog(
    result: IngestResult, out: Path, ndjson: bool, stager: _Stager | None = None
) -> None:
    docs = _generated(result, ndjson)
    if ndjson:
        _write_ndjson(result, out / NDJSON_NAME,
                      {k: v[1] if v[1] is not None else render(v[0], True)
                       for k, v in docs.items()})
        return
    from concurrent.futures import ThreadPoolExecutor

    if stager is not None:
        try:
            stager.flush()
        except OSError as exc:  # the staged files are removed on the way out
            raise os_error_line(exc, out) from None
    order = sorted(docs)
    folder = _under(os.fspath(out))
    jobs = [
        (Path(folder + _safe_name(cid) + ".json"), cid, _data(docs[cid][1]),
         stager.take(*docs[cid][2]) if stager is not None else None)
        for cid in order
    ]
    if all(j[3] is not None for j in jobs):
        outcomes = [_write_one(*job) for job in jobs]  # renames only: no waits to overlap
    else:
        with ThreadPoolExecutor(WRITE_THREADS) as pool:
            outcomes = list(pool.map(lambda job: _write_one(*job), jobs))
    fsync_directory(out)
    failed = [exc for status, exc in outcomes if status == "oserror" and isinstance(exc, OSError)]
    if failed:  # could not write (no space, no permission): one line, exit 2
        more = f" (and {len(failed) - 1} more)" if len(failed) > 1 else ""
        err = os_error_line(failed[0])
        err.why += more
        raise err
    for status, text in outcomes:  # in id order, whatever order the threads finished in
        assert isinstance(text, str)
        {
            "written": result.written,
            "unchanged": result.unchanged,
            "kept_reviewed": result.kept_reviewed,
            "kept_unreadable": result.kept_unreadable,
            "conflict": result.collisions,
        }[status].append(text)


def _data(text: str | None) -> bytes | None:
    return text.encode("utf-8") if text is not None else None


def _write_one(
    target: Path, cid: str, data: bytes | None,
    pending: Future[StagedWrite | None] | _Staged | None = None,
) -> tuple[str, str | OSError]:
    """Write one document file (from its staged temp file when there is one; ``data`` is
    None only then); returns (status, name or message, or the OSError)."""
    from risutools.values import parse_value_bytes

    staged: StagedWrite | None = None
    try:
        if pending is not None:
            staged = pending.result()  # an OSError of the staging is raised here

        def put(**expect: Any) -> None:
            if staged is not None:
                commit_staged(staged, sync_dir=False, **expect)
            else:
                assert data is not None  # only a staged document comes without its text
                atomic_write(target, data, sync_dir=False, **expect)

        try:
            st = os.lstat(target)
        except FileNotFoundError:
            put(expect_absent=True)
            return "written", target.name
        shown = display_path(target)
        if not stat.S_ISREG(st.st_mode):
            what = "a symbolic link" if stat.S_ISLNK(st.st_mode) else "not a regular file"
            return "kept_unreadable", (
                f"{shown}: unreadable-document: {what}; left as it is, {cid} not written"
            )
        current = target.read_bytes()
        if current == data:
            return "unchanged", target.name
        try:
            existing = parse_value_bytes(current, shown, "json")
        except RisuError as exc:
            return "kept_unreadable", f"{exc.one_line()}; left as it is, {cid} not written"
        status = _review_status(existing)
        if status is None:
            return "kept_unreadable", (
                f"{shown}: /provenance/review_status: unreadable-document: missing, so its "
                f"review state is unknown; left as it is, {cid} not written"
            )
        if status != "candidate":
            return "kept_reviewed", cid
        put(expect_sha256=hashlib.sha256(current).hexdigest())
    except WriteConflict as exc:
        return "conflict", exc.one_line()
    except OSError as exc:
        return "oserror", exc
    finally:
        if staged is not None:
            discard_staged(staged)  # not used (or already committed: nothing to do)
    return "written", target.name


def _write_ndjson(result: IngestResult, target: Path, docs: dict[str, str]) -> None:
    """Merge the generated lines (component_id -> canonical line) into components.ndjson.

    The file is split on ``\n`` only and handled as bytes: a line that is not replaced
    is written back exactly as read.  Existing lines keep their place; a candidate
    line whose document changed is replaced in place; new ids are appended in id order.
    A line that cannot be read is kept and reported, and the component it belongs to
    (found by its ``"component_id"``) is not written; when its id cannot be found the
    file is not changed at all.  A reviewed line, or an id on two lines, is kept too.
    """
    shown = display_path(target)
    found = _read_ndjson(result, target)
    if found is None:
        return
    raw, lines = found
    indexed = _index_lines(result, lines, shown)
    if indexed is None:
        return
    out, wrote = _merge_lines(result, lines, indexed, docs, shown)
    if not wrote and raw is not None:
        return
    data = b"".join(line + b"\n" for line in out)
    try:
        if raw is None:
            atomic_write(target, data, expect_absent=True)
        else:
            atomic_write(target, data, expect_sha256=hashlib.sha256(raw).hexdigest())
    except WriteConflict as exc:
        result.collisions.append(exc.one_line())
        return
    except OSError as exc:
        raise os_error_line(exc, target) from None
    result.written.extend(wrote)


def _read_ndjson(
    result: IngestResult, target: Path
) -> tuple[bytes | None, list[bytes]] | None:
    """(the file's bytes or None when there is none, its lines without their ``\n``);
    None when it cannot be read (reported: nothing is written)."""
    try:
        raw = None
        if os.path.lexists(target):
            if not stat.S_ISREG(os.lstat(target).st_mode):  # a folder, link, FIFO, device
                raise IsADirectoryError(0, "not a regular file")
            raw = target.read_bytes()
    except OSError as exc:
        result.kept_unreadable.append(
            f"{display_path(target)}: unreadable-document: {exc.strerror or exc}; "
            "left as it is, nothing written"
        )
        return None
    lines: list[bytes] = []
    if raw:
        lines = raw.split(b"\n")
        if lines[-1] == b"":
            lines.pop()  # the final newline
    return raw, lines


def _index_lines(
    result: IngestResult, lines: list[bytes], shown: str
) -> tuple[dict[str, list[int]], set[str]] | None:
    """(component_id -> its line numbers (0-based), the ids this run must not write);
    None when a line that cannot be read names no id (reported: the file is not changed)."""
    index: dict[str, list[int]] = {}
    blocked: set[str] = set()
    for n, line in enumerate(lines):
        if not line.strip():
            continue
        cid, problem = _read_line(line, f"{shown}: line {n + 1}")
        if problem is not None:
            result.kept_unreadable.append(
                problem + (f"; kept, {cid} not written" if cid is not None else
                           f"; kept; cannot tell its component, so {NDJSON_NAME} is not "
                           "changed")
            )
            if cid is None:
                return None
            blocked.add(cid)
            continue
        assert cid is not None
        index.setdefault(cid, []).append(n)
    return index, blocked


def _merge_lines(
    result: IngestResult, lines: list[bytes],
    indexed: tuple[dict[str, list[int]], set[str]], docs: dict[str, str], shown: str,
) -> tuple[list[bytes], list[str]]:
    """(the file's new lines, the ids written): a candidate line replaced in place, new ids
    appended in id order; unchanged, reviewed, blocked and duplicated ids left as they are."""
    index, blocked = indexed
    out = list(lines)
    wrote: list[str] = []
    for cid in sorted(docs):
        if cid in blocked:
            continue
        at = index.get(cid, [])
        new = docs[cid].encode("utf-8")
        if len(at) > 1:
            result.kept_unreadable.append(
                f"{shown}: lines {', '.join(str(i + 1) for i in at)}: duplicate-id: {cid} "
                "is on several lines; kept, not written"
            )
            continue
        if at:
            old = lines[at[0]]
            if old.rstrip(b"\r") == new:
                result.unchanged.append(cid)
                continue
            if _review_status(_parse_line(old)) != "candidate":
                result.kept_reviewed.append(cid)
                continue
            out[at[0]] = new
        else:
            out.append(new)
        wrote.append(cid)
    return out, wrote


def _parse_line(line: bytes) -> Any:
    from risutools.values import parse_value_bytes

    return parse_value_bytes(line, "", "json")


def _read_line(line: bytes, where: str) -> tuple[str | None, str | None]:
    """(component_id, problem line): a readable line gives its id and no problem; an
    unreadable one gives the id found in its bytes (or None) and the reason."""
    try:
        doc = _parse_line(line)
    except RisuError as exc:
        return _id_in_bytes(line), f"{where}: {exc.code}: {exc.why}"
    cid = doc.get("component_id") if isinstance(doc, dict) else None
    if not isinstance(cid, str) or not cid:
        return None, f"{where}: /component_id: unreadable-document: missing"
    if _review_status(doc) is None:
        return cid, (f"{where}: /provenance/review_status: unreadable-document: missing, so "
                     "its review state is unknown")
    return cid, None


def _id_in_bytes(line: bytes) -> str | None:
    """The first ``"component_id": "..."`` value in a line that does not parse."""
    key = b'"component_id"'
    at = line.find(key)
    if at < 0:
        return None
    rest = line[at + len(key):].lstrip(b" \t")
    if not rest.startswith(b":"):
        return None
    rest = rest[1:].lstrip(b" \t")
    end = rest.find(b'"', 1)
    while end > 0 and rest[end - 1:end] == b"\\":
        end = rest.find(b'"', end + 1)
    if not rest.startswith(b'"') or end < 0:
        return None
    try:
        value = json.loads(rest[: end + 1])
    except ValueError:
        return None
    return value if isinstance(value, str) and value else None


_UNSAFE = re.compile(r"[^a-z0-9._-]")  # every character but these becomes "_"


def _safe_name(component_id: str) -> str:
    name = _UNSAFE.sub("_", component_id.lower())
    return name.strip(".") or "component"


def _notes_signature(notes: Path) -> str:
    """A digest of every notes file (name + bytes), so a changed note re-projects."""
    from risutools.projection.notes import MAX_NOTES_BYTES
    from risutools.safeio import read_or_raise

    h = hashlib.sha256()
    for p in sorted(notes.glob("*.yaml")):
        data = read_or_raise(p, MAX_NOTES_BYTES)
        h.update(os.fsencode(p.name) + b"\0" + data + b"\0")
    return h.hexdigest()


__all__ = [
    "IngestResult",
    "SourceOutcome",
    "discover",
    "ingest",
    "process_batch",
    "process_file",
    "result_key",
]
