"""``.risum`` packed modules: read (streamed, bounded) and write.

Layout (little-endian): magic ``0x6F``, version ``0``, u32 ``N``, ``N`` bytes of
RPack-encoded UTF-8 JSON ``{"module": {...}, "type": "risuModule"}``, then frames:
``1`` + u32 ``L`` + ``L`` RPack-encoded asset bytes, and a final ``0``.

Reading never allocates from a declared length before checking it against the
bytes really present, never loads an asset unless asked (it is skipped: seeked
over, or streamed through the hash when the whole file is being hashed), and
reports recoverable oddities as :class:`Anomaly` objects.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import struct
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Protocol, cast

from risutools.errors import Code, FormatError
from risutools.formats import rpack
from risutools.formats.files import open_regular
from risutools.formats.jsonsafe import loads_object
from risutools.formats.model import Anomaly, AssetInfo, Module, SourceInfo

MAGIC = 0x6F
VERSION = 0
#: largest main block accepted (the module JSON, not its assets)
MAX_MAIN_BYTES = 64 * 1024 * 1024
#: most asset frames / ``module.assets`` entries accepted (each costs an object)
MAX_ASSETS = 65536
#: largest asset frame (its length is a u32)
MAX_FRAME_BYTES = 0xFFFFFFFF
#: decoded bytes kept from the start of every asset for type sniffing
HEAD_BYTES = 16
CHUNK = 1 << 20
_U32 = struct.Struct("<I")


class _Hasher(Protocol):
    def update(self, data: bytes | bytearray | memoryview, /) -> None: ...


@dataclass
class RisumContents:
    """What a ``.risum`` holds: the main object, its module, asset frames, anomalies."""

    main: dict[str, Any]
    module: dict[str, Any]
    assets: list[AssetInfo] = field(default_factory=list)
    anomalies: list[Anomaly] = field(default_factory=list)
    end: int = 0  # offset just after the end marker (or EOF)


class _Frames:
    """Sequential reader over a file object of known size.

    With a ``hasher`` every byte goes through it exactly once (single pass);
    without one, skipped regions are seeked over.
    """

    def __init__(self, fp: BinaryIO, size: int, hasher: _Hasher | None, where: str) -> None:
        self.fp = fp
        self.size = size
        self.hasher = hasher
        self.pos = 0
        self.prefix = where
        self._buf: bytearray | None = None

    def where(self, offset: int) -> str:
        return f"{self.prefix}offset {offset}"

    @property
    def left(self) -> int:
        return self.size - self.pos

    def cut_short(self, n: int, what: str) -> FormatError:
        """The error for ``n`` bytes wanted where fewer are left (one wording for both readers)."""
        return FormatError(
            Code.TRUNCATED,
            f"{what}: needs {n} bytes but only {self.left} remain (file cut short?)",
            where=self.where(self.pos),
        )

    def read(self, n: int, what: str) -> bytes:
        if n > self.left:
            raise self.cut_short(n, what)
        data = self.fp.read(n)
        if len(data) != n:  # the file shrank under us
            raise FormatError(
                Code.TRUNCATED, f"{what}: file ended early", where=self.where(self.pos + len(data))
            )
        if self.hasher is not None:
            self.hasher.update(data)
        self.pos += n
        return data

    def skip(self, n: int, keep: int) -> bytes:
        """Advance ``n`` bytes (already checked to exist); return the first ``keep`` of them."""
        head = self.read(min(keep, n), "asset") if keep else b""
        n -= len(head)
        if n <= 0:
            return head
        if self.hasher is None:
            self.fp.seek(n, os.SEEK_CUR)
            self.pos += n
            return head
        if self._buf is None:
            self._buf = bytearray(CHUNK)
        buf = self._buf
        view = memoryview(buf)
        while n > 0:
            want = min(n, CHUNK)
            readinto = cast(Any, self.fp).readinto
            got = readinto(view[:want]) if want < CHUNK else readinto(buf)
            if not got:
                raise FormatError(
                    Code.TRUNCATED, "asset: file ended early", where=self.where(self.pos)
                )
            self.hasher.update(view[:got])
            self.pos += got
            n -= got
        return head

    def asset_header(self) -> int | None:
        """The length of the asset frame starting here when its marker (1) and length are
        at hand without a read (consumed), else None (nothing consumed: read them)."""
        return None

    def drain(self) -> None:
        """Consume the rest of the file (hashing it, if hashing)."""
        rest = self.left
        if rest > 0:
            self.skip(rest, 0)


class _HashedFrames(_Frames):
    """:class:`_Frames` for the hashed single pass: the file is read in fixed
    :data:`CHUNK`-sized pieces into one reused buffer (never past ``size``), each piece
    goes through the hasher as it is read, and frames are parsed out of the buffer.

    The hasher thus sees the file in the same 1 MiB updates a plain checksum would,
    instead of one update per frame header, asset head and asset rest (issue 12).
    Every check, error and location is that of :class:`_Frames`: bytes read ahead
    are only *looked at* when the parse reaches them, and a file that ends early is
    reported where the parse runs into its end.
    """

    def __init__(self, fp: BinaryIO, size: int, hasher: _Hasher, where: str) -> None:
        super().__init__(fp, size, hasher, where)
        self._hash = hasher
        # a file of one chunk is read as one bytes object (no buffer to clear first)
        self._chunk = bytearray(CHUNK) if size > CHUNK else None
        self._view = memoryview(b"")
        self._data: bytes | None = None  # the chunk, when read as bytes
        self._start = 0  # file offset of the chunk's first byte
        self._end = 0  # file offset just past the chunk's valid bytes

    def _fill(self) -> bool:
        """Read the next chunk (the current one is used up); False at the end of the file."""
        want = min(CHUNK, self.size - self._end)
        if want <= 0:
            return False
        if self._chunk is None:
            data = self.fp.read(want)
            got = len(data)
            self._data = data
            self._view = memoryview(data)
            self._hash.update(data)
        else:
            self._view = view = memoryview(self._chunk)
            readinto = cast(Any, self.fp).readinto
            got = 0
            while got < want:
                n = readinto(view[got:want])
                if not n:  # the file shrank under us
                    break
                got += n
            self._hash.update(view[:got])
        self._start = self._end
        self._end += got
        return got > 0

    def asset_header(self) -> int | None:
        pos = self.pos
        off = pos - self._start
        if pos + 5 > self._end or self._view[off] != 1:
            return None
        self.pos = pos + 5
        return int(_U32.unpack_from(self._view, off + 1)[0])

    def read(self, n: int, what: str) -> bytes:
        if n > self.left:
            raise self.cut_short(n, what)
        pos = self.pos
        if pos + n <= self._end:  # the common case: all in the current chunk
            off = pos - self._start
            self.pos = pos + n
            if self._data is not None:
                return self._data[off : off + n]
            return bytes(self._view[off : off + n])
        parts: list[bytes] = []
        need = n
        while True:
            take = min(self._end - self.pos, need)
            if take > 0:
                off = self.pos - self._start
                parts.append(bytes(self._view[off : off + take]))
                self.pos += take
                need -= take
            if not need:
                return b"".join(parts)
            if not self._fill():
                raise FormatError(
                    Code.TRUNCATED, f"{what}: file ended early", where=self.where(self.pos)
                )

    def skip(self, n: int, keep: int) -> bytes:
        head = self.read(min(keep, n), "asset") if keep else b""
        n -= len(head)
        while n > 0:
            take = min(self._end - self.pos, n)
            self.pos += take
            n -= take
            if n and not self._fill():
                raise FormatError(
                    Code.TRUNCATED, "asset: file ended early", where=self.where(self.pos)
                )
        return head


def read_risum_stream(
    fp: BinaryIO,
    size: int,
    *,
    hasher: _Hasher | None = None,
    with_assets: bool = False,
    where: str = "",
) -> RisumContents:
    """Read a ``.risum`` from ``fp`` (positioned at its start, ``size`` bytes long).

    ``where`` prefixes every location (e.g. ``"module.risum: "`` inside a card).
    """
    r = (
        _Frames(fp, size, None, where)
        if hasher is None
        else _HashedFrames(fp, size, hasher, where)
    )
    main, module = _read_main(r, size)
    out = RisumContents(main=main, module=module)
    frames, ended = _read_frames(r, with_assets)
    if not ended:
        out.anomalies.append(
            Anomaly(
                "missing-end-marker",
                r.where(r.pos),
                "the file ends without the end marker (RisuAI tolerates this)",
            )
        )
    out.end = r.pos
    if r.left > 0:
        out.anomalies.append(
            Anomaly(
                "trailing-bytes",
                r.where(r.pos),
                f"{r.left} byte(s) after the end marker are ignored",
            )
        )
        r.drain()
    out.assets = _match_assets(module, frames, out.anomalies, r.prefix)
    return out


def _read_main(r: _Frames, size: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """Magic, version, the main block: the decoded main object and its ``module``."""
    if size == 0:
        raise FormatError(Code.EMPTY_FILE, "the file is empty", where=r.where(0))
    first = r.read(1, "magic")[0]
    if first != MAGIC:
        raise FormatError(
            Code.BAD_MAGIC,
            f"not a .risum: first byte is 0x{first:02x}, expected 0x6f",
            where=r.where(0),
        )
    header = r.read(5, "header (version + main block length)")
    if header[0] != VERSION:
        raise FormatError(
            Code.BAD_VERSION,
            f"unsupported .risum version {header[0]} (only version 0 exists)",
            where=r.where(1),
        )
    (n,) = _U32.unpack_from(header, 1)
    if n > r.left:
        raise FormatError(
            Code.LENGTH_BEYOND_EOF,
            f"main block declares {n} bytes but only {r.left} remain (truncated download?)",
            where=r.where(2),
        )
    if n > MAX_MAIN_BYTES:
        raise FormatError(
            Code.TOO_LARGE,
            f"main block of {n} bytes exceeds the {MAX_MAIN_BYTES} byte bound",
            where=r.where(2),
        )
    main_where = r.where(6) + " (main block)"
    raw = rpack.decode(r.read(n, "main block"))
    main = loads_object(raw, where=main_where, what="main block")
    del raw
    kind = main.get("type")
    if kind != "risuModule":
        raise FormatError(
            Code.WRONG_TYPE,
            f'main block "type" is {json.dumps(kind, ensure_ascii=False)[:60]}, '
            'expected "risuModule"',
            where=main_where,
        )
    module = main.get("module")
    if not isinstance(module, dict):
        raise FormatError(
            Code.MODULE_NOT_OBJECT,
            'main block has no "module" object',
            where=main_where,
        )
    return main, module


_Frame = tuple[int, int, bytes, bytes | None]  # offset, size, head, data


def _read_frames(r: _Frames, with_assets: bool) -> tuple[list[_Frame], bool]:
    """The asset frames up to the end marker (or the end of the file): the frames, and
    whether the end marker was there."""
    frames: list[_Frame] = []
    while r.left > 0:
        at = r.pos
        length = r.asset_header() if len(frames) < MAX_ASSETS else None
        if length is None:
            marker = r.read(1, "frame marker")[0]
            if marker == 0:
                return frames, True
            if marker != 1:
                raise FormatError(
                    Code.BAD_FRAME_MARKER,
                    f"frame marker is 0x{marker:02x}, expected 1 (asset) or 0 (end)",
                    where=r.where(at),
                )
            if len(frames) >= MAX_ASSETS:
                raise FormatError(
                    Code.TOO_LARGE, f"more than {MAX_ASSETS} asset frames", where=r.where(at)
                )
            length = _U32.unpack(r.read(4, f"asset frame {len(frames)} length"))[0]
        if length > r.left:
            raise FormatError(
                Code.LENGTH_BEYOND_EOF,
                f"asset frame {len(frames)} declares {length} bytes but only {r.left} remain "
                "(truncated download?)",
                where=r.where(at + 1),
            )
        start = r.pos
        if with_assets:
            decoded = rpack.decode(r.read(length, f"asset frame {len(frames)}"))
            head = decoded[:HEAD_BYTES]
            data: bytes | None = decoded
        else:
            data = None
            head = rpack.decode(r.skip(length, HEAD_BYTES))
        frames.append((start, length, head, data))
    return frames, False


def _match_assets(
    module: dict[str, Any],
    frames: list[_Frame],
    anomalies: list[Anomaly],
    prefix: str,
) -> list[AssetInfo]:
    entries = module.get("assets")
    if entries is None:
        entries = []
    if not isinstance(entries, list):
        anomalies.append(
            Anomaly("asset-entry-invalid", f"{prefix}/module/assets", "module.assets is not a list")
        )
        entries = []
    if len(entries) > MAX_ASSETS:
        raise FormatError(
            Code.TOO_LARGE,
            f"module.assets has {len(entries)} entries; the bound is {MAX_ASSETS}",
            where=f"{prefix}/module/assets",
        )
    assets: list[AssetInfo] = []
    for i in range(max(len(entries), len(frames))):
        name = path = ext = ""
        if i < len(entries):
            entry = entries[i]
            if (
                isinstance(entry, list)
                and len(entry) >= 1
                and all(isinstance(x, str) for x in entry[:3])
            ):
                name = entry[0]
                path = entry[1] if len(entry) > 1 else ""
                ext = entry[2] if len(entry) > 2 else ""
            else:
                anomalies.append(
                    Anomaly(
                        "asset-entry-invalid",
                        f"{prefix}/module/assets/{i}",
                        "asset entry is not a [name, path, ext] list of strings",
                    )
                )
        info = AssetInfo(index=i, name=name, path=path, ext=ext)
        if i < len(frames):
            offset, length, head, data = frames[i]
            info.offset, info.size, info.head, info.data = offset, length, head, data
            if data is not None:
                info.sha256 = hashlib.sha256(data).hexdigest()
        assets.append(info)
    if len(frames) != len(entries):
        more = "more" if len(frames) > len(entries) else "fewer"
        anomalies.append(
            Anomaly(
                "asset-count-mismatch",
                f"{prefix}/module/assets",
                f"{len(frames)} asset frame(s) but {len(entries)} module.assets entr"
                f"{'y' if len(entries) == 1 else 'ies'} ({more} frames than entries)",
            )
        )
    return assets


def read_risum_bytes(data: bytes, *, with_assets: bool = False, where: str = "") -> RisumContents:
    """Read a ``.risum`` held in memory (e.g. the ``module.risum`` member of a card)."""
    return read_risum_stream(io.BytesIO(data), len(data), with_assets=with_assets, where=where)


def read_risum(path: str | os.PathLike[str], *, with_assets: bool = False) -> Module:
    """Read the module out of a ``.risum`` WITHOUT hashing: assets are seeked past.

    The time taken does not depend on the size of the assets.  ``source.sha256``
    is empty; use :func:`risutools.formats.read_path` for the hashed, single-pass read.
    """
    p = os.fspath(path)

    fp, size = open_regular(p)
    with fp:
        got = read_risum_stream(fp, size, with_assets=with_assets)
    return Module(
        data=got.module,
        source=SourceInfo(path=str(p), format="risum", size=size, sha256=""),
        assets=got.assets,
        anomalies=got.anomalies,
    )


# -- writing -----------------------------------------------------------------


def main_block(module: dict[str, Any]) -> bytes:
    """The UTF-8 JSON of the main object, as RisuAI writes it (2-space indent)."""
    value = {"module": module, "type": "risuModule"}
    try:
        return json.dumps(value, ensure_ascii=False, indent=2, allow_nan=False).encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: escape them like JSON.stringify does
        return json.dumps(value, ensure_ascii=True, indent=2, allow_nan=False).encode("ascii")
    except ValueError as exc:
        raise FormatError(Code.NOT_JSON, f"module cannot be written as JSON: {exc}") from None


#: the byte that ends a ``.risum`` (after its last asset frame)
RISUM_END = b"\x00"


def risum_head(module: dict[str, Any]) -> bytes:
    """The bytes of a ``.risum`` before its asset frames: magic, version, the main block."""
    main = main_block(module)
    if len(main) > 0xFFFFFFFF:
        raise FormatError(Code.TOO_LARGE, "main block exceeds 4 GiB")
    return bytes([MAGIC, VERSION]) + _U32.pack(len(main)) + rpack.encode(main)


def asset_head(size: int, what: str) -> bytes:
    """The bytes that open an asset frame of ``size`` bytes (its RPack bytes follow)."""
    if size > MAX_FRAME_BYTES:
        raise FormatError(Code.TOO_LARGE, f"{what} of {size} bytes exceeds the {MAX_FRAME_BYTES} "
                          "bytes an asset frame can hold (its length is a u32)")
    return b"\x01" + _U32.pack(size)


def iter_risum(module: dict[str, Any], assets: Iterable[bytes]) -> Iterator[bytes]:
    """Yield the bytes of a ``.risum`` piece by piece (assets are encoded one at a time)."""
    yield risum_head(module)
    for i, asset in enumerate(assets):
        yield asset_head(len(asset), f"asset {i}")
        yield rpack.encode(asset)
    yield RISUM_END


def write_risum(module: dict[str, Any], assets: list[bytes]) -> bytes:
    """The bytes of a ``.risum`` holding ``module`` and ``assets`` (in ``module.assets`` order)."""
    return b"".join(iter_risum(module, assets))
