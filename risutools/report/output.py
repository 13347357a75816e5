"""Writing what a command reports: to standard output, or to ``-o FILE`` atomically (a
character device or FIFO such as ``/dev/stdout`` is written into, never replaced)."""

from __future__ import annotations

import os
import stat
import sys

from risutools.errors import Code, RisuError
from risutools.fsio import atomic_write


def write_report(path: str, text: str) -> None:
    """Write a report file atomically; a target that cannot be written is one line, exit 2."""
    try:
        mode = os.stat(path).st_mode if os.path.exists(path) else None
        if mode is not None and (stat.S_ISCHR(mode) or stat.S_ISFIFO(mode)):
            # /dev/null, /dev/stdout, a pipe: write into it; a rename would replace the device
            with open(path, "wb") as f:
                f.write(text.encode("utf-8"))
            return
        atomic_write(path, text.encode("utf-8"))
    except OSError as exc:
        raise RisuError(Code.UNWRITABLE,
                        f"cannot write: {exc.strerror or exc}", path=path) from None


def write_out(text: str, output: str | None) -> None:
    """``text`` to ``output`` (a report file), or to standard output."""
    if output:
        write_report(output, text)
    else:
        sys.stdout.write(text)
        sys.stdout.flush()
