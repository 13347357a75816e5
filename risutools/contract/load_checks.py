"""The two checks of reading a document (scope ``load``): MC000, a file that cannot be parsed
exactly as written, and MC001, a path that cannot be read at all (the run could not run:
exit 2).  The loaders report them through these units; a result asks them whether the run
could run.  Light on purpose: a reporter of results imports this and nothing heavier."""

from __future__ import annotations

from risutools.checks.registry import check
from risutools.findings import Finding


@check("MC000", "error", "load", "unparsable-document")
def mc000(file: str, why: str, line: int | None = None, pointer: str = "") -> Finding:
    """The file is a readable JSON, YAML or NDJSON document (UTF-8, no duplicate keys, no
    NaN/Infinity, no YAML aliases or non-JSON tags, within the size and depth bounds).

    Why: Nothing else can be checked in a file that cannot be read exactly as written; a
    lenient parse would validate something other than what the file says.

    Fix: Fix the syntax at the reported line / byte offset / pointer.
    """
    return Finding(mc000.id, "error", why, file=file, line=line, pointer=pointer)


@check("MC001", "error", "load", "unreadable-path")
def mc001(file: str, why: str) -> Finding:
    """The path given can be read (exists, is permitted).

    Why: A path that cannot be read was not checked, so the run cannot pass.

    Fix: Check the path and its permissions; risutools exits 2 for these.
    """
    return Finding(mc001.id, "error", why, file=file)


def could_not_read(f: Finding) -> bool:
    """Whether ``f`` says a path could not be read at all (MC001: the run could not run)."""
    return f.rule == mc001.id
