"""The review's ``interactions`` section and each component's ``risk``: the summaries of the
catalog's documents, their index, the RV4xx units over it, the families, and the risk facts
every review row and light packet carries (title, lowLevelAccess, privileged APIs, hosts,
dynamic loading and where it resolves, analysis findings, coverage caveats)."""

from __future__ import annotations

import bisect
import itertools
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from risutools.catalog.catalog import Entry
from risutools.catalog.interaction_checks import INTERACTIONS
from risutools.catalog.interactions import Facts, FactsStore, Index, Summary, summarize_entry
from risutools.catalog.lineage import Lineage
from risutools.catalog.lineage_checks import LINEAGE
from risutools.catalog.relations import Relation, RelationRows, families
from risutools.catalog.review_checks import units
from risutools.collector import cycles_paused
from risutools.findings import Finding
from risutools.pathnames import fits_any
from risutools.rowspool import Rows
from risutools.safeio import FolderFiles
from risutools.settings.catalog import FACTS_DIR


@dataclass
class Interactions:
    index: Index
    relations: list[Relation]  # RV4xx
    families: list[dict[str, Any]]
    lineage: Lineage
    versions: RelationRows  # RV5xx (one a repost: kept in a row spool)
    #: the RV4xx relations by their source's component id (:meth:`of_component`)
    _by_source: dict[str, list[Relation]] | None = field(default=None, repr=False,
                                                           compare=False)

    def of_component(self, component_id: str) -> list[Relation]:
        """The RV4xx relations whose source is that component, in order (grouped once: a
        packet queue asks for each of its components)."""
        if self._by_source is None:
            self._by_source = {}
            for r in self.relations:
                cid = self.index.summaries[r.source].component_id
                self._by_source.setdefault(cid, []).append(r)
        return self._by_source.get(component_id, [])

    def rows(self, relations: Iterable[Relation] | None = None) -> list[dict[str, Any]]:
        return list(self._rows(self.relations if relations is None else relations))

    def _rows(self, relations: Iterable[Relation]) -> Iterator[dict[str, Any]]:
        ids = _ids()
        for r in relations:
            s = self.index.summaries[r.source]
            targets = [self.index.summaries[t] for t in r.targets]
            yield {"rule": ids[r.kind], "kind": r.kind, "severity": r.severity,
                   "component_id": s.component_id, "title": s.title, "file": s.where,
                   "targets": [t.component_id for t in targets], "keys": list(r.keys),
                   "dependency": r.dependency,
                   "live": s.live and all(t.live for t in targets),
                   "message": r.message}

    def findings(self) -> Iterator[Finding]:
        """The finding of each relation (RV4xx, then RV5xx), one at a time."""
        ids = _ids()
        for r in itertools.chain(self.relations, self.versions):
            s = self.index.summaries[r.source]
            file, _, tail = s.where.rpartition(":")
            where = (file, int(tail)) if file and tail.isdigit() else (s.where, None)
            sev: Any = r.severity
            yield Finding(ids[r.kind], sev, f"{s.component_id}: {r.message}",
                          file=where[0], line=where[1])

    def section(self) -> dict[str, Any]:
        rows = self.rows()
        return {"relations": rows, "families": self.families,
                "counts": dict(sorted(Counter(r["kind"] for r in rows).items())),
                "without_facts": sum(1 for s in self.index.summaries if s.facts is None)}

    def lineage_section(self) -> dict[str, Any]:
        return {"lineages": self.lineage.groups, "relations": Rows(self._rows(self.versions))}


def live_only(section: dict[str, Any], documents: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """The ``interactions`` section kept to what acts between live components (active or
    promoted), the meaning of each row's ``live`` and of the HTML page's "live only" box:
    the rows whose components are all live, the families whose members all are, the counts
    of what is left, and ``live_only: true`` (``review --live-only``)."""
    live = {d.get("component_id") for d in documents if d.get("runtime_status") == "active"
            or d.get("review_status") == "promoted"}
    rows = [r for r in section["relations"] if r["live"]]
    return {**section, "relations": rows,
            "families": [f for f in section["families"]
                         if all(m in live for m in f["members"])],
            "counts": dict(sorted(Counter(r["kind"] for r in rows).items())),
            "live_only": True}


def _ids() -> dict[str, str]:
    return {c.title: c.id for c in units(INTERACTIONS) + units(LINEAGE)}


def interactions(root: str, entries: Iterable[Entry], store: FactsStore | None = None
                 ) -> Interactions:
    """Every RV4xx unit over the catalog's summaries, the families, the lineages and the
    RV5xx units over them; ``store``: where the review's first pass put the facts it found
    (each entry's ``found_facts``, taken here: an entry without them has its facts read)."""
    facts_files = FolderFiles(root, FACTS_DIR)  # facts/ looked at once for the run
    if store is None:
        store = FactsStore()  # each summary's facts packed, in one temporary file
    with cycles_paused():
        return relate(_summaries(root, entries, facts_files, store))


def _summaries(root: str, entries: Iterable[Entry], facts_files: FolderFiles,
               store: FactsStore) -> Iterator[Summary]:
    for e in entries:
        found, e.found_facts = e.found_facts, None  # (the summary holds them from now on)
        yield summarize_entry(root, e, facts_files, store, found)


def relate(summaries: Iterable[Summary]) -> Interactions:
    """:func:`interactions` over summaries already made (what ``bench_interactions`` times)."""
    with cycles_paused():
        ix = Index.build(summaries)
        lin = Lineage.build(ix)  # first: the units know versions of one module (ix.kin)
        # the RV5xx units before any part of the index is made: none is held beside them
        versions = RelationRows(r for unit in units(LINEAGE) for r in unit(lin))
        relations: list[Relation] = []
        for unit in units(INTERACTIONS):
            relations += unit(ix)
            ix.release_kinds()  # (one unit's parts held at a time)
        return Interactions(ix, relations, families(ix, relations), lin, versions)


#: the members of the facts the risk facts read (:func:`risk`, :func:`_loading`; the lorebook
#: entries only with a load)
_RISK_MEMBERS = frozenset({"findings", "low_level_access", "privileged_apis", "hosts",
                           "lorebook_loads", "lorebook_loads_unresolved", "dynamic_code",
                           "coverage"})


def risk(ix: Index, s: Summary) -> dict[str, Any]:
    """The risk facts of one component, as every review row and light packet shows them."""
    facts = s.facts
    if type(facts) is Facts and facts.schema.keys().isdisjoint(_RISK_MEMBERS):
        # (packed facts that keep none of the members read below, each empty then: most
        # summaries' facts, pared of their empty members; the same facts, told at once)
        return {"title": s.title, "low_level_access": False, "privileged_apis": [],
                "hosts": [], "dynamic_loading": [], "analysis_findings": [],
                "analysis_infos": {}, "coverage": []}
    found = facts.get("findings") if facts else None
    rows = [f for f in found if isinstance(f, dict)] if isinstance(found, list) else []
    serious: list[dict[str, str]] = []
    infos: dict[str, int] = {}
    if rows:  # (none: both empty)
        serious = [{"rule": str(f.get("rule")), "severity": str(f.get("severity")),
                    "message": str(f.get("message"))} for f in rows
                   if f.get("severity") in ("error", "warning")]
        infos = dict(sorted(Counter(str(f.get("rule")) for f in rows
                                    if f.get("severity") == "info").items()))
    out: dict[str, Any] = {
        "title": s.title,
        "low_level_access": bool(facts.get("low_level_access")) if facts else None,
        "privileged_apis": s.names("privileged_apis"),
        "hosts": s.names("hosts"),
        "dynamic_loading": _loading(ix, s),
        "analysis_findings": serious,
        "analysis_infos": infos,
        "coverage": s.names("coverage") if facts else [s.facts_note],
    }
    return out


def _loading(ix: Index, s: Summary) -> list[dict[str, str]]:
    """Each dynamic load and where its code resolves: in this module, in module X, or
    unresolved."""
    loads = s.names("lorebook_loads")
    own = s.names("lorebook_entries") if loads else []
    out = []
    for p in loads:
        ids, idset = ix.carrier_ids(p)
        holders = [c for c in ids[:5] if c != s.component_id][:4]
        more = len(ids) - (s.component_id in idset) > 4
        if fits_any(p, own):
            where = "in this module"
        elif holders:
            where = "in " + ", ".join(holders) + (" ..." if more else "")
        else:
            where = "unresolved"
        out.append({"load": f"lorebook {p!r}", "resolves": where})
    n = s.number("lorebook_loads_unresolved")
    if n:
        out.append({"load": f"{n} lorebook lookup(s) with names computed at run time",
                    "resolves": "unresolved"})
    for name in s.names("dynamic_code"):
        if not out:
            out.append({"load": name, "resolves": "unresolved"})
    return out


def risks(inter: Interactions) -> dict[str, dict[str, Any]]:
    """component_id -> its risk facts (the first document of an id)."""
    out: dict[str, dict[str, Any]] = {}
    for s in inter.index.summaries:
        out.setdefault(s.component_id, risk(inter.index, s))
    return out


def attach_risk(documents: Iterable[dict[str, Any]], inter: Interactions
                ) -> Iterator[dict[str, Any]]:
    """Each review row with its component's ``risk`` (:func:`risks`' one), made as the rows
    come (none kept)."""
    first: dict[str, Summary] = {}
    for s in inter.index.summaries:
        first.setdefault(s.component_id, s)
    for d in documents:
        cid = d.get("component_id")
        mine = first.get(cid) if isinstance(cid, str) else None
        if mine is not None:
            d["risk"] = risk(inter.index, mine)
        yield d


def risk_of(inter: Interactions, component_id: str) -> dict[str, Any] | None:
    """One component's risk facts (of its first document), None when the catalog lacks it
    (the summaries are sorted by id: found by bisection)."""
    found = inter.index.summaries
    i = bisect.bisect_left(found, component_id, key=_component_id)
    if i < len(found) and found[i].component_id == component_id:
        return risk(inter.index, found[i])
    return None


def _component_id(s: Summary) -> str:
    return s.component_id


#: a full packet's interaction relations: name -> the kinds it holds
PACKET_RELATIONS = (("dependencies", ("lorebook-dependency", "toggle-dependency",
                                      "button-handler")),
                    ("unsatisfied", ("lorebook-missing", "toggle-unsatisfied")),
                    ("shared_state", ("shared-state",)), ("edit_order", ("edit-order",)),
                    ("capability_conflicts", ("capability-conflict",)),
                    ("versions", ("repost", "new-version")))


def relations_of(inter: Interactions, component_id: str) -> dict[str, Any]:
    """What the catalog's interactions say about one component (a full packet's
    ``relations``): what it depends on, what depends on it, shared state, edit order,
    conflicts, versions and the family it belongs to."""
    rows = [r for r in inter.rows(itertools.chain(inter.relations, inter.versions))
            if r["component_id"] == component_id or component_id in r["targets"]]
    out: dict[str, Any] = {}
    for name, kinds in PACKET_RELATIONS:
        mine = [r for r in rows if r["kind"] in kinds]
        if name == "dependencies":
            out["dependencies"] = [r for r in mine if r["component_id"] == component_id]
            out["dependents"] = [r for r in mine if r["component_id"] != component_id]
        else:
            out[name] = mine
    out["family"] = next((f for f in inter.families if component_id in f["members"]), None)
    return out


def interaction_reasons(inter: Interactions, component_id: str) -> list[dict[str, str]]:
    """Why a light packet of this component cannot be decided alone, from the interactions:
    it depends on another component, or reads what no component provides."""
    out = []
    for r in inter.rows(inter.of_component(component_id)):
        if r["dependency"]:
            out.append({"reason": "dependency", "detail": f"{r['rule']}: {r['message']}"})
        elif r["kind"] in ("toggle-unsatisfied", "lorebook-missing"):
            out.append({"reason": "unsatisfied", "detail": f"{r['rule']}: {r['message']}"})
    return out
