"""Units of work shared out between a process and the workers it forks, each taken by
one of them only: :class:`Claims` (the review's first pass on all cores shares its chunks
so: :mod:`risutools.catalog.review_pass`)."""

from __future__ import annotations

import fcntl
import os
import tempfile

from risutools.rowspool import temporary_folder


class Claims:
    """Which chunks are taken, shared by the parent and the workers it forks: a byte a unit
    (0: free, 1: a worker's, 2: the parent's) in an unnamed temporary file, read and set under
    a POSIX record lock (``fcntl.lockf``: the kernel lets it go when the process holding it
    ends, however it ends)."""

    def __init__(self, units: int) -> None:
        with temporary_folder():
            self._file = tempfile.TemporaryFile()  # noqa: SIM115 - open while the pool lives
            os.ftruncate(self._file.fileno(), units)
        self.units = units
        try:  # (a temporary folder whose files take no record lock: OSError, said here)
            fcntl.lockf(self._file.fileno(), fcntl.LOCK_EX)
            fcntl.lockf(self._file.fileno(), fcntl.LOCK_UN)
        except OSError:
            self._file.close()
            raise

    def take(self, k: int) -> bool:
        """Unit ``k`` for the worker asking, if it is free."""
        fd = self._file.fileno()
        fcntl.lockf(fd, fcntl.LOCK_EX)
        try:
            if os.pread(fd, 1, k) != b"\0":
                return False
            os.pwrite(fd, b"\1", k)
            return True
        finally:
            fcntl.lockf(fd, fcntl.LOCK_UN)

    def take_last(self, chunks: list[int]) -> int | None:
        """The last unit of ``chunks`` still free, for the parent (those after it, and it,
        are dropped from ``chunks``); None when every one is taken."""
        fd = self._file.fileno()
        fcntl.lockf(fd, fcntl.LOCK_EX)
        try:
            state = os.pread(fd, self.units, 0)
            while chunks:
                k = chunks.pop()
                if state[k] == 0:
                    os.pwrite(fd, b"\2", k)
                    return k
            return None
        finally:
            fcntl.lockf(fd, fcntl.LOCK_UN)

    def close(self) -> None:
        self._file.close()
