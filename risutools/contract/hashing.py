"""``risutools hash``: the canonical document hash of each document in a file."""

from __future__ import annotations

import os

from risutools.canonical import doc_sha256
from risutools.contract.loaders import load_documents
from risutools.errors import Code, DocumentError
from risutools.fsio import display_path


def hash_lines(path: str, *, bare: bool = False) -> tuple[list[str], list[str]]:
    """Lines to print and problems (one line each), like ``sha256sum``: one document:
    ``sha256:<hex>  <file>``; several (NDJSON, multi-document YAML):
    ``sha256:<hex>  <file>:<line>  <component_id>`` per document.  ``bare``: the hash
    alone on each line."""
    out = load_documents(path)
    problems = [
        f"{f.file}" + (f":{f.line}" if f.line else "") + f": {f.rule}: {f.message}"
        for f in out.problems
    ]
    if not out.documents and not out.problems:
        raise DocumentError(Code.NO_DOCUMENTS, "no documents found", path=path)
    lines: list[str] = []
    # the name as given (a non-UTF-8 name escaped, as everywhere)
    given = None if path == "-" or os.path.isdir(path) else display_path(path)
    single = len(out.documents) == 1 and out.documents[0].fmt != "ndjson"
    for d in out.documents:
        try:
            h = doc_sha256(d.doc)
        except (ValueError, TypeError, UnicodeEncodeError, RecursionError) as exc:
            problems.append(f"{d.file}:{d.line}: cannot hash: {exc}")
            continue
        if bare:
            lines.append(h)
        elif single:
            lines.append(f"{h}  {given or d.file}")
        else:
            cid = d.doc.get("component_id") if isinstance(d.doc, dict) else None
            lines.append(f"{h}  {given or d.file}:{d.line}  "
                         f"{cid if isinstance(cid, str) else '-'}")
    return lines, problems
