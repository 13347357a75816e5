"""``verify``: digest verification (MC200, MC201, MC202, MC203) against files at hand.

Each ``source_refs`` entry is one of:
- a Risu source (``risu:<post id>``, ``module.risum`` / ``X.charx!module.risum``):
  looked up in the source store (``--sources`` or ``sources:`` in the config);
- curator notes (``source_version: notes.yaml``): ``notes/<component_id>.yaml`` in
  the catalog, else the store;
- a replay report (``replay:<fixture>``, ``replay-report-v1``): the catalog's
  ``replays/`` folder, else the store.
A file is found by name (see ``SourceStore.by_name``) or by content (every
store file hashed once, streamed, cached for the run).  The outcome of each
reference is ``verified``, ``mismatch`` (error) or ``not_at_hand``: a warning
("not verified: source not at hand"), an error with ``require_sources``.
Nothing is ever executed; ``.charx`` members are hashed from the ZIP stream.

Only regular files are read (:mod:`risutools.safeio`): a store entry that is a
device, FIFO or socket (whatever a symbolic link says) is not a candidate, links
to folders are never entered, and every hash stops past ``MAX_SOURCE_BYTES``
(a ZIP member too; members stored with other methods than stored/deflate, which
RisuAI never writes, are not inflated).  A ``sources:`` from the configuration
must lie inside the repository unless ``allow_config_sources_outside``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from risutools.canonical import hex_of
from risutools.checks.registry import Check, RuleFilter, check
from risutools.contract.checks_load import mc001
from risutools.contract.loaders import LoadedDocument
from risutools.contract.notesfind import NotesIndex, document_keys, find_notes, notes_index
from risutools.contract.reportcheck import read_report
from risutools.contract.result import (
    DocumentInfo,
    ReplayEvidence,
    Result,
    Verification,
    verdicts_of,
)
from risutools.contract.rules import digest_problem, make_finding, mc200, mc201
from risutools.contract.schema import mc100, not_object_message
from risutools.contract.shown import display_path
from risutools.contract.sourcestore import MAX_SOURCE_BYTES, SourceStore, stays_in
from risutools.contract.transitions import find_catalog_root
from risutools.contract.validate import doc_hash, load_all
from risutools.errors import Code, FormatError, UsageError
from risutools.findings import listed
from risutools.formats.charx import member_sha256
from risutools.pathnames import plain_id, search_start
from risutools.safeio import (
    FileRefused,
    check_inside,
    open_regular,
    require_folder,
)
from risutools.settings.catalog import NOTES_SOURCE_VERSION, REPLAY_REPORT, REPLAYS_DIR
from risutools.settings.config import Settings
from risutools.settings.simulations import select_simulation

CONTAINER_SUFFIXES = (".charx", ".zip", ".jpeg", ".jpg", ".png")


def _member_sha256(path: Path, member: str) -> str | None:
    """SHA-256 of a ZIP member through the container reader's own bounded ZIP walk
    (validated and bounded directory, stored/deflate only, a running inflate cap of
    ``MAX_SOURCE_BYTES`` and the ratio bound); None if the file is not a regular file, not
    a ZIP, lacks the member, or the member is past a bound."""
    try:
        with open_regular(path, limit=MAX_SOURCE_BYTES) as raw:
            return member_sha256(raw, member, MAX_SOURCE_BYTES)
    except (FileRefused, FormatError, OSError):
        return None


def _fingerprints(store: SourceStore, path: Path, member: str | None) -> list[str]:
    """Digests a candidate file may match: its own bytes, and the member inside it."""
    out = []
    own = store.sha256(path)
    if own is not None:
        out.append(own)
    if member and path.suffix.lower() in CONTAINER_SUFFIXES:
        m = _member_sha256(path, member)
        if m is not None:
            out.append(m)
    return out


@dataclass
class VerifyContext:
    """What the verify checks share in one run: the source store (hashed once), the
    configuration and the filter, whether a source not at hand is an error, the result
    they record into, and each folder's catalog root (looked up once)."""

    store: SourceStore
    cfg: Settings
    flt: RuleFilter
    require: bool
    result: Result
    catalogs: dict[Path, Path | None] = field(default_factory=dict)
    #: each catalog's ``notes/`` folder's index
    notes: dict[Path, NotesIndex] = field(default_factory=dict)
    #: each catalog's ``replays/`` folder as a store (None: not a folder)
    replays: dict[Path, SourceStore | None] = field(default_factory=dict)


class SourceRef(NamedTuple):
    """One ``source_refs`` entry with a well-formed digest: the pointer of its digest, its
    source_id, source_version and sha256."""

    pointer: str
    source_id: str
    source_version: str
    sha256: str

    @property
    def source(self) -> str:
        """How the reference is named in a verification (``risu:174678332 module.risum``)."""
        return f"{self.source_id} {self.source_version}"

    @property
    def is_replay(self) -> bool:
        """A replay report (MC203), not a source file (MC202)."""
        return self.source_id.startswith("replay:") or self.source_version == REPLAY_REPORT


def verify_paths(
    paths: Sequence[str | os.PathLike[str]],
    sources_dir: str | os.PathLike[str] | None = None,
    *,
    config: Settings | None = None,
    require_sources: bool = False,
    content_scan: bool = True,
    rule_filter: RuleFilter | None = None,
    skip_non_documents: bool = False,
    allow_config_sources_outside: bool = False,
) -> Result:
    """Verify the digests of every document under ``paths``.

    ``sources_dir`` (the user's own word) may be anywhere; the configuration's
    ``sources:`` must lie inside its repository unless ``allow_config_sources_outside``."""
    cfg = config or Settings()
    flt = rule_filter or RuleFilter()
    src = Path(sources_dir) if sources_dir is not None else \
        cfg.source_store(allow_outside=allow_config_sources_outside)
    if src is not None:
        require_folder(src, "the source store")
    if src is None and require_sources:
        raise UsageError("--require-sources", "needs a source store (--sources DIR or "
                         "`sources:` in the configuration)")
    loaded = load_all(paths, cfg, skip_non_documents)
    result = Result("verify", files=loaded.files, skipped=loaded.skipped,
                    same=loaded.same)
    result.file_findings = [f for f in loaded.problems if flt.keep(f.rule)]
    ctx = VerifyContext(SourceStore(src, content_scan), cfg, flt, require_sources, result)
    for ld in loaded.documents:
        result.documents.append(_verify_document(ctx, ld))
    return result


def _verify_document(ctx: VerifyContext, ld: LoadedDocument) -> DocumentInfo:
    """MC200/MC201 (errors here: a digest is what verify checks) and MC202/MC203 for one
    document; MC100 when it is not a JSON object."""
    info = DocumentInfo(ld.file, ld.line, None, None, doc_hash(ld.doc))
    doc = ld.doc
    if isinstance(doc, dict):
        cid, ver = doc.get("component_id"), doc.get("component_version")
        info.component_id = cid if isinstance(cid, str) else None
        info.component_version = ver if isinstance(ver, str) else None
        for rule in (mc200, mc201):
            for ptr, msg in rule(doc, ctx.cfg):
                _emit(ctx, info, ld, rule.id, "error", ptr, msg)
        verify_refs(ctx, info, ld)
    else:
        _emit(ctx, info, ld, mc100.id, "error", "", not_object_message(doc))
    info.findings = listed(info.findings, ld.file, ld.line)  # (MAX_LISTED of a rule)
    info.findings.sort(key=lambda f: f.sort_key())
    return info


def _emit(ctx: VerifyContext, info: DocumentInfo, ld: LoadedDocument, rule: str,
          severity: str, pointer: str, message: str) -> None:
    if not ctx.flt.keep(rule):
        return
    configured = ctx.cfg.severities.get(rule)
    if configured == "off":
        return
    if severity == "error" and configured == "warning":
        severity = "warning"
    info.findings.append(make_finding(rule, severity, message, ld.file,
                                      ld.line_of(pointer), pointer))


def _catalog_root(ctx: VerifyContext, ld: LoadedDocument) -> Path | None:
    file = ld.file_path
    start = file.parent if file is not None else Path.cwd()
    if start not in ctx.catalogs:
        root = find_catalog_root(start)
        if root is None:
            # a catalog without approvals yet: the document's own folder, or a parent
            # that has replays/ or notes/
            d = search_start(start)
            while True:
                if (d / REPLAYS_DIR).is_dir() or (d / "notes").is_dir():
                    root = d
                    break
                if (d / ".git").exists() or d.parent == d:
                    break
                d = d.parent
        ctx.catalogs[start] = root
    return ctx.catalogs[start]


def source_refs(doc: dict[str, Any]) -> list[SourceRef]:
    """The ``source_refs`` entries of ``doc`` that can be verified: source_id,
    source_version and sha256 strings, the digest well-formed (MC200 reports the others:
    MC202 and MC203 need it, so a filter that keeps them keeps MC200)."""
    prov = doc.get("provenance")
    refs = prov.get("source_refs") if isinstance(prov, dict) else None
    out: list[SourceRef] = []
    for i, ref in enumerate(refs if isinstance(refs, list) else ()):
        if not isinstance(ref, dict):
            continue
        sid, sver, sha = ref.get("source_id"), ref.get("source_version"), ref.get("sha256")
        if isinstance(sid, str) and isinstance(sver, str) and isinstance(sha, str) \
                and digest_problem(sha) is None:
            out.append(SourceRef(f"/provenance/source_refs/{i}/sha256", sid, sver, sha))
    return out


def verify_refs(ctx: VerifyContext, info: DocumentInfo, ld: LoadedDocument) -> None:
    """MC202 or MC203 for each source reference of one loaded document (a JSON object):
    the outcome of each in ``ctx.result.verifications``, the findings in ``info``."""
    first = len(ctx.result.verifications)
    refs = source_refs(ld.doc)
    for ref in refs:
        if ref.is_replay:
            mc203(ctx, info, ld, ref)
        else:
            mc202(ctx, info, ld, ref)
    _status_follows(ctx, info, ld, ctx.result.verifications[first:],
                    sum(1 for ref in refs if ref.is_replay))


def _status_follows(ctx: VerifyContext, info: DocumentInfo, ld: LoadedDocument,
                    checked: list[Verification], replays: int) -> None:
    """MC203 on ``projection.replay_status``: ``passed`` while a verified report of the
    document says otherwise, or ``failed`` while every report is verified and passed, is
    a document that contradicts its own reports."""
    proj = ld.doc.get("projection")
    status = proj.get("replay_status") if isinstance(proj, dict) else None
    reps = [v for v in checked if v.status == "verified" and v.verdict is not None]
    if not reps:
        return
    other = next((v for v in reps if v.verdict != "passed"), None)
    if status == "passed" and other is not None:
        said = f"the report {other.detail} says {other.verdict!r}"
    elif status == "failed" and other is None and len(reps) == replays:
        said = "every replay report it names says 'passed'"
    else:
        return
    _emit(ctx, info, ld, mc203.id, mc203.severity, "/projection/replay_status",
          f"replay_status is {status!r} but {said}; re-run the replay with --update so the "
          "document records what its reports say")


def _record(ctx: VerifyContext, info: DocumentInfo, ld: LoadedDocument, rule: Check,
            ref: SourceRef, status: str, detail: str, *, emit: bool = True,
            verdict: str | None = None, evidence: ReplayEvidence | None = None) -> None:
    ctx.result.verifications.append(
        Verification(ld.file, ld.line, info.component_id, ref.pointer, ref.source, status,
                     detail, verdict, evidence))
    if not emit:
        return
    if status == "mismatch":
        _emit(ctx, info, ld, rule.id, rule.severity, ref.pointer, detail)
    elif status == "not_at_hand":
        sev = "error" if ctx.require else "warning"
        _emit(ctx, info, ld, rule.id, sev, ref.pointer, f"not verified: source not at hand "
              f"({detail}); put the file in the source store (--sources) to verify it")


def _rel(p: Path) -> str:
    return display_path(p)


# --------------------------------------------------------------------------- MC202


@check("MC202", "error", "verify", "source-digest", needs=(mc200.id,))
def mc202(ctx: VerifyContext, info: DocumentInfo, ld: LoadedDocument, ref: SourceRef) -> None:
    """When the source file is at hand (source store), source_refs[].sha256 is the SHA-256
    of its bytes (`risutools verify`).

    Why: The digest ties the document to the exact file it was projected from; a wrong
    digest points reviewers at a different module.

    Fix: Re-project from the right source file, or fix the digest.
    """
    note = _notes_file(ctx, info, ld) if ref.source_version == NOTES_SOURCE_VERSION else None
    if note is not None:
        _verify_notes(ctx, info, ld, ref, note, _catalog_root(ctx, ld) or note.parent)
        return
    root = ctx.store.root
    if root is None:
        # said once for the whole run (no_store_note), not once per document; its detail is
        # made when shown (Verification.unchecked)
        ctx.result.verifications.append(Verification(
            ld.file, ld.line, info.component_id, ref.pointer, ref.source, "not_at_hand", None))
        return
    want = hex_of(ref.sha256)
    sid, sver = ref.source_id, ref.source_version
    post = sid[len("risu:"):] if sid.startswith("risu:") else None
    member = sver.rpartition("!")[2] if "!" in sver else None
    # a notes file carries the post id of its module, not its name: match it by content only
    named = [] if sver == NOTES_SOURCE_VERSION else ctx.store.by_name(post, sver)
    for cand in named:
        if want in _fingerprints(ctx.store, cand, member):
            _record(ctx, info, ld, mc202, ref, "verified", _rel(cand))
            return
    hits = ctx.store.by_content(want)
    if hits:
        _record(ctx, info, ld, mc202, ref, "verified", _rel(hits[0]))
    elif named:
        got = ctx.store.sha256(named[0])
        _record(ctx, info, ld, mc202, ref, "mismatch",
                f"source file {_rel(named[0])} has sha256:{got}, the document says "
                f"{ref.sha256}; re-project from this file or fix the digest")
    else:
        _record(ctx, info, ld, mc202, ref, "not_at_hand",
                f"{ref.source}: no file in {_rel(root)} has this name or digest")


def _unread(note: Path, refused: FileRefused | None) -> tuple[str, str]:
    """Why a notes file was not read, and the code: its refusal, or what opening it says."""
    if refused is None:
        try:
            open_regular(note, limit=MAX_SOURCE_BYTES).close()
        except FileRefused as exc:
            refused = exc
    if refused is None:
        return "cannot be read", Code.UNREADABLE
    return refused.why, refused.code


def _notes_file(ctx: VerifyContext, info: DocumentInfo, ld: LoadedDocument) -> Path | None:
    """The curator notes ``notes/<component_id>.yaml`` of the document's catalog, when
    there is such an entry (a file, or a link whatever it points at), else the one
    :func:`~risutools.contract.notesfind.find_notes` finds."""
    cid = info.component_id
    if not plain_id(cid):
        return None  # (an id that is not a plain name never becomes a path)
    root = _catalog_root(ctx, ld)
    if root is None:
        return None
    note = root / "notes" / f"{cid}.yaml"
    if note.exists() or note.is_symlink():
        return note
    # by its stable id or a slug alias, a repost's source digest, or the recorded digest
    folder = root / "notes"
    if folder not in ctx.notes:  # (the folder's index taken once a run)
        ctx.notes[folder] = notes_index(folder)
    return find_notes(folder, cid or "", index=ctx.notes[folder], **document_keys(ld.doc))


def _verify_notes(ctx: VerifyContext, info: DocumentInfo, ld: LoadedDocument,
                  ref: SourceRef, note: Path, root: Path) -> None:
    refused: FileRefused | None = None
    got: str | None = None
    try:  # (a link leading out of the catalog is never read)
        check_inside(root, note)
        got = ctx.store.sha256(note)
    except FileRefused as exc:
        refused = exc
    if got is None:
        why, code = _unread(note, refused)
        # could not run: MC001 (exit 2), and the reference stays unverified; a link leading
        # out of the catalog is the catalog's fault, not a file missing here: a mismatch
        ctx.result.file_findings.append(mc001(_rel(note), why, code))
        _record(ctx, info, ld, mc202, ref,
                "mismatch" if code == Code.OUTSIDE_CATALOG else "not_at_hand",
                f"notes file {_rel(note)} {why}")
    elif got == hex_of(ref.sha256):
        _record(ctx, info, ld, mc202, ref, "verified", _rel(note))
    else:
        _record(ctx, info, ld, mc202, ref, "mismatch",
                f"notes file {_rel(note)} has sha256:{got}, the document says {ref.sha256}; "
                "re-run the projection so the document picks up the notes")


# --------------------------------------------------------------------------- MC203


@check("MC203", "error", "verify", "replay-report", needs=(mc200.id,))
def mc203(ctx: VerifyContext, info: DocumentInfo, ld: LoadedDocument, ref: SourceRef) -> None:
    """A replay report referenced in source_refs (source_id 'replay:...', source_version
    'replay-report-v1') exists, its digest matches, and it reads back as the report `replay
    run` wrote: a replay-report-v1 in the writer's own layout, its report_sha256 its own,
    for this component, of the simulation its capabilities select and of the fixture the
    reference names (replay:<name>), its summary's counts those of its lists and its
    verdict, failed and warned invariants those its own invariants give; and
    projection.replay_status does not contradict the verdicts of the reports verified
    (`risutools verify`).

    Why: replay_status and availability_verdict rest on that report; a missing, changed or
    forged report (any file given the right digest) leaves them unsupported.

    Fix: Re-run the replay and record the new report's digest, or restore the report file.
    """
    want = hex_of(ref.sha256)
    fixture = ref.source_id[len("replay:"):] if ref.source_id.startswith("replay:") else ""
    root = _catalog_root(ctx, ld)
    replays = root / REPLAYS_DIR if root is not None else None
    if root is not None and replays is not None and not stays_in(root, replays):
        _record(ctx, info, ld, mc203, ref, "mismatch", f"{_rel(replays)} leads outside the "
                "catalog and is not read; make replays/ a folder of the catalog")
        return
    local = _replays_store(ctx, replays)
    found: Path | None = None
    if local is not None:
        hits = local.by_content(want)
        found = hits[0] if hits else None
    if found is None and ctx.store.root is not None:
        hits = ctx.store.by_content(want)
        found = hits[0] if hits else None
    if found is None:
        named = local.matching(lambda name, _: fixture in name) if local and fixture else []
        _report_missing(ctx, info, ld, ref, local, named)
        return
    read = read_report(found, want, info.component_id,
                       fixture if ref.source_id.startswith("replay:") else None,
                       simulation=select_simulation(ld.doc) if isinstance(ld.doc, dict)
                       else None)
    if read.problem:
        _record(ctx, info, ld, mc203, ref, "mismatch",
                f"replay report {_rel(found)}: {read.problem}")
    else:
        _record(ctx, info, ld, mc203, ref, "verified", _rel(found), verdict=read.verdict,
                evidence=_evidence(ctx, read.head, local))


def _evidence(ctx: VerifyContext, head: dict[str, Any] | None,
              local: SourceStore | None) -> ReplayEvidence | None:
    """A trusted report's evidence (:class:`ReplayEvidence`), its fixture looked up by
    digest in the catalog's ``replays/`` (where the spec keeps fixtures), then the store."""
    if head is None:
        return None
    fx, summary = head["fixture"], head["summary"]
    want = hex_of(fx["sha256"])
    hits = local.by_content(want) if local is not None else []
    if not hits and ctx.store.root is not None:
        hits = ctx.store.by_content(want)
    return ReplayEvidence(head["simulation"], head["config"], fx["name"], fx["sha256"],
                          str(hits[0]) if hits else None, summary["verdict"],
                          verdicts_of(head["invariants"]))


def _replays_store(ctx: VerifyContext, replays: Path | None) -> SourceStore | None:
    """The catalog's ``replays/`` as a store, listed and hashed once a run (each document's
    reports are looked up in the same one)."""
    if replays is None:
        return None
    if replays not in ctx.replays:
        ctx.replays[replays] = SourceStore(replays) if replays.is_dir() else None
    return ctx.replays[replays]


def _report_missing(ctx: VerifyContext, info: DocumentInfo, ld: LoadedDocument,
                    ref: SourceRef, local: SourceStore | None, named: list[Path]) -> None:
    """No file has the report's digest: one named like it, the catalog's replays/, or
    neither."""
    if named:
        got = local.sha256(named[0]) if local is not None else None
        _record(ctx, info, ld, mc203, ref, "mismatch",
                f"replay report {_rel(named[0])} has sha256:{got}, the document says "
                f"{ref.sha256}; re-run the replay and record the new report")
    elif local is not None:
        _record(ctx, info, ld, mc203, ref, "mismatch",
                f"the replay report {ref.source} is not in {_rel(local.root or Path('.'))} (no "
                "file has its digest); restore it or re-run the replay")
    else:
        _record(ctx, info, ld, mc203, ref, "not_at_hand",
                f"{ref.source}: no replays/ folder in the catalog and not in the source store")

