"""The human view of ``risutools inspect`` (one summary from ``formats.summary.summarize``).

Every module-supplied string goes through :func:`show`, so a name or label can
never carry code lines or terminal control sequences into the output.
"""

from __future__ import annotations

from typing import Any

from risutools.pathnames import show_name
from risutools.printable import display, no_commands

#: longest module-supplied string shown in the text view (names, labels, types...)
SHOW_CHARS = 120


def show(value: object, limit: int = SHOW_CHARS) -> str:
    """A module-supplied string made safe for one terminal line.

    Control, format and line/paragraph-separator characters (newlines, ANSI
    escapes, bidi overrides...) are shown escaped as every report shows them
    (:func:`risutools.printable.display`) and the text is cut at ``limit``
    characters, so a name or label can never smuggle code lines or terminal
    control sequences into the output.
    """
    text = value if isinstance(value, str) else str(value)
    return display(text[:limit]) + ("..." if len(text) > limit else "")


def low_level_line(module: bool, triggers: int, which: str = "") -> str:
    """lowLevelAccess as inspect and analyze both say it: the module's flag, then how many
    triggers set their own (``which``: the trigger numbers, when known)."""
    return (f"lowLevelAccess: module {'yes' if module else 'no'}, {triggers} trigger(s)"
            + (f" ({which})" if which else ""))


def _by_type(counts: dict[str, int]) -> str:
    return ", ".join(f"{show(k, 40)}={v}" for k, v in counts.items()) or "-"


def render_inspect_text(s: dict[str, Any]) -> str:
    """Human view of one summary (a few lines, no code)."""
    where = show_name(s["path"]) + (f" [{show(s['member'], 4096)}]" if s.get("member") else "")
    lines = [
        where,
        f"  format: {s['format']}   size: {s['size']} B   sha256: {s['sha256']}",
        f"  {s['component_type']}: {show(s['name']) or '(no name)'}   id: {show(s['id']) or '-'}",
    ]
    if "card" in s:
        c = s["card"]
        spec = show(c["spec"], 40)
        lines.append(f"  card: {show(c['name']) or '(no name)'} ({spec}, {c['assets']} asset(s))")
    code = s["code_bytes"]
    rx, tr = s["regex"], s["triggers"]
    llt = s["triggers_with_low_level_access"]
    lines += [
        f"  lorebook: {s['lorebook']}   regex: {rx['total']} ({_by_type(rx['by_type'])})"
        f"   triggers: {tr['total']} ({_by_type(tr['by_type'])})",
        f"  code: lua {code['lua']} B, triggercode {code['triggercode']} B, cjs {code['cjs']} B"
        f"   backgroundEmbedding: {s['background_embedding_bytes']} B",
        f"  assets: {s['assets']['frames']} frame(s), {s['assets']['total_bytes']} B"
        f"   {low_level_line(bool(s['low_level_access']), llt)}"
        f"   mcp: {'yes' if s['mcp'] else 'no'}",
    ]
    if s["toggles"]:
        shown = ", ".join(
            f"{show(t['key'], 40)}({show(t['kind'], 20)}) '{show(t['label'], 60)}'"
            for t in s["toggles"][:12]
        )
        more = f" ... +{len(s['toggles']) - 12}" if len(s["toggles"]) > 12 else ""
        lines.append(f"  toggles: {len(s['toggles'])}: {shown}{more}")
    else:
        lines.append("  toggles: none")
    for w in s["warnings"]:
        lines.append(f"  warning: {w['code']} at {show(w['where'])}: {show(w['message'], 400)}")
    return no_commands("\n".join(lines))  # (its first line is the file name)
