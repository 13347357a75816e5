"""Structural counts for ``risutools inspect`` (no analysis, never a line of code).

``summarize(module)`` returns a JSON-ready dict with sorted, deterministic
content; ``render_text(summary)`` renders the human view.
"""

from __future__ import annotations

import unicodedata
from typing import Any

from risutools.formats.model import Module

#: longest module-supplied string shown in the text view (names, labels, types...)
SHOW_CHARS = 120


def _count_by(items: list[Any], key: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for item in items:
        kind = item.get(key) if isinstance(item, dict) else None
        label = kind if isinstance(kind, str) and kind else "(none)"
        out[label] = out.get(label, 0) + 1
    return dict(sorted(out.items()))


def _utf8_len(value: Any) -> int:
    return len(value.encode("utf-8", errors="surrogatepass")) if isinstance(value, str) else 0


def code_sizes(module: Module) -> dict[str, int]:
    """Bytes of code carried: Lua (``triggerlua``), ``triggercode`` and legacy ``cjs``."""
    lua = tcode = 0
    for trig in module.trigger:
        effects = trig.get("effect") if isinstance(trig, dict) else None
        if not isinstance(effects, list):
            continue
        for eff in effects:
            if not isinstance(eff, dict):
                continue
            if eff.get("type") == "triggerlua":
                lua += _utf8_len(eff.get("code"))
            elif eff.get("type") == "triggercode":
                tcode += _utf8_len(eff.get("code"))
    return {"cjs": _utf8_len(module.cjs), "lua": lua, "triggercode": tcode}


def parse_toggles(text: str) -> list[dict[str, Any]]:
    """A simple reading of ``customModuleToggle`` lines (the analyser has the full parser).

    ``key=Label`` (checkbox), ``key=Label=select=A,B``, ``key=Label=text``; lines
    starting with ``==`` are group markers (``kind: group`` / ``group-end``).
    """
    out: list[dict[str, Any]] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("=="):
            body = line.strip("=")
            if body.lower().startswith("groupend"):
                out.append({"kind": "group-end", "line": number})
            else:
                label = (
                    body[len("group") :].strip("=").strip()
                    if body.lower().startswith("group")
                    else body
                )
                out.append({"kind": "group", "label": label, "line": number})
            continue
        parts = line.split("=")
        item: dict[str, Any] = {
            "key": parts[0].strip(),
            "label": parts[1].strip() if len(parts) > 1 else "",
            "kind": parts[2].strip() if len(parts) > 2 and parts[2].strip() else "checkbox",
            "line": number,
        }
        if item["kind"] == "select":
            item["options"] = [o.strip() for o in "=".join(parts[3:]).split(",") if o.strip()]
        out.append(item)
    return out


def summarize(module: Module) -> dict[str, Any]:
    src = module.source
    assets_with_frames = [a for a in module.assets if a.size is not None]
    toggles = parse_toggles(module.custom_module_toggle)
    triggers = module.trigger
    summary: dict[str, Any] = {
        "path": src.path if src else "",
        "format": src.format if src else "",
        "member": src.member if src else None,
        "size": src.size if src else 0,
        "sha256": src.sha256 if src else "",
        "component_type": module.component_type,
        "name": module.name,
        "id": module.id,
        "namespace": module.namespace,
        "lorebook": len(module.lorebook),
        "regex": {"total": len(module.regex), "by_type": _count_by(module.regex, "type")},
        "triggers": {"total": len(triggers), "by_type": _count_by(triggers, "type")},
        "code_bytes": code_sizes(module),
        "background_embedding_bytes": _utf8_len(module.background_embedding),
        "assets": {
            "entries": sum(1 for a in module.assets if a.size is not None or a.name or a.ext),
            "frames": len(assets_with_frames),
            "total_bytes": sum(a.size or 0 for a in assets_with_frames),
        },
        "low_level_access": module.low_level_access,
        "triggers_with_low_level_access": sum(
            1 for t in triggers if isinstance(t, dict) and t.get("lowLevelAccess") is True
        ),
        "mcp": bool(module.mcp_url),
        "toggles": [t for t in toggles if "key" in t],
        "toggle_groups": sum(1 for t in toggles if t["kind"] == "group"),
        "warnings": [
            {"code": a.code, "where": a.where, "message": a.message} for a in module.anomalies
        ],
    }
    if module.card is not None:
        summary["card"] = {
            "name": module.card.get("name"),
            "spec": module.card.get("spec"),
            "assets": len(module.card.get("assets") or []),
        }
    return summary


def show(value: object, limit: int = SHOW_CHARS) -> str:
    """A module-supplied string made safe for one terminal line.

    Control, format and line/paragraph-separator characters (newlines, ANSI
    escapes, bidi overrides...) are shown as ``\\uXXXX`` escapes and the text is
    cut at ``limit`` characters, so a name or label can never smuggle code lines
    or terminal control sequences into the output.
    """
    text = value if isinstance(value, str) else str(value)
    cut = len(text) > limit
    out = []
    for ch in text[:limit]:
        if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp", "Cs"):
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return "".join(out) + ("..." if cut else "")


def _by_type(counts: dict[str, int]) -> str:
    return ", ".join(f"{show(k, 40)}={v}" for k, v in counts.items()) or "-"


def render_text(s: dict[str, Any]) -> str:
    """Human view of one summary (a few lines, no code)."""
    where = show(s["path"], 4096) + (f" [{s['member']}]" if s.get("member") else "")
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
        f"   lowLevelAccess: {'yes' if s['low_level_access'] else 'no'}"
        f" (+{llt} trigger(s))   mcp: {'yes' if s['mcp'] else 'no'}",
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
    return "\n".join(lines)
