"""The one write path: atomic, compare-and-swap, locked, mode-keeping writes.

Every command that changes a file in a catalog (ingest, ``replay --update``,
promote, approve) goes through :func:`atomic_write` (replace a whole file) or
:func:`append_line` (add one line to an append-only log such as
``transitions.ndjson``).  What they guarantee:

* **Atomic.**  ``atomic_write`` writes a temp file next to the target, fsyncs it,
  renames it over the target, then fsyncs the folder: a reader (or a crash) sees
  the old bytes or the new bytes, never a mix.
* **Compare-and-swap under a lock.**  ``expect_sha256`` is the hash of the bytes
  the caller based its change on: the check and the rename run while holding the
  folder's inter-process lock (:func:`write_lock`, an ``flock`` on
  ``<folder>/.risutools.lock``, opened with ``O_NOFOLLOW``: :mod:`risutools.locking`), so
  two writers never interleave: the one that comes second finds the file changed and gets
  :class:`~risutools.errors.WriteConflict` ("changed since you read it"; the CLI exits 1).
  Data is written and fsynced *before* the lock is taken, so the lock is held for a hash
  and a rename.
  ``expect_absent`` (the caller saw no file) needs no lock: the file is created with
  ``link()``, which never replaces an existing name (file systems without hard links
  fall back to the lock).  A write with neither is a plain atomic replace (reports,
  the ingest cache): last writer wins, and no lock file is made.
* **Modes kept.**  A rewritten file keeps its permission bits (and its group when
  the process may set it); a new file gets the umask's mode (the temp file is
  created with ``0o666`` and the kernel applies the umask and default ACLs).
* **No leftovers.**  Temp files are named ``.<name>.risutools-tmp-<pid>-<hex>``.
  The first write into a folder in a process (and :func:`sweep_temp_files`, which
  ingest calls at the start of a run) removes, under the lock, the temp files whose
  writer process is gone (a ``kill -9``, a power cut).  A temp file whose process
  is still alive is never touched; a worker that stages files for its parent names
  them after the parent (``stage_write(owner=)``, :func:`adopt_staged`).

Lock files (only in folders where a compare-and-swap or an append ran) and temp files
start with a dot: ``validate`` and ``ingest`` skip them.
Locks are ``flock`` locks: they hold between processes of one machine on a local
file system (and on network file systems whose ``flock`` is honoured).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import re
import secrets
import stat
import sys
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal, Protocol

from risutools.canonical import hex_of
from risutools.errors import Code, RisuError, WriteConflict
from risutools.locking import LOCK_NAME, lock_file_for, write_lock
from risutools.pathnames import show_name
from risutools.safeio import digest_buffer
from risutools.targets import check_target, make_folder

CHUNK = 1 << 20
TMP_MARK = ".risutools-tmp-"
_NAME_KEEP = 160  # bytes of the target's name kept in a temp file's name (NAME_MAX is 255)
_TMP_RE = re.compile(rb"^\..*\.risutools-tmp-(\d+)-[0-9a-f]{8}\Z", re.DOTALL)
_TMP_MARK = TMP_MARK.encode("ascii")  # (in every name _TMP_RE matches: a folder's other
# names are passed over by one substring search each)
CONFLICT = "changed since you read it"


class Readable(Protocol):
    """Anything with ``readinto`` (a raw or buffered file, a ZIP member)."""

    def readinto(self, buffer: bytearray, /) -> int | None: ...


def sha256_file(path: str | os.PathLike[str], chunk: int = CHUNK) -> str:
    """Hex SHA-256 of a file, streamed in ``chunk``-sized reads."""
    with open(path, "rb", buffering=0) as f:
        return sha256_stream(f, chunk, size=os.fstat(f.fileno()).st_size)


def sha256_stream(f: Readable, chunk: int = CHUNK, *, size: int | None = None) -> str:
    """Hex SHA-256 of what is left to read in ``f`` (a file, a ZIP member...), streamed
    through one reused buffer (:func:`~risutools.safeio.digest_buffer`; ``size``: how much
    is left, as far as the caller knows)."""
    h = hashlib.sha256()
    buf = digest_buffer(size, chunk)
    view = memoryview(buf)
    while True:
        n = f.readinto(buf)
        if not n:
            break
        h.update(view[:n])
    return h.hexdigest()


def display_path(path: str | os.PathLike[str]) -> str:
    """A path as text that can always be printed and stored: the one escaping of
    :func:`risutools.pathnames.show_name` (bytes that are not UTF-8 as ``\\xNN``)."""
    return show_name(path)


# -- temp files ----------------------------------------------------------------

_swept: set[str] = set()
_swept_guard = threading.Lock()
_live: set[str] = set()  # this process's temp files in flight
_live_guard = threading.Lock()


def _pid_alive(pid: int) -> bool:
    """Whether ``pid`` is a process that may still write.  A zombie (ended, not yet reaped:
    a killed ingest's workers whose parent is gone, where nothing reaps them, as in many
    containers) answers ``kill(pid, 0)`` like a live one, so its temp files were never
    swept; its state in ``/proc`` says it is gone (where there is no ``/proc``, the
    signal's answer stands)."""
    if pid <= 0:
        return True  # not a pid we wrote: leave it
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # alive, another user's
    except OSError:
        return True
    return not _zombie(pid)


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat_line = f.read(4096)
    except OSError:
        return False
    # "pid (comm) S ...": the state follows the last ")" (a command name may hold one)
    after = stat_line.rpartition(b")")[2].split()
    return bool(after) and after[0] in (b"Z", b"X")


def sweep_temp_files(folder: str | os.PathLike[str], *, own: bool = False,
                     spared: list[Path] | None = None) -> list[Path]:
    """Remove the temp files a killed writer left in ``folder``; return them.

    Only files named like ours (``.<name>.risutools-tmp-<pid>-<hex>``) whose ``<pid>``
    is no longer a running process (or is this process, and not one of its writes in
    flight) are removed.  No lock is needed: a writer that is gone cannot race us, and a
    live writer's temp file is left alone.  ``own=True`` (a run that stops, interrupted)
    also removes this process's writes in flight: none of them will be committed.
    ``spared``: the temp files left alone (a live writer's) are added to it.
    """
    d = Path(folder)
    removed: list[Path] = []
    if not d.is_dir():
        return removed
    names = os.listdir(os.fsencode(d))  # (a name without the mark cannot match: looked
    # for in all of them at once, one search of their join, "/" being in no name)
    names = sorted(n for n in names if _TMP_MARK in n) if _TMP_MARK in b"/".join(names) else []
    for name in names:
        m = _TMP_RE.match(name)
        if m is None:
            continue
        p = d / os.fsdecode(name)
        pid = int(m.group(1))
        if pid == os.getpid():
            with _live_guard:
                if os.path.abspath(p) in _live and not own:
                    if spared is not None:
                        spared.append(p)
                    continue  # one of this process's writes, in flight
                _live.discard(os.path.abspath(p))
        elif _pid_alive(pid):
            if spared is not None:
                spared.append(p)
            continue
        with contextlib.suppress(FileNotFoundError):
            os.unlink(p)
            removed.append(p)
    with _swept_guard:
        _swept.add(os.path.abspath(d))
    return removed


def mark_swept(folder: str | os.PathLike[str]) -> None:
    """Count ``folder`` as swept in this process without listing it: the caller knows it
    holds no temp file of a writer that is gone (ingest: its cache's record of the folder,
    unchanged since a sweep found none there)."""
    with _swept_guard:
        _swept.add(os.path.abspath(folder))


def _forget_after_fork() -> None:
    """A forked child is a new process: its first write into a folder sweeps it again
    (and another thread may have held the guards at the fork)."""
    global _swept_guard, _live_guard
    _swept.clear()
    _live.clear()
    _swept_guard = threading.Lock()
    _live_guard = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_after_fork)


def _sweep_once(folder: Path) -> None:
    key = os.path.abspath(folder)
    with _swept_guard:
        if key in _swept:
            return
    sweep_temp_files(folder)


def _temp_name(target: Path, owner: int | None = None) -> Path:
    stem = os.fsencode(target.name)[:_NAME_KEEP]
    pid = os.getpid() if owner is None else owner
    name = b"." + stem + TMP_MARK.encode() + f"{pid}-{secrets.token_hex(4)}".encode()
    return target.parent / os.fsdecode(name)


# -- atomic_write --------------------------------------------------------------


def atomic_write(
    path: str | os.PathLike[str],
    data: bytes | Iterable[bytes],
    *,
    expect_sha256: str | None = None,
    expect_absent: bool = False,
    sync_dir: bool = True,
) -> None:
    """Write ``data`` (bytes, or its pieces in order) to ``path`` atomically, through the
    folder's write lock.

    ``expect_sha256`` (hex, with or without a ``sha256:`` prefix) is the hash of the
    bytes the caller based its change on; the write is refused with
    :class:`WriteConflict` ("changed since you read it") if the file now holds
    anything else or is gone.  ``expect_absent=True`` refuses when the file exists.
    ``sync_dir=False`` leaves the folder's fsync to the caller (a batch writing many
    files into one folder calls :func:`fsync_directory` once at the end).
    Operating-system failures (a read-only folder, a parent that is a file) are
    raised as ``OSError`` for the caller to turn into its one-line error.
    """
    staged = stage_write(path, data)
    commit_staged(staged, expect_sha256=expect_sha256, expect_absent=expect_absent,
                  sync_dir=sync_dir)


def _write_all(fd: int, data: bytes | Iterable[bytes], *, sync: bool = True) -> None:
    """Write every byte of ``data`` (bytes, or pieces of bytes in order: a file streamed
    as it is made) to ``fd`` (a short write goes on), then fsync (``sync=False``: the
    caller makes it durable, see :func:`sync_filesystem`)."""
    for piece in (data,) if isinstance(data, bytes) else data:
        view = memoryview(piece)
        while view:
            n = os.write(fd, view)
            view = view[n:]
    if sync:
        os.fsync(fd)


def _refuse_non_regular(target: Path) -> None:
    """A rename would replace a device, FIFO or socket with a file (``-o /dev/null``
    must never turn the machine's /dev/null into a file): refuse."""
    try:
        st = os.stat(target)
    except (FileNotFoundError, NotADirectoryError):
        return
    except OSError:
        return  # unreadable metadata: the write itself reports the OS error
    if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):  # a folder: the OS refuses
        raise RisuError(Code.NOT_A_FILE,
                        "a device, FIFO or socket; refusing to replace it with a file",
                        path=display_path(target))


class StagedWrite:
    """New bytes for ``target``, written and fsynced in a temp file next to it, not yet
    in place: :func:`commit_staged` puts them there (atomic, compare-and-swap) or
    :func:`discard_staged` removes them.  A batch stages all its files first (the
    fsyncs overlap other work) and commits them at the end."""

    __slots__ = ("done", "target", "tmp")

    def __init__(self, target: Path, tmp: Path) -> None:
        self.target = target
        self.tmp = tmp
        self.done = False


def stage_write(
    path: str | os.PathLike[str], data: bytes | Iterable[bytes], *, sync: bool = True,
    owner: int | None = None,
    absent: bool = False,
) -> StagedWrite:
    """Write ``data`` into a temp file next to ``path`` and fsync it (no lock taken).

    ``sync=False`` leaves the fsync out: the caller makes a whole batch durable with
    one :func:`sync_filesystem` before it commits any of it.

    ``owner``: the process id the temp file is named after (default: this process).  A
    worker process that stages files for its parent to commit names the parent, so a
    sweep leaves them alone for as long as the parent runs (see :func:`adopt_staged`).

    ``absent=True``: the caller has just found nothing at ``path`` (``lstat``), so it is
    not looked at again here (the refusal of a device, the mode copied from the target:
    a new file keeps the temp file's mode).  The commit does not depend on it: it checks
    the target again, under compare-and-swap, and a commit that replaces a file copies
    that file's mode then.

    The temp file is one of this process's writes in flight until committed or
    discarded (a sweep leaves it alone); a ``kill -9`` leaves it for the next sweep.
    The folder is created when it is missing (tried after the first create fails, so a
    folder that exists costs no ``mkdir``).
    """
    target = Path(path)
    if not absent:
        _refuse_non_regular(target)
    folder = target.parent
    _sweep_once(folder)
    tmp = _temp_name(target, owner)
    with _live_guard:
        _live.add(os.path.abspath(tmp))
    try:
        fd = _create(tmp, folder)
    except BaseException:
        _drop(tmp, unlink=False)  # not created: nothing to remove
        raise
    try:
        try:
            if not absent:
                _keep_mode(fd, target, None)
            _write_all(fd, data, sync=sync)
        finally:
            os.close(fd)
    except BaseException:
        _drop(tmp)
        raise
    return StagedWrite(target, tmp)


def _create(tmp: Path, folder: Path) -> int:
    """Create the temp file ``tmp`` (exclusively); when that fails, make its folder (as
    ``mkdir -p``: its error is the one raised) and try once more."""
    try:
        return os.open(tmp, _CREATE, 0o666)
    except OSError:
        make_folder(folder)
        _sweep_once(folder)
        return os.open(tmp, _CREATE, 0o666)


_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC


_syncfs: Any = None  # libc's syncfs(2), looked up once; False when there is none


def syncfs_available() -> bool:
    """Whether :func:`sync_filesystem` can flush one file system (Linux ``syncfs(2)``)."""
    global _syncfs
    if _syncfs is None:
        _syncfs = False
        if sys.platform.startswith("linux"):
            import ctypes

            with contextlib.suppress(OSError, AttributeError):
                _syncfs = ctypes.CDLL(None, use_errno=True).syncfs
    return _syncfs is not False


def sync_filesystem(path: str | os.PathLike[str]) -> None:
    """Make every write on the file system that holds ``path`` durable: one ``syncfs(2)``
    for a batch of staged files instead of one fsync each.  Raises ``OSError`` when the
    kernel reports a failure (or when :func:`syncfs_available` is False)."""
    import ctypes

    if not syncfs_available():
        raise OSError(errno.ENOSYS, "syncfs is not available here")
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        if _syncfs(fd) != 0:
            err = ctypes.get_errno()
            raise OSError(err, os.strerror(err), os.fspath(path))
    finally:
        os.close(fd)


def commit_staged(
    staged: StagedWrite,
    *,
    expect_sha256: str | None = None,
    expect_absent: bool = False,
    sync_dir: bool = True,
) -> None:
    """Put a staged file in place: what :func:`atomic_write` promises (same arguments).
    On any failure (a conflict included) the temp file is removed."""
    if staged.done:
        raise ValueError("this staged write was already committed or discarded")
    staged.done = True
    target, tmp = staged.target, staged.tmp
    try:
        if expect_sha256 is None and not expect_absent:
            _keep_mode_path(tmp, target)
            os.replace(tmp, target)  # no base: a plain atomic replace, last writer wins
        elif expect_sha256 is None and _link_absent(tmp, target):
            os.unlink(tmp)  # created without a lock: link() never replaces a file
        else:
            with write_lock(target):
                _check_base(target, expect_sha256, expect_absent)
                _keep_mode_path(tmp, target)  # the target's mode as it is now
                os.replace(tmp, target)
    except BaseException:
        _drop(tmp)
        raise
    _drop(tmp, unlink=False)
    if sync_dir:
        fsync_directory(target.parent)


def write_many(writes: Iterable[tuple[Path, bytes]], *, expect_absent: bool = False) -> None:
    """:func:`atomic_write` of each ``(path, data)``, in order, made durable together: each
    staged (no fsync of its own), one :func:`sync_filesystem` a file system where there is
    one (else an fsync each), then each put in place, and each folder fsynced once at the
    end.  A write that fails (a conflict included) stops the batch: what was put in place
    stays, the rest is removed.  For many small files (an unpack's thousands of assets:
    two fsyncs each were 4 ms a file)."""
    batch = syncfs_available()
    staged: list[StagedWrite] = []
    folders: dict[str, Path] = {}
    try:
        for path, data in writes:
            staged.append(stage_write(path, data, sync=not batch))
            folders.setdefault(os.path.abspath(path.parent), path.parent)
        if batch:  # (one a file system the folders are on)
            for folder in {os.stat(f).st_dev: f for f in folders.values()}.values():
                sync_filesystem(folder)
        for one in staged:
            commit_staged(one, expect_absent=expect_absent, sync_dir=False)
    finally:
        for one in staged:
            discard_staged(one)
        for folder in folders.values():
            fsync_directory(folder)


def adopt_staged(target: str | os.PathLike[str], tmp: str | os.PathLike[str]) -> StagedWrite:
    """A temp file staged for ``target`` by another process of this run (a worker that
    called :func:`stage_write` with ``owner`` = this process), taken over by this one:
    it is one of this process's writes in flight until committed or discarded."""
    tmp_p = Path(tmp)
    with _live_guard:
        _live.add(os.path.abspath(tmp_p))
    return StagedWrite(Path(target), tmp_p)


def discard_staged(staged: StagedWrite) -> None:
    """Remove a staged file that will not be committed (nothing else changes)."""
    if not staged.done:
        staged.done = True
        _drop(staged.tmp)


def _drop(tmp: Path, *, unlink: bool = True) -> None:
    if unlink:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
    with _live_guard:
        _live.discard(os.path.abspath(tmp))


def _keep_mode_path(tmp: Path, target: Path) -> None:
    fd = os.open(tmp, os.O_RDONLY | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0))
    try:
        _keep_mode(fd, target, None)
    finally:
        os.close(fd)


_NO_LINK = frozenset({errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EMLINK, errno.ENOSYS})


def _link_absent(tmp: Path, target: Path) -> bool:
    """Create ``target`` as a second name of ``tmp`` unless it exists (atomic, no lock).

    Returns False when the file system has no hard links (the caller then checks and
    renames under the lock); raises :class:`WriteConflict` when ``target`` exists.
    """
    try:
        os.link(tmp, target, follow_symlinks=False)
    except FileExistsError:
        _check_base(target, None, True)
        raise  # pragma: no cover - _check_base raised
    except OSError as exc:
        if exc.errno in _NO_LINK:
            return False
        raise
    return True


def _keep_mode(fd: int, target: Path, done: int | None) -> int | None:
    """Give the temp file the target's permission bits (and group); returns the mode set.

    A new target keeps the temp file's mode: 0o666 less the umask.
    """
    try:
        st = os.stat(target)
    except OSError:
        return done
    if not stat.S_ISREG(st.st_mode):
        return done
    mode = stat.S_IMODE(st.st_mode)
    if mode == done:
        return done
    mine = os.fstat(fd)
    if mine.st_gid != st.st_gid:
        with contextlib.suppress(OSError):  # allowed when we belong to that group
            os.fchown(fd, -1, st.st_gid)
    os.fchmod(fd, mode)  # after the chown: a chown clears set-group-id bits
    return mode


def _check_base(target: Path, expect_sha256: str | None, expect_absent: bool) -> None:
    if expect_absent and os.path.lexists(target):
        raise WriteConflict(
            Code.WRITE_CONFLICT,
            f"{CONFLICT}: the file now exists (refusing to overwrite it)",
            path=display_path(target),
        )
    if expect_sha256 is None:
        return
    want = hex_of(expect_sha256)
    if not os.path.lexists(target):
        raise WriteConflict(
            Code.WRITE_CONFLICT,
            f"{CONFLICT}: the file is gone (base sha256:{want[:12]}...)",
            path=display_path(target),
        )
    have = _sha256_in_place(target)
    if have != want:
        raise WriteConflict(
            Code.WRITE_CONFLICT,
            f"{CONFLICT}: base sha256:{want[:12]}..., now sha256:{have[:12]}...",
            path=display_path(target),
        )


def _sha256_in_place(target: Path) -> str:
    """Hex SHA-256 of the regular file at ``target`` as it is now: opened without following
    a symbolic link and without blocking (a FIFO or a device swapped in is refused, never
    read), and read only up to the size it had when opened."""
    try:
        fd = os.open(target, os.O_RDONLY | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)
                     | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        if exc.errno == errno.ELOOP or os.path.islink(target):
            raise RisuError(Code.NOT_A_FILE, "is now a symbolic link; risutools never writes "
                            "through or over one", path=display_path(target)) from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise RisuError(Code.NOT_A_FILE, "is no longer a regular file; refusing to replace "
                            "it", path=display_path(target))
        return _sha256_fd(fd, st.st_size)
    finally:
        os.close(fd)


# -- append_line ---------------------------------------------------------------


def append_line(
    path: str | os.PathLike[str],
    line: bytes,
    *,
    expect_size: int | None = None,
    expect_sha256: str | None = None,
    torn_tail: Literal["refuse", "newline"] = "refuse",
) -> int:
    """Append one line to an append-only log (``transitions.ndjson``); return its offset.

    Under the folder's write lock the file is opened ``O_APPEND`` (created with the
    umask's mode when missing), ``line`` (a trailing ``\\n`` is added when missing;
    any other ``\\n`` is refused) is written after the existing bytes, and the file is
    fsynced; existing bytes are never rewritten.  ``expect_size`` / ``expect_sha256``
    make it a compare-and-swap on what the caller read (the size suffices for an
    append-only file): anything else raises :class:`WriteConflict`.

    A file whose last byte is not ``\\n`` ends in a torn line (a write cut short by a
    crash).  ``torn_tail="refuse"`` (the default) raises :class:`RisuError`
    ``torn-line`` and appends nothing, so a person looks at it;
    ``torn_tail="newline"`` writes a ``\\n`` first, which leaves the torn bytes as a
    line of their own (that a reader reports) and never alters them.
    """
    if line.endswith(b"\n"):
        line = line[:-1]
    if b"\n" in line:
        raise ValueError("append_line writes one line: the data holds a newline")
    target = Path(path)
    make_folder(target.parent)
    flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)
    with write_lock(target):
        created = not os.path.lexists(target)
        fd = os.open(target, flags | os.O_NONBLOCK, 0o666)
        try:
            size = _append_base(fd, target, expect_size, expect_sha256)
            prefix = _tail_prefix(fd, target, size, torn_tail)
            _write_all(fd, prefix + line + b"\n")
        finally:
            os.close(fd)
        if created:
            fsync_directory(target.parent)
    return size + len(prefix)


def _append_base(fd: int, target: Path, expect_size: int | None,
                 expect_sha256: str | None) -> int:
    """The size of the open log, once it is a regular file and what the caller read."""
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        raise RisuError(Code.NOT_A_FILE, "not a regular file; nothing appended",
                        path=display_path(target))
    if st.st_nlink > 1:  # (appended bytes would change the file under its other names too)
        raise RisuError(Code.NOT_A_FILE, f"a file of {st.st_nlink} names (a hard link): an "
                        "append would change it under the others, maybe outside the catalog; "
                        "nothing appended (copy it to a file of its own)",
                        path=display_path(target))
    size = st.st_size
    if expect_size is not None and size != expect_size:
        raise WriteConflict(
            Code.WRITE_CONFLICT,
            f"{CONFLICT}: {size} bytes now, {expect_size} when read",
            path=display_path(target),
        )
    if expect_sha256 is not None:
        want = hex_of(expect_sha256)
        have = _sha256_fd(fd, size)
        if have != want:
            raise WriteConflict(
                Code.WRITE_CONFLICT,
                f"{CONFLICT}: base sha256:{want[:12]}..., now sha256:{have[:12]}...",
                path=display_path(target),
            )
    return size


def _tail_prefix(fd: int, target: Path, size: int,
                 torn_tail: Literal["refuse", "newline"]) -> bytes:
    """What goes before the new line: nothing after a ``\\n``, else (a torn last line)
    a ``\\n`` when ``torn_tail="newline"``; refused (``torn-line``) otherwise."""
    if not size or os.pread(fd, 1, size - 1) == b"\n":
        return b""
    if torn_tail != "newline":
        raise RisuError(
            Code.TORN_LINE,
            f"the last line is incomplete (no newline at byte {size}; a write "
            "cut short?); look at it and fix or remove it; nothing appended",
            path=display_path(target),
        )
    return b"\n"


def _sha256_fd(fd: int, size: int) -> str:
    h = hashlib.sha256()
    pos = 0
    while pos < size:
        chunk = os.pread(fd, min(CHUNK, size - pos), pos)
        if not chunk:
            break
        h.update(chunk)
        pos += len(chunk)
    return h.hexdigest()


def fsync_directory(directory: str | os.PathLike[str]) -> None:
    """fsync a folder so that renames into it are durable (best effort; what is not a
    folder, a FIFO put in its place say, is neither waited on nor synced)."""
    try:
        dfd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)
                      | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return
    try:
        os.fsync(dfd)
    except OSError:
        pass
    finally:
        os.close(dfd)


def check_file_targets(*paths: str | os.PathLike[str]) -> None:
    """Files a command writes together, all checked before the first is written
    (:func:`check_target`, and a device, FIFO or socket is refused as the write would
    refuse it): one in the way leaves none of them written."""
    for path in paths:
        check_target(path, folder=False)
        _refuse_non_regular(Path(os.fspath(path)))


__all__ = [
    "CONFLICT",
    "LOCK_NAME",
    "StagedWrite",
    "adopt_staged",
    "append_line",
    "atomic_write",
    "check_file_targets",
    "commit_staged",
    "discard_staged",
    "display_path",
    "fsync_directory",
    "lock_file_for",
    "mark_swept",
    "sha256_file",
    "sha256_stream",
    "stage_write",
    "sweep_temp_files",
    "sync_filesystem",
    "syncfs_available",
    "write_lock",
    "write_many",
]
