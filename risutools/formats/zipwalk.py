"""How RisuAI's card reader, fflate's streaming ``Unzip``, walks a ZIP's local headers.

RisuAI reads a ``.charx`` from its first byte with fflate's ``Unzip`` (RisuAI
``src/ts/process/processzip.ts``, ``CharXReader``); it never reads the central directory.
What that reader does, byte for byte (fflate ``src/index.ts``, ``Unzip.push``):

* Between members it looks for ``PK\\x03\\x04`` and nothing else.  A header is read only
  once at least one byte follows its name and extra field.
* A member whose local header gives its compressed size (flag bit 3 clear) is that many
  bytes (a size of ``0xFFFFFFFF`` is taken from the header's ZIP64 field).
* A member with a data descriptor (flag bit 3) ends, *whatever its method* (stored or
  deflate alike: the inflate stream's own end is never used), at the first ``PK\\x03\\x04``
  (local header), ``PK\\x07\\x08`` (data descriptor) or ``PK\\x01\\x02`` (directory entry)
  in its bytes.  After a descriptor signature the walk goes on 12 bytes further (20 for
  ZIP64) and a local header is read as the next member.  After a directory signature
  it goes on 4 bytes *before* it, counted in the bytes it holds at that moment: when the
  signature is within the first 4 of them, that index is negative and JavaScript's
  ``subarray`` takes it from their *end*, so the walk jumps on to wherever the pushed
  piece ends (RisuAI pushes 1 MiB pieces of a file, a stream's pieces as they come):
  there the walk depends on how the file is handed to it.  The bytes handed to the
  decoder end at that signature, less 12 (and less 4 more when the 4 bytes before are a
  descriptor signature): right only for a descriptor with its signature; without one the
  end depends on where the pushed pieces fall.  A signature in the file's last 4 bytes
  is never seen.
* A member whose local header declares 0 bytes inflated (flag bit 3 clear) is never
  started by RisuAI (``file.originalSize ?? 0 < 50 MiB`` reads ``originalSize ?? true``).

Only this module knows those rules; :func:`risutools.formats.charx.check_local_headers`
compares the walk with the central directory.
"""

from __future__ import annotations

import struct
from typing import BinaryIO

LFH = b"PK\x03\x04"
DDSIG = b"PK\x07\x08"
CDSIG = b"PK\x01\x02"
LFH_LEN = 30
#: bytes read at a time while scanning (the first read is 4 KiB, then doubling)
SCAN_STEP = 1 << 20
_ALL = (LFH, DDSIG, CDSIG)


class LocalHeader:
    """One local header as fflate's ``Unzip`` reads it (a plain class: a dataclass costs
    half a millisecond of every command's start-up to make)."""

    __slots__ = ("at", "csize", "data", "flags", "method", "raw_name", "usize")

    def __init__(self, at: int, flags: int, method: int, raw_name: bytes, data: int,
                 csize: int, usize: int) -> None:
        self.at = at  # offset of its signature
        self.flags = flags
        self.method = method
        self.raw_name = raw_name
        self.data = data  # where its data starts
        self.csize = csize  # compressed size as fflate takes it; -1: descriptor; -2: ZIP64
        self.usize = usize  # inflated size declared (0 when a descriptor follows)

    @property
    def described(self) -> bool:
        return self.csize < 0

    @property
    def started(self) -> bool:
        """RisuAI starts reading it: a descriptor follows, or it declares a size."""
        return self.described or self.usize != 0


class Span:
    """Where fflate ends a member's data, and where its walk goes on."""

    __slots__ = ("by", "end", "resume")

    def __init__(self, end: int, resume: int, by: str) -> None:
        self.end = end  # end of the bytes handed to the decoder (-1: never ended)
        self.resume = resume  # where the walk looks for the next local header
        self.by = by  # "size", "descriptor", "local header", "directory entry", "end of file"


def next_signature(fp: BinaryIO, at: int, size: int,
                   sigs: tuple[bytes, ...] = (LFH,)) -> tuple[int, bytes]:
    """The first of ``sigs`` at or after ``at`` that fflate can see (it starts at most
    5 bytes before the end), with which one, or ``(-1, b"")``.  4 KiB read first (the next
    header is usually right there), then steps doubling to 1 MiB, 3 bytes of overlap;
    every search is C-speed ``bytes.find`` (no Python loop over the bytes)."""
    last = size - 5  # (fflate's loop is ``i < l - 4``; the last 4 bytes wait for more)
    step = 4096
    while at <= last:
        fp.seek(at)
        chunk = fp.read(min(step + 3, last + 4 - at))
        best, which = -1, b""
        for sig in sigs:
            i = chunk.find(sig, 0, best + 4 if best >= 0 else len(chunk))
            if i >= 0 and (best < 0 or i < best):
                best, which = i, sig
        if best >= 0:
            return at + best, which
        if len(chunk) < step + 3:
            return -1, b""
        at += step
        step = min(2 * step, SCAN_STEP)
    return -1, b""


def read_local_header(fp: BinaryIO, at: int, size: int) -> LocalHeader | None:
    """The local header at ``at`` as fflate reads it, or None when fflate never reads it
    (cut short: no byte after its name and extra field)."""
    fp.seek(at)
    head = fp.read(LFH_LEN)
    if len(head) < LFH_LEN:
        return None
    flags, method = struct.unpack_from("<HH", head, 6)
    csize, usize = struct.unpack_from("<LL", head, 18)
    nlen, elen = struct.unpack_from("<HH", head, 26)
    data = at + LFH_LEN + nlen + elen
    if size <= data:
        return None
    raw = fp.read(nlen)
    if csize == 0xFFFFFFFF:
        if flags & 0x8:
            csize = -2
        else:
            csize, usize = _zip64_sizes(fp.read(elen))
    elif flags & 0x8:
        csize, usize = -1, 0
    return LocalHeader(at, flags, method, raw, data, csize, usize)


def _zip64_sizes(extra: bytes) -> tuple[int, int]:
    """(compressed, inflated) from a local header's ZIP64 field (id 1: inflated size at +4,
    compressed at +12, as fflate's ``z64e``).  fflate looks on past the extra field when
    the field is missing or short (into the member's data): that walk is not followed,
    it is refused (ValueError)."""
    p = 0
    while p + 4 <= len(extra):
        tag, n = struct.unpack_from("<HH", extra, p)
        if tag == 1:
            if p + 20 > len(extra):
                break
            usize, csize = struct.unpack_from("<QQ", extra, p + 4)
            return csize, usize
        p += 4 + n
    raise ValueError("a ZIP64 local header without a whole ZIP64 field")


def member_span(fp: BinaryIO, h: LocalHeader, size: int) -> Span:
    """Where fflate ends the member of header ``h`` (see the module docstring)."""
    if not h.described:
        end = h.data + h.csize
        return Span(end, end, "size") if end <= size else Span(-1, size, "end of file")
    j, sig = next_signature(fp, h.data, size, _ALL)
    if j < 0:
        return Span(-1, size, "end of file")
    z8 = 8 if h.csize == -2 else 0
    if sig == DDSIG:
        stop, resume, by = j + 12 + z8, j + 12 + z8, "descriptor"
    elif sig == LFH:
        stop, resume, by = j, j, "local header"
    else:
        stop, resume, by = j - 4, j - 4, "directory entry"
    end = stop - 12 - z8
    if stop - 16 >= h.data:  # (fflate looks back only within the bytes it holds)
        fp.seek(stop - 16)
        if fp.read(4) == DDSIG:
            end -= 4
    return Span(end, resume, by)
