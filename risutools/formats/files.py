"""Opening a Risu file: regular files only, with the format errors' codes."""

from __future__ import annotations

import os
from typing import BinaryIO, cast

from risutools.errors import Code, FormatError
from risutools.safeio import FileRefused
from risutools.safeio import open_regular as safe_open


def open_regular(path: str | os.PathLike[str]) -> tuple[BinaryIO, int]:
    """Open ``path`` for reading only if it is a regular file; return (file, size).

    The one safe open of :mod:`risutools.safeio`: a first ``stat`` refuses anything
    but a regular file (whatever a symlink points at) without opening it, the open
    uses ``O_NONBLOCK`` (a FIFO swapped in meanwhile cannot block it) and the
    *opened descriptor*'s ``fstat`` decides (no check-then-read race).  A symlink
    to ``/dev/zero``, a FIFO, a socket or a folder is refused in one line, with the
    format errors' codes (``not-a-file``, ``not-found``, ``unreadable``).
    """
    p = os.fspath(path)
    try:
        fp = safe_open(p)
    except FileRefused as exc:
        why = "no such file" if exc.code == Code.NOT_FOUND else exc.why
        raise FormatError(exc.code, why, path=p) from None
    return cast(BinaryIO, fp), os.fstat(fp.fileno()).st_size
