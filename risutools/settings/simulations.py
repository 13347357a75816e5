"""Which reference simulation a component's capabilities select (``replay.md`` section 4):
any of ``context.token_budget``, ``context.anchor_continuity``, ``context.protected_roles``
in ``capabilities.provides`` selects the context cutter (with the monitor observing);
otherwise ``context.monitor`` selects the monitor alone; otherwise none applies.

One table for ``replay run`` (what it runs) and the digest check MC203 (a report referenced
as a document's replay evidence must be of the simulation the document selects: a
``replay monitor`` run is no evidence for a context cutter, whose invariants it never
checked)."""

from __future__ import annotations

from typing import Any

CUTTER_CAPS = ("context.anchor_continuity", "context.protected_roles", "context.token_budget")
MONITOR_CAP = "context.monitor"
SIM_CUTTER = "context-cutter"
SIM_MONITOR = "context-monitor"


def select_simulation(doc: dict[str, Any]) -> str | None:
    """The simulation ``doc``'s ``capabilities.provides`` selects (None: none applies)."""
    caps = doc.get("capabilities")
    provides = caps.get("provides") if isinstance(caps, dict) else None
    return simulation_of(provides if isinstance(provides, list) else [])


def simulation_of(provides: list[Any]) -> str | None:
    """The simulation a ``capabilities.provides`` list selects (None: none applies; an item
    that is no string names nothing)."""
    names = {p for p in provides if isinstance(p, str)}
    if names & set(CUTTER_CAPS):
        return SIM_CUTTER
    if MONITOR_CAP in names:
        return SIM_MONITOR
    return None
