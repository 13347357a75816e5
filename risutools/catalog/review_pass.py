"""The review's first pass: every document of the catalog read once, checked, summarized,
and let go.

Each document is loaded, its document rules run (:func:`validate_document`), its digests
checked (MC202/MC203), and what the rest of the review reads of it is kept: its findings,
its verifications and an :class:`~risutools.catalog.catalog.Entry` that holds the values of
the document's head the passes ask for most. The whole document goes, packed
(:func:`~risutools.rowspool.pack`), into a :class:`~risutools.rowspool.Spool` (one unnamed
temporary file), from which the board's gates and the few checks that need it read it back,
and its head (:func:`~risutools.catalog.catalog.head_of`) beside it, read back when an entry
is asked more than those values; nothing else of it stays in memory. Memory then grows with
the catalog by what a document's summary holds (those values, its findings and
verifications: a few kilobytes), never by whole documents.

On all cores (the parent and a pool of forked workers, one process a core), the JSON and
YAML files are read in chunks of :data:`CHUNK` files, shared out as the processes get to
them: the workers take them from the first on, each returning its documents' summaries, the
parent from the last back, until they meet (:class:`Claims`, :class:`_Sweep`); an NDJSON
file is read in the parent, :data:`~risutools.contract.loaders.NDJSON_BATCH` lines at a
time, in its turn.  On a ``concurrent.futures`` executor (a Dask cluster's) the parent reads
the files and only the document rules travel, at most :data:`WINDOW` chunks at once.  The
order of everything kept is the files' order, whichever way the work was done.

Whoever reads files reads them a batch at a time
(:func:`~risutools.contract.loaders.file_batches`): the batch's files are read, then
parsed, then every document of it hashed, then checked, then summarized, each step over the
whole batch before the next (:func:`_survey_parts`).
"""

from __future__ import annotations

import marshal
import operator
import os
import sys
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from risutools.canonical import Kept, doc_sha256, sha256_kept
from risutools.catalog.catalog import (
    Entry,
    HeadValues,
    Label,
    entry_format,
    first_head,
    head_label,
    head_names,
    head_values,
    shared_head_values,
    spooled_head,
)
from risutools.catalog.claims import Claims
from risutools.catalog.gates import gate_config, status_errors
from risutools.catalog.interactions import FactsStore, FoundFacts, HeldFacts, facts_found_many
from risutools.catalog.promote import new_document
from risutools.catalog.reals import Reals
from risutools.contract.checks_catalog import past_start
from risutools.contract.folders import NDJSON_EXTS
from risutools.contract.loaders import (
    LoadedDocument,
    LoadOutcome,
    file_batches,
    iter_file,
    list_folder,
)
from risutools.contract.schema import fast_check
from risutools.contract.sourcestore import SourceStore
from risutools.contract.validate import (
    DocumentInfo,
    Result,
    RuleFilter,
    Verification,
    document_info,
    validate_many,
)
from risutools.contract.verify import VerifyContext, verify_refs
from risutools.findings import Finding, listed
from risutools.rowspool import Spool, pack, pack_parsed
from risutools.safeio import FolderFiles
from risutools.settings import lifecycle
from risutools.settings.catalog import FACTS_DIR, MAX_JOBS, default_jobs
from risutools.settings.config import Settings
from risutools.workers import die_with_parent, stop_pool

if TYPE_CHECKING:  # (concurrent.futures: only a run on a pool or a cluster imports it)
    from concurrent.futures import Executor, Future

ProgressFn = Callable[[int, int], None]  # (files read, files to read)
PARALLEL_MIN = 400  # fewer files are read in-process (a pool costs more)
CHUNK = 250  # files a worker reads at a time
WINDOW = 8  # chunks on an executor at once (their documents wait in the parent)
STATUS = "/provenance/review_status"  # what MC305 points at


@dataclass
class Surveyed:
    """What the review keeps of one document (see the module's text)."""

    info: DocumentInfo
    verifications: list[Verification]
    fmt: str = ""  # the entry's format (json | yaml | ndjson); "" when it is no entry
    path: str | None = None  # the real file (resolved, as text), when it is an entry
    doc_sha256: str = ""
    #: packed (then, once the whole document is in the spool, read back from it when the
    #: summary has ``values`` and ``label``: its entry then reads its head rarely; or
    #: taken from the whole document then: :func:`first_head`); None: not a JSON object
    head: bytes | Callable[[], Any] | None = None
    blob: bytes | None = None  # the whole document packed (None: kept whole)
    doc: dict[str, Any] | None = None  # the document itself, when it cannot be packed
    past: bool = False  # past candidate: MC305 reads the whole document
    status_line: int | None = None  # MC305's line, for a document past candidate
    reload: Callable[[], dict[str, Any]] | None = None  # the whole document, read back
    #: the entry's place as shown (``Entry.where``), when it is the name the loader gave
    #: the file (None: the entry works it out from its real path)
    where: str | None = None
    #: the base hash of a document on the promotion board (its approval gate names it),
    #: computed while the document is at hand (None: the entry computes it when asked)
    base: str | None = None
    #: (target, errors) of the status rules on the document its next step would write
    #: (:attr:`Entry.status_found`), for a document on the board
    gate: tuple[str, tuple[Finding, ...]] | None = None
    #: what the entry reads of its head first (:func:`~risutools.catalog.catalog.head_names`)
    names: tuple[str, str, str, str] | None = None
    #: what the passes read most of its head (:func:`~risutools.catalog.catalog.head_values`,
    #: shared); None: the entry reads its head
    values: HeadValues | None = None
    #: its facts (``facts/``) as its summary keeps them: found (:func:`facts_found`, by a
    #: worker), then held (:meth:`FactsStore.found`: packed in the run's store, by the parent)
    found: FoundFacts | None = None
    facts: HeldFacts | None = None
    #: what an interaction summary and the duplicates read of its head (:func:`head_label`);
    #: None: the head
    label: Label | None = None


@dataclass
class Pass:
    """The first pass's outcome, in the files' order."""

    surveyed: list[Surveyed] = field(default_factory=list)
    problems: list[Finding] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    read: int = 0  # files read so far
    total: int = 0  # files to read
    spool: Spool = field(default_factory=lambda: Spool())  # the whole documents
    #: the summaries' facts (:mod:`risutools.catalog.interactions`), packed
    facts: FactsStore = field(default_factory=lambda: FactsStore())

    def done(self, files: int, progress: ProgressFn | None) -> None:
        self.read += files
        if progress:
            progress(self.read, self.total)

    def add(self, part: LoadOutcome, surveyed: list[Surveyed], *, shared: bool = False
            ) -> None:
        """One part of a file read; ``shared``: its texts are already kept once
        (:func:`_share`; :func:`_unflat` does it)."""
        self.add_many([(part, surveyed)], shared=shared)

    def add_many(self, parts: list[tuple[LoadOutcome, list[Surveyed]]], *,
                 shared: bool = False) -> None:
        """Parts of files read, in order (:meth:`add` of each), each step over all their
        documents before the next."""
        added = []
        for part, surveyed in parts:
            self.problems.extend(part.problems)
            self.files.extend(part.files)
            self.skipped.extend(part.skipped)
            added += surveyed
        if not shared:
            for s in added:
                _share(s)
        put = self.spool.put
        for s in added:  # each whole document into the spool
            if s.blob is not None:
                s.reload, s.blob = put(s.blob), None
                # and its head, when its entry is given what the passes read of the head (an
                # entry without them reads its head for them: held, as it is read often)
                s.head = spooled_head(s.head, s.reload, put,
                                      s.values is not None and s.label is not None)
        found = self.facts.found
        for s in added:
            if s.found is not None:  # the facts into the run's store (found here: interned)
                s.facts, s.found = found(s.found, interned=not shared), None
        self.surveyed += added


def _validated(docs: list[LoadedDocument], cfg: Settings) -> list[DocumentInfo]:
    """Every document rule, and the canonical hash, of each document."""
    found = validate_many([(ld.doc, ld.file, ld.line, ld.line_of, ld.texts) for ld in docs],
                          config=cfg, loaded=True)
    return [document_info(ld, f) for ld, f in zip(docs, found, strict=True)]


def _summaries(docs: list[LoadedDocument], infos: list[DocumentInfo], vctx: VerifyContext,
               resolved: Reals, wants: Wants | None, kept: list[Kept | None] | None = None
               ) -> list[Surveyed]:
    """What is kept of each document (``infos``: their rules' findings), each step over all
    of them before the next (:func:`_verified`, :func:`_headed`, :func:`_placed`,
    :func:`_past`), the same steps in the same order as one document at a time.
    ``wants``: where a document whose facts are to be found is noted (:func:`_find_facts`
    finds them); ``kept``: the hash of the beginning of each one's canonical bytes, which
    its base hash shares (:func:`_hashed`; none: hashed whole)."""
    out = [_verified(ld, info, vctx) for ld, info in zip(docs, infos, strict=True)]
    marks = kept if kept is not None else [None] * len(docs)
    objects = [(ld, s, k) for ld, s, k in zip(docs, out, marks, strict=True)
               if isinstance(ld.doc, dict)]
    for ld, s, _k in objects:
        _headed(ld, s)
    for ld, s, k in objects:
        _placed(ld, s, vctx, resolved, wants, k)
    for ld, s, _k in objects:
        _past(ld, s)
    return out


def _verified(ld: LoadedDocument, info: DocumentInfo, vctx: VerifyContext) -> Surveyed:
    """The document's digests checked (MC202/MC203; MC001 of a notes file not read, as
    ``verify``: into ``info``; verifications into its summary); nothing of a non-object."""
    found, mark = vctx.result.verifications, len(vctx.result.verifications)
    if not isinstance(ld.doc, dict):
        return Surveyed(info, [])
    tmp = DocumentInfo(info.file, info.line, info.component_id, info.component_version,
                       info.sha256)
    verify_refs(vctx, tmp, ld)
    tmp.findings += vctx.result.file_findings
    vctx.result.file_findings.clear()
    if tmp.findings:  # (MC202/MC203: MAX_LISTED of a rule, as verify lists them)
        info.findings = sorted(info.findings + listed(tmp.findings, ld.file, ld.line),
                               key=Finding.sort_key)
    out = Surveyed(info, found[mark:])
    del found[mark:]
    return out


def _headed(ld: LoadedDocument, out: Surveyed) -> None:
    """What the summary holds of the document's head, and the whole document packed."""
    doc = ld.doc
    exact = ld.sha256 is not None  # (the loaders' fast path: orjson parsed it)
    try:
        out.names = head_names(doc)
        out.values = shared_head_values(head_values(doc))
        out.label = head_label(doc)
        raw = ld.parsed_bytes  # (the file's bytes orjson parsed: packed as they are)
        out.head = first_head(doc, raw, out.values is not None and out.label is not None,
                              exact)
        out.blob = pack_parsed(raw) if raw is not None else pack(doc, parsed_by_orjson=exact)
    except ValueError:  # (a value no parser of ours makes): the document stays whole
        out.head, out.blob, out.doc = b"", None, doc


def _placed(ld: LoadedDocument, out: Surveyed, vctx: VerifyContext, resolved: Reals,
            wants: Wants | None, kept: Kept | None) -> None:
    """The entry of a document read from a file: its format, hash and real file, its facts
    wanted, its base hash and the contract gate of its board step (on the board)."""
    doc, info, file = ld.doc, out.info, ld.file_path
    if file is None:
        return
    h = info.sha256
    try:
        h = h if h is not None else doc_sha256(doc)
    except (ValueError, TypeError, UnicodeEncodeError, RecursionError):
        h = None
    if h is None:
        return
    out.fmt, out.doc_sha256 = entry_format(file), h
    out.path, _alike = resolved.resolve(file)
    if wants is not None:
        wants.append((out, _facts_key(doc, out.names)))
    # (shown as read, as its findings are: a link inside the catalog is not its target)
    line = info.line if out.fmt == "ndjson" else None
    out.where = f"{info.file}:{line}" if line else info.file
    status = _board_status(doc)
    if status is not None:
        out.base = lifecycle.plain_base_sha256(doc, kept) if ld.sha256 is not None \
            else lifecycle.base_sha256(doc)
        out.gate = _status_found(doc, status, vctx.cfg)


def _past(ld: LoadedDocument, out: Surveyed) -> None:
    """A document past candidate keeps the line of its status (MC305 reads it again); any
    other lets go of its file's place (which MC305 alone reads)."""
    if past_start(ld.doc):
        out.past, out.status_line = True, ld.line_of(STATUS)
    else:
        out.info.path = None


#: the documents whose facts are to be found, each with what its facts are found by
#: (:func:`_facts_key`)
Wants = list[tuple["Surveyed", tuple[str, Any]]]


def _facts_key(doc: dict[str, Any], names: tuple[str, str, str, str] | None
               ) -> tuple[str, Any]:
    """What the facts of ``doc``'s entry are found by (:func:`facts_found`): what the entry
    reads of its head, its component_id (as :func:`head_names` reads it), and its source
    references."""
    prov = doc.get("provenance")
    refs = prov.get("source_refs") if isinstance(prov, dict) else None
    return (names if names is not None else head_names(doc))[0], refs


def _find_facts(wants: Wants, files: FolderFiles) -> None:
    """The facts of the documents noted in ``wants``, found together
    (:func:`facts_found_many`: a chunk's texts parsed at once), each into its summary."""
    found = facts_found_many(files.root, [key for _s, key in wants], files)
    for (s, _key), f in zip(wants, found, strict=True):
        s.found = f
    wants.clear()


def _board_status(doc: dict[str, Any]) -> str | None:
    """The review status of ``doc`` when it puts it on the review's promotion board (read
    as :attr:`~risutools.catalog.catalog.Entry.review_status` reads it), else None."""
    prov = doc.get("provenance")
    status = prov.get("review_status") if isinstance(prov, dict) else None
    return status if isinstance(status, str) and status in lifecycle.BOARD else None


def _status_found(doc: dict[str, Any], status: str, cfg: Settings
                  ) -> tuple[str, tuple[Finding, ...]]:
    """What the contract gate of the board's step from ``status`` reads of the new
    document: the status rules' errors on it
    (:func:`~risutools.catalog.gates.status_errors`)."""
    step = lifecycle.next_step(status)
    assert step is not None  # every state on the board has one
    return step.to, tuple(status_errors(new_document(doc, step.to), gate_config(cfg, step.to)))


def _share(s: Surveyed) -> None:
    """The texts many documents repeat (a rule's message, a digest's pointer) kept once:
    what the review holds of each document is then mostly its own."""
    info = s.info
    info.findings = _interned(info.findings)
    if s.gate is not None and s.gate[1]:
        s.gate = (s.gate[0], tuple(_interned(s.gate[1])))
    for v in s.verifications:
        v.pointer = sys.intern(v.pointer)


def _interned(findings: Iterable[Finding]) -> list[Finding]:
    return [f if sys.intern(f.message) is f.message else
            Finding(f.rule, f.severity, sys.intern(f.message), f.file, f.line, f.pointer,
                    f.evidence, f.code) for f in findings]


def _survey(docs: list[LoadedDocument], cfg: Settings, vctx: VerifyContext,
            resolved: Reals, wants: Wants | None) -> list[Surveyed]:
    kept = [_hashed(ld) for ld in docs]
    return _summaries(docs, _validated(docs, cfg), vctx, resolved, wants, kept)


def _hashed(ld: LoadedDocument) -> Kept | None:
    """The canonical hash of a document whose canonical bytes the loader left unhashed
    (``canon``), into ``ld.sha256``; the hash of their part its base hash likely shares
    (:func:`~risutools.settings.lifecycle.runtime_mark`) kept for :func:`_placed`."""
    canon, ld.canon = ld.canon, None
    if canon is None:
        return None
    ld.sha256, kept = sha256_kept(canon, lifecycle.runtime_mark(canon))
    return kept


class _Waiting:
    """Parts read in the parent, in order, waiting for their documents' facts: found
    together (:func:`_find_facts`) once :data:`CHUNK` documents wait or when asked, then
    added to the pass in the files' order."""

    def __init__(self, out: Pass, files: FolderFiles) -> None:
        self.out, self.files = out, files
        self.parts: list[tuple[LoadOutcome, list[Surveyed]]] = []
        self.wants: Wants = []
        self.count = 0  # documents waiting

    def add(self, part: LoadOutcome, surveyed: list[Surveyed]) -> None:
        self.parts.append((part, surveyed))
        self.count += len(surveyed)
        if self.count >= CHUNK:
            self.settle()

    def settle(self) -> None:
        if self.wants:
            _find_facts(self.wants, self.files)
        self.out.add_many(self.parts)
        self.parts.clear()
        self.count = 0


def _verify_context(cfg: Settings, sources: Path | None) -> VerifyContext:
    return VerifyContext(SourceStore(sources), cfg, RuleFilter(), False, Result("verify"))


# --------------------------------------------------------------------------- the workers

# What a pool of forked workers reads: set in the parent just before the fork (each worker
# sees it in its copy of the parent's memory; only file names travel to a worker, only
# summaries come back).
_SHARED: tuple[Settings, Path | None, FolderFiles] | None = None
_WORKER: tuple[VerifyContext, Reals] | None = None


Flat = tuple[Any, ...]  # a Surveyed or a LoadOutcome as plain values (:func:`_flat`)
#: a finding as plain values: its fields in order (the message third: :func:`_findings`)
_FINDING = operator.attrgetter(*(f.name for f in fields(Finding)))
_INFO = operator.attrgetter("file", "line", "component_id", "component_version", "sha256",
                            "candidate")


def _flat(part: LoadOutcome, surveyed: list[Surveyed]) -> Flat:
    """What a worker sends back of one part of a file, as plain values (tuples, strings,
    bytes): pickled in C, where dataclasses take a call per object each way."""
    docs = [(_INFO(s.info), _path_text(s.info.path), [_FINDING(f) for f in s.info.findings],
             [v.plain() for v in s.verifications], s.fmt, _path_text(s.path),
             s.doc_sha256, s.head, s.blob, s.doc, s.past, s.status_line, s.where, s.base,
             None if s.gate is None else (s.gate[0], [_FINDING(f) for f in s.gate[1]]),
             s.names, s.values, s.found, s.label)
            for s in surveyed]
    return ([_FINDING(f) for f in part.problems], part.files, part.skipped, docs)


def _findings(rows: Iterable[tuple[Any, ...]]) -> list[Finding]:
    """Findings sent back as plain values (:data:`_FINDING`), each message kept once as
    :func:`_share` keeps it (which then has nothing to make again)."""
    intern = sys.intern
    return [Finding(f[0], f[1], intern(f[2]), *f[3:]) for f in rows]


def _verifications(rows: Iterable[tuple[Any, ...]]) -> list[Verification]:
    """Verifications sent back as plain values (:meth:`Verification.plain`), each pointer
    (the fourth) kept once as :func:`_share` keeps it."""
    return [Verification.of_plain(v) for v in rows]


def _unflat(flat: Flat) -> tuple[LoadOutcome, list[Surveyed]]:
    """What :func:`_flat` sent back, made again, its texts kept once (:func:`_share`)."""
    problems, files, skipped, docs = flat
    part = LoadOutcome([], [Finding(*f) for f in problems], files, skipped)
    out = []
    for (i, ipath, found, vs, fmt, path, sha, head, blob, doc, past, line, where, base,
         gate, names, values, facts, label) in docs:
        info = DocumentInfo(i[0], i[1], i[2], i[3], i[4], _findings(found),
                            Path(ipath) if ipath is not None else None, candidate=i[5])
        out.append(Surveyed(info, _verifications(vs), fmt, path, sha, head, blob, doc,
                            past, line, where=where, base=base,
                            gate=None if gate is None else
                            (gate[0], tuple(_findings(gate[1]))), names=names,
                            values=shared_head_values(values), found=facts, label=label))
    return part, out


def _path_text(p: str | Path | None) -> str | None:
    return os.fspath(p) if p is not None else None


def _survey_files(paths: list[Path]) -> bytes | list[Flat]:
    """The worker side: the files of one chunk, each read, checked and summarized
    (:func:`_sent`)."""
    global _WORKER
    assert _SHARED is not None, "workers are forked after _SHARED is set"
    cfg, sources, facts = _SHARED
    if _WORKER is None:
        _WORKER = (_verify_context(cfg, sources), Reals())
    vctx, resolved = _WORKER
    parts: list[tuple[LoadOutcome, list[Surveyed]]] = []
    wants: Wants = []
    for batch, _ended in file_batches(paths, from_folder=True, canon=True):
        _survey_parts(batch, cfg, vctx, resolved, wants,
                      lambda part, surveyed: parts.append((part, surveyed)))
    _find_facts(wants, facts)  # (the chunk's facts found together)
    out = []
    for part, surveyed in parts:
        for s in surveyed:  # a text repeated in the chunk travels once (pickle's memo)
            _share(s)
        out.append(_flat(part, surveyed))
    return _sent(out)


def _sent(flats: list[Flat]) -> bytes | list[Flat]:
    """What a worker sends back of a chunk: its parts' plain values as ``marshal`` data
    (written and read several times faster than pickled: :func:`_received` reads it back),
    or as they are when one is not of a type ``marshal`` takes as it is (a subclass)."""
    try:
        return marshal.dumps(flats)
    except ValueError:
        return flats


def _received(sent: bytes | list[Flat]) -> list[Flat]:
    """The parts a worker sent back (:func:`_sent`)."""
    if isinstance(sent, bytes):
        flats: list[Flat] = marshal.loads(sent)
        return flats
    return sent


def _units(paths: list[Path]) -> list[list[Path] | Path]:
    """The files in order: runs of JSON/YAML files in chunks for the workers, each NDJSON
    file on its own (read by the parent)."""
    units: list[list[Path] | Path] = []
    run: list[Path] = []
    for p in paths:
        if p.name.lower().endswith(NDJSON_EXTS):
            if run:
                units.append(run)
                run = []
            units.append(p)
            continue
        run.append(p)
        if len(run) >= CHUNK:
            units.append(run)
            run = []
    if run:
        units.append(run)
    return units


def first_pass(root: Path, cfg: Settings, sources: Path | None, jobs: int | None,
               progress: ProgressFn | None, executor: Executor | None) -> Pass:
    """Every document under ``root`` read once, in the files' order (see the module's
    text); ``sources``: the source store the digests are checked against."""
    listing, paths = list_folder(root, cfg.exclude)
    out = Pass(total=len(paths))
    out.add(listing, [])
    workers = min(jobs if jobs is not None else default_jobs(), MAX_JOBS)
    facts = FolderFiles(root, FACTS_DIR)  # each entry's facts/ file, read with its document
    if executor is not None:
        _on_executor(executor, paths, cfg, sources, facts, out, progress)
    elif (workers := min(workers, len(paths) // CHUNK)) > 1 and len(paths) >= PARALLEL_MIN \
            and _can_fork():
        _on_pool(workers, paths, cfg, sources, facts, out, progress)
    else:
        _in_process(paths, cfg, sources, facts, out, progress)
    return out


def _in_process(paths: list[Path], cfg: Settings, sources: Path | None, facts: FolderFiles,
                out: Pass, progress: ProgressFn | None) -> None:
    """Every file read in this process, in order."""
    vctx, resolved = _verify_context(cfg, sources), Reals()
    waiting = _Waiting(out, facts)
    _in_parent(paths, cfg, vctx, resolved, waiting, progress)
    waiting.settle()


def _in_parent(paths: list[Path], cfg: Settings, vctx: VerifyContext, resolved: Reals,
               waiting: _Waiting, progress: ProgressFn | None) -> None:
    """Files read in the parent, a batch at a time, their parts left ``waiting`` for their
    facts."""
    for parts, ended in file_batches(paths, from_folder=True, canon=True):
        _survey_parts(parts, cfg, vctx, resolved, waiting.wants, waiting.add)
        if ended:
            waiting.out.done(ended, progress)


def _survey_parts(parts: list[LoadOutcome], cfg: Settings, vctx: VerifyContext,
                  resolved: Reals, wants: Wants | None,
                  put: Callable[[LoadOutcome, list[Surveyed]], None]) -> None:
    """The documents of ``parts`` surveyed together (:func:`_survey`: each step over all of
    them before the next), then each part ``put`` with its own, in order."""
    counts = [len(part.documents) for part in parts]
    docs = [ld for part in parts for ld in part.documents]
    for part in parts:
        part.documents = []
    surveyed = _survey(docs, cfg, vctx, resolved, wants) if docs else []
    at = 0
    for part, n in zip(parts, counts, strict=True):
        put(part, surveyed[at:at + n])
        at += n


def _on_pool(workers: int, paths: list[Path], cfg: Settings, sources: Path | None,
             facts: FolderFiles, out: Pass, progress: ProgressFn | None) -> None:
    """The chunks shared out as the processes get to them (:class:`Claims`): the workers
    take them from the first on, the parent from the last back (:class:`_Sweep`), until they
    meet; the NDJSON files are the parent's, read in their turn."""
    global _SHARED, _CLAIMS
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    units = _units(paths)
    try:
        claims = Claims(len(units))
    except OSError:  # (no record lock where the temporary folder is: one process reads)
        _in_process(paths, cfg, sources, facts, out, progress)
        return
    sweep = _Sweep(units, out, facts, (cfg, _verify_context(cfg, sources), Reals()), progress)
    _SHARED, _CLAIMS = (cfg, sources, facts), claims
    fast_check()  # the schema's validator compiled once, before the fork: each worker has it
    try:
        # forked: a worker starts with the shared state above, and ends with this process
        pool = ProcessPoolExecutor(workers - 1, mp_context=multiprocessing.get_context("fork"),
                                   initializer=die_with_parent, initargs=(os.getpid(),))
        try:
            _share_out(pool, sweep, claims)
        except BaseException:  # Ctrl-C (or an exit): stopped now, whatever the workers do
            stop_pool(pool)
            raise
        pool.shutdown()
    finally:
        _SHARED = _CLAIMS = None
        claims.close()


def _share_out(pool: Executor, sweep: _Sweep, claims: Claims) -> None:
    """Every chunk to the pool, the parent taking them from the last back until it meets
    the workers (:class:`Claims`), and every result added in its turn."""
    units = sweep.units
    sweep.futures = {k: pool.submit(_survey_unit, k, u) for k, u in enumerate(units)
                     if not isinstance(u, Path)}
    chunks = list(sweep.futures)  # (taken from the end: the last first)
    while True:
        sweep.drain(block=False)
        k = claims.take_last(chunks)
        if k is None:
            break
        sweep.futures.pop(k).cancel()
        sweep.read_ahead(k)
    sweep.drain(block=True)


#: the chunks' claims, set in the parent just before the fork (as :data:`_SHARED`)
_CLAIMS: Claims | None = None


def _survey_unit(k: int, paths: list[Path]) -> bytes | list[Flat] | None:
    """A worker's task: chunk ``k`` read (:func:`_survey_files`) if no one took it first
    (None: the parent did)."""
    assert _CLAIMS is not None, "workers are forked after _CLAIMS is set"
    return _survey_files(paths) if _CLAIMS.take(k) else None


class _Sweep:
    """The parent's side of a pool: the chunks it reads itself, from the last back (each
    kept aside, its documents already in the run's spool and store, until its turn), and
    everything added to the pass in the files' order: the workers' chunks as they come
    back, the NDJSON files read in their turn, the parent's chunks."""

    def __init__(self, units: list[list[Path] | Path], out: Pass, facts: FolderFiles,
                 reader: tuple[Settings, VerifyContext, Reals], progress: ProgressFn | None
                 ) -> None:
        self.units, self.out, self.facts, self.reader = units, out, facts, reader
        self.progress = progress
        self.futures: dict[int, Future[bytes | list[Flat] | None]] = {}
        self.ahead: dict[int, Pass] = {}  # the chunks the parent read, waiting for their turn
        self.next = 0  # the first unit not yet added to the pass

    def _read(self, paths: list[Path], into: Pass, progress: ProgressFn | None) -> None:
        cfg, vctx, resolved = self.reader
        waiting = _Waiting(into, self.facts)
        _in_parent(paths, cfg, vctx, resolved, waiting, progress)
        waiting.settle()

    def read_ahead(self, k: int) -> None:
        """Chunk ``k``, read by the parent, kept until its turn."""
        paths = self.units[k]
        assert not isinstance(paths, Path)
        held = self.ahead[k] = Pass(spool=self.out.spool, facts=self.out.facts)
        self._read(paths, held, None)
        self.out.done(len(paths), self.progress)

    def drain(self, *, block: bool) -> None:
        """Every unit whose turn has come added to the pass, in order; ``block``: waiting
        for the workers' (else up to the first not back yet)."""
        out = self.out
        while self.next < len(self.units):
            k = self.next
            unit = self.units[k]
            if isinstance(unit, Path):  # an NDJSON file: read here, in its turn
                self._read([unit], out, self.progress)
            elif k in self.ahead:
                held = self.ahead.pop(k)
                out.problems += held.problems
                out.files += held.files
                out.skipped += held.skipped
                out.surveyed += held.surveyed
            else:
                fut = self.futures[k]
                if not block and not fut.done():
                    return
                sent = self.futures.pop(k).result()
                if sent is None:
                    raise RuntimeError(f"chunk {k} was read by no one")
                out.add_many([_unflat(flat) for flat in _received(sent)], shared=True)
                out.done(len(unit), self.progress)
            self.next += 1


def _on_executor(executor: Executor, paths: list[Path], cfg: Settings, sources: Path | None,
                 facts: FolderFiles, out: Pass, progress: ProgressFn | None) -> None:
    """The document rules on any ``concurrent.futures`` executor: the parent reads the files,
    each chunk of documents travels to a worker and its findings and hashes come back, in
    order; the digests are checked and the summaries made here."""
    vctx, resolved = _verify_context(cfg, sources), Reals()
    Parts = list[tuple[LoadOutcome, list[LoadedDocument]]]
    waiting: deque[tuple[Parts, int, Future[list[DocumentInfo]]]] = deque()

    def settle() -> None:
        parts, ended, fut = waiting.popleft()
        infos = iter(fut.result())
        wants: Wants = []
        summaries = [(part, _summaries(docs, [next(infos) for _ in docs], vctx, resolved,
                                       wants)) for part, docs in parts]
        _find_facts(wants, facts)
        out.add_many(summaries)
        out.done(ended, progress)

    for chunk, ended in _chunks_of_documents(paths):
        docs = [ld for _part, lds in chunk for ld in lds]
        waiting.append((chunk, ended, executor.submit(_validated, docs, cfg)))
        if len(waiting) >= WINDOW:
            settle()
    while waiting:
        settle()


def _chunks_of_documents(paths: list[Path]
                         ) -> Iterator[tuple[list[tuple[LoadOutcome, list[LoadedDocument]]],
                                             int]]:
    """The files' parts read in order, in chunks of about :data:`CHUNK` documents, each
    with the number of files it ends."""
    chunk: list[tuple[LoadOutcome, list[LoadedDocument]]] = []
    count = ended = 0
    for p in paths:
        for part in iter_file(p, from_folder=True):
            docs, part.documents = part.documents, []
            chunk.append((part, docs))
            count += len(docs)
            if count >= CHUNK:
                yield chunk, ended
                chunk, count, ended = [], 0, 0
        ended += 1
    if chunk or ended:
        yield chunk, ended


def _can_fork() -> bool:
    import multiprocessing

    return "fork" in multiprocessing.get_all_start_methods()


# --------------------------------------------------------------------------- the entries


def entries_of(surveyed: list[Surveyed]) -> list[Entry]:
    """The catalog's entries from the first pass: each with its head, its whole document
    read back from the spool on demand."""
    out = []
    for s in surveyed:
        if s.head is None or not s.fmt or s.path is None:
            continue
        packed = s.reload is not None  # else kept whole (it could not be packed)
        cid = version = review = runtime = None
        if s.names is not None:  # (the words many entries share, kept once: as Entry's own)
            cid, version, review, runtime = s.names[0], *map(sys.intern, s.names[1:])
        out.append(Entry(s.path, s.info.line if s.fmt == "ndjson" else None, s.fmt,
                         None if packed else s.doc, s.doc_sha256,
                         head=s.head if packed else None, reload=s.reload,
                         key=(s.info.file, s.info.line), _where=s.where, _base=s.base,
                         status_found=s.gate, _cid=cid, _version=version, _review=review,
                         _runtime=runtime,
                         _hv=s.values if packed else None,  # (kept as _headed shares it)
                         found_facts=s.facts, label=s.label if packed else None))
    return out


def probes(surveyed: list[Surveyed]) -> Iterator[LoadedDocument]:
    """What MC305 reads of each document, in order, one at a time: the whole document of
    one past candidate (read back), with the line of its status; nothing of any other
    (MC305 passes a document its status does not put past candidate, which the first pass
    found: ``past``)."""
    for s in surveyed:
        i = s.info
        doc: Any = None
        if s.past:
            doc = s.reload() if s.reload is not None else s.doc
        lines = {STATUS: s.status_line} if s.status_line is not None else None
        yield LoadedDocument(i.file, i.line, doc, "json", i.path, _lines=lines)
