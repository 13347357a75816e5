"""A report's long lists (its requests, its alerts) kept out of memory while a replay runs.

A :class:`Spool` takes rows (plain JSON values, one a request) one at a time and writes
them in batches of :data:`BATCH`, each batch three times: its canonical form (the bytes the
report's ``report_sha256`` hashes), its indented form (the bytes of the report file) and
as ``marshal`` data (to read the rows back, in this process only), into temporary files
that stay in memory up to :data:`IN_MEMORY` bytes each and go to the temporary folder past
that (``tempfile.SpooledTemporaryFile``, unnamed: nothing is written to the catalog or
beside the report).  What a replay keeps of its rows is then one batch and the three
buffers, whatever the fixture's length; the report file is streamed from the spools
(:func:`indented_pieces`) and so is its hash (:func:`canonical_pieces`), byte for byte
what :func:`~risutools.canonical.indented` and :func:`~risutools.canonical.canonical`
give for the same report held whole.  The temporary folder holds about twice the report
file's size while the replay runs (gone when it ends).

A spool is a read-only sequence of its rows too, read back in order one batch at a time,
so the Markdown and HTML renderings read it as they read a list (in one pass each).
"""

from __future__ import annotations

import itertools
import marshal
import struct
import tempfile
from collections.abc import Callable, Iterator, Sequence
from typing import IO, Any, overload

from risutools.canonical import alike_levels, canonical, halved, indented
from risutools.replay.row_form import RowShape
from risutools.rowspool import temporary_folder

try:
    import orjson
except ImportError:  # pragma: no cover - orjson is a dependency; json writes the same
    orjson = None  # type: ignore[assignment]

#: rows serialised together (one orjson call, one check of their floats)
BATCH = 512
#: bytes each of a spool's files keeps in memory before it moves to the temp folder
IN_MEMORY = 1024 * 1024
#: bytes read at a time when a file is streamed out
READ_CHUNK = 1024 * 1024
_LENGTH = struct.Struct("<Q")
#: rows' scalars, each row's in the order of its template's holes, and which template each
#: is (:meth:`RowShape.forms_of`)
RowValues = tuple[list[tuple[Any, ...]], list[tuple[bool, ...]]]


class Columns:
    """Rows' scalars by column, the rows all of one template (``kind``, as in
    :data:`RowValues`): each hole's values, one a row (``n`` rows)."""

    __slots__ = ("columns", "kind", "n")

    def __init__(self, kind: tuple[bool, ...], columns: list[Sequence[Any]], n: int) -> None:
        self.kind = kind
        self.columns = columns
        self.n = n

    def cut(self, start: int, stop: int) -> Columns:
        """The rows from ``start`` to ``stop``."""
        if start == 0 and stop == self.n:
            return self
        return Columns(self.kind, [c[start:stop] for c in self.columns], stop - start)

    def rows(self) -> RowValues:
        """The same rows' :data:`RowValues`."""
        return list(zip(*self.columns, strict=True)), [self.kind] * self.n


#: what a spool is given of rows' scalars: by row, or by column
Given = RowValues | Columns
#: whether a spool keeps its rows to be read back: always, never, or while the function
#: says they may yet be read (asked at each batch; once False, they are not kept since)
Keep = bool | Callable[[], bool]


class Spool(Sequence[dict[str, Any]]):
    """Rows appended one by one, stored serialised (see the module's text).

    Read back in order (``for row in spool``: one batch in memory at a time); an index or
    a slice reads from the start."""

    def __init__(self, readable: Keep = True, shape: RowShape | None = None) -> None:
        """``readable``: the rows can be read back (kept a third time, as ``marshal``
        data); a spool that is not only writes the report's two forms (its rows read back
        raise RuntimeError: what a replay whose renderings were gathered as it ran needs).
        A function: they are kept while it says they may yet be read (:data:`Keep`).
        ``shape``: the rows' usual shape, whose batches are written from its templates
        (:meth:`RowShape.forms`; a batch not of it as any other)."""
        self._shape = shape
        self._canon = _temp()  # the rows' canonical forms, comma between
        self._indent = _temp()  # the rows as the report file holds them
        #: the batches as marshal data, to read the rows back
        self._back: IO[bytes] | None = _temp() if readable else None
        self._keep: Callable[[], bool] | None = readable if callable(readable) else None
        self._count = 0  # rows in the files
        #: the rows not yet written: (rows, start, stop) of each part given (a list of rows
        #: copied, any other sequence kept as it is: its rows read only if needed)
        self._pending: list[tuple[Sequence[dict[str, Any]], int, int]] = []
        self._waiting = 0  # rows in them
        #: the pending rows' scalars and templates, while each was given with them
        self._values: list[Given] | None = []

    @property
    def readable(self) -> bool:
        """The rows can be read back."""
        return self._back is not None

    def append(self, row: dict[str, Any]) -> None:
        self._values = None  # (the batch is read from its rows)
        self._add([row], 0, 1)

    def extend(self, rows: Sequence[dict[str, Any]], values: Given | None = None) -> None:
        """:meth:`append` of each row, in order (the batches cut where appending cuts them);
        ``values``: the rows' scalars and templates (:meth:`RowShape.forms_of`, or by
        column: :meth:`RowShape.forms_of_columns`; the caller's word that they are the
        rows' own), for a batch made only of rows given with theirs to be written from
        them, and whose rows are then not read (unless the spool is readable) when
        ``rows`` is not a list."""
        if values is None:
            self._values = None
        at, n = 0, len(rows)
        while at < n:
            take = min(BATCH - self._waiting, n - at)
            if self._values is not None and values is not None:
                self._values.append(values.cut(at, at + take) if isinstance(values, Columns)
                                    else (values[0][at:at + take], values[1][at:at + take]))
            if type(rows) is list:  # (the caller's list may change: its rows taken now)
                self._add(rows[at:at + take], 0, take)
            else:
                self._add(rows, at, at + take)
            at += take

    def _add(self, rows: Sequence[dict[str, Any]], start: int, stop: int) -> None:
        self._pending.append((rows, start, stop))
        self._waiting += stop - start
        if self._waiting >= BATCH:
            self._flush()

    def _rows(self) -> list[dict[str, Any]]:
        """The pending rows, read."""
        out: list[dict[str, Any]] = []
        for rows, start, stop in self._pending:
            out.extend(rows if start == 0 and stop == len(rows) else rows[start:stop])
        return out

    def _flush(self) -> None:
        given, self._values = self._values, []
        n = self._waiting
        if not n:
            return
        forms = None
        if given is not None and self._shape is not None and _count(given) == n:
            forms = _given_forms(self._shape, given)
        if self._keep is not None and not self._keep():  # (not to be read: kept no longer)
            self.forget()
        back = self._back
        rows = self._rows() if forms is None or back is not None else []
        self._pending, self._waiting = [], 0
        if forms is None and self._shape is not None:
            forms = self._shape.forms(rows)
        canon, body = forms if forms is not None else _serialised(rows)
        first = not self._count
        # plain JSON values: read back equal, by this process
        data = marshal.dumps(rows) if back is not None else b""
        with temporary_folder():  # full or gone: one line (unwritable), never a bug report
            if not first:  # (written apart: the batch is not copied to be joined)
                self._canon.write(b",")
                self._indent.write(b",\n")
            self._canon.write(canon)
            self._indent.write(body)
            if back is not None:
                back.write(_LENGTH.pack(len(data)) + data)
        self._count += n

    def hold(self) -> None:
        """Keep the rows to be read back from now on, if they are still kept (the
        function given no longer asked)."""
        self._keep = None

    def forget(self) -> None:
        """Keep the rows no longer to be read back (those kept are let go)."""
        if self._back is not None:
            self._back.close()
        self._back = self._keep = None

    def __len__(self) -> int:
        return self._count + self._waiting

    @overload
    def __getitem__(self, i: int) -> dict[str, Any]: ...

    @overload
    def __getitem__(self, i: slice) -> list[dict[str, Any]]: ...

    def __getitem__(self, i: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        n = len(self)
        if isinstance(i, slice):
            a, b, step = i.indices(n)
            if step < 0:
                return list(self)[i]
            return list(itertools.islice(self, a, max(a, b), step))
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(i)
        return next(itertools.islice(self, i, None))

    def __iter__(self) -> Iterator[dict[str, Any]]:
        if self._back is None:
            raise RuntimeError("this spool's rows are not kept to be read back")
        self._flush()
        f, at = self._back, 0
        while True:
            with temporary_folder():
                f.seek(at)
                head = f.read(_LENGTH.size)
                if not head:
                    break
                (size,) = _LENGTH.unpack(head)
                batch = marshal.loads(f.read(size))
                f.seek(0, 2)  # appending may go on between two batches read
            at += _LENGTH.size + size
            yield from batch

    def canonical_body(self) -> Iterator[bytes]:
        """The rows' canonical forms, comma between (what sits in the report's ``[...]``)."""
        self._flush()
        yield from _chunks(self._canon)

    def indented_body(self) -> Iterator[bytes]:
        """The rows as the report file holds them, two levels deep, ``,\\n`` between."""
        self._flush()
        yield from _chunks(self._indent)

    def close(self) -> None:
        for f in (self._canon, self._indent, self._back):
            if f is not None:
                f.close()


def _count(given: list[Given]) -> int:
    return sum(g.n if isinstance(g, Columns) else len(g[1]) for g in given)


def _given_forms(shape: RowShape, given: list[Given]) -> tuple[bytes, bytes] | None:
    """The forms of rows given by their scalars (:meth:`RowShape.forms_of_columns` when all
    were given by column, of one template; else :meth:`RowShape.forms_of`)."""
    blocks = [g for g in given if isinstance(g, Columns)]
    if len(blocks) == len(given) and len({b.kind for b in blocks}) == 1:
        columns = blocks[0].columns if len(blocks) == 1 else [
            list(itertools.chain.from_iterable(c)) for c in zip(*(b.columns for b in blocks),
                                                                strict=True)]
        return shape.forms_of_columns(columns, blocks[0].kind)
    values: list[tuple[Any, ...]] = []
    kinds: list[tuple[bool, ...]] = []
    for g in given:
        v, k = g.rows() if isinstance(g, Columns) else g
        values.extend(v)
        kinds.extend(k)
    return shape.forms_of(values, kinds)


def _temp() -> IO[bytes]:
    return tempfile.SpooledTemporaryFile(max_size=IN_MEMORY)


def _serialised(rows: list[dict[str, Any]]) -> tuple[bytes, bytes]:
    """The batch's canonical form without its brackets, and its rows as the report file
    holds them: the list one level deep, its rows two (each line indented one space more
    than :func:`indented` writes them), without the brackets.  By orjson when the batch is
    made of values it spells as ``json`` does (:func:`alike_levels`, checked once for
    both), else by :func:`canonical` and :func:`indented`."""
    levels = alike_levels(rows) if orjson is not None else None
    if levels is not None:
        try:
            canon = orjson.dumps(rows, option=orjson.OPT_SORT_KEYS)
            # the batch inside a list: its rows two levels deep, as in the report
            block = orjson.dumps([rows], option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS)
        except TypeError:  # an integer past 64 bits, an unpaired surrogate
            pass
        else:
            # "[\n [\n" ... "\n ]\n]"
            return canon[1:-1], _halve(block, canon, levels + 1)[5:-5]
    return canonical(rows)[1:-1], b" " + indented(rows)[2:-3].replace(b"\n", b"\n ")


def _halve(block: bytes, canon: bytes, levels: int) -> bytes:
    """orjson's indented ``block`` with two spaces a level made one (:func:`halved`).

    In one pass when no string of the batch holds two spaces in a row (none in ``canon``,
    the same strings without any whitespace between the values): the only runs of two
    spaces or more in ``block`` are then the indents (a newline, two spaces a level, then
    the value; the single space after a key's colon is followed by the value), and
    replacing each pair of spaces by one halves every indent, and nothing else."""
    if b"  " in canon:
        return halved(block, levels)
    return block.replace(b"  ", b" ")


def _chunks(f: IO[bytes]) -> Iterator[bytes]:
    at = 0
    while True:
        with temporary_folder():
            f.seek(at)
            data = f.read(READ_CHUNK)
            f.seek(0, 2)
        if not data:
            break
        at += len(data)
        yield data


def _groups(doc: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    """``doc``'s keys in sorted order, runs of plain values gathered as one dict (key
    ``""``), each spool on its own."""
    run: dict[str, Any] = {}
    for k in sorted(doc):
        v = doc[k]
        if isinstance(v, Spool):
            if run:
                yield "", run
                run = {}
            yield k, v
        else:
            run[k] = v
    if run:
        yield "", run


def canonical_pieces(doc: dict[str, Any]) -> Iterator[bytes]:
    """:func:`risutools.canonical.canonical` of ``doc`` in pieces, its spools streamed."""
    yield b"{"
    first = True
    for key, value in _groups(doc):
        if not first:
            yield b","
        first = False
        if isinstance(value, Spool):
            yield canonical(key) + b":["
            yield from value.canonical_body()
            yield b"]"
        else:
            yield canonical(value)[1:-1]
    yield b"}"


def indented_pieces(doc: dict[str, Any]) -> Iterator[bytes]:
    """:func:`risutools.canonical.indented` of ``doc`` in pieces, its spools streamed."""
    yield b"{\n"
    first = True
    for key, value in _groups(doc):
        if not first:
            yield b",\n"
        first = False
        if isinstance(value, Spool):
            name = b" " + canonical(key) + b": ["
            if not len(value):
                yield name + b"]"
                continue
            yield name + b"\n"
            yield from value.indented_body()
            yield b"\n ]"
        else:
            yield indented(value)[2:-3]  # between "{\n" and "\n}\n"
    yield b"\n}\n"
