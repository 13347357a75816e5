"""Writing what a command reports: to standard output, or to ``-o FILE`` atomically (a
character device or FIFO such as ``/dev/stdout`` is written into, never replaced)."""

from __future__ import annotations

import errno
import os
import stat
import sys
from collections.abc import Iterable, Iterator

from risutools.errors import Code, RisuError, UsageError
from risutools.fsio import atomic_write
from risutools.targets import check_target, os_error_line


def check_report_path(path: str | None, formats: tuple[str, ...] = ()) -> None:
    """A report path, checked before the command runs: ``-o github`` where ``github`` is
    one of the command's ``formats`` and no such file exists is a usage error ("did you mean
    `-f github`?"); a folder, or a file above the path, is one line (``not-a-file``,
    ``not-a-directory``)."""
    if not path:
        return
    if path in formats and not os.path.lexists(path):
        raise UsageError("--output", f"{path!r} is a format name and no such file exists: "
                         f"did you mean `-f {path}`?")
    check_target(path, folder=False)


def write_report(path: str, text: str | Iterable[str | bytes]) -> None:
    """Write a report file atomically (``text`` whole, or its pieces in order); a target
    that cannot be written is one line, exit 2."""
    try:
        mode = os.stat(path).st_mode if os.path.exists(path) else None
        if mode is not None and (stat.S_ISCHR(mode) or stat.S_ISFIFO(mode)):
            # /dev/null, /dev/stdout, a pipe: write into it; a rename would replace the device
            with os.fdopen(_open_device(path), "wb") as f:
                for chunk in _encoded(text):
                    f.write(chunk)
            return
        atomic_write(path, _encoded(text))
    except OSError as exc:
        raise os_error_line(exc, path) from None


def _open_device(path: str) -> int:
    """A device or a FIFO opened for writing without waiting: a FIFO no process reads (one
    a catalog can hold under a report's name) is one line, never a run that waits for ever;
    once open, writes wait as usual (the flag is cleared)."""
    nonblock = getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, os.O_WRONLY | nonblock)
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            raise RisuError(Code.UNWRITABLE, "is a FIFO that no process reads: nothing would "
                            "take the report (name a file, or read the FIFO)", path=path) from None
        raise
    if nonblock:
        os.set_blocking(fd, True)
    return fd


#: bytes gathered from a text's pieces before they are written
WRITE_CHUNK = 1 << 20


def _encoded(text: str | Iterable[str | bytes]) -> Iterator[bytes]:
    """``text`` as UTF-8, its pieces (text, or UTF-8 already) gathered into writes of about
    :data:`WRITE_CHUNK`."""
    if isinstance(text, str):
        yield text.encode("utf-8")
        return
    held: list[bytes] = []
    size = 0
    for piece in text:
        data = piece.encode("utf-8") if isinstance(piece, str) else piece
        held.append(data)
        size += len(data)
        if size >= WRITE_CHUNK:
            yield b"".join(held)
            held, size = [], 0
    if held:
        yield b"".join(held)


def write_out(text: str | Iterable[str | bytes], output: str | None) -> None:
    """``text`` (whole, or its pieces in order: text, or UTF-8 bytes) to ``output`` (a report
    file), or to standard output."""
    if output:
        write_report(output, text)
        return
    for piece in (text,) if isinstance(text, str) else text:
        sys.stdout.write(piece if isinstance(piece, str) else piece.decode("utf-8"))
    sys.stdout.flush()
