"""One exception family for everything risutools refuses.

Every error carries a stable ``code`` (part of the public interface: tests and
users match on it), a ``where`` (byte offset, JSON pointer, line, member name)
and a ``why``.  ``one_line()`` renders the single line the CLI prints; the CLI
maps any :class:`RisuError` to exit code 2 and never shows a traceback.
"""

from __future__ import annotations


class RisuError(Exception):
    """Base class: something risutools could not read, parse or do."""

    def __init__(self, code: str, why: str, *, where: str = "", path: str | None = None) -> None:
        super().__init__(why)
        self.code = code
        self.why = why
        self.where = where
        self.path = path

    def with_path(self, path: str) -> RisuError:
        """Attach the file the error belongs to (if not already set) and return self."""
        if self.path is None:
            self.path = path
        return self

    def one_line(self) -> str:
        """``path: where: code: why`` with empty parts left out."""
        parts = [p for p in (self.path, self.where) if p]
        head = ": ".join(parts)
        body = f"{self.code}: {self.why}"
        return f"{head}: {body}" if head else body

    def __str__(self) -> str:
        return self.one_line()


class FormatError(RisuError):
    """A container (.risum, .charx, .risup, JSON export) is malformed."""


class DocumentError(RisuError):
    """A catalog document (JSON/YAML/NDJSON) cannot be loaded."""


class ConfigError(RisuError):
    """A configuration, notes or fixture file is invalid."""


class ReplayError(RisuError):
    """A replay cannot run (bad fixture operation, bad configuration)."""


class WriteConflict(RisuError):
    """A compare-and-swap write found a file that changed since it was read."""
