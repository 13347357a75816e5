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
* deterministic, atomic, compare-and-swap writes; a document that a person has
  moved past ``candidate`` is never overwritten by a generator;
* a bad file is recorded (path + one-line reason) and the run goes on.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from risutools import __version__
from risutools.catalog.cache import IngestCache, result_key
from risutools.errors import ConfigError, RisuError, WriteConflict
from risutools.fsio import atomic_write, fsync_directory, sha256_file

NDJSON_NAME = "components.ndjson"
CACHE_NAME = ".risutools-cache/ingest.msgpack"
# Folders of a catalog that hold other things than generated documents.
RESERVED_DIRS = {".git", ".risutools-cache", "notes", "approvals", "replays"}

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
    # each document as it will be written (rendered in the worker; not cached)
    rendered: list[str] = field(default_factory=list, repr=False)

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
    skipped: list[str] = field(default_factory=list)  # files that are not Risu files

    @property
    def failures(self) -> list[SourceOutcome]:
        return [s for s in self.sources if s.status == "failed"]

    @property
    def ok(self) -> bool:
        return not self.failures and not self.collisions

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
            "not_risu": self.skipped,
        }


# -- discovery ------------------------------------------------------------


def discover(src: Path, exclude: Path | None = None) -> tuple[list[tuple[Path, str]], list[str]]:
    """Every supported file below ``src`` (by content), sorted by relative path.

    Returns ``([(path, format)], [relative paths of files that are not Risu
    files])``.  Symbolic links are not followed; hidden folders are skipped.
    """
    from risutools.formats import detect

    found: list[tuple[Path, str]] = []
    skipped: list[str] = []
    ex = exclude.resolve() if exclude is not None else None
    for path in _walk(src, ex):
        rel = path.relative_to(src).as_posix()
        try:
            fmt = detect(path)
        except RisuError:
            fmt = "unreadable"  # read_path will report the reason
        if fmt is None:
            skipped.append(rel)
        else:
            found.append((path, fmt))
    return found, skipped


def _walk(root: Path, exclude: Path | None) -> Iterator[Path]:
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        here = Path(dirpath)
        keep = []
        for d in sorted(dirnames):
            full = here / d
            if d.startswith(".") or (exclude is not None and full.resolve() == exclude):
                continue
            keep.append(d)
        dirnames[:] = keep
        for name in sorted(filenames):
            full = here / name
            if name.startswith(".") or full.is_symlink() or not full.is_file():
                continue
            yield full


# -- one file (runs in a worker process) -----------------------------------


def process_file(
    path: str,
    rel: str,
    lang: str,
    notes_dir: str | None,
    post_id: str | None = None,
    ndjson: bool = False,
) -> SourceOutcome:
    """Read, hash, project and render one source file.  Never raises for bad input."""
    from risutools.formats import read_path
    from risutools.projection import load_notes, post_id_from_name, project

    size = _size(path)
    out = SourceOutcome(path=rel, size=size)
    out.post_id = post_id if post_id is not None else post_id_from_name(Path(path).name)
    try:
        modules = read_path(path)
        if modules:
            out.sha256 = modules[0].source.sha256 if modules[0].source else None
            out.format = modules[0].source.format if modules[0].source else None
        else:
            out.sha256 = sha256_file(path)
        for module in modules:
            out.warnings.extend(f"{a.where}: {a.code}: {a.message}" for a in module.anomalies)
            doc = project(module, post_id=out.post_id, lang=lang)
            if notes_dir is not None:
                note_file = Path(notes_dir) / f"{doc['component_id']}.yaml"
                if note_file.is_file():
                    doc = project(
                        module, post_id=out.post_id, lang=lang, notes=load_notes(note_file)
                    )
            out.documents.append(doc)
        out.rendered = [render(doc, ndjson) for doc in out.documents]
    except RisuError as exc:
        out.error = exc.one_line()
        out.documents = []
    except OSError as exc:
        out.error = f"{rel}: os-error: {exc.strerror or exc}"
        out.documents = []
    return out


def render(doc: dict[str, Any], ndjson: bool) -> str:
    """A document as the catalog stores it: a canonical NDJSON line, or the JSON file text
    (UTF-8, one-space indent, the seed's style; see ``projection.run.dumps``)."""
    if ndjson:
        from risutools.contract.canonical import canonical

        return canonical(doc).decode("utf-8")
    from risutools.projection.run import dumps

    return dumps(doc)


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


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
    cache_path: str | os.PathLike[str] | None = None,
    on_start: Callable[[int, int], None] | None = None,
    on_progress: ProgressFn | None = None,
) -> IngestResult:
    """Ingest every supported file below ``src`` into the catalog folder ``out``.

    ``executor``: any :class:`concurrent.futures.Executor` (the caller owns it);
    without one, ``jobs`` worker processes are used (default: all cores;
    ``jobs=1`` runs in this process).  ``on_start(files, bytes)`` and
    ``on_progress(files_done, bytes_done)`` feed a progress display.
    """
    from risutools.projection.text import LANGS

    if lang not in LANGS:
        raise ConfigError("bad-lang", f"language must be one of {', '.join(LANGS)}, not {lang!r}",
                          where="--lang")
    if executor is None and jobs is not None and jobs < 1:
        raise ConfigError("bad-option", f"must be at least 1, not {jobs}", where="--jobs")
    src_p = Path(src)
    out_p = Path(out)
    if notes_dir is not None and not Path(notes_dir).is_dir():
        raise RisuError("not-a-directory", "the notes folder does not exist or is not a folder",
                        path=str(notes_dir))
    if not src_p.is_dir():
        raise RisuError("not-a-directory", "the source must be a folder", path=str(src_p))
    if out_p.exists() and not out_p.is_dir():
        raise RisuError("not-a-directory", "the catalog must be a folder", path=str(out_p))
    notes = Path(notes_dir) if notes_dir is not None else out_p / "notes"
    notes_s = str(notes) if notes.is_dir() else None
    notes_sig = _notes_signature(notes) if notes_s else ""

    files, skipped = discover(src_p, exclude=out_p)
    sizes = [_size(str(p)) for p, _ in files]
    if on_start:
        on_start(len(files), sum(sizes))

    cache = IngestCache.load(Path(cache_path) if cache_path else out_p / CACHE_NAME, use_cache)
    outcomes: dict[str, SourceOutcome] = {}
    todo: list[tuple[Path, str, int]] = []
    done_files = 0
    done_bytes = 0

    from risutools.projection import post_id_from_name

    for (path, _fmt), size in zip(files, sizes, strict=True):
        rel = path.relative_to(src_p).as_posix()
        post_id = post_id_from_name(path.name)
        hit = cache.lookup(rel, path, lang, post_id, notes_sig)
        if hit is not None:
            hit.path, hit.size, hit.cached = rel, size, True
            outcomes[rel] = hit
            done_files += 1
            done_bytes += size
        else:
            todo.append((path, rel, size))
    if on_progress and done_files:
        on_progress(done_files, done_bytes)

    def finished(outcome: SourceOutcome, path: Path) -> None:
        nonlocal done_files, done_bytes
        outcomes[outcome.path] = outcome
        cache.store(outcome, path, lang, notes_sig)
        done_files += 1
        done_bytes += outcome.size
        if on_progress:
            on_progress(done_files, done_bytes)

    if todo:
        _run(todo, lang, notes_s, ndjson, jobs, executor, finished)

    result = IngestResult(sources=[outcomes[k] for k in sorted(outcomes)], skipped=skipped)
    _deduplicate(result.sources)
    _write_catalog(result, out_p, ndjson)
    cache.prune(set(outcomes))
    cache.save()
    return result


def _run(
    todo: list[tuple[Path, str, int]],
    lang: str,
    notes_dir: str | None,
    ndjson: bool,
    jobs: int | None,
    executor: Executor | None,
    finished: Callable[[SourceOutcome, Path], None],
) -> None:
    workers = jobs if jobs is not None else (os.cpu_count() or 1)
    if executor is None and (workers <= 1 or len(todo) == 1):
        for path, rel, _ in todo:
            finished(process_file(str(path), rel, lang, notes_dir, None, ndjson), path)
        return
    own = executor is None
    pool: Executor = executor if executor is not None else ProcessPoolExecutor(workers)
    try:
        # Largest first: the long files start early and the tail of the run stays short.
        order = sorted(todo, key=lambda t: (-t[2], t[1]))
        futures: dict[Future[SourceOutcome], Path] = {
            pool.submit(process_file, str(path), rel, lang, notes_dir, None, ndjson): path
            for path, rel, _ in order
        }
        from concurrent.futures import as_completed

        for fut in as_completed(futures):
            path = futures[fut]
            try:
                outcome = fut.result()
            except Exception as exc:  # a worker died: report the file, go on
                rel = next(r for p, r, _ in todo if p == path)
                outcome = SourceOutcome(
                    path=rel, size=_size(str(path)), error=f"{rel}: worker-failed: {exc!r}"
                )
            finished(outcome, path)
    finally:
        if own:
            pool.shutdown()


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


def _generated(result: IngestResult, ndjson: bool) -> dict[str, tuple[dict[str, Any], str]]:
    """component_id -> (document, rendered text); an id produced twice is a collision."""
    docs: dict[str, tuple[dict[str, Any], str]] = {}
    owner: dict[str, str] = {}
    for s in result.sources:
        if s.status != "ok":
            continue
        texts = s.rendered if len(s.rendered) == len(s.documents) else []
        for k, doc in enumerate(s.documents):
            cid = str(doc["component_id"])
            if cid in docs:
                if docs[cid][0] != doc:
                    result.collisions.append(
                        f"{s.path}: id-collision: {cid} is also produced by {owner[cid]}; "
                        "kept the first (give one of them a post id or a notes slug)"
                    )
                continue
            docs[cid] = (doc, texts[k] if texts else render(doc, ndjson))
            owner[cid] = s.path
    return docs


def _is_reviewed(doc: Any) -> bool:
    try:
        return str(doc["provenance"]["review_status"]) != "candidate"
    except (KeyError, TypeError):
        return False


WRITE_THREADS = 8  # fsync-bound: threads overlap the waits


def _write_catalog(result: IngestResult, out: Path, ndjson: bool) -> None:
    docs = _generated(result, ndjson)
    out.mkdir(parents=True, exist_ok=True)
    if ndjson:
        _write_ndjson(result, out / NDJSON_NAME, {k: v[1] for k, v in docs.items()})
        return
    from concurrent.futures import ThreadPoolExecutor

    order = sorted(docs)
    jobs = [(out / f"{_safe_name(cid)}.json", cid, docs[cid][1].encode("utf-8")) for cid in order]
    with ThreadPoolExecutor(WRITE_THREADS) as pool:
        outcomes = list(pool.map(lambda job: _write_one(*job), jobs))
    fsync_directory(out)
    for status, text in outcomes:  # in id order, whatever order the threads finished in
        {
            "written": result.written,
            "unchanged": result.unchanged,
            "kept_reviewed": result.kept_reviewed,
            "conflict": result.collisions,
        }[status].append(text)


def _write_one(target: Path, cid: str, data: bytes) -> tuple[str, str]:
    """Write one document file; returns (status, name or message)."""
    try:
        if target.exists():
            current = target.read_bytes()
            if current == data:
                return "unchanged", target.name
            try:
                existing = json.loads(current)
            except ValueError:
                existing = None
            if _is_reviewed(existing):
                return "kept_reviewed", cid
            base = hashlib.sha256(current).hexdigest()
            atomic_write(target, data, expect_sha256=base, sync_dir=False)
        else:
            atomic_write(target, data, expect_absent=True, sync_dir=False)
    except WriteConflict as exc:
        return "conflict", exc.one_line()
    return "written", target.name


def _write_ndjson(result: IngestResult, target: Path, docs: dict[str, str]) -> None:
    """Merge the generated lines (component_id -> canonical line) into components.ndjson."""
    lines: dict[str, str] = {}
    base: str | None = None
    if target.exists():
        raw = target.read_bytes()
        base = hashlib.sha256(raw).hexdigest()
        for text in raw.decode("utf-8", errors="replace").splitlines():
            try:
                existing = json.loads(text)
                cid = str(existing["component_id"])
            except (ValueError, KeyError, TypeError):
                continue  # an unreadable line is left for `validate` to report
            lines[cid] = text
            if _is_reviewed(existing) and cid in docs:
                result.kept_reviewed.append(cid)
    changed = False
    for cid in sorted(docs):
        if cid in result.kept_reviewed:
            continue
        line = docs[cid]
        if lines.get(cid) == line:
            result.unchanged.append(cid)
            continue
        lines[cid] = line
        changed = True
        result.written.append(cid)
    if changed or base is None:
        data = "".join(lines[k] + "\n" for k in sorted(lines)).encode("utf-8")
        try:
            if base is None:
                atomic_write(target, data, expect_absent=True)
            else:
                atomic_write(target, data, expect_sha256=base)
        except WriteConflict as exc:
            result.collisions.append(exc.one_line())


def _safe_name(component_id: str) -> str:
    allowed = set("abcdefghijklmnopqrstuvwxyz0123456789.-_")
    name = "".join(c if c in allowed else "_" for c in component_id.lower())
    return name.strip(".") or "component"


def _notes_signature(notes: Path) -> str:
    """A digest of every notes file (name + bytes), so a changed note re-projects."""
    h = hashlib.sha256()
    for p in sorted(notes.glob("*.yaml")):
        h.update(p.name.encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


__all__ = [
    "IngestResult",
    "SourceOutcome",
    "discover",
    "ingest",
    "process_file",
    "result_key",
]
