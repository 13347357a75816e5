"""``analyze(module) -> Analysis``: facts and findings, without running anything.

Two steps, as a linter runs its rules: :func:`~risutools.analysis.walk.walk` reads the
module once and records what it sees (:class:`~risutools.analysis.seen.Seen`); then the
checks of scope ``module`` (:mod:`risutools.analysis.checks`) read that record and yield
their findings (a check is called only when the event it reads is there).  See
``docs/analysis.md`` for the findings table (ids are stable).
The analyser never raises on module content: fields of the wrong type are read as empty and
reported (RA801); code that does not lex is read as far as it goes and reported (RA601).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import cache
from typing import Any

from risutools.analysis.checks import module_checks
from risutools.analysis.lorecode import show_pattern
from risutools.analysis.model import MAX_EVIDENCE, Analysis, Capability, Fact
from risutools.analysis.seen import Hit, Seen, event_read_by
from risutools.analysis.walk import manual_triggers, walk
from risutools.analysis.walk_lua import KEEP_CALLS as _KEEP_CALLS  # noqa: F401 (bench reads it)
from risutools.datatables import data_table
from risutools.findings import Finding, Severity, sorted_findings
from risutools.formats.model import Module

#: at most this many findings per module: the first ones in walk order (see seen.Hit)
MAX_FINDINGS = 5000


def analyze(module: Module) -> Analysis:
    """Static facts and findings about ``module`` (never executes, never raises on content)."""
    seen = walk(module)
    return _result(seen, _findings(seen))


#: a module check as the analyser runs it: (its place in id order, id, default severity,
#: its function)
_Run = tuple[int, str, Severity, Callable[[Seen], Iterable[Hit]]]


@cache
def _checks() -> tuple[tuple[str, tuple[_Run, ...]], ...]:
    """The module checks in id order, grouped by the event they read (the registry is read
    once)."""
    by_event: dict[str, list[_Run]] = {}
    for rank, c in enumerate(module_checks()):
        if c.run is None:
            raise ValueError(f"module check {c.id} has no function")
        by_event.setdefault(event_read_by(c.run), []).append((rank, c.id, c.severity, c.run))
    return tuple((event, tuple(runs)) for event, runs in by_event.items())


def _findings(seen: Seen) -> list[Finding]:
    """Every check's findings over ``seen`` (a check is called when the event it reads is
    there): at most MAX_FINDINGS, the first ones in walk order (a check yields its hits in
    walk order, so no check gives more than that), sorted."""
    events = vars(seen)
    found: list[tuple[int, int, Finding]] = []
    for event, runs in _checks():
        if not events.get(event):
            continue
        for rank, cid, severity, run in runs:
            for n, hit in enumerate(run(seen), 1):
                found.append((hit.at, rank, Finding(
                    cid, hit.severity or severity, hit.message, pointer=hit.pointer,
                    evidence=hit.evidence)))
                if n >= MAX_FINDINGS:
                    break
    if not found:
        return []
    if len(found) > MAX_FINDINGS:
        found.sort(key=lambda t: (t[0], t[1]))  # walk order; in one step, id order
        del found[MAX_FINDINGS:]
    return sorted_findings([f for _, _, f in found])


def vocabulary() -> dict[str, dict[str, Any]]:
    """The capability vocabulary (``risutools/data/capabilities.yaml``)."""
    data = data_table("capabilities.yaml")
    caps = data.get("capabilities") if isinstance(data, dict) else None
    return caps if isinstance(caps, dict) else {}


@cache
def _vocabulary_order() -> dict[str, int]:
    """Capability name -> its place in the vocabulary (built once: the file is read once)."""
    return {name: i for i, name in enumerate(vocabulary())}


def _capabilities(s: Seen) -> tuple[list[Capability], list[Capability], dict[str, int]]:
    """The capabilities seen, split into requires and provides, in vocabulary order (only
    vocabulary names are ever emitted); and the vocabulary order itself."""
    vocab = vocabulary()
    order = _vocabulary_order()
    requires: list[Capability] = []
    provides: list[Capability] = []
    for name in sorted(s.caps, key=lambda n: (order.get(n, 10**6), n)):
        entry = vocab.get(name)
        if not isinstance(entry, dict):
            continue
        capability = Capability(name, str(entry.get("kind", "requires")), list(s.caps[name]))
        (provides if capability.kind == "provides" else requires).append(capability)
    return requires, provides, order


def _result(s: Seen, findings: list[Finding]) -> Analysis:
    """The :class:`Analysis` of what the walk recorded (sorted, deterministic)."""
    requires, provides, order = _capabilities(s)
    hooks = [s.hooks[n] for n in sorted(s.hooks, key=lambda n: (order.get(n, 10**6), n))]
    toggles = list(s.declared_toggles)
    counts = dict(s.counts)
    counts["toggles"] = len(toggles)
    for k in ("lorebook", "regex", "triggers", "assets", "lua_bytes", "cjs_bytes", "cbs_tags"):
        counts.setdefault(k, 0)
    m = s.module
    return Analysis(
        name=m.name,
        component_type=str(m.component_type),
        hooks=hooks,
        state=[s.state[k] for k in sorted(s.state)],
        host_apis=_sorted_facts(s.host_apis),
        privileged=_sorted_facts(s.privileged),
        dynamic_code=_sorted_facts(s.dynamic),
        entry_points=_sorted_facts(s.entries),
        button_callbacks=_sorted_facts(s.buttons),
        toggles=toggles,
        requires=requires,
        provides=provides,
        network_hosts=_sorted_facts(s.net),
        url_hosts=_sorted_facts(s.urls),
        conditions=list(s.conditions),
        trigger_types=s.trigger_types,
        low_level_access=s.lla_asked is not None,
        low_level_triggers=list(s.trigger_lla),
        lorebook_code=list(s.lorebook_code),
        required_toggles=_sorted_facts(s.required_toggles),
        unused_code_fields=_sorted_facts(s.unused_fields),
        callbacks=list(s.callbacks),
        code_buttons=_sorted_facts(s.code_buttons) if s.code_buttons else [],
        manual_entries=_sorted_facts(s.manual_entries) if s.manual_entries else [],
        unreached=_sorted_facts(s.unreached) if s.unreached else [],
        computed_state=[s.computed[k] for k in sorted(s.computed)],
        group_chat_writes=_sorted_facts(s.group_writes) if s.group_writes else [],
        mcp_servers=_sorted_facts(s.mcp_servers),
        namespace=_sorted_facts(s.namespaces),
        enabled_modules=_sorted_facts(s.enabled_modules),
        ignored_fields=_sorted_facts(s.ignored_fields),
        lore_decorators=_sorted_facts(s.lore_decorators),
        lore_injections=_sorted_facts(s.lore_injections),
        counts=counts,
        findings=findings,
        lorebook_reads=_lore_reads(s),
        lorebook_reads_unresolved=len(s.loads.reads.unresolved)
        if s.loads is not None and s.loads.reads is not None else 0,
        risu_buttons=list(s.risu_btn_seen[:MAX_EVIDENCE]),
        button_names=sorted({name for name, _ in s.named_buttons}),
        button_targets=sorted(set(manual_triggers(s)) | set(s.lua_globals) | s.dead_globals),
    )


def _lore_reads(s: Seen) -> list[str]:
    """The entry names the module's lorebook loads ask for, as shown (``*``: computed)."""
    if s.loads is None or not s.loads.from_lore or s.loads.reads is None:
        return []
    return sorted({show_pattern(p) for p in s.loads.reads.patterns})


def _sorted_facts(table: dict[str, Fact]) -> list[Fact]:
    return [table[k] for k in sorted(table)] if table else []
