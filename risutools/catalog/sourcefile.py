"""One source file, as a worker sees it: read, hash, project and render it
(:func:`process_file`) and, with a :class:`StageSpec`, write each document into its temp file;
:func:`process_batch` is one task of a pool or a cluster (several small files)."""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from risutools.canonical import document_json
from risutools.catalog.outcome import SourceOutcome
from risutools.catalog.render import render, safe_name, under
from risutools.catalog.staging import stage_one
from risutools.contract.notesfind import NotesIndex, document_keys, find_notes, notes_index
from risutools.errors import RisuError
from risutools.formats import read_path
from risutools.fsio import display_path
from risutools.projection import load_notes, post_id_from_name, project
from risutools.projection.facts import summarize
from risutools.projection.run import graded_analysis
from risutools.safeio import FoundFile, is_plain_file, sha256_regular
from risutools.settings.config import Settings


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
    found: FoundFile | None = None,
    notes: NotesIndex | None = None,
) -> SourceOutcome:
    """Read, hash, project and render one source file (and, with ``stage``, write each
    document into its temp file).  Never raises for bad input.  ``settings``: the analysis
    findings a document shows are those the settings report (``rules:``,
    ``--select``/``--ignore``; :meth:`Settings.apply`).  ``fmt``: the format the walk
    detected (``read_path`` does not detect it again); ``size``: the size the walk found
    (not asked for again); ``found``: the (device, inode) the walk found at ``path``: a
    symbolic link or another file put there since is refused, never read.  ``notes``: the
    notes folder's index, taken once for many files (else taken here)."""

    out = SourceOutcome(path=rel, size=_size(path) if size is None else size)
    out.post_id = post_id if post_id is not None else post_id_from_name(path)
    try:
        modules = read_path(path, fmt=fmt, found=found)
        if modules:
            out.sha256 = modules[0].source.sha256 if modules[0].source else None
            out.format = modules[0].source.format if modules[0].source else None
        else:
            # (the file the walk found, as read_path read it: no link, no FIFO put there
            # since; streamed, so no bound on its size is needed beyond the walk's)
            out.sha256 = sha256_regular(path, sys.maxsize, found=found)
        for module in modules:
            out.warnings.extend(f"{a.where}: {a.code}: {a.message}" for a in module.anomalies)
            graded = graded_analysis(module, settings)
            doc = project(module, post_id=out.post_id, lang=lang, analysis=graded)
            note_file = _notes_of(notes_dir, doc, module.id, notes) if notes_dir else None
            if note_file is not None:
                    doc = project(
                        module, post_id=out.post_id, lang=lang, notes=load_notes(note_file),
                        analysis=graded,
                    )
            out.documents.append(doc)
            out.facts.append(summarize(module, graded, doc))
        _texts(out, ndjson)
    except RisuError as exc:
        if exc.path is not None:
            exc.path = display_path(exc.path)  # a name that is not UTF-8, escaped
        out.error = exc.one_line()
        out.documents, out.facts, out.rendered = [], [], []
        out.digests, out.facts_texts, out.facts_digests = [], [], []
    except OSError as exc:
        out.error = f"{rel}: os-error: {exc.strerror or exc}"
        out.documents, out.facts, out.rendered = [], [], []
        out.digests, out.facts_texts, out.facts_digests = [], [], []
    if stage is not None and not ndjson and not out.error:
        _stage_documents(out, stage)
    return out


def _texts(out: SourceOutcome, ndjson: bool) -> None:
    """Each document's text as the catalog stores it (a JSON file, or an NDJSON line), and
    its facts file's; their digests (the cache's record of what the catalog should hold:
    a document's digest names it, whichever of the two texts it was taken of)."""
    out.rendered = [render(doc, ndjson) for doc in out.documents]
    out.digests = [_digest(text) for text in out.rendered]
    out.facts_texts = [document_json(f) for f in out.facts]
    out.facts_digests = [_digest(text) for text in out.facts_texts]


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _notes_of(notes_dir: str, doc: dict[str, Any], risuai_id: str,
              index: NotesIndex | None = None) -> str | None:
    """The notes file of a generated document: ``notes/<component_id>.yaml``, else the one
    :func:`find_notes` finds (a slug alias, a repost's ``for:``); None without one.  A
    symbolic link is not a notes file (it could lead out of the folder), as for the index
    :func:`find_notes` reads."""
    note_file = under(notes_dir) + f"{doc['component_id']}.yaml"
    if is_plain_file(note_file):
        return note_file
    found = find_notes(notes_dir, str(doc["component_id"]), risuai_id=risuai_id or None,
                       source_sha256=document_keys(doc)["source_sha256"], index=index)
    return str(found) if found is not None and found.is_file() else None


def _stage_documents(out: SourceOutcome, spec: StageSpec) -> None:
    """Write each rendered document into a temp file next to its target (not in place):
    ``out.staged[k]`` is the temp file, None when the target already holds exactly those
    bytes, or the OSError that stopped it (raised again where it is committed).  A staged
    document's text is not sent back (the temp file holds it)."""
    folder = under(spec.folder)
    out.staged = []
    for k, (doc, text) in enumerate(zip(out.documents, out.rendered, strict=True)):
        target = folder + safe_name(str(doc["component_id"])) + ".json"
        try:
            staged = stage_one(target, text.encode("utf-8"), sync=spec.sync, owner=spec.owner)
        except OSError as exc:
            out.staged.append(exc)
            continue
        except RisuError:  # (not staged: the write looks at the target and says why)
            staged = None
        if staged is None:
            out.staged.append(None)
        else:
            out.staged.append(os.fspath(staged.tmp))
            out.rendered[k] = ""


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def process_batch(
    items: Sequence[tuple[str, str] | tuple[str, str, str | None]
                    | tuple[str, str, str | None, int | None]
                    | tuple[str, str, str | None, int | None, FoundFile | None]], lang: str,
    notes_dir: str | None, ndjson: bool = False,
    stage: StageSpec | None = None,
    settings: Settings | None = None,
) -> list[SourceOutcome]:
    """:func:`process_file` for several ``(path, shown relative path[, detected format[,
    size[, (device, inode) found]]])`` items: one task of a pool or a cluster (small files
    travel in batches, so the per-task cost of the executor -- pickling, a round trip, a
    Dask scheduler decision -- is paid once)."""
    notes = notes_index(notes_dir) if notes_dir else None  # (taken once for the batch)
    return [process_file(item[0], item[1], lang, notes_dir, None, ndjson, stage, settings,
                         item[2] if len(item) > 2 else None,
                         item[3] if len(item) > 3 else None,
                         item[4] if len(item) > 4 else None, notes)
            for item in items]
