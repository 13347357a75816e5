"""How the catalog's components act on each other: shared state, edit-hook order, lorebook,
toggle and button dependencies, capability conflicts, and the families they form.

The review keeps one small :class:`Summary` per document (its id, title, statuses,
capabilities and the ``component-facts-v1`` summary ingest wrote next to it in
``facts/``), never the documents themselves, and builds an :class:`Index` by key over them:
state key -> who reads and writes it, hook -> who transforms it, toggle -> who declares and
who reads it, lorebook entry name -> who carries it.  Every relation is read off one key's
list, so the work is linear in the facts (a key shared by more than :data:`HUB` components
is one row for the key, not a row for every pair).  The checks RV401-RV408
(:mod:`risutools.catalog.interaction_checks`) read the index; what they find, and the
families derived from the dependencies among it, are :mod:`risutools.catalog.relations`.
"""

from __future__ import annotations

import bisect
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, fields
from typing import Any

from risutools.catalog.catalog import Entry, kept_once
from risutools.catalog.graph import exclusive_capabilities
from risutools.catalog.render import safe_name
from risutools.errors import RisuError
from risutools.pathnames import fits_wildcard as fits
from risutools.rowspool import Spool, pack
from risutools.safeio import FolderFiles
from risutools.settings.catalog import FACTS_DIR, FACTS_FORMAT
from risutools.values import decode_text, fast_json, fast_json_many, parse_value

#: a facts file larger than this is not read (a summary is a few KiB)
MAX_FACTS_BYTES = 1 << 20
#: a key shared by more components than this is one row for the key (no pairs)
HUB = 12


#: the members of the facts the units read of every summary, again and again: a packed
#: summary (:class:`Facts`) keeps them at hand; any other member is read back when asked
HOT = ("lorebook_entries", "lorebook_loads", "toggles_declared", "toggles_read",
       "button_names", "risu_buttons", "module_id", "source_part", "source_sha256",
       "transforms", "entry_points", "button_targets")


class FactsStore:
    """The facts of one run's summaries, packed (:func:`~risutools.rowspool.pack`) in one
    :class:`~risutools.rowspool.Spool`; the facts last read back kept (the readers ask one
    summary several questions in a row)."""

    def __init__(self) -> None:
        self.spool = Spool()
        self._last: tuple[Facts | None, dict[str, Any]] = (None, {})
        #: the names of the kept members -> where a :class:`Facts` finds each (its value at
        #: hand, or -1: read back), each set once up to :data:`SCHEMAS_MAX` sets
        self._schemas: dict[tuple[str, ...], dict[str, int]] = {}
        #: each different list of names the summaries keep at hand, kept once (versions and
        #: reposts of one module name the same), up to :data:`TUPLES_MAX` different ones
        self._tuples: dict[tuple[str, ...], tuple[str, ...]] = {}

    def facts(self, kept: dict[str, Any], *, exact: bool) -> Facts:
        """The packed :class:`Facts` of ``kept`` (pared facts; ``exact``: orjson parsed them,
        see :func:`~risutools.rowspool.pack`)."""
        blob, names, values = _packed(kept, exact)
        return self.adopt(blob, names, values)

    def adopt(self, blob: bytes, names: tuple[str, ...], values: tuple[Any, ...], *,
              interned: bool = False) -> Facts:
        """The :class:`Facts` of pared facts packed elsewhere (:func:`facts_found`, by the
        review's first pass), with the members they keep (``names``: those of :data:`HOT`
        first, :func:`_packed`) and the values of those of HOT (each kept once here again:
        :func:`_shared`; ``interned``: by this process already, each tuple of them kept
        once still)."""
        schema = self._schemas.get(names)
        if schema is None:
            hot = len(values)  # (each name past them is read back: -1)
            schema = {k: i if i < hot else -1 for i, k in enumerate(names)}
            if len(self._schemas) < SCHEMAS_MAX:
                self._schemas[names] = schema
        # each value as _shared gave it (in a worker: a string, a tuple of strings, else as
        # it was), kept once in this process
        intern, tuples = sys.intern, self._tuples
        return Facts(self, self.spool.add(blob), len(blob), schema,
                     tuple([kept_once(tuples, v if interned else tuple(map(intern, v)),
                                      TUPLES_MAX)
                            if type(v) is tuple else v if interned or type(v) is not str
                            else intern(v) for v in values]))

    def found(self, found: FoundFacts, *, interned: bool = False) -> HeldFacts:
        """What a summary holds of the facts the first pass found (:func:`facts_found`;
        ``interned``: in this process, its values' texts kept once already)."""
        blob, note, names, values, empty = found
        facts = None if blob is None else self.adopt(blob, names, values, interned=interned)
        return facts, note, shared_empty(empty)

    def read(self, f: Facts) -> dict[str, Any]:
        if self._last[0] is not f:
            self._last = (f, self.spool.read(f.at, f.size))
        return self._last[1]


def _packed(kept: dict[str, Any], exact: bool
            ) -> tuple[bytes, tuple[str, ...], tuple[Any, ...]]:
    """Pared facts packed, the members they keep (those of :data:`HOT` first, in HOT's
    order, then the others in theirs: a member not named is known empty without reading
    the facts back) and the values of those of HOT."""
    hot = [k for k in HOT if k in kept]
    names = tuple(hot + [k for k in kept if k not in _HOT])
    return pack(kept, parsed_by_orjson=exact), names, tuple([_shared(kept[k]) for k in hot])


def _shared(v: Any) -> Any:
    """A kept member of HOT (or a summary's title, post, capabilities) as held: a string, or
    a list of strings as a tuple, each string kept once (:func:`sys.intern`: many summaries
    name the same: versions and reposts of one module); anything else as it is."""
    t = type(v)
    if t is str:
        return sys.intern(v)
    if t is list and _ONLY_STR(map(type, v)):  # (every item's type is str: one C call)
        return tuple(map(sys.intern, v))
    return v


_ONLY_STR = frozenset({str}).issuperset


class Facts:
    """A summary's facts, packed: the pared facts (:func:`pared`) in the run's
    :class:`FactsStore`, and the members of :data:`HOT` that are not empty at hand; which
    members the pared facts keep is known (:attr:`schema`), so a member they do not keep
    is answered without reading them back.  :meth:`get` answers as the pared facts' dict
    does; :meth:`member` answers the summary's readers (a list of names may come as a
    tuple)."""

    __slots__ = ("at", "hot", "schema", "size", "store")

    def __init__(self, store: FactsStore, at: int, size: int, schema: dict[str, int],
                 hot: tuple[Any, ...]) -> None:
        self.store, self.at, self.size, self.schema, self.hot = store, at, size, schema, hot

    def __bool__(self) -> bool:
        return True  # (the format's own member is never pared away)

    def member(self, key: str) -> Any:
        i = self.schema.get(key)
        if i is None:  # (not kept: empty, or not in the facts)
            return None
        if i >= 0:
            return self.hot[i]
        last = self.store._last  # (FactsStore.read, without a call when it is at hand)
        return (last[1] if last[0] is self else self.store.read(self)).get(key)

    def get(self, key: str, default: Any = None) -> Any:
        if key not in self.schema:  # (not kept: not read back)
            return default
        return self.store.read(self).get(key, default)

    def whole(self) -> dict[str, Any]:
        """The pared facts (read back; not to be changed)."""
        return self.store.read(self)


_HOT = frozenset(HOT)
#: the sets of kept members a :class:`FactsStore` keeps one schema each for (past them,
#: each :class:`Facts` has its own)
SCHEMAS_MAX = 1024
#: the different lists of names a :class:`FactsStore` keeps one tuple each for (past them,
#: each :class:`Facts` has its own): about 100 bytes a list in its table at most
TUPLES_MAX = 1 << 16


@dataclass(frozen=True, slots=True)
class Summary:
    """What the review keeps of one document: enough to relate it and show its risk."""

    component_id: str
    where: str
    title: str
    review_status: str
    runtime_status: str
    provides: tuple[str, ...]
    conflicts: tuple[str, ...]
    #: the component-facts-v1 summary, when at hand and current: a dict, or packed
    #: (:class:`Facts`: what the review and the packets keep)
    facts: dict[str, Any] | Facts | None
    facts_note: str = ""  # why there are no facts ("" when there are)
    version: str = ""
    source_id: str = ""  # source_refs[0].source_id: "risu:<post id>"
    #: the facts' empty members left out of ``facts`` (:func:`pared`), as (name, ``repr``)
    empty: tuple[tuple[str, str], ...] = ()

    @property
    def live(self) -> bool:
        return self.runtime_status == "active" or self.review_status == "promoted"

    def member(self, key: str) -> Any:
        """A member of the facts (None without facts; a list of names may be a tuple)."""
        f = self.facts
        if f is None:
            return None
        if type(f) is Facts:  # (:meth:`Facts.member`, its call saved for what it keeps)
            i = f.schema.get(key)
            return None if i is None else f.hot[i] if i >= 0 else f.member(key)
        return f.get(key)

    def names(self, key: str) -> list[str]:
        """A list of names from the facts (empty without facts, or when it is not a list of
        strings)."""
        f = self.facts
        if f is None:
            return []
        if type(f) is Facts:  # (:meth:`Facts.member`, its call saved for what it keeps)
            i = f.schema.get(key)
            if i is None:  # (a member not kept: most are empty)
                return []
            v = f.hot[i] if i >= 0 else f.member(key)
            if type(v) is tuple:  # (names kept at hand: strings only, :func:`_shared`)
                return list(v)
        else:
            v = f.get(key)
        return [x for x in v if isinstance(x, str)] if isinstance(v, list | tuple) else []

    def text(self, key: str) -> str:
        v = self.member(key)
        return v if isinstance(v, str) else ""

    def number(self, key: str) -> int:
        v = self.member(key)
        return v if isinstance(v, int) and not isinstance(v, bool) else 0

    def state(self) -> Iterator[tuple[str, str, bool, bool]]:
        """(scope, key, reads, writes) of every state key in the facts."""
        v = self.member("state")
        for s in v if isinstance(v, list) else ():
            if isinstance(s, dict) and isinstance(s.get("key"), str) \
                    and s.get("scope") in ("chat", "global"):
                yield s["scope"], s["key"], s.get("read") is True, s.get("write") is True

    def computed_state(self, i: int) -> list[tuple[int, str, str, bool, bool]]:
        """(i, scope, pattern, reads, writes) of every state key built at run time."""
        v = self.member("computed_state")
        return [(i, s["scope"], s["key"], s.get("read") is True, s.get("write") is True)
                for s in (v if isinstance(v, list) else ())
                if isinstance(s, dict) and isinstance(s.get("key"), str)
                and s.get("scope") in ("chat", "global")]


#: the facts that name a copy (a repost in another container or post has the same others)
IDENTITY = frozenset({"component_id", "source_sha256", "source_part", "title"})
#: the empty members of a summary's facts, each set kept once (a catalog's facts have few
#: different sets); past this many sets, a summary keeps its own
_EMPTIES: dict[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]] = {}
_EMPTIES_MAX = 4096


def pared(facts: dict[str, Any]) -> tuple[dict[str, Any], tuple[tuple[str, str], ...]]:
    """What a summary keeps of the facts: the members that are not empty (every reader of a
    summary takes a missing member as an empty one; the format's own member always, so the
    facts are never an empty, falsy, dict), and the empty ones as (name, ``repr``) pairs,
    shared, for :func:`facts_content`."""
    kept: dict[str, Any] = {}
    empty = []
    spelled = _EMPTY_REPR.get
    for k, v in facts.items():
        if v or k == "facts":
            kept[k] = v
        else:
            empty.append((k, spelled(type(v)) or repr(v)))
    return kept, shared_empty(tuple(empty))


#: ``repr`` of an empty value of each of these exact types (one a type: a value of it that
#: is empty is the one value, or spelled as it; any other type's is asked of ``repr``)
_EMPTY_REPR: dict[type, str] = {list: "[]", dict: "{}", str: "''", type(None): "None",
                                bool: "False", int: "0"}


def shared_empty(empty: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    """A summary's empty members (:func:`pared`), one tuple for all that are equal (up to
    :data:`_EMPTIES_MAX` different ones)."""
    return kept_once(_EMPTIES, empty, _EMPTIES_MAX)


def facts_content(s: Summary) -> str:
    """What a repost shares: the facts of ``s`` but those naming the copy (its empty
    members included, as the whole facts had them)."""
    f = s.facts.whole() if isinstance(s.facts, Facts) else s.facts or {}
    return repr(sorted([(k, repr(v)) for k, v in f.items() if k not in IDENTITY]
                       + [p for p in s.empty if p[0] not in IDENTITY]))


def summarize_entry(root: str, e: Entry, facts_files: FolderFiles | None = None,
                    store: FactsStore | None = None, found: HeldFacts | None = None
                    ) -> Summary:
    """The :class:`Summary` of one catalog entry (its facts file read, bounded;
    ``facts_files``: the run's reader of ``facts/``, made here when not given; ``store``:
    where its facts go packed, else they are kept as a dict; ``found``: its facts as the
    review's first pass found them, in ``store`` (:meth:`FactsStore.found`): not read
    again)."""
    title: Any
    sid: Any
    if e.label is not None:  # (what the review's first pass read of the document)
        title, sid = e.label[0], e.label[1]
    else:
        title = e.get("projection", "title")
        refs = e.get("provenance", "source_refs")
        sid = refs[0].get("source_id") if isinstance(refs, list) and refs \
            and isinstance(refs[0], dict) else None
    held: dict[str, Any] | Facts | None
    if found is not None:
        held, note, empty = found
    else:
        facts, note, exact = _read_facts(root, e, facts_files)
        kept, empty = (None, ()) if facts is None else pared(facts)
        held = store.facts(kept, exact=exact) if store is not None and kept is not None \
            else kept
    return Summary(e.component_id, e.where(), _shared(title) if isinstance(title, str) else "",
                   e.review_status, e.runtime_status, _shared(e.caps("provides")),
                   _shared(e.caps("conflicts")), held, note, e.version,
                   _shared(sid) if isinstance(sid, str) else "", empty)


def read_facts(root: str, e: Entry, facts_files: FolderFiles | None = None
               ) -> tuple[dict[str, Any] | None, str]:
    """The facts summary ingest wrote for ``e`` and "", or None and why there is none: no
    file, a file that cannot be read (not regular, too large, leading outside the catalog),
    or facts of another source (the document changed)."""
    facts, note, _exact = _read_facts(root, e, facts_files)
    return facts, note


#: what the review's first pass finds of a document's facts (:func:`facts_found`): the pared
#: facts packed (None: no facts), why there are none ("" when there are), the members of
#: :data:`HOT` they keep and their values, the empty members (:func:`pared`)
FoundFacts = tuple[bytes | None, str, tuple[str, ...], tuple[Any, ...],
                   tuple[tuple[str, str], ...]]
#: what a summary holds of them (:meth:`FactsStore.found`): the facts, the note, the empty
#: members
HeldFacts = tuple["Facts | None", str, tuple[tuple[str, str], ...]]


def facts_found(root: str, component_id: str, refs: Any, facts_files: FolderFiles
                ) -> FoundFacts:
    """The facts of a document whose entry has ``component_id`` and whose
    ``provenance.source_refs`` is ``refs``, as :func:`summarize_entry` reads and keeps them,
    packed (what a worker of the review's first pass sends back)."""
    return _found(*_facts_of(root, component_id, refs, facts_files))


def facts_found_many(root: str, wanted: list[tuple[str, Any]], facts_files: FolderFiles
                     ) -> list[FoundFacts]:
    """``[facts_found(root, cid, refs, facts_files) for cid, refs in wanted]``, each file read
    as :func:`facts_found` reads it, the texts parsed together: :func:`fast_json_many` over
    a group of them (its guards run once), a group it does not take in smaller groups, and
    a text alone as :func:`facts_found` parses it (the same value: their contract).  The
    files are read, parsed and packed a group at a time, a group at most :data:`_MANY`
    texts and :data:`GROUP_BYTES` bytes (past them, the group is done before the next file
    is read), so what is held at once is bounded however large the facts files are."""
    out: list[FoundFacts] = []
    group: list[tuple[str, Any, str, bytes | str]] = []
    size = 0
    for cid, refs in wanted:
        name = safe_name(cid) + ".json"
        data = _facts_bytes(facts_files, name)
        group.append((cid, refs, name, data))
        size += len(data) if type(data) is bytes else 0
        if size >= GROUP_BYTES or len(group) >= _MANY:
            out += _found_group(root, group)
            group, size = [], 0
    out += _found_group(root, group)
    return out


#: the bytes of the facts files :func:`facts_found_many` reads and parses together at most
#: (400 files at the 1 MiB bound read at once held 1.7 GB; a catalog's usual facts, a few KB
#: each, fill a group of :data:`_MANY` long before)
GROUP_BYTES = 4 << 20


def _found_group(root: str, group: list[tuple[str, Any, str, bytes | str]]
                 ) -> list[FoundFacts]:
    """:func:`facts_found_many` of one group of files read (each its bytes, or why none)."""
    values = iter(_parsed_many([data for *_, data in group if type(data) is bytes]))
    out: list[FoundFacts] = []
    for cid, refs, name, data in group:
        if isinstance(data, str):  # (no file, or why it is unreadable)
            out.append((None, data, (), (), ()))
            continue
        out.append(_found(*_value_judged(root, name, data, next(values), cid, refs)))
    return out


#: a facts text :func:`_parsed_many` leaves to the exact path
_SLOW: Any = object()
#: the facts texts parsed together at most (then in groups of :data:`_FEW`, then alone)
_MANY, _FEW = 256, 16


def _parsed_many(texts: list[bytes]) -> list[Any]:
    """The value :func:`fast_json` gives of each text, or :data:`_SLOW` where it gives none:
    :func:`fast_json_many` over groups of :data:`_MANY`, a group it refuses again in groups
    of :data:`_FEW`, such a group it refuses text by text."""
    out: list[Any] = []
    for i in range(0, len(texts), _MANY):
        group = texts[i:i + _MANY]
        values = fast_json_many(group)
        if values is not None:
            out += values
            continue
        for k in range(0, len(group), _FEW):
            few = group[k:k + _FEW]
            values = fast_json_many(few)
            if values is None:
                values = [_SLOW if v is None else v[0] for v in map(fast_json, few)]
            out += values
    return out


_NO_FACTS = "no facts file (ingest writes facts/)"


def _facts_bytes(files: FolderFiles, name: str) -> bytes | str:
    """The bytes of the facts file ``name``, else why there are none (a note)."""
    try:
        data = files.read(name, MAX_FACTS_BYTES)
    except RisuError as exc:
        return f"facts file unreadable: {exc.code}"
    return _NO_FACTS if data is None else data


def _found(facts: dict[str, Any] | None, note: str, exact: bool) -> FoundFacts:
    """What :func:`facts_found` sends back of ``facts`` (None: ``note`` says why none)."""
    if facts is None:
        return None, note, (), (), ()
    kept, empty = pared(facts)
    blob, names, values = _packed(kept, exact)
    return blob, note, names, values, empty


def _read_facts(root: str, e: Entry, facts_files: FolderFiles | None
                ) -> tuple[dict[str, Any] | None, str, bool]:
    """:func:`read_facts`, and whether orjson parsed the facts (the fast path)."""
    files = facts_files if facts_files is not None else FolderFiles(root, FACTS_DIR)
    return _facts_of(root, e.component_id, e.get("provenance", "source_refs"), files)


def _facts_of(root: str, component_id: str, refs: Any, files: FolderFiles
              ) -> tuple[dict[str, Any] | None, str, bool]:
    name = safe_name(component_id) + ".json"
    data = _facts_bytes(files, name)
    if isinstance(data, str):  # (no file, or why it is unreadable)
        return None, data, False
    fast = fast_json(data)
    return _value_judged(root, name, data, _SLOW if fast is None else fast[0], component_id,
                         refs)


def _value_judged(root: str, name: str, data: bytes, parsed: Any, component_id: str,
                  refs: Any) -> tuple[dict[str, Any] | None, str, bool]:
    """:func:`_judged` of the facts file ``name`` whose bytes are ``data``: ``parsed`` its
    value as the fast path gave it, or :data:`_SLOW` (then parsed by the exact path)."""
    if parsed is not _SLOW:
        return _judged(parsed, True, component_id, refs)
    path = os.path.join(root, FACTS_DIR, name)
    try:
        value = parse_value(decode_text(data, path), path, "json")
    except RisuError as exc:
        return None, f"facts file unreadable: {exc.code}", False
    return _judged(value, False, component_id, refs)


def _judged(value: Any, exact: bool, component_id: str, refs: Any
            ) -> tuple[dict[str, Any] | None, str, bool]:
    """The facts file's value when it is the current facts of ``component_id`` (whose
    ``source_refs`` are ``refs``), else None and why not; ``exact``: orjson parsed it."""
    if not isinstance(value, dict) or value.get("facts") != FACTS_FORMAT \
            or value.get("component_id") != component_id:
        return None, "facts file is not this component's component-facts-v1", False
    src = refs[0].get("sha256") if isinstance(refs, list) and refs \
        and isinstance(refs[0], dict) else None
    if value.get("source_sha256") != src:
        return None, "facts of another source (re-run ingest)", False
    return value, "", exact


class Names:
    """Name -> the components that have it (in index order, each once), looked up by a name
    or by a wildcard pattern (``*`` for a computed part).  A pattern whose literal head is
    shorter than :data:`PREFIX` is not looked up (it would fit nearly every name); a
    pattern is resolved once (the units ask for the same one again and again), over the
    names that start with its whole head (a range of the sorted names)."""

    def __init__(self) -> None:
        self.table: dict[str, list[int]] = {}
        self._sorted: list[str] = []
        self._memo: dict[str, dict[str, list[int]]] = {}

    def add(self, name: str, i: int) -> None:
        held = self.table.setdefault(name, [])
        if not held or held[-1] != i:
            held.append(i)

    def find(self, pattern: str) -> dict[str, list[int]]:
        if "*" not in pattern:
            got = self.table.get(pattern)
            return {pattern: got} if got else {}
        head = pattern.split("*", 1)[0]
        if len(head) < PREFIX:
            return {}
        found = self._memo.get(pattern)
        if found is None:
            if len(self._sorted) != len(self.table):
                self._sorted = sorted(self.table)
            names = self._sorted
            found = {}
            for k in range(bisect.bisect_left(names, head), len(names)):
                n = names[k]
                if not n.startswith(head):
                    break
                if fits(pattern, n):
                    found[n] = self.table[n]
            self._memo[pattern] = found
        return found


#: the note of a state key a component uses through a greeting's setvar (group chats only)
GROUP_ONLY = "group chats only"


def state_user(u: int) -> tuple[int, bool]:
    """(component, writes) of one use in :attr:`Index.state`."""
    return (u, False) if u >= 0 else (~u, True)


def state_uses(users: int | list[int] | None) -> list[int]:
    """The uses of one key as :attr:`Index.state` holds them: one number, a list of them, or
    none (a key no component names)."""
    if users is None:
        return []
    return [users] if isinstance(users, int) else users


@dataclass
class StateKeys:
    """The state keys the summaries use, each with its users (RV401's index)."""

    #: scope -> key -> its users, each one number (:func:`state_user`): the component's
    #: place, or its complement (``~i``) when it writes the key; the two numbers of a
    #: component are made once, so a use costs one reference; a key one use names holds
    #: the number alone, a list once another names it (:func:`state_uses`: most keys of a
    #: catalog are one component's), and its scope is said once, by the dict it is in
    state: dict[str, dict[str, int | list[int]]] = field(default_factory=dict)
    #: uses of a state key that are not plain reads and writes: (component, reads, writes,
    #: note): a greeting's setvar (group chats only), a key built at run time that fits it
    state_extra: dict[tuple[str, str], list[tuple[int, bool, bool, str]]] = field(
        default_factory=dict)

    @classmethod
    def build(cls, summaries: list[Summary]) -> StateKeys:
        keys = cls()
        computed: list[tuple[int, str, str, bool, bool]] = []
        for i, s in enumerate(summaries):
            writer = ~i
            for scope, key, _r, w in s.state():
                if not key.startswith("toggle_"):
                    keys._add(scope, key, writer if w else i)
            computed += s.computed_state(i)
            for key in s.names("group_chat_writes"):
                if not key.startswith("toggle_"):
                    keys.state_extra.setdefault(("chat", key), []).append(
                        (i, False, True, GROUP_ONLY))
        if computed:
            keys._add_computed(computed)
        return keys

    def _add(self, scope: str, key: str, use: int) -> None:
        at = self.state.get(scope)
        if at is None:
            at = self.state[scope] = {}
        had = at.get(key)
        if had is None:
            at[key] = use
        elif isinstance(had, int):
            at[key] = [had, use]
        else:
            had.append(use)

    def _add_computed(self, computed: list[tuple[int, str, str, bool, bool]]) -> None:
        """State keys built at run time (``p_*``): each pattern is a use of the keys other
        components name that it fits, when its literal head is at least :data:`PREFIX`
        characters and they belong to at most :data:`HUB` components (a pattern that fits
        more says nothing about which)."""
        keys = Names()
        for scope, at in self.state.items():
            for key, users in at.items():
                for u in state_uses(users):
                    keys.add(f"{scope}:{key}", state_user(u)[0])
        for i, scope, pattern, r, w in computed:
            if len(pattern.split("*", 1)[0]) < PREFIX or pattern.startswith("toggle_"):
                continue
            found = keys.find(f"{scope}:{pattern}")
            owners = {o for held in found.values() for o in held}
            if not found or len(owners) > HUB:
                continue
            for name in found:
                self.state_extra.setdefault((scope, name[len(scope) + 1:]), []).append(
                    (i, r, w, f"computed {pattern!r}"))


@dataclass
class Kinds:
    """The other keys the summaries name, each with the components that name it."""

    transforms: dict[str, list[int]] = field(default_factory=dict)
    toggles_declared: dict[str, list[int]] = field(default_factory=dict)
    lore: Names = field(default_factory=Names)  # lorebook entry name -> who carries it
    #: a name a button may call -> who answers it (its manual triggers, its Lua globals)
    button_targets: Names = field(default_factory=Names)
    handlers: list[int] = field(default_factory=list)  # define onButtonClick
    providers: dict[str, list[int]] = field(default_factory=dict)
    conflicters: dict[str, list[int]] = field(default_factory=dict)

    @classmethod
    def build(cls, summaries: list[Summary], part: str) -> Kinds:
        """The kinds with their one ``part`` made (each is made alone, when a unit first
        asks for it, and let go when the unit is done: :meth:`Index.release_kinds`)."""
        kinds = cls()
        add = _KIND_ADDS[part]
        for i, s in enumerate(summaries):
            add(kinds, i, s)
        return kinds


def _transforms(k: Kinds, i: int, s: Summary) -> None:
    for h in s.names("transforms"):
        k.transforms.setdefault(h, []).append(i)


def _toggles_declared(k: Kinds, i: int, s: Summary) -> None:
    for t in s.names("toggles_declared"):
        k.toggles_declared.setdefault(t, []).append(i)


def _lore(k: Kinds, i: int, s: Summary) -> None:
    for name in s.names("lorebook_entries"):
        k.lore.add(name, i)


def _button_targets(k: Kinds, i: int, s: Summary) -> None:
    for name in s.names("button_targets"):
        k.button_targets.add(name, i)


def _handlers(k: Kinds, i: int, s: Summary) -> None:
    if "onButtonClick" in s.names("entry_points"):
        k.handlers.append(i)


def _providers(k: Kinds, i: int, s: Summary) -> None:
    for c in s.provides:
        k.providers.setdefault(c, []).append(i)


def _conflicters(k: Kinds, i: int, s: Summary) -> None:
    for c in s.conflicts:
        k.conflicters.setdefault(c, []).append(i)


#: what each summary adds to each part of :class:`Kinds`
_KIND_ADDS: dict[str, Callable[[Kinds, int, Summary], None]] = {
    "transforms": _transforms, "toggles_declared": _toggles_declared, "lore": _lore,
    "button_targets": _button_targets, "handlers": _handlers, "providers": _providers,
    "conflicters": _conflicters}


#: the parts of :class:`Index` made when first asked, by what makes them
_STATE_PARTS = tuple(f.name for f in fields(StateKeys))
_KIND_PARTS = tuple(f.name for f in fields(Kinds))


class Index:
    """The catalog's summaries indexed by key (linear in the facts).  Each part of the
    index is made when first asked (:class:`StateKeys`, both its parts at once;
    :class:`Kinds`, each part alone; then an attribute like any other), so the lineages and
    their units (first) do not sit on it; the state keys' part is let go once RV401, its
    only reader, is done (:meth:`release_state`), and the other kinds after each unit
    (:meth:`release_kinds`): what a review holds at once is the summaries and one unit's
    parts."""

    # made when first asked (:meth:`__getattr__`): declared, never set on the class
    state: dict[str, dict[str, int | list[int]]]
    state_extra: dict[tuple[str, str], list[tuple[int, bool, bool, str]]]
    transforms: dict[str, list[int]]
    toggles_declared: dict[str, list[int]]
    lore: Names
    button_targets: Names
    handlers: list[int]
    providers: dict[str, list[int]]
    conflicters: dict[str, list[int]]

    def __init__(self, summaries: list[Summary]) -> None:
        self.summaries = summaries
        self.carrier_memo: dict[str, tuple[list[str], frozenset[str]]] = {}
        self.exclusive: frozenset[str] = frozenset()
        #: each summary's lineage (:func:`risutools.catalog.lineage.lineages` sets it):
        #: versions and reposts of one module are not said to share state with each other
        self.kin: list[int] = []

    def __getattr__(self, name: str) -> Any:
        """A part of the index not made yet, made (the state keys' with its other part;
        each of the other kinds alone)."""
        made: Any
        parts: tuple[str, ...]
        if name in _STATE_PARTS:
            made, parts = StateKeys.build(self.summaries), _STATE_PARTS
        elif name in _KIND_PARTS:
            made, parts = Kinds.build(self.summaries, name), (name,)
        else:
            raise AttributeError(name)
        for part in parts:
            setattr(self, part, getattr(made, part))
        return getattr(made, name)

    def related(self, a: int, b: int) -> bool:
        return bool(self.kin) and self.kin[a] == self.kin[b]

    @classmethod
    def build(cls, summaries: Iterable[Summary]) -> Index:
        ix = cls(sorted(summaries, key=lambda s: (s.component_id, s.where)))
        ix.exclusive = exclusive_capabilities()
        return ix

    def made(self) -> tuple[str, ...]:
        """The parts of the index made so far."""
        return tuple(p for p in _STATE_PARTS + _KIND_PARTS if p in vars(self))

    def release_state(self) -> None:
        """Let the state keys' part go (made again if asked again)."""
        for part in _STATE_PARTS:
            vars(self).pop(part, None)

    def release_kinds(self) -> None:
        """Let the other kinds' parts go (each made again if asked again: the review lets
        them go after each unit, so it holds one unit's parts at a time).  The lorebook's
        entries go once the carriers of every load a summary names are found
        (:meth:`carrier_ids`, which each component's risk reads after the units)."""
        if "lore" in vars(self):
            for s in self.summaries:
                for p in s.names("lorebook_loads"):
                    self.carrier_ids(p)
        for part in _KIND_PARTS:
            vars(self).pop(part, None)

    def carriers(self, pattern: str) -> dict[str, list[int]]:
        """Entry name -> the components that carry it, for a lorebook load's name pattern
        (:meth:`Names.find`)."""
        return self.lore.find(pattern)

    def carrier_ids(self, pattern: str) -> tuple[list[str], frozenset[str]]:
        """The component ids that carry entries fitting ``pattern``, sorted, and as a set
        (made once a pattern: each loader's risk shows the first few)."""
        got = self.carrier_memo.get(pattern)
        if got is None:
            idset = frozenset(self.summaries[h].component_id
                              for hs in self.carriers(pattern).values() for h in hs)
            got = self.carrier_memo[pattern] = (sorted(idset), idset)
        return got


class Groups:
    """Disjoint groups of the places ``0 .. n-1`` (a union-find): a group's root is its
    smallest place, paths are halved as they are walked (the lineages, the families)."""

    def __init__(self, n: int) -> None:
        self.parent = list(range(n))

    def root(self, i: int) -> int:
        parent = self.parent
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def join(self, a: int, b: int) -> None:
        ra, rb = self.root(a), self.root(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)

    def members(self) -> dict[int, list[int]]:
        """Each group's places in order, by its root (the groups in their roots' order)."""
        out: dict[int, list[int]] = {}
        for i in range(len(self.parent)):
            out.setdefault(self.root(i), []).append(i)
        return out


#: entry names are bucketed by this many leading characters for wildcard loads
PREFIX = 3
