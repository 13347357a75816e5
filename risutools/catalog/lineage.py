"""Versions and reposts: the same RisuAI module across posts, containers and versions.

Components whose facts name the same RisuAI module ``id`` are one lineage; within it, the
members are ordered by post id (a later post is newer; the post id is RisuAI's upload
order) and then by version.  Two members built from the same bytes (the same part of the
same source file) are a *repost*; otherwise the newer one *supersedes* the older, and the
drift between the two (hooks, privileged APIs, hosts, state keys, toggles, analysis findings
added or removed) is what a curator re-reviews.  Byte-identical sources under different post
ids are linked even without a module id.  A card and its own ``module.risum`` are two parts
of one file: never a repost of each other.  Grouping is by key (linear in the documents).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from risutools.catalog.interactions import Groups, Index, Summary, facts_content
from risutools.rowspool import Rows, items

#: what a drift compares, in this order: (name, how to read it from a summary)
DRIFT_FIELDS = ("hooks", "privileged_apis", "hosts", "state", "toggles", "findings")


@dataclass(frozen=True, slots=True)
class Link:
    kind: str  # repost | supersedes
    newer: int
    older: int
    drift: dict[str, dict[str, list[str]]]  # (a repost's: :data:`NO_DRIFT`; never changed)


#: the drift of every repost (one dict for all: a catalog of reposts has tens of thousands)
NO_DRIFT: dict[str, dict[str, list[str]]] = {}


def _post(s: Summary) -> int:
    tail = s.source_id.removeprefix("risu:")
    return int(tail) if tail.isdigit() else -1


def _order(s: Summary) -> tuple[int, tuple[int, ...], str]:
    nums = tuple(int(p) if p.isdigit() else 0 for p in s.version.split("."))
    return _post(s), nums, s.component_id


def _values(s: Summary, name: str) -> set[str]:
    if name == "state":
        return {f"{scope}:{key}" + (" (writes)" if w else "")
                for scope, key, _r, w in s.state() if not key.startswith("toggle_")}
    if name == "toggles":
        return {f"declares {t}" for t in s.names("toggles_declared")} | {
            f"reads {t}" for t in s.names("toggles_read")}
    if name == "findings":
        v = s.facts.get("findings") if s.facts else None
        return {f"{f.get('rule')}: {f.get('message')}" for f in v or ()
                if isinstance(f, dict) and f.get("severity") in ("error", "warning")} \
            if isinstance(v, list) else set()
    return set(s.names(name))


def drift(older: Summary, newer: Summary) -> dict[str, dict[str, list[str]]]:
    """What ``newer`` adds and removes against ``older``, per field (empty fields left out)."""
    out: dict[str, dict[str, list[str]]] = {}
    for name in DRIFT_FIELDS:
        a, b = _values(older, name), _values(newer, name)
        if a != b:
            out[name] = {"added": sorted(b - a), "removed": sorted(a - b)}
    return out


def _source(s: Summary) -> tuple[str, str] | None:
    sha = s.text("source_sha256")
    return (sha, s.text("source_part")) if sha else None


def lineages(ix: Index) -> tuple[Iterator[dict[str, Any]], list[Link]]:
    """The lineages of the catalog (two or more members), made one at a time in the order of
    their first members' ids (a catalog of reposts has thousands: :class:`Lineage` spools
    them as they come), and their links; ``ix.kin`` is set (each summary's lineage)."""
    sets = Groups(len(ix.summaries))
    first_by: dict[tuple[str, Any], int] = {}
    for i, s in enumerate(ix.summaries):
        keys: list[tuple[str, Any]] = []
        if s.text("module_id"):
            keys.append(("id", (s.text("module_id"), s.text("source_part") == "card.json")))
        src = _source(s)
        if src is not None:
            keys.append(("bytes", src))
        for k in keys:
            if k in first_by:
                sets.join(first_by[k], i)
            else:
                first_by[k] = i
    groups = sets.members()
    ix.kin = [sets.root(i) for i in range(len(ix.summaries))]
    found: list[tuple[str, list[int], list[Link]]] = []  # (first member's id, order, links)
    links: list[Link] = []
    for members in groups.values():
        ids = {ix.summaries[i].component_id for i in members}
        if len(ids) < 2:
            continue
        order = sorted(members, key=lambda i: _order(ix.summaries[i]))
        mine = _links(ix, order)
        links += mine
        found.append((ix.summaries[order[0]].component_id, order, mine))
    found.sort(key=lambda f: f[0])
    return (_lineage(ix, order, mine) for _, order, mine in found), links


def _links(ix: Index, order: list[int]) -> list[Link]:
    """Each member against the nearest older member: a repost (the same bytes, or the same
    facts in another container or post), else a newer version that supersedes it."""
    out = []
    by_bytes: dict[tuple[str, str], int] = {}
    by_content: dict[str, int] = {}
    last_version: int | None = None
    for i in order:
        s = ix.summaries[i]
        src = _source(s)
        if src is not None and src in by_bytes:
            out.append(Link("repost", i, by_bytes[src], NO_DRIFT))
            continue
        # (the facts spelled only past the bytes' test: a repost of the same bytes, most
        # members of a large group, never reads them)
        content = facts_content(s) if s.facts else ""
        if content and content in by_content:
            out.append(Link("repost", i, by_content[content], NO_DRIFT))
            continue
        if src is not None:
            by_bytes[src] = i
        if content:
            by_content[content] = i
        if last_version is not None:
            out.append(Link("supersedes", i, last_version,
                            drift(ix.summaries[last_version], s)))
        last_version = i
    return out


def _lineage(ix: Index, order: list[int], links: list[Link]) -> dict[str, Any]:
    head = ix.summaries[order[-1]]
    return {
        "module_id": head.text("module_id"), "name": head.text("module_name") or head.title,
        "members": [{"component_id": ix.summaries[i].component_id,
                     "version": ix.summaries[i].version, "post": ix.summaries[i].source_id,
                     "file": ix.summaries[i].where} for i in order],
        "reposts": [{"component_id": ix.summaries[k.newer].component_id,
                     "same_as": ix.summaries[k.older].component_id,
                     "same": "bytes" if same_bytes(ix, k) else "facts"}
                    for k in links if k.kind == "repost"],
        "supersedes": [{"newer": ix.summaries[k.newer].component_id,
                        "older": ix.summaries[k.older].component_id, "drift": k.drift}
                       for k in links if k.kind == "supersedes"],
    }


def same_bytes(ix: Index, k: Link) -> bool:
    a, b = _source(ix.summaries[k.newer]), _source(ix.summaries[k.older])
    return a is not None and a == b


@dataclass
class Lineage:
    """The catalog's lineages and links, as the RV5xx units read them."""

    index: Index
    groups: Rows  # one row a lineage, in a row spool (a catalog of reposts has thousands)
    links: list[Link]

    @classmethod
    def build(cls, ix: Index) -> Lineage:
        groups, links = lineages(ix)
        return cls(ix, Rows(groups, weigh=items), links)


def drift_line(d: dict[str, dict[str, list[str]]]) -> str:
    """A drift in one line: ``hosts +1 -0, state +2 -1`` (or "no drift in the facts")."""
    parts = [f"{k} +{len(v['added'])} -{len(v['removed'])}" for k, v in d.items()]
    return ", ".join(parts) if parts else "no drift in the facts"
