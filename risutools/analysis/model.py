"""The typed result of analysing one module (:class:`Analysis`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

from risutools.datatables import data_table
from risutools.findings import Finding, sorted_findings
from risutools.formats.toggles import Toggle
from risutools.printable import scrub


class Hook(NamedTuple):
    """One row of the hook table (``hook:`` of a hook in ``risutools/data/capabilities.yaml``):
    the capability, the word documents use, its tag, and what reaches it in RisuAI."""

    capability: str
    word: str
    tag: str
    trigger_types: tuple[str, ...]
    regex_types: tuple[str, ...]
    listen_edit: str | None


def _load_hooks() -> dict[str, Hook]:
    caps = data_table("capabilities.yaml")["capabilities"]
    out: dict[str, Hook] = {}
    for name, entry in caps.items():
        row = entry.get("hook") if isinstance(entry, dict) else None
        if isinstance(row, dict):
            out[name] = Hook(name, str(row["word"]), str(row["tag"]),
                             tuple(row.get("trigger_types") or ()),
                             tuple(row.get("regex_types") or ()), row.get("listen_edit"))
    return out


#: the one hook table, in vocabulary order (capability -> row)
HOOKS: dict[str, Hook] = _load_hooks()
#: RisuAI trigger type -> hook capability
TRIGGER_TYPE_HOOKS: dict[str, str] = {t: h.capability for h in HOOKS.values()
                                      for t in h.trigger_types}
#: RisuAI regex script type -> hook capability
REGEX_TYPE_HOOKS: dict[str, str] = {t: h.capability for h in HOOKS.values()
                                    for t in h.regex_types}
#: listenEdit kind -> hook capability
LISTEN_EDIT_HOOKS: dict[str, str] = {h.listen_edit: h.capability for h in HOOKS.values()
                                     if h.listen_edit}
#: hook capability -> the word documents use (editRequest, start, manual ...)
HOOK_WORDS: dict[str, str] = {h.capability: h.word for h in HOOKS.values()}
#: hook capability -> tag (edit-request, chat-start, buttons ...)
HOOK_TAGS: dict[str, str] = {h.capability: h.tag for h in HOOKS.values()}


#: at most this many evidence locations are kept per fact (the total is counted)
MAX_EVIDENCE = 20


@dataclass
class Fact:
    """A named fact with where it was seen (locations only, never code)."""

    name: str
    evidence: list[str] = field(default_factory=list)
    count: int = 0  # total sightings (evidence is capped at MAX_EVIDENCE)

    def add(self, where: str) -> None:
        self.count += 1
        if len(self.evidence) < MAX_EVIDENCE and where not in self.evidence:
            self.evidence.append(where)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "evidence": list(self.evidence), "count": self.count}


@dataclass
class StateKey:
    """A variable the module reads or writes (scope ``chat`` or ``global``)."""

    key: str
    scope: str  # chat | global
    reads: list[str] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)
    read_count: int = 0
    write_count: int = 0

    def add_read(self, where: str) -> None:
        self.read_count += 1
        if len(self.reads) < MAX_EVIDENCE and where not in self.reads:
            self.reads.append(where)

    def add_write(self, where: str) -> None:
        self.write_count += 1
        if len(self.writes) < MAX_EVIDENCE and where not in self.writes:
            self.writes.append(where)

    def to_dict(self) -> dict[str, Any]:
        return {"key": self.key, "scope": self.scope, "reads": list(self.reads),
                "writes": list(self.writes), "read_count": self.read_count,
                "write_count": self.write_count}


@dataclass
class Capability:
    """A capability the module requires or provides, with its evidence."""

    name: str
    kind: str  # requires | provides
    evidence: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "evidence": list(self.evidence)}


@dataclass
class Callback:
    """A lorebook entry holding Lua that another module loads and calls (LightBoard's
    backend loads ``<identifier>.lb.onOutput`` ...): its index, its name, the loader
    (``""`` when unknown) and the entry names that loader reads (a pattern, ``*`` for the
    module's identifier); it is not a hook of this module."""

    entry: int
    name: str
    loader: str = ""
    pattern: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"entry": self.entry, "name": self.name, "loader": self.loader,
                "pattern": self.pattern}


@dataclass(frozen=True)
class Condition:
    """A trigger condition in words-ready form (no code)."""

    trigger: int
    type: str  # var | exists | chatindex | other
    var: str = ""
    operator: str = ""
    value: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"trigger": self.trigger, "type": self.type, "var": self.var,
                "operator": self.operator, "value": self.value}


@dataclass
class Analysis:
    """Everything the analyser knows about one module (deterministic ``to_dict``)."""

    name: str
    component_type: str
    hooks: list[Fact] = field(default_factory=list)  # name = capability (hook.edit_request...)
    state: list[StateKey] = field(default_factory=list)
    host_apis: list[Fact] = field(default_factory=list)  # RisuAI host functions called
    privileged: list[Fact] = field(default_factory=list)
    dynamic_code: list[Fact] = field(default_factory=list)
    entry_points: list[Fact] = field(default_factory=list)  # onStart, onInput, onOutput
    button_callbacks: list[Fact] = field(default_factory=list)
    toggles: list[Toggle] = field(default_factory=list)
    requires: list[Capability] = field(default_factory=list)
    provides: list[Capability] = field(default_factory=list)
    network_hosts: list[Fact] = field(default_factory=list)  # hosts of request(...) URLs
    url_hosts: list[Fact] = field(default_factory=list)  # hosts of any literal URL
    conditions: list[Condition] = field(default_factory=list)
    trigger_types: list[str] = field(default_factory=list)  # per trigger ("" when unreadable)
    low_level_access: bool = False
    low_level_triggers: list[int] = field(default_factory=list)
    lorebook_code: list[int] = field(default_factory=list)  # entries that hold Lua it runs
    #: toggles read (``toggle_<key>``) that this module does not declare: RisuAI merges the
    #: toggles of every enabled module, so another module (or the preset) must declare them
    required_toggles: list[Fact] = field(default_factory=list)
    #: top-level fields RisuAI never reads that hold code (e.g. ``lua``): dead, never run
    unused_code_fields: list[Fact] = field(default_factory=list)
    #: lorebook entries another module loads and calls (not hooks of this module)
    callbacks: list[Callback] = field(default_factory=list)
    #: buttons Lua code writes in its strings (risu-btn, risu-trigger, CBS buttons,
    #: LightBoard's ``risu_btn``): the value, ``*`` for each part computed at run time
    code_buttons: list[Fact] = field(default_factory=list)
    #: names a button calls (``risu-trigger="Name"``, ``{{button::label::Name}}``) that are a
    #: manual trigger or a Lua global of this module: evidence the button, then the target
    manual_entries: list[Fact] = field(default_factory=list)
    #: code nothing runs: a function no entry point reaches (``function f``, evidence: its
    #: definition, then the calls in it, which count nowhere else) or a lorebook entry of
    #: Lua nothing loads (``lorebook[i]``)
    unreached: list[Fact] = field(default_factory=list)
    #: state keys built at run time: the key as a pattern (``*`` for what is computed)
    computed_state: list[StateKey] = field(default_factory=list)
    #: chat variables a card greeting sets with CBS: RisuAI runs them only in group chats
    #: (a 1:1 chat shows and sends the greeting without running setvar)
    group_chat_writes: list[Fact] = field(default_factory=list)
    #: the MCP server: its host, a built-in server (``internal:fs``) or a local command
    #: (``stdio: 'command args'``, cut short)
    mcp_servers: list[Fact] = field(default_factory=list)
    #: the module's ``namespace``: enabling that id turns this module on too
    namespace: list[Fact] = field(default_factory=list)
    #: the module ids a preset's ``moduleIntergration`` turns on
    enabled_modules: list[Fact] = field(default_factory=list)
    #: the fields of a .charx's module.risum RisuAI's import drops (never run)
    ignored_fields: list[Fact] = field(default_factory=list)
    #: lorebook decorators used (``@@depth``, ``@@inject_at`` ...; ``name (unknown)`` for
    #: one RisuAI does not know), and where an entry's text goes instead of the lorebook's
    #: place (``append prompt:main``, ``replace lorebook:Name``)
    lore_decorators: list[Fact] = field(default_factory=list)
    lore_injections: list[Fact] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    #: the lorebook entry names the Lua loads code from (``load(getLoreBooks(...))``), as
    #: patterns (``*`` where computed), and how many lookups it could not resolve; read by the
    #: catalog review (which module carries them), not part of :meth:`to_dict`
    lorebook_reads: list[str] = field(default_factory=list)
    lorebook_reads_unresolved: int = 0
    #: where ``risu-btn`` buttons are (their clicks reach an ``onButtonClick``); not in to_dict
    risu_buttons: list[str] = field(default_factory=list)
    #: the names its buttons call (``risu-trigger``, CBS ``{{button}}``, also written by Lua;
    #: ``*`` where computed) and the names a button may call here (its manual triggers'
    #: names, its Lua globals): what relates one module's buttons to another's triggers in
    #: the catalog review; not in to_dict
    button_names: list[str] = field(default_factory=list)
    button_targets: list[str] = field(default_factory=list)

    # -- lookups ---------------------------------------------------------------------
    def requires_names(self) -> list[str]:
        return [c.name for c in self.requires]

    def provides_names(self) -> list[str]:
        return [c.name for c in self.provides]

    def hook_names(self) -> list[str]:
        return [h.name for h in self.hooks]

    def state_key(self, key: str, scope: str = "chat") -> StateKey | None:
        for s in self.state:
            if s.key == key and s.scope == scope:
                return s
        return None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = scrub(self._to_dict())
        return out

    def _to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "component_type": self.component_type,
            "counts": dict(sorted(self.counts.items())),
            "low_level_access": self.low_level_access,
            "low_level_triggers": list(self.low_level_triggers),
            "lorebook_code": list(self.lorebook_code),
            "trigger_types": list(self.trigger_types),
            "hooks": [h.to_dict() for h in self.hooks],
            "entry_points": [h.to_dict() for h in self.entry_points],
            "button_callbacks": [h.to_dict() for h in self.button_callbacks],
            "state": [s.to_dict() for s in self.state],
            "host_apis": [h.to_dict() for h in self.host_apis],
            "privileged_apis": [h.to_dict() for h in self.privileged],
            "dynamic_code": [h.to_dict() for h in self.dynamic_code],
            "toggles": [t.to_dict() for t in self.toggles],
            "required_toggles": [f.to_dict() for f in self.required_toggles],
            "unused_code_fields": [f.to_dict() for f in self.unused_code_fields],
            "conditions": [c.to_dict() for c in self.conditions],
            "capabilities": {
                "requires": [c.to_dict() for c in self.requires],
                "provides": [c.to_dict() for c in self.provides],
            },
            "network_hosts": [h.to_dict() for h in self.network_hosts],
            "url_hosts": [h.to_dict() for h in self.url_hosts],
            **self._new_facts(),
            "findings": [f.to_dict() for f in sorted_findings(self.findings)],
        }

    def _new_facts(self) -> dict[str, Any]:
        """The facts of issue 22, each only when there is one (the view of a module without
        them is as it was)."""
        out: dict[str, Any] = {}
        if self.callbacks:
            out["callbacks"] = [c.to_dict() for c in self.callbacks]
        if self.code_buttons:
            out["code_buttons"] = [f.to_dict() for f in self.code_buttons]
        if self.manual_entries:
            out["manual_entries"] = [f.to_dict() for f in self.manual_entries]
        if self.unreached:
            out["unreached"] = [f.to_dict() for f in self.unreached]
        if self.computed_state:
            out["computed_state"] = [s.to_dict() for s in self.computed_state]
        if self.group_chat_writes:
            out["group_chat_writes"] = [f.to_dict() for f in self.group_chat_writes]
        for key, facts in (("mcp_servers", self.mcp_servers), ("namespace", self.namespace),
                           ("enabled_modules", self.enabled_modules),
                           ("ignored_fields", self.ignored_fields),
                           ("lore_decorators", self.lore_decorators),
                           ("lore_injections", self.lore_injections)):
            if facts:
                out[key] = [f.to_dict() for f in facts]
        return out
