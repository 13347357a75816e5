"""A preset's compressed stream, framed as RisuAI's reader frames it.

RisuAI imports a preset with fflate's ``decompressSync``: bytes ``1f 8b 08`` start gzip
(``gunzipSync``), a valid zlib header starts zlib (``unzlibSync``), anything else is raw
deflate (``inflateSync``).  fflate checks no checksum: gzip's header is skipped field by
field (``FEXTRA``, ``FNAME``, ``FCOMMENT``, and the two bytes of ``FHCRC`` unread, the
reserved flag bits ignored), the deflate stream is the bytes between the header and the
file's **last** 8 bytes, whose CRC-32 is never compared and whose last 4 (``ISIZE``) size
the output (what inflates past them is cut off); a zlib stream is the bytes between its 2
header bytes and the file's last 4, whose Adler-32 is never compared.

zlib (Python's) checks all of them, so a preset RisuAI loads was refused for a checksum
alone.  Here each wrapper is parsed as fflate parses it and the deflate stream inside is
inflated raw (``wbits=-15``), under the output bound; a checksum that does not match is a
warning (``stream-checksum-mismatch``), and an output past gzip's ``ISIZE`` is refused (RisuAI
would decode a cut msgpack).
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

from risutools.errors import Code, FormatError
from risutools.formats.model import Anomaly

GZIP_MAGIC = b"\x1f\x8b\x08"
#: gzip header flags (RFC 1952): FHCRC, FEXTRA, FNAME, FCOMMENT
_FHCRC, _FEXTRA, _FNAME, _FCOMMENT = 2, 4, 8, 16


@dataclass(frozen=True)
class Framing:
    """Where the deflate stream lies in a compressed preset, as fflate finds it."""

    kind: str  #: "gzip", "zlib" or "deflate" (raw)
    start: int  #: first byte of the deflate stream
    end: int  #: just past its last byte (the trailer starts there)


def _byte(data: bytes, i: int) -> int:
    """``data[i]``, or 0 past the end (JavaScript reads ``undefined``, which ``|`` and ``!``
    take as 0)."""
    return data[i] if 0 <= i < len(data) else 0


def compression_of(data: bytes) -> str | None:
    """'gzip', 'zlib' or None (raw deflate) from the first bytes, as ``decompressSync``
    tells them."""
    if data[:3] == GZIP_MAGIC:
        return "gzip"
    b0, b1 = _byte(data, 0), _byte(data, 1)
    if b0 & 0x0F == 8 and b0 >> 4 <= 7 and ((b0 << 8) | b1) % 31 == 0:
        return "zlib"
    return None


def _past_zero(data: bytes, st: int) -> int:
    """Just past the zero byte that ends a gzip name or comment from ``st`` (fflate's loop:
    a byte past the end reads as that zero)."""
    if st >= len(data):
        return st + 1
    at = data.find(b"\x00", st)
    return at + 1 if at >= 0 else len(data) + 1


def _gzip_start(data: bytes) -> int:
    """fflate's ``gzs``: the offset of the deflate stream after a gzip header."""
    flags = _byte(data, 3)
    st = 10
    if flags & _FEXTRA:
        st += (_byte(data, 10) | _byte(data, 11) << 8) + 2
    for bit in (_FNAME, _FCOMMENT):
        if flags & bit:
            st = _past_zero(data, st)
    return st + (flags & _FHCRC)


def framing(data: bytes) -> Framing:
    """The deflate stream's place in ``data`` (a whole compressed preset), or a refusal
    where fflate refuses (a gzip header past the end, a zlib preset dictionary)."""
    kind = compression_of(data)
    n = len(data)
    if kind == "gzip":
        st = _gzip_start(data)
        if st + 8 > n:
            raise FormatError(Code.RISUP_DECOMPRESS_FAILED,
                              f"gzip header runs to byte {st}, past the end of the stream "
                              f"({n} bytes) less its 8-byte trailer")
        return Framing("gzip", st, n - 8)
    if kind == "zlib":
        if _byte(data, 1) & 0x20:
            raise FormatError(Code.RISUP_DECOMPRESS_FAILED,
                              "zlib stream needs a preset dictionary (RisuAI has none)")
        return Framing("zlib", 2, max(2, n - 4))
    return Framing("deflate", 0, n)


def head_stream(head: bytes) -> bytes:
    """The deflate bytes in ``head`` (the first bytes of a file: its end is not known)."""
    kind = compression_of(head)
    if kind == "gzip":
        return head[_gzip_start(head):]
    return head[2:] if kind == "zlib" else head


def inflate(data: bytes, limit: int, notes: list[Anomaly] | None = None) -> bytes:
    """Inflate a compressed preset as fflate's ``decompressSync`` does, with an output bound
    of ``limit`` bytes; a checksum that does not match is noted in ``notes``."""
    f = framing(data)
    d = zlib.decompressobj(-15)
    try:
        out = d.decompress(memoryview(data)[f.start:f.end], limit + 1)
    except zlib.error as exc:
        if f.kind == "deflate":
            raise FormatError(
                Code.BAD_MAGIC,
                "not a compressed preset (no gzip/zlib header, and not raw deflate)",
                where="offset 0",
            ) from None
        raise FormatError(Code.RISUP_DECOMPRESS_FAILED, f"cannot decompress: {exc}") from None
    if len(out) > limit:
        raise FormatError(Code.TOO_LARGE, f"preset inflates past the {limit} byte bound; refused")
    if not d.eof:
        raise FormatError(Code.RISUP_DECOMPRESS_FAILED, "compressed stream is truncated")
    _check_trailer(data, f, out, notes)
    return out


def _check_trailer(data: bytes, f: Framing, out: bytes, notes: list[Anomaly] | None) -> None:
    """gzip's ``ISIZE`` (a bound to RisuAI: refused past it) and the checksum fflate never
    compares (a warning when it does not match)."""
    trailer = data[f.end:]
    if f.kind == "gzip":
        size = int.from_bytes(trailer[4:8], "little")
        if len(out) > size:
            raise FormatError(
                Code.RISUP_DECOMPRESS_FAILED,
                f"gzip stream inflates to {len(out)} bytes, past the {size} its trailer "
                "declares (RisuAI's reader keeps only those)")
        want, got, what = int.from_bytes(trailer[:4], "little"), zlib.crc32(out), "CRC-32"
    elif f.kind == "zlib":
        want, got, what = int.from_bytes(trailer[-4:], "big"), zlib.adler32(out), "Adler-32"
    else:
        return
    if notes is not None and (len(trailer) < 4 or want != got):
        notes.append(Anomaly(
            "stream-checksum-mismatch", "offset 0 (compressed stream)",
            f"the {f.kind} trailer's {what} does not match the inflated bytes (RisuAI's "
            "reader does not check it; read as it reads it)"))
