"""Evidence recorded into a document: a logged change of its own kind.

A replay verdict (``replay run --update``) changes a document's hash.  Past ``candidate``
the document must end its recorded chain (MC305, the history gate), so the change is a line
of the transition log, ``kind: evidence``, written the way a promotion is (under the catalog
lock: the document's bytes compared with those read, the line appended, then the document
replaced)::

    {"kind": "evidence", "component_id": ..., "reason": "replay run --update: ...",
     "report_sha256": "sha256:...", "changes": [{"pointer": "/projection/replay_status",
     "before": "not_run", "after": "passed"}, ...], "before_sha256": ..., "after_sha256": ...,
     "at": ..., "tool_version": ...}

``changes`` holds every value the evidence changed (only at
:data:`risutools.settings.lifecycle.EVIDENCE_POINTERS`), so the history gate can undo the
line and check the hash it started from.  The approvals in flight become stale: the next
approval names the new base hash.  A candidate has no chain, so its evidence is written
without a line.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from risutools import __version__
from risutools.catalog.approvals import now_iso
from risutools.catalog.catalog import Catalog, file_sha256
from risutools.catalog.writes import (
    append_log,
    catalog_lock,
    conflict_error,
    current_bytes,
    link,
    log_now,
    write_document,
)
from risutools.contract.transitions import find_catalog_root, read_log
from risutools.replay.component import ComponentFile, write_updated
from risutools.settings import lifecycle

_ABSENT = object()


def _at(doc: Any, pointer: str) -> Any:
    cur = doc
    for k in pointer.split("/")[1:]:
        if not isinstance(cur, dict) or k not in cur:
            return _ABSENT
        cur = cur[k]
    return cur


def changes(old: dict[str, Any], new: dict[str, Any]) -> list[dict[str, Any]]:
    """Every evidence value that differs between ``old`` and ``new``, before and after (a
    value that was absent has no ``before``)."""
    out: list[dict[str, Any]] = []
    for ptr in lifecycle.EVIDENCE_POINTERS:
        a, b = _at(old, ptr), _at(new, ptr)
        if a == b:
            continue
        ch: dict[str, Any] = {"pointer": ptr}
        if a is not _ABSENT:
            ch["before"] = a
        if b is not _ABSENT:
            ch["after"] = b
        out.append(ch)
    return out


def record_evidence(cf: ComponentFile, new_doc: dict[str, Any], *, reason: str,
                    report_sha256: str | None = None) -> int | None:
    """Write ``new_doc`` over the document ``cf`` was read from, logged as evidence when the
    document is past candidate in a catalog; returns the log line (None: no line)."""
    status = _at(cf.doc, "/provenance/review_status")
    root = find_catalog_root(cf.path.parent)
    if status not in lifecycle.EVIDENCE_LOGGED or root is None:
        write_updated(cf, new_doc)
        return None
    cat = Catalog.open(root)
    entry = cat.resolve(str(cf.path))
    with catalog_lock(cat):
        raw, _ = current_bytes(cat, entry)
        if file_sha256(raw) != cf.sha256:
            raise conflict_error(entry, "the file changed during the replay")
        after = lifecycle.base_sha256(new_doc)
        before = log_now(cat)
        lines = read_log(cat.root, only=entry.component_id).runtime.get(entry.component_id, [])
        last = lines[-1][1] if lines else {}
        line = None
        if last.get("kind") == lifecycle.EVIDENCE_LINE and \
                last.get("before_sha256") == entry.base_sha256 and \
                last.get("after_sha256") == after:
            line = lines[-1][0]  # an interrupted run of the same evidence: complete it
        else:
            rec: dict[str, Any] = {
                "kind": lifecycle.EVIDENCE_LINE, "component_id": entry.component_id,
                "reason": reason, "report_sha256": report_sha256,
                "changes": changes(entry.doc, new_doc),
                "before_sha256": entry.base_sha256, "after_sha256": after,
                "at": now_iso(), "tool_version": __version__}
            if report_sha256 is None:
                del rec["report_sha256"]
            line = append_log(cat, link(rec, entry, last.get("after_sha256")), before)
        write_document(cat, entry, raw, new_doc)
        return line


Writer = Callable[[ComponentFile, dict[str, Any], str, str], "int | None"]


def evidence_writer(what: str) -> Writer:
    """A writer for :func:`risutools.replay.api.run_component`: the replay's verdict
    recorded as evidence (``what`` names the command in the line's reason)."""

    def write(cf: ComponentFile, new_doc: dict[str, Any], report_sha256: str,
              fixture: str) -> int | None:
        return record_evidence(cf, new_doc, reason=f"{what}: fixture {fixture}, report "
                               f"{report_sha256}", report_sha256=report_sha256)

    return write

