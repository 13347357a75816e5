"""Ingest's discovery: every Risu file below the source folder, found by content
(``formats.detect``), not by extension, in one walk; hidden folders and symbolic links are not
entered, the catalog folder is skipped, and what cannot be listed is reported."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

from risutools.catalog.render import under
from risutools.errors import RisuError
from risutools.formats import detect
from risutools.fsio import display_path


def discover(src: Path, exclude: Path | None = None) -> tuple[list[tuple[Path, str]], list[str]]:
    """Every supported file below ``src`` (by content), sorted by relative path.

    Returns ``([(path, format)], [relative paths of files that are not Risu
    files])``.  Symbolic links are not followed; hidden folders are skipped.
    """
    found, skipped = find_sources(src, exclude)
    return [(Path(path), fmt) for path, _, fmt in found], skipped


def find_sources(
    src: Path, exclude: Path | None = None, unlisted: list[tuple[str, str]] | None = None,
    known: Callable[[str, str], str | None] | None = None,
) -> tuple[list[tuple[str, str, str]], list[str]]:
    """:func:`discover` as ingest uses it: ``[(the path as text, as ``str(src / rel)``
    spells it; its relative path with "/"; its format)]`` (no path objects: one walk,
    one ``detect`` a file).  ``unlisted`` collects (relative path, why) of what the walk
    could not list or tell the type of.  ``known(path, rel)``: the format the ingest cache
    recorded for the file when its stat is the one recorded (then the file is not opened:
    its cached outcome is used), else None (the file is sniffed)."""

    found: list[tuple[str, str, str]] = []
    skipped: list[str] = []
    ex = exclude.resolve() if exclude is not None else None
    for path, rel in _walk(src, ex, unlisted if unlisted is not None else []):
        fmt = known(path, rel) if known is not None else None
        if fmt is not None:
            found.append((path, rel, fmt))
            continue
        try:
            fmt = detect(path)
        except RisuError:
            fmt = "unreadable"  # read_path will report the reason
        if fmt is None:
            skipped.append(display_path(rel))
        else:
            found.append((path, rel, fmt))
    return found, skipped


def _walk(
    root: Path, exclude: Path | None, unlisted: list[tuple[str, str]]
) -> Iterator[tuple[str, str]]:
    """(path as text, relative path) of every file below ``root`` that is not hidden and
    not a symbolic link, in ``os.walk``'s order (top-down; a folder's files by name, then
    its subfolders by name).  Hidden folders, symbolic links to folders and ``exclude``
    are not entered.  A folder that cannot be listed, or an entry whose type cannot be
    told, is added to ``unlisted`` as (relative path, why): never passed over in silence
    (an entry gone between the listing and the look at it is simply gone).  File types
    come from the folder listing (``d_type``): no stat per file where the file system
    records them."""
    base = under(os.fspath(root))
    todo: list[tuple[str, str]] = [(os.fspath(root), "")]  # (folder, its relative prefix)
    while todo:
        top, prefix = todo.pop()
        try:
            with os.scandir(top) as it:
                entries = list(it)
        except OSError as exc:
            why = f"{display_path(top)}: unreadable: cannot list the folder: {exc.strerror or exc}"
            unlisted.append((prefix or ".", why))
            continue
        dirs: list[os.DirEntry[str]] = []
        files: list[os.DirEntry[str]] = []
        for entry in entries:
            try:
                is_dir = entry.is_dir()
            except OSError:
                is_dir = False
            (dirs if is_dir else files).append(entry)
        for entry in sorted(files, key=_entry_name):
            name = entry.name
            if name.startswith(".") or not _regular(entry, prefix, unlisted):
                continue
            rel = prefix + name
            yield base + rel, rel
        below: list[tuple[str, str]] = []
        for entry in sorted(dirs, key=_entry_name):
            name = entry.name
            if name.startswith(".") or (exclude is not None
                                        and Path(entry.path).resolve() == exclude):
                continue
            try:
                link = entry.is_symlink()
            except OSError:
                link = False
            if not link:
                below.append((entry.path, prefix + name + "/"))
        todo.extend(reversed(below))  # the first subfolder is walked next


def _entry_name(entry: os.DirEntry[str]) -> str:
    return entry.name


def _regular(entry: os.DirEntry[str], prefix: str, unlisted: list[tuple[str, str]]) -> bool:
    """A regular file, not a symbolic link (from ``d_type`` when the listing has it)."""
    try:
        return not entry.is_symlink() and entry.is_file()
    except FileNotFoundError:
        return False  # removed since the folder was listed
    except OSError as exc:
        why = exc.strerror or exc
        unlisted.append((prefix + entry.name,
                         f"{display_path(entry.path)}: unreadable: cannot tell what it is: {why}"))
        return False
