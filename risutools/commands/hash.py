"""``risutools hash``: the base hash of each document in a file (like ``sha256sum``): the
canonical hash of the document without its runtime fields, what approvals, packets, gates,
the transition log and ``approve --base`` name (:func:`lifecycle.base_sha256`)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import ClassVar

from risutools.contract.loaders import LoadedDocument, iter_documents, not_a_component
from risutools.errors import Code, DocumentError, RisuError
from risutools.fsio import display_path
from risutools.printable import text_value
from risutools.rowspool import Rows
from risutools.settings.lifecycle import base_sha256


def hash_lines(path: str, *, bare: bool = False) -> tuple[Rows, Rows]:
    """Lines to print and problems (one line each, as ``{"line": ...}`` rows kept out of
    memory: :class:`~risutools.rowspool.Rows`), like ``sha256sum``: one document:
    ``sha256:<hex>  <file>``; several (NDJSON, multi-document YAML, a folder):
    ``sha256:<hex>  <file>:<line>  <component_id>`` per document.  ``bare``: the hash
    alone on each line.  The documents are read a part at a time (an NDJSON file a batch of
    lines: :func:`iter_documents`) and let go once hashed: what is held is one part."""
    lines, problems = Rows(), Rows()
    # the name as given (a non-UTF-8 name escaped, as everywhere)
    given = None if path == "-" or os.path.isdir(path) else display_path(path)
    seen = 0  # documents read (hashed or not): one alone is written as sha256sum writes it
    first: tuple[str, LoadedDocument] | None = None  # the first hashed, while it may be alone

    def line(h: str, d: LoadedDocument, single: bool) -> dict[str, str]:
        if bare:
            return {"line": h}
        if single:
            return {"line": f"{h}  {given or d.file}"}
        cid = d.doc.get("component_id") if isinstance(d.doc, dict) else None
        return {"line": f"{h}  {given or d.file}:{d.line}  "  # (the id as text: no line
                f"{text_value(cid) if isinstance(cid, str) else '-'}"}  # break, ESC)

    for part in iter_documents(path, lines=True):
        for f in part.problems:  # as every command says them: the path's code, or a line
            problems.append({"line": f"{f.file}" + (f":{f.line}" if f.line else "")
                             + f": {f.code or Code.BAD_DOCUMENT}: {f.message}"})
        for d in part.documents:
            seen += 1
            if seen == 2 and first is not None:  # (not alone: written as one of several)
                lines.append(line(first[0], first[1], False))
                first = None
            h = _hashed(d, problems)
            if h is None:
                continue
            if seen == 1:
                first = (h, d)
            else:
                lines.append(line(h, d, False))
    if first is not None:
        lines.append(line(first[0], first[1], first[1].fmt != "ndjson"))
    if not seen and not problems:
        raise DocumentError(Code.NO_DOCUMENTS, "no documents found", path=path)
    return lines, problems


def _hashed(d: LoadedDocument, problems: Rows) -> str | None:
    """The document's base hash, or None with its problem added."""
    why = not_a_component(d.doc)
    if why is not None:
        problems.append({"line": f"{d.file}" + (f":{d.line}" if d.line else "")
                         + f": {Code.UNSUPPORTED_DOCUMENT}: {why}"})
        return None
    try:
        return base_sha256(d.doc)
    except (ValueError, TypeError, UnicodeEncodeError, RecursionError) as exc:
        problems.append({"line": f"{d.file}:{d.line}: cannot hash: {exc}"})
        return None


@dataclass(frozen=True)
class Options:
    """What ``hash`` was asked: files (``-`` for standard input), the hashes alone or not."""

    files: tuple[str, ...]
    quiet: bool = False


@dataclass
class Hashed:
    """One file's lines, the problems of its documents, or why it could not be read."""

    file: str
    #: ``{"line": text}`` rows, out of memory (:func:`hash_lines`)
    lines: Rows = field(default_factory=Rows)
    problems: Rows = field(default_factory=Rows)
    error: RisuError | None = None


@dataclass
class HashResult:
    kind: ClassVar[str] = "hash"
    files: list[Hashed]

    def exit_code(self) -> int:
        """2 when a file or a document could not be read or hashed, else 0."""
        return 2 if any(h.error is not None or h.problems for h in self.files) else 0


def run(opts: Options) -> HashResult:
    out = []
    for file in opts.files:
        try:
            lines, problems = hash_lines(file, bare=opts.quiet)
        except RisuError as exc:
            out.append(Hashed(file, error=exc.with_path(file) if exc.path is None else exc))
            continue
        out.append(Hashed(file, lines, problems))
    return HashResult(out)
