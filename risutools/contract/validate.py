"""Validation: one document (``validate_document``) and paths (``validate_paths``)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from risutools.checks.registry import RuleFilter as RuleFilter  # re-exported
from risutools.contract.load_checks import mc000
from risutools.contract.loaders import LoadedDocument, LoadOutcome, load_documents
from risutools.contract.result import DocumentInfo as DocumentInfo  # re-exported
from risutools.contract.result import Result as Result  # re-exported
from risutools.contract.result import Verification as Verification  # re-exported
from risutools.contract.rules import (
    DOCUMENT_RULES,
    MC100,
    MC104,
    MC305,
    RULES,
    effective_severity,
    make_finding,
)
from risutools.contract.schema import schema_issues
from risutools.errors import Code
from risutools.findings import Finding, sorted_findings
from risutools.jsonlines import unpaired_surrogate
from risutools.settings import lifecycle
from risutools.settings.config import Settings


def _doc_hash(doc: Any) -> str | None:
    from risutools.canonical import doc_sha256

    try:
        return doc_sha256(doc)
    except (ValueError, TypeError, UnicodeEncodeError, RecursionError):
        return None


def not_object_message(doc: Any) -> str:
    from risutools.jsontypes import json_type_name

    return (f"the document is {json_type_name(doc)}, not a JSON object; write one "
            "matrix-component-v1 object per file (or per NDJSON line)")


def validate_document(
    doc: Any,
    *,
    file: str | None = None,
    line: int | None = None,
    config: Settings | None = None,
    line_of: Any = None,
    loaded: bool = False,
) -> list[Finding]:
    """Every document-level rule (MC100-MC304, MC400, MC401, MC500, MC600) on one document.

    ``line_of(pointer) -> int | None`` (optional) gives each finding the line of
    its field; otherwise every finding gets ``line``.

    Text that is not Unicode (an unpaired surrogate, which only a value built in code can
    hold: the loaders refuse it in a file) is the loaders' finding, one ``MC000`` error at
    its JSON pointer, and nothing else is checked: such a document has no canonical form.
    ``loaded=True`` says the document came from the loaders, which refused every unpaired
    surrogate already, so it is not walked for them again."""
    bad = None if loaded else unpaired_surrogate(doc)
    if bad is not None:
        ptr, why = bad
        at = line_of(ptr) if line_of is not None else line
        return [make_finding(mc000, "error", why, file, at, ptr)]
    cfg = config or Settings()
    out: list[Finding] = []

    def add(rule: str, pointer: str, message: str) -> None:
        sev = effective_severity(rule, doc, cfg)
        if sev == "off":
            return
        ln = line_of(pointer) if line_of is not None else line
        out.append(make_finding(rule, sev, message, file, ln, pointer))

    if not isinstance(doc, dict):
        add(MC100.id, "", not_object_message(doc))
        return out
    for pointer, message in schema_issues(doc):
        add(MC100.id, pointer, message)
    for rule, fn in DOCUMENT_RULES:
        for pointer, message in fn(doc, cfg):
            add(rule, pointer, message)
    return sorted_findings(out)


def _info(ld: LoadedDocument, findings: list[Finding]) -> DocumentInfo:
    doc = ld.doc
    cid = doc.get("component_id") if isinstance(doc, dict) else None
    ver = doc.get("component_version") if isinstance(doc, dict) else None
    return DocumentInfo(
        ld.file, ld.line, cid if isinstance(cid, str) else None,
        ver if isinstance(ver, str) else None, ld.sha256 or _doc_hash(doc), findings,
    )


def load_all(paths: Sequence[str | os.PathLike[str]], config: Settings,
             skip_non_documents: bool = False) -> LoadOutcome:
    """Every document under ``paths``; DocumentError when there is nothing at all to check
    (with ``skip_non_documents``, only skipped files is a valid, empty run)."""
    out = LoadOutcome()
    for p in paths:
        out.extend(load_documents(p, exclude=config.exclude,
                                  skip_non_documents=skip_non_documents))
    if not out.documents and not out.problems and not (skip_non_documents and out.skipped):
        from risutools.errors import DocumentError

        shown = ", ".join(str(p) for p in paths)
        raise DocumentError(Code.NO_DOCUMENTS, "no matrix-component documents found "
                            "(.json, .yaml, .yml, .ndjson, .jsonl)", path=shown)
    return out


def validate_paths(
    paths: Sequence[str | os.PathLike[str]],
    config: Settings | None = None,
    *,
    rule_filter: RuleFilter | None = None,
    skip_non_documents: bool = False,
) -> Result:
    """Load and validate every document under ``paths`` (files, folders, ``-``).

    Adds the catalog-level rules: MC104 (duplicate id + version across all
    documents given) and MC305 (recorded transition chains)."""
    cfg = config or Settings()
    flt = rule_filter or RuleFilter()
    loaded = load_all(paths, cfg, skip_non_documents)
    result = Result("validate", files=loaded.files, skipped=loaded.skipped)
    result.file_findings = [f for f in loaded.problems if flt.keep(f.rule)]
    for ld in loaded.documents:
        findings = validate_document(ld.doc, file=ld.file, line=ld.line, config=cfg,
                                     line_of=ld.line_of, loaded=True)
        result.documents.append(_info(ld, [f for f in findings if flt.keep(f.rule)]))
    _catalog_rules(loaded.documents, result, cfg, flt)
    return result


def _catalog_rules(docs: list[LoadedDocument], result: Result, cfg: Settings,
                   flt: RuleFilter) -> None:
    from risutools.contract.transitions import find_catalog_root, read_log

    # MC104: duplicates across everything validated together.
    first: dict[tuple[str, str], DocumentInfo] = {}
    for info in result.documents:
        if info.component_id is None or info.component_version is None:
            continue
        key = (info.component_id, info.component_version)
        if key in first:
            prev = first[key]
            where = f"{prev.file}" + (f":{prev.line}" if prev.line else "")
            _add(info, MC104.id, "/component_id",
                 f"{info.component_id} {info.component_version} is already defined at {where}; "
                 "bump component_version or remove the copy", cfg, flt, None)
        else:
            first[key] = info
    # MC305: chains for documents past candidate.
    logs: dict[Path, Any] = {}
    reported_logs: set[Path] = set()
    for ld, info in zip(docs, result.documents, strict=True):
        doc = ld.doc
        status = doc.get("provenance", {}).get("review_status") if isinstance(doc, dict) \
            and isinstance(doc.get("provenance"), dict) else None
        if status not in lifecycle.PAST_START or info.component_id is None:
            continue
        start = ld.path.parent if ld.path is not None else Path.cwd()
        root = find_catalog_root(start)
        if root is None:
            _add(info, MC305.id, "/provenance/review_status",
                 f"review_status is {status!r} but no catalog transition log "
                 "(transitions.ndjson / approvals/) was found above this file; only recorded, "
                 "approved transitions move a document past candidate", cfg, flt, ld)
            continue
        if root not in logs:
            logs[root] = read_log(root)
        log = logs[root]
        if root not in reported_logs:
            reported_logs.add(root)
            from risutools.contract.loaders import display_path

            tname = display_path(root / "transitions.ndjson")
            for line, why in log.problems:
                f = make_finding(MC305.id, "error", why, tname, line, "")
                if flt.keep(MC305.id) and cfg.severities.get(MC305.id) != "off":
                    result.file_findings.append(f)
        for why in _chain_messages(log, info, status):
            _add(info, MC305.id, "/provenance/review_status", why, cfg, flt, ld)


def _chain_messages(log: Any, info: DocumentInfo, status: str) -> list[str]:
    from risutools.contract.transitions import check_chain

    if info.component_id is None or info.sha256 is None:
        return []
    return list(check_chain(log, info.component_id, status, info.sha256))


def _add(info: DocumentInfo, rule: str, pointer: str, message: str, cfg: Settings,
         flt: RuleFilter, ld: LoadedDocument | None) -> None:
    if not flt.keep(rule):
        return
    sev = cfg.severities.get(rule, RULES[rule].severity)
    if sev == "off":
        return
    line = ld.line_of(pointer) if ld is not None else info.line
    info.findings.append(make_finding(rule, sev, message, info.file, line, pointer))
    info.findings.sort(key=Finding.sort_key)
