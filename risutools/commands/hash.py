"""``risutools hash``: the base hash of each document in a file (like ``sha256sum``): the
canonical hash of the document without its runtime fields, what approvals, packets, gates,
the transition log and ``approve --base`` name (:func:`lifecycle.base_sha256`)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import ClassVar

from risutools.contract.loaders import load_documents, not_a_component
from risutools.errors import Code, DocumentError, RisuError
from risutools.fsio import display_path
from risutools.printable import text_value
from risutools.settings.lifecycle import base_sha256


def hash_lines(path: str, *, bare: bool = False) -> tuple[list[str], list[str]]:
    """Lines to print and problems (one line each), like ``sha256sum``: one document:
    ``sha256:<hex>  <file>``; several (NDJSON, multi-document YAML):
    ``sha256:<hex>  <file>:<line>  <component_id>`` per document.  ``bare``: the hash
    alone on each line."""
    out = load_documents(path)
    problems = [  # as every command says them: the path's code, or a document unparsable
        f"{f.file}" + (f":{f.line}" if f.line else "") + f": {f.code or Code.BAD_DOCUMENT}: "
        f"{f.message}" for f in out.problems
    ]
    if not out.documents and not out.problems:
        raise DocumentError(Code.NO_DOCUMENTS, "no documents found", path=path)
    lines: list[str] = []
    # the name as given (a non-UTF-8 name escaped, as everywhere)
    given = None if path == "-" or os.path.isdir(path) else display_path(path)
    single = len(out.documents) == 1 and out.documents[0].fmt != "ndjson"
    for d in out.documents:
        why = not_a_component(d.doc)
        if why is not None:
            problems.append(f"{d.file}" + (f":{d.line}" if d.line else "")
                            + f": {Code.UNSUPPORTED_DOCUMENT}: {why}")
            continue
        try:
            h = base_sha256(d.doc)
        except (ValueError, TypeError, UnicodeEncodeError, RecursionError) as exc:
            problems.append(f"{d.file}:{d.line}: cannot hash: {exc}")
            continue
        if bare:
            lines.append(h)
        elif single:
            lines.append(f"{h}  {given or d.file}")
        else:
            cid = d.doc.get("component_id") if isinstance(d.doc, dict) else None
            lines.append(f"{h}  {given or d.file}:{d.line}  "  # (the id as text: no line
                         f"{text_value(cid) if isinstance(cid, str) else '-'}")  # break, ESC)
    return lines, problems


@dataclass(frozen=True)
class Options:
    """What ``hash`` was asked: files (``-`` for standard input), the hashes alone or not."""

    files: tuple[str, ...]
    quiet: bool = False


@dataclass
class Hashed:
    """One file's lines, the problems of its documents, or why it could not be read."""

    file: str
    lines: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
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
