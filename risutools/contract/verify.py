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
from typing import Any

from risutools.canonical import hex_of
from risutools.contract.loaders import LoadedDocument, display_path
from risutools.contract.result import NO_STORE
from risutools.contract.rules import (
    MC100,
    MC202,
    MC203,
    RULES,
    digest_problem,
    make_finding,
    mc200,
    mc201,
)
from risutools.contract.validate import (
    DocumentInfo,
    Result,
    RuleFilter,
    Verification,
    _doc_hash,
    load_all,
    not_object_message,
)
from risutools.errors import Code
from risutools.safeio import FileRefused, is_regular, open_regular, sha256_regular
from risutools.settings.config import Settings

CONTAINER_SUFFIXES = (".charx", ".zip", ".jpeg", ".jpg", ".png")
#: the largest file (or ZIP member, inflated) verify hashes: 1 GiB
MAX_SOURCE_BYTES = 1024 * 1024 * 1024


def _member_sha256(path: Path, member: str) -> str | None:
    """SHA-256 of a ZIP member through the container reader's own bounded ZIP walk
    (validated and bounded directory, stored/deflate only, a running inflate cap of
    ``MAX_SOURCE_BYTES`` and the ratio bound); None if the file is not a regular file, not
    a ZIP, lacks the member, or the member is past a bound."""
    from risutools.errors import FormatError
    from risutools.formats.charx import member_sha256

    try:
        with open_regular(path, limit=MAX_SOURCE_BYTES) as raw:
            return member_sha256(raw, member, MAX_SOURCE_BYTES)
    except (FileRefused, FormatError, OSError):
        return None


@dataclass
class SourceStore:
    """A folder of source files, keyed by name and (lazily) by content SHA-256."""

    root: Path | None
    content_scan: bool = True
    _files: list[Path] | None = None
    _hashes: dict[Path, str] = field(default_factory=dict)
    _by_hash: dict[str, list[Path]] | None = None

    def files(self) -> list[Path]:
        if self._files is None:
            found: list[Path] = []
            if self.root is not None and self.root.is_dir():
                # followlinks=False: links to folders are not entered (no cycles, no /dev);
                # only regular files (after links) are candidates: never a device or FIFO
                for dirpath, dirnames, filenames in os.walk(self.root, followlinks=False):
                    dirnames.sort()
                    for fn in sorted(filenames):
                        p = Path(dirpath) / fn
                        if is_regular(p):
                            found.append(p)
            self._files = found
        return self._files

    def sha256(self, path: Path) -> str | None:
        if path not in self._hashes:
            try:
                self._hashes[path] = sha256_regular(path, MAX_SOURCE_BYTES)
            except FileRefused:
                return None
        return self._hashes[path]

    def by_content(self, hexdigest: str) -> list[Path]:
        """Files whose bytes hash to ``hexdigest`` (hashes every store file once)."""
        named = [p for p in self.files() if hexdigest in p.name]
        hits = [p for p in named if self.sha256(p) == hexdigest]
        if hits or not self.content_scan:
            return hits
        if self._by_hash is None:
            index: dict[str, list[Path]] = {}
            for p in self.files():
                h = self.sha256(p)
                if h is not None:
                    index.setdefault(h, []).append(p)
            self._by_hash = index
        return list(self._by_hash.get(hexdigest, []))

    def by_name(self, post_id: str | None, source_version: str) -> list[Path]:
        """Candidates by name: the container named in ``source_version`` (``X.charx``),
        ``<post id>.<ext>`` / ``<post id>_<anything>`` / ``<post id>-...``, or
        ``<post id>/<file>`` with the file named by ``source_version``."""
        container, _, member = source_version.rpartition("!")
        wanted = container or member
        out: list[Path] = []
        for p in self.files():
            name = p.name
            by_container = bool(container) and name == container
            by_post = post_id is not None and post_id != "" and (
                name == post_id
                or (name.startswith(post_id) and name[len(post_id)] in "._- ")
                or (p.parent.name == post_id and name == wanted)
            )
            if by_container or by_post:
                out.append(p)
        return out


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
class _Ctx:
    store: SourceStore
    cfg: Settings
    flt: RuleFilter
    require: bool
    result: Result
    catalogs: dict[Path, Path | None] = field(default_factory=dict)


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
    if src is not None and not src.is_dir():
        from risutools.errors import ConfigError

        raise ConfigError(Code.NO_SOURCE_STORE, "source store folder not found",
                          path=display_path(src))
    if src is None and require_sources:
        from risutools.errors import ConfigError

        raise ConfigError(Code.NO_SOURCE_STORE, "--require-sources needs a source store (--sources "
                          "DIR or `sources:` in the configuration)", where="--require-sources")
    loaded = load_all(paths, cfg, skip_non_documents)
    result = Result("verify", files=loaded.files, skipped=loaded.skipped)
    result.file_findings = [f for f in loaded.problems if flt.keep(f.rule)]
    ctx = _Ctx(SourceStore(src, content_scan), cfg, flt, require_sources, result)
    for ld in loaded.documents:
        info = DocumentInfo(ld.file, ld.line, None, None, _doc_hash(ld.doc))
        doc = ld.doc
        if isinstance(doc, dict):
            cid, ver = doc.get("component_id"), doc.get("component_version")
            info.component_id = cid if isinstance(cid, str) else None
            info.component_version = ver if isinstance(ver, str) else None
            for rule in (mc200, mc201):
                for ptr, msg in rule(doc, cfg):
                    _emit(ctx, info, ld, rule.id, "error", ptr, msg)
            _verify_refs(ctx, info, ld)
        else:
            _emit(ctx, info, ld, MC100.id, "error", "", not_object_message(doc))
        info.findings.sort(key=lambda f: f.sort_key())
        result.documents.append(info)
    return result


def _emit(ctx: _Ctx, info: DocumentInfo, ld: LoadedDocument, rule: str, severity: str,
          pointer: str, message: str) -> None:
    if not ctx.flt.keep(rule):
        return
    configured = ctx.cfg.severities.get(rule)
    if configured == "off":
        return
    if severity == "error" and configured == "warning":
        severity = "warning"
    info.findings.append(make_finding(rule, severity, message, ld.file,
                                      ld.line_of(pointer), pointer))


def _catalog_root(ctx: _Ctx, ld: LoadedDocument) -> Path | None:
    from risutools.contract.transitions import find_catalog_root

    start = ld.path.parent if ld.path is not None else Path.cwd()
    if start not in ctx.catalogs:
        root = find_catalog_root(start)
        if root is None:
            # a catalog without approvals yet: the document's own folder, or a parent
            # that has replays/ or notes/
            d = start.resolve()
            while True:
                if (d / "replays").is_dir() or (d / "notes").is_dir():
                    root = d
                    break
                if (d / ".git").exists() or d.parent == d:
                    break
                d = d.parent
        ctx.catalogs[start] = root
    return ctx.catalogs[start]


def _verify_refs(ctx: _Ctx, info: DocumentInfo, ld: LoadedDocument) -> None:
    prov = ld.doc.get("provenance")
    refs = prov.get("source_refs") if isinstance(prov, dict) else None
    if not isinstance(refs, list):
        return
    for i, ref in enumerate(refs):
        if not isinstance(ref, dict):
            continue
        sid, sver, sha = ref.get("source_id"), ref.get("source_version"), ref.get("sha256")
        if not (isinstance(sid, str) and isinstance(sver, str) and isinstance(sha, str)):
            continue
        if digest_problem(sha) is not None:
            continue  # MC200 reported it
        ptr = f"/provenance/source_refs/{i}/sha256"
        if sid.startswith("replay:") or sver == "replay-report-v1":
            _verify_replay(ctx, info, ld, ptr, sid, sver, sha)
        else:
            _verify_source(ctx, info, ld, ptr, sid, sver, sha)


def _record(ctx: _Ctx, info: DocumentInfo, ld: LoadedDocument, rule: str, ptr: str,
            source: str, status: str, detail: str, *, emit: bool = True) -> None:
    ctx.result.verifications.append(
        Verification(ld.file, ld.line, info.component_id, ptr, source, status, detail))
    if not emit:
        return
    if status == "mismatch":
        _emit(ctx, info, ld, rule, RULES[rule].severity, ptr, detail)
    elif status == "not_at_hand":
        sev = "error" if ctx.require else "warning"
        _emit(ctx, info, ld, rule, sev, ptr, f"not verified: source not at hand ({detail}); put "
              "the file in the source store (--sources) to verify it")


def _rel(p: Path) -> str:
    return display_path(p)


def _verify_source(ctx: _Ctx, info: DocumentInfo, ld: LoadedDocument, ptr: str,
                   sid: str, sver: str, sha: str) -> None:
    want = hex_of(sha)
    source = f"{sid} {sver}"
    cid = info.component_id
    if sver == "notes.yaml" and cid is not None and "/" not in cid and "\\" not in cid \
            and not cid.startswith("."):  # (an id never names a path outside notes/)
        root = _catalog_root(ctx, ld)
        if root is not None:
            note = root / "notes" / f"{info.component_id}.yaml"
            if note.exists() or note.is_symlink():
                got = ctx.store.sha256(note)
                if got is None:
                    from risutools.safeio import open_regular

                    try:
                        open_regular(note, limit=MAX_SOURCE_BYTES).close()
                        why = "cannot be read"
                    except FileRefused as exc:
                        why = exc.why
                    # could not run: MC001 (exit 2), and the reference stays unverified
                    from risutools.contract.loaders import _unreadable

                    ctx.result.file_findings.append(_unreadable(_rel(note), why))
                    _record(ctx, info, ld, MC202.id, ptr, source, "not_at_hand",
                            f"notes file {_rel(note)} {why}")
                    return
                if got == want:
                    _record(ctx, info, ld, MC202.id, ptr, source, "verified", _rel(note))
                else:
                    _record(ctx, info, ld, MC202.id, ptr, source, "mismatch",
                            f"notes file {_rel(note)} has sha256:{got}, the document says "
                            f"{sha}; re-run the projection so the document picks up the notes")
                return
    if ctx.store.root is None:
        # said once for the whole run (no_store_note), not once per document
        _record(ctx, info, ld, MC202.id, ptr, source, "not_at_hand", f"{source}: {NO_STORE}",
                emit=False)
        return
    post = sid[len("risu:"):] if sid.startswith("risu:") else None
    member = sver.rpartition("!")[2] if "!" in sver else None
    # a notes file carries the post id of its module, not its name: match it by content only
    named = [] if sver == "notes.yaml" else ctx.store.by_name(post, sver)
    for cand in named:
        if want in _fingerprints(ctx.store, cand, member):
            _record(ctx, info, ld, MC202.id, ptr, source, "verified", _rel(cand))
            return
    hits = ctx.store.by_content(want)
    if hits:
        _record(ctx, info, ld, MC202.id, ptr, source, "verified", _rel(hits[0]))
        return
    if named:
        got = ctx.store.sha256(named[0])
        _record(ctx, info, ld, MC202.id, ptr, source, "mismatch",
                f"source file {_rel(named[0])} has sha256:{got}, the document says {sha}; "
                "re-project from this file or fix the digest")
        return
    _record(ctx, info, ld, MC202.id, ptr, source, "not_at_hand",
            f"{source}: no file in {_rel(ctx.store.root)} has this name or digest")


def _verify_replay(ctx: _Ctx, info: DocumentInfo, ld: LoadedDocument, ptr: str,
                   sid: str, sver: str, sha: str) -> None:
    want = hex_of(sha)
    source = f"{sid} {sver}"
    fixture = sid[len("replay:"):] if sid.startswith("replay:") else ""
    root = _catalog_root(ctx, ld)
    replays = root / "replays" if root is not None else None
    local = SourceStore(replays) if replays is not None and replays.is_dir() else None
    found: Path | None = None
    named: list[Path] = []
    if local is not None:
        hits = local.by_content(want)
        found = hits[0] if hits else None
        named = [p for p in local.files() if fixture and fixture in p.name]
    if found is None and ctx.store.root is not None:
        hits = ctx.store.by_content(want)
        found = hits[0] if hits else None
    if found is not None:
        problem = _report_self_check(found, info.component_id)
        if problem:
            _record(ctx, info, ld, MC203.id, ptr, source, "mismatch",
                    f"replay report {_rel(found)}: {problem}")
        else:
            _record(ctx, info, ld, MC203.id, ptr, source, "verified", _rel(found))
        return
    if named:
        got = local.sha256(named[0]) if local is not None else None
        _record(ctx, info, ld, MC203.id, ptr, source, "mismatch",
                f"replay report {_rel(named[0])} has sha256:{got}, the document says {sha}; "
                "re-run the replay and record the new report")
        return
    if local is not None:
        _record(ctx, info, ld, MC203.id, ptr, source, "mismatch",
                f"the replay report {source} is not in {_rel(local.root or Path('.'))} (no file "
                "has its digest); restore it or re-run the replay")
        return
    _record(ctx, info, ld, MC203.id, ptr, source, "not_at_hand",
            f"{source}: no replays/ folder in the catalog and not in the source store")


def _report_self_check(path: Path, component_id: str | None) -> str | None:
    """A JSON report's own ``report_sha256`` and component id, when it has them."""
    if path.suffix.lower() != ".json":
        return None
    from risutools.canonical import self_hash
    from risutools.contract.loaders import load_bytes
    from risutools.safeio import read_regular
    from risutools.values import MAX_DOCUMENT_BYTES

    try:
        out = load_bytes(read_regular(path, MAX_DOCUMENT_BYTES), display_path(path), fmt="json")
    except FileRefused:
        return None
    if out.problems or not out.documents:
        return None
    rep: Any = out.documents[0].doc
    if not isinstance(rep, dict):
        return None
    declared = rep.get("report_sha256")
    if isinstance(declared, str):
        try:
            actual = self_hash(rep)
        except (ValueError, TypeError):
            return None
        if actual != declared:
            return (f"report_sha256 {declared[:19]}… does not match its content "
                    f"({actual[:19]}…); the report was edited after it was written")
    rid = rep.get("component_id")
    if isinstance(rid, str) and component_id is not None and rid != component_id:
        return f"the report is for {rid!r}, not {component_id!r}"
    return None
