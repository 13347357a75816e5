"""How a document's file is named and shown.

:func:`display_path`: a file as a report shows it (relative to the working directory when
inside it, escaped by :func:`~risutools.pathnames.show_name`); :func:`given_path`: a path
named on the command line as the loaders keep it (the text itself when it is the path
``Path`` would make, else a :class:`Path`); :func:`as_path`: either as a :class:`Path`.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

from risutools.pathnames import real_path, show_name


def display_path(path: str | Path) -> str:
    """``path`` relative to the working directory when inside it, posix separators,
    escaped by :func:`~risutools.pathnames.show_name` (printable UTF-8, reversible).

    The absolute path is compared with the working directory as text first (what
    ``Path.relative_to`` compares); only a path outside it is looked for again through the
    resolved working directory and the resolved parent folder (a link in the way).
    A file's folder is looked at once in a run (:func:`_folder_prefix`): the name shown
    is then that folder's part and the file's own name (:func:`_raw_display`, the
    reference, answers the same: tests/test_validate_round10.py)."""
    name = os.fspath(path)
    if _clean_relative(name):  # normalized below the working directory: itself
        return show_name(name)
    try:
        cwd = os.getcwd()
    except OSError:
        return show_name(Path(path).as_posix())
    folder, _, own = name.rpartition("/")
    if folder and own not in ("", ".", "..") and isinstance(path, Path):
        known = _folder_prefix(cwd, folder)
        if known is not None and own not in known[1]:
            return show_name(known[0] + own)
    return show_name(_raw_display(path, cwd))


#: a file name no file has (a NUL byte), whose display shows its folder's part
_PROBE = "\0"


@functools.lru_cache(maxsize=256)
def _folder_prefix(cwd: str, folder: str) -> tuple[str, tuple[str, ...]] | None:
    """What :func:`_raw_display` shows of the folder ``folder`` (as a ``Path`` spells it
    before a "/" and a file's name) before a file's name, seen from ``cwd``, and the
    names for which a file there is not shown that way; None when not known.  Every step of
    :func:`_raw_display` takes a file's own name (no "/", not ``.`` or ``..``) as it is,
    appended to what it makes of the folder (``os.path.normpath`` keeps a last plain
    part; a folder is never resolved through it), but one: a path that is the working
    directory itself (as given, or resolved) is shown as ``.``; its last part is such
    a name.  Asked once a folder and working directory in a run, as ``_resolved``."""
    path = Path(folder, _PROBE)
    if os.fspath(path) != f"{folder}/{_PROBE}":  # (a folder Path spells otherwise: "//")
        return None
    probe = _raw_display(path, cwd)
    if not probe.endswith(_PROBE) or probe.count(_PROBE) != 1:
        return None
    try:
        resolved = _resolved(cwd, cwd)
    except (OSError, RuntimeError):
        return None
    return probe[:-len(_PROBE)], (os.path.basename(cwd), os.path.basename(resolved))


def _raw_display(path: str | Path, cwd: str) -> str:
    """:func:`display_path` before its escape (``cwd``: the working directory)."""
    path = as_path(path)
    name = os.fspath(path)  # (``os.path.abspath`` without asking for the folder again)
    if _clean_relative(name):  # normalized below the working directory: itself
        return name
    inside = _inside(os.path.normpath(name if os.path.isabs(name) else os.path.join(cwd, name)),
                     cwd)
    if inside is not None:
        return inside
    try:
        # the name itself is never resolved: a link to /dev/zero is shown as the link
        folder = _resolved(cwd, os.fspath(path.parent))
        inside = _inside(folder + ("" if folder.endswith("/") else "/") + path.name,
                         _resolved(cwd, cwd))
    except (OSError, RuntimeError):
        inside = None
    return path.as_posix() if inside is None else inside


@functools.lru_cache(maxsize=256)
def _resolved(cwd: str, folder: str) -> str:
    """``Path(folder).resolve()`` seen from ``cwd``, as text: asked once a folder in a run
    over many files of a few folders (the folders of one command do not move under it)."""
    return real_path(folder).as_posix()


def _clean_relative(name: str) -> bool:
    """Whether ``name`` is a relative path that ``os.path.normpath`` leaves as it is under
    any folder: "/"-separated parts, none empty, ``.`` or ``..`` (joined to the working
    directory, which ``os.getcwd`` gives normalized, and normalized, it is the working
    directory, "/" and ``name``: so :func:`_inside` gives ``name`` back)."""
    if os.sep != "/" or os.altsep is not None:
        return False
    parts = name.split("/")  # (an absolute name's first part is empty, so is an empty name's)
    return "" not in parts and "." not in parts and ".." not in parts


def _inside(absolute: str, base: str) -> str | None:
    """``absolute`` relative to ``base`` (both normalized absolute paths), or None when it
    is not inside it: ``Path(absolute).relative_to(base).as_posix()`` without the objects."""
    if absolute == base:
        return "."
    prefix = base if base.endswith("/") else base + "/"
    return absolute[len(prefix):] if absolute.startswith(prefix) else None


# --------------------------------------------------------------------------- entry points


def as_path(path: str | Path) -> Path:
    """``path`` as a :class:`Path` (made from a :func:`given_path` text only when asked)."""
    return path if isinstance(path, Path) else Path(path)


def given_path(path: str | os.PathLike[str]) -> str | Path:
    """A path named on the command line as the loaders keep it: the text itself when it is
    what ``Path`` would make of it (a relative name of plain parts: :func:`_clean_relative`),
    so that a run over 10,000 files named one by one makes no path object a file; else its
    ``Path``.  Either names the file, and shows as the same name (:func:`display_path`)."""
    if isinstance(path, Path) or (isinstance(path, str) and _clean_relative(path)):
        return path
    return Path(path)
