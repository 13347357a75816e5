"""Review packets: the two context shapes (lanes) of seed 001, as JSON + Markdown.

- ``light``: the document, the instruction, the permission facts (capabilities,
  policy fields, contract findings with their pointers) and the base hash;
  nothing else of the catalog.  When the catalog shows the light packet cannot
  be decided alone (an unmet requirement, a conflict, a shared source, an id
  collision, a stale approval) it is still written, with ``needs_full_context``
  listing each reason; it never widens itself.
- ``full``: the same plus the relations that bear on the component: providers
  of what it requires, components it conflicts with or shares a source with,
  other documents with its id, its transition history, its notes and replay
  reports.  An escalation is a new full packet (its own task id) that names
  the light one (``--escalates TASK``).

The task id is derived from what the packet is about (component, base hash,
lane, instruction, escalated task), so the same inputs give the same packet,
byte for byte.  Nothing names the model or person who reads it: the lane picks
the context shape only.  Strings the active-code detector flags (MC500) are
withheld from the document copy: a packet never carries code.
"""

from __future__ import annotations

import copy
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from risutools.canonical import canonical, indented_text
from risutools.catalog.approvals import (
    CURRENT,
    STALE,
    Approval,
    load_approvals,
    standing,
)
from risutools.catalog.catalog import Catalog, Entry
from risutools.catalog.graph import Graph, whole_graph
from risutools.catalog.packet_markdown import render_packet_markdown
from risutools.catalog.review_interactions import (
    Interactions,
    interaction_reasons,
    interactions,
    relations_of,
    risk_of,
)
from risutools.catalog.writes import write_new_file
from risutools.contract.activecode import find_active_code
from risutools.contract.loaders import load_bytes
from risutools.contract.notesfind import document_keys, find_notes
from risutools.contract.rules import mc500
from risutools.contract.transitions import CatalogLog, UsedRecords, used_among, used_records
from risutools.contract.validate import validate_document
from risutools.errors import Code, RisuError, UsageError, WriteConflict
from risutools.fsio import fsync_directory
from risutools.pathnames import id_file_stem, show_name
from risutools.printable import json_text
from risutools.safeio import FileRefused, is_regular, read_inside, read_regular
from risutools.settings import lifecycle
from risutools.settings.catalog import MAX_NOTES_BYTES
from risutools.values import MAX_DOCUMENT_BYTES

PACKET_FORMAT = "review-packet-v1"
HANDOFF_FORMAT = "handoff-v1"
LANES = ("light", "full")
POLICY_FIELDS = ("review_status", "runtime_status", "availability_verdict", "publishable",
                 "active_code_policy", "static_analysis_only", "source_kind")
WITHHELD = "[withheld: looks like active code (MC500); see the source]"
#: the key a member is shown under when its key looks like active code
WITHHELD_KEY = "[withheld key: looks like active code (MC500)]"


def instruction_for(entry: Entry) -> tuple[str | None, str | None, str]:
    step = lifecycle.next_step(entry.review_status)
    if step is None:
        return None, None, (f"no lifecycle step after {entry.review_status or '(none)'}; "
                            "read only")
    return step.action, step.to, step.decision


def _task_id(*parts: Any) -> str:
    return "task-" + hashlib.sha256(canonical(list(parts))).hexdigest()[:16]


def _withhold_code(doc: dict[str, Any], pointers: list[str]
                   ) -> tuple[dict[str, Any], dict[str, str]]:
    """A copy of ``doc`` with the value at each pointer withheld, and a member whose key
    looks like active code shown under :data:`WITHHELD_KEY` (MC500 reads keys too); and
    the pointers so renamed (old -> new), for the findings that name them."""
    out = copy.deepcopy(doc)
    renamed: dict[str, str] = {}
    for ptr in sorted(set(pointers), key=len):  # (an object withheld whole first: a key
        keys = [k.replace("~1", "/").replace("~0", "~")  # too long for its pointer names
                for k in ptr.split("/")[1:]]  # the object holding it)
        cur: Any = out
        for k in keys[:-1]:
            cur = cur[int(k)] if isinstance(cur, list) and k.isdigit() and int(k) < len(
                cur) else cur.get(k) if isinstance(cur, dict) else None
            if cur is None:
                break
        else:
            last = keys[-1] if keys else None
            if isinstance(cur, list) and last is not None and last.isdigit():
                cur[int(last)] = WITHHELD
            elif isinstance(cur, dict) and last is not None and last in cur:
                cur[last] = WITHHELD
                if find_active_code(last) is not None:  # (the key itself: MC500 reads keys)
                    key = _withheld_key(cur)
                    cur[key] = cur.pop(last)
                    renamed[ptr] = ptr.rsplit("/", 1)[0] + "/" + key
                else:
                    renamed[ptr] = ptr  # (what is under it: withheld with it)
    return out, renamed


def _shown_pointer(pointer: str | None, renamed: dict[str, str]) -> str | None:
    """``pointer`` through the members :func:`_withhold_code` renamed or withheld: one
    inside a value withheld names that value (what is under it is not shown)."""
    if pointer is None or not renamed:
        return pointer
    for old, new in renamed.items():
        if pointer == old or pointer.startswith(old + "/"):
            return new
    return pointer


def _withheld_key(obj: dict[str, Any]) -> str:
    """A key for a member whose key looks like active code, none of ``obj``'s."""
    n, key = 1, WITHHELD_KEY
    while key in obj:
        n += 1
        key = f"{WITHHELD_KEY} {n}"
    return key


@dataclass
class Relations:
    """What the catalog says about one component (used for the reasons and the full lane)."""

    unmet: list[str]
    conflicts: list[tuple[Entry, str]]
    shared_source: list[Entry]
    same_id: list[Entry]
    stale_approvals: list[Approval]
    #: each conflict's `` (active by transitions.ndjson line N, ...)`` when the log makes
    #: the other live where its document does not (:meth:`Graph.by_log`), else ""
    by_log: list[str]
    #: why the conflicts cannot be told (:meth:`Graph.cannot_tell`: what gate G7 fails
    #: with), None when they can
    blind: str | None


def relations(entry: Entry, graph: Graph, approvals: list[Approval],
              used: UsedRecords) -> Relations:
    mine = [a for a in approvals if a.field("component_id") == entry.component_id]
    base = entry.base_sha256
    current = {a.field("action") for a in mine if standing(a, base, used) == CURRENT}
    stale = [a for a in mine if standing(a, base, used) == STALE
             and a.field("action") not in current]
    conflicts = graph.conflicts_with(entry, "live")
    return Relations(graph.unmet(entry), conflicts, _shared_source(entry, graph),
                     _same_id(entry, graph), stale, [graph.by_log(o) for o, _ in conflicts],
                     graph.cannot_tell(entry, "live"))


def _first_source(e: Entry) -> Any:
    """The digest of the document's first source and the part of it the component comes
    from (``source_refs[0]``: a ``.charx``'s card and its module are two parts of one file,
    not a shared source), or None."""
    refs = e.get("provenance", "source_refs")
    if not (isinstance(refs, list) and refs and isinstance(refs[0], dict)):
        return None
    sha, part = refs[0].get("sha256"), refs[0].get("source_version")
    member = part.rsplit("!", 1)[-1] if isinstance(part, str) else ""
    return (sha, member) if isinstance(sha, str) else None


def _shared_source(entry: Entry, graph: Graph) -> list[Entry]:
    """Other components whose first source is the entry's."""
    src = _first_source(entry)
    if src is None:
        return []
    return [o for o in graph.grouped(_first_source).get(src, ())
            if o is not entry and o.component_id != entry.component_id]


def _component_id(e: Entry) -> str:
    return e.component_id


def _same_id(entry: Entry, graph: Graph) -> list[Entry]:
    """Other documents with the entry's component_id."""
    return [o for o in graph.grouped(_component_id).get(entry.component_id, ())
            if not (o.path == entry.path and o.line == entry.line)]


def reasons(rel: Relations) -> list[dict[str, str]]:
    out = []
    for c in rel.unmet:
        out.append({"reason": "unmet-requirement",
                    "detail": f"requires {c!r}; no active or promoted component provides it"})
    for (o, c), said in zip(rel.conflicts, rel.by_log, strict=True):
        out.append({"reason": "conflict", "detail": f"conflicts with {o.component_id}{said} "
                    f"over {c!r}"})
    if rel.blind is not None:
        out.append({"reason": "cannot-tell", "detail": rel.blind})
    for o in rel.shared_source:
        out.append({"reason": "shared-source",
                    "detail": f"{o.component_id} comes from the same source file"})
    for o in rel.same_id:
        out.append({"reason": "id-collision",
                    "detail": f"another document has this component_id ({o.where()})"})
    for a in rel.stale_approvals:
        out.append({"reason": "stale-approval", "detail": (
            f"{a.file} ({a.field('action')}) approved base {a.field('base_sha256')[:19]}…, not "
            "the current document")})
    return out


#: a packet file at most (a full packet: one document, at most ``MAX_DOCUMENT_BYTES``, and its
#: relations, each list at most :data:`MAX_RELATIONS_EACH` items): what the writer writes
#: and ``approve --packet`` reads (``binding``)
MAX_PACKET_BYTES = 32 * 1024 * 1024
#: items of one relation a full packet lists (a transition history: its last ones), the
#: count of the rest in ``relations.omitted``: 60,000 log lines of one component made a
#: 38.7 MB packet that ``approve --packet`` then refused
MAX_RELATIONS_EACH = 200

#: reasons of one kind a light packet lists (then one line counts the rest): a packet is
#: read by a person, and N components of one source each listing the N-1 others made a
#: queue N^2 (2,000 of them: 33 s, 739 MB written)
MAX_REASONS_EACH = 20


def capped(found: list[dict[str, str]]) -> list[dict[str, str]]:
    """``found`` with at most :data:`MAX_REASONS_EACH` reasons of each kind, in order, each
    kind past it closed by one reason of that kind saying how many more there are."""
    out: list[dict[str, str]] = []
    seen: dict[str, int] = {}
    for r in found:
        n = seen[r["reason"]] = seen.get(r["reason"], 0) + 1
        if n <= MAX_REASONS_EACH:
            out.append(r)
    for kind, n in seen.items():
        if n > MAX_REASONS_EACH:
            at = max(i for i, r in enumerate(out) if r["reason"] == kind) + 1
            out.insert(at, {"reason": kind, "detail": f"and {n - MAX_REASONS_EACH} more of "
                            "this kind, not listed (the full lane and `risutools review` "
                            "name them all)"})
    return out


def _brief(e: Entry) -> dict[str, Any]:
    return {"component_id": e.component_id, "component_version": e.version,
            "review_status": e.review_status, "runtime_status": e.runtime_status,
            "file": e.where(), "base_sha256": e.base_sha256}


def build_packet(cat: Catalog, entry: Entry, lane: str, *, actor: str = "",
                 instruction: str | None = None, escalates: str | None = None,
                 graph: Graph | None = None, approvals: list[Approval] | None = None,
                 log: CatalogLog | None = None, inter: Interactions | None = None,
                 used: UsedRecords | None = None) -> dict[str, Any]:
    """A packet of ``entry`` (the catalog's graph, approval records, log, interactions and
    the records its lines used given by a caller that makes many: a queue); alone, only
    the records that may be its component's are parsed, and of the log's only those that
    may be one of them (:func:`~risutools.contract.transitions.used_among`)."""
    if lane not in LANES:
        raise UsageError("--lane", f"{lane!r} is not one of {', '.join(LANES)}")
    log = cat.log() if log is None else log
    graph = _graph(cat, log) if graph is None else graph
    inter = interactions(str(cat.root), graph.entries) if inter is None else inter
    approvals, used = _records(cat, entry, approvals, log, used)
    action, to, default_instr = instruction_for(entry)
    instr = instruction or default_instr
    findings = validate_document(entry.doc, config=cat.config)
    code_ptrs = [f.pointer for f in findings if f.rule == mc500.id]
    shown, renamed = _withhold_code(entry.doc, code_ptrs)
    prov = entry.get("provenance")
    policy = {k: prov.get(k) for k in POLICY_FIELDS if isinstance(prov, dict) and k in prov}
    policy["replay_status"] = entry.get("projection", "replay_status")
    rel = relations(entry, graph, approvals, used)
    task = {"id": _task_id(entry.component_id, entry.base_sha256, lane, instr, escalates),
            "instruction": instr, "action": action, "to_status": to}
    if escalates:
        task["escalates"] = escalates
    packet: dict[str, Any] = {
        "packet": PACKET_FORMAT, "task": task, "actor": actor, "lane": lane,
        "base_sha256": entry.base_sha256,
        "component": {"component_id": entry.component_id,
                      "component_version": entry.version, "file": cat.rel(entry.path),
                      "line": entry.line},
        "document": shown,
        "permission_facts": {
            "capabilities": {k: entry.caps(k) for k in ("provides", "requires", "conflicts")},
            "policy": policy,
            "findings": [{"rule": f.rule, "severity": f.severity,
                          "pointer": _shown_pointer(f.pointer, renamed),
                          "message": f.message} for f in findings],
            "risk": risk_of(inter, entry.component_id),
        },
        "needs_full_context": capped(reasons(rel) + interaction_reasons(inter,
                                                                      entry.component_id))
        if lane == "light" else [],
    }
    if lane == "full":
        packet["relations"] = _full_relations(cat, entry, graph, rel, log, approvals, used)
        packet["relations"].update(relations_of(inter, entry.component_id))
        _cap_relations(packet["relations"])
    return packet


#: the relations that are lists grouped by a name (a requirement's providers, a family's
#: members ...): each list capped as the others
_GROUPED = ("providers_of_requirements", "family")


def _cap_relations(relations: dict[str, Any]) -> None:
    """Each list of ``relations``, and each list one level inside them (a requirement's
    providers, a family's members), at most :data:`MAX_RELATIONS_EACH` items (the transition
    history: its last ones, the newest), and at most as many requirements; what was left
    out counted in ``omitted`` by name (present only when something was)."""
    omitted: dict[str, int] = {}

    def cap(name: str, items: list[Any], newest: bool = False) -> list[Any]:
        if len(items) <= MAX_RELATIONS_EACH:
            return items
        omitted[name] = len(items) - MAX_RELATIONS_EACH
        return items[-MAX_RELATIONS_EACH:] if newest else items[:MAX_RELATIONS_EACH]

    for name, value in list(relations.items()):
        if isinstance(value, list):
            relations[name] = cap(name, value, newest=name == "transition_history")
        elif isinstance(value, dict) and name in _GROUPED:  # (notes are the curator's: whole)
            relations[name] = {k: cap(f"{name}/{k}", v) if isinstance(v, list) else v
                               for k, v in value.items()}
            if name == "providers_of_requirements" and len(value) > MAX_RELATIONS_EACH:
                kept = sorted(value)[:MAX_RELATIONS_EACH]
                omitted[name] = len(value) - len(kept)
                relations[name] = {c: relations[name][c] for c in kept}
    if omitted:
        relations["omitted"] = dict(sorted(omitted.items()))


def _records(cat: Catalog, entry: Entry, approvals: list[Approval] | None, log: CatalogLog,
             used: UsedRecords | None) -> tuple[list[Approval], UsedRecords]:
    """The approval records a packet reads and the log's used records, as given, or found:
    the records that may be the component's (the others name another component_id), and of
    the log's records only those that may be one of them."""
    if approvals is None:
        approvals = load_approvals(cat, holding=entry.component_id)
    if used is None:
        used = used_among(log, [a.record for a in approvals if a.record is not None
                                and a.field("component_id") == entry.component_id])
    return approvals, used


def _graph(cat: Catalog, log: CatalogLog) -> Graph:
    """The graph a packet's relations come from: the one the review's gates judge by
    (:func:`~risutools.catalog.graph.whole_graph`): a component is live by its document or
    by the log's last line for it, and what the catalog could not read is said."""
    entries = cat.entries()
    return whole_graph(entries, cat.load_problems, log)


def _full_relations(cat: Catalog, entry: Entry, graph: Graph, rel: Relations,
                    log: CatalogLog, approvals: list[Approval], used: UsedRecords
                    ) -> dict[str, Any]:
    cid = entry.component_id
    history = sorted(log.by_component.get(cid, []) + log.runtime.get(cid, []),
                     key=lambda s: s[0])
    providers = {c: [_brief(p) for p in graph.live_providers(c, besides=entry)]
                 for c in entry.caps("requires")}
    note = _note(cat, cid, entry.doc)
    return {
        "providers_of_requirements": providers,
        "unmet_requirements": rel.unmet,
        "conflicts": [{**_brief(o), "capability": c, **_logged(said)}
                      for (o, c), said in zip(rel.conflicts, rel.by_log, strict=True)],
        **({"cannot_tell": rel.blind} if rel.blind is not None else {}),
        "shared_source": [_brief(o) for o in rel.shared_source],
        "same_component_id": [_brief(o) for o in rel.same_id],
        "transition_history": [{"line": ln, **rec} for ln, rec in history],
        "approvals": [{"file": a.file, "action": a.field("action"),
                       "reviewer": a.field("reviewer"), "base_sha256": a.field("base_sha256"),
                       "current": standing(a, entry.base_sha256, used) == CURRENT}
                      for a in approvals if a.field("component_id") == cid],
        "notes": note,
        "replay_reports": _replays(cat, cid),
    }


def _logged(said: str) -> dict[str, str]:
    """``{"live_by_log": ...}`` for a conflict live by the log only (its document says
    less), else nothing: a packet shows what the gates count."""
    return {"live_by_log": said.strip(" ()")} if said else {}


def _note(cat: Catalog, cid: str, doc: Any = None) -> Any:
    """The component's curator notes (None without a notes file)."""
    npath = cat.note_path(cid)
    if npath is None:
        return {"unreadable": "the component_id is not a plain name; no notes file is read"}
    if not os.path.lexists(npath):  # by its stable id or a slug alias, or a repost's `for:`
        cat.inside(cat.notes_dir, "notes/")  # (listed only inside the catalog, as review does)
        found = find_notes(cat.notes_dir, cid, **document_keys(doc))
        if found is None:
            return None
        npath = found
    try:
        out = load_bytes(read_inside(cat.root, npath, MAX_NOTES_BYTES), cat.rel(npath),
                         fmt="yaml")
    except FileRefused as exc:
        return {"unreadable": exc.why}
    return out.documents[0].doc if out.documents and not out.problems else \
        {"unreadable": out.problems[0].message if out.problems else "empty"}


def _replays(cat: Catalog, cid: str) -> list[dict[str, Any]]:
    """The component's replay reports, each with its verdict."""
    replays = []
    for p in cat.replay_reports(cid):
        try:
            raw = read_inside(cat.root, p, MAX_DOCUMENT_BYTES)
        except FileRefused:
            raw = b""  # (not a regular file or too large: no verdict to show)
        out = load_bytes(raw, cat.rel(p), fmt="json")
        rep = out.documents[0].doc if out.documents and not out.problems else None
        summary = rep.get("summary") if isinstance(rep, dict) else None
        replays.append({"file": cat.rel(p), "verdict": summary.get("verdict")
                        if isinstance(summary, dict) else None})
    return replays


def packet_files(packet: dict[str, Any], out_dir: Path) -> tuple[Path, Path]:
    cid = id_file_stem(packet["component"]["component_id"])
    stem = f"{cid}--{packet['lane']}--{packet['task']['id']}"
    return out_dir / f"{stem}.json", out_dir / f"{stem}.md"


def packet_json(packet: dict[str, Any]) -> bytes:
    """The packet's JSON file: every control or format character of a catalog value
    written as a ``\\uXXXX`` escape (:func:`risutools.printable.json_text`)."""
    # (``json.dumps(packet, ensure_ascii=False, indent=1, sort_keys=True)``: written in C
    # where those are its bytes, :func:`risutools.canonical.indented_text`)
    return (json_text(indented_text(packet, 1)[:-1]) + "\n").encode()


def _holds(path: Path, data: bytes) -> bool | None:
    """Whether the file at ``path`` holds ``data`` (None: nothing is there).  Read bounded
    (at most ``len(data)`` bytes); a link, a FIFO or a device at a packet's name is refused,
    never read nor replaced."""
    if not os.path.lexists(path):
        return None
    if os.path.islink(path) or not is_regular(path):
        raise RisuError(Code.NOT_A_FILE, "is a symbolic link, a FIFO or a device, not a packet "
                        "file; refusing to read or replace it", path=show_name(str(path)))
    try:
        return read_regular(path, len(data)) == data
    except FileRefused as exc:
        if exc.code == Code.TOO_LARGE:
            return False
        raise


def write_packet(packet: dict[str, Any], out_dir: Path, *, sync_dir: bool = True
                 ) -> tuple[Path, Path]:
    """Write the JSON and Markdown files, each a new file.  A packet that is there already
    with the same bytes (the same task, actor and catalog facts) is left as it is; one with
    other bytes (another actor, facts changed since, edited by its reader) is never
    replaced: ``write-conflict`` (exit 1), nothing written -- a reviewer may have read it,
    and an approval may name it (``approve --packet``).  ``sync_dir=False``: the folder's
    fsync left to the caller (a queue syncs it once)."""
    jpath, mpath = packet_files(packet, out_dir)
    files = ((jpath, packet_json(packet)),
             (mpath, render_packet_markdown(packet).encode("utf-8")))
    if len(files[0][1]) > MAX_PACKET_BYTES:  # (what approve --packet would refuse to read)
        raise RisuError(Code.TOO_LARGE, f"the packet would be {len(files[0][1]):,} bytes, more "
                        f"than the {MAX_PACKET_BYTES:,} a packet may be (approve --packet "
                        "reads no more); nothing written", path=show_name(str(jpath)))
    held = [_holds(path, data) for path, data in files]
    for (path, _), same in zip(files, held, strict=True):
        if same is False:
            raise WriteConflict(
                Code.WRITE_CONFLICT,
                "a packet of this task is there with other content (another actor, the "
                "catalog changed since, or edited by its reader); a packet is never "
                "replaced: move it away to write it again, or write to another folder (-o)",
                path=show_name(str(path)))
    for (path, data), same in zip(files, held, strict=True):
        if same is None:
            write_new_file(path, data, sync_dir=sync_dir)
    return jpath, mpath


def write_queue(cat: Catalog, out_dir: Path, status: str, *, actor: str, limit: int,
                when: str) -> tuple[Path, dict[str, Any]]:
    """One bounded light packet per component with ``status`` (at most ``limit``) and a
    hand-off record naming who, when and which base hashes."""
    approvals = load_approvals(cat)
    log = cat.log()
    graph = _graph(cat, log)
    used = used_records(log)  # (every packet's records: the log's, read once)
    inter = interactions(str(cat.root), graph.entries)
    chosen = sorted((e for e in cat.entries() if e.review_status == status),
                    key=lambda e: (e.component_id, e.where()))
    items = []
    mine: dict[str, list[Approval]] = {}  # (what build_packet takes of them: a component's)
    for a in approvals:
        cid = a.field("component_id")
        if isinstance(cid, str):  # (only a text equals a component_id)
            mine.setdefault(cid, []).append(a)
    try:  # (each packet's file synced as it is written, the folder once: at the end)
        for e in chosen[:limit]:
            p = build_packet(cat, e, "light", actor=actor, graph=graph,
                             approvals=mine.get(e.component_id, []), log=log, inter=inter,
                             used=used)
            jpath, _ = write_packet(p, out_dir, sync_dir=False)
            items.append({"task_id": p["task"]["id"], "component_id": e.component_id,
                          "base_sha256": e.base_sha256, "packet": jpath.name,
                          "needs_full_context": bool(p["needs_full_context"])})
    finally:
        fsync_directory(out_dir)
    record = {"handoff": HANDOFF_FORMAT, "who": actor, "when": when, "lane": "light",
              "catalog": str(cat.root), "status": status, "matched": len(chosen),
              "queued": len(items), "left_out": len(chosen) - len(items), "packets": items}
    hid = "handoff-" + hashlib.sha256(canonical(record)).hexdigest()[:16]
    path = out_dir / f"{hid}.json"
    if not os.path.lexists(path):
        write_new_file(path, packet_json(record))
    return path, record
