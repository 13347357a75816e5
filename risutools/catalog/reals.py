"""Where the files a review reads really are (:class:`Reals`): ``Path.resolve`` of each, as
text, with each folder resolved and listed once for all its files."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from risutools.safeio import within


class Reals:
    """``Path.resolve`` of the files read, as text (an entry holds its path as text: no
    ``Path`` is made of it), each folder resolved once for all its files, a
    file itself followed only when it is a symbolic link, a file's documents (an NDJSON
    file's lines) asked once; and whether a file is shown as it was named (its entry's
    place is then the name the loader gave it: :meth:`resolve`).

    Which files are symbolic links: the first file of a folder is asked alone (``lstat``);
    from the second on, the folder is listed once (``os.scandir``: the kind of each name
    comes with the listing) and each name looked up in its links (:meth:`_is_link`)."""

    def __init__(self) -> None:
        #: folder as named -> (resolved, whether the folder named is its resolved self and
        #: inside the working folder: a file in it is shown by its place there either way)
        self.folders: dict[str, tuple[str, bool]] = {}
        self.last: tuple[str, str, bool] | None = None
        #: folder as named -> the names in it that are symbolic links (None: the folder
        #: could not be listed, each file is asked alone); absent: one file asked so far
        self.links: dict[str, frozenset[str] | None] = {}
        self.asked: set[str] = set()  # folders whose first file was asked alone

    def resolve(self, p: Path) -> tuple[str, bool]:
        """(the real file, as ``os.fspath(p.resolve())`` spells it, whether
        :func:`display_path` shows it as it shows ``p``)."""
        text = os.fspath(p)
        if self.last is not None and self.last[0] == text:
            return self.last[1], self.last[2]
        folder, name = os.path.split(text)
        known = self.folders.get(folder)
        if known is None:
            real = os.path.realpath(folder or ".")
            try:
                cwd = os.getcwd()
            except OSError:
                cwd = ""
            named = os.path.abspath(folder or ".")
            plain = bool(cwd) and real == named and within(named, cwd)
            known = self.folders[folder] = (real, plain)
        parent, plain = known
        link = self._is_link(folder, name, text)
        # (the resolved folder is absolute and normalized, the name a plain one: joined as
        # ``Path(parent) / name`` spells it)
        out = os.path.realpath(text) if link or not name else os.path.join(parent, name)
        self.last = (text, out, plain and not link)
        return out, plain and not link

    def _is_link(self, folder: str, name: str, text: str) -> bool:
        """``os.path.islink(text)`` (``text``: ``name`` in ``folder``), from the folder's
        listing once a second file of it is asked."""
        links = self.links.get(folder, _UNLISTED)
        if links is _UNLISTED:
            if folder not in self.asked or not name:
                self.asked.add(folder)
                return os.path.islink(text)
            links = self.links[folder] = _links_in(folder or ".")
        if links is None or not name:
            return os.path.islink(text)
        return name in links


#: a folder :class:`Reals` has not listed yet
_UNLISTED: Any = object()


def _links_in(folder: str) -> frozenset[str] | None:
    """The names in ``folder`` that are symbolic links (``DirEntry.is_symlink``: the kind
    the listing gave, else an ``lstat``), or None when it cannot be listed."""
    try:
        with os.scandir(folder) as it:
            return frozenset([d.name for d in it if d.is_symlink()])
    except OSError:
        return None
