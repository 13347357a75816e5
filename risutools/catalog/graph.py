"""The catalog's capability graph: who provides, requires and conflicts with what.

Terms (used by ``review``, the promotion gates, ``activate`` and packets):
- *active*: ``runtime_status: active``;
- *live*: active, or ``review_status: promoted`` (what a requirement may rely on);
- *host-provided*: a capability of ``kind: requires`` in the vocabulary
  (``risutools/data/capabilities.yaml``): the host (RisuAI) offers it, e.g.
  ``hook.edit_request`` or ``chat_state_kv``;
- *exclusive*: ``exclusive: true`` in the vocabulary (e.g. ``context.token_budget``):
  two active components must not both provide it.
All of it is data read from the vocabulary file; nothing here names a capability.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from functools import cache
from typing import Any

from risutools.catalog.catalog import Catalog, Entry
from risutools.contract.sieve import IdNeedles, id_needles, needles
from risutools.contract.transitions import CatalogLog, read_log
from risutools.datatables import data_table
from risutools.findings import Finding
from risutools.settings.lifecycle import RUNTIME_LINE


@cache
def _vocab() -> dict[str, dict[str, Any]]:
    raw = data_table("capabilities.yaml")["capabilities"]
    return {k: (v if isinstance(v, dict) else {}) for k, v in raw.items()}


def host_provided(cap: str) -> bool:
    return _vocab().get(cap, {}).get("kind") == "requires"


def exclusive_capabilities() -> frozenset[str]:
    return frozenset(k for k, v in _vocab().items() if v.get("exclusive") is True)


#: the statuses that make a component live (:func:`is_live`): ``runtime_status`` active or
#: ``review_status`` promoted, as the strings a document holds (what :func:`neighbours`
#: looks for in a file's bytes: these two functions and this tuple change together)
LIVE_WORDS = ("active", "promoted")


def is_active(e: Entry) -> bool:
    return e.runtime_status == "active"


def is_live(e: Entry) -> bool:
    return is_active(e) or e.review_status == "promoted"


class Graph:
    """Indexes over a list of entries (built once per command)."""

    def __init__(self, entries: Iterable[Entry],
                 logged: dict[str, tuple[str, int]] | None = None) -> None:
        self.entries = list(entries)
        #: the components ``transitions.ndjson`` says are live (:func:`log_live`): one is
        #: live (or active) by the log's word as by its document's, so a document that says
        #: less than its last line (an activation cut short before the document was written,
        #: a status edited back by hand) hides nothing from a gate
        self.logged = logged or {}
        self.providers: dict[str, list[Entry]] = {}
        self.conflicters: dict[str, list[Entry]] = {}
        for e in self.entries:
            for c in e.caps("provides"):
                self.providers.setdefault(c, []).append(e)
            for c in e.caps("conflicts"):
                self.conflicters.setdefault(c, []).append(e)
        self.exclusive = exclusive_capabilities()
        #: what the entries may leave out (:func:`blind_spots`), each with the live state
        #: it may hide ("" any: a file, a log line): a gate that reads other components of
        #: that state cannot pass while one is said ("cannot tell")
        self.unseen: list[tuple[str, str]] = []
        self._groups: dict[Callable[[Entry], Hashable], dict[Hashable, list[Entry]]] = {}

    def grouped(self, key: Callable[[Entry], Hashable]) -> dict[Hashable, list[Entry]]:
        """The entries grouped by ``key`` (each group in the entries' order; an entry whose
        key is None in none), made once a key: what a command asks of many components (a
        packet queue's shared sources and collisions) costs one pass, not one a component."""
        got = self._groups.get(key)
        if got is None:
            got = self._groups[key] = {}
            for e in self.entries:
                k = key(e)
                if k is not None:
                    got.setdefault(k, []).append(e)
        return got

    def live_providers(self, cap: str, *, besides: Entry | None = None) -> list[Entry]:
        return [p for p in self.providers.get(cap, ()) if is_live(p) and not _same(p, besides)]

    def unmet(self, e: Entry) -> list[str]:
        """Requirements no live component (other than ``e``) and no host hook provides."""
        return [c for c in e.caps("requires")
                if not host_provided(c) and not self.live_providers(c, besides=e)]

    def active(self, e: Entry) -> bool:
        """Active by its document, or by the log's last switch (:attr:`logged`)."""
        return is_active(e) or self.logged.get(e.component_id, ("",))[0] == "active"

    def live(self, e: Entry) -> bool:
        """Live by its document, or by the log (:attr:`logged`)."""
        return is_live(e) or e.component_id in self.logged

    def by_log(self, e: Entry) -> str:
        """`` (active by transitions.ndjson line N, its document says inactive)`` when the
        log makes ``e`` live where its document does not (``""`` otherwise): said with a
        gate's verdict naming it."""
        state, n = self.logged.get(e.component_id, ("", 0))
        if not state or (is_active(e) if state == "active" else is_live(e)):
            return ""
        said = e.runtime_status if state == "active" else e.review_status
        return (f" ({state} by transitions.ndjson line {n}, its document says "
                f"{said or '(none)'})")

    def conflicts_with(self, e: Entry, pool: str = "live") -> list[tuple[Entry, str]]:
        """(other, capability) pairs: ``e`` conflicts with what other provides, or other
        conflicts with what ``e`` provides; ``pool`` live (active or promoted) or active,
        by its document or by the log (:attr:`logged`)."""
        keep = self.live if pool == "live" else self.active
        out: list[tuple[Entry, str]] = []
        seen: set[tuple[int, str]] = set()
        for c in e.caps("conflicts"):
            for o in self.providers.get(c, ()):
                if keep(o) and not _same(o, e) and (id(o), c) not in seen:
                    seen.add((id(o), c))
                    out.append((o, c))
        for c in e.caps("provides"):
            for o in self.conflicters.get(c, ()):
                if keep(o) and not _same(o, e) and (id(o), c) not in seen:
                    seen.add((id(o), c))
                    out.append((o, c))
        return out

    def cannot_tell(self, e: Entry, pool: str = "live") -> str | None:
        """Why a question about the other components of ``pool`` (live, or active) that
        ``e`` asks cannot be answered (None: it can): one the graph may not have seen
        (:attr:`unseen`), when ``e`` provides or conflicts with anything (one that does
        neither conflicts with none).  What the gates fail with ("cannot tell") and what a
        packet says beside its relations: one text, one place."""
        states = ("", "active", "promoted") if pool == "live" else ("", "active")
        unseen = [why for why, state in self.unseen if state in states]
        if not unseen or not (e.caps("provides") or e.caps("conflicts")):
            return None
        more = f" (and {len(unseen) - 1} more)" if len(unseen) > 1 else ""
        return f"cannot tell, a component may not have been seen: {unseen[0]}{more}"

    def exclusive_rivals(self, e: Entry) -> list[tuple[Entry, str]]:
        """Other active providers (by document or log) of an exclusive capability ``e``
        provides."""
        return [(o, c) for c in e.caps("provides") if c in self.exclusive
                for o in self.providers.get(c, ()) if self.active(o) and not _same(o, e)]


def _same(a: Entry, b: Entry | None) -> bool:
    return b is not None and (a is b or (a.component_id == b.component_id
                                         and a.path == b.path and a.line == b.line))


def neighbours(cat: Catalog, entry: Entry, *, own: bool = False,
               also: IdNeedles | None = None) -> list[Entry]:
    """The entries of ``cat`` that a :class:`Graph`'s questions about ``entry``
    (:meth:`Graph.conflicts_with`, :meth:`Graph.exclusive_rivals`) can name, and maybe
    others, in the catalog's order: a graph of them answers those questions as a graph of
    the whole catalog does.  Those are live entries (:func:`is_live`) that provide or
    conflict with a capability ``entry`` provides or conflicts with: only the files that
    may hold one of :data:`LIVE_WORDS` and one of those capabilities are parsed
    (:mod:`risutools.contract.sieve`; every file when one is not a plain string), or
    none when the catalog read the ones that may hold one of :data:`LIVE_WORDS` already
    (:attr:`Catalog.aside`).  ``own``: also the documents of the files that may hold
    ``entry``'s component_id; ``also``: and those of these component ids, in the same
    reading (the components the log says are live: :func:`gate_neighbours`)."""
    if not own and cat.aside is not None and cat.aside[0] == LIVE_WORDS:
        return cat.aside[1]
    caps = needles([*entry.caps("provides"), *entry.caps("conflicts")])
    live = needles(LIVE_WORDS)
    mine = needles((entry.component_id,) if own else ())
    if caps is None or live is None or mine is None:
        return cat.entries()
    if not caps.texts and not mine.texts:  # (nothing to share: no file holds what is asked)
        return []
    found, words, ids = caps, live, mine

    def keep(data: bytes, fmt: str) -> bool:
        return (found.may_hold(data, fmt) and words.may_hold(data, fmt)) or \
            ids.may_hold(data, fmt) or (also is not None and also.may_hold(data, fmt))

    return cat.entries_where(keep)


def log_live(log: CatalogLog) -> dict[str, tuple[str, int]]:
    """The components ``transitions.ndjson`` says are live -> (``active`` or ``promoted``,
    the line that says so): its last switch a switch to ``active``, or its last step a step
    to ``promoted`` (what their documents should say too: a document that cannot be read,
    or that the catalog's configuration leaves out, is no less live)."""
    out: dict[str, tuple[str, int]] = {}
    for cid, lines in log.runtime.items():
        switches = [(n, r) for n, r in lines if r.get("kind") == RUNTIME_LINE]
        if switches and switches[-1][1].get("to_runtime") == "active":
            out[cid] = ("active", switches[-1][0])
    for cid, lines in log.by_component.items():
        if cid not in out and lines and lines[-1][1].get("to_status") == "promoted":
            out[cid] = ("promoted", lines[-1][0])
    return out


def gate_neighbours(cat: Catalog, entry: Entry, log: CatalogLog | None = None, *,
                    own: bool = False) -> Graph:
    """The graph of :func:`neighbours` that the gates reading other components look at,
    with what it may leave out (:func:`blind_spots`; ``log``: the whole log, read here
    when not given, and only for a component that provides or conflicts with something:
    one that does neither conflicts with none, and no gate asks what it may not see)."""
    if not (entry.caps("provides") or entry.caps("conflicts")):
        return Graph(neighbours(cat, entry, own=own))
    if log is None:
        log = read_log(cat.root)
    live = log_live(log)
    seen = neighbours(cat, entry, own=own, also=id_needles(live) if live else None)
    problems = list(cat.load_problems)
    have = {e.component_id for e in seen}
    lost = sorted(live.keys() - have)
    if lost:  # (not read with the neighbours, when the catalog's aside stood for them)
        ids = id_needles(lost)
        more = cat.entries() if ids is None else cat.entries_where(ids.may_hold)
        problems += cat.load_problems
        found = [e for e in more if e.component_id in live and e.component_id not in have]
        seen = [*seen, *found]  # (live by the log: in the graph, whatever they say)
        have |= {e.component_id for e in more}
    graph = Graph(seen, live)
    graph.unseen = blind_spots(problems, {c: live[c] for c in lost if c not in have}, log)
    return graph


def whole_graph(entries: list[Entry], problems: Iterable[Finding], log: CatalogLog
                ) -> Graph:
    """A graph of every document the catalog read (``problems``: what it could not), with
    what it may leave out (:func:`blind_spots`): the review's, whose board runs the gates."""
    live = log_live(log)
    graph = Graph(entries, live)
    have = {e.component_id for e in entries}
    lost = {c: v for c, v in live.items() if c not in have}
    graph.unseen = blind_spots(problems, lost, log)
    return graph


def blind_spots(problems: Iterable[Finding], lost: dict[str, tuple[str, int]],
                log: CatalogLog) -> list[tuple[str, str]]:
    """Why a graph may leave a component out, each once, with the live state it may hide
    (``""``: any): a catalog file that could not be read (any document may be in it), a
    line of the log that could not be read (any switch may be in it), a component the log
    says is live whose document was not read (left out by the configuration's
    ``exclude:``, moved, renamed)."""
    out: dict[tuple[str, str], None] = {}
    for f in problems:
        if f.file:
            at = f":{f.line}" if f.line else ""
            out[(f"{f.file}{at} cannot be read ({f.message})", "")] = None
    for n, why in log.problems:
        where = "transitions.ndjson" + (f" line {n}" if n is not None else "")
        out[(f"{where} cannot be read ({why})", "")] = None
    for cid, (state, n) in sorted(lost.items()):
        out[(f"{cid} is {state} by transitions.ndjson line {n}, and no document of it "
             "was read", state)] = None
    return list(out)
