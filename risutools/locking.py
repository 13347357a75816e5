"""The folder lock of the one write path (:mod:`risutools.fsio`): an ``flock`` on
``<folder>/.risutools.lock``, held by one writer at a time across read-check-write.

The lock file is opened with ``O_NOFOLLOW`` and never truncated: a ``.risutools.lock``
that is a symbolic link (committed to a catalog's repository, say) is refused, so no
file it points at is ever created, opened or changed, whatever the version of any
library; a lock file that is not a regular file is refused too.  Threads of one process
queue on a re-entrant thread lock in front of the ``flock``.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from risutools.errors import Code, RisuError
from risutools.pathnames import show_name

LOCK_NAME = ".risutools.lock"
LOCK_TIMEOUT = 60.0  # seconds a writer waits for the folder lock before giving up (exit 2)


def display_path(path: str | os.PathLike[str]) -> str:
    return show_name(path)


_locks: dict[str, tuple[threading.RLock, _FlockFile]] = {}
_locks_guard = threading.Lock()


def _forget_locks_in_child() -> None:
    """A forked child holds none of its parent's locks: it builds its own lock objects
    (a lock object inherited across fork must not be used: its descriptor is the
    parent's)."""
    global _locks_guard
    _locks.clear()
    _locks_guard = threading.Lock()  # another thread may have held it at the fork


os.register_at_fork(after_in_child=_forget_locks_in_child)


def lock_file_for(path: str | os.PathLike[str]) -> Path:
    """The lock file guarding writes to ``path``: one per folder, ``<folder>/.risutools.lock``."""
    return Path(path).parent / LOCK_NAME


class _FlockFile:
    """The inter-process half of a folder's lock: an ``flock`` on ``<folder>/.risutools.lock``.

    The lock file is opened with ``O_NOFOLLOW`` (and never truncated): a lock file that is a
    symbolic link (committed to a catalog's repository, say) is refused, never followed, so
    no file it points at is created, opened or changed.  A lock file that is not a regular
    file (a FIFO, a device) is refused too.  Re-entrant within the process: the thread
    lock in front of it lets one thread at a time in, and that thread counts its holds.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self.fd: int | None = None
        self.count = 0

    def acquire(self, timeout: float) -> bool:
        if self.count:
            self.count += 1
            return True
        fd = _open_lock_file(self.path)
        try:
            taken = _flock_within(fd, fcntl.LOCK_EX, timeout)
        except BaseException:
            with contextlib.suppress(OSError):
                os.close(fd)
            raise
        if not taken:
            os.close(fd)
            return False
        self.fd, self.count = fd, 1
        return True

    def release(self) -> None:
        self.count -= 1
        if self.count == 0 and self.fd is not None:
            fd, self.fd = self.fd, None
            try:
                fcntl.flock(fd, fcntl.LOCK_UN)
            finally:
                os.close(fd)


_LOCK_POLL = 0.01  # seconds between two tries of a held lock


def _flock_within(fd: int, mode: int, timeout: float) -> bool:
    """``flock`` ``mode`` (``LOCK_EX``: a writer's, ``LOCK_SH``: a reader's) on ``fd``,
    tried every :data:`_LOCK_POLL` seconds; False once ``timeout`` seconds have passed (0:
    one try; negative: no limit)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            fcntl.flock(fd, mode | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if timeout >= 0 and time.monotonic() >= deadline:
                return False
            time.sleep(_LOCK_POLL)


def _lock_objects(lock_path: Path) -> tuple[threading.RLock, _FlockFile]:
    """The (thread lock, file lock) pair of a lock file, one pair per process.

    Threads of one process queue on the ``RLock`` (no polling, re-entrant: a promote may
    hold the lock around several writes); the holder then takes the ``flock``, which
    excludes other processes.
    """
    key = os.path.abspath(lock_path)
    with _locks_guard:
        pair = _locks.get(key)
        if pair is None:
            pair = (threading.RLock(), _FlockFile(key))
            _locks[key] = pair
        return pair


_LOCK_FLAGS = os.O_RDWR | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0) \
    | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)


def _open_lock_file(path: str) -> int:
    """The lock file opened for ``flock`` (created when missing, see :func:`_make_lock_file`),
    never through a symbolic link and only when it is a regular file."""
    _make_lock_file(path)
    try:
        fd = os.open(path, _LOCK_FLAGS)
    except OSError as exc:
        if exc.errno == errno.ELOOP or os.path.islink(path):
            raise RisuError(Code.NOT_A_FILE, "the lock file is a symbolic link; risutools never "
                            "follows it (remove it: the lock file is made on the first write)",
                            path=display_path(path)) from None
        if exc.errno == errno.ENXIO:  # (a socket cannot be opened at all)
            raise _not_regular(path) from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise _not_regular(path)
    return fd


def _not_regular(path: str) -> RisuError:
    return RisuError(Code.NOT_A_FILE, "the lock file is not a regular file (remove it: the "
                     "lock file is made on the first write)", path=display_path(path))


def _make_lock_file(path: str) -> None:
    """Create the (empty) lock file if nothing is there (``O_EXCL``: a symbolic link at the
    name is never followed).

    ``flock`` needs the file opened for writing, so the lock file is writable by whoever
    may write in its folder: the umask's mode plus group/other write when the folder has
    them (a shared catalog folder, ``g+w``) -- anyone who can write the folder could
    replace the lock file anyway, so this grants nothing more.
    """
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC
                     | getattr(os, "O_NOFOLLOW", 0), 0o666)
    except FileExistsError:
        return
    try:
        mode = stat.S_IMODE(os.fstat(fd).st_mode)
        folder = stat.S_IMODE(os.stat(os.path.dirname(path)).st_mode)
        mode |= folder & (stat.S_IWGRP | stat.S_IWOTH)
        with contextlib.suppress(OSError):
            os.fchmod(fd, mode)
    finally:
        os.close(fd)


@contextlib.contextmanager
def write_lock(path: str | os.PathLike[str], *, timeout: float = LOCK_TIMEOUT) -> Iterator[None]:
    """Hold the inter-process write lock of the folder that holds ``path``.

    Re-entrant within one thread: ``atomic_write`` and ``append_line`` called inside
    take it again without waiting.  A caller that must read, decide and write as one
    step (a promotion: document + transition line) holds it around all three.
    Raises :class:`RisuError` ``locked`` after ``timeout`` seconds, ``not-a-file`` when the
    lock file is a symbolic link or not a regular file, and ``OSError`` when the lock file
    cannot be created (a read-only folder).
    """
    with _held(lock_file_for(path), timeout):
        yield


@contextlib.contextmanager
def _held(lock_path: Path, timeout: float = LOCK_TIMEOUT) -> Iterator[None]:
    here, there = _lock_objects(lock_path)
    busy = RisuError(
        Code.LOCKED,
        f"another writer has held the lock for {timeout:g} s; try again when it is done",
        path=display_path(lock_path),
    )
    if not here.acquire(timeout=timeout if timeout >= 0 else -1):
        raise busy
    try:
        if not there.acquire(timeout):
            raise busy
        try:
            yield
        finally:
            there.release()
    finally:
        here.release()


_READ_FLAGS = os.O_RDONLY | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0) \
    | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)


def _reader_fd(lock_path: Path) -> int | None:
    """The lock file opened for reading (a reader may not write the catalog: ``flock``
    takes a read-only descriptor), or None: none is there (no writer ever ran), or it is not
    a regular file (a link, a FIFO: never followed, and no writer of ours can take it
    either)."""
    try:
        fd = os.open(lock_path, _READ_FLAGS)
    except OSError:
        return None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        return None
    return fd


def writer_active(lock_path: str | os.PathLike[str]) -> bool:
    """Whether a writer holds the lock file ``lock_path`` now (asked without waiting)."""
    fd = _reader_fd(Path(lock_path))
    if fd is None:
        return False
    try:
        return not _flock_within(fd, fcntl.LOCK_SH, 0)
    finally:
        os.close(fd)  # (closing it releases what it took)


@contextlib.contextmanager
def readers_lock(lock_path: str | os.PathLike[str], *, timeout: float = LOCK_TIMEOUT
                 ) -> Iterator[None]:
    """Hold the lock file ``lock_path`` shared: no writer of risutools writes while it is
    held, and readers do not exclude each other.  Nothing is held when there is no lock
    file (no writer ever ran) or it is not a regular file.  ``locked`` after ``timeout``
    seconds, as a writer waits."""
    fd = _reader_fd(Path(lock_path))
    if fd is None:
        yield
        return
    try:
        if not _flock_within(fd, fcntl.LOCK_SH, timeout):
            raise RisuError(Code.LOCKED, f"a writer has held the lock for {timeout:g} s; try "
                            "again when it is done", path=display_path(lock_path))
        yield
    finally:
        os.close(fd)
