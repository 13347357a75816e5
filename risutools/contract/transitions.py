"""MC305: a document past ``candidate`` must end a chain of recorded, approved transitions.

The catalog root of a document is the nearest folder (the document's own, or a
parent) that holds ``transitions.ndjson`` or ``approvals/``.  A transition line
is ``{component_id, from_status, to_status, before_sha256, after_sha256,
approval: {file, sha256}, at, tool_version}``; ``approval.file`` is relative to
the catalog root (or to ``approvals/``).  The chain for a component is every
line naming it, in file order; it must:
- start at ``candidate`` and be contiguous (each ``from_status`` is the previous
  ``to_status``), using only the lifecycle's transitions;
- end at the document's ``review_status`` with ``after_sha256`` equal to the
  document's current hash (an edit after the last transition is unrecorded);
- have, for every step, an approval file that exists, has the recorded sha256,
  names the component, has the action of that step and ``base_sha256`` equal to
  the step's ``before_sha256``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from risutools.canonical import sha256_prefixed
from risutools.contract.loaders import load_bytes
from risutools.safeio import FileRefused, check_inside, read_inside, read_regular
from risutools.settings.lifecycle import action_for
from risutools.values import MAX_DOCUMENT_BYTES, parse_json_text

MAX_LOG_BYTES = 64 * 1024 * 1024  # transitions.ndjson is read whole


@dataclass
class CatalogLog:
    root: Path
    by_component: dict[str, list[tuple[int, dict[str, Any]]]] = field(default_factory=dict)
    problems: list[tuple[int | None, str]] = field(default_factory=list)  # (line, why)
    exists: bool = False
    # runtime switches ({"kind": "runtime", ...}, risutools activate/deactivate): not
    # lifecycle steps, but they move the document's hash on
    runtime: dict[str, list[tuple[int, dict[str, Any]]]] = field(default_factory=dict)
    size: int = 0  # bytes of the log read
    # why the log could not be read (a FIFO, a device, a link out of the catalog, past
    # MAX_LOG_BYTES): also one of ``problems``; a writer refuses to go on
    refused: FileRefused | None = None


def find_catalog_root(start: Path, stop: Path | None = None) -> Path | None:
    """The nearest folder from ``start`` upwards holding transitions.ndjson or approvals/."""
    d = start.resolve()
    if d.is_file():
        d = d.parent
    while True:
        if os.path.lexists(d / "transitions.ndjson") or (d / "approvals").is_dir():
            return d
        if (d / ".git").exists() or d.parent == d or (stop is not None and d == stop):
            return None
        d = d.parent


def read_log(root: Path, only: str | None = None) -> CatalogLog:
    """The log; with ``only``, lines that do not contain that component id are skipped
    unparsed (a promotion reads one component's chain from a long log)."""
    log = CatalogLog(root)
    needle = only.encode("utf-8") if only is not None else None
    path = root / "transitions.ndjson"
    if not os.path.lexists(path):
        return log
    log.exists = True  # whatever it is: a FIFO or a device is a log that cannot be read

    try:  # regular files inside the catalog only, bounded (see risutools.safeio)
        data = read_inside(root, path, MAX_LOG_BYTES)
    except FileRefused as exc:
        log.problems.append((None, f"cannot read transitions.ndjson: {exc.why}"))
        log.refused = exc
        return log
    log.size = len(data)
    for i, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip() or (needle is not None and needle not in raw):
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            log.problems.append((i, "transition line is not UTF-8; restore the line as written"))
            continue
        rec, problem = parse_json_text(text, line=i)
        if problem is not None:
            log.problems.append((i, f"transition line is broken: {problem.message}"))
            continue
        if not isinstance(rec, dict) or not isinstance(rec.get("component_id"), str):
            log.problems.append((i, "transition line is not an object with a component_id; "
                                  "restore the line as written"))
            continue
        if rec.get("kind") == "runtime":
            log.runtime.setdefault(rec["component_id"], []).append((i, rec))
            continue
        log.by_component.setdefault(rec["component_id"], []).append((i, rec))
    return log


def _approval_path(root: Path, name: str) -> Path | None:
    for cand in (root / name, root / "approvals" / name):
        try:
            check_inside(root, cand)
        except FileRefused:
            continue  # never outside the catalog
        if os.path.lexists(cand) and not os.path.isdir(cand):
            return cand  # (a FIFO or a device is then said to be unreadable, not missing)
    return None


def _load_approval(path: Path) -> tuple[dict[str, Any] | None, str]:
    try:  # regular files only, bounded (see risutools.safeio)
        data = read_regular(path, MAX_DOCUMENT_BYTES)
    except FileRefused as exc:
        return None, exc.why
    out = load_bytes(data, path.name, fmt="json" if path.suffix == ".json" else "yaml")
    if out.problems or not out.documents or not isinstance(out.documents[0].doc, dict):
        why = out.problems[0].message if out.problems else "not a mapping"
        return None, why
    doc: dict[str, Any] = out.documents[0].doc
    return doc, sha256_prefixed(data)


def check_chain(log: CatalogLog, component_id: str, status: str, doc_hash: str
                ) -> Iterator[str]:
    """Messages (empty = the chain is complete and backed by approvals)."""
    steps = log.by_component.get(component_id, [])
    if not log.exists:
        yield (f"review_status is {status!r} but the catalog ({log.root.name}/) has no "
               "transitions.ndjson; only recorded, approved transitions move a document past "
               "candidate (use `risutools promote`)")
        return
    if not steps:
        yield (f"review_status is {status!r} but transitions.ndjson records no transition for "
               f"{component_id}; only recorded, approved transitions move a document past "
               "candidate")
        return
    expected_from = "candidate"
    for line, rec in steps:
        frm, to = rec.get("from_status"), rec.get("to_status")
        if frm != expected_from:
            yield (f"transitions.ndjson line {line}: from_status {frm!r} does not continue the "
                   f"chain (expected {expected_from!r}); record the missing step with `risutools "
                   "promote`")
            return
        if not isinstance(to, str) or action_for(frm, to) is None:
            yield (f"transitions.ndjson line {line}: {frm!r} -> {to!r} is not a lifecycle "
                   "transition; fix the line (candidate -> pending_human_review -> approved -> "
                   "promoted -> retired, any -> rejected)")
            return
        yield from _check_approval(log.root, line, rec, component_id, action_for(frm, to) or "")
        expected_from = to
    last_line, last = steps[-1]
    switches = log.runtime.get(component_id, [])
    hash_line, hash_rec = max((steps[-1], *switches[-1:]), key=lambda s: s[0])
    if last.get("to_status") != status:
        yield (f"the last recorded transition (line {last_line}) ends at "
               f"{last.get('to_status')!r} but review_status is {status!r} (changed without a "
               "recorded transition); restore it or record the change with `risutools promote`")
    elif hash_rec.get("after_sha256") != doc_hash:
        yield (f"the document changed after its last recorded transition (line {hash_line}: "
               f"after_sha256 {str(hash_rec.get('after_sha256'))[:19]}…, now {doc_hash[:19]}…); "
               "record the change through `risutools promote`")


def _check_approval(root: Path, line: int, rec: dict[str, Any], component_id: str,
                    action: str) -> Iterator[str]:
    appr = rec.get("approval")
    if not isinstance(appr, dict) or not isinstance(appr.get("file"), str):
        yield (f"transitions.ndjson line {line}: no approval record ({{file, sha256}}); every "
               "transition needs a human approval")
        return
    path = _approval_path(root, appr["file"])
    if path is None:
        yield (f"transitions.ndjson line {line}: approval file {appr['file']!r} is missing; "
               "restore it in approvals/")
        return
    try:
        data, digest = _load_approval(path)
    except OSError as exc:
        yield (f"approval {appr['file']!r}: cannot read: {exc.strerror or exc}; make it "
               "readable")
        return
    if data is None:
        yield f"approval {appr['file']!r} cannot be read: {digest}"  # (the message has its fix)
        return
    if appr.get("sha256") != digest:
        yield (f"approval {appr['file']!r} changed after it was recorded (line {line} says "
               f"{str(appr.get('sha256'))[:19]}…, file is {digest[:19]}…); restore the file as "
               "approved (approvals are never edited)")
    if data.get("component_id") != component_id:
        yield (f"approval {appr['file']!r} is for {data.get('component_id')!r}, not "
               f"{component_id!r}; name this component's own approval")
    if data.get("action") != action:
        yield (f"approval {appr['file']!r} has action {data.get('action')!r}; the transition "
               f"on line {line} needs {action!r}")
    if data.get("base_sha256") != rec.get("before_sha256"):
        yield (f"approval {appr['file']!r} approved base {str(data.get('base_sha256'))[:19]}… "
               f"but the transition on line {line} started from "
               f"{str(rec.get('before_sha256'))[:19]}…; approve the document hash the "
               "transition started from")
    reviewer = data.get("reviewer")
    if not isinstance(reviewer, str) or not reviewer.strip():
        yield f"approval {appr['file']!r} names no reviewer; add the reviewer's name"
