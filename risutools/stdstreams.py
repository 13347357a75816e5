"""Standard streams that were closed when the program started (``risutools validate x >&-``,
``2>&-``, ``<&-``).

A descriptor 0, 1 or 2 left closed is the lowest free number, so the first file the program
opens takes it: a document being written, a catalog's log, a temporary file.  Whatever is then
written "to standard error" (Python's own last words, a warning, a child process such as
``ssh-keygen`` that inherits it) lands in that file, and a file replaced atomically carries
it into the catalog.  :func:`occupy_closed` opens the null device on each such descriptor
before anything else is opened, and gives Python's streams (``None`` there) a stand-in:

* standard output: a stream whose every write fails (:class:`StreamClosed`, an ``OSError``
  with ``EBADF``), so a command that has something to print says in one line that it
  could not (``standard output: unwritable``) and exits 2, as ``ls >&-`` does, instead of
  an internal error; a command that prints nothing is not affected;
* standard input: a stream whose every read fails the same way (``-`` read from a closed
  input is one line, never an empty document);
* standard error: the null device (closed, it was asked to say nothing).
"""

from __future__ import annotations

import errno
import io
import os
import sys

#: the text of a closed stream's refusal
CLOSED_TEXT = "it was closed when the program started"


class StreamClosed(OSError):
    """A read or write on a standard stream that was closed when the program started."""

    def __init__(self) -> None:
        super().__init__(errno.EBADF, CLOSED_TEXT)


class _Refusing(io.RawIOBase):
    """A raw stream on descriptor ``fd`` (the null device now) every read and write of
    which raises :class:`StreamClosed`."""

    def __init__(self, fd: int, mode: str) -> None:
        super().__init__()
        self._fd, self._mode = fd, mode

    def fileno(self) -> int:
        return self._fd

    def readable(self) -> bool:
        return self._mode == "r"

    def writable(self) -> bool:
        return self._mode == "w"

    def readinto(self, buffer: object) -> int:
        raise StreamClosed

    def write(self, data: object) -> int:
        raise StreamClosed


def _is_open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


def _occupy(fd: int) -> None:
    """The null device opened on descriptor ``fd``."""
    null = os.open(os.devnull, os.O_RDWR)
    if null != fd:
        os.dup2(null, fd)
        os.close(null)


def occupy_closed() -> tuple[int, ...]:
    """Each standard descriptor that is closed opened on the null device, and the Python
    stream of each that Python left ``None`` replaced (see the module's text); the
    descriptors found closed, in order."""
    closed = tuple(fd for fd in (0, 1, 2) if not _is_open(fd))
    for fd in closed:  # (in order: each takes the lowest free number, its own)
        _occupy(fd)
    if sys.stdin is None:
        sys.stdin = io.TextIOWrapper(io.BufferedReader(_Refusing(0, "r")), encoding="utf-8")
    if sys.stdout is None:  # (written through: nothing held back for the exit's flush)
        sys.stdout = io.TextIOWrapper(_Refusing(1, "w"),
                                      encoding="utf-8", write_through=True)
    if sys.stderr is None:
        sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace",  # noqa: SIM115
                          closefd=False)
    return closed
