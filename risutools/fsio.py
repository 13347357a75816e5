"""Safe file writes: atomic (temp file, fsync, rename) and compare-and-swap.

``atomic_write(path, data, expect_sha256=...)`` re-reads the target just
before replacing it and refuses (``WriteConflict``) when its current SHA-256
is not the base hash the caller read, so a stale snapshot never overwrites a
newer one.  ``expect_absent=True`` refuses to overwrite an existing file.
``sync_dir=False`` leaves the folder's fsync to the caller: a batch writing many
files into one folder calls :func:`fsync_directory` once at the end.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from pathlib import Path
from typing import Protocol

from risutools.errors import WriteConflict

CHUNK = 1 << 20


class Readable(Protocol):
    """Anything with ``readinto`` (a raw or buffered file, a ZIP member)."""

    def readinto(self, buffer: bytearray, /) -> int | None: ...


def sha256_file(path: str | os.PathLike[str], chunk: int = CHUNK) -> str:
    """Hex SHA-256 of a file, streamed in ``chunk``-sized reads."""
    with open(path, "rb", buffering=0) as f:
        return sha256_stream(f, chunk)


def sha256_stream(f: Readable, chunk: int = CHUNK) -> str:
    """Hex SHA-256 of what is left to read in ``f`` (a file, a ZIP member...), streamed
    through one reused ``chunk``-sized buffer."""
    h = hashlib.sha256()
    buf = bytearray(chunk)
    view = memoryview(buf)
    while True:
        n = f.readinto(buf)
        if not n:
            break
        h.update(view[:n])
    return h.hexdigest()


def atomic_write(
    path: str | os.PathLike[str],
    data: bytes,
    *,
    expect_sha256: str | None = None,
    expect_absent: bool = False,
    sync_dir: bool = True,
) -> None:
    """Write ``data`` to ``path`` atomically.

    ``expect_sha256`` (hex, with or without a ``sha256:`` prefix) is the hash of
    the bytes the caller based its change on; the write is refused if the file
    now holds anything else (or is gone).
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        _check_base(target, expect_sha256, expect_absent)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    if sync_dir:
        fsync_directory(target.parent)


def _check_base(target: Path, expect_sha256: str | None, expect_absent: bool) -> None:
    if expect_absent and target.exists():
        raise WriteConflict(
            "write-conflict", "file already exists; refusing to overwrite", path=str(target)
        )
    if expect_sha256 is None:
        return
    want = expect_sha256.removeprefix("sha256:")
    if not target.exists():
        raise WriteConflict(
            "write-conflict",
            f"file disappeared since it was read (base sha256:{want[:12]}...)",
            path=str(target),
        )
    have = sha256_file(target)
    if have != want:
        raise WriteConflict(
            "write-conflict",
            f"file changed since it was read: base sha256:{want[:12]}..., "
            f"now sha256:{have[:12]}...",
            path=str(target),
        )


def fsync_directory(directory: Path) -> None:
    """fsync a folder so that renames into it are durable (best effort)."""
    try:
        dfd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dfd)
    except OSError:
        pass
    finally:
        os.close(dfd)
