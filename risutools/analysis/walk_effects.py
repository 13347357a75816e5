"""The walk's reading of a trigger's non-code effects (part of
:func:`risutools.analysis.walk.walk`), driven by ``risutools/data/trigger_effects.yaml``:
which capability each effect type needs, whether RisuAI runs it only with lowLevelAccess,
which of its fields name a chat variable it writes or reads, which become a chat message
(HTML), which hold a pattern RisuAI compiles, and which hold a calculation.

Every string field is also CBS RisuAI evaluates (``risuChatParser``); a variable name that
holds CBS is a key computed at run time (``computed_state``).
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from risutools.analysis.cbs import evaluated
from risutools.analysis.htmlscan import scan_html
from risutools.analysis.regexcheck import parse_flags
from risutools.analysis.seen import Seen
from risutools.analysis.walk_command import read_command
from risutools.analysis.walk_text import read_cbs, read_html, read_pattern, var_use
from risutools.datatables import data_table

#: ``$name`` in a v2Calculate expression reads the chat variable ``name``
_CALC_VAR = re.compile(r"\$([A-Za-z0-9_]{1,200})")
#: what JavaScript's ``.`` does not match (a ``/pattern/`` is read only on one line)
_LINE_ENDS = re.compile("[\n\r\u2028\u2029]")


#: the operators of ``setvar``/``v2SetVar`` that make the new value from the old one
#: (triggers.ts; any other, ``=`` or unknown, writes without using it)
_UPDATES = frozenset({"+=", "-=", "*=", "/=", "%="})


class EffectRow:
    """One row of ``trigger_effects.yaml``."""

    __slots__ = ("calc", "caps", "html", "privileged", "reads", "regex", "regex_if", "stores",
                 "typed", "updates", "writes")

    def __init__(self, row: dict[str, Any]) -> None:
        self.caps: tuple[str, ...] = tuple(row.get("caps") or ())
        self.privileged = bool(row.get("privileged"))
        self.writes: tuple[str, ...] = tuple(row.get("writes") or ())
        self.reads: tuple[str, ...] = tuple(row.get("reads") or ())
        self.updates: tuple[str, ...] = tuple(row.get("updates") or ())
        self.typed: tuple[str, ...] = tuple(row.get("typed") or ())
        self.html: tuple[str, ...] = tuple(row.get("html") or ())
        self.regex: dict[str, str] = dict(row.get("regex") or {})
        self.regex_if: dict[str, str] = dict(row.get("regex_if") or {})
        self.calc: tuple[str, ...] = tuple(row.get("calc") or ())
        self.stores: tuple[str, ...] = tuple(row.get("stores") or ())


@cache
def effect_table() -> dict[str, EffectRow]:
    """Effect type -> its row (read once)."""
    rows = data_table("trigger_effects.yaml")["effects"]
    return {name: EffectRow(row or {}) for name, row in rows.items()}


def privileged_effects() -> frozenset[str]:
    """The effects RisuAI runs only with lowLevelAccess."""
    return frozenset(n for n, r in effect_table().items() if r.privileged)


def is_var(e: dict[str, Any], name: str) -> bool:
    """Field ``name`` is read as a variable name: RisuAI reads ``getVar(text)`` unless the
    field's ``<name>Type`` is ``value`` (``regex`` for a split delimiter)."""
    return e.get(f"{name}Type") not in ("value", "regex")


def read_effect(s: Seen, i: int, where: str, etype: str, e: dict[str, Any]) -> None:
    """A non-code effect: capabilities, privileged use, variables, CBS, HTML, patterns."""
    row = effect_table().get(etype)
    if row is not None:
        for cap in row.caps:
            s.cap(cap, where)
        if row.privileged:
            s.fact(s.privileged, etype, where)
            s.privileged_uses.append((etype, i, where))
    for key in sorted(e):  # RisuAI runs effect values through CBS (risuChatParser)
        text = e[key]
        if key not in ("type", "code") and isinstance(text, str) and "{{" in text:
            read_cbs(s, text, f"{where}.{key}")
    if row is not None:
        _variables(s, where, row, e)
        _texts(s, where, row, e)
        _stored(s, where, row, e)
    _calls(s, where, etype, e)


def _calls(s: Seen, where: str, etype: str, e: dict[str, Any]) -> None:
    """Slash commands (``command``, ``v2Command``: walk_command) and the triggers
    ``runtrigger``/``v2RunTrigger`` run by name (RisuAI passes the field as it is, no CBS;
    lowLevelAccess lifts their recursion limit of 10: triggers.ts)."""
    if etype == "command":
        read_command(s, e.get("value"), where)
    elif etype == "v2Command":
        read_command(s, e.get("value"), where, computed=is_var(e, "value"))
    elif etype in ("runtrigger", "v2RunTrigger"):
        s.counts["run_trigger_effects"] = s.counts.get("run_trigger_effects", 0) + 1
        name = e.get("value" if etype == "runtrigger" else "target")
        if isinstance(name, str) and name:
            s.run_triggers.append((s.tick(), name[:200], where))


def _variables(s: Seen, where: str, row: EffectRow, e: dict[str, Any]) -> None:
    """The variables an effect reads and writes (``updates``: read too when its operator
    makes the new value from the old one, ``+=`` ...)."""
    op = e.get("operator")  # (any JSON value: a list is no key of a set)
    updates = row.updates if isinstance(op, str) and op in _UPDATES else ()
    for mode, fields in (("read", row.reads + updates), ("write", row.writes)):
        for name in fields:
            value = e.get(name)
            if isinstance(value, str) and value.strip():
                var_use(s, value, mode, where)
    for name in row.typed:
        value = e.get(name)
        if isinstance(value, str) and value.strip() and is_var(e, name):
            var_use(s, value, "read", where)


def _stored(s: Seen, where: str, row: EffectRow, e: dict[str, Any]) -> None:
    """The text an effect writes into a chat variable (``stores``), read for RA301-RA305 as
    a Lua string is (``{{getvar}}`` may show it; its buttons and hosts are not facts): as
    written with ``=`` (another operator stores a number), and a typed field only when it
    is a value, not a variable's name; the fields' texts joined, as v2ConcatString stores
    them."""
    if row.updates and e.get("operator") != "=":
        return
    texts = [(name, value) for name in row.stores if isinstance(value := e.get(name), str)
             and value and not (name in row.typed and is_var(e, name))]
    if texts:  # (joined: v2ConcatString stores its two sources as one text)
        scan = scan_html("".join(value for _name, value in texts), unescape=True)
        if scan.flagged():
            s.script_html.append((s.tick(), f"{where}.{texts[0][0]}", scan))


def _regex_now(row: EffectRow, name: str, e: dict[str, Any]) -> bool:
    """Whether field ``name`` is a pattern in this effect (``regex_if``: only when another
    field has a value: v2QuickSearchChat's ``condition`` is ``regex`` ...)."""
    cond = row.regex_if.get(name)
    if cond is None:
        return True
    other, _, want = cond.partition("=")
    return e.get(other) == want


def _pattern(row: EffectRow, e: dict[str, Any], value: str, flags: str) -> tuple[str, str]:
    """The pattern a field holds and its flag letters (see ``regex:`` in
    trigger_effects.yaml): flags RisuAI gives itself (``=i``), a text written
    ``/pattern/flags`` (a slash, the pattern on one line, a slash, letters of ``gimuy``;
    else the whole text is the pattern: v2SplitString), or the flags field's text (none
    when that field names a variable: its value is not known here)."""
    if flags.startswith("="):
        return value, flags[1:]
    if flags == "/":
        body, slash, letters = value[1:].rpartition("/")
        if value.startswith("/") and slash and body and not _LINE_ENDS.search(body) \
                and not letters.strip("gimuy"):
            return body, letters
        return value, ""
    flag = e.get(flags)
    if not isinstance(flag, str) or (flags in row.typed and is_var(e, flags)):
        return value, ""
    return value, flag if _verbatim(row, e, flags) else parse_flags(flag)[0]


def _verbatim(row: EffectRow, e: dict[str, Any], flags: str) -> bool:
    """Whether the flags of a field's pattern are its flags field's text as written, which
    RisuAI gives ``new RegExp`` (a letter it refuses throws: the effect never runs that
    pattern); not when that text holds CBS (evaluated first) or names a variable."""
    flag = e.get(flags)
    return flags[:1] not in ("=", "/") and isinstance(flag, str) and "{{" not in flag \
        and not (flags in row.typed and is_var(e, flags))


def _texts(s: Seen, where: str, row: EffectRow, e: dict[str, Any]) -> None:
    """The fields that become a chat message (HTML), hold a pattern or a calculation,
    when they are text (not a variable's name)."""
    for name in row.html:
        value = e.get(name)
        if isinstance(value, str) and value and not (name in row.typed and is_var(e, name)):
            read_html(s, value, f"{where}.{name}")
    for name, flags in row.regex.items():
        value = e.get(name)
        if isinstance(value, str) and value and not (
                name in row.typed and is_var(e, name)) and _regex_now(row, name, e):
            # (a tag may be evaluated to nothing: `(a+)+{{blank}}`)
            pattern, letters = _pattern(row, e, evaluated(value), flags)
            read_pattern(s, f"{where}.{name}", pattern, letters, verbatim=_verbatim(row, e, flags))
    for name in row.calc:
        value = e.get(name)
        if isinstance(value, str) and "$" in value and not is_var(e, name):
            for m in _CALC_VAR.finditer(value[:10_000]):
                var_use(s, m.group(1), "read", where)
