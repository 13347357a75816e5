"""``.charx`` character cards (a ZIP) and CharX-JPEG (a JPEG with the ZIP appended).

The ZIP is read by risutools' own bounded reader, not :mod:`zipfile`:

* The end-of-central-directory record is found by checking *each* candidate
  ``PK\\x05\\x06`` from the end of the file (a signature that is really the
  bytes of another record's field fails the checks), and the central directory's
  declared entry count and byte size are bounded (``MAX_MEMBERS``,
  ``MAX_CD_BYTES``) *before* one entry is parsed — from the record that is then
  used, so the check and the parse can never disagree.
* Only the members needed are read: ``card.json`` and ``module.risum`` (plus card
  assets when ``unpack`` asks).  A member is streamed through its decompressor in
  bounded steps with a running output cap: never past its declared size (but
  ``card.json`` and ``module.risum``, read as RisuAI's reader reads them whatever they
  declare: :func:`iter_member`'s ``fflate``), never past ``MAX_MEMBER_BYTES`` (50 MiB,
  RisuAI's own skip limit), never past ``MAX_RATIO`` times its compressed size (once over
  1 MiB); CRC-32 and size are checked at the end.
* Only the methods RisuAI reads are accepted: stored (0) and deflate (8).  RisuAI
  writes every member with fflate's ``ZipDeflate`` and reads cards with fflate's
  ``Unzip`` with only ``UnzipInflate`` registered, so a member in bzip2, LZMA or
  any other method cannot come from RisuAI and would not load in it; such a
  member is refused (``zip-unsupported-method``) without decompressing a byte.
  Encrypted members are refused too.

Member names are never used as paths here; unsafe names are reported.  A
``card.json`` or ``module.risum`` present twice is refused: RisuAI keeps the last
copy, and a reviewer must never be shown a different module from the one it loads.
"""

from __future__ import annotations

import hashlib
import struct
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, BinaryIO, cast

from risutools.errors import Code, FormatError
from risutools.formats.jsonsafe import as_risuai_decodes, loads_object
from risutools.formats.memberstream import MemberReader
from risutools.formats.model import Anomaly
from risutools.formats.risum import RisumContents, read_risum_stream
from risutools.formats.zipwalk import (
    LocalHeader,
    Span,
    member_span,
    next_signature,
    read_local_header,
)
from risutools.jsontypes import js_truthy

MAX_MEMBER_BYTES = 50 * 1024 * 1024
MAX_RATIO = 200
RATIO_FLOOR = 1024 * 1024
MAX_MEMBERS = 65535
#: largest central directory accepted (bounds the entries parsed)
MAX_CD_BYTES = 4 * 1024 * 1024
#: bound on all card assets ``unpack`` inflates together (and held in memory):
#: min(MAX_TOTAL_BYTES, TOTAL_FLOOR + TOTAL_RATIO x the file size)
MAX_TOTAL_BYTES = 1024 * 1024 * 1024
TOTAL_FLOOR = 16 * 1024 * 1024
TOTAL_RATIO = 4
#: compression methods read: 0 stored, 8 deflate (all RisuAI writes or reads)
METHODS = {0: "stored", 8: "deflate"}
#: names of other methods, for the refusal message
_METHOD_NAMES = {12: "bzip2", 14: "lzma", 9: "deflate64", 93: "zstd", 95: "xz", 98: "ppmd"}
CARD = "card.json"
MODULE = "module.risum"
JPEG_MAGIC = b"\xff\xd8\xff"
ZIP_MAGIC = b"PK\x03\x04"
_EOCD = b"PK\x05\x06"
_EOCD_LEN = 22
_LOC64 = b"PK\x06\x07"
_LOC64_LEN = 20
_EOCD64 = b"PK\x06\x06"
_EOCD64_LEN = 56
_CDH = b"PK\x01\x02"
_CDH_LEN = 46
_LFH = b"PK\x03\x04"
_LFH_LEN = 30
_STEP_IN = 64 * 1024  # compressed bytes read per step
_STEP_OUT = 1024 * 1024  # most bytes one decompress call may produce


@dataclass
class CharxContents:
    card: dict[str, Any]
    module: RisumContents | None
    anomalies: list[Anomaly] = field(default_factory=list)
    card_data: dict[str, Any] | None = None  # card.json as read (its active content)
    module_dropped: bool = False  # a module.risum RisuAI does not load (see the warning)


@dataclass(frozen=True)
class Member:
    """One central-directory entry (offsets absolute in the file, prefix included)."""

    filename: str
    method: int
    flags: int
    crc: int
    compress_size: int
    file_size: int
    header_offset: int

    def is_dir(self) -> bool:
        return self.filename.endswith("/")


class Archive:
    """A ZIP opened by :func:`open_zip`: its members, and the file to read them from."""

    def __init__(self, fp: BinaryIO, members: list[Member], data_end: int) -> None:
        self.fp = fp
        self._members = members
        self.data_end = data_end  # member data must end before the central directory

    def infolist(self) -> list[Member]:
        return self._members

    def __enter__(self) -> Archive:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


def _shown(name: str, limit: int = 80) -> str:
    """A member name for a message: repr (one line), long names cut."""
    return repr(name if len(name) <= limit else name[:limit] + "...")


def _bad(why: str, where: str = "zip") -> FormatError:
    return FormatError(Code.ZIP_INVALID, why, where=where)


@dataclass(frozen=True)
class _End:
    entries: int
    cd_size: int
    cd_start: int  # absolute offset of the central directory
    concat: int  # bytes in front of the ZIP (a JPEG), added to every stored offset


def _end_at(fp: BinaryIO, size: int, tail: bytes, base: int, at: int) -> _End | None:
    """The end record at ``tail[at:]`` if it passes every check, else None."""
    if at + _EOCD_LEN > len(tail):
        return None
    (_, disk, cd_disk, n_disk, entries, cd_size, cd_off, comment) = struct.unpack_from(
        "<4s4H2LH", tail, at
    )
    if at + _EOCD_LEN + comment > len(tail):
        return None  # the comment would run past the end of the file
    pos = base + at  # absolute position of the record
    dir_end = pos
    where = f"offset {pos} (end of central directory)"
    rec = pos - _LOC64_LEN - _EOCD64_LEN
    if rec >= 0:  # a ZIP64 end record with its locator, just in front (as zipfile looks)
        fp.seek(rec)
        blob = fp.read(_EOCD64_LEN + _LOC64_LEN)
        if blob[:4] == _EOCD64 and blob[_EOCD64_LEN : _EOCD64_LEN + 4] == _LOC64:
            (_, _, _, _, disk, cd_disk, n_disk, entries, cd_size, cd_off) = struct.unpack_from(
                "<4sQ2H2L4Q", blob, 0
            )
            dir_end = rec
            where = f"offset {rec} (ZIP64 end of central directory)"
    elif 0xFFFF in (disk, cd_disk, n_disk, entries) or 0xFFFFFFFF in (cd_size, cd_off):
        return None  # says ZIP64 but has no room for its records
    if disk != 0 or cd_disk != 0 or n_disk != entries:
        return None  # multi-disk archives: not a card
    if entries > MAX_MEMBERS:  # bounded before anything else is read
        raise _bad(f"declares {entries} members; the bound is {MAX_MEMBERS}", where)
    if cd_size > MAX_CD_BYTES:
        raise _bad(
            f"central directory of {cd_size} bytes exceeds the {MAX_CD_BYTES} byte bound", where
        )
    cd_start = dir_end - cd_size
    concat = cd_start - cd_off
    if cd_start < 0 or concat < 0:
        return None
    if entries * _CDH_LEN > cd_size:
        return None
    if entries:
        fp.seek(cd_start)
        if fp.read(4) != _CDH:
            return None
    return _End(entries, cd_size, cd_start, concat)


def _find_end(fp: BinaryIO) -> _End:
    """The validated end-of-central-directory record (candidates tried from the end)."""
    size = fp.seek(0, 2)
    tail_len = min(size, _EOCD_LEN + 65535)
    base = size - tail_len
    fp.seek(base)
    tail = fp.read(tail_len)
    limit = len(tail)
    while True:
        at = tail.rfind(_EOCD, 0, limit)
        if at < 0:
            raise _bad("not a readable ZIP archive: no valid end of central directory record")
        found = _end_at(fp, size, tail, base, at)
        if found is not None:
            return found
        limit = at + len(_EOCD) - 1  # the next candidate starts before this one


def _zip64_extra(extra: bytes, usize: int, csize: int, offset: int) -> tuple[int, int, int]:
    """Apply a ZIP64 extended-information field (0x0001) to the 32-bit placeholders."""
    p = 0
    while p + 4 <= len(extra):
        tag, n = struct.unpack_from("<HH", extra, p)
        body = extra[p + 4 : p + 4 + n]
        p += 4 + n
        if tag != 1:
            continue
        q = 0
        vals = []
        while q + 8 <= len(body):
            vals.append(struct.unpack_from("<Q", body, q)[0])
            q += 8
        it = iter(vals)
        try:
            if usize == 0xFFFFFFFF:
                usize = next(it)
            if csize == 0xFFFFFFFF:
                csize = next(it)
            if offset == 0xFFFFFFFF:
                offset = next(it)
        except StopIteration:
            raise _bad("ZIP64 extra field is too short") from None
        break
    return usize, csize, offset


def _decode_name(raw: bytes, flags: int) -> str:
    """As ``zipfile``: UTF-8 when flag bit 11 says so, else CP437; cut at a NUL."""
    name = raw.decode("utf-8", errors="replace") if flags & 0x800 else raw.decode("cp437")
    nul = name.find("\x00")
    return name if nul < 0 else name[:nul]


def _parse_directory(fp: BinaryIO, end: _End) -> list[Member]:
    fp.seek(end.cd_start)
    cd = fp.read(end.cd_size)
    if len(cd) != end.cd_size:
        raise _bad("central directory runs past the end of the file")
    members: list[Member] = []
    p = 0
    for i in range(end.entries):
        if p + _CDH_LEN > len(cd) or cd[p : p + 4] != _CDH:
            raise _bad(f"central directory entry {i} is damaged (at byte {end.cd_start + p})")
        (_, _, _, flags, method, _, _, crc, csize, usize, nlen, elen, clen, _, _, _, off) = (
            struct.unpack_from("<4s6H3L5H2L", cd, p)
        )
        q = p + _CDH_LEN
        if q + nlen + elen + clen > len(cd):
            raise _bad(f"central directory entry {i} runs past the directory")
        name = _decode_name(cd[q : q + nlen], flags)
        usize, csize, off = _zip64_extra(cd[q + nlen : q + nlen + elen], usize, csize, off)
        members.append(Member(name, method, flags, crc, csize, usize, off + end.concat))
        p = q + nlen + elen + clen
    return members


def open_zip(fp: BinaryIO) -> Archive:
    """Open a ZIP (bytes in front, such as a JPEG, are skipped via the central directory).

    The end record is validated and the directory bounded before it is parsed.
    """
    try:
        end = _find_end(fp)
        members = _parse_directory(fp, end)
    except (OSError, struct.error, ValueError) as exc:
        raise _bad(f"not a readable ZIP archive: {exc}") from None
    return Archive(fp, members, end.cd_start)


def check_local_headers(zf: Archive) -> set[str]:
    """Refuse a ZIP that RisuAI would read otherwise than this reader does.

    RisuAI reads a card with fflate's streaming ``Unzip``, from the file's first byte,
    local header after local header, never the central directory (the rules, byte for
    byte, are in :mod:`risutools.formats.zipwalk`).  This reader goes by the directory.
    So every ``card.json`` or ``module.risum`` local header that walk meets must be the
    listed member's own (same offset, name and method) and must end, as fflate ends it,
    where the directory says (a member with a data descriptor ends at the first signature
    in its bytes, not at its listed size), and the listed ``card.json`` and
    ``module.risum`` must be met: else a second module hidden in a gap, in front (a
    CharX-JPEG's JPEG part), inside another member's data, inside the directory or its
    comment, or a member renamed or cut short in its local header, would load in RisuAI
    and never be shown (``zip-hidden-member``).  Members are walked past as fflate walks
    past them: by their local size, or, with a data descriptor, by scanning their bytes
    (a file's bytes read once, in steps of at most 1 MiB).

    Returns the names (``card.json``, ``module.risum``) whose local header declares 0
    bytes inflated: RisuAI never starts such a member, so it does not load it."""
    fp = zf.fp
    size = fp.seek(0, 2)
    listed: dict[int, list[Member]] = {}
    for m in zf.infolist():  # (entries sharing one header: RisuAI reads it under its name)
        listed.setdefault(m.header_offset, []).append(m)
    met: set[tuple[int, str]] = set()
    unstarted: set[str] = set()
    at = 0
    while (found := next_signature(fp, at, size)[0]) >= 0:
        if len(met) >= MAX_MEMBERS:  # (the walk's time bound: as many as a directory lists)
            raise FormatError(
                Code.ZIP_HIDDEN_MEMBER,
                f"more than {MAX_MEMBERS} local headers; the directory lists {len(listed)}",
                where=f"offset {found}")
        at, name, started = _local_header_end(fp, found, listed.get(found, []), size)
        met.add((found, name))
        if name and not started:
            unstarted.add(name)
        at = max(at, found + 4)
    for name in (CARD, MODULE):
        for m in zf.infolist():
            if m.filename == name and (m.header_offset, name) not in met:
                raise FormatError(
                    Code.ZIP_HIDDEN_MEMBER,
                    f"the directory's {name} (local header at offset {m.header_offset}) is "
                    "not where RisuAI's reader, walking the local headers, finds one",
                    where=name)
    return unstarted


def _local_header_end(fp: BinaryIO, at: int, members: list[Member],
                      size: int) -> tuple[int, str, bool]:
    """Where RisuAI's walk goes on after the local header at ``at``, and the name it reads
    there when that header is a ``card.json`` or ``module.risum`` RisuAI reads as this
    reader does (one of ``members``, the directory's entries at ``at``), else "", and
    whether RisuAI starts reading it.  Any
    other ``card.json`` or ``module.risum`` header is ``zip-hidden-member``; any other name
    is an asset to RisuAI, walked past as RisuAI walks past it (what it may cover is then
    judged by the listed card and module being met or not)."""
    try:
        h = read_local_header(fp, at, size)
    except ValueError as exc:
        raise FormatError(Code.ZIP_HIDDEN_MEMBER, f"{exc}: RisuAI's reader would take the "
                          "member's size from its data", where=f"offset {at}") from None
    if h is None:
        return size, "", False  # (never read by RisuAI: nothing after it loads)
    span = member_span(fp, h, size)
    if span.by == "directory entry":
        raise FormatError(
            Code.ZIP_HIDDEN_MEMBER,
            f"the member at offset {at} has a data descriptor that RisuAI's reader ends at "
            f"a directory entry's signature (offset {span.resume + 4}): where it reads on "
            "from there depends on how the file is handed to it", where=f"offset {at}")
    if h.raw_name not in (CARD.encode(), MODULE.encode()):
        return span.resume, "", h.started
    name = _decode_name(h.raw_name, h.flags)
    why = _loads_otherwise(h, span, [m for m in members if m.filename == name])
    if why:
        raise FormatError(
            Code.ZIP_HIDDEN_MEMBER,
            f"a local header at offset {at} names {_shown(name)}: {why}; RisuAI's reader "
            "walks the local headers, not the directory", where=f"offset {at}")
    return span.resume, name, h.started


def _loads_otherwise(h: LocalHeader, span: Span, members: list[Member]) -> str:
    """Why RisuAI would load the card/module of header ``h`` otherwise than the directory
    entry ``members[0]`` (the listed member of that name at that offset), or ""."""
    if not members:
        return "the central directory does not list it there"
    m = members[0]
    if h.method != m.method:
        return f"it says method {h.method}, the directory {m.method}"
    expected = h.data + m.compress_size
    if span.end < 0:
        return "its data never ends for RisuAI's reader (no signature or size it can use)"
    if span.by == "size" and span.end != expected:
        return f"it says {h.csize} bytes of data, the directory {m.compress_size}"
    if span.end != expected:
        return (f"RisuAI's reader ends its data at offset {span.end} (at the {span.by} "
                f"it meets), the directory at offset {expected}")
    if span.by not in ("size", "descriptor"):
        return ("it has a data descriptor without its signature (where RisuAI's reader ends "
                "its data depends on how the file is handed to it)")
    return ""


def is_unsafe_name(name: str) -> bool:
    """True for member names that would escape a target directory if used as paths."""
    n = name.replace("\\", "/")
    if n.startswith("/") or (len(n) > 1 and n[1] == ":"):
        return True
    return any(part == ".." for part in n.split("/"))


def _data_start(zf: Archive, info: Member, where: str) -> int:
    if info.flags & 0x1:
        raise FormatError(Code.ZIP_INVALID, "member is encrypted", where=where)
    if info.method not in METHODS:
        name = _METHOD_NAMES.get(info.method, f"method {info.method}")
        raise FormatError(
            Code.ZIP_UNSUPPORTED_METHOD,
            f"compressed with {name}; RisuAI writes and reads only stored and deflate members",
            where=where,
        )
    fp = zf.fp
    fp.seek(info.header_offset)
    head = fp.read(_LFH_LEN)
    if len(head) != _LFH_LEN or head[:4] != _LFH:
        raise FormatError(
            Code.ZIP_INVALID, f"no local header at offset {info.header_offset}", where=where
        )
    nlen, elen = struct.unpack_from("<HH", head, 26)
    start = info.header_offset + _LFH_LEN + int(nlen) + int(elen)
    if start + info.compress_size > zf.data_end:
        raise FormatError(
            Code.ZIP_INVALID,
            f"member data ({info.compress_size} bytes at offset {start}) runs into the "
            "central directory",
            where=where,
        )
    return start


def iter_member(zf: Archive, info: Member, limit: int = MAX_MEMBER_BYTES,
                notes: list[Anomaly] | None = None, *, fflate: bool = False) -> Iterator[bytes]:
    """Stream one member's inflated bytes, with the bounds of the module docstring.

    Every step reads at most 64 KiB of compressed data and produces at most
    1 MiB; the running total is checked after each step, and CRC-32 and size at
    the end, so memory stays bounded whatever the member declares.  A CRC-32 that does
    not match is a warning in ``notes`` (RisuAI's reader, fflate's ``Unzip``, never
    compares it: it loads the member), a refusal only for a caller that takes no notes.

    ``fflate``: the member is read as RisuAI's reader reads it, whatever size it declares
    (fflate's ``Unzip`` hands the decoder the compressed bytes and keeps all it inflates;
    0 compressed bytes are an empty member): the bound is ``limit`` alone (past it:
    ``zip-member-too-large``, RisuAI skips a member past 50 MiB), the ratio bound stays, and
    an inflated size other than the declared one is the warning ``zip-size-mismatch``.
    """
    where = f"member {_shown(info.filename)}"
    pos = _member_start(zf, info, limit if not fflate else 1 << 62, where)
    cap = limit if fflate else info.file_size
    fp = zf.fp
    left = info.compress_size
    total = crc = 0
    d = zlib.decompressobj(-15) if info.method == 8 else None
    pending = b""
    while True:
        if not pending:
            if left == 0:
                break
            fp.seek(pos)
            pending = fp.read(min(_STEP_IN, left))
            if not pending:
                raise FormatError(Code.ZIP_INVALID, "member data is truncated", where=where)
            pos += len(pending)
            left -= len(pending)
        room = min(_STEP_OUT, cap + 1 - total)
        if d is None:
            piece, pending = pending[:room], pending[room:]
        else:
            try:
                piece = d.decompress(pending, room)
            except zlib.error as exc:
                raise FormatError(Code.ZIP_INVALID, f"cannot inflate: {exc}", where=where) from None
            pending = d.unconsumed_tail
        total += len(piece)
        if total > cap:
            raise _past(info, cap, fflate, where)
        if total > RATIO_FLOOR and total > MAX_RATIO * max(info.compress_size, 1):
            raise FormatError(
                Code.ZIP_BOMB,
                f"inflates more than {MAX_RATIO}x its compressed size "
                f"({info.compress_size} bytes); refused", where=where)
        crc = zlib.crc32(piece, crc)
        if piece:
            yield piece
        if d is not None and d.eof:
            break
    ended = d is None or d.eof or (fflate and info.compress_size == 0)
    _check_member_end(info, ended, total, crc, where, notes if fflate else None, notes)


def _member_start(zf: Archive, info: Member, limit: int, where: str) -> int:
    """Where the member's data starts, once its declared size is within ``limit``."""
    if info.file_size > limit:
        raise FormatError(
            Code.ZIP_MEMBER_TOO_LARGE,
            f"declares {info.file_size} bytes inflated; the bound is {limit}",
            where=where,
        )
    return _data_start(zf, info, where)


def _past(info: Member, cap: int, fflate: bool, where: str) -> FormatError:
    """The refusal of a member that inflates past ``cap`` (see :func:`iter_member`)."""
    if fflate:
        return FormatError(
            Code.ZIP_MEMBER_TOO_LARGE,
            f"inflates past the {cap} byte bound (it declares {info.file_size}; RisuAI's "
            "reader skips a member past 50 MiB)", where=where)
    return FormatError(
        Code.ZIP_INVALID, f"inflates past its declared size of {info.file_size} bytes",
        where=where)


def _check_member_end(info: Member, ended: bool, total: int, crc: int, where: str,
                      sized: list[Anomaly] | None, notes: list[Anomaly] | None) -> None:
    """The checks once a member is read: a deflate stream that ended, its size (a size
    other than declared is a warning in ``sized`` when given), its CRC-32 (a mismatch is a
    warning in ``notes`` when the caller takes them)."""
    if not ended:
        raise FormatError(Code.ZIP_INVALID, "deflate stream is truncated", where=where)
    if total != info.file_size:
        why = f"inflates to {total} bytes, the directory says {info.file_size}"
        if sized is None:
            raise FormatError(Code.ZIP_INVALID, why, where=where)
        sized.append(Anomaly("zip-size-mismatch", where, f"{why} (RisuAI's reader keeps what "
                             "inflates, whatever size is declared: read as it reads it)"))
    if crc == info.crc:
        return
    if notes is None:
        raise FormatError(Code.ZIP_INVALID, "CRC-32 mismatch (damaged member)", where=where)
    notes.append(Anomaly(
        "zip-crc-mismatch", where,
        f"CRC-32 is 0x{crc:08x}, the directory says 0x{info.crc:08x} (RisuAI's reader does "
        "not check it: the member is read as it reads it)"))


def read_member(zf: Archive, info: Member, limit: int = MAX_MEMBER_BYTES,
                notes: list[Anomaly] | None = None, *, fflate: bool = False) -> bytes:
    """Inflate one member into memory (see :func:`iter_member` for the bounds, ``notes``
    and ``fflate``)."""
    try:
        return b"".join(iter_member(zf, info, limit, notes, fflate=fflate))
    except OSError as exc:
        where = f"member {_shown(info.filename)}"
        raise FormatError(Code.ZIP_INVALID, f"cannot read: {exc}", where=where) from None


def member_sha256(fp: BinaryIO, name: str, limit: int = MAX_MEMBER_BYTES) -> str | None:
    """SHA-256 of the member called ``name``, streamed under the same bounds (``limit``
    inflated bytes, the ratio bound, a validated and bounded directory).

    None when ``fp`` is not a ZIP or has no such member; a member past the
    bounds raises :class:`FormatError`.
    """
    try:
        zf = open_zip(fp)
    except FormatError:
        return None
    info = next((i for i in zf.infolist() if i.filename == name), None)
    if info is None:
        return None
    h = hashlib.sha256()
    # (the bytes RisuAI loads: CRC-32 unchecked, whatever size is declared)
    for piece in iter_member(zf, info, limit, [], fflate=True):
        h.update(piece)
    return h.hexdigest()


def _member(zf: Archive, name: str) -> Member | None:
    """The one member called ``name``; two of them is ambiguous and refused."""
    found = [info for info in zf.infolist() if info.filename == name]
    if len(found) > 1:
        raise FormatError(
            Code.ZIP_DUPLICATE_MEMBER,
            f"{len(found)} members are named {name!r}; RisuAI would load the last one, "
            "so which one to review is ambiguous",
            where="zip",
        )
    return found[0] if found else None


def embedded_member(uri: str) -> str | None:
    """``embeded://assets/x.png`` (RisuAI's spelling) or ``embedded://...`` -> member name."""
    for scheme in ("embeded://", "embedded://", "__asset:"):
        if uri.startswith(scheme):
            return uri[len(scheme) :]
    return None


def read_charx(fp: BinaryIO, *, with_assets: bool = False) -> CharxContents:
    """Read ``card.json`` facts and the embedded ``module.risum`` (if any)."""
    zf = open_zip(fp)
    anomalies: list[Anomaly] = []
    with zf:
        unstarted = check_local_headers(zf)
        infos = zf.infolist()
        unsafe = sorted(i.filename for i in infos if is_unsafe_name(i.filename))
        if unsafe:
            shown = ", ".join(_shown(n) for n in unsafe[:5])
            anomalies.append(
                Anomaly(
                    "zip-unsafe-member-name",
                    "zip",
                    f"{len(unsafe)} member name(s) would escape a folder ({shown}); "
                    "they are never written under their own name",
                )
            )
        card_info = _member(zf, CARD)
        if card_info is None:
            raise FormatError(
                Code.ZIP_NO_CARD, "ZIP has no card.json: not a character card", where="zip"
            )
        if CARD in unstarted:
            raise FormatError(Code.ZIP_NO_CARD, "its local header declares 0 bytes inflated: "
                              "RisuAI's reader never reads it, so the card does not load",
                              where=CARD)
        card_raw = read_member(zf, card_info, notes=anomalies, fflate=True)
        card_obj = loads_object(as_risuai_decodes(card_raw, anomalies), where=CARD,
                                what="card.json")
        del card_raw
        card = _card_facts(card_obj, zf, anomalies)
        mod_info = _member(zf, MODULE)
        module = None
        if mod_info is not None and MODULE in unstarted:
            anomalies.append(Anomaly(
                "module-not-loaded", MODULE, "its local header declares 0 bytes inflated: "
                "RisuAI's reader never reads it, so the card loads without it"))
        elif mod_info is not None:
            module = _read_module(zf, mod_info, with_assets, anomalies)
    return CharxContents(card=card, module=module, anomalies=anomalies, card_data=card_obj,
                         module_dropped=module is None and mod_info is not None)


_MEMBER_CODES = (Code.ZIP_INVALID, Code.ZIP_BOMB, Code.ZIP_MEMBER_TOO_LARGE,
                 Code.ZIP_UNSUPPORTED_METHOD)


def _read_module(zf: Archive, info: Member, with_assets: bool,
                 anomalies: list[Anomaly]) -> RisumContents | None:
    """``module.risum`` parsed straight from its inflating stream, as RisuAI loads it: what
    inflates, whatever size is declared (a stored member is its compressed bytes; a deflate
    one that inflates to another size than declared is parsed again at the size it has),
    and None, with the warning ``module-too-large``, for one past ``MAX_MEMBER_BYTES``
    (RisuAI's reader skips it and loads the card without it; never inflated further)."""
    size = info.compress_size if info.method == 0 else info.file_size
    for again in (False, True):
        notes: list[Anomaly] = []
        stream = MemberReader(iter_member(zf, info, notes=notes, fflate=True))
        module: RisumContents | None = None
        failed: FormatError | None = None
        try:
            module = read_risum_stream(cast(BinaryIO, stream), size, with_assets=with_assets,
                                       where=f"{MODULE}: ")
            stream.finish()  # the rest is inflated too: its size and CRC-32 are checked
        except FormatError as exc:
            failed = exc
            if exc.code not in _MEMBER_CODES:
                try:
                    stream.finish()  # a damaged or bombed member is the error to report
                except FormatError as member_exc:
                    failed = member_exc
        if failed is not None and failed.code == Code.ZIP_MEMBER_TOO_LARGE:
            anomalies.append(Anomaly("module-too-large", MODULE, f"{failed.why}: the card is "
                                     "read without it, as RisuAI loads it"))
            return None
        if again or stream.total == size or (failed is not None
                                             and failed.code in _MEMBER_CODES):
            break
        size = stream.total  # (declared otherwise than it inflates: parsed at its size)
    if failed is not None:
        raise failed
    assert module is not None
    anomalies.extend(notes + module.anomalies)
    module.anomalies = []
    return module


def _card_facts(
    card: dict[str, Any], zf: Archive, anomalies: list[Anomaly]
) -> dict[str, Any]:
    spec = card.get("spec")
    if spec != "chara_card_v3":
        anomalies.append(
            Anomaly("card-spec", CARD, f'card.json spec is {spec!r}, expected "chara_card_v3"')
        )
    data = card.get("data")
    data = data if isinstance(data, dict) else {}
    name = data.get("name")
    sizes = {i.filename: i.file_size for i in zf.infolist()}
    assets: list[dict[str, Any]] = []
    raw_assets = data.get("assets")
    if isinstance(raw_assets, list):
        for a in raw_assets:
            if not isinstance(a, dict):
                continue
            uri = a.get("uri") if isinstance(a.get("uri"), str) else ""
            member = embedded_member(uri) if uri else None
            assets.append(
                {
                    "type": a.get("type") if isinstance(a.get("type"), str) else "",
                    "name": a.get("name") if isinstance(a.get("name"), str) else "",
                    "ext": a.get("ext") if isinstance(a.get("ext"), str) else "",
                    "member": member,
                    "size": sizes.get(member) if member else None,
                }
            )
    return {
        "spec": spec if isinstance(spec, str) else None,
        "spec_version": card.get("spec_version")
        if isinstance(card.get("spec_version"), str)
        else None,
        "name": name if isinstance(name, str) else "",
        "assets": assets,
        "members": len(sizes),
        # RisuAI runs the embedded module's triggers as the card's, with the card's flag
        "low_level_access": _card_lla(data),
    }


def _card_lla(data: dict[str, Any]) -> bool:
    """The card's ``extensions.risuai.lowLevelAccess``, as RisuAI tests it (truthy)."""
    ext = data.get("extensions")
    risu = ext.get("risuai") if isinstance(ext, dict) else None
    return isinstance(risu, dict) and js_truthy(risu.get("lowLevelAccess"))


def iter_card_assets(fp: BinaryIO) -> Iterator[tuple[str, bytes | None, str]]:
    """Yield (member name, bytes or None if refused, reason) for members under ``assets/``
    (a member read with a warning: its bytes, and the warning as the reason).

    Besides the per-member bounds, all members together inflate to at most
    ``min(MAX_TOTAL_BYTES, TOTAL_FLOOR + TOTAL_RATIO * file size)`` (card assets
    are images and sounds, stored or barely compressed); members past
    that budget are refused (``zip-total-too-large``), so memory stays bounded.
    """
    size = fp.seek(0, 2)
    total_bound = min(MAX_TOTAL_BYTES, TOTAL_FLOOR + TOTAL_RATIO * size)
    over = f"zip-total-too-large: card assets together inflate past {total_bound} bytes"
    budget = total_bound
    zf = open_zip(fp)
    with zf:
        for info in zf.infolist():
            if info.is_dir():
                continue
            name = info.filename.replace("\\", "/")
            if not (name.startswith("assets/") or is_unsafe_name(name)):
                continue
            limit = min(MAX_MEMBER_BYTES, budget)
            notes: list[Anomaly] = []  # (a CRC-32 RisuAI does not compare: read, and said)
            try:
                data = read_member(zf, info, limit=limit, notes=notes)
            except FormatError as exc:
                total = exc.code == Code.ZIP_MEMBER_TOO_LARGE and limit < MAX_MEMBER_BYTES
                yield info.filename, None, over if total else f"{exc.code}: {exc.why}"
                continue
            budget -= len(data)
            yield info.filename, data, "; ".join(f"{n.code}: {n.message}" for n in notes)


def zip_names(fp: BinaryIO) -> list[str] | None:
    """Member names of a ZIP (None if it is not one, or past the bounds); reads the directory."""
    try:
        zf = open_zip(fp)
    except FormatError:  # detection only: the reader reports the reason precisely
        return None
    return [i.filename for i in zf.infolist()]
