"""One line per finding, ``file:line:col: ID message`` (ruff's ``concise``), then a summary.

Editors and terminals turn ``file:line:col:`` into a link.  Findings are per field
or per line, so the column is 1; a finding without a line shows ``file:`` only
(``-`` stands for input without a file name).  The JSON pointer or the analyser's
evidence follows the message in brackets.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import TYPE_CHECKING

from risutools.report._common import one_line, summary_line, text_pieces
from risutools.report.color import painter

if TYPE_CHECKING:
    from risutools.contract.validate import Result
    from risutools.findings import Finding


def concise_line(f: Finding, color: bool = False) -> str:
    """``file:line:col: ID message [pointer]``; on a terminal the place bold and the id in
    its severity's colour (ruff's look)."""
    paint = painter(color)
    where = one_line(f.file) if f.file else "-"
    if f.line:
        where += f":{f.line}:1"
    extra = f.pointer or f.evidence
    tail = paint("dim", f" [{one_line(extra)}]") if extra else ""
    return f"{paint('bold', where)}: {paint(f.severity, f.rule)} {one_line(f.message)}{tail}"


def render_concise(result: Result, color: bool = False) -> str:
    return "".join(concise_pieces(result, color))


def concise_pieces(result: Result, color: bool = False) -> Iterator[str]:
    """The lines in pieces, written as they are made (each line starts with a file name:
    :func:`~risutools.printable.no_commands`)."""
    lines = (concise_line(f, color) for f in result.findings)
    return text_pieces(itertools.chain(lines, (summary_line(result),)), safe=True)
