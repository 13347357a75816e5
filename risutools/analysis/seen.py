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
from dataclasses import dataclass, field
from typing import Any, NamedTuple, TypeVar

from risutools.analysis.cbs import HtmlScan
from risutools.analysis.js import JsScan
from risutools.analysis.lorecode import LoreReads
from risutools.analysis.lua import Call
from risutools.analysis.model import Condition, Fact, StateKey
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


# -- events ---------------------------------------------------------------------------------

class Spot(NamedTuple):
    """An event that is only a place (code with binary junk, a listenEdit of unknown kind)."""

    at: int
    evidence: str


class WrongType(NamedTuple):
    """A field of the wrong type (read as empty)."""

    at: int
    pointer: str
    expected: str  # "a list", "a string" ...
    got: str  # the JSON type it has


class CodeNotText(NamedTuple):
    """A code field that is not a string."""

    at: int
    where: str
    pointer: str
    got: str


class Unlexed(NamedTuple):
    """Lua that could not be read to its end: the lexer's and scanner's ``(line, message)``."""

    at: int
    where: str
    errors: list[tuple[int, str]]


class DynamicLookup(NamedTuple):
    """Names looked up at run time: ``through`` is ``_G[...]`` or ``rawget on _G``."""

    at: int
    through: str
    evidence: str


class Request(NamedTuple):
    """A network ``request``: its literal host, or None when the address is computed."""

    at: int
    host: str | None
    evidence: str


class RegexType(NamedTuple):
    """A regex script's ``type`` that RisuAI does not document."""

    at: int
    script: int  # its index in ``regex``
    rtype: Any


class RegexFlags(NamedTuple):
    """Letters of a regex ``flag`` field RisuAI does not know."""

    at: int
    script: int
    unknown: list[str]


class PatternChecked(NamedTuple):
    """A regex pattern the backtracking check found risks in, or could not check
    (``parse_error``: (why, offset); ``too_deep``: nested past Python's recursion limit)."""

    at: int
    where: str
    risks: list[BacktrackRisk]
    parse_error: tuple[str, int] | None = None
    too_deep: bool = False


class HtmlSeen(NamedTuple):
    """A text RisuAI shows as HTML, scanned, that holds script of some kind."""

    at: int
    where: str
    scan: HtmlScan


class AssetSeen(NamedTuple):
    """One asset: its declared type, the type its first bytes show, its size."""

    at: int
    where: str
    declared: str | None
    sniffed: str | None
    size: int | None


class AnomalySeen(NamedTuple):
    """A reader anomaly (``risutools.formats``) passed to the analysis."""

    at: int
    code: str
    message: str
    where: str


class LegacyJs(NamedTuple):
    """The module's legacy JavaScript (``cjs``), scanned."""

    at: int
    size: int
    scan: JsScan


class TogglesSeen(NamedTuple):
    """The toggle declarations (a text that is not blank), parsed (``field``: the field they
    were read from)."""

    at: int
    field: str
    parse: ToggleParse


class McpSeen(NamedTuple):
    """The MCP server the module connects to."""

    at: int
    host: str


class UnusedField(NamedTuple):
    """A field RisuAI never reads that holds code."""

    at: int
    key: str
    size: int


@dataclass
class Loads:
    """The dynamic loads of the module's Lua, sorted by where their code comes from."""

    at: int
    built: list[tuple[str, str]] = field(default_factory=list)  # (loader, evidence)
    literal: dict[str, list[str]] = field(default_factory=dict)  # loader -> evidence
    from_lore: list[tuple[str, str]] = field(default_factory=list)  # (loader, evidence)
    reads: LoreReads | None = None  # what the lookups behind ``from_lore`` ask for
    #: the entries that hold Lua, as evidence shows them (the first 8)
    code_entries: str = ""


class Seen:
    """Everything the walk of one module recorded (see the module's docstring)."""

    #: the events, the attributes a check may read (:func:`reads`)
    EVENTS = frozenset({
        "wrong_types", "code_not_text", "binary_code", "unlexed", "dynamic_lookups",
        "unknown_listeners", "requests", "loads", "lorebook_code", "regex_types",
        "regex_flags", "patterns", "script_html", "toggles", "legacy_js", "mcp",
        "privileged_uses", "lla_asked", "assets", "anomalies", "unused"})
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
        # -- what later steps of the walk read ---------------------------------------------
        #: (api, trigger, where); also an event (RA101)
        self.privileged_uses: list[tuple[str, int | None, str]] = []
        self.pending_loads: list[tuple[str, Call, str]] = []  # (evidence, call, where)
        self.lua_sources: dict[str, str] = {}  # where -> Lua code (for lore_flow)
        self.risu_btn_seen: list[str] = []  # where risu-btn attributes are
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

    @staticmethod
    def fact(table: dict[str, Fact], name: str, where: str) -> None:
        table.setdefault(name, Fact(name)).add(where)

    def state_use(self, scope: str, key: str, mode: str, where: str) -> None:
        sk = self.state.setdefault((scope, key), StateKey(key, scope))
        if mode == "read":
            sk.add_read(where)
        else:
            sk.add_write(where)

    def wrong_type(self, pointer: str, expected: str, value: Any) -> None:
        self.wrong_types.append(WrongType(self.tick(), pointer, expected,
                                          json_type_name(value)))
