"""The checks of scope ``catalog``: MC104 (one id + version, one document), MC305 (a
document past candidate ends its chain of recorded, approved transitions), MC306 (the
log extends the base branch's, ``--base-log``) and MC307 (every component the log names
has a document among those checked).

Each looks at the documents validated together and yields a :class:`CatalogIssue` per
finding; ``validate``'s catalog pass (:func:`risutools.contract.validate.catalog_checks`)
calls them after the document rules and applies the filter and the configured severity.
MC305 reads the catalog's transition log and approvals through
:mod:`risutools.contract.transitions`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from risutools.checks.registry import check
from risutools.contract.baselog import compare_logs
from risutools.contract.loaders import LoadedDocument
from risutools.contract.result import DocumentInfo
from risutools.contract.shown import display_path
from risutools.contract.transitions import (
    ApprovalCheck,
    CatalogLog,
    candidate_lines,
    check_chain,
    find_catalog_root,
    read_log,
)
from risutools.pathnames import real_path, show_name
from risutools.settings import lifecycle
from risutools.settings.catalog import LOG_NAME


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


@check("MC305", "error", "catalog", "recorded-transitions", guards=True)
def mc305(loaded: Iterable[LoadedDocument], documents: Sequence[DocumentInfo],
          counts: ApprovalCheck | None = None, root: Path | None = None,
          candidates: Iterable[DocumentInfo] = (), logs: Logs | None = None
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
    logs = logs if logs is not None else Logs(root)
    for ld, info in zip(loaded, documents, strict=True):
        status = _review_status(ld.doc)
        if status not in lifecycle.PAST_START or info.component_id is None:
            continue
        found = logs.root_of(ld.path)
        if found is None:
            yield CatalogIssue(
                "/provenance/review_status",
                f"review_status is {status!r} but no catalog transition log "
                "(transitions.ndjson / approvals/) was found above this file; only "
                "recorded, approved transitions move a document past candidate", info, ld)
            continue
        yield from logs.problems(found)
        if info.sha256 is None:
            continue
        base = lifecycle.base_sha256(ld.doc)  # (the log names base hashes)
        for why in check_chain(logs.of(found), info.component_id, status, base, ld.doc,
                               counts=counts, names=frozenset((base, info.sha256))):
            yield CatalogIssue("/provenance/review_status", why, info, ld)
    for info in candidates:  # (each a place: what a candidate's check needs)
        found = logs.root_of(info.path) if info.component_id is not None else None
        if found is None:
            continue
        yield from logs.problems(found)
        told = candidate_lines(logs.of(found), str(info.component_id), None)
        if told is not None:
            yield CatalogIssue("/provenance/review_status", told, info)


@check("MC306", "error", "catalog", "append-only-log", guards=True)
def mc306(roots: Iterable[Path], base_log: Path) -> Iterator[CatalogIssue]:
    """With the base branch's transition log given (`--base-log FILE`), the catalog's
    transitions.ndjson begins with that log byte for byte: no line of it edited, removed,
    moved, re-encoded (CRLF, a byte order mark, key order, spacing) or cut off the end.

    Why: The log is append-only history. Lines cut off its end, with the documents put back
    as they were, read as an older catalog that every other check passes (a rollback of a
    promotion or an activation); only the base branch's log tells.

    Fix: Restore the base branch's lines as they were (`git checkout BASE --
    transitions.ndjson`), then record new steps with the commands that append to the log.
    """
    shown = show_name(str(base_log))
    for root in sorted(set(roots)):
        d = compare_logs(base_log, root)
        if d is None:
            continue
        keep = f"keep the base branch's {d.kept} line{'s' if d.kept != 1 else ''} as they are"
        what = f" line {d.line} is not the base branch's line {d.line}" \
            if d.line is not None else ""
        yield CatalogIssue("", f"{LOG_NAME}{what} (base log {shown}): {d.why}; the log is "
                           f"append-only: {keep}, byte for byte, and add new lines after "
                           "them", file=display_path(root / LOG_NAME), line=d.line)


@check("MC307", "warning", "catalog", "log-names-no-document")
def mc307(roots: Iterable[Path], documents: Iterable[DocumentInfo], exclude: Sequence[str],
          logs: Logs) -> Iterator[CatalogIssue]:
    """transitions.ndjson names a component that no document checked has, where the whole
    catalog was checked (`validate` of its folder; `review` reports the same as RV202): its
    document was removed, renamed, or left out of the check by `exclude:`.

    Why: A document left out of the check is not checked at all: a pull request that adds
    `exclude:` to the catalog's configuration hides a document whose history the log
    records (edited, or its status forged) from every other check. CI pins the
    configuration (`--config FILE` from the base branch) so that the pull request cannot
    choose what is left out.

    Fix: Restore the document (and take it out of `exclude:`), or retire the component with
    `risutools promote` before removing it.
    """
    have = {info.component_id for info in documents}
    hidden = (f", or left out of the check by exclude: {', '.join(map(show_name, exclude))} "
              "(a document left out is not checked: pin the configuration with --config)"
              if exclude else "")
    for root in sorted(set(roots)):
        log = logs.of(root)
        named = sorted((lines[0][0], cid) for cid, lines in
                       (*log.by_component.items(), *log.runtime.items())
                       if lines and cid not in have)
        first: dict[str, int] = {}
        for ln, cid in named:
            first.setdefault(cid, ln)
        for cid, ln in sorted(first.items(), key=lambda kv: kv[1]):
            yield CatalogIssue("", f"{LOG_NAME} line {ln} names {show_name(cid)}, which no "
                               f"document checked here has: its document was removed or "
                               f"renamed{hidden}; restore the document, or retire the "
                               "component before removing it", file=display_path(root / LOG_NAME),
                               line=ln)


def catalog_roots(folders: Iterable[str], documents: Iterable[DocumentInfo]) -> list[Path]:
    """The catalogs a run checks: the catalog root above each folder given and each
    document's folder (:func:`find_catalog_root`); none found, the first folder given (a
    catalog whose log and approvals were removed is still compared with its base)."""
    where = dict.fromkeys(os.path.abspath(f) for f in folders)
    for info in documents:
        if info.path is not None:
            where[os.path.dirname(info.path)] = None
    roots = {r for f in where if (r := find_catalog_root(Path(f))) is not None}
    if not roots and where:
        roots.add(real_path(next(iter(where))))
    return sorted(roots)


class Logs:
    """Each document's catalog root (found once per folder; ``given``: the root of a
    document known without its file) and each root's log (read once, its problems said
    once)."""

    def __init__(self, given: Path | None, known: CatalogLog | None = None) -> None:
        self.given = given
        self.roots: dict[str | None, Path | None] = {}
        #: ``known``: the log of ``given`` a caller already read (a review's: one reading
        #: for MC305, the chain section and the board)
        self.logs: dict[Path, CatalogLog] = {known.root: known} if known is not None else {}
        self.said: set[Path] = set()  # the roots whose log's problems were said

    def root_of(self, path: str | Path | None) -> Path | None:
        # (the folder as text: one string operation a document, no path object made)
        folder = os.path.dirname(path) if path is not None else None
        if folder not in self.roots:
            self.roots[folder] = find_catalog_root(Path(folder)) if folder is not None else \
                self.given if self.given is not None else find_catalog_root(Path.cwd())
        return self.roots[folder]

    def of(self, root: Path) -> CatalogLog:
        if root not in self.logs:
            self.logs[root] = read_log(root)
        return self.logs[root]

    def problems(self, root: Path) -> Iterator[CatalogIssue]:
        """The log's own problems, the first time they are asked for."""
        if root in self.said:
            return
        self.said.add(root)
        log = self.of(root)
        tname = display_path(root / LOG_NAME)
        for line, why in log.problems:
            yield CatalogIssue("", why, file=tname, line=line)
