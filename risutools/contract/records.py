"""The approval records a transition log names, read for the log's checks: where a line's
``approval.file`` is (:class:`Places`: inside the catalog only, each folder resolved once a
log), what a record file holds (:func:`parse_record`, one parse per process for the same
bytes) and what it is (:func:`record_key`, its identity whatever file holds it).

A log is read once a run (:class:`~risutools.contract.transitions.CatalogLog`: a writer reads
it again under the lock), and so are the records it names: :meth:`Places.record` keeps what
each record file held when it was first read, keyed by the file's status as ``os.lstat``
sees it at every lookup (device, inode, size, modification and change times), so a file
changed or replaced since is read again.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from risutools.canonical import canonical, sha256_prefixed
from risutools.contract.loaders import load_bytes
from risutools.jsontypes import json_type_name
from risutools.safeio import FileRefused, check_inside, read_regular, within
from risutools.settings.lifecycle import APPROVAL_FIELDS
from risutools.values import MAX_DOCUMENT_BYTES


def signed_bytes(record: dict[str, Any]) -> bytes:
    """What a record's signature covers: its canonical JSON without ``signature``."""
    return canonical({k: v for k, v in record.items() if k != "signature"})


def record_key(record: dict[str, Any]) -> str:
    """A record's identity: ``record:`` and the SHA-256 of :func:`signed_bytes`.  Files
    holding the same decision -- a copy, a link, the record written again with other
    spacing, quoting, key order or signature -- are one record, whatever their names."""
    return "record:" + sha256_prefixed(signed_bytes(record))


def _approval_path(root: Path, name: str) -> Path | None:
    for cand in (root / name, root / "approvals" / name):
        try:
            check_inside(root, cand)
        except FileRefused:
            continue  # never outside the catalog
        if os.path.lexists(cand) and not os.path.isdir(cand):
            return cand  # (a FIFO or a device is then said to be unreadable, not missing)
    return None


#: the records parsed by this process, by their bytes and syntax (a review reads each record
#: for the log's checks, the gates and the approvals list: parsed once); kept only for a
#: record of at most ``_PARSED_RECORD`` bytes (a real one is a few hundred), at most
#: ``_PARSED_BYTES`` of them in all (what is kept stays a few times that)
_PARSED_RECORD = 8 << 10
_PARSED_BYTES = 8 << 20
_parsed: dict[tuple[bytes, bool], tuple[dict[str, Any] | None, str]] = {}
_parsed_size = 0


def parse_record(data: bytes, name: str) -> tuple[dict[str, Any] | None, str]:
    """An approval record's mapping (JSON when ``name`` ends ``.json``, else YAML), or None
    and why not: the one reading of a record, for the log's checks and the catalog's
    approvals.  A file holding several YAML documents is not a record (one of them would be
    read and the others kept unseen).  The same bytes are parsed once a process (each
    caller gets a mapping of its own), whatever name they are read under (the name says
    only which syntax: the answer, its message included, is the same for every name of
    that syntax)."""
    global _parsed_size
    key = (data, name.endswith(".json"))
    got = _parsed.get(key)
    if got is None:
        got = _parse_record(data, name)
        if len(data) <= _PARSED_RECORD and _parsed_size + len(data) <= _PARSED_BYTES:
            _parsed[key] = got
            _parsed_size += len(data)
    doc, why = got
    return (_copied(doc) if doc is not None else None), why


def _copied(value: Any) -> Any:
    """A copy of a parsed record's value (mappings and lists made anew, the scalars shared:
    they cannot change); nesting is bounded by the parser."""
    if type(value) is dict:
        return {k: _copied(v) for k, v in value.items()}
    if type(value) is list:
        return [_copied(v) for v in value]
    return value


def _parse_record(data: bytes, name: str) -> tuple[dict[str, Any] | None, str]:
    out = load_bytes(data, name, fmt="json" if name.endswith(".json") else "yaml")
    if out.problems:
        return None, out.problems[0].message
    if len(out.documents) > 1:
        return None, (f"several YAML documents in one file (the second at line "
                      f"{out.documents[1].line}); a record is one")
    if not out.documents or not isinstance(out.documents[0].doc, dict):
        return None, "not a mapping"
    return out.documents[0].doc, ""


def _load_approval(path: str | Path, found: tuple[int, int] | None = None
                   ) -> tuple[dict[str, Any] | None, str, int]:
    """(a record's mapping and the digest of its bytes, or None and why it is none; how
    many bytes were read).  ``found``: the (device, inode) ``os.lstat`` found at ``path``
    (see :func:`~risutools.safeio.read_regular`)."""
    try:  # regular files only, bounded (see risutools.safeio)
        data = read_regular(path, MAX_DOCUMENT_BYTES, found=found)
    except FileRefused as exc:
        return None, exc.why, 0
    doc, why = parse_record(data, os.path.basename(path))
    if doc is None:
        return None, why, len(data)
    for key in APPROVAL_FIELDS:
        if key in doc and not isinstance(doc[key], str):
            return None, f"{key} is {json_type_name(doc[key])}, not text", len(data)
    return doc, sha256_prefixed(data), len(data)


@dataclass
class Record:
    """What a record file a log line names held when it was read: its mapping (shared by
    every reader of the log: read, never changed) and ``said``, the digest of its bytes,
    or None and why it is no record."""

    doc: dict[str, Any] | None
    said: str
    _key: str | None = None

    @property
    def key(self) -> str | None:
        """:func:`record_key` of the record (None: it is none), computed once."""
        if self._key is None and self.doc is not None:
            self._key = record_key(self.doc)
        return self._key


#: what one :class:`Places` keeps of the records it read (:meth:`Places.record`): records of
#: at most ``_KEPT_RECORD`` bytes, ``_KEPT_BYTES`` of them in all (a real record is a few
#: hundred bytes: a catalog of 30,000 records is kept whole); any other is read each time
_KEPT_RECORD = 8 << 10
_KEPT_BYTES = 16 << 20


class Places:
    """:func:`_approval_path` for the lines of one log, each folder resolved once (as
    :class:`~risutools.safeio.FolderFiles` reads a folder's files): a path whose own name
    is no symbolic link resolves to its resolved folder and that name (``os.path.realpath``
    takes the same steps), so it is inside the root exactly when that is; any other path is
    asked of :func:`_approval_path` itself."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._top = os.fspath(root)
        self._real_root = os.path.realpath(root)
        self._folders: dict[str, str] = {}
        #: (path, device, inode, size, modification and change times) -> what it held
        self._records: dict[tuple[str, int, int, int, int, int], Record] = {}
        self._kept = 0

    def path(self, name: str) -> Path | None:
        """:func:`_approval_path` of ``name``."""
        got = self.find(name)
        return Path(got[0]) if got is not None else None

    def record(self, name: str) -> Record | None:
        """The record file ``name`` is (:meth:`find`) as it is now: None when there is none.
        A regular file found without following a link is read once while its status stays
        the same (see the module's docstring); anything else is read at every call.  An
        ``OSError`` is raised as it comes."""
        got = self.find(name)
        if got is None:
            return None
        path, st = got
        if st is None or not stat.S_ISREG(st.st_mode):
            doc, said, _ = _load_approval(path)
            return Record(doc, said)
        key = (path, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        known = self._records.get(key)
        if known is None:
            doc, said, size = _load_approval(path, (st.st_dev, st.st_ino))
            known = Record(doc, said)
            if size <= _KEPT_RECORD and self._kept + size <= _KEPT_BYTES:
                self._records[key] = known
                self._kept += size
        return known

    def find(self, name: str) -> tuple[str, os.stat_result | None] | None:
        """The file ``name`` is (:func:`_approval_path`) and its status when no link was
        followed to it (None: not taken), or None."""
        for under in ("", "approvals"):
            cand = os.path.join(self._top, under, name)
            folder, _, own = cand.rpartition("/")
            try:
                st = os.lstat(cand)
            except OSError:
                continue  # (nothing there: ``os.path.lexists`` says the same)
            except ValueError:  # (a NUL: what _approval_path does with it)
                return _unknown(_approval_path(self.root, name))
            if own in ("", ".", "..") or not folder or stat.S_ISLNK(st.st_mode):
                return _unknown(_approval_path(self.root, name))
            real = self._folders.get(folder)
            if real is None:
                real = self._folders[folder] = os.path.realpath(folder)
            if within(os.path.join(real, own), self._real_root) and \
                    not stat.S_ISDIR(st.st_mode):
                return cand, st
        return None


def _unknown(path: Path | None) -> tuple[str, os.stat_result | None] | None:
    return None if path is None else (os.fspath(path), None)
