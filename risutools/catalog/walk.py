"""Ingest's discovery: every Risu file below the source folder, found by content
(``formats.detect``), not by extension, in one walk; hidden folders and symbolic links are not
entered, the catalog folder is skipped, and what cannot be listed is reported."""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

from risutools.catalog.render import under
from risutools.errors import RisuError
from risutools.formats import detect, named_as_risu
from risutools.fsio import display_path
from risutools.pathnames import real_path
from risutools.safeio import FoundFile, kind_of

#: what ``known`` answers for a file the cache recorded as not a Risu file (no format)
NOT_RISU = ""


def discover(src: Path, exclude: Path | None = None) -> tuple[list[tuple[Path, str]], list[str]]:
    """Every supported file below ``src`` (by content), sorted by relative path.

    Returns ``([(path, format)], [relative paths of files that are not Risu
    files])``.  Symbolic links are not followed; hidden folders are skipped.
    """
    found, skipped = find_sources(src, exclude)
    return [(Path(path), fmt) for path, _, fmt in found], skipped


def find_sources(
    src: Path, exclude: Path | None = None, unlisted: list[tuple[str, str]] | None = None,
    known: Callable[[str, str, os.stat_result], str | None] | None = None,
    stats: dict[str, os.stat_result] | None = None,
    sniffed: list[tuple[str, str]] | None = None,
) -> tuple[list[tuple[str, str, str]], list[str]]:
    """:func:`discover` as ingest uses it: ``[(the path as text, as ``str(src / rel)``
    spells it; its relative path with "/"; its format)]`` (no path objects: one walk,
    one ``detect`` a file).  ``unlisted`` collects (relative path, why) of what the walk
    could not list or tell the type of.  ``known(path, rel, st)``: the format the ingest
    cache recorded for the file when its stat ``st`` (as the walk found it) is the one
    recorded (then the file is not opened: its cached outcome is used), else None (the
    file is sniffed), or :data:`NOT_RISU` when it recorded the file as not a Risu file
    at that stat (then it is skipped unopened).  ``stats`` (without ``known``, which is
    given it) collects each file's stat as the walk found it (its ``lstat``, taken through
    the folder the walk listed: what a worker must find there).  ``sniffed`` collects
    (path, relative path) of each file sniffed here and found not to be a Risu file (what
    the cache may record)."""

    found: list[tuple[str, str, str]] = []
    skipped: list[str] = []
    ex = real_path(exclude) if exclude is not None else None
    for path, rel, st in _walk_found(src, ex, unlisted if unlisted is not None else []):
        if known is None:
            if stats is not None:
                stats[path] = st
            fmt = None
        else:
            fmt = known(path, rel, st)
        if fmt is not None:
            if fmt == NOT_RISU:
                skipped.append(display_path(rel))
            else:
                found.append((path, rel, fmt))
            continue
        try:
            fmt = detect(path)
        except RisuError:
            fmt = "unreadable"  # read_path will report the reason
        if fmt is None and named_as_risu(path):  # (RisuAI imports it by its name: read_path
            fmt = "by-name"  # reads it by the name, or reports why it cannot)
        if fmt is None:
            skipped.append(display_path(rel))
            if sniffed is not None:
                sniffed.append((path, rel))
        else:
            found.append((path, rel, fmt))
    return found, skipped


def _walk(
    root: Path, exclude: Path | None, unlisted: list[tuple[str, str]]
) -> Iterator[tuple[str, str]]:
    """(path as text, relative path) of every file :func:`_walk_found` finds."""
    for path, rel, _ in _walk_found(root, exclude, unlisted):
        yield path, rel


def _walk_found(
    root: Path, exclude: Path | None, unlisted: list[tuple[str, str]]
) -> Iterator[tuple[str, str, os.stat_result]]:
    """(path as text, relative path, its ``lstat``) of every file below ``root`` that is
    not hidden and not a symbolic link, in ``os.walk``'s order (top-down; a folder's files
    by name, then its subfolders by name).  Hidden folders, symbolic links to folders and
    ``exclude`` are not entered.  A folder that cannot be listed, or an entry whose type
    cannot be told, is added to ``unlisted`` as (relative path, why): never passed over
    in silence (an entry gone between the listing and the look at it is simply gone).
    File types come from the folder listing (``d_type``); each file and subfolder is
    stat'ed through the descriptor of the folder listed (``fstatat``), and a subfolder is
    entered only when the folder opened (``O_NOFOLLOW``) is the one its parent's listing
    found: a folder replaced by a link while the walk goes on is not entered (it is
    reported), and what the walk yields is what lies in the folders it listed."""
    base = under(os.fspath(root))
    todo: list[tuple[str, str, FoundFile | None]] = [(os.fspath(root), "", None)]
    while todo:
        top, prefix, expect = todo.pop()
        listed = _list(top, prefix, expect, unlisted)
        if listed is None:
            continue
        fd, dirs, files = listed
        try:
            for entry in sorted(files, key=_entry_name):
                name = entry.name
                if name.startswith("."):
                    continue
                if not _regular(top, entry, prefix, unlisted):
                    if named_as_risu(name):  # (RisuAI would read it by its name: said)
                        _not_a_file(top, fd, entry, prefix, unlisted)
                    continue
                st = _lstat_in(fd, entry)
                if st is not None and stat.S_ISREG(st.st_mode):  # (else gone, or no file now)
                    rel = prefix + name
                    yield base + rel, rel, st
            todo.extend(reversed(_below(top, prefix, fd, dirs, exclude)))
        finally:
            if fd is not None:
                os.close(fd)


def _below(top: str, prefix: str, fd: int | None, dirs: list[os.DirEntry[str]],
           exclude: Path | None) -> list[tuple[str, str, FoundFile | None]]:
    """The subfolders of ``top`` to walk, by name: (path, relative prefix, the (device,
    inode) the listing found)."""
    below: list[tuple[str, str, FoundFile | None]] = []
    for entry in sorted(dirs, key=_entry_name):
        name = entry.name
        path = os.path.join(top, name)
        if name.startswith(".") or (exclude is not None and real_path(path) == exclude):
            continue
        try:
            link = entry.is_symlink()
        except OSError:
            link = False
        st = None if link else _lstat_in(fd, entry)
        if st is not None and stat.S_ISDIR(st.st_mode):
            below.append((path, prefix + name + "/", (st.st_dev, st.st_ino)))
    return below


# a folder is listed through a descriptor where the platform can (POSIX): its entries are
# stat'ed relative to it, never through a path that may have changed since
_BY_FD = (os.stat in os.supports_dir_fd and os.scandir in os.supports_fd
          and hasattr(os, "O_DIRECTORY"))
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0) \
    | getattr(os, "O_NONBLOCK", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
# what opening a subfolder with O_NOFOLLOW | O_DIRECTORY gives when a link or a file is there
_NOT_THE_DIR = (errno.ELOOP, errno.ENOTDIR)


def _list(top: str, prefix: str, expect: FoundFile | None, unlisted: list[tuple[str, str]]
          ) -> tuple[int | None, list[os.DirEntry[str]], list[os.DirEntry[str]]] | None:
    """(the folder's descriptor, None without one; its subfolders; its other entries), or
    None when it cannot be listed or is not the folder ``expect`` says its parent's
    listing found (both added to ``unlisted``)."""
    fd: int | None = None
    try:
        if _BY_FD:
            fd = os.open(top, _DIR_FLAGS | (_NOFOLLOW if expect is not None else 0))
            st = os.fstat(fd)
            if expect is not None and (st.st_dev, st.st_ino) != expect:
                raise _Replaced
        with os.scandir(fd if fd is not None else top) as it:
            entries = list(it)
    except (OSError, _Replaced) as exc:
        if fd is not None:
            os.close(fd)
        if isinstance(exc, OSError) and not (expect is not None and exc.errno in _NOT_THE_DIR):
            why = f"cannot list the folder: {exc.strerror or exc}"
        else:
            why = ("is no longer the folder the walk found there (replaced by a link or "
                   "another folder while ingest walked); not read")
        unlisted.append((prefix or ".", f"{display_path(top)}: unreadable: {why}"))
        return None
    dirs: list[os.DirEntry[str]] = []
    files: list[os.DirEntry[str]] = []
    for entry in entries:
        try:
            is_dir = entry.is_dir()
        except OSError:
            is_dir = False
        (dirs if is_dir else files).append(entry)
    return fd, dirs, files


class _Replaced(Exception):
    """A folder that is not the one its parent's listing found."""


def _lstat_in(fd: int | None, entry: os.DirEntry[str]) -> os.stat_result | None:
    """The entry's ``lstat``, relative to the listed folder's descriptor when there is
    one; None when it is gone (or cannot be stat'ed: its type was told by the listing)."""
    try:
        if fd is not None:
            return os.stat(entry.name, dir_fd=fd, follow_symlinks=False)
        return entry.stat(follow_symlinks=False)
    except OSError:
        return None


def _entry_name(entry: os.DirEntry[str]) -> str:
    return entry.name


def _not_a_file(top: str, fd: int | None, entry: os.DirEntry[str], prefix: str,
                unlisted: list[tuple[str, str]]) -> None:
    """A file named as a Risu file that is a FIFO, a device or a socket (not a link, not a
    folder): never opened, never passed over in silence."""
    st = None if entry.is_symlink() else _lstat_in(fd, entry)
    if st is not None and not stat.S_ISDIR(st.st_mode) and not stat.S_ISREG(st.st_mode):
        unlisted.append((prefix + entry.name,
                         f"{display_path(os.path.join(top, entry.name))}: not-a-file: is "
                         f"{kind_of(st.st_mode)}, named as a Risu file; not read"))


def _regular(top: str, entry: os.DirEntry[str], prefix: str,
             unlisted: list[tuple[str, str]]) -> bool:
    """A regular file of the folder ``top``, not a symbolic link (from ``d_type`` when the
    listing has it)."""
    try:
        return not entry.is_symlink() and entry.is_file()
    except FileNotFoundError:
        return False  # removed since the folder was listed
    except OSError as exc:
        why = exc.strerror or exc
        unlisted.append((prefix + entry.name,
                         f"{display_path(os.path.join(top, entry.name))}: unreadable: "
                         f"cannot tell what it is: {why}"))
        return False
