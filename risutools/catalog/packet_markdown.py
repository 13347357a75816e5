"""A review packet's Markdown (``risutools packet`` writes it next to the packet's JSON):
what a person reads.  Every value from the catalog (ids, statuses, capabilities, files,
reviewer names, log fields, messages) is escaped for Markdown
(:func:`risutools.printable.markdown_value`, or :func:`~risutools.printable.markdown_code`
inside a code span); the document itself is JSON in a fenced block, escaped as JSON."""

from __future__ import annotations

import json
import shlex
from typing import Any

from risutools.canonical import indented_text
from risutools.printable import json_text, markdown_code, markdown_value


def _cell(v: Any) -> str:
    return markdown_value(v if isinstance(v, str) else json.dumps(v, ensure_ascii=False))


_code = markdown_code


def _text(v: Any) -> str:
    """A log field or a verdict as it was shown (``None`` as ``None``), escaped."""
    return markdown_value(str(v))


def render_packet_markdown(p: dict[str, Any]) -> str:
    lines = _head(p) + _needs_full_context(p) + _facts(p["permission_facts"])
    rel = p.get("relations")
    if rel is not None:
        lines += _relations(rel)
    lines += ["", "## Document", "", "```json",
              json_text(indented_text(p["document"], 1)[:-1]),  # (json.dumps's, in C)
              "```", ""]
    return "\n".join(lines)


def _head(p: dict[str, Any]) -> list[str]:
    task = p["task"]
    comp = p["component"]
    return [
        f"# Review packet: {_cell(comp['component_id'])} ({p['lane']} lane)",
        "",
        f"- task: {_code(task['id'])}" + (f" (escalates {_code(task['escalates'])})"
                                     if task.get("escalates") else ""),
        f"- instruction: {_cell(task['instruction'])}",
        f"- actor: {_cell(p['actor'] or '(not given)')}",
        f"- base hash: `{p['base_sha256']}` (any write must name it)",
        f"- file: {_code(comp['file'])}" + (f" line {comp['line']}" if comp.get("line") else ""),
        "",
    ]


def _needs_full_context(p: dict[str, Any]) -> list[str]:
    if not p["needs_full_context"]:
        return []
    comp, task = p["component"], p["task"]
    escalate = (f"risutools packet {shlex.quote(comp['component_id'])} --lane full "
                f"--escalates {shlex.quote(task['id'])}")  # (as a shell reads it: copied)
    lines = ["## Needs full context", "",
             "This light packet cannot be decided from what it holds; open a full packet "
             f"({_code(escalate)}).", ""]
    lines += [f"- **{r['reason']}**: {_cell(r['detail'])}" for r in p["needs_full_context"]]
    lines.append("")
    return lines


def _facts(facts: dict[str, Any]) -> list[str]:
    lines = ["## Permission facts", "", "| capability list | names |", "| --- | --- |"]
    for k, v in facts["capabilities"].items():
        lines.append(f"| {k} | {_cell(', '.join(v)) if v else '-'} |")  # '-': none
    lines += ["", "| policy field | value |", "| --- | --- |"]
    for k, v in facts["policy"].items():
        lines.append(f"| {k} | {_cell(v)} |")
    lines += _risk(facts.get("risk"))
    lines += ["", "### Findings", ""]
    if facts["findings"]:
        lines += ["| rule | severity | pointer | message |", "| --- | --- | --- | --- |"]
        lines += [f"| {f['rule']} | {f['severity']} | {_code(f['pointer'] or '/', cell=True)} | "
                  f"{_cell(f['message'])} |" for f in facts["findings"]]
    else:
        lines.append("No findings.")
    return lines


def _relations(rel: dict[str, Any]) -> list[str]:
    lines = ["", "## Relations (full lane)", ""]
    for cap, provs in rel["providers_of_requirements"].items():
        names = ", ".join(x["component_id"] for x in provs) or "(host or none)"
        lines.append(f"- provides {_code(cap)}: {_cell(names)}")
    for key, title in (("conflicts", "conflicts with"), ("shared_source", "shares a source "
                       "with"), ("same_component_id", "same component_id")):
        for x in rel[key]:
            by_log = f"; {_cell(x['live_by_log'])}" if "live_by_log" in x else ""
            lines.append(f"- {title}: {_cell(x['component_id'])} ({_cell(x['review_status'])}, "
                         f"{_cell(x['runtime_status'])}, {_code(x['file'])}{by_log})")
    if "cannot_tell" in rel:
        lines.append(f"- conflicts: {_cell(rel['cannot_tell'])}")
    omitted = rel.get("omitted", {})
    lines += _history(rel["transition_history"], omitted.get("transition_history", 0))
    lines += ["", "### Approvals", ""]
    lines += [f"- {_code(a['file'])}: {_cell(a['action'])} by {_cell(a['reviewer'])}"
              f"{'' if a['current'] else ' (older base)'}" for a in rel["approvals"]] \
        or ["None."]
    lines += ["", "### Replay reports", ""]
    lines += [f"- {_code(r['file'])}: {_text(r['verdict'])}" for r in rel["replay_reports"]] \
        or ["None."]
    notes = rel["notes"]
    unread = notes.get("unreadable") if isinstance(notes, dict) and len(notes) == 1 else None
    lines += ["", "Curator notes: " + ("none." if notes is None else "present." if unread is None
                                       else f"unreadable ({_text(unread)}).")]
    if omitted:  # (each list a packet holds is bounded: what it left out)
        lines += ["", "Not listed (each list holds at most its first items, the history its "
                  "last): " + _cell(", ".join(f"{k} {v:,}" for k, v in omitted.items())) + "."]
    return lines + _interactions(rel)


def _history(history: list[dict[str, Any]], earlier: int) -> list[str]:
    """The transition history's lines (``earlier``: how many older ones it left out)."""
    lines = ["", "### Transition history", ""]
    if earlier:
        lines.append(f"- ({earlier:,} earlier lines not listed; `transitions.ndjson` holds "
                     "them)")
    for h in history:
        frm = h.get("from_status") or h.get("from_runtime")
        to = h.get("to_status") or h.get("to_runtime")
        lines.append(f"- line {h['line']}: {_text(frm)} -> {_text(to)} at {_text(h.get('at'))}")
    return lines if history else [*lines, "None recorded."]


def _risk(r: dict[str, Any] | None) -> list[str]:
    """The component's risk facts (the analysis' own words: what it could read)."""
    if r is None:
        return []
    lines = ["", "### Risk (in the code this analysis can read)", "",
             "| fact | value |", "| --- | --- |",
             f"| title | {_cell(r['title'] or '-')} |",
             f"| lowLevelAccess | {_cell(r['low_level_access'])} |",
             f"| privileged APIs | {_cell(', '.join(r['privileged_apis']) or '-')} |",
             f"| hosts | {_cell(', '.join(r['hosts']) or '-')} |"]
    lines += [f"| loads {_cell(x['load'])} | resolves {_cell(x['resolves'])} |"
              for x in r["dynamic_loading"]]
    lines += [f"| analysis {_cell(f['rule'])} ({_cell(f['severity'])}) | "
              f"{_cell(f['message'])} |" for f in r["analysis_findings"]]
    if r["analysis_infos"]:
        lines.append("| analysis infos | " + _cell(", ".join(
            f"{k} x{v}" for k, v in r["analysis_infos"].items())) + " |")
    lines += [f"| not covered | {_cell(c)} |" for c in r["coverage"]]
    return lines


def _interactions(rel: dict[str, Any]) -> list[str]:
    lines = ["", "### Interactions", ""]
    fam = rel.get("family")
    if fam:
        lines.append(f"- family: {_cell(fam['title'])} (backend {_code(fam['backend'])}, "
                     f"{fam['extensions']} extension(s))")
    for key in ("dependencies", "dependents", "unsatisfied", "shared_state", "edit_order",
                "capability_conflicts", "versions"):
        for r in rel.get(key, ()):
            lines.append(f"- {key.replace('_', ' ')}: {_cell(r['rule'])} "
                         f"{_cell(r['component_id'])}: {_cell(r['message'])}")
    if len(lines) == 3:
        lines.append("None found.")
    return lines
