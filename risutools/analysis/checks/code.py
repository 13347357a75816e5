"""RA1xx: what the module's code may do: privileged calls and lowLevelAccess, the network,
edit listeners, code loaded or looked up at run time, Lua kept in the lorebook.

Each check reads what the walk saw (:class:`~risutools.analysis.seen.Seen`): the privileged
calls, requests and listeners :mod:`risutools.analysis.walk_lua` recorded, and the loads it
sorted (:func:`~risutools.analysis.walk_lua.sort_loads`).
"""

from __future__ import annotations

from collections.abc import Iterator

from risutools.analysis.lorecode import show_pattern
from risutools.analysis.seen import LISTENER, Hit, Seen, reads
from risutools.checks.registry import check
from risutools.printable import quoted


@check("RA101", "warning", "module", "privileged-without-lla")
@reads("privileged_uses")
def ra101(seen: Seen) -> Iterator[Hit]:
    """A privileged API is used without `lowLevelAccess` (the module's, or the card's for a
    card and its embedded module: a trigger's own flag is replaced by it), or inside a
    `listenEdit` callback (RisuAI runs edit listeners without it): RisuAI refuses it silently.

    Why: The module will not do what it appears to do, and nothing tells the user why.

    Fix: Set lowLevelAccess on the module (or the card), or stop calling the privileged API
    (from a listener: call it from onStart/onOutput/onButtonClick).
    """
    module_lla = seen.lla_asked is not None
    reported: set[tuple[str, bool]] = set()
    for api, trig, where in seen.privileged_uses:
        in_listener = trig == LISTENER
        allowed = not in_listener and module_lla
        if allowed or (api, in_listener) in reported:
            continue
        reported.add((api, in_listener))
        if in_listener:
            yield Hit(seen.lla_at, f"uses the privileged API {api} inside a listenEdit "
                      "callback; RisuAI runs edit listeners without lowLevelAccess and will "
                      "refuse it silently (call it from onStart/onOutput/onButtonClick instead)",
                      where)
        else:
            yield Hit(seen.lla_at, f"uses the privileged API {api} without lowLevelAccess; "
                      "RisuAI will refuse it silently (set lowLevelAccess or remove the call)",
                      where)


@check("RA102", "warning", "module", "lla-unused")
@reads("lla_asked")
def ra102(seen: Seen) -> Iterator[Hit]:
    """`lowLevelAccess` is requested but no privileged API is used (over-asking). Not given
    when a `runtrigger`/`v2RunTrigger` effect runs: lowLevelAccess lifts its recursion limit
    of 10 (RisuAI's triggers.ts), which may be what the module asks it for.

    Why: A module should ask for no more power than it uses; users grant it on trust.

    Fix: Turn lowLevelAccess off.
    """
    asked, loads = seen.lla_asked, seen.loads
    if asked is None or seen.privileged_uses or seen.counts.get("run_trigger_effects"):
        return
    # code built at run time (RA110, RA112, RA113) may be what needs it
    unseen = bool(seen.dynamic_lookups) or (loads is not None and bool(
        loads.built or loads.from_lore))
    at, evidence = asked
    yield Hit(at, "asks for lowLevelAccess but uses no privileged API "
              + ("in the code this analysis can read; it also runs code built at run time, "
                 "which may need it" if unseen else "(over-asking); turn lowLevelAccess off"),
              evidence)


@check("RA103", "warning", "module", "network-literal")
@reads("requests")
def ra103(seen: Seen) -> Iterator[Hit]:
    """A network `request` to a literal URL (the host is named).

    Why: Module code that talks to the network can send chat content elsewhere; reviewers need
    to see where.

    Fix: Check that the host is expected and say why in the curator notes.
    """
    for at, host, evidence in seen.requests:
        if host:
            yield Hit(at, f"makes a network request to {host}", evidence)


@check("RA104", "warning", "module", "network-computed")
@reads("requests")
def ra104(seen: Seen) -> Iterator[Hit]:
    """A network `request` to an address computed at run time.

    Why: The destination cannot be known without running the code, so it cannot be reviewed.

    Fix: Use a literal URL, or explain in the curator notes where the address comes from.
    """
    for at, host, evidence in seen.requests:
        if not host:
            yield Hit(at, "makes a network request to an address computed at run time", evidence)


@check("RA105", "info", "module", "listen-edit-unknown")
@reads("unknown_listeners")
def ra105(seen: Seen) -> Iterator[Hit]:
    """`listenEdit` with an event name that is not a known literal.

    Why: The hook cannot be identified statically, so its capability is not inferred.

    Fix: Pass one of editRequest, editDisplay, editInput, editOutput as a literal.
    """
    for at, evidence in seen.unknown_listeners:
        yield Hit(at, "listenEdit is called with an event name that is not a literal the "
                  "analyser knows; the hook it sets is unknown", evidence)



@check("RA106", "warning", "module", "refused-in-display-listener")
@reads("display_refused")
def ra106(seen: Seen) -> Iterator[Hit]:
    """A host call that needs a safe id (chat edits, alerts, `reloadDisplay`, `getTokens`,
    `upsertLocalLoreBook` ...) is made inside a `listenEdit("editDisplay", ...)` listener:
    RisuAI gives a display listener only a display key and refuses the call silently.

    Why: RisuAI's `runScripted` (scriptings.ts) puts the access key of an `editDisplay` run in
    `ScriptingEditDisplayIds` only; every API that checks `ScriptingSafeIds` (api.ts) returns
    at once, so the call does nothing and nothing tells the user why.

    Fix: Make the call from onOutput, onButtonClick or another listener; a display listener
    should only return the text to show (and may read and set chat variables).
    """
    reported: set[str] = set()
    for at, api, where in seen.display_refused:
        if api in reported:
            continue
        reported.add(api)
        yield Hit(at, f"calls {api} inside an editDisplay listener; RisuAI gives display "
                  "listeners no safe id and will refuse it silently (call it from onOutput "
                  "or onButtonClick instead)", where)

@check("RA107", "info", "module", "trigger-run-by-name")
@reads("run_triggers")
def ra107(seen: Seen) -> Iterator[Hit]:
    """A trigger runs triggers by name (a `runtrigger`/`v2RunTrigger` effect, a `/trigger`
    command): RisuAI runs the manual triggers whose comment is the name in every enabled
    component (the card's and every module's), and every Lua trigger with the name as its
    mode, which calls the Lua global of that name.

    Why: The triggers that run may be another component's; what the call does depends on
    what else is enabled.

    Fix: Nothing to fix when the name is this module's own trigger; give it a name other
    components are unlikely to use.
    """
    done: set[str] = set()
    for at, name, evidence in seen.run_triggers:
        if name not in done:
            done.add(name)
            what = ("a name computed at run time" if name == "*"
                    else f"the name {quoted(name)}")
            yield Hit(at, f"runs the triggers of {what}: RisuAI runs every enabled "
                      "component's manual triggers of that name (and the Lua global of it)",
                      evidence)


@check("RA110", "warning", "module", "dynamic-load")
@reads("loads")
def ra110(seen: Seen) -> Iterator[Hit]:
    """`load`/`loadstring`/`require`/`dofile` of code built at run time (mentions lorebook reads
    when the module reads lorebooks).

    Why: Code built at run time cannot be read statically; what it does is unknown until it
    runs.

    Fix: Ship the code as written Lua instead of building it at run time.
    """
    loads = seen.loads
    if loads is None:
        return
    extra = ""
    if seen.lorebook_code:
        extra = ("; the module keeps Lua in its lorebook (analysed as code: "
                 f"{loads.code_entries}), which may be what it loads")
    elif seen.reads_lorebook_at_runtime:
        extra = ("; the module also reads lorebook entries at run time, so the code may be "
                 "kept in a lorebook")
    for name, ev in loads.built:
        yield Hit(loads.at, f"{name} runs code built at run time, which this analysis cannot "
                  f"see{extra}", ev)


@check("RA111", "info", "module", "dynamic-load-literal")
@reads("loads")
def ra111(seen: Seen) -> Iterator[Hit]:
    """A dynamic loader is called with a literal.

    Why: The loaded code is visible but still passes through a loader reviewers must follow by
    hand.

    Fix: Inline the code, or note what the literal loads.
    """
    loads = seen.loads
    if loads is None:
        return
    for name, evs in sorted(loads.literal.items()):
        stubs = "; a bundler's module stubs" if name == "require" and len(evs) > 1 else ""
        yield Hit(loads.at, f"{name} is called with a literal argument ({len(evs)} "
                  f"call{'s' if len(evs) != 1 else ''}{stubs})", evs[0])


@check("RA112", "warning", "module", "dynamic-lookup")
@reads("dynamic_lookups")
def ra112(seen: Seen) -> Iterator[Hit]:
    """Dynamic name lookup: `_ENV[...]`, `_G[...]`, `rawget/rawset(_G, ...)`, `_G`/`_ENV` used
    as a value (assigned, passed, iterated, in a table: `{__index = _G}`), `debug` (but
    `debug.traceback`), `getfenv`/`setfenv`, `package` (`package.loaded._G`). A key that
    names a host function (literal, or folded from constants: `_G["req" .. "uest"]`) is
    said (`here request`), and the use is recorded as a direct one.

    Why: A name looked up at run time can reach any host function, so static facts may be
    incomplete (every global then counts as reached, and a call of a field named like a host
    function as a host call).

    Fix: Call functions by their names.
    """
    for at, through, evidence in seen.dynamic_lookups:
        yield Hit(at, f"names are looked up dynamically through {through}, so the functions it "
                  "reaches cannot be known statically", evidence)


@check("RA113", "warning", "module", "load-from-lorebook")
@reads("loads")
def ra113(seen: Seen) -> Iterator[Hit]:
    """`load` of code read from a lorebook entry (`load(getLoreBooks(...)...)`, also through
    locals, loops and helper functions); says which entry names the lookups ask for (`*` where
    computed), those the module does not carry, and those it cannot resolve.

    Why: Code stored as lorebook text can change without the module changing, and escapes
    review.

    Fix: Keep the code in the module's Lua.
    """
    loads = seen.loads
    if loads is None or not loads.from_lore or loads.reads is None:
        return
    reads = loads.reads
    name, ev = loads.from_lore[0]
    own = [str(e.get("comment")) for e in seen.module.lorebook if isinstance(e, dict)]
    foreign = reads.foreign(own)
    matched = reads.matching(own)
    notes = ""
    if reads.patterns and matched:
        shown = ", ".join(f"`{show_pattern(p)}`" for p in reads.patterns[:4])
        notes += f"; the names it reads ({shown}) fit {len(matched)} entr" + (
            "y" if len(matched) == 1 else "ies")
    if reads.unresolved:
        notes += (f"; {len(reads.unresolved)} lookup(s) use names computed at run time "
                  f"(first at {reads.unresolved[0]}), which this analysis cannot resolve")
    head = (f"{name} runs code read from lorebook entries at run time "
            f"({len(loads.from_lore)} call(s))")
    if foreign:
        listed = ", ".join(quoted(n[:40]) for n in foreign[:5])
        yield Hit(loads.at, f"{head}; it reads entries this module does not carry ({listed}): "
                  f"code kept in another module's lorebook, not covered by this analysis{notes}",
                  ev)
    elif seen.lorebook_code:
        yield Hit(loads.at, f"{head}; the entries that hold Lua ({loads.code_entries}) are "
                  f"analysed as code{notes}", ev, severity="info")
    else:
        yield Hit(loads.at, f"{head}; no entry reads as Lua, so that code is not covered by "
                  f"this analysis{notes}", ev)


@check("RA114", "info", "module", "lorebook-code")
@reads("lorebook_code")
def ra114(seen: Seen) -> Iterator[Hit]:
    """The module runs Lua kept in its lorebook entries (loaded at run time with `load`, or entries
    packed as `*.lua` files); those entries are analysed as code.

    Why: Code kept as lorebook text is easy to miss when reviewing a module; its hooks, state
    and privileged calls count as the module's own.

    Fix: Nothing to fix: review the listed entries as code.
    """
    code = seen.lorebook_code
    if not code:
        return
    shown = ", ".join(f"lorebook[{i}]" for i in code[:8])
    more = f" and {len(code) - 8} more" if len(code) > 8 else ""
    yield Hit(seen.lorebook_code_at, f"runs Lua kept in {len(code)} lorebook "
              f"entr{'y' if len(code) == 1 else 'ies'} ({shown}{more}), loaded at run time; "
              "analysed as code", f"lorebook[{code[0]}]")
