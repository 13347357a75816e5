"""Opening a Risu file: regular files only, with the format errors' codes."""

from __future__ import annotations

import os
from typing import BinaryIO, cast

from risutools.errors import Code, FormatError
from risutools.safeio import FileRefused, FoundFile
from risutools.safeio import open_regular as safe_open


def open_regular(path: str | os.PathLike[str], found: FoundFile | None = None
                 ) -> tuple[BinaryIO, int]:
    """Open ``path`` for reading only if it is a regular file; return (file, size).

    The one safe open of :mod:`risutools.safeio`: a first ``stat`` refuses anything
    but a regular file (whatever a symlink points at) without opening it, the open
    uses ``O_NONBLOCK`` (a FIFO swapped in meanwhile cannot block it) and the
    *opened descriptor*'s ``fstat`` decides (no check-then-read race).  A symlink
    to ``/dev/zero``, a FIFO, a socket or a folder is refused in one line, with the
    format errors' codes (``not-a-file``, ``not-found``, ``unreadable``).  ``found``: the
    file a folder walk found there (:func:`risutools.safeio.open_regular`).
    """
    p = os.fspath(path)
    try:
        fp = safe_open(p, found=found)
    except FileRefused as exc:
        why = "no such file" if exc.code == Code.NOT_FOUND else exc.why
        raise FormatError(exc.code, why, path=p) from None
    return cast(BinaryIO, fp), os.fstat(fp.fileno()).st_size


def read_to_bound(fp: BinaryIO, size: int, limit: int) -> bytes:
    """The bytes of ``fp`` from where it stands, at most ``limit + 1`` (a byte past the bound
    tells a file that grew past it): first as many as the file had when opened (``size``)
    and one more, then, only when the file grew since, on to the bound.  (One read of
    ``limit + 1`` bytes allocates that much first: ~20 us for a bound of 64 MiB, on every
    small file.)"""
    want = min(size, limit) + 1
    first = fp.read(want)
    if len(first) < want:
        return first  # (the end, where the size said)
    return first + fp.read(limit + 1 - want)
