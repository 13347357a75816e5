"""``ingest --ndjson``: the generated lines merged into ``components.ndjson``, byte for byte
where nothing changes (see :func:`write_ndjson`)."""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

from risutools.catalog.evidence import reprojected
from risutools.catalog.outcome import IngestResult
from risutools.catalog.render import review_status
from risutools.errors import RisuError, WriteConflict
from risutools.fsio import atomic_write, display_path
from risutools.jsonlines import same_json
from risutools.jsonplaces import PARSE_INT
from risutools.replay.component import BOM
from risutools.safeio import FileRefused, read_regular
from risutools.targets import os_error_line
from risutools.values import parse_value_bytes

NDJSON_NAME = "components.ndjson"
#: a components.ndjson larger than this is not read (kept as it is, reported; nothing
#: written): the merge holds the file and its lines in memory, about twice its size
MAX_NDJSON_BYTES = 1 << 30


#: a generated line: the SHA-256 of its text when known (else None), and what renders the
#: text (called only when no line of the file has that digest; None: the document could
#: not be had, so it is not written this run)
Line = tuple[str | None, Callable[[], str | None]]


def write_ndjson(result: IngestResult, target: Path, docs: dict[str, Line]) -> None:
    """Merge the generated lines (component_id -> its line, :data:`Line`) into
    components.ndjson.

    The file is split on ``\n`` only and handled as bytes: a line that is not replaced
    is written back exactly as read.  Existing lines keep their place; a candidate
    line whose document changed is replaced in place; new ids are appended in id order.
    A line that cannot be read is kept and reported, and the component it belongs to
    (found by its ``"component_id"``) is not written; when its id cannot be found the
    file is not changed at all.  A reviewed line, or an id on two lines, is kept too.
    A line whose bytes have the digest of a generated line is that line: it is neither
    parsed nor compared, and the generated one is not rendered.
    """
    shown = display_path(target)
    found = _read_ndjson(result, target)
    if found is None:
        return
    raw, lines = found
    known = {d: cid for cid, (d, _) in docs.items() if d is not None}
    indexed = _index_lines(result, lines, shown, known)
    if indexed is None:
        return
    out, wrote = _merge_lines(result, lines, indexed, docs, shown)
    if not wrote and raw is not None:
        return
    data = b"".join(line + b"\n" for line in out)
    try:
        if raw is None:
            atomic_write(target, data, expect_absent=True)
        else:
            atomic_write(target, data, expect_sha256=hashlib.sha256(raw).hexdigest())
    except WriteConflict as exc:
        result.collisions.append(exc.one_line())
        return
    except OSError as exc:
        raise os_error_line(exc, target) from None
    result.written.extend(wrote)


def _read_ndjson(
    result: IngestResult, target: Path
) -> tuple[bytes | None, list[bytes]] | None:
    """(the file's bytes or None when there is none, its lines without their ``\n``);
    None when it cannot be read (reported: nothing is written)."""
    why = None
    try:
        raw = None
        if os.path.lexists(target):
            st = os.lstat(target)
            if not stat.S_ISREG(st.st_mode):  # a folder, link, FIFO, device
                raise IsADirectoryError(0, "not a regular file")
            # (the file looked at: no link followed, never a wait on a FIFO put there since)
            raw = read_regular(target, MAX_NDJSON_BYTES, found=(st.st_dev, st.st_ino))
    except FileRefused as exc:
        why = exc.why
    except OSError as exc:
        why = str(exc.strerror or exc)
    if why is not None:
        result.kept_unreadable.append(
            f"{display_path(target)}: unreadable-document: {why}; left as it is, nothing "
            "written")
        return None
    lines: list[bytes] = []
    if raw:
        lines = raw.split(b"\n")
        if lines[-1] == b"":
            lines.pop()  # the final newline
    return raw, lines


def line_digests(target: Path) -> set[str]:
    """The SHA-256 of each line of the file ``target`` (split on ``\n``): what
    :func:`write_ndjson` will find there unless it changes first; none when there is no
    such regular file or it cannot be read."""
    try:
        st = os.lstat(target)
        raw = read_regular(target, MAX_NDJSON_BYTES, found=(st.st_dev, st.st_ino))
    except (FileRefused, OSError):
        return set()
    return {hashlib.sha256(line).hexdigest() for line in raw.split(b"\n")}


def _index_lines(
    result: IngestResult, lines: list[bytes], shown: str, known: dict[str, str]
) -> tuple[dict[str, list[int]], set[str], set[int]] | None:
    """(component_id -> its line numbers (0-based), the ids this run must not write, the
    lines that are the generated line of their id: ``known`` maps each generated line's
    digest to its id); None when a line that cannot be read names no id (reported: the
    file is not changed)."""
    index: dict[str, list[int]] = {}
    blocked: set[str] = set()
    same: set[int] = set()
    sha256 = hashlib.sha256
    for n, line in enumerate(lines):
        if not line.strip():
            continue
        if known:
            cid = known.get(sha256(line).hexdigest())
            if cid is not None:
                index.setdefault(cid, []).append(n)
                same.add(n)
                continue
        cid, problem = _read_line(line, f"{shown}: line {n + 1}")
        if problem is not None:
            result.kept_unreadable.append(
                problem + (f"; kept, {cid} not written" if cid is not None else
                           f"; kept; cannot tell its component, so {NDJSON_NAME} is not "
                           "changed")
            )
            if cid is None:
                return None
            blocked.add(cid)
            continue
        assert cid is not None
        index.setdefault(cid, []).append(n)
    return index, blocked, same


def _merge_lines(
    result: IngestResult, lines: list[bytes],
    indexed: tuple[dict[str, list[int]], set[str], set[int]], docs: dict[str, Line],
    shown: str,
) -> tuple[list[bytes], list[str]]:
    """(the file's new lines, the ids written): a candidate line replaced in place, new ids
    appended in id order; unchanged, reviewed, blocked and duplicated ids left as they are."""
    index, blocked, same = indexed
    out = list(lines)
    wrote: list[str] = []
    for cid in sorted(docs):
        if cid in blocked:
            continue
        at = index.get(cid, [])
        if len(at) > 1:
            result.kept_unreadable.append(
                f"{shown}: lines {', '.join(str(i + 1) for i in at)}: duplicate-id: {cid} "
                "is on several lines; kept, not written"
            )
            continue
        if at and at[0] in same:
            result.unchanged.append(cid)
            continue
        text = docs[cid][1]()
        if text is None:
            result.collisions.append(f"{shown}: {cid}: its document could not be read "
                                     "again from the cache; not written (the next run "
                                     "writes it)")
            continue
        new = text.encode("utf-8")
        if at:
            old = lines[at[0]]
            if old.rstrip(b"\r").removeprefix(BOM) == new:
                result.unchanged.append(cid)
                continue
            was = _parse_line(old)  # (parsed once: its content, then its status)
            if same_json(was, json.loads(new)):  # (the user's spelling of the same line)
                result.unchanged.append(cid)
                continue
            if review_status(was) != "candidate":
                if isinstance(was, dict) and reprojected(was, json.loads(new)) == (None, ""):
                    result.unchanged.append(cid)  # (only its lifecycle fields differ: the
                    continue  # steps the log records, never the projection's)
                result.kept_reviewed.append(cid)
                result.facts_kept.add(cid)
                # (the JSON catalog's evidence line is not written here: said, not silent)
                result.notices.append(
                    f"{cid}: kept as reviewed: its projection changed (curator notes or the "
                    f"module), and {shown} records no evidence line; the line is left as it "
                    "is (a single-file catalog takes a pending document's notes as logged "
                    "evidence)")
                continue
            out[at[0]] = _as_the_line_was(old, new)
        else:
            out.append(new)
        wrote.append(cid)
    return out, wrote


def _as_the_line_was(old: bytes, new: bytes) -> bytes:
    """``new`` with the old line's byte-order mark and ``\\r`` (a CRLF file stays one)."""
    return (BOM if old.startswith(BOM) else b"") + new + (b"\r" if old.endswith(b"\r")
                                                           else b"")


def _parse_line(line: bytes) -> Any:

    return parse_value_bytes(line, "", "json")


def _read_line(line: bytes, where: str) -> tuple[str | None, str | None]:
    """(component_id, problem line): a readable line gives its id and no problem; an
    unreadable one gives the id found in its bytes (or None) and the reason."""
    try:
        doc = _parse_line(line)
    except RisuError as exc:
        return _id_in_bytes(line), f"{where}: {exc.code}: {exc.why}"
    cid = doc.get("component_id") if isinstance(doc, dict) else None
    if not isinstance(cid, str) or not cid:
        return None, f"{where}: /component_id: unreadable-document: missing"
    if review_status(doc) is None:
        return cid, (f"{where}: /provenance/review_status: unreadable-document: missing, so "
                     "its review state is unknown")
    return cid, None


def _id_in_bytes(line: bytes) -> str | None:
    """The first ``"component_id": "..."`` value in a line that does not parse."""
    key = b'"component_id"'
    at = line.find(key)
    if at < 0:
        return None
    rest = line[at + len(key):].lstrip(b" \t")
    if not rest.startswith(b":"):
        return None
    rest = rest[1:].lstrip(b" \t")
    end = rest.find(b'"', 1)
    while end > 0 and rest[end - 1:end] == b"\\":
        end = rest.find(b'"', end + 1)
    if not rest.startswith(b'"') or end < 0:
        return None
    try:
        value = json.loads(rest[: end + 1], parse_int=PARSE_INT)
    except ValueError:
        return None
    return value if isinstance(value, str) and value else None
