"""Validation: one document (``validate_document``) and paths (``validate_paths``)."""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Iterable, Sequence
from pathlib import Path
from typing import Any

from risutools.canonical import doc_sha256
from risutools.checks.registry import Check, needed_by
from risutools.checks.registry import RuleFilter as RuleFilter  # re-exported
from risutools.collector import alive_frozen, batch_settled, cycles_paused
from risutools.contract.checks_catalog import (
    CatalogIssue,
    Logs,
    catalog_roots,
    mc104,
    mc305,
    mc306,
    mc307,
    past_start,
)
from risutools.contract.checks_load import mc000
from risutools.contract.loaders import (
    LoadedDocument,
    LoadOutcome,
    document_batches,
    load_documents,
)
from risutools.contract.preconditions import PRECONDITIONED, quiet_rules
from risutools.contract.readonce import ReadOnce
from risutools.contract.result import DocumentInfo as DocumentInfo  # re-exported
from risutools.contract.result import Result as Result  # re-exported
from risutools.contract.result import Verification as Verification  # re-exported
from risutools.contract.rules import (
    DOCUMENT_RULES,
    RuleFn,
    active_code,
    effective_severity,
    make_finding,
    mc500,
    mc600,
)
from risutools.contract.schema import mc100
from risutools.contract.transitions import ApprovalCheck, CatalogLog
from risutools.errors import Code, DocumentError
from risutools.findings import (
    MAX_LISTED,
    Finding,
    not_listed_message,
    shown_pointer,
    sorted_findings,
)
from risutools.jsonlines import unpaired_surrogate
from risutools.pathnames import real_path
from risutools.settings.config import Settings


def doc_hash(doc: Any) -> str | None:
    """The canonical hash of ``doc``, or None when it has none (not JSON: an unpaired
    surrogate, a float that is not finite, nesting too deep)."""
    try:
        return doc_sha256(doc)
    except (ValueError, TypeError, UnicodeEncodeError, RecursionError):
        return None


def validate_document(
    doc: Any,
    *,
    file: str | None = None,
    line: int | None = None,
    config: Settings | None = None,
    line_of: Any = None,
    loaded: bool = False,
    keep: Callable[[str], bool] | None = None,
    every_rule: bool = False,
    texts: list[str] | None = None,
) -> list[Finding]:
    """Every document-level rule (MC100-MC304, MC400, MC401, MC500, MC600) on one document:
    at most :data:`~risutools.findings.MAX_LISTED` findings of a rule, and one that counts
    the rest.  ``line_of(pointer) -> int | None`` (optional) gives each finding the line
    of its field; otherwise every finding gets ``line``.

    An unpaired surrogate (only a value built in code holds one) is one ``MC000`` error
    and nothing else is checked; ``loaded=True``: the loaders refused those already.
    ``keep(rule)`` (``--select``/``--ignore``) drops a rule's findings before their lines
    are looked for.  A rule :func:`~risutools.contract.preconditions.quiet_rules` says
    finds nothing is not run (``every_rule=True`` runs every one: the tests' reference).
    ``texts``: the strings of payload and projection the loader's walk met, for MC500."""
    return validate_many([(doc, file, line, line_of, texts)], config=config, loaded=loaded,
                         keep=keep, every_rule=every_rule)[0]


#: one document for :func:`validate_many`: (the document, its file, its line, its
#: ``line_of`` or None, its ``texts`` or None), as :func:`validate_document` takes them
Checked = tuple[Any, str | None, int | None, Any, list[str] | None]


def validate_many(docs: Sequence[Checked], *, config: Settings | None = None,
                  loaded: bool = False, keep: Callable[[str], bool] | None = None,
                  every_rule: bool = False) -> list[list[Finding]]:
    """:func:`validate_document` of each of ``docs`` (the same findings, their lines looked
    for in the same order), each rule run over all of them before the next: the same work
    as one document at a time, each rule's code at hand in the processor's caches for the
    batch (see :func:`~risutools.contract.loaders.load_batches`)."""
    cfg = config or Settings()
    checking = [_Checking(doc, file, line, line_of, texts, cfg, keep)
                for doc, file, line, line_of, texts in docs]
    run = _rules_run(keep)
    # (quiet_rules not asked where none of the rules it may name runs: each rule then runs)
    every_rule = every_rule or PRECONDITIONED.isdisjoint(rule for rule, _ in run)
    objects = [c for c in checking if c.start(loaded, every_rule)]
    for rule, fn in run:  # MC100 (the schema) first
        code, schema = rule == mc500.id, rule == mc100.id
        # (the documents it runs on, told by one comprehension a rule: a rule quiet in
        # most documents costs each of them a membership test, not a turn of this loop)
        todo = [c for c in objects if rule not in c.quiet]
        if rule == mc600.id:  # (the schema already says what is missing, no narrative)
            todo = [c for c in todo if not c.schema_fails]
        for c in todo:
            found = active_code(c.doc, c.texts) if code and c.texts is not None \
                else fn(c.doc, cfg)
            for pointer, message in found:
                c.schema_fails |= schema
                c.add(rule, pointer, message)
    for c in objects:
        c.finish()
    return [c.out for c in checking]


def _rules_run(keep: Callable[[str], bool] | None) -> list[tuple[str, RuleFn]]:
    """The document rules :func:`validate_many` runs: those whose findings ``keep`` keeps
    (``--select``/``--ignore``: a rule left out is not run, its findings never made), and
    the rules a kept rule needs (:attr:`~risutools.checks.registry.Check.needs`: MC100 for
    MC600, silent where the schema fails; MC200 for MC201), even where their findings are
    not kept."""
    if keep is None:
        return list(DOCUMENT_RULES)
    users = needed_by()
    return [(rule, fn) for rule, fn in DOCUMENT_RULES
            if keep(rule) or any(keep(x) for x in users.get(rule, ()))]


def _asked(flt: RuleFilter) -> Callable[[str], bool] | None:
    """What :func:`validate_many` asks whether a rule is kept: the filter, or None when it
    keeps every rule (then none is asked)."""
    return None if flt.keeps_all else flt.keep


class _Checking:
    """One document of :func:`validate_many` while the rules run: its findings so far."""

    __slots__ = ("cfg", "doc", "file", "keep", "line", "line_of", "listed", "out", "quiet",
                 "schema_fails", "texts")

    def __init__(self, doc: Any, file: str | None, line: int | None, line_of: Any,
                 texts: list[str] | None, cfg: Settings,
                 keep: Callable[[str], bool] | None) -> None:
        self.doc, self.file, self.line, self.line_of, self.texts = doc, file, line, line_of, texts
        self.cfg, self.keep = cfg, keep
        self.out: list[Finding] = []
        self.listed: dict[str, int] = {}  # rule -> its findings in this document
        self.quiet: Collection[str] = ()
        self.schema_fails = False

    def start(self, loaded: bool, every_rule: bool) -> bool:
        """What is found before the rules run; whether they run (an object: else an unpaired
        surrogate's MC000, or MC100's one finding on what is no object, is all)."""
        doc = self.doc
        bad = None if loaded else unpaired_surrogate(doc)
        if bad is not None:
            line_of = self.line_of
            self.out = [mc000(self.file, bad[1],
                              line_of(bad[0]) if line_of is not None else self.line, bad[0])]
            return False
        if not isinstance(doc, dict):  # MC100 says so (once); the rules read objects only
            for pointer, message in mc100(doc, self.cfg):
                self.add(mc100.id, pointer, message)
            return False
        self.quiet = () if every_rule else quiet_rules(doc)
        return True

    def add(self, rule: str, pointer: str, message: str) -> None:
        if self.keep is not None and not self.keep(rule):
            return
        sev = effective_severity(rule, self.doc, self.cfg)
        if sev == "off":
            return
        self.listed[rule] = n = self.listed.get(rule, 0) + 1
        if n > MAX_LISTED:
            return  # counted, not listed (see MAX_LISTED)
        pointer = shown_pointer(pointer)  # (a pointer past a long key: its container's)
        ln = self.line_of(pointer) if self.line_of is not None else self.line
        self.out.append(make_finding(rule, sev, message, self.file, ln, pointer))

    def finish(self) -> None:
        """The findings of a document the rules ran on, in order (and a finding for each rule
        with more than MAX_LISTED of them)."""
        out = self.out
        if len(out) >= MAX_LISTED:
            out += _not_listed(self.listed, self.doc, self.cfg, self.file, self.line)
        if len(out) > 1:  # (one finding: in order)
            self.out = sorted_findings(out)


def _not_listed(listed: dict[str, int], doc: Any, cfg: Settings, file: str | None,
                line: int | None) -> list[Finding]:
    """One finding for each rule with more than :data:`~risutools.findings.MAX_LISTED`
    findings in ``doc``."""
    return [make_finding(rule, effective_severity(rule, doc, cfg),
                         not_listed_message(rule, n - MAX_LISTED), file, line, "")
            for rule, n in listed.items() if n > MAX_LISTED]


def document_info(ld: LoadedDocument, findings: list[Finding], hashed: bool = True
                  ) -> DocumentInfo:
    """A loaded document's :class:`DocumentInfo` (id, version, canonical hash), with the
    findings found in it; ``hashed=False``: the hash only when the loader gave it."""
    doc = ld.doc
    cid = doc.get("component_id") if isinstance(doc, dict) else None
    ver = doc.get("component_version") if isinstance(doc, dict) else None
    prov = doc.get("provenance") if isinstance(doc, dict) else None
    return DocumentInfo(
        ld.file, ld.line, cid if isinstance(cid, str) else None,
        ver if isinstance(ver, str) else None,
        ld.sha256 or (doc_hash(doc) if hashed else None), findings,
        ld.path,
        candidate=isinstance(prov, dict) and prov.get("review_status") == "candidate",
    )


def load_all(paths: Sequence[str | os.PathLike[str]], config: Settings,
             skip_non_documents: bool = False) -> LoadOutcome:
    """Every document under ``paths``; DocumentError when there is nothing at all to check
    (with ``skip_non_documents``, only skipped files is a valid, empty run)."""
    out = LoadOutcome()
    once = ReadOnce() if len(paths) > 1 else None
    for p in paths:
        out.extend(load_documents(p, exclude=config.exclude,
                                  skip_non_documents=skip_non_documents, once=once))
    _check_found(paths, bool(out.documents or out.problems), bool(out.skipped),
                 skip_non_documents)
    return out


def _check_found(paths: Sequence[str | os.PathLike[str]], found: bool, skipped: bool,
                 skip_non_documents: bool) -> None:
    """DocumentError when there was nothing at all to check (see :func:`load_all`)."""
    if not found and not (skip_non_documents and skipped):
        shown = ", ".join(str(p) for p in paths)
        raise DocumentError(Code.NO_DOCUMENTS, "no matrix-component documents found "
                            "(.json, .yaml, .yml, .ndjson, .jsonl)", path=shown)


def validate_paths(
    paths: Sequence[str | os.PathLike[str]],
    config: Settings | None = None,
    *,
    rule_filter: RuleFilter | None = None,
    skip_non_documents: bool = False,
    counts: ApprovalCheck | None = None,
    hashes: bool = True,
    base_log: Path | None = None,
) -> Result:
    """Load and validate every document under ``paths`` (files, folders, ``-``).

    Adds the catalog-level rules: MC104 (duplicate id + version across all
    documents given) and MC305 (recorded transition chains; ``counts`` decides whether
    each step's approval record counts: its signature); with ``base_log`` (the base branch's
    transition log), MC306 (each catalog's log extends it: :func:`catalog_roots`).

    ``hashes=False`` (a report that shows no document hash): a document's
    :attr:`DocumentInfo.sha256` is computed only for a document MC305 reads (past
    candidate: it asks whether there is one), else None; the findings are the same."""
    cfg = config or Settings()
    flt = rule_filter or RuleFilter()
    result = Result("validate")
    # the files' documents validated as they are read, a batch at a time (each step over
    # the batch: document_batches), and let go but for what the catalog checks read: MC104 a
    # document's DocumentInfo, MC305 a document past candidate itself (memory: the
    # summaries, not the documents)
    kept: list[LoadedDocument] = []
    kept_info: list[DocumentInfo] = []
    problems = 0
    folders: list[str] = []  # (the paths that were folders, as the loader found them)
    batches = document_batches(paths, exclude=cfg.exclude, hashed=hashes,
                               skip_non_documents=skip_non_documents, folders=folders,
                               prose=any(rule == mc500.id for rule, _ in
                                         _rules_run(_asked(flt))))
    # each batch read and checked with the cycle collector paused: its documents are trees,
    # freed as they go; once it ends, a cycle it made (an error's traceback) is collected and
    # what it keeps (the summaries) is set aside from later passes (batch_settled)
    with cycles_paused(), alive_frozen():
        for parts, _ in batches:
            problems += _validated_batch(parts, result, cfg, flt, hashes, kept, kept_info)
            del parts  # (its documents let go before the pass)
            batch_settled()
    _check_found(paths, bool(result.documents or problems), bool(result.skipped),
                 skip_non_documents)
    for issue in mc104(result.documents):
        _add(result, mc104, issue, cfg, flt)
    logs = Logs(None)
    # (a candidate's DocumentInfo is all MC305 asks of it: whether the log names it)
    for issue in mc305(kept, kept_info, counts,
                       candidates=[i for i in result.documents if i.candidate], logs=logs):
        _add(result, mc305, issue, cfg, flt)
    _whole_catalogs(paths, folders, result, cfg, flt, logs, base_log)
    return result


def _whole_catalogs(paths: Sequence[str | os.PathLike[str]], folders: list[str],
                    result: Result, cfg: Settings, flt: RuleFilter, logs: Logs,
                    base_log: Path | None) -> None:
    """The checks of each catalog as a whole: MC307 where a folder given holds the whole
    catalog (its root, or a folder above it: files named alone, or a folder inside the
    catalog, are a part of it), and MC306 with ``base_log`` (``folders``: those of
    ``paths`` that were folders when read)."""
    walked = [real_path(f) for f in folders]
    # (no folder given, no whole catalog: each document's folder is then not looked at)
    whole = [r for r in catalog_roots(folders, result.documents)
             if any(r == w or w in r.parents for w in walked)] if folders else []
    for issue in mc307(whole, result.documents, cfg.exclude, logs):
        _add(result, mc307, issue, cfg, flt)
    if base_log is not None:
        given = set(folders)
        named = folders + [os.path.dirname(os.fspath(p)) or "." for p in paths
                           if os.fspath(p) != "-" and os.fspath(p) not in given]
        # (standard input alone: the catalog above the working folder, as MC305 reads)
        for issue in mc306(catalog_roots(named or ["."], result.documents), base_log):
            _add(result, mc306, issue, cfg, flt)


def _validated_batch(parts: list[LoadOutcome], result: Result, cfg: Settings, flt: RuleFilter,
                     hashes: bool, kept: list[LoadedDocument], kept_info: list[DocumentInfo]
                     ) -> int:
    """One batch of :func:`validate_paths`: its files' problems and its documents'
    findings into ``result`` (those past candidate into ``kept``, ``kept_info``, for
    MC305); returns its problems."""
    problems = 0
    for part in parts:
        result.files += part.files
        result.skipped += part.skipped
        result.same += part.same
        problems += len(part.problems)
        result.file_findings += [f for f in part.problems if flt.keep(f.rule)]
    docs = [ld for part in parts for ld in part.documents]
    found = validate_many([(ld.doc, ld.file, ld.line, ld.line_of, ld.texts) for ld in docs],
                          config=cfg, loaded=True, keep=_asked(flt))
    for ld, findings in zip(docs, found, strict=True):
        past = past_start(ld.doc)
        info = document_info(ld, findings, hashes or past)
        result.documents.append(info)
        if past:
            kept.append(ld)
            kept_info.append(info)
    return problems


def catalog_checks(docs: Iterable[LoadedDocument], result: Result, cfg: Settings,
                   flt: RuleFilter, counts: ApprovalCheck | None = None,
                   root: Path | None = None, base_log: Path | None = None,
                   log: CatalogLog | None = None) -> None:
    """The catalog checks (MC104, MC305; MC306 with ``base_log``) over ``docs`` and their
    :class:`DocumentInfo` (``result.documents``, in the same order; ``root``: the catalog
    they all belong to, ``log``: its log as the caller read it); their findings go into
    ``result``."""
    for issue in mc104(result.documents):
        _add(result, mc104, issue, cfg, flt)
    for issue in mc305(docs, result.documents, counts, root,
                       [i for i in result.documents if i.candidate], Logs(root, log)):
        _add(result, mc305, issue, cfg, flt)
    if base_log is not None:
        roots = [root] if root is not None else catalog_roots((), result.documents)
        for issue in mc306(roots, base_log):
            _add(result, mc306, issue, cfg, flt)


def _add(result: Result, rule: Check, issue: CatalogIssue, cfg: Settings,
         flt: RuleFilter) -> None:
    if not flt.keep(rule.id):
        return
    info = issue.info
    sev = cfg.severities.get(rule.id, rule.severity)
    if sev == "off":
        return
    if info is None:  # a line of a catalog file (the transition log)
        result.file_findings.append(make_finding(rule.id, sev, issue.message, issue.file,
                                                 issue.line, issue.pointer))
        return
    ld = issue.loaded
    line = ld.line_of(issue.pointer) if ld is not None else info.line
    info.findings.append(make_finding(rule.id, sev, issue.message, info.file, line,
                                      issue.pointer))
    info.findings.sort(key=Finding.sort_key)
