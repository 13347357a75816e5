"""File-level projection for the CLI: read, project, write (atomically)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from risutools.analysis import analyze
from risutools.canonical import document_json
from risutools.errors import Code, ConfigError, RisuError
from risutools.formats import read_path
from risutools.fsio import atomic_write
from risutools.projection.notes import Notes, load_notes
from risutools.projection.project import project
from risutools.targets import make_folder, os_error_line

if TYPE_CHECKING:
    from risutools.analysis import Analysis
    from risutools.formats.model import Module
    from risutools.settings.config import Settings


def project_path(path: str, *, post_id: str | None = None, notes_path: str | None = None,
                 lang: str = "en", settings: Settings | None = None
                 ) -> list[dict[str, Any]]:
    """Every document projected from the modules in ``path``.  ``settings``: the analysis
    findings a document mentions are those the settings report (``rules:``,
    ``--select``/``--ignore``), as in the documents ``ingest`` writes."""
    notes: Notes | None = load_notes(notes_path) if notes_path else None
    modules = read_path(path, with_assets=False)
    if notes is not None and len(modules) > 1:
        raise ConfigError(Code.NOTES_AMBIGUOUS,
                          f"{path} holds {len(modules)} components; a notes file belongs to one",
                          where="--notes")
    return [project(m, post_id=post_id, notes=notes, lang=lang,
                    analysis=graded_analysis(m, settings)) for m in modules]


def grades(settings: Settings) -> str:
    """What of ``settings`` changes a document (its analysis findings), as text (part of
    ``ingest``'s cache keys); "" when nothing does."""
    if not (settings.severities or settings.select or settings.ignore):
        return ""
    return json.dumps([sorted(settings.severities.items()), settings.select, settings.ignore])


def graded_analysis(module: Module, settings: Settings | None) -> Analysis:
    """The module's analysis as ``settings`` report it (:meth:`Settings.apply`), for
    :func:`~risutools.projection.project.project`: the one place ``project`` and ``ingest``
    grade a document's findings, and analyse the module once however many times it is
    projected (with and without notes)."""
    a = analyze(module)
    if settings is None or not grades(settings):
        return a
    from dataclasses import replace

    return replace(a, findings=settings.apply(a.findings))


def _plan(docs: list[dict[str, Any]], target: Path, out: str) -> list[tuple[Path, Any]]:
    if len(docs) == 1 and not (target.is_dir() or out.endswith(("/", os.sep))):
        return [(target, docs[0])]
    if target.exists() and not target.is_dir():
        raise RisuError(Code.NOT_A_DIRECTORY, f"is a file, not a folder ({len(docs)} "
                        "documents need a folder)", path=out)
    make_folder(target)
    return [(target / f"{doc['component_id']}.json", doc) for doc in docs]


def write_documents(docs: list[dict[str, Any]], out: str, *, force: bool = False) -> list[str]:
    """Write to ``out`` (a file for one document, a directory for several).  A file that
    exists is refused (``target-exists``, nothing written) unless ``force``."""
    target = Path(out)
    try:
        plan = _plan(docs, target, out)
    except OSError as exc:  # (a name too long, a folder that may not be searched)
        raise os_error_line(exc, out) from None
    if not force:
        existing = [p for p, _ in plan if os.path.lexists(p)]
        if existing:
            raise ConfigError(Code.TARGET_EXISTS, f"{len(existing)} file(s) already exist (e.g. "
                              f"{existing[0]}); use --force to overwrite", where="-o")
    for p, doc in plan:
        atomic_write(p, document_json(doc).encode("utf-8"), expect_absent=not force)
    return [str(p) for p, _ in plan]
