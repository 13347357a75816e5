"""Structural counts for ``risutools inspect`` (no analysis, never a line of code).

``summarize(module)`` returns a JSON-ready dict with sorted, deterministic
content; ``risutools.report.inspect_text.render_inspect_text`` renders the human view.
"""

from __future__ import annotations

from typing import Any

from risutools.formats.model import Module
from risutools.formats.toggles import parse_toggles
from risutools.jsontypes import js_truthy


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


def toggle_rows(text: str) -> tuple[list[dict[str, Any]], int]:
    """``customModuleToggle`` read by the one parser (:mod:`risutools.formats.toggles`):
    one row per toggle (key, label, kind, line, options), and the number of groups the
    toggles sit in."""
    parsed = parse_toggles(text).toggles
    rows: list[dict[str, Any]] = []
    for t in parsed:
        row: dict[str, Any] = {"key": t.key, "label": t.label, "kind": t.type, "line": t.line}
        if t.options:
            row["options"] = list(t.options)
        rows.append(row)
    groups = {t.group for t in parsed if t.group is not None}
    return rows, len(groups)


def summarize(module: Module) -> dict[str, Any]:
    src = module.source
    assets_with_frames = [a for a in module.assets if a.size is not None]
    toggles, toggle_groups = toggle_rows(module.custom_module_toggle)
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
            1 for t in triggers if isinstance(t, dict) and js_truthy(t.get("lowLevelAccess"))
        ),
        "mcp": bool(module.mcp_url),
        "toggles": toggles,
        "toggle_groups": toggle_groups,
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
