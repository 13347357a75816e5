"""The analyser's own views: text with the facts and findings, and the facts as JSON.

(``risutools analyze -f text`` / ``-f json``; the other formats are the shared
findings renderers.)
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from risutools.canonical import prefixed
from risutools.pathnames import show_name
from risutools.printable import display, json_text, no_commands, quoted, scrub
from risutools.report.color import painter
from risutools.report.inspect_text import low_level_line

if TYPE_CHECKING:
    from risutools.analysis.model import Analysis, Fact
    from risutools.formats.model import Module


def _source_dict(m: Module) -> dict[str, Any]:
    if m.source is None:
        return {}
    s = m.source
    d: dict[str, Any] = {"path": s.path, "format": s.format, "size": s.size,
                         "sha256": prefixed(s.sha256)}
    if s.member:
        d["member"] = s.member
    return d


def render_analysis_json(path: str, results: list[tuple[Module, Analysis]]) -> str:
    doc = {"file": path,
           "modules": [{"source": _source_dict(m), "analysis": a.to_dict()} for m, a in results]}
    return json_text(json.dumps(scrub(doc), ensure_ascii=False, indent=1)) + "\n"


def _show(text: str) -> str:
    """Module text made safe for a terminal: control and bidi characters (newlines, ESC,
    RLO ...) escaped; other text, ideographic and other spaces included, printed as is."""
    return display(text)


def _facts(title: str, facts: list[Fact], lines: list[str]) -> None:
    if not facts:
        return
    lines.append(f"  {title}:")
    for f in facts:
        where = ", ".join(f.evidence[:3]) + (f" (+{f.count - 3})" if f.count > 3 else "")
        lines.append(f"    {_show(f.name):<28} {_show(where)}")


def _head(path: str, m: Module, a: Analysis, lines: list[str],
          paint: Callable[[str, str], str]) -> None:
    """The module's name and kind, its contents, what the card's module replaces, and
    lowLevelAccess."""
    member = f"!{_show(m.source.member)}" if m.source and m.source.member else ""
    lines.append(paint("bold", f"{show_name(path)}{member}: {a.component_type} "
                               f"{quoted(a.name)}"))
    c = a.counts
    lines.append(
        f"  contents: {c.get('triggers', 0)} trigger(s), {c.get('lorebook', 0)} lorebook "
        f"entr(y/ies), {c.get('regex', 0)} regex script(s), {len(a.toggles)} toggle(s), "
        f"{c.get('assets', 0)} asset(s), Lua {c.get('lua_bytes', 0)} chars, "
        f"legacy JS {c.get('cjs_bytes', 0)} chars")
    replaced = m.replaced_by_module if a.component_type == "character" else []
    if replaced:
        lines.append(f"  {', '.join(map(_show, replaced))}: replaced on import by the "
                     "module.risum it carries (stated by that component)")
    which = ", ".join(f"trigger {i}" for i in a.low_level_triggers)
    lines.append("  " + low_level_line(a.low_level_access, len(a.low_level_triggers), which))


def _state_and_toggles(a: Analysis, lines: list[str]) -> None:
    if a.state:
        lines.append("  state:")
        for s in a.state:
            rw = ("r" if s.reads else "-") + ("w" if s.writes else "-")
            where = ", ".join((s.writes or s.reads)[:2])
            lines.append(f"    {s.scope:<6} {rw} {_show(s.key):<24} {_show(where)}")
    _facts("privileged APIs", a.privileged, lines)
    _facts("dynamic code", a.dynamic_code, lines)
    _facts("network hosts", a.network_hosts, lines)
    if a.toggles:
        lines.append("  toggles:")
        for t in a.toggles:
            extra = f" [{', '.join(t.options)}]" if t.options else ""
            group = f" (group {t.group})" if t.group else ""
            lines.append(f"    {_show(t.key):<24} {_show(t.type):<8} "
                         f"{_show(t.label + extra + group)}")


def _reader_facts(a: Analysis, lines: list[str]) -> None:
    """What a reader follows (issue 22): buttons in Lua, names buttons call, keys built at
    run time, greeting writes, callbacks another module calls, code nothing runs."""
    _facts("buttons written by Lua (* = computed)", a.code_buttons, lines)
    _facts("entry points called by name (buttons, runtrigger, /trigger)", a.manual_entries, lines)
    if a.computed_state:
        lines.append("  state keys computed at run time (* = computed):")
        for s in a.computed_state:
            rw = ("r" if s.reads else "-") + ("w" if s.writes else "-")
            where = ", ".join((s.writes or s.reads)[:2])
            lines.append(f"    {s.scope:<6} {rw} {_show(s.key):<24} {_show(where)}")
    _facts("chat variables a greeting sets (group chats only)", a.group_chat_writes, lines)
    if a.callbacks:
        lines.append("  lorebook code another module calls (no hook of this module):")
        for c in a.callbacks:
            loader = f" ({_show(c.loader)}: {_show(c.pattern)})" if c.loader else ""
            lines.append(f"    lorebook[{c.entry}] {_show(c.name)}{loader}")
    _facts("code nothing runs (not counted in requires)", a.unreached, lines)
    _facts("MCP server", a.mcp_servers, lines)
    _facts("namespace (enabling this id turns the module on)", a.namespace, lines)
    _facts("module ids the preset turns on (moduleIntergration)", a.enabled_modules, lines)
    _facts("module.risum fields the .charx import drops (not analysed)", a.ignored_fields,
           lines)
    _facts("lorebook decorators", a.lore_decorators, lines)
    _facts("lorebook text placed in a prompt part or another entry", a.lore_injections,
           lines)


def _findings(a: Analysis, lines: list[str], paint: Callable[[str, str], str]) -> None:
    if not a.findings:
        lines.append("  findings: none")
        return
    lines.append("  findings:")
    for f in a.findings:
        lines.append(f"    {paint('bold', f.rule)} {paint(f.severity, f'{f.severity:<7}')} "
                     f"{_show(f.evidence)}: {_show(f.message)}")


def render_analysis_text(path: str, results: list[tuple[Module, Analysis]], *,
                         color: bool = False) -> str:
    """A plain-text report for people: per module its contents, hooks, entry points, state,
    privileged APIs, dynamic code, hosts, toggles, capabilities and findings."""
    paint = painter(color)
    lines: list[str] = []
    for m, a in results:
        _head(path, m, a, lines, paint)
        _facts("hooks", a.hooks, lines)
        _facts("entry points", a.entry_points, lines)
        _facts("button callbacks", a.button_callbacks, lines)
        _state_and_toggles(a, lines)
        _facts("toggles read that another module must declare", a.required_toggles, lines)
        _facts("code in fields RisuAI never reads (never runs)", a.unused_code_fields, lines)
        _reader_facts(a, lines)
        lines.append("  requires: " + (", ".join(a.requires_names()) or "-"))
        lines.append("  provides: " + (", ".join(a.provides_names()) or "-"))
        _findings(a, lines, paint)
    # (a line opens with a file name, a toggle key, a state key, a host ...)
    text: str = scrub(no_commands("\n".join(lines) + "\n"))
    return text
