"""What the review's interaction and lineage units find: :class:`Relation` rows, the
relations kept in a row spool (:class:`RelationRows`), and the families the dependencies
among them make."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from risutools.catalog.interactions import Groups, Index
from risutools.rowspool import Rows, items


@dataclass(frozen=True)
class Relation:
    """One interaction found by an RV4xx unit: ``source`` acts on (or depends on) each of
    ``targets`` through ``keys``; ``kind`` is the unit's title."""

    kind: str
    severity: str  # info | warning
    source: int  # index into Index.summaries
    targets: tuple[int, ...]
    keys: tuple[str, ...]
    message: str
    dependency: bool = False  # counts for families (source needs the targets)


class RelationRows:
    """Relations kept in a row spool (:class:`~risutools.rowspool.Rows`: the lineage's are
    one a repost, tens of thousands in a catalog of reposts), read back in order."""

    def __init__(self, relations: Iterable[Relation] = ()) -> None:
        self._rows = Rows(({"kind": r.kind, "severity": r.severity, "source": r.source,
                            "targets": list(r.targets), "keys": list(r.keys),
                            "message": r.message, "dependency": r.dependency}
                           for r in relations), weigh=items)

    def __iter__(self) -> Iterator[Relation]:
        for d in self._rows:
            yield Relation(d["kind"], d["severity"], d["source"], tuple(d["targets"]),
                           tuple(d["keys"]), d["message"], d["dependency"])

    def __len__(self) -> int:
        return len(self._rows)


def families(ix: Index, relations: list[Relation]) -> list[dict[str, Any]]:
    """Components linked by dependencies, each with its backend (the member the others
    depend on most); only groups of two or more."""
    sets = Groups(len(ix.summaries))
    needed: dict[int, int] = {}
    for r in relations:
        if not r.dependency:
            continue
        for t in r.targets:
            needed[t] = needed.get(t, 0) + 1
            sets.join(r.source, t)
    groups = sets.members()
    out: list[dict[str, Any]] = []
    for members in groups.values():
        if len(members) < 2:
            continue
        backend = min(members, key=lambda i: (-needed.get(i, 0), ix.summaries[i].component_id))
        head = ix.summaries[backend]
        out.append({"backend": head.component_id, "title": head.title,
                    "members": sorted(ix.summaries[i].component_id for i in members),
                    "extensions": len(members) - 1})
    out.sort(key=lambda f: (-int(f["extensions"]), str(f["backend"])))
    return out
