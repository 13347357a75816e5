"""The walk's reading of a ``command``/``v2Command`` trigger effect's text: RisuAI's slash
commands (command.ts ``processMultiCommand``), driven by the ``commands`` table of
``risutools/data/trigger_effects.yaml``.

RisuAI runs the text through CBS first, then splits it on ``|`` outside double quotes and
runs each part as ``/name args`` (``key=value`` args are named); a name it does not know
stops the rest.  The text is read statically: the literal commands give their
capabilities, the chat variables ``/setvar key=k`` (``/addvar``, ``/getvar``) writes or
reads, and the triggers ``/trigger name`` runs.  A text holding CBS (or a ``v2Command``
whose text is a variable's value) is computed: what it expands to is split and run too,
so it may be any command, and every command's capabilities are reported (doubt reports).
"""

from __future__ import annotations

from functools import cache
from typing import Any

from risutools.analysis.model import Fact
from risutools.analysis.seen import Seen, entry_seen
from risutools.analysis.walk_text import read_html, var_use
from risutools.datatables import data_table

#: bounds: the characters of a command text read, and the commands of one text read
MAX_COMMAND_TEXT = 10_000
MAX_COMMANDS = 50


@cache
def command_table() -> dict[str, dict[str, Any]]:
    """Command name -> its row (read once)."""
    rows = data_table("trigger_effects.yaml")["commands"]
    return {name: dict(row or {}) for name, row in rows.items()}


def split_commands(text: str) -> list[str]:
    """``text`` split as processMultiCommand splits it: on ``|`` outside double quotes
    (at most MAX_COMMANDS parts, of the first MAX_COMMAND_TEXT characters)."""
    parts: list[str] = []
    start, quoted = 0, False
    text = text[:MAX_COMMAND_TEXT]
    for i, ch in enumerate(text):
        if ch == '"':
            quoted = not quoted
        elif ch == "|" and not quoted:
            parts.append(text[start:i])
            start = i + 1
            if len(parts) >= MAX_COMMANDS:
                return parts
    parts.append(text[start:])
    return parts


def read_command(s: Seen, text: Any, where: str, computed: bool = False) -> None:
    """A command effect's text (``computed``: the text is a variable's value)."""
    if not isinstance(text, str):
        return
    parts = split_commands(text)
    if computed or "{{" in text or len(text) > MAX_COMMAND_TEXT or len(parts) >= MAX_COMMANDS:
        _any_command(s, where)  # (past the bounds, what is not read may be any command)
    for part in parts:
        if not _one_command(s, part.strip(), where):
            break  # RisuAI stops at a command it does not know


def _one_command(s: Seen, part: str, where: str) -> bool:
    words = [w for w in part.removeprefix("/").split(" ") if w]
    if not words:
        return False
    row = command_table().get(words[0])
    if row is None:
        return "{{" in words[0]  # a computed name: read on (reported as any command)
    named = {w.split("=")[0]: w.split("=")[1] for w in words[1:] if "=" in w}
    ev = f"{where} /{words[0][:40]}"
    for cap in row.get("caps") or ():
        s.cap(cap, ev)
    for mode in ("read", "write"):
        arg = row.get(f"{mode}s")
        if arg:
            var_use(s, named.get(arg) or "{{?}}", mode, ev)
    if row.get("html"):  # (its text after the name, read whole: the message shown as HTML,
        shown = " ".join(words[1:])  # an attribute's "=" taken for no named argument)
        if shown:
            read_html(s, shown, ev)
    if row.get("runs"):
        target = " ".join(w for w in words[1:] if "=" not in w)
        s.run_triggers.append((s.tick(), target if target and "{{" not in target else "*", ev))
    return True


def _any_command(s: Seen, where: str) -> None:
    """A command text computed at run time: every command's capabilities, a computed chat
    variable written and read, and triggers run by a computed name."""
    ev = f"{where} (computed command text)"
    for row in command_table().values():
        for cap in row.get("caps") or ():
            s.cap(cap, ev)
    var_use(s, "{{?}}", "write", ev)
    var_use(s, "{{?}}", "read", ev)
    s.run_triggers.append((s.tick(), "*", ev))


def run_trigger_entries(s: Seen, manual: dict[str, list[str]]) -> None:
    """The trigger names ``runtrigger``/``v2RunTrigger`` effects and ``/trigger`` commands
    call (RisuAI runs the manual triggers whose comment is the name, of every enabled
    component, and every Lua trigger with the name as its mode, which calls the global of
    that name): when this module defines one, an entry point named so, with the call, then
    the targets, as evidence (every call is also RA107: other components' triggers of the
    name run too)."""
    calls: dict[str, list[str]] = {}  # each name's targets found once (linear)
    for _, name, ev in s.run_triggers:
        calls.setdefault(name, []).append(ev)
    for name, evs in calls.items():
        targets = manual.get(name, []) + s.lua_globals.get(name, [])
        if targets:
            entry_seen(s.manual_entries.setdefault(name, Fact(name)), evs, targets)
