"""A run over several paths reads each file once (:class:`ReadOnce`)."""

from __future__ import annotations

import os

STDIN = "-"


class ReadOnce:
    """The files a run over several paths has taken (``validate a/ a/x.json``, ``validate
    x.json x.json``, ``- -``, ``analyze a.risum ./a.risum``): each is read once, as given
    first, whatever names it again -- a document named twice is one document (never an
    MC104 duplicate of itself), a module one analysis.  A file is known by its real path
    (:func:`os.path.realpath`: absolute, normal, its links followed), so two spellings of
    one path (``./x``, ``sub/../x``, the absolute path, a folder reached through a link to
    it) are one file; a folder's files by the folder's real path and their own relative
    path (one ``realpath`` a path named, none a file of a folder)."""

    __slots__ = ("_cwd", "_seen")

    def __init__(self) -> None:
        self._cwd = os.getcwd()
        self._seen: set[str] = set()

    def real(self, p: str | os.PathLike[str]) -> str:
        """The path ``p`` is known by (standard input: ``-``)."""
        name = os.fspath(p)
        if name == STDIN:
            return name
        try:
            return os.path.realpath(os.path.join(self._cwd, name))
        except (OSError, ValueError):  # (a name the system refuses: load_file says so)
            return os.path.normpath(os.path.join(self._cwd, name))

    def first(self, p: str | os.PathLike[str], *, known_as: str | None = None) -> bool:
        """Whether ``p`` (known as ``known_as`` when given, else by :meth:`real`) is met
        for the first time (then it is remembered)."""
        key = self.real(p) if known_as is None else known_as
        if key in self._seen:
            return False
        self._seen.add(key)
        return True
