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

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

from risutools import __version__
from risutools.canonical import canonical
from risutools.catalog.approvals import now_iso
from risutools.catalog.carry import carry
from risutools.catalog.catalog import Catalog, Entry, file_sha256
from risutools.catalog.writes import (
    append_log,
    catalog_lock,
    conflict_error,
    current_bytes,
    link,
    log_now,
    write_document,
)
from risutools.contract.transitions import find_catalog_root, read_log, undo_line
from risutools.errors import Code, RisuError
from risutools.jsonplaces import Place, pointer_at
from risutools.replay.component import ComponentFile, load_component, write_updated
from risutools.settings import lifecycle
from risutools.settings.catalog import NOTES_SOURCE_VERSION

_ABSENT = object()


def _at(doc: Any, pointer: str) -> Any:
    cur = doc
    for k in pointer.split("/")[1:]:
        if not isinstance(cur, dict) or k not in cur:
            return _ABSENT
        cur = cur[k]
    return cur


def _change(ptr: str, a: Any, b: Any) -> dict[str, Any]:
    ch: dict[str, Any] = {"pointer": ptr}
    if a is not _ABSENT:
        ch["before"] = a
    if b is not _ABSENT:
        ch["after"] = b
    return ch


def changes(old: dict[str, Any], new: dict[str, Any], *, content: bool = False
            ) -> list[dict[str, Any]]:
    """Every evidence value that differs between ``old`` and ``new``, before and after (a
    value that was absent has no ``before``): the replay's fields, or with ``content`` every
    value under :data:`lifecycle.CONTENT_POINTERS` (mappings walked key by key, lists and
    scalars whole: each change's parent is a mapping both documents have, so the history
    gate can undo it)."""
    if not content:
        return [_change(ptr, _at(old, ptr), _at(new, ptr))
                for ptr in lifecycle.EVIDENCE_POINTERS if _at(old, ptr) != _at(new, ptr)]
    out: list[dict[str, Any]] = []
    for ptr in lifecycle.CONTENT_POINTERS:
        _diff(ptr, None, _at(old, ptr), _at(new, ptr), out)
    out += [_change(ptr, _at(old, ptr), _at(new, ptr)) for ptr in lifecycle.EVIDENCE_POINTERS
            if not any(ptr == p or ptr.startswith(p + "/") for p in lifecycle.CONTENT_POINTERS)
            and _at(old, ptr) != _at(new, ptr)]
    return out


def _diff(base: str, place: Place, a: Any, b: Any, out: list[dict[str, Any]]) -> None:
    """The changes between ``a`` and ``b`` at ``base`` (a pointer) and ``place`` below it,
    into ``out`` (a change's pointer written when it is made, not one a member walked past:
    each is as long as the keys above it)."""
    if a == b:
        return
    plain = isinstance(a, dict) and isinstance(b, dict) and all(
        isinstance(k, str) and k and "/" not in k and "~" not in k for k in (*a, *b))
    if not plain:  # (a key a JSON pointer would have to escape: the mapping whole)
        out.append(_change(base + pointer_at(place), a, b))
        return
    for k in sorted({*a, *b}):  # (a key checked plain: its pointer written as it is)
        _diff(base, (place, k), a.get(k, _ABSENT), b.get(k, _ABSENT), out)


def record_evidence(cf: ComponentFile, new_doc: dict[str, Any], *, reason: str,
                    report_sha256: str | None = None,
                    digest: tuple[str, str] | None = None) -> int | None:
    """Write ``new_doc`` over the document ``cf`` was read from, logged as evidence when the
    document is past candidate in a catalog; returns the log line (None: no line).
    ``digest`` (field, ``sha256:...``): what the line names instead of a replay report
    (``notes_sha256``, ``source_sha256``): content evidence, whose changes may reach what a
    projection writes (:func:`lifecycle.evidence_may_change`)."""
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
        log = read_log(cat.root, only=entry.component_id)
        lines = log.runtime.get(entry.component_id, [])
        last = lines[-1][1] if lines else {}
        _ends_its_chain(entry, log.by_component.get(entry.component_id, []) + lines)
        line = None
        if last.get("kind") == lifecycle.EVIDENCE_LINE and \
                last.get("before_sha256") == entry.base_sha256 and \
                last.get("after_sha256") == after:
            line = lines[-1][0]  # an interrupted run of the same evidence: complete it
        else:
            field, named = digest if digest is not None else ("report_sha256", report_sha256)
            rec: dict[str, Any] = {
                "kind": lifecycle.EVIDENCE_LINE, "component_id": entry.component_id,
                "reason": reason, field: named,
                "changes": changes(entry.doc, new_doc, content=digest is not None),
                "before_sha256": entry.base_sha256, "after_sha256": after,
                "at": now_iso(), "tool_version": __version__}
            if named is None:
                del rec[field]
            line = append_log(cat, link(rec, entry, last.get("after_sha256")), before)
        write_document(cat, entry, raw, new_doc)
        return line


def _ends_its_chain(entry: Entry, history: list[tuple[int, dict[str, Any]]]) -> None:
    """``unrecorded-change`` when the document is not where its last recorded line left it
    (edited by hand since: MC305): evidence logged on top of such an edit would record it
    as the chain's, and revert the curator's change without a word (eighth pass)."""
    if not history:
        return
    line, last = max(history, key=lambda x: x[0])
    ended = last.get("after_sha256")
    if ended == entry.base_sha256 or ended in lifecycle.base_names(entry.doc):
        return
    raise RisuError(Code.UNRECORDED_CHANGE, f"{entry.component_id} changed after "
                    f"transitions.ndjson line {line} (it is not the document that line "
                    "recorded); nothing is recorded on top of an unrecorded change: restore "
                    "it from version control, or reject it", path=entry.where())


Writer = Callable[[ComponentFile, dict[str, Any], str, str], "int | None"]


def evidence_writer(what: str) -> Writer:
    """A writer for :func:`risutools.replay.api.run_component`: the replay's verdict
    recorded as evidence (``what`` names the command in the line's reason)."""

    def write(cf: ComponentFile, new_doc: dict[str, Any], report_sha256: str,
              fixture: str) -> int | None:
        return record_evidence(cf, new_doc, reason=f"{what}: fixture {fixture}, report "
                               f"{report_sha256}", report_sha256=report_sha256)

    return write



def reprojected(existing: dict[str, Any], generated: dict[str, Any]
                ) -> tuple[dict[str, Any] | None, str]:
    """A reviewed document re-projected by ``ingest``: ``generated`` (the fresh projection,
    curator notes applied) keeping ``existing``'s lifecycle fields and replay evidence.
    (document, '') when it is content evidence the history gate accepts: the component's
    decision is pending (:data:`lifecycle.CONTENT_EVIDENCE`), the module's bytes are the
    same (``source_refs[0]``) and every change is one evidence may make; (None, why) when
    the document is kept as it is ('' when nothing changed)."""
    status = _at(existing, "/provenance/review_status")
    new, _, _ = carry(existing, generated)
    new = copy.deepcopy(generated) if new is None else new
    if not isinstance(new.get("provenance"), dict):
        return None, ""
    for ptr in lifecycle.LIFECYCLE_POINTERS:  # (a step's, a switch's: never the projection's)
        was, now = _at(existing, ptr), _at(new, ptr)
        *path, key = ptr.split("/")[1:]
        parent = _at(new, "/" + "/".join(path))
        if was is _ABSENT and isinstance(parent, dict):
            parent.pop(key, None)
        elif isinstance(parent, dict) and now != was:
            parent[key] = was
    if canonical(new) == canonical(existing):
        return None, ""
    if status not in lifecycle.CONTENT_EVIDENCE:
        return None, (f"{status}: its content changes only through a new review (re-projected "
                      f"content is recorded while {', '.join(lifecycle.CONTENT_EVIDENCE)})")
    if _source(existing) is None or _source(existing) != _source(new):
        return None, "the module's bytes changed: a new version is reviewed anew"
    ch = changes(existing, new, content=True)
    undone, why = undo_line(new, {"kind": lifecycle.EVIDENCE_LINE, "changes": ch}, status)
    if why or undone is None or canonical(undone) != canonical(existing):
        return None, f"the re-projection changes more than evidence may ({why or 'elsewhere'})"
    return new, ""


def _source(doc: dict[str, Any]) -> Any:
    refs = _at(doc, "/provenance/source_refs")
    first = refs[0] if isinstance(refs, list) and refs else None
    return first.get("sha256") if isinstance(first, dict) else None


def _notes_ref(doc: dict[str, Any]) -> Any:
    refs = _at(doc, "/provenance/source_refs")
    return next((r.get("sha256") for r in refs if isinstance(r, dict)
                 and r.get("source_version") == NOTES_SOURCE_VERSION), None) \
        if isinstance(refs, list) else None


def record_reprojection(path: Path, generated: dict[str, Any]) -> tuple[bool, str]:
    """``ingest``'s re-projection of the reviewed document at ``path`` (read again here, the
    write compare-and-swap on those bytes), recorded as evidence naming the digest it comes
    from: the curator notes (``notes_sha256``) when they changed, else the module's source
    (``source_sha256``).  (True, the summary line) when recorded; (False, why it is kept as
    it is: '' when nothing changed)."""
    cf = load_component(path)
    new, why = reprojected(cf.doc, generated)
    if new is None:
        return False, why
    if find_catalog_root(path.parent) is None:
        return False, "no transitions.ndjson records its review: nothing logs the change"
    notes = _notes_ref(new)
    if notes != _notes_ref(cf.doc) and isinstance(notes, str):
        digest, reason = ("notes_sha256", notes), f"ingest: curator notes applied ({notes})"
    else:
        src = str(_source(new))
        digest, reason = ("source_sha256", src), f"ingest: re-projected from {src}"
    try:
        line = record_evidence(cf, new, reason=reason, digest=digest)
    except RisuError as exc:  # (an unrecorded change: the document kept as it is, said why)
        if exc.code != Code.UNRECORDED_CHANGE:
            raise
        return False, exc.why
    return True, f"{cf.doc.get('component_id')}: transitions.ndjson line {line}: {reason}"
