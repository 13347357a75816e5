"""Which curator notes file is a component's (``notes/`` of its catalog).

In order:
1. ``notes/<component_id>.yaml``;
2. the one file named after the component's stable part ``<type>.<origin>.<key>.`` (a
   ``slug:`` in the notes renamed the component: the file keeps the name it was written
   under, the stable id, and any slug is an alias of it);
3. a file whose ``for:`` names the module's RisuAI id or the SHA-256 of its source bytes (a
   repost: the same module under a new post id keeps its notes);
4. a file whose bytes have the digest the document records for its notes (``source_refs``,
   ``source_version: notes.yaml``).

The folder is read once per process while its files do not change (names, sizes and
modification times): only regular ``*.yaml`` files, each read bounded, and only those that
mention ``for:`` are parsed.  Every ``notes`` lookup (``ingest``, ``verify``, ``packet``,
the review's orphan check) goes through :func:`find_notes`.  Making sure the files did not
change lists the folder (a ``stat`` a file), so a command that looks up many components
takes the folder's :class:`NotesIndex` once (:func:`notes_index`) and hands it to each
lookup (``index=``): each is then O(1), where listing the folder each time made a run
O(components * notes files) (a re-ingest of 2,000 sources beside 1,000 notes: 11 s).
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

from risutools.errors import Code, ConfigError, RisuError
from risutools.safeio import FileRefused, read_or_raise, read_regular
from risutools.settings.catalog import MAX_NOTES_BYTES, NOTES_SOURCE_VERSION
from risutools.values import parse_value_bytes


@dataclass
class NotesIndex:
    folder: Path
    names: list[str] = field(default_factory=list)  # *.yaml regular files, sorted
    by_for: dict[str, str] = field(default_factory=dict)  # "risuai_id:x" / "sha256:.." -> name
    #: a ``for:`` key that several files name -> their names (sorted): ``notes-ambiguous``
    #: for the module it names, never the first file's by name
    for_many: dict[str, list[str]] = field(default_factory=dict)
    by_digest: dict[str, str] = field(default_factory=dict)  # "sha256:<file bytes>" -> name
    named: frozenset[str] = field(init=False)  # the names, to look one up
    #: the names under each stable part (:func:`stable_prefix`) they begin with
    by_prefix: dict[str, list[str]] = field(init=False)
    #: :func:`notes_signature` of the folder, from the bytes read here; None when the
    #: folder holds a ``*.yaml`` this index does not read (a hidden name, a folder, a FIFO,
    #: a file past the bound), whose signature its caller takes by reading the folder
    signature: str | None = None

    def __post_init__(self) -> None:
        self.named = frozenset(self.names)
        self.by_prefix = {}
        for name in self.names:
            prefix = stable_prefix(name)  # (a name begins with "a.b.c." when this is it)
            if prefix is not None:
                self.by_prefix.setdefault(prefix, []).append(name)


_CACHE: dict[str, tuple[Any, NotesIndex]] = {}


def notes_index(folder: str | os.PathLike[str]) -> NotesIndex:
    """The notes folder, indexed (an empty index when it is not a folder)."""
    d = Path(folder)
    try:
        entries = sorted((e.name, e.stat(follow_symlinks=False)) for e in os.scandir(d)
                         if e.name.endswith(".yaml"))
    except OSError:
        return NotesIndex(d)
    files = [(n, st) for n, st in entries if stat.S_ISREG(st.st_mode) and n[:1] != "."]
    stamp = tuple((n, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino) for n, st in files)
    # (what the signature reads and this index does not: not a link, not a file read here)
    whole = not any(n[:1] == "." or not (stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode))
                    for n, st in entries)
    hit = _CACHE.get(str(d))
    if hit is not None and hit[0] == (stamp, whole):
        return hit[1]
    ix = NotesIndex(d, [n for n, _ in files])
    signed = hashlib.sha256()
    for name in ix.names:
        try:
            data = read_regular(d / name, MAX_NOTES_BYTES)
        except FileRefused:
            whole = False
            continue
        signed.update(os.fsencode(name) + b"\0" + data + b"\0")
        ix.by_digest.setdefault("sha256:" + hashlib.sha256(data).hexdigest(), name)
        if b"for:" in data:
            _index_for(ix, name, data)
    ix.signature = signed.hexdigest() if whole else None
    _CACHE[str(d)] = ((stamp, whole), ix)
    return ix


def _index_for(ix: NotesIndex, name: str, data: bytes) -> None:
    """The ``for:`` of the notes file ``name`` (its bytes ``data``) in ``ix.by_for``."""
    try:
        doc = parse_value_bytes(data, name, "yaml")
    except RisuError:
        return  # (a broken notes file is the projection's to report)
    target = doc.get("for") if isinstance(doc, dict) else None
    if isinstance(target, dict):
        for key in ("risuai_id", "source_sha256"):
            if isinstance(target.get(key), str):
                k = f"{key}:{target[key]}"
                first = ix.by_for.setdefault(k, name)
                if first != name:
                    ix.for_many[k] = sorted({*ix.for_many.get(k, [first]), name})


def notes_signature(folder: Path) -> str:
    """A digest of every notes file of ``folder`` (name and bytes: what ingest keys its
    cache by, so a changed note projects again), the folder read for it: each ``*.yaml``
    but a link, read bounded; raises (one line) for one that cannot be read."""
    h = hashlib.sha256()
    for p in sorted(folder.glob("*.yaml")):
        if p.is_symlink():  # (a link is never read: as the notes index; a folder or a FIFO
            continue  # in its place is one line)
        data = read_or_raise(p, MAX_NOTES_BYTES)
        h.update(os.fsencode(p.name) + b"\0" + data + b"\0")
    return h.hexdigest()


def stable_prefix(component_id: str) -> str | None:
    """``<type>.<origin>.<key>.`` of a component id (None when it has no such form)."""
    parts = component_id.split(".")
    return ".".join(parts[:3]) + "." if len(parts) >= 4 else None


def find_notes(folder: str | os.PathLike[str], component_id: str, *,
               risuai_id: str | None = None, source_sha256: str | None = None,
               notes_sha256: str | None = None, index: NotesIndex | None = None,
               ) -> Path | None:
    """The notes file of a component (see the module docstring), or None.  ``index``: the
    folder's, taken once by a caller that looks up many components (else taken here)."""
    if not _plain(component_id):
        return None  # (an id never names a path outside notes/)
    ix = index if index is not None else notes_index(folder)
    decided, found = notes_by_id(ix, component_id)
    if decided:
        return found
    for key, value in (("risuai_id", risuai_id), ("source_sha256", source_sha256)):
        if value and f"{key}:{value}" in ix.for_many:
            names = ix.for_many[f"{key}:{value}"]
            raise ConfigError(Code.NOTES_AMBIGUOUS, f"{len(names)} notes files name this "
                              f"module by {key} ({', '.join(names[:5])}"
                              + (" ..." if len(names) > 5 else "") + "); keep one",
                              path=str(ix.folder))
        if value and f"{key}:{value}" in ix.by_for:
            return ix.folder / ix.by_for[f"{key}:{value}"]
    if notes_sha256 and notes_sha256 in ix.by_digest:
        return ix.folder / ix.by_digest[notes_sha256]
    return None


def _plain(component_id: str) -> bool:
    return bool(component_id) and "/" not in component_id and "\\" not in component_id \
        and not component_id.startswith(".")


def notes_by_id(index: NotesIndex, component_id: str) -> tuple[bool, Path | None]:
    """(whether a component's id alone decides its notes file, that file): steps 1 and 2
    of the module docstring (its name, or the one alias of its stable part), which
    :func:`find_notes` takes before any document key, and an id that names no file; False
    when the document's keys decide (steps 3 and 4)."""
    decided, name = notes_name_by_id(index, component_id)
    return decided, (index.folder / name if name is not None else None)


def notes_name_by_id(index: NotesIndex, component_id: str) -> tuple[bool, str | None]:
    """:func:`notes_by_id` with the file's name (for a caller that looks up thousands and
    wants their names: no path made for each)."""
    if not _plain(component_id):
        return True, None
    name = f"{component_id}.yaml"
    if name in index.named:
        return True, name
    prefix = stable_prefix(component_id)
    alias = index.by_prefix.get(prefix, []) if prefix is not None else []
    if len(alias) == 1:
        return True, alias[0]
    return False, None


class DocumentKeys(TypedDict):
    """What :func:`document_keys` finds (keyword arguments of :func:`find_notes`)."""

    source_sha256: str | None
    notes_sha256: str | None


def document_keys(doc: Any) -> DocumentKeys:
    """What :func:`find_notes` can match a document by: its source digest
    (``source_refs[0]``) and the digest it records for its notes."""
    prov = doc.get("provenance") if isinstance(doc, dict) else None
    refs = prov.get("source_refs") if isinstance(prov, dict) else None
    refs = [r for r in refs if isinstance(r, dict)] if isinstance(refs, list) else []
    src = refs[0].get("sha256") if refs and refs[0].get("source_version") != NOTES_SOURCE_VERSION \
        else None
    note = next((r.get("sha256") for r in refs if r.get("source_version") == NOTES_SOURCE_VERSION),
                None)
    return {"source_sha256": src if isinstance(src, str) else None,
            "notes_sha256": note if isinstance(note, str) else None}


def orphans(folder: str | os.PathLike[str], used: set[str],
            index: NotesIndex | None = None) -> list[str]:
    """The notes files (names) of the folder that no component took (``used``: names)."""
    ix = index if index is not None else notes_index(folder)
    return [n for n in ix.names if n not in used]
