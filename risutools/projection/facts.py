"""A component's facts summary (``component-facts-v1``): the few analysis facts the catalog
review relates across components and shows with every row, written by ``ingest`` next to the
documents (``facts/<component_id>.json``).

A document (``matrix-component-v1``) describes a component in sentences; it has no room for
the analyser's structured facts.  The review needs them to relate components to each other
(who writes a chat variable another reads, who carries the lorebook entry another loads) and
to show the risk of each one.  The summary holds names and flags only (never code, never a
pattern the module carries): state keys, hooks, toggles, lorebook entry names, hosts,
privileged API names, the analysis findings and what the analysis could not read.
"""

from __future__ import annotations

import re
from typing import Any

from risutools.analysis.checks.code import ra110, ra112, ra113
from risutools.analysis.checks.legacy_js import ra502
from risutools.analysis.checks.unreadable import ra601, ra602
from risutools.analysis.model import HOOKS, Analysis
from risutools.formats.model import Module
from risutools.printable import scrub
from risutools.settings.catalog import FACTS_FORMAT

#: the hooks whose listeners and scripts transform what passes (their order matters)
EDIT_HOOKS = tuple(h.capability for h in HOOKS.values() if h.listen_edit)
#: at most this many names per list (a module with more is summarised by its first ones)
MAX_NAMES = 200
#: analysis findings that say the analysis could not read everything: (rule, caveat)
COVERAGE = {
    ra110.id: "code built at run time is loaded (not read)",
    ra112.id: "names are looked up dynamically (the functions reached are not known)",
    ra113.id: "code is loaded from lorebook entries",
    ra502.id: "legacy JavaScript builds code at run time",
    ra601.id: "code that does not lex was read only as far as it goes",
    ra602.id: "a code field is not text",
}


def summarize(module: Module, analysis: Analysis, doc: dict[str, Any]) -> dict[str, Any]:
    """The facts summary of the component ``doc`` projected from ``module``."""
    proj = doc.get("projection")
    title = proj.get("title") if isinstance(proj, dict) else None
    ref = _first_ref(doc)
    out: dict[str, Any] = {
        "facts": FACTS_FORMAT,
        "component_id": doc.get("component_id"),
        "component_version": doc.get("component_version"),
        "title": title if isinstance(title, str) and title else module.name,
        "module_id": module.id,
        "module_name": module.name,
        "source_sha256": ref.get("sha256"),
        "source_part": str(ref.get("source_version", "")).rsplit("!", 1)[-1],
        **_risk(analysis),
        **_links(module, analysis),
    }
    result: dict[str, Any] = scrub(out)
    return result


def _risk(analysis: Analysis) -> dict[str, Any]:
    """What a reviewer weighs: privileges, hosts, dynamic code, findings, coverage."""
    return {
        "low_level_access": analysis.low_level_access,
        "privileged_apis": _names(f.name for f in analysis.privileged),
        "hosts": _names(f.name for f in analysis.network_hosts),
        "dynamic_code": _names(f.name for f in analysis.dynamic_code),
        "findings": [{"rule": f.rule, "severity": f.severity, "message": f.message}
                     for f in analysis.findings[:MAX_NAMES]],
        "coverage": sorted({f"{f.rule}: {COVERAGE[f.rule]}" for f in analysis.findings
                            if f.rule in COVERAGE}),
    }


def _links(module: Module, analysis: Analysis) -> dict[str, Any]:
    """What relates the component to others: hooks, state, toggles, lorebook, buttons."""
    toggles_read = sorted({s.key.removeprefix("toggle_") for s in analysis.state
                           if s.key.startswith("toggle_") and s.reads})
    return {
        "hooks": _names(analysis.hook_names()),
        "transforms": _transforms(analysis),
        "entry_points": _names(f.name for f in analysis.entry_points if f.name in ENTRIES),
        "state": [{"key": s.key, "scope": s.scope, "read": bool(s.reads),
                   "write": bool(s.writes)} for s in analysis.state[:MAX_NAMES]],
        "toggles_declared": _names(t.key for t in analysis.toggles),
        "toggles_read": toggles_read[:MAX_NAMES],
        "lorebook_entries": _names(str(e.get("comment") or "") for e in module.lorebook
                                   if isinstance(e, dict) and e.get("comment")),
        "lorebook_loads": analysis.lorebook_reads[:MAX_NAMES],
        "lorebook_loads_unresolved": analysis.lorebook_reads_unresolved,
        "risu_buttons": len(analysis.risu_buttons),
        "button_callbacks": _names(f.name for f in analysis.button_callbacks),
        "provides": _names(c.name for c in analysis.provides),
        **_reader_facts(analysis),
    }


def _reader_facts(analysis: Analysis) -> dict[str, Any]:
    """The facts of what a reader follows (issue 22) that relate modules: buttons Lua
    writes (``code_buttons``), the names buttons call (``button_names``) and those this
    module answers (``manual_entries``: its own buttons'; ``button_targets``: any module's,
    its manual triggers and Lua globals), state keys built at run time
    (``computed_state``), a greeting's writes that run in group chats only
    (``group_chat_writes``), lorebook code another module calls (``callbacks``) and code
    nothing runs (``unreached``)."""
    return {
        "code_buttons": _names(f.name for f in analysis.code_buttons),
        "button_names": _names(analysis.button_names),
        "manual_entries": _names(f.name for f in analysis.manual_entries),
        "button_targets": _names(analysis.button_targets),
        "computed_state": [{"key": s.key, "scope": s.scope, "read": bool(s.reads),
                            "write": bool(s.writes)}
                           for s in analysis.computed_state[:MAX_NAMES]],
        "group_chat_writes": _names(f.name for f in analysis.group_chat_writes),
        "callbacks": _names(c.name for c in analysis.callbacks),
        "unreached": _names(f.name for f in analysis.unreached),
        **_module_links(analysis),
    }


def _module_links(analysis: Analysis) -> dict[str, Any]:
    """What turns modules on, each only when there is one: the module's ``namespace`` (it
    runs whenever that id is enabled), the ids a preset's ``moduleIntergration`` enables,
    and the MCP server (host, built-in server or local command)."""
    out: dict[str, Any] = {}
    for key, facts in (("namespace", analysis.namespace),
                       ("enabled_modules", analysis.enabled_modules),
                       ("mcp_servers", analysis.mcp_servers)):
        if facts:
            out[key] = _names(f.name for f in facts)
    return out


#: the Lua entry points the review relates (onButtonClick: where risu-btn clicks go)
ENTRIES = frozenset({"onButtonClick", "onStart", "onInput", "onOutput"})


def _transforms(analysis: Analysis) -> list[str]:
    """The edit hooks whose text the module may change: reached by a regex script or by code
    (a listener, a Lua entry point), not by a trigger's type alone (an event, not a
    transform)."""
    out = []
    for h in analysis.hooks:
        if h.name in EDIT_HOOKS and any(not _TYPE_ONLY.match(ev) for ev in h.evidence):
            out.append(h.name)
    return [h for h in EDIT_HOOKS if h in out]


_TYPE_ONLY = re.compile(r"trigger\[\d+\]\.type\Z")


def _first_ref(doc: dict[str, Any]) -> dict[str, Any]:
    prov = doc.get("provenance")
    refs = prov.get("source_refs") if isinstance(prov, dict) else None
    if isinstance(refs, list) and refs and isinstance(refs[0], dict):
        return refs[0]
    return {}


def _names(values: Any) -> list[str]:
    return sorted({v for v in values if v})[:MAX_NAMES]
