"""An exception Python cannot raise (in a finalizer, or while the interpreter shuts down) is
one line on standard error, never a traceback; after Ctrl-C, nothing.

Such an exception is given to :data:`sys.unraisablehook`, whose default prints "Exception
ignored in ..." and a traceback.  One known case: Ctrl-C while a process pool works.  The
command stops its workers and exits 130, and CPython 3.11's exit handler of
``concurrent.futures`` may then wake the pool's manager thread through a pipe that thread
has just closed (``OSError: [Errno 9] Bad file descriptor``).  Nothing is left to do by
then (the workers are stopped, the temporary files swept), so after an interrupt such an
exception is dropped; at any other time it is shown as one line, which the exit code does
not change (``RISUTOOLS_DEBUG=1`` keeps Python's own report)."""

from __future__ import annotations

import contextlib
import os
import sys
from typing import Any

from risutools.pathnames import safe_line

#: whether the command was interrupted (set by :func:`interrupted`)
_INTERRUPTED: list[bool] = [False]


def install() -> None:
    """Report unraisable exceptions as :func:`_one_line` does (the CLI's start)."""
    if not os.environ.get("RISUTOOLS_DEBUG"):
        sys.unraisablehook = _one_line


def interrupted() -> None:
    """The command was interrupted: from now on an unraisable exception is not shown."""
    _INTERRUPTED[0] = True


def _one_line(unraisable: Any) -> None:
    if _INTERRUPTED[0]:
        return
    exc = unraisable.exc_value
    what = f"{type(exc).__name__}: {exc}" if exc is not None else "an exception"
    with contextlib.suppress(OSError, ValueError):  # standard error closed: nothing to tell
        sys.stderr.write(safe_line(f"risutools: ignored: {what}") + "\n")
