"""The checks of scope ``load``: MC000 (a file that cannot be read as a document) and MC001
(a path that cannot be read at all).

The readers below the contract decide: :mod:`risutools.values` refuses text that is not an
exact JSON/YAML value (a neutral :class:`~risutools.values.Problem`: why, line, pointer),
:mod:`risutools.safeio` refuses a path that is not a regular file or cannot be read (a
:class:`~risutools.safeio.FileRefused`).  The loaders (:mod:`risutools.contract.loaders`)
walk the paths and call these checks with each refusal (why, and where: line, pointer); each
check makes its finding.
Neither is ever filtered out by ``--select``/``--ignore`` (``RuleFilter``), and MC001 makes
the run exit 2 ("could not run").  A light module: :mod:`risutools.contract.result` reads
MC001's id from here without importing the loaders.
"""

from __future__ import annotations

from risutools.checks.registry import check
from risutools.errors import Code
from risutools.findings import Finding


@check("MC000", "error", "load", "unparsable-document")
def mc000(file: str | None, why: str, line: int | None = None, pointer: str = "") -> Finding:
    """The file is a readable JSON, YAML or NDJSON document (UTF-8, no duplicate keys, no
    NaN/Infinity or number past a float's range, no YAML aliases or non-JSON tags, within
    the size and depth bounds).

    Why: Nothing else can be checked in a file that cannot be read exactly as written; a
    lenient parse would validate something other than what the file says.

    Fix: Fix the syntax at the reported line / byte offset / pointer.
    """
    return Finding(mc000.id, "error", why, file=file, line=line, pointer=pointer)


@check("MC001", "error", "load", "unreadable-path")
def mc001(file: str | None, why: str, code: str = Code.UNREADABLE) -> Finding:
    """The path given can be read (exists, is permitted).

    Why: A path that cannot be read was not checked, so the run cannot pass.

    Fix: Check the path and its permissions; risutools exits 2 for these.
    """
    return Finding(mc001.id, "error", why, file=file, code=code)
