"""The checks of scope ``catalog``: MC104 (one id + version, one document) and MC305 (a
document past candidate ends its chain of recorded, approved transitions).

Each looks at the documents validated together and yields a :class:`CatalogIssue` per
finding; ``validate``'s catalog pass (:func:`risutools.contract.validate.catalog_checks`)
calls them after the document rules and applies the filter and the configured severity.
MC305 reads the catalog's transition log and approvals through
:mod:`risutools.contract.transitions`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from risutools.checks.registry import check
from risutools.contract.loaders import LoadedDocument, display_path
from risutools.contract.result import DocumentInfo
from risutools.contract.transitions import (
    ApprovalCheck,
    CatalogLog,
    candidate_lines,
    check_chain,
    find_catalog_root,
    read_log,
)
from risutools.settings import lifecycle


@dataclass(frozen=True)
class CatalogIssue:
    """One catalog finding: on a document (``info``; ``loaded`` gives the line of its
    field), or on a line of a catalog file (``file`` and ``line``: the transition log)."""

    pointer: str
    message: str
    info: DocumentInfo | None = None
    loaded: LoadedDocument | None = None
    file: str | None = None
    line: int | None = None


@check("MC104", "error", "catalog", "duplicate-id")
def mc104(documents: Sequence[DocumentInfo]) -> Iterator[CatalogIssue]:
    """Two documents in one catalog never share component_id + component_version.

    Why: Approvals, transitions and replays name a component by id and version; two
    documents with the same pair make every such reference ambiguous.

    Fix: Bump component_version of one of them, or remove the copy.
    """
    first: dict[tuple[str, str], DocumentInfo] = {}
    for info in documents:
        if info.component_id is None or info.component_version is None:
            continue
        key = (info.component_id, info.component_version)
        if key not in first:
            first[key] = info
            continue
        prev = first[key]
        where = f"{prev.file}" + (f":{prev.line}" if prev.line else "")
        yield CatalogIssue(
            "/component_id",
            f"{info.component_id} {info.component_version} is already defined at {where}; "
            "bump component_version or remove the copy", info)


def _review_status(doc: Any) -> Any:
    prov = doc.get("provenance") if isinstance(doc, dict) else None
    return prov.get("review_status") if isinstance(prov, dict) else None


def past_start(doc: Any) -> bool:
    """Whether ``doc``'s review status is past candidate: a document MC305 reads."""
    return _review_status(doc) in lifecycle.PAST_START


@check("MC305", "error", "catalog", "recorded-transitions")
def mc305(loaded: Iterable[LoadedDocument], documents: Sequence[DocumentInfo],
          counts: ApprovalCheck | None = None, root: Path | None = None
          ) -> Iterator[CatalogIssue]:
    """A document past candidate ends a chain of recorded transitions (transitions.ndjson)
    from candidate, each backed by a human approval record in approvals/ that counts (signed
    by an allowed signer where signatures are required), each record used by one line; a
    candidate has no line at all (no step leads back to candidate).

    Why: Review status is a human decision; a status edited by hand would promote a
    component nobody approved.

    Fix: Move the component only with `risutools promote` and an approval record; never
    edit review_status by hand.
    """
    logs: dict[Path, CatalogLog] = {}
    roots: dict[Path, Path | None] = {}  # a document's folder -> its catalog root
    for ld, info in zip(loaded, documents, strict=True):
        # (a candidate may come as its place alone: its status is known from its info)
        status = _review_status(ld.doc) if ld.doc is not None or not info.candidate \
            else lifecycle.START
        if info.component_id is None or (status != lifecycle.START
                                         and status not in lifecycle.PAST_START):
            continue
        # (``root``: the catalog of a document given without its file)
        folder = ld.path.parent if ld.path is not None else root or Path.cwd()
        if folder not in roots:
            roots[folder] = root if ld.path is None and root is not None \
                else find_catalog_root(folder)
        found = roots[folder]
        if found is None:
            if status != lifecycle.START:
                yield CatalogIssue(
                    "/provenance/review_status",
                    f"review_status is {status!r} but no catalog transition log "
                    "(transitions.ndjson / approvals/) was found above this file; only "
                    "recorded, approved transitions move a document past candidate", info, ld)
            continue
        if found not in logs:  # each log read once, its own problems said once
            logs[found] = log = read_log(found)
            tname = display_path(found / "transitions.ndjson")
            for line, why in log.problems:
                yield CatalogIssue("", why, file=tname, line=line)
        yield from _chain_issues(logs[found], ld, info, status, counts)


def _chain_issues(log: CatalogLog, ld: LoadedDocument, info: DocumentInfo, status: Any,
                  counts: ApprovalCheck | None) -> Iterator[CatalogIssue]:
    """A candidate: no line names it; past candidate: it ends its chain."""
    assert info.component_id is not None
    if status == lifecycle.START:
        why = candidate_lines(log, info.component_id, ld.doc)
        if why is not None:
            yield CatalogIssue("/provenance/review_status", why, info, ld)
        return
    if info.sha256 is None:
        return
    base = lifecycle.base_sha256(ld.doc)  # (the log names base hashes)
    for why in check_chain(log, info.component_id, status, base, ld.doc, counts=counts):
        yield CatalogIssue("/provenance/review_status", why, info, ld)
