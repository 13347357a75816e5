"""Long lists of report rows kept out of memory (:class:`Rows`), and values kept packed
(:func:`pack`, :func:`unpack`), many of them in one temporary file (:class:`Spool`).

A command that makes one row per document (the review's documents, digests and board)
appends each row as it is made; the rows are kept :data:`BATCH` to a block, each block as
its canonical JSON (what a JSON report writes of it, copied there as it is) or, when its
values are not all plain JSON, as ``marshal`` data, in one unnamed temporary file that
stays in memory up to :data:`IN_MEMORY` bytes and moves to the temporary folder past that
(``tempfile.SpooledTemporaryFile``: nothing is written beside the catalog or the report).
What stays in memory is then one block and the blocks' sizes, whatever the number of rows.

``Rows`` is a read-only sequence: ``for row in rows`` reads the blocks back in order (a new
copy of each row every time), ``len`` and ``bool`` are known, an index or a slice reads
from the block that holds it.  Only this process reads them back.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, overload

from risutools.canonical import plain_canonical, plain_levels
from risutools.errors import Code, RisuError

try:
    import orjson
except ImportError:  # pragma: no cover - orjson is a dependency; marshal packs the same
    orjson = None  # type: ignore[assignment]

#: rows marshalled together
BATCH = 256
#: bytes the temporary file keeps in memory before it moves to the temporary folder
IN_MEMORY = 1024 * 1024
#: bytes of packed values a :class:`Spool` gathers before it writes them to its file
SPOOL_WRITE = 1 << 20


class Rows(Sequence[dict[str, Any]]):
    """Rows appended one by one, stored in blocks (see the module's text).  ``weigh``: what
    a row counts for towards a block's :data:`BATCH` (each row 1 without it), for rows that
    may be long themselves (a lineage of thousands of reposts, a relation naming thousands
    of components: :func:`items`): a block then holds at most a batch of items, or one row
    alone, whatever its rows' sizes."""

    def __init__(self, rows: Iterable[dict[str, Any]] = (), *,
                 weigh: Callable[[dict[str, Any]], int] | None = None) -> None:
        self._file = tempfile.SpooledTemporaryFile(max_size=IN_MEMORY)  # noqa: SIM115
        self._blocks: list[tuple[int, int, int]] = []  # (offset, size, rows) of each block
        self._stored = 0  # rows in the blocks
        self._end = 0  # bytes in the file
        self._pending: list[dict[str, Any]] = []
        self._weigh = weigh
        self._weight = 0  # what the pending rows count for (with ``weigh``)
        for row in rows:
            self.append(row)

    def append(self, row: dict[str, Any]) -> None:
        if self._weigh is None:
            self._pending.append(row)
            if len(self._pending) >= BATCH:
                self._flush()
            return
        weight = self._weigh(row)
        if self._pending and self._weight + weight > BATCH:
            self._flush()  # (a block of at most BATCH items, or one row alone)
        self._pending.append(row)
        self._weight += weight
        if self._weight >= BATCH:
            self._flush()

    def _flush(self) -> None:
        rows, self._pending = self._pending, []
        self._weight = 0
        if not rows:
            return
        data = _stored_form(rows)
        with temporary_folder():
            self._file.seek(self._end)
            self._file.write(data)
        self._blocks.append((self._end, len(data), len(rows)))
        self._end += len(data)
        self._stored += len(rows)

    def _data(self, i: int) -> bytes:
        offset, size, _count = self._blocks[i]
        with temporary_folder():
            self._file.seek(offset)
            data = self._file.read(size)
            if len(data) != size:
                raise OSError(f"a row spool gave {len(data)} of {size} bytes")
        return data

    def _block(self, i: int) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = unpack(self._data(i))
        return rows

    def blocks(self) -> Iterator[list[dict[str, Any]]]:
        """The rows in order, a block at a time."""
        for i in range(len(self._blocks)):
            yield self._block(i)
        if self._pending:
            yield list(self._pending)

    def canonical_blocks(self) -> Iterator[bytes | list[dict[str, Any]]]:
        """Each block in order: the canonical form of its list of rows
        (:func:`risutools.canonical.canonical`), as stored, where its values are plain JSON;
        otherwise its rows, read back."""
        for i in range(len(self._blocks)):
            data = self._data(i)
            yield data[1:] if data[:1] == b"j" else unpack(data)
        if self._pending:
            yield list(self._pending)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for block in self.blocks():
            yield from block

    def __len__(self) -> int:
        return self._stored + len(self._pending)

    @overload
    def __getitem__(self, i: int) -> dict[str, Any]: ...

    @overload
    def __getitem__(self, i: slice) -> list[dict[str, Any]]: ...

    def __getitem__(self, i: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        if isinstance(i, slice):
            return list(self)[i]
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("row index out of range")
        start = 0
        for b, (_offset, _size, count) in enumerate(self._blocks):
            if i < start + count:
                return self._block(b)[i - start]
            start += count
        return self._pending[i - start]

    def __repr__(self) -> str:
        return f"Rows({len(self)} rows)"


def items(row: dict[str, Any]) -> int:
    """A row's weight for :class:`Rows` (``weigh``): one, and one more for each item of
    each of its lists (a lineage's members, reposts and versions; a relation's targets and
    keys)."""
    return 1 + sum([len(v) for v in row.values() if type(v) is list])

class Spool:
    """Packed values (:func:`pack`) in one unnamed temporary file (gone when the spool is),
    each read back by its offset and size: a new copy each time.  Only this process writes
    and reads it.  What stays in memory is the last :data:`SPOOL_WRITE` bytes put."""

    def __init__(self) -> None:
        with temporary_folder():
            self._file = tempfile.TemporaryFile()  # noqa: SIM115 - open while the spool lives
        self._end = 0  # bytes put
        self._written = 0  # bytes in the file (the rest wait in _pending)
        #: the values put since, joined once when written (a bytearray they were appended
        #: to grew by an eighth at a time: each value cost copies of the whole buffer, about
        #: eight bytes copied a byte put)
        self._pending: list[bytes] = []

    def add(self, blob: bytes) -> int:
        """Store one packed value; its offset (:meth:`read` it with ``len(blob)``)."""
        offset = self._end
        self._pending.append(blob)
        self._end = end = offset + len(blob)
        if end - self._written >= SPOOL_WRITE:
            self._flush()
        return offset

    def put(self, blob: bytes) -> Callable[[], Any]:
        """Store one packed value; what reads it back."""
        return _Stored(self, self.add(blob), len(blob))

    def _flush(self) -> None:
        with temporary_folder():
            self._file.write(b"".join(self._pending))
            self._file.flush()
        self._written = self._end
        self._pending.clear()

    def read(self, offset: int, size: int) -> Any:
        """The value stored at ``offset`` (``size`` bytes), unpacked."""
        if offset + size > self._written:
            self._flush()
        try:  # (as temporary_folder() says it: a context manager costs more than the read)
            data = os.pread(self._file.fileno(), size, offset)
            if len(data) != size:
                raise OSError(f"a spool gave {len(data)} of {size} bytes")
        except OSError as exc:
            raise _unwritable(exc) from None
        return unpack(data)


class _Stored:
    """One value of a :class:`Spool`: called, it is read back.  Its offset and size are one
    number (``offset << 32 | size``: a review holds two of these a document)."""

    __slots__ = ("at", "spool")

    def __init__(self, spool: Spool, offset: int, size: int) -> None:
        if size >> 32:
            raise ValueError("a spooled value of 4 GiB or more")  # (never: values are bounded)
        self.spool, self.at = spool, offset << 32 | size

    def __call__(self) -> Any:
        at = self.at
        return self.spool.read(at >> 32, at & 0xFFFFFFFF)


def pack(value: Any, *, parsed_by_orjson: bool = False) -> bytes:
    """``value`` (a JSON or YAML parser's: dict, list, str, int, float, bool, None) as bytes
    this process reads back equal (:func:`unpack`): orjson's JSON when orjson parsed it (it
    then writes exactly what it read, and reads it back twice as fast as ``marshal``),
    ``marshal`` data otherwise (an integer past 64 bits, a key that is not a string);
    ``ValueError`` for anything else."""
    if parsed_by_orjson and orjson is not None:
        try:
            return b"j" + orjson.dumps(value)
        except TypeError:
            pass
    return b"m" + marshal.dumps(value)


def pack_parsed(text: bytes) -> bytes:
    """:func:`pack` of the value orjson parsed from the JSON ``text`` as it is, without
    writing the value again: the text itself, which :func:`unpack` parses again into the
    same value (its whitespace and all; what orjson took once it takes again)."""
    return b"j" + text


def unpack(data: bytes) -> Any:
    """What :func:`pack` packed."""
    body = memoryview(data)[1:]
    if data[:1] == b"j":
        return orjson.loads(body)
    return marshal.loads(body)


def _stored_form(rows: list[dict[str, Any]]) -> bytes:
    """A block as stored, as :func:`pack` packs (:func:`unpack` reads it back): its
    canonical form after ``j`` (what a JSON report writes of it, and orjson reads back equal:
    only plain values, string keys, integers within 64 bits), else its ``marshal`` data."""
    if plain_levels(rows) is not None:
        canon = plain_canonical(rows)
        if canon is not None:
            return b"j" + canon
    return pack(rows)


@contextlib.contextmanager
def temporary_folder() -> Iterator[None]:
    """What goes wrong writing or reading back a spool in the temporary folder (full, gone,
    read-only) as one line: ``unwritable``, naming the folder and ``TMPDIR``."""
    try:
        yield
    except OSError as exc:
        raise _unwritable(exc) from None


def _unwritable(exc: OSError) -> RisuError:
    return RisuError(Code.UNWRITABLE, f"the temporary folder cannot hold what is kept out of "
                     f"memory: {exc.strerror or exc} (set TMPDIR to a folder with room)",
                     path=tempfile.gettempdir())
