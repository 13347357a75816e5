"""Writing what a command reports: to standard output, or to ``-o FILE`` atomically (a
character device or FIFO such as ``/dev/stdout`` is written into, never replaced)."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from risutools.errors import Code, RisuError, UsageError
from risutools.fsio import atomic_write
from risutools.pathnames import WholeFolder, real_path, show_name
from risutools.safeio import within
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


#: the options that name what a command writes (a report, a document, a folder)
OUTPUT_OPTIONS = ("output", "out", "report", "out_dir", "queue")
#: of those, the folders a command also reads (``ingest -o CATALOG``: the catalog's
#: documents, log, facts and cache), so a report named inside one is judged as inside an input
FOLDER_OUTPUTS = ("out", "out_dir", "queue")
#: the options that name a folder any file of which the command may read (a source store:
#: each file looked up by its name or digest is hashed), whatever the file is
WHOLE_OPTIONS = ("sources",)


#: the options and arguments that name a file or a folder (an empty one is refused: ``''``
#: read as ``.`` unpacked into, packed, ingested into or hashed the current folder)
PATH_PARAMS = frozenset({
    "file", "files", "paths", "path", "src", "out", "output", "report", "queue", "notes",
    "component", "fixture", "config", "config_file", "catalog", "sources", "allowed_signers",
    "base_log", "sign", "packet", "scheduler_file"})


def refuse_empty_paths(params: dict[str, Any]) -> None:
    """A usage error for a path given as the empty string (never taken for ``.``)."""
    for key, value in params.items():
        if key in PATH_PARAMS and (value == "" or (isinstance(value, (list, tuple))
                                                 and "" in value)):
            shown = _PATH_SHOWN.get(key, f"--{key.replace('_', '-')}")
            raise UsageError(shown, "an empty path names no file or folder; write . for the "
                             "current folder")


#: how the command line names a path parameter that is an argument (or a short option's)
_PATH_SHOWN = {"file": "FILE", "files": "FILE", "paths": "PATH", "path": "PATH", "src": "SRC",
               "component": "COMPONENT", "out": "--output", "config_file": "--config"}


def refuse_output_on_input(params: dict[str, Any], how: dict[str, Any],
                           reads: Callable[[str], bool] | None = None,
                           found: Callable[[], Iterable[str]] | None = None,
                           writes: Iterable[str] = ()) -> None:
    """A usage error when an output names a regular file the command reads (``analyze -o
    m.risum m.risum`` replaced the module by its report; ``replay run doc.json -o doc.json``
    the document by its report): every path among the other options is an input, and
    with ``reads`` (the command's test of a file: would a folder walk read it?) so is such a
    file inside a folder given (``review cat -o cat/doc.json``; a report an earlier run left
    there is not read, and may be written again).  ``found``: what the command found to
    read for itself (its catalog, its configuration ...), asked only when an output named
    is already a file; ``writes``: the files it writes besides those its options name (a
    replay report's ``.md`` and ``.html``).  An output is taken where it lands: every
    link on its way followed, and a ``..`` after a folder not there yet (which the writer
    makes) undone (``-o nosuch/../doc.json`` is ``doc.json``).  A folder named by one of
    :data:`WHOLE_OPTIONS`, or found as a :class:`~risutools.pathnames.WholeFolder` (a source
    store), is read whole: no output may be inside it."""
    inputs = [WholeFolder(v) if k in WHOLE_OPTIONS else v
              for k, val in params.items() if k not in OUTPUT_OPTIONS or k in FOLDER_OUTPUTS
              for v in (val if isinstance(val, (list, tuple)) else (val,))
              if isinstance(v, str) and v and v != "-"
              and (k not in FOLDER_OUTPUTS or os.path.isdir(v))]
    outputs = _existing_outputs(params, how, writes)
    if outputs and found is not None:
        inputs += found()
    for named, out in outputs:
        given = next((g for g in inputs if _reads_it(out, g, reads)), None)
        if given is not None:
            raise UsageError("--output", f"{show_name(named)!r} is also read by the command "
                             f"(as {show_name(given)!r}): writing there would replace it; "
                             "name another file")


def _existing_outputs(params: dict[str, Any], how: dict[str, Any],
                      writes: Iterable[str] = ()) -> list[tuple[str, str]]:
    """The outputs named that are regular files already, each where it lands (every link on
    its way followed, a ``..`` after a folder not there yet undone, as the writer, which
    makes the folder, lands there)."""
    named = [v for k in OUTPUT_OPTIONS for v in (params.get(k), how.get(k))]
    out = []
    for v in (*named, *writes):
        if isinstance(v, str) and v and v != "-":
            with contextlib.suppress(OSError, ValueError):
                landed = os.path.realpath(v)
                if stat.S_ISREG(os.stat(landed).st_mode):
                    out.append((v, landed))
    return out


def _reads_it(out: str, given: str, reads: Callable[[str], bool] | None) -> bool:
    """Whether reading ``given`` reads the file ``out``."""
    try:
        if os.path.samefile(out, given):
            return True
        if not os.path.isdir(given) or (reads is None and not isinstance(given, WholeFolder)):
            return False
        if not within(str(real_path(out)), str(real_path(given))):
            return False
        return isinstance(given, WholeFolder) or (reads is not None and reads(out))
    except (OSError, ValueError):
        return False


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
    try:
        for piece in (text,) if isinstance(text, str) else text:
            sys.stdout.write(piece if isinstance(piece, str) else piece.decode("utf-8"))
        sys.stdout.flush()
    except BrokenPipeError:  # (the reader is gone, ``| head``: as before)
        raise
    except OSError as exc:  # a full disk, ``> /dev/full``: one line, not an internal error
        raise stdout_unwritable(exc) from None


def stdout_unwritable(exc: OSError) -> RisuError:
    """The line for standard output that cannot be written; what it still holds is let go
    (written again when the program ends, it would fail again: "ignored: OSError")."""
    _drop_stdout()
    return RisuError(Code.UNWRITABLE, f"cannot write: {exc.strerror or exc}",
                     path="standard output")


def _drop_stdout() -> None:
    try:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, sys.stdout.fileno())
        os.close(fd)
    except (OSError, ValueError):  # (no descriptor: a test's captured stream)
        pass
