"""The catalog: one folder of matrix-component-v1 documents and what goes with them.

Layout (``../shared/spec/catalog-and-promotion.md``)::

    CATALOG/
      *.json *.yaml components.ndjson   documents (any folder depth)
      notes/<component_id>.yaml         curator overlays
      replays/                          fixtures and replay reports
      approvals/*.yaml                  human approval records (risutools approve)
      transitions.ndjson                append-only log of status and runtime switches
      .risutools.yaml                   configuration (contract/config.py)
      .risutools.lock                   the writers' lock file (created on first write)

The root is ``--catalog DIR`` or, by default, the nearest folder above the
current one that holds ``transitions.ndjson`` or ``approvals/`` (as MC305 finds
it), else one that holds ``.risutools.yaml``, ``notes/`` or ``replays/``.

Every write goes through :mod:`risutools.catalog.writes` (one place): documents
are replaced atomically with compare-and-swap on the bytes read, the log is
appended, and promotions hold the catalog lock across read-check-write.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shlex
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from risutools.canonical import doc_sha256
from risutools.contract.catalogroot import MARKERS as MARKERS
from risutools.contract.catalogroot import find_root as find_root
from risutools.contract.folders import NDJSON_EXTS, YAML_EXTS
from risutools.contract.loaders import (
    Keep,
    LoadedDocument,
    LoadOutcome,
    load_documents,
    not_a_component,
)
from risutools.contract.shown import display_path
from risutools.contract.sieve import load_where, needles
from risutools.contract.transitions import CatalogLog, read_log
from risutools.errors import Code, ConfigError, DocumentError
from risutools.findings import Finding
from risutools.pathnames import plain_id, real_path
from risutools.printable import quoted
from risutools.rowspool import pack, unpack
from risutools.safeio import FileRefused, check_inside, own_folder, require_folder
from risutools.settings import lifecycle
from risutools.settings.catalog import LOG_NAME, REPLAYS_DIR, CatalogSettings
from risutools.settings.config import Settings, find_settings_file, load_settings_file

LOCK_NAME = ".risutools.lock"


#: what an entry keeps of a document it does not hold (:class:`Entry`): these top-level
#: parts, whole (None) or only the keys named
HEAD: dict[str, tuple[str, ...] | None] = {
    "component_id": None, "component_version": None, "capabilities": None,
    "provenance": ("review_status", "runtime_status", "source_refs", "publishable"),
    "projection": ("title", "replay_status"),
}


#: the capability kinds :meth:`Entry.caps` reads, in the order :func:`head_values` gives them
CAP_KINDS = ("provides", "requires", "conflicts")
#: (part, key) -> its place in :func:`head_values`: the values :meth:`Entry.get` answers
#: from them when the entry was given them
_VALUE_AT: dict[tuple[str, ...], int] = {("projection", "replay_status"): 3,
                                        ("provenance", "publishable"): 4}
_CAP_AT = {kind: i for i, kind in enumerate(CAP_KINDS)}
#: what :func:`head_values` gives: each kind's capabilities as :meth:`Entry.caps` lists
#: them, then the replay status and the publishable flag
HeadValues = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], str | None, bool | None]
#: each different :data:`HeadValues` kept once (a catalog's documents have few); past this
#: many, an entry keeps its own (:func:`shared_head_values`: the table stays bounded)
_SHARED_VALUES: dict[HeadValues, HeadValues] = {}
SHARED_VALUES_MAX = 4096
#: each different list of one kind's capabilities kept once, up to as many (documents whose
#: values all differ still draw each kind's names from one vocabulary: most lists repeat)
_SHARED_NAMES: dict[tuple[str, ...], tuple[str, ...]] = {}

_Kept = TypeVar("_Kept")


def kept_once(table: dict[_Kept, _Kept], value: _Kept, bound: int) -> _Kept:
    """``value`` as kept: the one equal to it in ``table``, else itself, put in the table
    while it holds fewer than ``bound`` (past them, each its own)."""
    held = table.get(value)
    if held is None:
        held = value
        if len(table) < bound:
            table[value] = value
    return held


#: the head last unpacked (:attr:`Entry.parts`) and what it unpacked to: never changed by
#: a reader (an entry's document never is), so the same answer serves the next question
_LAST_HEAD: list[Any] = [None, None]


@dataclass(slots=True)
class Entry:
    """One document of the catalog and where it lives.

    An entry holds its whole document (``held``), or, in a review, only its head (the parts
    :data:`HEAD` names) and a way to read the whole document back (``reload``): :attr:`doc`
    gives the whole document either way, and :meth:`get` answers from the head what the
    head holds, from the whole document anything else.  The document of an entry is never
    changed (a new state is a new document), so the fields every pass of the review asks
    for are read once and kept (in slots: a catalog holds tens of thousands of entries)."""

    #: the file (a JSON/YAML document or an NDJSON catalog): its :attr:`path`, or that path's
    #: text (a review's entries: a ``Path`` costs four objects, about 300 bytes, a document)
    _path: Path | str
    line: int | None  # NDJSON line (None for a JSON/YAML file)
    fmt: str  # json | yaml | ndjson
    held: dict[str, Any] | None  # the whole document (None: read back by ``reload``)
    doc_sha256: str  # the whole document's canonical hash: what a write compares (CAS)
    loaded: LoadedDocument | None = None
    _where: str | None = None
    #: the head of a document not held, packed (:func:`head_of`: a few hundred bytes in one
    #: object, read when asked), or what reads it back (the review keeps it in its spool)
    head: bytes | Callable[[], Any] | None = None
    reload: Callable[[], dict[str, Any]] | None = None
    #: (display file, line) as the loader named the document: the key of its findings
    key: tuple[str, int | None] = ("", None)
    #: (target, errors) of the status rules on the document its next step would write,
    #: found by the review's first pass for a document on the board (what the contract
    #: gate reads of their findings: :func:`~risutools.catalog.gates.status_errors`)
    status_found: tuple[str, tuple[Finding, ...]] | None = None
    # what was read once (None: not yet)
    _base: str | None = None
    _cid: str | None = None
    _version: str | None = None
    _review: str | None = None
    _runtime: str | None = None
    #: what the passes read most of the head (:func:`head_values`), found by the review's
    #: first pass: one tuple shared by all entries that have the same (None: read the head)
    _hv: HeadValues | None = None
    #: its facts as the review's first pass found them, until its summary takes them
    #: (:meth:`risutools.catalog.interactions.FactsStore.found`; None: read when asked)
    found_facts: Any = None
    #: (title, first source id, source part) as an interaction summary and the review's
    #: duplicates read them from the head (:func:`head_label`), found by the review's first
    #: pass (None: read the head)
    label: Label | None = None

    @property
    def doc(self) -> dict[str, Any]:
        """The whole document (read back, a new copy each time, when it is not held)."""
        if self.held is not None:
            return self.held
        assert self.reload is not None, "an entry holds its document or can read it back"
        return self.reload()

    @property
    def parts(self) -> dict[str, Any]:
        """The document's head (:data:`HEAD`), or the whole document when held."""
        if self.held is not None:
            return self.held
        if self.head is None:
            return {}
        head = self.head
        if _LAST_HEAD[0] is not head:  # (the passes read one entry many times in a row)
            _LAST_HEAD[:] = [head, unpack(head) if isinstance(head, bytes) else head()]
        parts: dict[str, Any] = _LAST_HEAD[1]
        return parts

    @property
    def base_sha256(self) -> str:
        """The base hash (:func:`lifecycle.base_sha256`: without the runtime fields), what
        approvals, packets, gates and the log name."""
        if self._base is None:
            self._base = lifecycle.base_sha256(self.doc)
        return self._base

    @property
    def names(self) -> frozenset[str]:
        """The hashes a transition line may name the document by
        (:func:`lifecycle.base_names`): its base hash and its whole document's."""
        return frozenset((self.base_sha256, self.doc_sha256))

    @property
    def component_id(self) -> str:
        if self._cid is None:
            cid = self.parts.get("component_id")
            self._cid = cid if isinstance(cid, str) else ""
        return self._cid

    @property
    def version(self) -> str:
        if self._version is None:
            v = self.parts.get("component_version")
            self._version = _word(v)
        return self._version

    def get(self, *keys: str) -> Any:
        if self._hv is not None and len(keys) == 2:
            at = _VALUE_AT.get(keys)
            if at is not None:
                return self._hv[at]
        cur: Any = self.held
        if cur is None:
            part = HEAD.get(keys[0], ()) if keys else ()
            in_head = part is None or (len(keys) > 1 and keys[1] in part)
            cur = self.parts if in_head else self.doc
        for k in keys:
            if not isinstance(cur, dict):
                return None
            cur = cur.get(k)
        return cur

    @property
    def review_status(self) -> str:
        if self._review is None:
            v = self.get("provenance", "review_status")
            self._review = _word(v)
        return self._review

    @property
    def runtime_status(self) -> str:
        if self._runtime is None:
            v = self.get("provenance", "runtime_status")
            self._runtime = _word(v)
        return self._runtime

    def caps(self, kind: str) -> list[str]:
        if self._hv is not None and kind in _CAP_AT:
            names: tuple[str, ...] = self._hv[_CAP_AT[kind]]  # type: ignore[assignment]
            return list(names)
        v = self.get("capabilities", kind)
        return [x for x in v if isinstance(x, str)] if isinstance(v, list) else []

    @property
    def path(self) -> Path:
        """The file (a ``Path``, made when asked when the entry holds its text)."""
        f = self._path
        return f if isinstance(f, Path) else Path(f)

    def where(self) -> str:
        if self._where is None:
            name = _display(self.path, os.getcwd())
            if name == self.key[0]:  # (the loader's name of it, often: kept once)
                name = self.key[0]
            self._where = f"{name}:{self.line}" if self.fmt == "ndjson" and self.line else name
        return self._where


def head_names(doc: dict[str, Any]) -> tuple[str, str, str, str]:
    """(component_id, component_version, review_status, runtime_status) of ``doc`` as an
    entry reads them from its head (a value that is not a string: ""; the entry keeps the
    last three once for all entries that have the same: :func:`sys.intern`)."""
    prov = doc.get("provenance")
    prov = prov if isinstance(prov, dict) else {}
    return (_text(doc.get("component_id")), _text(doc.get("component_version")),
            _text(prov.get("review_status")), _text(prov.get("runtime_status")))


def head_values(doc: dict[str, Any]) -> HeadValues | None:
    """The capabilities of each kind, the replay status and the publishable flag of ``doc``
    as an entry reads them from its head (:meth:`Entry.caps`, :meth:`Entry.get`), or None
    when one is a value these do not hold (a status that is not a string, a flag that is
    not a boolean, a string of a subclass): the entry then reads its head."""
    caps = doc.get("capabilities")
    kinds: list[tuple[str, ...]] = []
    for kind in CAP_KINDS:
        v = caps.get(kind) if isinstance(caps, dict) else None
        names: list[str] = []
        for x in v if isinstance(v, list) else ():
            if type(x) is str:
                names.append(x)
            elif isinstance(x, str):  # (a subclass: as the head reads it back, not kept)
                return None
        kinds.append(tuple(names))
    proj, prov = doc.get("projection"), doc.get("provenance")
    replay = proj.get("replay_status") if isinstance(proj, dict) else None
    flag = prov.get("publishable") if isinstance(prov, dict) else None
    if not (replay is None or type(replay) is str) or not (flag is None or type(flag) is bool):
        return None
    return kinds[0], kinds[1], kinds[2], replay, flag


#: what :func:`head_label` gives: the title and first source id an interaction summary
#: reads, and the source part the review's duplicates are found by (:func:`source_part`)
Label = tuple[str, str, "tuple[str, str] | None"]


def head_label(doc: dict[str, Any]) -> Label | None:
    """(``projection.title``, ``provenance.source_refs[0].source_id``, the source part) of
    ``doc`` as an interaction summary and the review's duplicates read them from the entry's
    head ("" for a title or id that is not a string; the part: :func:`source_part` of the
    references), or None when one of the strings read is of a subclass (they then read the
    head)."""
    proj, prov = doc.get("projection"), doc.get("provenance")
    title = proj.get("title") if isinstance(proj, dict) else None
    refs = prov.get("source_refs") if isinstance(prov, dict) else None
    first = refs[0] if isinstance(refs, list) and refs and isinstance(refs[0], dict) else None
    sid = first.get("source_id") if first is not None else None
    if first is not None and _subclassed(sid, first.get("sha256"), first.get("source_version")):
        return None
    if isinstance(title, str) and type(title) is not str:
        return None
    return (title if isinstance(title, str) else "", sid if isinstance(sid, str) else "",
            source_part(refs))


def _subclassed(*values: Any) -> bool:
    return any(isinstance(v, str) and type(v) is not str for v in values)


def source_part(refs: Any) -> tuple[str, str] | None:
    """The source file's digest and the part of it a component comes from, of its
    ``provenance.source_refs`` (``refs[0]``: a ``.charx`` gives its card's own content,
    ``x.charx!card.json``, and its module, ``x.charx!module.risum``: two components of one
    file, not duplicates; the part is the member, whatever the file was named), None
    without a digest."""
    if isinstance(refs, list) and refs and isinstance(refs[0], dict):
        s, part = refs[0].get("sha256"), refs[0].get("source_version")
        member = sys.intern(part.rsplit("!", 1)[-1]) if isinstance(part, str) else ""
        return (s, member) if isinstance(s, str) else None
    return None


def shared_head_values(values: HeadValues | None) -> HeadValues | None:
    """``values`` as kept, its strings :func:`sys.intern`-ed: one tuple for all that are
    equal among the first :data:`SHARED_VALUES_MAX` different ones, its own past them (kept
    by its entry alone, a few hundred bytes: less than its head, which it then need not
    read), each kind's list in it kept once as well (:data:`_SHARED_NAMES`)."""
    if values is None:
        return None
    held = _SHARED_VALUES.get(values)
    if held is None:
        provides, requires, conflicts, replay, flag = values
        held = kept_once(_SHARED_VALUES, (_names(provides), _names(requires),
                                          _names(conflicts),
                                          None if replay is None else sys.intern(replay),
                                          flag), SHARED_VALUES_MAX)
    return held


def _names(names: tuple[str, ...]) -> tuple[str, ...]:
    held = _SHARED_NAMES.get(names)
    return held if held is not None else kept_once(
        _SHARED_NAMES, tuple(map(sys.intern, names)), SHARED_VALUES_MAX)


def _text(v: Any) -> str:
    return v if isinstance(v, str) else ""


def _word(v: Any) -> str:
    """A status or a version as an entry keeps it: a string, one for every entry that has
    the same (:func:`sys.intern`: a catalog has few); "" for anything else."""
    if type(v) is str:
        return sys.intern(v)
    return v if isinstance(v, str) else ""


def head_of(doc: dict[str, Any], *, parsed_by_orjson: bool = False) -> bytes:
    """The head an entry keeps of ``doc`` when it does not hold it (:data:`HEAD`), packed
    (:func:`risutools.rowspool.pack`: read back equal by this process only)."""
    return pack(head_parts(doc), parsed_by_orjson=parsed_by_orjson)


def head_parts(doc: dict[str, Any]) -> dict[str, Any]:
    """The parts of ``doc`` its head holds (:data:`HEAD`): what :func:`head_of` packs."""
    head = {}
    for key, keep in HEAD.items():
        if key not in doc:
            continue
        v = doc[key]
        head[key] = {k: v[k] for k in keep if k in v} \
            if keep is not None and isinstance(v, dict) else v
    return head


#: what the review's first pass keeps as the head of a document orjson parsed whose entry
#: is given what the passes read of its head (:class:`HeadIn` once the document is in its
#: spool): not packed apart (a packed head starts with ``j`` or ``m``)
HEAD_IN_DOC = b"d"


def first_head(doc: dict[str, Any], raw: bytes | None, given: bool, exact: bool) -> bytes:
    """The head the review's first pass keeps of ``doc`` (``raw``: the bytes orjson parsed
    it from, packed whole; ``given``: its entry is given what the passes read of its head;
    ``exact``: orjson parsed it): :data:`HEAD_IN_DOC` when both, else :func:`head_of`."""
    return HEAD_IN_DOC if raw is not None and given else head_of(doc, parsed_by_orjson=exact)


def spooled_head(head: Any, reload: Callable[[], dict[str, Any]],
                 put: Callable[[bytes], Callable[[], Any]], given: bool) -> Any:
    """What an entry holds of its head once its whole document is in the review's spool
    (``reload`` reads it back; ``put`` spools a packed value): for :data:`HEAD_IN_DOC`, what
    reads it from the whole document (:class:`HeadIn`); a packed head, spooled when its
    entry is ``given`` what the passes read of its head (else held: read often)."""
    if head == HEAD_IN_DOC:
        return HeadIn(reload)
    return put(head) if isinstance(head, bytes) and given else head


class HeadIn:
    """An entry's head (:attr:`Entry.head`) read back from its whole document:
    :func:`head_parts` of what ``reload`` reads, the same value as its packed head read
    back (:func:`head_of`: orjson writes and reads it back equal).  Made only when a pass
    asks the entry more than the values it was given (none did in a review of the
    projected catalog), where a head packed apart cost every document its writing."""

    __slots__ = ("reload",)

    def __init__(self, reload: Callable[[], dict[str, Any]]) -> None:
        self.reload = reload

    def __call__(self) -> dict[str, Any]:
        return head_parts(self.reload())


def refuse_outside_own_catalog(path: str | Path, what: str = "the document") -> None:
    """``outside-catalog`` (exit 2) for a file written in a catalog's folder (found above it
    as :func:`find_root` finds one, the path's links not followed) that leads outside that
    catalog: what a command given a document without ``--catalog`` asks before it reads
    or writes anything next to it (``replay run``: its reports and ``--update``).  A file in
    no catalog is left alone."""
    root = find_root(Path(path))
    if root is None:
        return
    try:
        check_inside(root, path, f"the catalog {display_path(root)}")
    except FileRefused as exc:
        raise FileRefused(exc.code, f"{what}: {exc.why}", path=exc.path) from None


@dataclass
class Catalog:
    root: Path
    config: Settings
    settings: CatalogSettings
    _entries: list[Entry] | None = None
    load_problems: list[Finding] = field(default_factory=list)
    #: the catalog folder as the command line named it (None: found from the current folder)
    given: str | None = None
    #: (strings, entries): what :meth:`by_id` read besides, at least the documents that may
    #: hold one of those strings, in the catalog's order (None: nothing)
    aside: tuple[tuple[str, ...], list[Entry]] | None = None
    #: (the entries it was made from, component_id -> their entries of that id)
    _by_cid: tuple[list[Entry], dict[str, list[Entry]]] | None = None
    #: (component_id, its entries) as :meth:`by_id` last read them from the files
    _found: tuple[str, list[Entry]] | None = None

    # ------------------------------------------------------------------ opening

    @classmethod
    def open(cls, catalog_dir: str | Path | None = None, *, start: str | Path = ".",
             configure: Callable[[Path], Settings] | None = None) -> Catalog:
        """The catalog at ``catalog_dir``, or the one found above ``start``; its settings
        from ``configure(root)`` (the CLI's layered settings), else the file above it."""
        if catalog_dir is not None:
            root = Path(catalog_dir)
            require_folder(root, "the catalog")
        else:
            found = find_root(Path(start))
            if found is None:
                raise ConfigError(
                    Code.NO_CATALOG, "no catalog found above this folder (no transitions.ndjson, "
                    "approvals/, notes/, replays/, facts/ or .risutools.yaml); pass --catalog "
                    "DIR",
                    path=str(start))
            root = found
        root = real_path(root)
        if configure is not None:
            cfg = configure(root)
        else:
            cfg_path = find_settings_file(root)
            cfg = load_settings_file(cfg_path) if cfg_path is not None else Settings()
        given = os.fspath(catalog_dir) if catalog_dir is not None else None
        return cls(root, cfg, cfg.catalog, given=given)

    def flag(self) -> str:
        """`` --catalog DIR`` as the command line named the catalog ("" when it was found
        from the current folder): what a printed command adds so that it runs as printed
        from where this one ran."""
        if self.given is None:
            return ""
        return " --catalog " + shlex.quote(self.given)

    # ------------------------------------------------------------------ paths

    @property
    def log_path(self) -> Path:
        return self.root / LOG_NAME

    @property
    def approvals_dir(self) -> Path:
        return self.root / "approvals"

    @property
    def notes_dir(self) -> Path:
        return self.root / "notes"

    @property
    def replays_dir(self) -> Path:
        return self.root / REPLAYS_DIR

    @property
    def lock_path(self) -> Path:
        return self.root / LOCK_NAME

    @property
    def sources(self) -> Path | None:
        """The source store of the promotion gates: ``--sources``, or the configuration's
        ``sources:``, which must resolve inside the repository (``config-sources-outside``
        otherwise, as ``review`` and ``verify`` say: a pull request that points ``sources:``
        elsewhere made the digests gate hash files outside it; ``--sources DIR`` is the
        user's word and is read wherever it is)."""
        return self.config.source_store()

    def inside(self, path: Path, what: str = "") -> Path:
        """``path``, when it stays inside the catalog once every symbolic link on it is
        followed (:func:`risutools.safeio.check_inside`); else ``outside-catalog`` (exit 2).
        Every path a catalog command reads or writes is asked here first."""
        try:
            check_inside(self.root, path, f"the catalog {display_path(self.root)}")
        except FileRefused as exc:
            raise FileRefused(exc.code, f"{what}: {exc.why}" if what else exc.why,
                              path=exc.path) from None
        return path

    def own_folder(self, path: Path, what: str) -> Path:
        """``path``, a folder of the catalog's own a command writes into, when it is inside
        the catalog and no symbolic link (:func:`risutools.safeio.own_folder`); else
        ``outside-catalog`` or ``not-a-directory`` (exit 2)."""
        own_folder(self.root, path, what, f"the catalog {display_path(self.root)}")
        return path

    def rel(self, p: Path) -> str:
        """``p`` relative to the root, by the folder it is in (a link is named as itself,
        not as what it points at)."""
        try:
            return (real_path(p.parent) / p.name).relative_to(self.root).as_posix()
        except ValueError:
            return p.as_posix()

    # ------------------------------------------------------------------ documents

    def entries(self) -> list[Entry]:
        """Every document in the catalog (loaded once; unreadable files in load_problems)."""
        if self._entries is None:
            out = load_documents(self.root, exclude=self.config.exclude)
            self.load_problems = list(out.problems)
            seen: dict[Path, Path] = {}
            self._entries = [e for e in (_entry(ld, None, seen) for ld in out.documents)
                             if e is not None]
        return self._entries

    def adopt(self, loaded: LoadOutcome, hashes: list[str | None] | None = None) -> None:
        """Use documents already loaded (and hashed) from the catalog root (review loads
        once)."""
        self.load_problems = list(loaded.problems)
        hs = hashes if hashes is not None else [None] * len(loaded.documents)
        seen: dict[Path, Path] = {}
        self._entries = [e for e in (_entry(ld, h, seen) for ld, h in
                                     zip(loaded.documents, hs, strict=True)) if e is not None]

    def adopt_entries(self, entries: list[Entry], problems: list[Finding]) -> None:
        """Use entries the review's first pass made (each holding its document's head)."""
        self.load_problems = list(problems)
        self._entries = entries

    def entries_where(self, keep: Keep) -> list[Entry]:
        """The entries of the documents whose file (an NDJSON file's line) ``keep`` keeps
        (:func:`risutools.contract.sieve.load_where`), in the catalog's order, or every
        entry when they are loaded already: at least those, in order (a caller picks the
        ones it looks for).  Every file is listed and read as :meth:`entries` reads it;
        ``load_problems`` holds the listing's problems and the read files' own."""
        if self._entries is not None:
            return self._entries
        out = load_where(self.root, keep, exclude=self.config.exclude)
        self.load_problems = list(out.problems)
        seen: dict[Path, Path] = {}
        return [e for e in (_entry(ld, None, seen) for ld in out.documents) if e is not None]

    def by_id(self, component_id: str, also: tuple[str, ...] = ()) -> list[Entry]:
        """The entries whose ``component_id`` is ``component_id``, in the catalog's order:
        only the files that may hold it are parsed (:mod:`risutools.contract.sieve`; every
        file when it is not a plain string).  ``also``: the files that may hold one of
        these strings are parsed in the same reading, their entries kept (:attr:`aside`)."""
        found, more = needles((component_id,)), needles(also)
        if found is None or more is None or self._entries is not None:
            return [e for e in self.entries() if e.component_id == component_id]
        got = self.entries_where(lambda data, fmt: found.may_hold(data, fmt)
                                 or more.may_hold(data, fmt))
        if also:
            self.aside = (also, got)
        mine = [e for e in got if e.component_id == component_id]
        self._found = (component_id, mine)
        return mine

    def others_of(self, entry: Entry) -> list[str]:
        """Where the catalog's other documents of ``entry``'s component_id are (a copy, another
        version): transitions.ndjson names a component by its id alone, so a line written
        for one of them moves the others too.  ``entry`` may be one named by its path."""
        if self._entries is not None:
            if self._by_cid is None or self._by_cid[0] is not self._entries:
                index: dict[str, list[Entry]] = {}
                for x in self._entries:
                    index.setdefault(x.component_id, []).append(x)
                self._by_cid = (self._entries, index)
            found = self._by_cid[1].get(entry.component_id, [])
        elif self._found is not None and self._found[0] == entry.component_id:
            found = self._found[1]  # (what resolving it by its id read)
        else:
            found = self.by_id(entry.component_id)
        if len(found) == 1 and found[0] is entry:
            return []
        me = (os.path.realpath(entry.path), entry.line)
        return [x.where() for x in found
                if x is not entry and (os.path.realpath(x.path), x.line) != me]

    def resolve(self, component: str, also: tuple[str, ...] = ()) -> Entry:
        """A document by path (JSON/YAML file, or an NDJSON file holding one document) or by
        component_id (``also``: as :meth:`by_id` takes it)."""
        p = Path(component)
        if p.is_file():
            self.inside(p, "the document")  # a file given outside --catalog is not its own
            out = load_documents(p)
            docs = [e for e in (_entry(ld) for ld in out.documents) if e is not None]
            if out.problems:
                f = out.problems[0]
                raise DocumentError(Code.UNREADABLE_DOCUMENT, f.message,
                                    where=f"line {f.line}" if f.line else "", path=component)
            why = not_a_component(out.documents[0].doc) if len(out.documents) == 1 else None
            if why is not None:
                raise DocumentError(Code.UNSUPPORTED_DOCUMENT, why, path=component)
            if len(docs) != 1:
                raise DocumentError(
                    Code.AMBIGUOUS_COMPONENT, f"the file holds {len(docs)} documents; name one by "
                    "its component_id (with --catalog DIR)", path=component)
            return docs[0]
        found = self.by_id(component, also)
        if not found:
            raise self._not_found(component)
        if len(found) > 1:
            where = ", ".join(e.where() for e in found)
            raise DocumentError(Code.AMBIGUOUS_COMPONENT, f"{len(found)} documents have this "
                                f"component_id ({where}); name the file", path=component)
        self.inside(found[0].path, "the document")  # a link in the catalog to a file outside
        return found[0]

    def _not_found(self, component: str) -> DocumentError:
        """Why no document has ``component`` as its id: a file refused (outside the catalog)
        or unreadable that may be it (one named for it first, else the first of them: any
        document that cannot be read, a line of an NDJSON file too, may be the one sought),
        named with its own reason, else none at all."""
        refused = [f for f in self.load_problems if f.code == Code.OUTSIDE_CATALOG]
        if refused:  # (perhaps the document sought: never read)
            return DocumentError(Code.OUTSIDE_CATALOG, f"no document read with component_id "
                                 f"{component!r}: {refused[0].file} {refused[0].message}",
                                 path=component)
        unread = sorted((f for f in self.load_problems if f.file),
                        key=lambda f: component not in (f.file or ""))
        if unread:  # (one that could not be read may be it: say why, as validate)
            f = unread[0]
            more = f" (and {len(unread) - 1} more that cannot be read)" if len(unread) > 1 \
                else ""
            return DocumentError(Code.UNREADABLE_DOCUMENT, f"no document read with "
                                 f"component_id {quoted(component)}: {f.file}"
                                 + (f":{f.line}" if f.line else "") + f": {f.message}{more}",
                                 path=component)
        return DocumentError(Code.UNKNOWN_COMPONENT, f"no document with component_id "
                             f"{quoted(component)} in the catalog {display_path(self.root)} "
                             "(and no such file)", path=component)

    # ------------------------------------------------------------------ log, notes

    def log(self) -> CatalogLog:
        return read_log(self.root)

    def note_path(self, component_id: str) -> Path | None:
        """``notes/<component_id>.yaml``; None when the id is not a plain name
        (:func:`risutools.pathnames.plain_id`: a separator, ``..``, a control character
        never becomes a path)."""
        if not plain_id(component_id):
            return None
        return self.notes_dir / f"{component_id}.yaml"

    def replay_reports(self, component_id: str) -> list[Path]:
        """The reports in ``replays/`` named for the component (a ``replays/`` leading out
        of the catalog is refused)."""
        if not self.replays_dir.is_dir():
            return []
        self.inside(self.replays_dir, "replays/")
        return sorted(p for p in self.replays_dir.rglob("*.json")
                      if p.name.startswith(component_id))


@functools.lru_cache(maxsize=4096)
def _display(p: Path, cwd: str) -> str:
    return display_path(p)


def entry_format(path: Path) -> str:
    """An entry's format by its file's name: ``ndjson``, ``yaml`` or ``json``."""
    low = path.name.lower()
    return "ndjson" if low.endswith(NDJSON_EXTS) else "yaml" if low.endswith(YAML_EXTS) \
        else "json"


def _entry(ld: LoadedDocument, known: str | None = None,
           resolved: dict[Path, Path] | None = None) -> Entry | None:
    file = ld.file_path
    if not isinstance(ld.doc, dict) or file is None:
        return None
    try:
        h = known if known is not None else doc_sha256(ld.doc)
    except (ValueError, TypeError, UnicodeEncodeError, RecursionError):
        return None
    fmt = entry_format(file)
    if resolved is None:
        path = real_path(file)
    else:  # one resolve per file (an NDJSON catalog has thousands of entries in one)
        path = resolved.get(file) or resolved.setdefault(file, real_path(file))
    return Entry(path, ld.line if fmt == "ndjson" else None, fmt, ld.doc, h, ld,
                 key=(ld.file, ld.line))


def file_sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
