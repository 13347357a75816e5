"""MC306's reading: whether a catalog's transition log extends the base branch's log.

The log is append-only, so a pull request's ``transitions.ndjson`` must begin with the base
branch's log byte for byte (``--base-log FILE``: a copy CI takes from the base branch).
Lines cut off the end, with the documents put back as they were, read as an older catalog
that every other check passes; only the base branch's bytes tell.  Both files are read
side by side a chunk at a time (:data:`~risutools.safeio.CHUNK`), never whole; once they
differ, the line of the first byte that differs is read from each (at most
:data:`~risutools.values.MAX_DOCUMENT_BYTES`, an NDJSON line's bound) to say how.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from risutools.canonical import canonical
from risutools.safeio import CHUNK, FileRefused, check_inside, open_regular
from risutools.settings.catalog import LOG_NAME
from risutools.values import MAX_DOCUMENT_BYTES, parse_json_text

BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True)
class Divergence:
    """Where a catalog's log stops extending the base log: the base log's line (None: the
    catalog's log could not be read) and why, one sentence."""

    line: int | None
    why: str
    kept: int  # the base log's lines (the catalog's log must keep every one)


@dataclass(frozen=True)
class _Place:
    offset: int  # the first byte of the base log the catalog's log does not have
    line: int  # its line (1-based, as the log's checks count them)
    start: int  # the offset that line starts at (the same in both: the bytes before agree)


def compare_logs(base: Path, root: Path) -> Divergence | None:
    """Why ``root``'s ``transitions.ndjson`` does not begin with the bytes of the base log
    ``base`` (None: it does; a catalog with no log has an empty one).  A base log that is
    not a regular file raises :class:`~risutools.safeio.FileRefused` (the caller's usage
    error: never read as an empty base); a catalog log that cannot be read (a FIFO, a link
    out of the catalog) is a divergence with no line."""
    with open_regular(base) as b:
        path = root / LOG_NAME
        if not os.path.lexists(path):
            return _explain(b, None, _first_difference(b, None))
        try:
            check_inside(root, path)
            mine = open_regular(path)
        except FileRefused as exc:
            kept = _lines_from(b, 0)
            return Divergence(None, f"it cannot be read ({exc.why}), so it cannot be shown to "
                              "extend the base branch's log", kept)
        with mine:
            return _explain(b, mine, _first_difference(b, mine))


def _common(a: bytes, b: bytes) -> int:
    """How many bytes ``a`` and ``b`` share from their start (a binary search: no byte
    loop)."""
    va, vb = memoryview(a), memoryview(b)
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if va[:mid] == vb[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _first_difference(base: BinaryIO, mine: BinaryIO | None) -> _Place | None:
    """The first base byte the catalog's log (``mine``; None: no log) does not have, read a
    chunk at a time; a base log whose last line has no line feed is extended only by a line
    feed (the catalog's log may not continue that line)."""
    pos, line, start, last = 0, 1, 0, b"\n"
    while chunk := base.read(CHUNK):
        got = mine.read(len(chunk)) if mine is not None else b""
        n = len(chunk) if got == chunk else _common(chunk, got)
        nl = chunk.count(b"\n", 0, n)
        if nl:
            start = pos + chunk.rindex(b"\n", 0, n) + 1
        if n < len(chunk):
            return _Place(pos + n, line + nl, start)
        line, pos, last = line + nl, pos + n, chunk[-1:]
    if pos and last != b"\n" and mine is not None and mine.read(1) not in (b"", b"\n"):
        return _Place(pos, line, start)
    return None


def _explain(base: BinaryIO, mine: BinaryIO | None, at: _Place | None) -> Divergence | None:
    """The divergence at ``at``: the line of each log there, and how they differ."""
    if at is None:
        return None
    kept = _lines_from(base, 0)
    theirs = _line_at(base, at.start)
    ours = _line_at(mine, at.start) if mine is not None else b""
    if not ours:
        gone = _lines_from(base, at.start)
        return Divergence(at.line, f"the log ends before it: the base branch's lines "
                          f"{at.line}-{at.line + gone - 1} are cut off" if gone > 1 else
                          "the log ends before it: the base branch's last line is cut off",
                          kept)
    after = (_line_at(base, at.start + len(theirs)), _line_at(mine, at.start + len(ours)))
    return Divergence(at.line, _how(theirs, ours, at.line, after), kept)


def _how(theirs: bytes, ours: bytes, line: int, after: tuple[bytes, bytes]) -> str:
    """How the catalog's line ``ours`` differs from the base log's line ``theirs`` (``after``:
    the line after each, the base's and the catalog's)."""
    t, o = theirs.removesuffix(b"\n"), ours.removesuffix(b"\n")
    if not ours.endswith(b"\n") and t.startswith(o):
        return "the line is cut short (the log ends in the middle of it)"
    if line == 1 and o.startswith(BOM) and o[len(BOM):] == t:
        return "a byte order mark (U+FEFF) was written before it: the log was re-encoded"
    if o.removesuffix(b"\r") == t.removesuffix(b"\r"):
        return "its line ending was changed (CRLF for LF, or LF for CRLF): the log was re-encoded"
    if o.startswith(t) and len(o) > len(t):
        return "text was added to the end of the line: the line was edited"
    if _same_record(t, o):
        return ("it holds the same record written with other bytes (key order, spacing or "
                "escapes): the line was re-encoded")
    if after[0] and o == after[0].removesuffix(b"\n"):
        if after[1].removesuffix(b"\n") == t:
            return "the line and the next were swapped: lines were moved"
        return "the base branch's line was removed (the next line moved up)"
    return "the line was edited, removed or moved"


def _same_record(a: bytes, b: bytes) -> bool:
    """Whether two log lines hold the same JSON value (both UTF-8 JSON text)."""
    try:
        x, bad_x = parse_json_text(a.decode("utf-8"), line=None)
        y, bad_y = parse_json_text(b.decode("utf-8"), line=None)
    except UnicodeDecodeError:
        return False
    if bad_x is not None or bad_y is not None:
        return False
    try:  # (canonical bytes: 1, 1.0 and true are not one value to a reader of the log)
        return canonical(x) == canonical(y)
    except (ValueError, TypeError, RecursionError):
        return False


def _line_at(f: BinaryIO | None, offset: int) -> bytes:
    """The line from ``offset`` (with its line feed; at most an NDJSON line's bound)."""
    if f is None:
        return b""
    f.seek(offset)
    return f.readline(MAX_DOCUMENT_BYTES + 1)


def _lines_from(f: BinaryIO, offset: int) -> int:
    """The lines of ``f`` from ``offset`` to its end (a last line without a line feed
    counted), a chunk at a time."""
    f.seek(offset)
    n, last = 0, b"\n"
    while chunk := f.read(CHUNK):
        n += chunk.count(b"\n")
        last = chunk[-1:]
    return n + (last != b"\n")
