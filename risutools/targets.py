"""Where a write goes: an output path checked before anything is written, the folders
above it made, and an operating system's refusal of a path as one line naming what is in
the way (``not-a-directory``, ``not-a-file``) or what refused it (``unwritable``): never an
internal error, never ``File exists`` said of a file that is not there.  Every write path
(:mod:`risutools.fsio`) and every command's output goes through these."""

from __future__ import annotations

import errno
import os
from pathlib import Path

from risutools.errors import Code, RisuError
from risutools.pathnames import show_name


class FolderInTheWay(NotADirectoryError):
    """A folder to make, and the part of its path that is there and is no folder."""

    def __init__(self, folder: Path, part: Path) -> None:
        super().__init__(errno.ENOTDIR, "a file is where a folder must be", str(folder))
        self.part = part


def make_folder(folder: str | os.PathLike[str]) -> None:
    """``mkdir -p folder``.  A part of the path that is there and is no folder (a file, a
    FIFO, a link to one) raises :class:`FolderInTheWay`, whose line (:func:`os_error_line`)
    is ``not-a-directory`` naming that part: ``mkdir`` says ``File exists``, which reads as
    if the file to write were there (a fifth fuzzing pass: ``notes init`` said ``unwritable:
    cannot write: File exists``)."""
    target = Path(folder)
    try:
        target.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        part = next((p for p in (*reversed(target.parents), target)
                     if os.path.lexists(p) and not p.is_dir()), target)
        raise FolderInTheWay(target, part) from None


def check_target(path: str | os.PathLike[str], *, folder: bool | None) -> None:
    """An output path, checked before anything is written: every folder above it that
    exists must be a folder (``not-a-directory``, naming the file in the way: ``-o
    notes.txt/out.json``); a ``folder`` target that exists must be a folder
    (``not-a-directory``), a file target must not be one (``not-a-file``); ``None``: either.
    A device or FIFO stays a valid file target (``-o /dev/stdout``).
    A path the operating system refuses to look at (a name too long, a folder it may not
    search) is ``unwritable`` with its words, never an internal error."""
    shown = show_name(path)
    target = Path(os.fspath(path))
    try:
        for above in reversed(target.parents):
            if os.path.lexists(above) and not above.is_dir():
                if above.is_symlink():  # a loop or a link to nothing: the system's words
                    os.stat(above)  # (ELOOP, ENOENT), not "a file"
                raise RisuError(Code.NOT_A_DIRECTORY, f"{show_name(above)} is a file, not "
                                "a folder", path=shown)
        if folder is True and target.exists() and not target.is_dir():
            raise RisuError(Code.NOT_A_DIRECTORY, "is a file, not a folder", path=shown)
        if folder is False and target.is_dir():
            raise RisuError(Code.NOT_A_FILE, "is a folder, not a file", path=shown)
    except OSError as exc:
        raise os_error_line(exc, path) from None


#: the errors of a write that say what is in the way, not that the system refused it
_IN_THE_WAY = {errno.ENOTDIR: (Code.NOT_A_DIRECTORY, "a file is where a folder must be"),
               errno.EISDIR: (Code.NOT_A_FILE, "is a folder, not a file")}


#: errors about a path's name itself, whichever way it was going to be used
_BAD_NAME = {errno.ENAMETOOLONG: "a file name too long for the file system",
             errno.ELOOP: "symbolic link loop"}


#: errors that say the system ran out of something the command needed, not that the
#: input is bad: ``system-limit`` (a pool's workers started past ``ulimit -n``)
_LIMITS = {errno.EMFILE: "too many open files in this process (its limit: ulimit -n)",
           errno.ENFILE: "too many open files on this system",
           errno.ENOMEM: "out of memory"}


def path_error_line(exc: OSError) -> RisuError | None:
    """An ``OSError`` a command let through that is about the path's name itself (too
    long, a symbolic link loop), as one line (``unreadable``, the path named): the
    operating system refused to look at it; or one that says the system ran out of a
    resource (``system-limit``, the path named if it has one).  None for any other error
    (a bug)."""
    if exc.errno in _LIMITS:
        shown = show_name(exc.filename) if exc.filename is not None else None
        return RisuError(Code.SYSTEM_LIMIT, f"the operating system refused: "
                         f"{_LIMITS[exc.errno]}", path=shown)
    if exc.errno not in _BAD_NAME:
        return None
    shown = show_name(exc.filename) if exc.filename is not None else None
    return RisuError(Code.UNREADABLE, f"the operating system refused the path: "
                     f"{_BAD_NAME[exc.errno]}", path=shown)


def os_error_line(exc: OSError, path: str | os.PathLike[str] | None = None) -> RisuError:
    """An ``OSError`` from a write as one line: ``unwritable``, or what is in the way
    (``not-a-directory``, ``not-a-file``)."""
    where = exc.filename if exc.filename is not None else path
    shown = show_name(where) if where is not None else None
    if isinstance(exc, FolderInTheWay):
        part = show_name(exc.part)
        return RisuError(Code.NOT_A_DIRECTORY, "is a file, not a folder" if part == shown else
                         f"{part} is a file, not a folder", path=shown)
    if exc.errno in _IN_THE_WAY:
        code, why = _IN_THE_WAY[exc.errno]
        return RisuError(code, why, path=shown)
    why = exc.strerror or str(exc)
    if exc.errno == errno.EROFS:
        why = "read-only file system"
    return RisuError(Code.UNWRITABLE, f"cannot write: {why}", path=shown)
