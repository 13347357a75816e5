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

Lines of another ``kind`` move the document's hash without a status step: ``runtime``
(``activate``/``deactivate``) and ``evidence`` (a replay verdict recorded into a document
past candidate, ``replay run --update``).  An evidence line records every value it changed
(``changes``: ``{pointer, before, after}``, only at
:data:`risutools.settings.lifecycle.EVIDENCE_POINTERS`), so the chain is checked backwards
from the document: undoing the lines after the last status step, one by one, must give the
hash each line started from, and the last step's ``after_sha256``.
"""

from __future__ import annotations

import copy
import os
import shlex
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from risutools.contract.catalogroot import find_catalog_root as find_catalog_root
from risutools.contract.records import Places, record_key
from risutools.contract.sieve import Needles, needles
from risutools.jsontypes import json_type_name
from risutools.safeio import FileRefused, read_inside, read_regular
from risutools.settings.catalog import LOG_NAME
from risutools.settings.lifecycle import (
    CONTENT_EVIDENCE,
    CONTENT_POINTERS,
    EVIDENCE_LINE,
    EVIDENCE_POINTERS,
    LOG_TEXT_FIELDS,
    PUBLISH,
    PUBLISH_LINE,
    REJECTED,
    RUNTIME_LINE,
    START,
    START_RUNTIME,
    SWITCH_ACTION,
    action_for,
    base_names,
    base_sha256,
    evidence_may_change,
)
from risutools.values import MAX_DOCUMENT_BYTES, parse_json_text

MAX_LOG_BYTES = 64 * 1024 * 1024  # transitions.ndjson is read whole

#: (catalog root, approval record) -> why the record does not count as an approval ('' when
#: it does): the signature decision, which lives with the approvals
#: (:func:`risutools.catalog.approvals.chain_check`); without one, records are not verified
ApprovalCheck = Callable[[Path, dict[str, Any]], str]


@dataclass
class CatalogLog:
    root: Path
    by_component: dict[str, list[tuple[int, dict[str, Any]]]] = field(default_factory=dict)
    problems: list[tuple[int | None, str]] = field(default_factory=list)  # (line, why)
    exists: bool = False
    # runtime switches ({"kind": "runtime", ...}, risutools activate/deactivate) and evidence
    # ({"kind": "evidence", ...}, replay run --update): not lifecycle steps, but they move the
    # document's hash on
    runtime: dict[str, list[tuple[int, dict[str, Any]]]] = field(default_factory=dict)
    size: int = 0  # bytes of the log read
    # why the log could not be read (a FIFO, a device, a link out of the catalog, past
    # MAX_LOG_BYTES): also one of ``problems``; a writer refuses to go on
    refused: FileRefused | None = None
    #: :func:`used_records` of this log, made once (a log is never changed after it is
    #: read: a writer reads it again under the lock; a review asks it for every component)
    used_memo: UsedRecords | None = field(default=None, compare=False, repr=False)
    #: where its lines' record files are (:func:`log_places`: each folder resolved once)
    places_memo: Places | None = field(default=None, compare=False, repr=False)
    #: :func:`check_chain`'s answers, when a reader that asks the same question twice sets
    #: it (a review: the log, the records and the settings do not change while it runs)
    chain_memo: dict[tuple[Any, ...], tuple[str, ...]] | None = field(
        default=None, compare=False, repr=False)
    #: the bytes of the lines that could not be read (the first :data:`MAX_BROKEN_KEPT`;
    #: ``broken_past``: the number of the first line past them), to tell which may name a
    #: component (:meth:`unreadable_for`)
    broken: list[tuple[int, bytes]] = field(default_factory=list, compare=False, repr=False)
    broken_past: int | None = field(default=None, compare=False, repr=False)

    def unreadable_for(self, component_id: str) -> str | None:
        """Why this log cannot be read as ``component_id``'s history (None: it can): the
        log refused, or a line it cannot read that may name the component (its id written
        in it, or any ``\\u`` escape, which may spell it): never an empty history."""
        for line, why in self.problems:
            if line is None:
                return why
        needle = component_id.encode("utf-8")
        whys = dict(self.problems)
        for line, raw in self.broken:
            if needle in raw or b"\\u" in raw:
                return f"transitions.ndjson line {line} may name it and cannot be read " \
                       f"({whys.get(line, 'broken')}): mend the line first"
        if self.broken_past is not None:
            return f"transitions.ndjson has more than {MAX_BROKEN_KEPT:,} lines it cannot " \
                   f"read (line {self.broken_past} on): mend them first"
        return None

    def names(self, component_id: str) -> bool:
        """Whether a line (of any kind) names ``component_id``."""
        return bool(self.by_component.get(component_id) or self.runtime.get(component_id))

    def lines_of(self, component_id: str) -> list[tuple[int, dict[str, Any]]]:
        """Every line naming ``component_id`` (steps, switches, publishes, evidence), in
        file order."""
        return sorted((*self.by_component.get(component_id, []),
                       *self.runtime.get(component_id, [])), key=lambda s: s[0])


#: the lines a log cannot read whose bytes are kept (:meth:`CatalogLog.unreadable_for`)
MAX_BROKEN_KEPT = 1_000


def read_log(root: Path, only: str | None = None) -> CatalogLog:
    """The log; with ``only``, lines that do not contain that component id, nor any ``\\u``
    escape (which may spell it), are skipped unparsed (a promotion reads one component's
    chain from a long log)."""
    log = CatalogLog(root)
    needle = only.encode("utf-8") if only is not None else None
    path = root / LOG_NAME
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
        if not raw.strip() or (needle is not None and needle not in raw
                               and b"\\u" not in raw):
            continue
        why = None
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            why = "transition line is not UTF-8; restore the line as written"
        else:
            rec, problem = parse_json_text(text, line=i)
            if problem is not None:
                why = f"transition line is broken: {problem.message}"
            elif not isinstance(rec, dict) or not isinstance(rec.get("component_id"), str):
                why = "transition line is not an object with a component_id; restore the " \
                      "line as written"
            elif (bad := _line_types(rec)) is not None:
                why = f"transition line is broken: {bad}; restore the line as written"
        if why is not None:
            _broken(log, i, raw, why)
            continue
        if rec.get("kind") in (RUNTIME_LINE, EVIDENCE_LINE, PUBLISH_LINE):
            log.runtime.setdefault(rec["component_id"], []).append((i, rec))
            continue
        log.by_component.setdefault(rec["component_id"], []).append((i, rec))
    return log


def _broken(log: CatalogLog, line: int, raw: bytes, why: str) -> None:
    """A line the log cannot read: a problem, its bytes kept (the first
    :data:`MAX_BROKEN_KEPT`)."""
    log.problems.append((line, why))
    if len(log.broken) < MAX_BROKEN_KEPT:
        log.broken.append((line, raw))
    elif log.broken_past is None:
        log.broken_past = line


#: the text fields of a log line that may be null (a runtime switch from or to no state)
_NULL_OK = ("from_runtime", "to_runtime")


def _line_types(rec: dict[str, Any]) -> str | None:
    """Why a log line's fields are not of their types (None: they are): the text fields
    (:data:`LOG_TEXT_FIELDS`; the runtime ones may be null), and ``approval`` a mapping of
    a text ``file`` and ``sha256``."""
    for key in LOG_TEXT_FIELDS:
        v = rec.get(key, "")
        if not isinstance(v, str) and not (v is None and key in _NULL_OK):
            return f"{key} is {json_type_name(v)}, not text"
    appr = rec.get("approval")
    if "approval" in rec and not (isinstance(appr, dict) and isinstance(appr.get("file"), str)
                                  and isinstance(appr.get("sha256"), str)):
        return "approval is not a mapping of a file name and its sha256"
    return None


def check_chain(log: CatalogLog, component_id: str, status: str, doc_hash: str,
                doc: Any = None, *, unrecorded_ok: bool = False,
                counts: ApprovalCheck | None = None,
                names: frozenset[str] | None = None) -> Iterator[str]:
    """Messages (empty = the chain is complete and backed by approvals).

    ``doc_hash`` is the document's base hash (:func:`lifecycle.base_sha256`); lines written
    before the base hash left the runtime fields out name the whole-document hash, which is
    taken where a line meets the document (:func:`lifecycle.base_names`), and a line that
    continues such a chain names the hash it ended at in ``continues``.
    ``doc`` (the document itself) lets the evidence lines after the last step be checked by
    undoing them; ``unrecorded_ok`` leaves out the document's hash (a rejection records a
    change no line has: see the history gate); ``counts`` decides whether each step's
    approval record counts (its signature).
    ``names``: :func:`lifecycle.base_names` of ``doc``, when the caller knows them.  With
    ``log.chain_memo`` set (a review: MC305 and the board's history gate ask the same), the
    messages for the same question are found once."""
    if doc is not None and names is None:
        names = base_names(doc)
    memo = log.chain_memo
    if memo is None:
        return _chain(log, component_id, status, doc_hash, doc, unrecorded_ok, counts, names)
    key = (component_id, status, doc_hash, names, unrecorded_ok, counts)
    got = memo.get(key)
    if got is None:
        got = memo[key] = tuple(_chain(log, component_id, status, doc_hash, doc,
                                       unrecorded_ok, counts, names))
    return iter(got)


def _chain(log: CatalogLog, component_id: str, status: str, doc_hash: str, doc: Any,
           unrecorded_ok: bool, counts: ApprovalCheck | None,
           names: frozenset[str] | None) -> Iterator[str]:
    """The messages of :func:`check_chain` (``names``: ``doc``'s, when it is given)."""
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
    switches = [(ln, r) for ln, r in log.runtime.get(component_id, [])
                if r.get("kind") in (RUNTIME_LINE, PUBLISH_LINE)]
    back = {r.get("after_sha256"): r.get("before_sha256") for _, r in switches
            if r.get("kind") == RUNTIME_LINE}
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
        yield from _check_approval(log_places(log), line, rec, component_id,
                                   action_for(frm, to) or "",
                                   counts, _switched_from(rec.get("before_sha256"), back)
                                   | _switched_from(rec.get("continues"), back))
        expected_from = to
    for line, rec in switches:
        yield from _check_switch(log_places(log), line, rec, component_id, counts)
    yield from _used_twice(log, component_id)
    if not unrecorded_ok:  # (a rejection's way out may start from a change no line has)
        yield from _out_of_order(log, component_id)
    last_line, last = steps[-1]
    if last.get("to_status") != status:
        yield (f"the last recorded transition (line {last_line}) ends at "
               f"{last.get('to_status')!r} but review_status is {status!r} (changed without a "
               "recorded transition); restore it as that line records it")
    elif not unrecorded_ok:
        tail = [s for s in log.runtime.get(component_id, []) if s[0] > last_line]
        yield from _check_tail(component_id, status, (last_line, last), tail, doc, doc_hash,
                               names)
        yield from _check_runtime(component_id, switches, doc)


def record_name(rec: dict[str, Any]) -> str | None:
    """The approval record a log line used, without ``approvals/`` (None: it names none)."""
    appr = rec.get("approval")
    if isinstance(appr, dict) and isinstance(appr.get("file"), str):
        return str(appr["file"]).removeprefix("approvals/")
    return None


def _line_key(places: Places, rec: dict[str, Any]) -> str | None:
    """:func:`record_key` of the record a line names, as read now (None: it names none, or
    it cannot be read)."""
    appr = rec.get("approval")
    if not (isinstance(appr, dict) and isinstance(appr.get("file"), str)):
        return None
    try:
        got = places.record(appr["file"])
    except OSError:
        return None
    return got.key if got is not None else None


@dataclass(frozen=True)
class UsedRecords:
    """The approval records a log's lines used (:func:`used_records`, the one way to make
    one): whether a record is current is never decided without them
    (:func:`risutools.catalog.approvals.standing` takes them, with no default)."""

    keys: frozenset[str]

    def __contains__(self, key: object) -> bool:
        return key in self.keys


def used_records(log: CatalogLog) -> UsedRecords:
    """The approval records the log's lines used (history: a record approves one step):
    each by the name the line gives it (without ``approvals/``) and by its identity
    (:func:`record_key`), so another file holding the same record is used too.  Made once
    a log (``CatalogLog.used_memo``): every record the log names is read once a run, not
    once a component asked about (a review of 2,000 components read each of 4,000 records
    2,000 times)."""
    if log.used_memo is None:
        log.used_memo = _used(log, None)
    return log.used_memo


def used_among(log: CatalogLog, records: list[dict[str, Any]]) -> UsedRecords:
    """:func:`used_records` as far as ``records`` go (:func:`~risutools.catalog.approvals.
    standing` answers the same for each of them): every name the lines give, and the
    identity of each line's record whose bytes may hold one of their ``base_sha256``
    (a line's record with the identity of one of them holds the same base hash).  Each
    file a line names is read, and parsed only when it may be one of them (every one when
    one of them has no base hash that is a plain string: :mod:`risutools.contract.sieve`);
    the whole answer when the log has it already.  A packet asks this of its component's
    few records, in a log of thousands of lines."""
    if log.used_memo is not None:
        return log.used_memo
    bases = [r.get("base_sha256") for r in records]
    found = needles(b for b in bases if isinstance(b, str)) \
        if all(isinstance(b, str) for b in bases) else None
    return _used(log, found)


def _used(log: CatalogLog, found: Needles | None) -> UsedRecords:
    """The names the log's lines give their records, and the identities of those records
    whose bytes may hold what ``found`` looks for (None: of every one)."""
    places = log_places(log)
    out: set[str] = set()
    for lines in (*log.by_component.values(), *log.runtime.values()):
        for _, rec in lines:
            if (name := record_name(rec)) is None:
                continue
            out.add(name)
            if found is not None and not _may_be(places, rec, found):
                continue
            if (key := _line_key(places, rec)) is not None:
                out.add(key)
    return UsedRecords(frozenset(out))


def _may_be(places: Places, rec: dict[str, Any], found: Needles) -> bool:
    """Whether the bytes of the record file the line ``rec`` names may hold what ``found``
    looks for (False: there is none, or it cannot be read: :func:`_line_key` finds no
    record there)."""
    got = places.find(rec["approval"]["file"])
    if got is None:
        return False
    path, st = got
    try:
        data = read_regular(path, MAX_DOCUMENT_BYTES, seen=st)
    except (FileRefused, OSError):
        return False
    return found.may_hold(data, "json" if path.endswith(".json") else "yaml")


def record_used(log: CatalogLog, record: dict[str, Any]) -> bool:
    """Whether a line of ``log`` used ``record`` (what ``record_key(record) in
    used_records(log)`` answers): a line naming it by its identity, or naming a file that
    holds it now.  Each file a line names is read, but parsed only when its bytes may hold
    the record's ``base_sha256`` (:mod:`risutools.contract.sieve`): ``approve`` asks this of
    the one record it writes, in a log of thousands of lines."""
    key = record_key(record)
    if log.used_memo is not None:
        return key in log.used_memo
    base = record.get("base_sha256")
    found = needles((base,)) if isinstance(base, str) else None
    places = Places(log.root)
    for lines in (*log.by_component.values(), *log.runtime.values()):
        for _, rec in lines:
            if (name := record_name(rec)) is None:
                continue
            if name == key or _holds(places, rec, key, found):
                return True
    return False


def _holds(places: Places, rec: dict[str, Any], key: str, found: Needles | None) -> bool:
    """Whether the record file the line ``rec`` names is, as read now, the record whose
    identity is ``key`` (:func:`_line_key`'s reading; ``found``: what its bytes must
    hold for that, None: parsed whatever they hold)."""
    if found is not None and not _may_be(places, rec, found):
        return False
    return _line_key(places, rec) == key


def log_places(log: CatalogLog) -> Places:
    """The log's :class:`Places` (made once a log: a review checks every line's record,
    some twice; each check resolved the record's folder again)."""
    if log.places_memo is None:
        log.places_memo = Places(log.root)
    return log.places_memo


def _used_twice(log: CatalogLog, component_id: str) -> Iterator[str]:
    """A line whose approval record an earlier line already used: a record approves one
    step (a switch leaves the base hash as it was, so the hash alone cannot tell).  A
    record is the same whatever file holds it (:func:`record_key`): a copy, a link or
    another spelling of its path is the record an earlier line used."""
    first: dict[str, tuple[int, str]] = {}
    for line, rec in log.lines_of(component_id):
        name = record_name(rec)
        if name is None:
            continue
        held = _line_key(log_places(log), rec)
        for key in (name, held):
            if key is None:
                continue
            if key in first:
                was_line, was = first[key]
                same = "" if was == name else f" (the same record as {was!r})"
                yield (f"transitions.ndjson line {line}: approval {name!r}{same} was already "
                       f"used by line {was_line}; a record approves one step: revert the "
                       "commit that added the line, and approve the step again")
                return
        first[name] = (line, name)
        if held is not None:
            first[held] = (line, name)


def _out_of_order(log: CatalogLog, component_id: str) -> Iterator[str]:
    """A line that does not start where the component's previous line ended, in file order
    and of every kind (steps, switches, publishes, evidence): lines moved about, removed from
    between or edited (the review's RV204 walks the same).  A rejection records the
    document as it is, a change no line had, and the lines of its way out (a switch off
    after a hand edit) may start from that change: a rejected component's log is its
    status chain's alone (rejected is the end: nothing moves it on)."""
    lines = log.lines_of(component_id)
    if any(rec.get("to_status") == REJECTED for _, rec in lines):
        return
    prev: tuple[int, dict[str, Any]] | None = None
    for line, rec in lines:
        if prev is not None and prev[1].get("after_sha256") not in (rec.get("before_sha256"),
                                                                    rec.get("continues")):
            yield (f"transitions.ndjson line {line} starts from "
                   f"{str(rec.get('before_sha256'))[:19]}… but line {prev[0]}, the previous "
                   f"line for {component_id}, ended at {str(prev[1].get('after_sha256'))[:19]}…;"
                   " lines were moved, removed or edited: restore the log from version control "
                   "(it is append-only)")
            return
        prev = (line, rec)


def candidate_lines(log: CatalogLog, component_id: str, doc: Any) -> str | None:
    """Why a candidate's log is not a candidate's (None: no line names it).  No step leads
    back to candidate, so any line naming the component (a status step, a switch, a publish,
    evidence) says it moved on: the document was put back by hand, the line was written by
    hand, or the command that wrote it was stopped before the document (re-run it)."""
    lines = log.lines_of(component_id)
    if not lines:
        return None
    ln, rec = lines[-1]
    said = rec.get("to_status") or rec.get("to_runtime") or rec.get("kind")
    if doc is None:
        return (f"review_status is {START!r} but transitions.ndjson line {ln} moved it to "
                f"{said!r} (no step leads back to candidate): re-run the command that wrote "
                "the line if it was stopped before the document; else restore the document, "
                "or the log, from version control (a line is never written by hand)")
    if len(lines) == 1 and unwritten(rec, doc) and rec.get("from_status") == START:
        return (f"review_status is {START!r} but transitions.ndjson line {ln} moved it to "
                f"{said!r} and the document was not written (the command was stopped): "
                "re-run the same command to complete it")
    return (f"review_status is {START!r} but transitions.ndjson line {ln} moved it to "
            f"{said!r} (no step leads back to candidate): restore the document, or the log, "
            "from version control; a line is never written by hand")


def runtime_of(doc: Any) -> Any:
    prov = doc.get("provenance") if isinstance(doc, dict) else None
    return prov.get("runtime_status") if isinstance(prov, dict) else None


def _check_runtime(cid: str, switches: list[tuple[int, dict[str, Any]]], doc: Any
                   ) -> Iterator[str]:
    """The base hash leaves the runtime fields out, so the log checks them apart: a document
    past candidate is in the runtime state its last runtime line switched it to (none: the
    state every component starts in)."""
    if not isinstance(doc, dict):
        return
    lines = [(ln, r) for ln, r in switches if r.get("kind") == RUNTIME_LINE]
    want = lines[-1][1].get("to_runtime") if lines else START_RUNTIME
    have = runtime_of(doc)
    if have == want:
        return
    said = f"transitions.ndjson line {lines[-1][0]} switched it to {want!r}" if lines else \
        f"transitions.ndjson records no switch (it starts {START_RUNTIME!r})"
    yield (f"runtime_status is {have!r} but {said}; only `risutools activate`/`deactivate` "
           f"switch a component: restore it from version control (or re-run the switch "
           "that was interrupted)")


def unwritten(rec: dict[str, Any], doc: Any, names: frozenset[str] | None = None) -> bool:
    """Whether ``rec``, a component's last log line, records a change ``doc`` does not have:
    the command wrote the line (write-ahead) and was stopped before the document.  A
    runtime line leaves the base hash as it is: it is unwritten while the document is not
    in the state it switched to.  ``names``: :func:`lifecycle.base_names` of ``doc``, when
    the caller knows them."""
    if names is None:
        names = base_names(doc)
    if rec.get("before_sha256") not in names:
        return False
    if rec.get("kind") == RUNTIME_LINE:
        return bool(runtime_of(doc) != rec.get("to_runtime"))
    return rec.get("after_sha256") not in names


def _switched_from(h: Any, back: dict[Any, Any]) -> set[Any]:
    """``h`` and the hashes runtime switches alone led to it from (the same reviewed
    content in the other runtime state: an approval of one of them still holds)."""
    out = {h}
    while h in back and back[h] not in out:
        h = back[h]
        out.add(h)
    return out


def _check_switch(places: Places, line: int, rec: dict[str, Any], component_id: str,
                  counts: ApprovalCheck | None) -> Iterator[str]:
    """A runtime switch: its approval (when it names one) is checked like a step's; without
    one, the switch counts only where an unsigned record would (signatures not required)."""
    action = PUBLISH if rec.get("kind") == PUBLISH_LINE else \
        SWITCH_ACTION.get(str(rec.get("to_runtime")), "")
    if action == PUBLISH and not isinstance(rec.get("approval"), dict):
        yield (f"transitions.ndjson line {line}: publishing with no approval; publish with "
               "`risutools approve --action publish` and `risutools publish`, or revert the "
               "commit that added the line")
        return
    if isinstance(rec.get("approval"), dict):
        yield from _check_approval(places, line, rec, component_id, action, counts)
    elif counts is not None and (why := counts(places.root, {})):
        yield (f"transitions.ndjson line {line}: a runtime switch with no approval, and an "
               f"unsigned record does not count ({why}); switch with a signed {action!r} "
               "approval (`risutools approve --action "
               f"{action or 'activate'} --sign KEY`), or revert the commit that added the line")


def _changed_after(cid: str, status: str, line: int, rec: dict[str, Any], now: str) -> str:
    cid = shlex.quote(cid)  # (the commands as a shell reads them: a person copies them)
    reject = "" if action_for(status, REJECTED) is None else (
        f", or reject it: `risutools approve {cid} --action reject --reviewer NAME`, then "
        f"`risutools promote {cid} --to rejected`")
    return (f"the document changed after its last recorded transition (line {line}: "
            f"after_sha256 {str(rec.get('after_sha256'))[:19]}…, now {now[:19]}…); restore "
            f"it from version control as that line records it{reject}")


def _check_tail(cid: str, status: str, step: tuple[int, dict[str, Any]],
                tail: list[tuple[int, dict[str, Any]]], doc: Any, doc_hash: str,
                doc_names: frozenset[str] | None) -> Iterator[str]:
    """The lines after the last status step (runtime switches, evidence), walked back from
    the document: each must end at the hash the walk reached, and undoing it must give the
    hash it started from; the step must end where the first of them started
    (``doc_names``: :func:`lifecycle.base_names` of ``doc``)."""
    h, d = doc_hash, doc
    names = {h} if d is None or doc_names is None else {h, *doc_names}
    for ln, rec in reversed(tail):
        if rec.get("after_sha256") not in names:
            yield _changed_after(cid, status, ln, rec, h)
            return
        before = rec.get("before_sha256")
        d, why = undo_line(d, rec, status)
        if why:
            yield f"transitions.ndjson line {ln}: {why}"
            return
        dn = base_names(d) if d is not None else frozenset()
        if d is not None and rec.get("kind") == EVIDENCE_LINE and before not in dn:
            yield (f"transitions.ndjson line {ln}: undoing the evidence it records gives "
                   f"{base_sha256(d)[:19]}…, not its before_sha256 {str(before)[:19]}…; the "
                   "document changed in a way no line records: restore it from version "
                   "control")
            return
        if d is not None and before not in dn:
            d = None  # a runtime line that cannot be undone exactly: trust its hash
        h = str(before)
        names = {h, *(dn if d is not None else ())} | (
            {rec["continues"]} if isinstance(rec.get("continues"), str) else set())
    ln, rec = step
    if rec.get("after_sha256") in names:
        return
    if not tail:
        yield _changed_after(cid, status, ln, rec, h)
    else:
        yield (f"transitions.ndjson line {tail[0][0]} starts from {h[:19]}… but the transition "
               f"on line {ln} ended at {str(rec.get('after_sha256'))[:19]}…; a change between "
               "them was not recorded: restore the document from version control")


_ABSENT = object()


def undo_line(doc: Any, rec: dict[str, Any], status: str = "") -> tuple[Any, str]:
    """The document before the non-status line ``rec`` (``None`` when it cannot be rebuilt:
    no document, or a runtime switch), or a reason the line is not a change evidence may
    make to a component in ``status`` (:func:`lifecycle.evidence_may_change`)."""
    if doc is None or not isinstance(doc, dict):
        return None, ""
    if rec.get("kind") in (RUNTIME_LINE, PUBLISH_LINE):
        field, frm = ("runtime_status", rec.get("from_runtime")) \
            if rec.get("kind") == RUNTIME_LINE else ("publishable", rec.get("from_publishable"))
        prov = doc.get("provenance")
        if not isinstance(prov, dict) or not isinstance(frm, (str, bool)):
            return None, ""
        return {**doc, "provenance": {**prov, field: frm}}, ""
    changes = rec.get("changes")
    if not isinstance(changes, list) or not changes:
        return None, "an evidence line names no changes; restore the line as written"
    new = copy.deepcopy(doc)
    for ch in changes:
        ptr = ch.get("pointer") if isinstance(ch, dict) else None
        if not isinstance(ch, dict) or not isinstance(ptr, str) or \
                not evidence_may_change(ptr, status):
            content = f", and while {' or '.join(CONTENT_EVIDENCE)}, what a projection " \
                f"writes under {', '.join(CONTENT_POINTERS)} (never a lifecycle field)"
            return None, (f"an evidence line changes {ptr!r}; evidence changes only "
                          f"{', '.join(EVIDENCE_POINTERS)}{content}")
        *path, key = str(ptr).split("/")[1:]
        parent: Any = new
        for k in path:
            parent = parent.get(k) if isinstance(parent, dict) else None
        if not isinstance(parent, dict):
            return None, f"the document has no {ptr} for the evidence line to have changed"
        if parent.get(key, _ABSENT) != ch.get("after", _ABSENT):
            return None, (f"{ptr} is not the value the evidence line recorded; the document "
                          "changed after it: restore it from version control")
        if "before" in ch:
            parent[key] = ch["before"]
        else:
            parent.pop(key, None)
    return new, ""


def _check_approval(places: Places, line: int, rec: dict[str, Any], component_id: str,
                    action: str, counts: ApprovalCheck | None = None,
                    bases: set[Any] | None = None) -> Iterator[str]:
    appr = rec.get("approval")
    if not isinstance(appr, dict) or not isinstance(appr.get("file"), str):
        yield (f"transitions.ndjson line {line}: no approval record ({{file, sha256}}); every "
               "transition needs a human approval")
        return
    try:
        got = places.record(appr["file"])
    except OSError as exc:
        yield (f"approval {appr['file']!r}: cannot read: {exc.strerror or exc}; make it "
               "readable")
        return
    if got is None:
        yield (f"transitions.ndjson line {line}: approval file {appr['file']!r} is missing; "
               "restore it in approvals/")
        return
    data, digest = got.doc, got.said
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
    if data.get("base_sha256") not in (bases or {rec.get("before_sha256")}):
        yield (f"approval {appr['file']!r} approved base {str(data.get('base_sha256'))[:19]}… "
               f"but the transition on line {line} started from "
               f"{str(rec.get('before_sha256'))[:19]}…; approve the document hash the "
               "transition started from")
    reviewer = data.get("reviewer")
    if not isinstance(reviewer, str) or not reviewer.strip():
        yield f"approval {appr['file']!r} names no reviewer; add the reviewer's name"
    elif counts is not None and (why := counts(places.root, data)):
        yield (f"approval {appr['file']!r} (line {line}) does not count as an approval: {why}; "
               "the transition was not made by a reviewer the catalog trusts: revert the "
               "commit that added the line and the record")
