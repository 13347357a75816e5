"""Reading files a catalog, a pull request or a download folder controls: regular files only,
and never more bytes than the caller's bound.

A path from a catalog may be a symbolic link to ``/dev/zero`` (endless bytes), a FIFO
(``open`` blocks until a writer comes) or a socket.  Every reader of such paths opens them
here:

- :func:`open_regular` ``stat``\\ s the path (following symbolic links: a link to a regular
  file is fine) and refuses anything that is not a regular file *before* opening it, so a
  device is never opened; it then opens with ``O_NONBLOCK`` (a FIFO swapped in meanwhile
  cannot block the open), ``fstat``\\ s the descriptor it got and refuses again unless it is a
  regular file (no race between the check and the read).
- :func:`read_regular` reads at most ``limit + 1`` bytes, so a file larger than the bound (or
  one growing while read) is refused without being held in memory.
- :func:`open_fd` / :func:`read_at` open it the same way for a reader of a few parts of a
  file (exactly the bytes asked for, or a refusal).
- :func:`sha256_regular` streams a file through SHA-256 in 1 MiB reads and stops past
  ``limit``.

:func:`check_inside` / :func:`read_inside` also refuse a path that leads out of a folder
(a catalog) once its symbolic links are followed.

Every refusal is a :class:`FileRefused` (a :class:`~risutools.errors.RisuError`) with one of
the codes in :data:`REFUSAL_CODES` and a one-line reason.  Folder walks use
``os.walk(followlinks=False)``: a link to a folder is never entered (so no link cycle can
loop), and a link to a file is read through :func:`open_regular` like any other file.
"""

from __future__ import annotations

import errno
import hashlib
import io
import os
import stat

from risutools.errors import Code, RisuError
from risutools.pathnames import show_name

CHUNK = 1 << 20

#: the codes a :class:`FileRefused` carries (meanings in :data:`risutools.errors.CODES`)
REFUSAL_CODES = (Code.NOT_FOUND, Code.NOT_A_FILE, Code.UNREADABLE, Code.TOO_LARGE,
                 Code.OUTSIDE_CATALOG)


class FileRefused(RisuError):
    """A path that :func:`open_regular` / :func:`read_regular` would not read."""


def kind_of(mode: int) -> str:
    """What a file of ``mode`` is, said as a line says it (``a FIFO (named pipe)``)."""
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _link_note(path: str | os.PathLike[str]) -> str:
    try:
        if os.path.islink(path):
            return f" (a symbolic link to {show_name(os.readlink(path))})"
    except OSError:
        pass
    return ""


def _check_mode(path: str | os.PathLike[str], st: os.stat_result, limit: int | None) -> None:
    if stat.S_ISREG(st.st_mode) and (limit is None or st.st_size <= limit):
        return  # (the name is shown only in a refusal)
    shown = show_name(os.fspath(path))
    if stat.S_ISDIR(st.st_mode):
        raise FileRefused(Code.NOT_A_FILE, "is a folder, not a file", path=shown)
    if not stat.S_ISREG(st.st_mode):
        raise FileRefused(
            Code.NOT_A_FILE,
            f"is {kind_of(st.st_mode)}{_link_note(path)}, not a regular file; risutools reads "
            "regular files only",
            path=shown,
        )
    raise FileRefused(
        Code.TOO_LARGE, f"file is {st.st_size} bytes, more than the {limit}-byte bound",
        path=shown)


def _os_refusal(path: str | os.PathLike[str], exc: OSError) -> FileRefused:
    shown = show_name(os.fspath(path))
    if exc.errno == errno.ENOENT:
        why = "no such file or folder"
        if os.path.islink(path):
            why = f"is a symbolic link to a missing file{_link_note(path)}"
        return FileRefused(Code.NOT_FOUND, why, path=shown)
    if exc.errno == errno.EISDIR:
        return FileRefused(Code.NOT_A_FILE, "is a folder, not a file", path=shown)
    if exc.errno == errno.ELOOP:
        if os.path.islink(path) and os.path.exists(path):  # (O_NOFOLLOW: a link, not a loop)
            return FileRefused(Code.NOT_A_FILE, f"is a symbolic link{_link_note(path)}, not "
                               "a regular file (put there since the folder was walked)",
                               path=shown)
        return FileRefused(Code.UNREADABLE, "symbolic link loop", path=shown)
    return FileRefused(Code.UNREADABLE, f"cannot read: {exc.strerror or exc}", path=shown)


def name_refusal(path: str | os.PathLike[str]) -> FileRefused:
    """The refusal of a path no file can be named by: a name read from a document or a
    record (``"\\ud800"`` in JSON: an unpaired surrogate, which no file name encodes) or
    one holding a NUL character, on which ``os`` raises ``ValueError``, not ``OSError``."""
    return FileRefused(Code.NOT_FOUND, "is no name a file can have (it holds an unpaired "
                       "surrogate or a NUL character)", path=show_name(os.fspath(path)))


def require_folder(path: str | os.PathLike[str], what: str = "") -> None:
    """A folder a command reads (a source folder, a catalog, a source store, notes): one
    code per situation, whatever the folder is for -- ``not-found`` when nothing is there,
    ``not-a-directory`` when something other than a folder is.  ``what`` names the folder
    in the reason of a missing one (``"the source store"``)."""
    shown = show_name(os.fspath(path))
    if os.path.isdir(path):
        return
    if not os.path.lexists(path):
        raise RisuError(Code.NOT_FOUND, "no such folder" + (f" ({what})" if what else ""),
                        path=shown)
    if os.path.islink(path) and not os.path.exists(path):
        raise RisuError(Code.NOT_FOUND, f"is a symbolic link to a missing folder"
                        f"{_link_note(path)}", path=shown)
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        raise _os_refusal(path, exc) from None
    kind = "a file" if stat.S_ISREG(mode) else kind_of(mode)
    raise RisuError(Code.NOT_A_DIRECTORY, f"is {kind}, not a folder" if kind[0] == "a"
                    else "is not a folder", path=shown)


def file_problem(path: str | os.PathLike[str], what: str = "") -> RisuError | None:
    """Why ``path`` is not a regular file a command can read (None: it is one), one code
    per situation as :func:`require_folder` gives them: ``not-found`` when nothing is there
    (or a link to nothing), ``not-a-file`` when a folder, a FIFO or a device is."""
    shown = show_name(os.fspath(path))
    note = f" ({what})" if what else ""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        missing = "is a symbolic link to nothing" if os.path.islink(path) else "no such file"
        return RisuError(Code.NOT_FOUND, missing + note, path=shown)
    except (OSError, ValueError) as exc:
        return RisuError(Code.UNREADABLE, f"cannot look at it: {exc}{note}", path=shown)
    if stat.S_ISREG(mode):
        return None
    kind = "a folder" if stat.S_ISDIR(mode) else kind_of(mode)
    return RisuError(Code.NOT_A_FILE, f"is {kind}, not a file{note}" if kind[0] == "a"
                     else f"is not a regular file{note}", path=shown)


def is_regular(path: str | os.PathLike[str]) -> bool:
    """True when ``path`` (after symbolic links) is a regular file; never opens it."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def is_plain_file(path: str | os.PathLike[str]) -> bool:
    """True when ``path`` itself is a regular file: not a symbolic link, whatever it leads
    to (what a folder's own files are, where a link could lead out of it); never opens it."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except (OSError, ValueError):
        return False


#: how :func:`_open_checked` opens: a FIFO swapped in cannot block it, a terminal never
#: becomes the controlling one, the descriptor is not inherited
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) \
    | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
#: a file as a folder walk found it: (device, inode) of its ``os.lstat``
FoundFile = tuple[int, int]


def _open_checked(path: str | os.PathLike[str], limit: int | None,
                  seen: os.stat_result | None = None,
                  found: FoundFile | None = None) -> tuple[int, os.stat_result]:
    """A descriptor of ``path`` opened for reading when it is a regular file (of at most
    ``limit`` bytes when given), with the status of what was opened; :class:`FileRefused`
    otherwise.  ``seen``: the path's status as the caller just took it (``os.stat``, links
    followed), in place of a second look before the open.  ``found``: the (device, inode)
    of the file a folder walk found there: a symbolic link is then not followed, and a
    file that is not that one is refused (:func:`open_regular`).  The caller closes the
    descriptor."""
    try:
        # a device is refused before any open
        _check_mode(path, (os.stat(path) if found is None else os.lstat(path))
                    if seen is None else seen, limit)
        fd = os.open(path, _READ_FLAGS | (_NOFOLLOW if found is not None else 0))
    except OSError as exc:
        raise _os_refusal(path, exc) from None
    except ValueError:  # (no name a file can have: the system call is never made)
        raise name_refusal(path) from None
    try:
        st = os.fstat(fd)
        _check_mode(path, st, limit)  # what was opened, not what the name says now
        if found is not None and (st.st_dev, st.st_ino) != found:
            raise FileRefused(Code.UNREADABLE, "is no longer the file the folder walk found "
                              "there (replaced while this run read the folder; the next run "
                              "reads it)", path=show_name(os.fspath(path)))
        return fd, st
    except BaseException:
        os.close(fd)
        raise


def open_regular(path: str | os.PathLike[str], *, limit: int | None = None,
                 found: FoundFile | None = None) -> io.BufferedReader:
    """Open ``path`` for binary reading if it is a regular file (of at most ``limit`` bytes
    when given); raise :class:`FileRefused` otherwise.  ``found``: the (device, inode) a
    folder walk found at ``path`` (``os.lstat``): the file opened must be that one, and a
    symbolic link is not followed (a link, or another file, put there since the walk is
    refused: ``not-a-file``, ``unreadable``; a folder of the path replaced by a link leads
    to another file, refused the same way).  The caller closes the file."""
    fd, _ = _open_checked(path, limit, found=found)
    try:
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        f = os.fdopen(fd, "rb")
        assert isinstance(f, io.BufferedReader)
        return f
    except BaseException:
        os.close(fd)
        raise


def open_fd(path: str | os.PathLike[str], limit: int | None = None, *,
            seen: os.stat_result | None = None) -> tuple[int, os.stat_result]:
    """A descriptor of ``path`` opened for reading when it is a regular file (of at most
    ``limit`` bytes when given), with the status of what was opened; :class:`FileRefused`
    otherwise (``seen``: as in :func:`read_regular`).  For a reader of a few parts of a file
    (:func:`read_at`); the caller closes the descriptor."""
    return _open_checked(path, limit, seen)


def read_at(fd: int, offset: int, size: int, path: str | os.PathLike[str]) -> bytes:
    """Exactly ``size`` bytes of the open regular file ``fd`` from ``offset`` (``path``: its
    name, for the refusal): :class:`FileRefused` (``unreadable``) when it ends before."""
    chunks: list[bytes] = []
    got = 0
    try:
        while got < size:
            part = os.pread(fd, min(size - got, 1 << 30), offset + got)
            if not part:
                raise FileRefused(Code.UNREADABLE, f"ends at byte {offset + got}, before the "
                                  f"{size} bytes from byte {offset}",
                                  path=show_name(os.fspath(path)))
            chunks.append(part)
            got += len(part)
    except OSError as exc:
        raise _os_refusal(path, exc) from None
    return b"".join(chunks)


def read_or_raise(path: str | os.PathLike[str], limit: int,
                  error: type[RisuError] = RisuError) -> bytes:
    """:func:`read_regular`, a refusal re-raised as ``error`` with the same code: a missing
    path is ``not-found`` in every command, whatever it was meant to hold."""
    try:
        return read_regular(path, limit)
    except FileRefused as exc:
        raise error(exc.code, exc.why, path=exc.path) from None


def read_regular(path: str | os.PathLike[str], limit: int, *,
                 seen: os.stat_result | None = None, found: FoundFile | None = None) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes (:class:`FileRefused` otherwise).
    ``seen``: the path's status as the caller just took it (see :func:`_open_checked`);
    ``found``: the (device, inode) the caller's ``os.lstat`` found there (no link is then
    followed, and another file put there since is refused, as :func:`open_regular`).

    At most ``limit + 1`` bytes are ever read, whatever the file claims or becomes.  The
    first read asks for the size the file had when opened and one byte more, then
    :data:`CHUNK` bytes a call, to the end of the file; a read that gives fewer bytes than
    asked right at that size has met the end (a local file's read is short only there),
    so a file that did not grow is read in one call.  (Read straight from the descriptor:
    a regular file's reads never wait, so its non-blocking flag does not matter.)"""
    fd, st = _open_checked(path, limit, seen, found)
    chunks: list[bytes] = []
    total = 0
    step = min(st.st_size, limit) + 1
    try:
        while total <= limit:
            want = min(step, limit + 1 - total)
            got = os.read(fd, want)
            if not got:
                break
            chunks.append(got)
            total += len(got)
            if len(got) < want and total == st.st_size:
                break  # the end, where the file's size said (else read on to the end)
            step = CHUNK
    except OSError as exc:
        raise _os_refusal(path, exc) from None
    finally:
        os.close(fd)
    if total > limit:
        raise FileRefused(Code.TOO_LARGE, f"file grew past the {limit}-byte bound while read",
                          path=show_name(os.fspath(path)))
    return b"".join(chunks)


def within(path: str, base: str) -> bool:
    """Whether the absolute, normalized ``path`` is ``base`` or below it (as text)."""
    return path == base or path.startswith(base.rstrip(os.sep) + os.sep)


def check_inside(root: str | os.PathLike[str], path: str | os.PathLike[str],
                 what: str = "the catalog") -> None:
    """Refuse (:class:`FileRefused` ``outside-catalog``) a ``path`` that, once every symbolic
    link on it is followed, is not ``root`` or below it.  ``root`` is taken as it resolves;
    a path that does not exist yet is judged by the folders above it."""
    try:
        real = os.path.realpath(path)
    except ValueError:  # (a name from a record that no file can have)
        raise name_refusal(path) from None
    if within(real, os.path.realpath(root)):
        return
    shown = show_name(os.fspath(path))
    link = _link_note(path)
    if not link:
        link = f" (it resolves to {show_name(real)})"
    raise FileRefused(Code.OUTSIDE_CATALOG, f"leads outside {what}{link}; risutools reads and "
                      f"writes only inside {what}", path=shown)


def own_folder(root: str | os.PathLike[str], path: str | os.PathLike[str], what: str,
               inside: str = "the catalog") -> None:
    """A folder of the catalog's own that a command writes files into (``facts/``,
    ``approvals/``, ``notes/``, ``replays/``, the ingest cache's): inside ``root``
    (:func:`check_inside`, ``outside-catalog``) and no symbolic link, not even one to a
    folder inside (``not-a-directory``): through a link its files would land among files
    of another kind (``facts -> .`` wrote each facts summary over its document, an
    ``approvals -> .`` record would be read as a document); something there that is no
    folder (a file, a FIFO) is ``not-a-directory`` too.  Where nothing is there yet, the
    command makes the folder."""
    check_inside(root, path, inside)
    if os.path.islink(path):
        raise RisuError(Code.NOT_A_DIRECTORY, f"{what}{_link_note(path)} is not a folder of "
                        f"its own in {inside}; its files are written only into a real "
                        "folder, never through a link (they would land among files of "
                        "another kind); make it a folder (nothing written)",
                        path=show_name(os.fspath(path)))
    if os.path.lexists(path) and not os.path.isdir(path):
        require_folder(path)  # (a file, a FIFO, a device: said before anything is written)


def enters(root: str | os.PathLike[str], path: str | os.PathLike[str]) -> bool:
    """Whether ``path``, followed one name at a time as written (from the current folder
    when relative), is at some point ``root`` or below it: a path that goes through the
    catalog (then :func:`check_inside` judges where it ends), as against one the user
    names elsewhere."""
    base = os.path.realpath(root)
    parts = os.path.abspath(path).split(os.sep)
    for i in range(2, len(parts) + 1):
        if within(os.path.realpath(os.sep.join(parts[:i]) or os.sep), base):
            return True
    return False


def read_inside(root: str | os.PathLike[str], path: str | os.PathLike[str], limit: int,
                what: str = "the catalog") -> bytes:
    """:func:`read_regular` of a path that must stay inside ``root`` (:func:`check_inside`)."""
    check_inside(root, path, what)
    return read_regular(path, limit)


class FolderFiles:
    """The files named directly in one folder of ``root`` (``facts/<id>.json``), each read
    as :func:`read_inside` reads it, with the folder's own place looked at once.

    A name that is no symbolic link (its ``lstat``, which a read takes anyway) resolves to
    the resolved folder and the name, so it is inside ``root`` exactly when the folder
    is: resolved once, on the first read, instead of every component of every path again
    (``os.path.realpath``: a look at each).  A link, a name with a separator, or a folder
    outside ``root`` is read by :func:`read_inside` itself (the same refusals).  Meant for
    one run over a catalog: a folder moved meanwhile is not looked at again."""

    def __init__(self, root: str | os.PathLike[str], folder: str,
                 what: str = "the catalog") -> None:
        self.root = os.fspath(root)
        self.folder = os.path.join(self.root, folder)
        self.what = what
        self._inside: bool | None = None

    def _folder_inside(self) -> bool:
        if self._inside is None:
            self._inside = within(os.path.realpath(self.folder), os.path.realpath(self.root))
        return self._inside

    def read(self, name: str, limit: int) -> bytes | None:
        """The bytes of the file ``name`` (at most ``limit``), or None when there is
        nothing by that name (what ``os.path.lexists`` says); :class:`FileRefused` as
        :func:`read_inside` refuses it."""
        path = os.path.join(self.folder, name)
        try:
            st = os.lstat(path)
        except (OSError, ValueError):
            return None
        if (stat.S_ISLNK(st.st_mode) or os.sep in name or name in (".", "..")
                or (os.altsep is not None and os.altsep in name) or not self._folder_inside()):
            return read_inside(self.root, path, limit, self.what)
        return read_regular(path, limit, seen=st)


#: the smallest buffer :func:`digest_buffer` makes for a stream of a known size
SMALL_CHUNK = 1 << 16


def digest_buffer(size: int | None, chunk: int = CHUNK) -> bytearray:
    """The buffer a streamed digest reads through: ``chunk`` bytes, or for a stream of a
    known ``size`` below that, its size and a byte (at least :data:`SMALL_CHUNK`): a zeroed
    1 MiB buffer costs 30 us to make, for any file.  A stream that turns out longer is read
    through it all the same."""
    return bytearray(chunk if size is None else min(chunk, max(size + 1, SMALL_CHUNK)))


def sha256_regular(path: str | os.PathLike[str], limit: int, *,
                   found: FoundFile | None = None) -> str:
    """Hex SHA-256 of a regular file of at most ``limit`` bytes, streamed (a 1 MiB buffer,
    or the file's size and a byte for a smaller file, at least 64 KiB); ``found``: as
    :func:`open_regular` (the file a folder walk found there, no link followed)."""
    h = hashlib.sha256()
    total = 0
    with open_regular(path, limit=limit, found=found) as f:
        try:
            buf = digest_buffer(os.fstat(f.fileno()).st_size)
            view = memoryview(buf)
            while True:
                n = f.readinto(buf)
                if not n:
                    break
                total += n
                if total > limit:
                    raise FileRefused(Code.TOO_LARGE,
                                      f"file grew past the {limit}-byte bound while read",
                                      path=show_name(os.fspath(path)))
                h.update(view[:n])
        except OSError as exc:
            raise _os_refusal(path, exc) from None
    return h.hexdigest()
