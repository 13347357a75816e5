"""What an ingest run found and did: each source file's outcome (:class:`SourceOutcome`) and
the run's summary (:class:`IngestResult`: counts, the catalog files written, kept or in
collision), as ``risutools ingest --json`` prints it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from risutools import __version__

#: how a source's warning that another source carries its component ends: made by each run
#: of the catalog's sources as a whole (never a file's own: a cached source's record is read
#: without it, and the run says it again while the other file is there)
ANOTHER_CONTAINER = "(another container); kept that one"


@dataclass
class SourceOutcome:
    """What happened to one source file."""

    path: str  # relative to the source folder, with "/" separators
    size: int
    format: str | None = None
    sha256: str | None = None
    post_id: str | None = None
    documents: list[dict[str, Any]] = field(default_factory=list)
    # per document, its component-facts-v1 summary (written to facts/ by ingest)
    facts: list[dict[str, Any]] = field(default_factory=list, repr=False)
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
    # per document, the sha256 (hex) of its text as a JSON file (``render(doc, False)``),
    # and of its facts file's text; empty when not known (NDJSON, an error)
    digests: list[str] = field(default_factory=list, repr=False)
    facts_digests: list[str] = field(default_factory=list, repr=False)
    # per document, its facts file's text as the worker rendered it (empty: not rendered)
    facts_texts: list[str] = field(default_factory=list, repr=False)
    # per document, whether its file (and its facts file) in the catalog were found to hold
    # exactly these bytes by the cache's record of their stat (then neither is read again)
    # (what comparing it gave: the status and the line, as the cache recorded it; None: not
    # verified, compared as usual)
    verified: list[tuple[str, str] | None] = field(default_factory=list, repr=False)
    facts_verified: list[tuple[str, str] | None] = field(default_factory=list, repr=False)

    @property
    def status(self) -> str:
        if self.error:
            return "failed"
        if self.duplicate_of:
            return "duplicate"
        if not self.component_ids():
            return "empty"
        return "ok"

    def component_ids(self) -> list[str]:
        """Each document's ``component_id``, in order."""
        return [str(d["component_id"]) for d in self.documents]

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "path": self.path,
            "status": self.status,
            "format": self.format,
            "size": self.size,
            "sha256": self.sha256,
            "post_id": self.post_id,
            "components": sorted(self.component_ids()),
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
    #: of those, the ids whose projection changed and was not taken: their facts are kept
    #: (the others' documents hold this run's projection: their facts are written from it)
    facts_kept: set[str] = field(default_factory=set)
    collisions: list[str] = field(default_factory=list)  # one-line messages
    # documents left byte for byte because they cannot be read (one line each, with where)
    kept_unreadable: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # files that are not Risu files
    # one line each for what the run worked around (a cache it could not read and rebuilt)
    notices: list[str] = field(default_factory=list)
    # candidates whose replay verdict was carried over (the module's bytes unchanged), and
    # those whose verdict became stale (one line each: id and reason)
    evidence_kept: list[str] = field(default_factory=list)
    evidence_stale: list[str] = field(default_factory=list)
    # reviewed documents re-projected (curator notes applied) and recorded as evidence, one
    # logged line each (id, log line, reason)
    evidence_logged: list[str] = field(default_factory=list)

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
            "components": sum(len(s.component_ids()) for s in self.sources
                              if s.status == "ok"),
            "written": len(self.written),
            "unchanged": len(self.unchanged),
            "kept_reviewed": len(self.kept_reviewed),
            "collisions": len(self.collisions),
            "kept_unreadable": len(self.kept_unreadable),
            "not_risu": len(self.skipped),
            "evidence_kept": len(self.evidence_kept),
            "evidence_stale": len(self.evidence_stale),
            "evidence_logged": len(self.evidence_logged),
        }

    def why_documents(self) -> str:
        """Why N components became M documents, in one line: the components the readable
        files hold, those in files with the same bytes as another, those another container
        already carried, the id collisions, and how many distinct documents that leaves."""
        found = sum(len(s.component_ids()) for s in self.sources
                    if s.status in ("ok", "duplicate"))
        dup = sum(len(s.component_ids()) for s in self.sources if s.status == "duplicate")
        ids = {cid for s in self.sources if s.status == "ok" for cid in s.component_ids()}
        other = sum(1 for s in self.sources if s.status == "ok" for w in s.warnings
                    if w.endswith(ANOTHER_CONTAINER))
        parts = [f"{dup} in files with the same bytes as another (kept the newest post)"]
        parts.append(f"{other} the same component in another container")
        parts.append(f"{len(self.collisions)} id collision(s)")
        return (f"{found} component(s) became {len(ids)} document(s): " + ", ".join(parts)
                + (f"; {found - dup - len(ids) - other} more share an id with another"
                   if found - dup - len(ids) - other > len(self.collisions) else ""))

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
            "evidence_kept": self.evidence_kept,
            "evidence_stale": self.evidence_stale,
            "evidence_logged": self.evidence_logged,
        }
