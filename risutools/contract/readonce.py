"""A run over several paths reads each file once (:class:`ReadOnce`)."""

from __future__ import annotations

import os

STDIN = "-"


class ReadOnce:
    """The files a run over several paths has taken (``validate a/ a/x.json``, ``validate
    x.json x.json``, ``- -``, ``analyze a.risum ./a.risum``): each is read once, as given
    first, whatever names it again -- a document named twice is one document (never an
    MC104 duplicate of itself), a module one analysis.  A file named on the command line is
    known by its device and inode (the status the caller took, or one ``stat``: two
    spellings of one path, ``./x``, ``sub/../x``, the absolute path, a link to it, are one
    file), a folder's files by the folder's real path and their own relative path (one
    ``realpath`` a folder, none a file of it); a named file is matched against folders' files
    by its real path, taken only when the run walks a folder too (``validate *.json`` of
    10,000 files takes none: a ``realpath`` a file was 1.1x such a run's CPU)."""

    __slots__ = ("_cwd", "_ids", "_named", "_pending", "_seen", "_walked")

    def __init__(self) -> None:
        self._cwd = os.getcwd()
        self._ids: set[tuple[int, int]] = set()  # named files' (device, inode)
        self._pending: list[str] = []  # named files whose real path is not yet taken
        self._named: set[str] = set()  # named files' real paths (once a folder is walked)
        self._seen: set[str] = set()  # folders' files, standard input, unreadable names
        self._walked = False  # a folder's files have been met

    def real(self, p: str | os.PathLike[str]) -> str:
        """The path ``p`` is known by (standard input: ``-``)."""
        name = os.fspath(p)
        if name == STDIN:
            return name
        try:
            return os.path.realpath(os.path.join(self._cwd, name))
        except (OSError, ValueError):  # (a name the system refuses: load_file says so)
            return os.path.normpath(os.path.join(self._cwd, name))

    def first(self, p: str | os.PathLike[str], *, known_as: str | None = None,
              status: os.stat_result | None = None) -> bool:
        """Whether ``p`` is met for the first time (then it is remembered): a folder's file
        ``known_as`` its folder's real path and its relative path, else a path named
        (``status``: its status, when the caller took it)."""
        if known_as is not None:
            if not self._walked or self._pending:
                self._walked = True
                self._named.update(map(self.real, self._pending))
                self._pending.clear()
            if known_as in self._seen or known_as in self._named:
                return False
            self._seen.add(known_as)
            return True
        name = os.fspath(p)
        st = status if status is not None or name == STDIN else _status(name)
        if st is None:
            key = name if name == STDIN else os.path.normpath(os.path.join(self._cwd, name))
            if key in self._seen:
                return False
            self._seen.add(key)
            return True
        ident = (st.st_dev, st.st_ino)
        if ident in self._ids or (self._walked and self.real(name) in self._seen):
            return False
        self._ids.add(ident)
        if self._walked:
            self._named.add(self.real(name))
        else:
            self._pending.append(name)
        return True


def _status(name: str) -> os.stat_result | None:
    try:
        return os.stat(name)
    except (OSError, ValueError):
        return None
