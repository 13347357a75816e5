"""The review's interaction findings (RV401-RV408): how components act on each other across
the whole catalog, candidates included.  One unit each, scope ``catalog``; each reads the
:class:`~risutools.catalog.interactions.Index` (``unit(index)``) and yields
:class:`~risutools.catalog.relations.Relation` rows, every one read off one key's list of
components (never all pairs of components).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from risutools.catalog.interactions import HUB, Index, state_user, state_uses
from risutools.catalog.relations import Relation
from risutools.checks.registry import check
from risutools.pathnames import fits_any

#: the review's catalog pass hands RV4xx units the interaction index
INTERACTIONS = 4
_SHOWN = 6  # names shown in a message (the row keeps them all)


def _ids(ix: Index, idx: list[int] | tuple[int, ...]) -> str:
    names = [ix.summaries[i].component_id for i in idx[:_SHOWN]]
    more = f" and {len(idx) - _SHOWN} more" if len(idx) > _SHOWN else ""
    return ", ".join(names) + more


def _keys(keys: list[str] | tuple[str, ...]) -> str:
    shown = ", ".join(repr(k) for k in keys[:_SHOWN])
    return shown + (f" and {len(keys) - _SHOWN} more" if len(keys) > _SHOWN else "")


@check("RV401", "info", "catalog", "shared-state")
def shared_state(ix: Index) -> Iterator[Relation]:
    """Two components use the same chat or global variable, and at least one of them writes it
    (the keys are listed; a key shared by many components is one row).

    Why: A variable one component writes and another reads or writes couples the two: a
    change in one changes what the other sees, and their order of writing matters.

    Fix: Nothing to fix by itself: review the two together, and rename a key that is shared
    by accident."""
    pairs: dict[tuple[int, int], list[str]] = {}
    extra = ix.state_extra
    for scope in sorted(set(ix.state) | {sc for sc, _ in extra}):
        # a key one use alone names relates nothing (held as a number): the others sorted,
        # with the keys of the other uses (a list, not a set: each key is once in each)
        at = ix.state.get(scope, {})
        keys = [k for k, users in at.items() if type(users) is list]
        keys += [k for sc, k in extra if sc == scope and type(at.get(k)) is not list]
        keys.sort()
        for key in keys:
            yield from _one_key(ix, scope, key, pairs)
    ix.release_state()  # (this unit alone reads it: the rest of the run holds it no longer)
    for (w, o), keys in sorted(pairs.items()):
        yield Relation("shared-state", "info", w, (o,), tuple(keys),
                       f"writes {len(keys)} variable(s) that {ix.summaries[o].component_id} "
                       f"also uses: {_keys(keys)}")


def _one_key(ix: Index, scope: str, key: str,
             pairs: dict[tuple[int, int], list[str]]) -> Iterator[Relation]:
    """One state key: its row when more than HUB components use it, else its label added
    to each pair of a writer and another user."""
    users = [state_user(u) for u in state_uses(ix.state.get(scope, {}).get(key))]
    extra = ix.state_extra.get((scope, key), [])
    comps, writers = _who(users, extra)
    if len(comps) < 2 or not writers:
        return
    label = f"{scope}:{key}"
    if len(comps) > HUB:
        yield Relation("shared-state", "info", writers[0], tuple(c for c in comps
                                                                if c != writers[0]),
                       (label,), f"{len(comps)} components use the {scope} variable "
                       f"{key!r}; {len(writers)} write it")
        return
    notes = _notes(users, extra)
    for w in writers:
        for o in comps:
            if o != w and (o not in writers or w < o) and not ix.related(w, o):
                note = notes.get((w, True)) or notes.get((o, o in writers))
                pairs.setdefault((w, o), []).append(f"{label} ({note})" if note else label)


def _who(users: list[tuple[int, bool]], extra: list[tuple[int, bool, bool, str]]
         ) -> tuple[list[int], list[int]]:
    """The components that use a key, and those that write it, each sorted (``users``:
    (component, writes) of each use by name; ``extra``: the other uses)."""
    return (sorted({i for i, _ in users} | {u[0] for u in extra}),
            sorted({i for i, w in users if w} | {u[0] for u in extra if u[2]}))


def _notes(users: list[tuple[int, bool]], extra: list[tuple[int, bool, bool, str]]
           ) -> dict[tuple[int, bool], str]:
    """(component, as a writer) -> how it uses the key when it does so only otherwise than
    by name (``users``: (component, writes) of each use by name): through a greeting
    (group chats only) or a key built at run time."""
    if not extra:
        return {}
    plain = {i for i, _ in users}
    plain_writers = {i for i, w in users if w}
    out: dict[tuple[int, bool], str] = {}
    for i, _, w, note in extra:
        if w and i not in plain_writers:
            out.setdefault((i, True), note)
        if i not in plain:
            out.setdefault((i, False), note)
    return out


@check("RV402", "info", "catalog", "edit-order")
def edit_order(ix: Index) -> Iterator[Relation]:
    """Several components transform the same edit hook (editInput, editOutput, editRequest or
    editDisplay), so what each sees depends on the order RisuAI runs them in.

    Why: Transforms of one hook run in a chain; enabling two that rewrite the same text can
    undo or double each other's work.

    Fix: Check the pair together, or keep one of them off while the other is on."""
    for hook, comps in sorted(ix.transforms.items()):
        if len(comps) < 2:
            continue
        yield Relation("edit-order", "info", comps[0], tuple(comps[1:]), (hook,),
                       f"{len(comps)} components transform {hook}: {_ids(ix, comps)}")


@check("RV403", "info", "catalog", "lorebook-dependency")
def lorebook_dependency(ix: Index) -> Iterator[Relation]:
    """A component loads code from a lorebook entry that only another component carries (the
    names RA113 reports, resolved across the catalog).

    Why: The loaded code is reviewed with the module that carries it, and the loader does
    not work without it: the two are one family.

    Fix: Review and enable them together; the family lists who depends on whom."""
    popular: dict[str, list[int]] = {}  # a pattern more than HUB components carry
    for i, s in enumerate(ix.summaries):
        own = set(s.names("lorebook_entries"))
        deps: dict[int, list[str]] = {}
        for pattern in s.names("lorebook_loads"):
            if fits_any(pattern, own):
                continue
            found = ix.carriers(pattern)
            if _many(h for hs in found.values() for h in hs):
                popular.setdefault(pattern, []).append(i)
                continue
            for name, holders in found.items():
                for h in holders:
                    if h != i:
                        deps.setdefault(h, []).append(name)
        for h, names in sorted(deps.items()):
            yield Relation("lorebook-dependency", "info", i, (h,), tuple(sorted(set(names))),
                           f"loads code from lorebook entries only {ix.summaries[h].component_id}"
                           f" carries: {_keys(sorted(set(names)))}", dependency=True)
    for pattern, loaders in sorted(popular.items()):
        holders = sorted({h for hs in ix.carriers(pattern).values() for h in hs})
        yield _hub("lorebook-dependency", loaders, holders, pattern,
                   f"{len(loaders)} component(s) load code from lorebook entries {pattern!r}, "
                   f"which {len(holders)} components carry: {_ids(ix, holders)}")


@check("RV404", "warning", "catalog", "lorebook-missing")
def lorebook_missing(ix: Index) -> Iterator[Relation]:
    """A component whose code loads lorebook text as code looks up a lorebook entry that no
    component of the catalog carries (the names RA113 reports).

    Why: What it loads is not in the catalog: nobody reviewed it, and without it the
    component fails.

    Fix: Add the module that carries the entry to the catalog, or drop the component."""
    for i, s in enumerate(ix.summaries):
        own = s.names("lorebook_entries")
        missing = [p for p in s.names("lorebook_loads")
                   if not p.startswith("*") and not ix.carriers(p)
                   and not fits_any(p, own)]
        if missing:
            yield Relation("lorebook-missing", "warning", i, (), tuple(missing),
                           "looks up lorebook entries no component of the catalog carries, "
                           f"in code that loads lorebook text as code: {_keys(missing)}")


@check("RV405", "info", "catalog", "toggle-dependency")
def toggle_dependency(ix: Index) -> Iterator[Relation]:
    """A component reads a toggle (``toggle_<key>``) that only another component declares.

    Why: RisuAI merges the toggles of every enabled module: the reader's setting is shown
    and switched only while the declaring module is enabled.

    Fix: Enable them together (they are one family)."""
    popular: dict[str, list[int]] = {}  # a toggle more than HUB components declare
    for i, s in enumerate(ix.summaries):
        own = set(s.names("toggles_declared"))
        deps: dict[int, list[str]] = {}
        for t in s.names("toggles_read"):
            if t in own:
                continue
            declarers = ix.toggles_declared.get(t, ())
            if _many(declarers):
                popular.setdefault(t, []).append(i)
                continue
            for d in declarers:
                if d != i:
                    deps.setdefault(d, []).append(t)
        for d, keys in sorted(deps.items()):
            yield Relation("toggle-dependency", "info", i, (d,), tuple(keys),
                           f"reads toggles {ix.summaries[d].component_id} declares: "
                           f"{_keys(keys)}", dependency=True)
    for t, readers in sorted(popular.items()):
        declarers = sorted(set(ix.toggles_declared[t]))
        yield _hub("toggle-dependency", readers, declarers, t,
                   f"{len(readers)} component(s) read the toggle {t!r}, which "
                   f"{len(declarers)} components declare: {_ids(ix, declarers)}")


@check("RV406", "warning", "catalog", "toggle-unsatisfied")
def toggle_unsatisfied(ix: Index) -> Iterator[Relation]:
    """A component reads a toggle (``toggle_<key>``) that no component of the catalog declares.

    Why: No switch for it is ever shown, so the value is always empty and the branch that
    reads it never changes (often a typo, or a module missing from the catalog).

    Fix: Declare the toggle (customModuleToggle), fix the key, or add the module that
    declares it."""
    for i, s in enumerate(ix.summaries):
        missing = [t for t in s.names("toggles_read") if t not in ix.toggles_declared]
        if missing:
            yield Relation("toggle-unsatisfied", "warning", i, (), tuple(
                f"toggle_{t}" for t in missing), "reads toggles no component of the catalog "
                f"declares: {_keys([f'toggle_{t}' for t in missing])}")


@check("RV407", "info", "catalog", "button-handler")
def button_handler(ix: Index) -> Iterator[Relation]:
    """A component shows ``risu-btn`` buttons (in its HTML, or written by its Lua) but defines
    no ``onButtonClick``: their clicks reach the handler of another enabled module, the one
    it already depends on (for its lorebook code or its toggles) when there is one; or its
    buttons call by name (``risu-trigger``, ``{{button}}``) a manual trigger or Lua function
    that only another component defines (the values and names are listed).

    Why: The buttons do nothing unless the handling module is enabled too.

    Fix: Enable the handling module with it (they are one family)."""
    handlers = set(ix.handlers)
    popular: dict[str, list[int]] = {}  # a name more than HUB components answer
    for i, s in enumerate(ix.summaries):
        yield from _named_buttons(ix, i, s.names("button_names"), popular)
        if s.number("risu_buttons") <= 0 or i in handlers:
            continue
        called = set(s.names("button_names"))
        values = tuple(sorted({v for k in ("button_callbacks", "code_buttons")
                               for v in s.names(k)} - called))
        keys, shown = (values, f" ({_keys(values)})") if values else (("onButtonClick",), "")
        near = sorted(handlers & _needs(ix, i))
        if near:
            yield Relation("button-handler", "info", i, tuple(near), keys,
                           f"shows risu-btn buttons{shown} whose clicks reach onButtonClick "
                           f"of {_ids(ix, near)}", dependency=True)
        elif not handlers:
            yield Relation("button-handler", "info", i, (), keys,
                           f"shows risu-btn buttons{shown}, and no component of the catalog "
                           "defines onButtonClick")
    for name, callers in sorted(popular.items()):
        answer = sorted({h for hs in ix.button_targets.find(name).values() for h in hs})
        yield _hub("button-handler", callers, answer, name,
                   f"{len(callers)} component(s) show buttons that call {name!r}, which "
                   f"{len(answer)} components define: {_ids(ix, answer)}")


def _named_buttons(ix: Index, i: int, names: list[str],
                   popular: dict[str, list[int]]) -> Iterator[Relation]:
    """The rows of one component's buttons that call a name it does not define itself:
    one row for each component that defines some of them (a manual trigger or a Lua global
    of that name; RisuAI runs every enabled module's)."""
    if not names:
        return
    s = ix.summaries[i]
    own = s.names("manual_entries") + s.names("button_targets")
    deps: dict[int, list[str]] = {}
    for name in names:
        if fits_any(name, own):
            continue
        found = ix.button_targets.find(name)
        others = [h for hs in found.values() for h in hs if h != i]
        if _many(others):
            popular.setdefault(name, []).append(i)
            continue
        for h in others:
            deps.setdefault(h, []).append(name)
    for h, called in sorted(deps.items()):
        keys = tuple(sorted(set(called)))
        yield Relation("button-handler", "info", i, (h,), keys,
                       f"shows buttons that call {_keys(keys)}, defined by "
                       f"{ix.summaries[h].component_id} (a manual trigger or a Lua function "
                       "of that name)", dependency=True)


def _needs(ix: Index, i: int) -> set[int]:
    """The components ``i`` loads lorebook code from or reads toggles of."""
    s = ix.summaries[i]
    out: set[int] = set()
    for p in s.names("lorebook_loads"):
        found = ix.carriers(p).values()
        if not _many(h for hs in found for h in hs):  # many carriers: it says not which
            out.update(h for hs in found for h in hs)
    for t in s.names("toggles_read"):
        declarers = ix.toggles_declared.get(t, ())
        if not _many(declarers):
            out.update(declarers)
    out.discard(i)
    return out


def _many(components: Iterable[int]) -> bool:
    """Whether more than :data:`HUB` components are named (a popular key: one row for the
    key, no row per pair; stops counting past HUB)."""
    seen: set[int] = set()
    for c in components:
        seen.add(c)
        if len(seen) > HUB:
            return True
    return False


def _hub(kind: str, sources: list[int], others: list[int], key: str,
         message: str) -> Relation:
    """The one row of a popular key: the first source, with every other component the key
    relates as its targets (linear in them); not a dependency (a key many components use
    says nothing about which one another needs)."""
    rest = tuple(sorted((set(sources[1:]) | set(others)) - {sources[0]}))
    return Relation(kind, "info", sources[0], rest, (key,), message)


@check("RV408", "warning", "catalog", "capability-conflict")
def capability_conflict(ix: Index) -> Iterator[Relation]:
    """Two components of the catalog (candidates included) provide the same exclusive
    capability, or one conflicts with what the other provides: they must never be active
    together.

    Why: The activation gates refuse the second one; seen here, before review, the curator
    picks one.

    Fix: Keep one of them, or record which one to use in the curator's notes."""
    for cap, provs in sorted(ix.providers.items()):
        if cap in ix.exclusive and len(provs) > 1:
            yield Relation("capability-conflict", "warning", provs[0], tuple(provs[1:]),
                           (cap,), f"{len(provs)} components provide the exclusive capability "
                           f"{cap!r}: {_ids(ix, provs)}")
    for cap, haters in sorted(ix.conflicters.items()):
        provs = ix.providers.get(cap, [])
        if _many(provs):
            rest = tuple(sorted((set(haters[1:]) | set(provs)) - {haters[0]}))
            yield Relation("capability-conflict", "warning", haters[0], rest, (cap,),
                           f"{len(haters)} component(s) conflict with {cap!r}, which "
                           f"{len(provs)} components provide: {_ids(ix, provs)}")
            continue
        for i in haters:
            others = [p for p in provs if p != i]
            if others:
                yield Relation("capability-conflict", "warning", i, tuple(others), (cap,),
                               f"conflicts with {cap!r}, which {_ids(ix, others)} provide(s)")
