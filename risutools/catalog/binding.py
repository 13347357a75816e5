"""What an approval is bound to: the packet (or the base hash) its reviewer read.

``approve COMPONENT --packet PACKET.json`` records the packet's task id, lane and base hash;
``approve --base sha256:...`` the hash alone; without either the record says it was made
without a packet.  When the document's base hash is no longer the one read, nothing is
written: :class:`~risutools.errors.WriteConflict` ``base-moved`` (exit 1) names the log
lines since (evidence, runtime switches) and the fields that changed.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from risutools.catalog.catalog import Catalog, Entry
from risutools.catalog.packet import LANES, MAX_PACKET_BYTES, PACKET_FORMAT, WITHHELD
from risutools.errors import Code, ConfigError, WriteConflict
from risutools.findings import MAX_POINTER_SHOWN
from risutools.jsonplaces import Place, pointer_at
from risutools.printable import display
from risutools.safeio import FileRefused, read_regular
from risutools.values import parse_json_text

MAX_SHOWN = 6  # changed fields named in the refusal


def read_packet(path: str, entry: Entry) -> dict[str, Any]:
    """The packet at ``path`` (bounded, a regular file) for ``entry``'s component; a
    ConfigError (exit 2) when it is not a review packet of that component."""
    try:
        data = read_regular(Path(path), MAX_PACKET_BYTES)
    except FileRefused as exc:  # (what the file is not: its own code, as every read says)
        raise ConfigError(exc.code, exc.why, path=path) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(Code.BAD_PACKET, "not UTF-8 JSON", path=path) from None
    pk, problem = parse_json_text(text, line=1)
    if problem is not None:
        raise ConfigError(Code.BAD_PACKET, f"not JSON: {problem.message}", path=path)
    task = pk.get("task") if isinstance(pk, dict) else None
    comp = pk.get("component") if isinstance(pk, dict) else None
    if not isinstance(pk, dict) or pk.get("packet") != PACKET_FORMAT or \
            not isinstance(task, dict) or not isinstance(task.get("id"), str) or \
            not isinstance(pk.get("lane"), str) or not isinstance(pk.get("base_sha256"), str) \
            or not isinstance(comp, dict):
        raise ConfigError(Code.BAD_PACKET, f"not a {PACKET_FORMAT} packet (packet, task.id, "
                          "lane, base_sha256, component)", path=path)
    why = _unlike_ours(pk, Path(path).name)
    if why:
        raise ConfigError(Code.BAD_PACKET, f"not a packet risutools wrote: {why}", path=path)
    if comp.get("component_id") != entry.component_id:
        raise ConfigError(Code.BAD_PACKET, f"the packet is for "
                          f"{display(str(comp.get('component_id')))}, not "
                          f"{entry.component_id}", path=path)
    return pk


_TASK_ID = re.compile(r"task-[0-9a-f]{16}")
_SHA256 = re.compile(r"sha256:[0-9a-f]{64}")


def _unlike_ours(pk: dict[str, Any], name: str) -> str:
    """What of the values a record copies from the packet (its task id, lane, base hash and
    file name) is not what :func:`~risutools.catalog.packet.build_packet` writes ('' when all
    are): a record keeps them as one line of plain text."""
    if pk["lane"] not in LANES:
        return f"lane {display(pk['lane'])} (a packet's lane is one of {', '.join(LANES)})"
    if not _TASK_ID.fullmatch(pk["task"]["id"]):
        return f"task id {display(pk['task']['id'])}"
    if not _SHA256.fullmatch(pk["base_sha256"]):
        return f"base_sha256 {display(pk['base_sha256'])}"
    if not name.isprintable():
        return f"its file name {display(name)} holds a control or format character"
    return ""


def binding(packet_path: str | None, packet: dict[str, Any] | None, base: str | None
            ) -> dict[str, Any]:
    """The record's ``read`` field."""
    if packet is not None:
        return {"how": "packet", "packet": Path(str(packet_path)).name,
                "task_id": packet["task"]["id"], "lane": packet["lane"],
                "base_sha256": packet["base_sha256"]}
    if base is not None:
        return {"how": "base", "base_sha256": base}
    return {"how": "none", "note": "made without a packet or --base: it names the document's "
                                   "hash when approved"}


def require_base(cat: Catalog, entry: Entry, read: str, packet: dict[str, Any] | None
                 ) -> None:
    """Nothing is approved when the document is no longer what was read."""
    if read == entry.base_sha256:
        return
    what = "the packet's" if packet is not None else "--base"
    since = _lines_since(cat, entry, read)
    places: list[Place] = []
    if packet is not None:
        _changed(packet.get("document"), entry.doc, None, places)
    # (a pointer written for each one shown: each place's is as long as the keys above it)
    changed = [display(pointer_at(p, MAX_POINTER_SHOWN) or "/") for p in places[:MAX_SHOWN]]
    parts = [f"{what} base {read[:19]}…, the document is now {entry.base_sha256[:19]}…"]
    if since:
        parts.append("since: " + "; ".join(since))
    if changed:
        more = f" (+{len(places) - MAX_SHOWN} more)" if len(places) > MAX_SHOWN else ""
        parts.append("changed: " + ", ".join(changed) + more)
    raise WriteConflict(Code.BASE_MOVED, "changed since you read it (" + "; ".join(parts)
                        + "); nothing written: read the current document (a new packet) "
                        "and approve again", path=entry.where())


def _lines_since(cat: Catalog, entry: Entry, base: str) -> list[str]:
    """The log lines of the component after the one that ended at ``base``."""
    log = cat.log()
    cid = entry.component_id
    lines = sorted(log.by_component.get(cid, []) + log.runtime.get(cid, []),
                   key=lambda s: s[0])
    start = next((i for i, (_, rec) in enumerate(lines) if rec.get("after_sha256") == base),
                 None)
    if start is None:
        return []
    out = []
    for ln, rec in lines[start + 1:]:
        kind = rec.get("kind") or "transition"
        what = rec.get("reason") or (
            f"{rec.get('from_runtime')} -> {rec.get('to_runtime')}" if kind == "runtime" else
            f"{rec.get('from_status')} -> {rec.get('to_status')}")
        out.append(f"transitions.ndjson line {ln}: {kind} ({display(str(what))})")
    return out


def _changed(old: Any, new: Any, place: Place, out: list[Place]) -> None:
    """The places where ``old`` (a packet's document) and ``new`` differ, into ``out`` (a
    withheld value in the packet is not compared)."""
    if old in (new, WITHHELD):
        return
    if isinstance(old, dict) and isinstance(new, dict):
        for k in sorted(set(old) | set(new)):
            _changed(old.get(k), new.get(k), (place, str(k)), out)
        return
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for i, (a, b) in enumerate(zip(old, new, strict=True)):
            _changed(a, b, (place, i), out)
        return
    out.append(place)
