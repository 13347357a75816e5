"""What the analyser saw in one module: the facts it collects and the events its checks read.

The walk (:func:`risutools.analysis.walk.walk`) reads a module once, section by section, and
records into one :class:`Seen`: facts (hooks, state keys, host calls ...: the
:class:`~risutools.analysis.model.Analysis` is made of them) and events (a field of the wrong
type, code that did not lex, a request to a host, a risky regex pattern ...).  The checks
of scope ``module`` (:mod:`risutools.analysis.checks`) then read it and yield :class:`Hit`.
A check names the event it reads with :func:`reads` (as bandit's ``@checks("Call")`` or
sqlfluff's ``crawl_behaviour``): the analyser calls it only when the walk saw one.

Every event carries ``at``, the walk's clock when it was seen (:meth:`Seen.tick`), and every
hit the ``at`` of its cause: the analyser keeps at most ``MAX_FINDINGS`` findings, the first
ones in walk order, whatever order the checks run in.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple, TypeVar

from risutools.analysis.htmlscan import HtmlScan
from risutools.analysis.js import JsScan
from risutools.analysis.lore_decorators import MAX_DECORATORS
from risutools.analysis.lorecode import LoreFlow, LoreReads
from risutools.analysis.lua import Call, LuaScan
from risutools.analysis.model import MAX_EVIDENCE, Callback, Condition, Fact, StateKey
from risutools.analysis.regexcheck import BacktrackRisk
from risutools.findings import Severity
from risutools.formats.model import Module
from risutools.formats.toggles import Toggle, ToggleParse
from risutools.jsontypes import json_type_name

#: the "trigger" of code kept in lorebook entries (run by the module's triggers)
LOREBOOK_CODE = -1
#: the "trigger" of a call inside an edit listener: RisuAI runs listeners without
#: lowLevelAccess (runLuaEditTrigger), whatever the module or trigger asks for
LISTENER = -2


_F = TypeVar("_F", bound=Callable[..., Any])
#: a check's function -> the attribute of :class:`Seen` it reads (see :func:`reads`)
_READS: dict[Callable[..., Any], str] = {}


def reads(event: str) -> Callable[[_F], _F]:
    """Declare the event a module check reads (an attribute of :class:`Seen`, empty or None
    when the walk saw none): written under ``@check``, it lets the analyser call the check
    only when there is something to read."""

    def wrap(fn: _F) -> _F:
        _READS[fn] = event
        return fn

    return wrap


def event_read_by(fn: Callable[..., Any]) -> str:
    """The attribute of :class:`Seen` that ``fn`` (a module check's function) reads."""
    event = _READS.get(fn)
    if event is None or event not in Seen.EVENTS:
        raise ValueError(f"check function {fn.__name__} reads no event of Seen (@reads)")
    return event


class Hit(NamedTuple):
    """What a check yields: one finding of that check (its default severity unless
    ``severity`` is given), ``at`` the walk's clock of its cause."""

    at: int
    message: str
    evidence: str = ""
    pointer: str = ""
    severity: Severity | None = None


# -- events: plain tuples, the walk's clock first (cheap to make, nothing built at import) ----

#: a place only (code with binary junk, a listenEdit of unknown kind, lowLevelAccess asked
#: for): (at, evidence)
Spot = tuple[int, str]
#: a field of the wrong type: (at, JSON pointer, the type expected ("a list" ...), the JSON
#: type it has, how it was read: "empty", or what RisuAI makes of it)
WrongType = tuple[int, str, str, str, str]
#: a code field that is not a string: (at, where, JSON pointer, the JSON type it has)
CodeNotText = tuple[int, str, str, str]
#: Lua that could not be read to its end: (at, where, the ``(line, message)`` of each
#: problem, in line order)
Unlexed = tuple[int, str, list[tuple[int, str]]]
#: names looked up at run time: (at, through what (``_G[...]``, ``rawget on _G``),
#: evidence)
DynamicLookup = tuple[int, str, str]
#: a network ``request``: (at, its literal host (None or "" when the address is computed),
#: evidence)
Request = tuple[int, "str | None", str]
#: a regex script's ``type`` RisuAI does not document: (at, the script's index, the type)
RegexType = tuple[int, int, Any]
#: letters of a regex ``flag`` field RisuAI does not know: (at, the script's index, them)
RegexFlags = tuple[int, int, list[str]]
#: a regex pattern the backtracking check found risks in or could not check: (at, where,
#: its risks, (why, offset) when it did not parse, whether it is nested past Python's
#: recursion limit)
PatternChecked = tuple[int, str, list[BacktrackRisk], "tuple[str, int] | None", bool]
#: a text RisuAI shows as HTML that holds script of some kind: (at, where, its scan)
HtmlSeen = tuple[int, str, HtmlScan]
#: an asset: (at, where, its declared type, the type its first bytes show, its size)
AssetSeen = tuple[int, str, "str | None", "str | None", "int | None"]
#: a reader anomaly (``risutools.formats``): (at, code, message, where)
AnomalySeen = tuple[int, str, str, str]
#: the module's legacy JavaScript (``cjs``): (at, its length, its scan)
LegacyJs = tuple[int, int, JsScan]
#: the toggle declarations (a text that is not blank): (at, the field read, the parse)
TogglesSeen = tuple[int, str, ToggleParse]
#: the MCP server the module connects to: (at, its kind (``remote``, ``internal``,
#: ``local``), its host, built-in address or command line as shown)
McpSeen = tuple[int, str, str]
#: a preset's endpoint: (at, the field, its host, the preset's ``aiModel``)
Endpoint = tuple[int, str, str, str]
#: a field RisuAI never reads that holds code: (at, its key, its length)
UnusedField = tuple[int, str, int]


class Loads:
    """The dynamic loads of the module's Lua, sorted by where their code comes from."""

    __slots__ = ("at", "built", "code_entries", "from_lore", "literal", "reads")

    def __init__(self, at: int) -> None:
        self.at = at
        self.built: list[tuple[str, str]] = []  # (loader, evidence): built at run time
        self.literal: dict[str, list[str]] = {}  # loader -> evidence: called with a literal
        self.from_lore: list[tuple[str, str]] = []  # (loader, evidence): lorebook text
        self.reads: LoreReads | None = None  # what the lookups behind ``from_lore`` ask for
        #: the entries that hold Lua, as evidence shows them (the first 8)
        self.code_entries = ""


class Seen:
    """Everything the walk of one module recorded (see the module's docstring)."""

    #: the events, the attributes a check may read (:func:`reads`)
    EVENTS = frozenset({
        "wrong_types", "code_not_text", "binary_code", "unlexed", "dynamic_lookups",
        "unknown_listeners", "requests", "loads", "lorebook_code", "regex_types",
        "regex_flags", "patterns", "script_html", "toggles", "legacy_js", "mcp",
        "privileged_uses", "lla_asked", "assets", "anomalies", "unused", "display_refused",
        "endpoints", "enables", "ignored", "run_triggers"})
    # the walk's clock, its marks and its single events: these defaults until it records one
    clock = 0
    lorebook_code_at = 0  # the clock after the lorebook (RA114)
    lla_at = 0  # the clock at the lowLevelAccess step (RA101)
    reads_lorebook_at_runtime = False
    loads: Loads | None = None
    toggles: TogglesSeen | None = None
    legacy_js: LegacyJs | None = None
    mcp: McpSeen | None = None
    lla_asked: Spot | None = None  # where lowLevelAccess is asked for first
    #: the module ids a preset's moduleIntergration turns on: (at, them)
    enables: tuple[int, list[str]] | None = None
    #: the fields of a .charx's module.risum RisuAI's import drops: (at, them)
    ignored: tuple[int, list[str]] | None = None

    def __init__(self, module: Module) -> None:
        self.module = module
        # -- facts (the Analysis is made of them) ------------------------------------------
        self.caps: dict[str, list[str]] = {}
        self.hooks: dict[str, Fact] = {}
        self.state: dict[tuple[str, str], StateKey] = {}
        self.host_apis: dict[str, Fact] = {}
        self.privileged: dict[str, Fact] = {}
        self.dynamic: dict[str, Fact] = {}
        self.entries: dict[str, Fact] = {}
        self.buttons: dict[str, Fact] = {}
        self.net: dict[str, Fact] = {}
        self.urls: dict[str, Fact] = {}
        self.conditions: list[Condition] = []
        self.counts: dict[str, int] = {}
        self.trigger_types: list[str] = []
        self.trigger_lla: list[int] = []
        self.lorebook_code: list[int] = []  # the entries read as Lua (also an event: RA114)
        self.declared_toggles: list[Toggle] = []
        self.required_toggles: dict[str, Fact] = {}  # toggle keys read, declared elsewhere
        self.unused_fields: dict[str, Fact] = {}  # fields RisuAI never reads holding code
        self.callbacks: list[Callback] = []  # lorebook entries another module calls
        self.code_buttons: dict[str, Fact] = {}  # buttons written in Lua strings
        self.manual_entries: dict[str, Fact] = {}  # names a button calls: trigger or global
        self.unreached: dict[str, Fact] = {}  # code nothing runs (function f, lorebook[i])
        self.computed: dict[tuple[str, str], StateKey] = {}  # keys built at run time
        self.group_writes: dict[str, Fact] = {}  # greeting setvar: group chats only
        # -- what later steps of the walk read ---------------------------------------------
        self.privileged_uses: list[tuple[str, int | None, str]] = []  # (api, trigger, where)
        self.pending_loads: list[tuple[str, Call, str]] = []  # (evidence, call, where)
        self.lua_sources: dict[str, str] = {}  # where -> Lua code (for lore_flow)
        self.flows: dict[str, LoreFlow] = {}  # where -> its lore_flow, made once
        self.scans: dict[str, LuaScan] = {}  # where -> its scan, made before it is read
        self.trigger_lua: list[str] = []  # the triggers' Lua (entries it names are loaded)
        self.risu_btn_seen: list[str] = []  # where risu-btn attributes are
        #: buttons naming a trigger or a Lua global (risu-trigger, {{button}}): (name, where)
        self.named_buttons: list[tuple[str, str]] = []
        #: the global functions the module's Lua defines (RisuAI calls them by name): name
        #: -> where (the last definition in each script that defines it)
        self.lua_globals: dict[str, list[str]] = {}
        self.dead_globals: set[str] = set()  # globals in code nothing of its own reaches
        # -- events (what the checks read) -----------------------------------------------
        self.wrong_types: list[WrongType] = []
        self.code_not_text: list[CodeNotText] = []
        self.binary_code: list[Spot] = []
        self.unlexed: list[Unlexed] = []
        self.dynamic_lookups: list[DynamicLookup] = []
        self.unknown_listeners: list[Spot] = []
        self.requests: list[Request] = []
        self.regex_types: list[RegexType] = []
        self.regex_flags: list[RegexFlags] = []
        self.patterns: list[PatternChecked] = []
        self.script_html: list[HtmlSeen] = []
        self.assets: list[AssetSeen] = []
        self.anomalies: list[AnomalySeen] = []
        self.unused: list[UnusedField] = []
        self._field_events()

    def _field_events(self) -> None:
        """The facts and events of the fields that name places (``walk_fields``) and of
        listeners (made apart from :meth:`__init__` to keep it short)."""
        self.mcp_servers: dict[str, Fact] = {}  # host, built-in server or local command
        self.namespaces: dict[str, Fact] = {}  # the id that turns the module on too
        self.enabled_modules: dict[str, Fact] = {}  # ids a preset's moduleIntergration names
        self.ignored_fields: dict[str, Fact] = {}  # a .charx's module.risum fields dropped
        self.endpoints: list[Endpoint] = []  # a preset's URL fields
        #: each (pattern, flags) checked once (walk_text.read_pattern), and how many were
        #: past the module's bound
        self.pattern_memo: dict[tuple[str, str], Any] = {}
        self.patterns_unchecked = 0
        #: steps the module's pattern checks took so far (walk_text.MODULE_PATTERN_STEPS)
        self.pattern_steps = 0
        #: calls an editDisplay listener makes that RisuAI refuses there: (at, api, where)
        self.display_refused: list[tuple[int, str, str]] = []
        self.run_triggers: list[tuple[int, str, str]] = []  # (at, name, where): see RA107
        #: lorebook decorators (lore_decorators): each one used, the entries whose text goes
        #: into a part of the prompt or another entry, and the decorator lines left to read
        self.lore_decorators: dict[str, Fact] = {}
        self.lore_injections: dict[str, Fact] = {}
        self.decorator_budget = MAX_DECORATORS

    # -- recording -------------------------------------------------------------------------
    def tick(self) -> int:
        """The walk's clock, one step on: the ``at`` of the event being recorded."""
        self.clock += 1
        return self.clock

    def cap(self, name: str, where: str) -> None:
        ev = self.caps.setdefault(name, [])
        if len(ev) < 20 and where not in ev:
            ev.append(where)

    def hook(self, name: str, where: str) -> None:
        self.hooks.setdefault(name, Fact(name)).add(where)
        self.cap(name, where)

    def hook_all(self, names: tuple[str, ...], where: str) -> None:
        """Each of ``names`` (an entry point RisuAI calls on several events)."""
        for name in names:
            self.hook(name, where)

    @staticmethod
    def fact(table: dict[str, Fact], name: str, where: str) -> None:
        table.setdefault(name, Fact(name)).add(where)

    def state_use(self, scope: str, key: str, mode: str, where: str) -> None:
        sk = self.state.setdefault((scope, key), StateKey(key, scope))
        if mode == "read":
            sk.add_read(where)
        else:
            sk.add_write(where)

    def computed_use(self, scope: str, pattern: str, mode: str, where: str) -> None:
        sk = self.computed.setdefault((scope, pattern), StateKey(pattern, scope))
        if mode == "read":
            sk.add_read(where)
        else:
            sk.add_write(where)

    def wrong_type(self, pointer: str, expected: str, value: Any, read_as: str = "empty"
                   ) -> None:
        self.wrong_types.append((self.tick(), pointer, expected, json_type_name(value),
                                 read_as))


def entry_seen(fact: Fact, evs: list[str], targets: list[str]) -> None:
    """Each button, then each of its targets, as one sighting each (the fact's evidence is
    capped: once it is full, the targets are counted without being looked at again)."""
    for ev in evs:
        fact.add(ev)
        if len(fact.evidence) >= MAX_EVIDENCE:
            fact.count += len(targets)
            continue
        for where in targets:
            fact.add(where)
