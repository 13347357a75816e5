"""The review's lineage findings (RV501-RV502): reposts and superseded versions of one
RisuAI module.  One unit each, scope ``catalog``; each reads the
:class:`~risutools.catalog.lineage.Lineage` (``unit(lineage)``) and yields
:class:`~risutools.catalog.relations.Relation` rows (source: the newer member)."""

from __future__ import annotations

from collections.abc import Iterator

from risutools.catalog.lineage import Lineage, drift_line, same_bytes
from risutools.catalog.relations import Relation
from risutools.checks.registry import check

#: the review's catalog pass hands RV5xx units the lineage
LINEAGE = 5


@check("RV501", "info", "catalog", "repost")
def repost(lin: Lineage) -> Iterator[Relation]:
    """Two components are one module posted twice: built from the same bytes (the same part of
    the same source file) under different post ids, or with the same facts from another
    container or post.

    Why: A repost needs no second review; reviewing both is double work, and approving one
    but not the other leaves the catalog inconsistent.

    Fix: Review one of them; retire or reject the other, or keep them in step."""
    for k in lin.links:
        if k.kind == "repost":
            older = lin.index.summaries[k.older]
            what = "bytes" if same_bytes(lin.index, k) else "module facts"
            yield Relation("repost", "info", k.newer, (k.older,), (older.source_id,),
                           f"the same {what} as {older.component_id} (posted as "
                           f"{older.source_id})")


@check("RV502", "info", "catalog", "new-version")
def new_version(lin: Lineage) -> Iterator[Relation]:
    """A component is a newer version of another component of the catalog (the same RisuAI
    module id, a later post or version, other bytes): it supersedes it; the drift between
    the two is listed.

    Why: A curator re-reviews what changed since the older version (hooks, privileged APIs,
    hosts, state keys, toggles, findings), not the whole module.

    Fix: Review the drift; retire the older version once the newer one is approved."""
    for k in lin.links:
        if k.kind == "supersedes":
            older = lin.index.summaries[k.older]
            yield Relation("new-version", "info", k.newer, (k.older,),
                           tuple(sorted(k.drift)), f"supersedes {older.component_id} "
                           f"({older.source_id or 'no post'}, version {older.version or '?'}): "
                           f"{drift_line(k.drift)}")
