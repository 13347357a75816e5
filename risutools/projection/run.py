"""File-level projection for the CLI: read, project, write (atomically)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from risutools.errors import ConfigError
from risutools.fsio import atomic_write
from risutools.projection.notes import Notes, load_notes
from risutools.projection.project import project


def project_path(path: str, *, post_id: str | None = None, notes_path: str | None = None,
                 lang: str = "en") -> list[dict[str, Any]]:
    """Every document projected from the modules in ``path``."""
    from risutools.formats import read_path

    notes: Notes | None = load_notes(notes_path) if notes_path else None
    modules = read_path(path, with_assets=False)
    if notes is not None and len(modules) > 1:
        raise ConfigError("notes-ambiguous",
                          f"{path} holds {len(modules)} components; a notes file belongs to one",
                          where="--notes")
    return [project(m, post_id=post_id, notes=notes, lang=lang) for m in modules]


def dumps(doc: dict[str, Any]) -> str:
    """The document as written to disk: UTF-8 JSON, one-space indent, field order kept."""
    return json.dumps(doc, ensure_ascii=False, indent=1, allow_nan=False) + "\n"


def write_documents(docs: list[dict[str, Any]], out: str, *, force: bool = False) -> list[str]:
    """Write to ``out`` (a file for one document, a directory for several).  A file that
    exists is refused (``target-exists``, nothing written) unless ``force``."""
    target = Path(out)
    if len(docs) == 1 and not (target.is_dir() or out.endswith(("/", os.sep))):
        plan = [(target, docs[0])]
    else:
        if target.exists() and not target.is_dir():
            raise ConfigError("bad-output", f"{len(docs)} documents need a directory, and {out} "
                              "is a file", where="-o")
        target.mkdir(parents=True, exist_ok=True)
        plan = [(target / f"{doc['component_id']}.json", doc) for doc in docs]
    if not force:
        existing = [p for p, _ in plan if os.path.lexists(p)]
        if existing:
            raise ConfigError("target-exists", f"{len(existing)} file(s) already exist (e.g. "
                              f"{existing[0]}); use --force to overwrite", where="-o")
    for p, doc in plan:
        atomic_write(p, dumps(doc).encode("utf-8"), expect_absent=not force)
    return [str(p) for p, _ in plan]
