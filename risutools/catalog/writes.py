"""The one write path for commands that change a catalog (approve, promote, activate).

- :func:`catalog_lock`: an exclusive inter-process lock on ``CATALOG/.risutools.lock``
  held across read-check-write, so two writers never interleave;
- :func:`write_document`: re-reads the document's file under the lock, refuses
  ("changed since you read it") when its canonical hash (the whole document, runtime
  fields included: not the base hash) is no longer the one the caller read, and replaces
  it through ``fsio.atomic_write`` with
  compare-and-swap on the file bytes (so writers that do not take the catalog
  lock, such as ingest or ``replay --update``, cannot be overwritten either);
- :func:`append_log`: one canonical JSON line appended to ``transitions.ndjson``
  (``O_APPEND``, one ``write``, fsync); lines are never rewritten;
- :func:`write_new_file`: approval records and packets (never overwrite).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from risutools.canonical import canonical, doc_sha256
from risutools.catalog.catalog import Catalog, Entry, file_sha256
from risutools.contract.loaders import load_bytes
from risutools.contract.shown import display_path
from risutools.contract.transitions import MAX_LOG_BYTES
from risutools.errors import Code, RisuError, WriteConflict
from risutools.fsio import CONFLICT as CHANGED
from risutools.fsio import append_line as fsio_append_line
from risutools.fsio import atomic_write, sweep_temp_files, write_lock
from risutools.jsonlines import detect_indent
from risutools.replay.component import BOM, ComponentFile, dump_component
from risutools.safeio import FileRefused, read_inside
from risutools.settings import lifecycle
from risutools.settings.catalog import LOG_NAME
from risutools.targets import os_error_line
from risutools.values import MAX_DOCUMENT_BYTES


@contextlib.contextmanager
def catalog_lock(cat: Catalog) -> Iterator[None]:
    """Hold the catalog's writer lock across read-check-write: ``fsio.write_lock`` on the
    catalog folder, the same lock every other writer into that folder takes (re-entrant,
    so the ``atomic_write`` / ``append_line`` inside take it again without waiting)."""
    try:
        with write_lock(cat.lock_path):
            for folder in (cat.root, cat.notes_dir, cat.approvals_dir):  # (what a killed
                if folder.is_dir() and not folder.is_symlink():  # writer left there: gone,
                    sweep_temp_files(folder)  # though this command may write nothing)
            yield
    except OSError as exc:
        raise os_error_line(exc, cat.lock_path) from None


def conflict_error(entry: Entry, detail: str) -> WriteConflict:
    return WriteConflict(Code.WRITE_CONFLICT, f"{CHANGED} ({entry.component_id}: {detail}); "
                         "read it again and re-run", path=entry.where())


#: an NDJSON catalog a promotion rewrites is held in memory whole: at most this many bytes
MAX_REWRITE_BYTES = 512 * 1024 * 1024


def current_bytes(cat: Catalog, entry: Entry) -> tuple[bytes, dict[str, Any]]:
    """The file's bytes now and the document in it; WriteConflict when it is not the base.
    Read like every catalog read: a regular file inside the catalog, bounded (a file that
    became a FIFO, a device or a link out of the catalog is refused, never read)."""
    limit = MAX_REWRITE_BYTES if entry.fmt == "ndjson" else MAX_DOCUMENT_BYTES
    if not os.path.lexists(entry.path):
        raise conflict_error(entry, "the file is gone")
    try:
        raw = read_inside(cat.root, entry.path, limit, f"the catalog {display_path(cat.root)}")
    except FileRefused as exc:
        if exc.code == Code.NOT_FOUND:
            raise conflict_error(entry, "the file is gone") from None
        raise
    out = load_bytes(raw, str(entry.path), fmt=entry.fmt)
    for ld in out.documents:
        if entry.fmt == "ndjson" and ld.line != entry.line:
            continue
        if isinstance(ld.doc, dict):
            try:
                now = doc_sha256(ld.doc)
            except (ValueError, TypeError):
                break
            if now != entry.doc_sha256:  # (the whole document: runtime fields included)
                raise conflict_error(entry, f"read {entry.doc_sha256[:19]}…, now {now[:19]}…")
            return raw, ld.doc
        break
    raise conflict_error(entry, "the document is no longer where it was read")


def render_document(entry: Entry, raw: bytes, doc: dict[str, Any]) -> bytes:
    """The file's new bytes: the same format (JSON indentation, YAML, or the one NDJSON
    line replaced by the canonical form; every other line kept byte for byte)."""
    if entry.fmt == "ndjson":
        lines = raw.split(b"\n")
        assert entry.line is not None
        was = lines[entry.line - 1]
        # (the line's own end and the file's byte-order mark kept: a CRLF file stays one)
        bom = BOM if entry.line == 1 and was.startswith(BOM) else b""
        lines[entry.line - 1] = bom + canonical(doc) + (b"\r" if was.endswith(b"\r") else b"")
        return b"\n".join(lines)

    text = raw.decode("utf-8-sig")
    indent = detect_indent(text) if entry.fmt == "json" else 2
    return dump_component(ComponentFile(entry.path, raw, doc, entry.fmt, indent), doc)


def write_document(cat: Catalog, entry: Entry, raw: bytes, new_doc: dict[str, Any]) -> None:
    """Replace the document (CAS on ``raw``, the bytes checked under the lock); only a file
    inside the catalog is ever written (never through a link leading out of it)."""
    cat.inside(entry.path, "the document")
    data = render_document(entry, raw, new_doc)
    try:
        atomic_write(entry.path, data, expect_sha256=file_sha256(raw))
    except WriteConflict:
        raise conflict_error(entry, "the file was rewritten during the write") from None
    except OSError as exc:
        raise os_error_line(exc, entry.path) from None


def append_line(path: Path, line: bytes, *, expect_size: int | None = None) -> int:
    """Append one line through the one write path (``fsio.append_line``): a last line left
    without its newline by a crash is closed first, never altered; returns its offset."""
    return fsio_append_line(path, line, torn_tail="newline", expect_size=expect_size)


def log_now(cat: Catalog) -> bytes | None:
    """The log's bytes as they are (None: there is no log), read like every catalog read:
    a regular file inside the catalog, at most ``MAX_LOG_BYTES`` (else the refusal, exit 2:
    a log that cannot be read is never taken for an empty history)."""
    if not os.path.lexists(cat.log_path):
        return None
    return read_inside(cat.root, cat.log_path, MAX_LOG_BYTES,
                       f"the catalog {display_path(cat.root)}")


def append_log(cat: Catalog, record: dict[str, Any], before: bytes | None) -> int:
    """Append a transition record to the catalog's log, whose bytes under the lock are
    ``before`` (compare-and-swap on its size); returns the new line's number."""
    seen = before or b""
    cat.inside(cat.log_path, LOG_NAME)
    try:
        offset = append_line(cat.log_path, canonical(record), expect_size=len(seen))
    except OSError as exc:
        raise RisuError(Code.UNWRITABLE, f"cannot append: {exc.strerror or exc}",
                        path=str(cat.log_path)) from None
    # the lines before it, and the newline that closed a torn last line (when one did)
    return seen.count(b"\n") + (offset - len(seen)) + 1


def write_new_file(path: Path, data: bytes, *, sync_dir: bool = True) -> None:
    """A new file (approval record, packet): atomic, never over an existing one.
    ``sync_dir=False``: its folder's fsync left to the caller (a batch of new files in one
    folder syncs it once, at its end: :func:`risutools.fsio.fsync_directory`)."""
    try:
        atomic_write(path, data, expect_absent=True, sync_dir=sync_dir)
    except WriteConflict:
        raise
    except OSError as exc:
        raise os_error_line(exc, path) from None


def link(record: dict[str, Any], entry: Entry, last_after: Any) -> dict[str, Any]:
    """``record``, a new log line starting from ``entry``'s base hash, linked to the line
    before it: when that line ended at the whole-document hash of the same document (a line
    written before the base hash left the runtime fields out), ``continues`` names it, so
    the chain stays one (RV204, MC305)."""
    if isinstance(last_after, str) and last_after != entry.base_sha256 and \
            last_after in lifecycle.base_names(entry.doc):
        record["continues"] = last_after
    return record
