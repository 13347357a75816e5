"""The review's interaction, lineage and risk sections as text and Markdown lines (the HTML
page has its own, :mod:`risutools.report.review_html_sections`).  Every catalog value is
shown on one line, control characters escaped."""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable
from typing import Any

from risutools.printable import text_value

#: the interaction kinds, in the order a person reads them: what is broken, what depends on
#: what, what couples (the titles of RV401-RV408)
GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("unsatisfied", ("toggle-unsatisfied", "lorebook-missing")),
    ("conflicts", ("capability-conflict",)),
    ("dependencies", ("lorebook-dependency", "toggle-dependency", "button-handler")),
    ("shared state", ("shared-state",)),
    ("edit order", ("edit-order",)),
)
_BASE = re.compile(r" for base sha256:[0-9a-f]+…")
#: at most this many rows of one group in text and Markdown (the JSON has every row)
MAX_ROWS = 40


def one_line(s: Any) -> str:
    """A catalog value in a text report: the one escaping of text output
    (:func:`risutools.printable.text_value`: one line, no escape sequence, no bidi
    reordering)."""
    return text_value(s)


def _grouped(rows: list[dict[str, Any]]) -> list[tuple[str, list[dict[str, Any]]]]:
    out = []
    for name, kinds in GROUPS:
        got = [r for r in rows if r["kind"] in kinds]
        if got:
            out.append((name, got))
    return out


def interaction_lines(d: dict[str, Any]) -> list[str]:
    """The text section: families, then each group of interactions."""
    sec = d.get("interactions")
    if not sec:
        return []
    rows = sec["relations"]
    out = ["", f"interactions{' between live components' if sec.get('live_only') else ''} "
           f"({len(rows)}; {len(sec['families'])} famil"
           f"{'y' if len(sec['families']) == 1 else 'ies'}"
           + (f"; {sec['without_facts']} document(s) without facts" if sec["without_facts"]
              else "") + "):"]
    for f in sec["families"]:
        out.append(f"  family {one_line(f['title'])!s}: backend {one_line(f['backend'])} "
                   f"with {f['extensions']} extension(s)")
        out.append("      " + ", ".join(one_line(m) for m in f["members"]
                                         if m != f["backend"]))
    for name, got in _grouped(rows):
        out.append(f"  {name} ({len(got)}):")
        for r in got[:MAX_ROWS]:
            out.append(f"    {r['rule']} {one_line(r['component_id'])}: {one_line(r['message'])}")
        if len(got) > MAX_ROWS:
            out.append(f"    ... and {len(got) - MAX_ROWS} more (-f json lists them all)")
    if not rows:
        out.append("  none found")
    return out


def lineage_lines(d: dict[str, Any]) -> list[str]:
    """The text section: each lineage, its members oldest first, reposts and drifts."""
    sec = d.get("lineage")
    if not sec or not sec["lineages"]:
        return []
    out = ["", f"versions and reposts ({len(sec['lineages'])} module(s) seen more than once):"]
    for g in itertools.islice(sec["lineages"], MAX_ROWS):  # (a spool: read no further)
        members = " -> ".join(f"{one_line(m['component_id'])} ({one_line(m['post'])}, "
                              f"{one_line(m['version'])})" for m in g["members"])
        out.append(f"  {one_line(g['name'])}: {members}")
        for r in g["reposts"]:
            out.append(f"    repost: {one_line(r['component_id'])} has the same {r['same']} "
                       f"as {one_line(r['same_as'])}")
        for s in g["supersedes"]:
            out.append(f"    {one_line(s['newer'])} supersedes {one_line(s['older'])}:"
                       + ("" if s["drift"] else " no drift in the facts"))
            for field, change in s["drift"].items():
                for sign, key in (("+", "added"), ("-", "removed")):
                    if change[key]:
                        out.append(f"      {sign} {field}: "
                                   + ", ".join(one_line(x) for x in change[key][:8])
                                   + (" ..." if len(change[key]) > 8 else ""))
    return out


def risk_line(r: dict[str, Any], clean: Callable[[Any], str] = one_line) -> str:
    """A component's risk facts in one line ("" when there is nothing to say)."""
    parts = []
    if r.get("low_level_access"):
        parts.append("lowLevelAccess")
    if r.get("privileged_apis"):
        parts.append("privileged: " + ", ".join(clean(x) for x in r["privileged_apis"]))
    if r.get("hosts"):
        parts.append("hosts: " + ", ".join(clean(x) for x in r["hosts"]))
    for load in r.get("dynamic_loading", ()):
        parts.append(f"loads {clean(load['load'])} ({clean(load['resolves'])})")
    if r.get("analysis_findings"):
        rules = sorted({f["rule"] for f in r["analysis_findings"]})
        parts.append(f"analysis: {len(r['analysis_findings'])} warning/error ("
                     + ", ".join(clean(x) for x in rules) + ")")
    if r.get("analysis_infos"):
        parts.append("infos: " + ", ".join(f"{clean(k)} x{v}"
                                           for k, v in r["analysis_infos"].items()))
    if r.get("coverage"):
        parts.append("not covered: " + "; ".join(clean(x) for x in r["coverage"]))
    return "; ".join(parts)


def risk_lines(d: dict[str, Any]) -> list[str]:
    """The text section: one line per component with something to say about its risk (the
    documents read once, in order, only the lines shown kept)."""
    shown, any_risk = _risk_shown(d["documents"], one_line)
    if not any_risk:
        return []
    out = ["", f"risk ({shown.count} of {len(d['documents'])} component(s)):"]
    out += [f"  {one_line(doc['component_id'])} \"{one_line(doc['risk']['title'])}\": {line}"
            for doc, line in shown.rows]
    if shown.count > MAX_ROWS * 5:
        out.append(f"  ... and {shown.count - MAX_ROWS * 5} more (-f json lists them all)")
    return out


class _Shown:
    """The first rows of a long list, and how many there were in all."""

    def __init__(self, limit: int) -> None:
        self.limit, self.count = limit, 0
        self.rows: list[tuple[dict[str, Any], str]] = []

    def add(self, doc: dict[str, Any], line: str) -> None:
        self.count += 1
        if self.count <= self.limit:
            self.rows.append((doc, line))


def _risk_shown(documents: Iterable[dict[str, Any]], clean: Callable[[Any], str]
                ) -> tuple[_Shown, bool]:
    """The documents with a risk line (:func:`risk_line`), the first ``MAX_ROWS * 5`` kept,
    and whether any document has risk facts at all; one pass over the documents (a row
    spool: each read back once, none held)."""
    shown, any_risk = _Shown(MAX_ROWS * 5), False
    for doc in documents:
        if not doc.get("risk"):
            continue
        any_risk = True
        line = risk_line(doc["risk"], clean)
        if line:
            shown.add(doc, line)
    return shown, any_risk


def markdown_sections(d: dict[str, Any], md: Callable[[Any], str]) -> list[str]:
    """The Markdown sections: interactions (families, then each group), versions, risk."""
    sec = d.get("interactions") or {"relations": [], "families": []}
    out = ["", "## Interactions" + (" between live components" if sec.get("live_only")
                                    else ""), ""]
    if sec["families"]:
        out += ["| family (backend) | extensions |", "| --- | --- |"]
        out += [f"| {md(f['title'])} ({md(f['backend'])}) | "
                + ", ".join(md(m) for m in f["members"] if m != f["backend"]) + " |"
                for f in sec["families"]]
        out.append("")
    groups = _grouped(sec["relations"])
    if groups:
        out += ["| kind | rule | component | what |", "| --- | --- | --- | --- |"]
        for name, got in groups:
            out += [f"| {name} | {r['rule']} | {md(r['component_id'])} | {md(r['message'])} |"
                    for r in got[:MAX_ROWS]]
    else:
        out.append("None found.")
    out += ["", "## Versions and reposts", ""]
    lines = lineage_lines(d)[2:]
    out += [f"- {md(x.strip())}" for x in lines] if lines else ["None."]
    out += ["", "## Risk", ""]
    shown, _any = _risk_shown(d["documents"], md)
    if shown.count:
        out += ["| component | title | risk |", "| --- | --- | --- |"]
        out += [f"| {md(doc['component_id'])} | {md(doc['risk']['title'])} | {line} |"
                for doc, line in shown.rows]
    else:
        out.append("None.")
    return out


def path_line(b: dict[str, Any], clean: Callable[[Any], str] = one_line) -> str:
    """A board row's path to approved in one line."""
    return "; ".join(f"{p['part']} {p['state']}"
                     + (f" ({clean(p['detail'])})" if p["state"] != "done" else "")
                     for p in b.get("path", ()))


def _board_key(b: dict[str, Any]) -> tuple[Any, ...]:
    return (b["from"], b["to"], b["ready"], tuple(b["blocked_by"]), path_line(b))


def board_lines(d: dict[str, Any]) -> list[str]:
    """The promotion board: rows with the same step, the same blocking gates and the same
    path to approved are one line with their count; each line shows the path."""
    board = d["board"]
    out = ["", f"promotion board ({len(board)}; {d['counts']['ready']} ready):"]
    if not board:
        return [*out, "  (no candidate or pending component)"]
    # each group: its first row, how many rows, the first 8 rows' ids (the board is read
    # once, in order; no other row is held)
    groups: dict[tuple[Any, ...], tuple[dict[str, Any], list[int], list[str]]] = {}
    for b in board:
        group = groups.get(key := _board_key(b))
        if group is None:
            groups[key] = (b, [1], [b["component_id"]])
            continue
        group[1][0] += 1
        if len(group[2]) < 8:
            group[2].append(b["component_id"])
    for b, (n,), first in sorted(groups.values(), key=lambda g: (g[0]["ready"], -g[1][0],
                                                                  g[0]["component_id"])):
        state = "READY" if b["ready"] else f"blocked by {', '.join(b['blocked_by'])}"
        if n == 1:
            out.append(f"  {one_line(b['component_id'])}  {b['from']} -> {b['to']}  {state}")
        else:
            names = ", ".join(one_line(c) for c in first)
            more = f" and {n - 8} more" if n > 8 else ""
            out.append(f"  {n} components {b['from']} -> {b['to']}  {state}: "
                       f"{names}{more}")
        for g in b["gates"]:
            if g["verdict"] == "fail":
                reason = str(g["reason"])
                if n > 1:
                    reason = _BASE.sub(" for each one's base", reason.replace(
                        b["component_id"], "<component>"))
                out.append(f"      FAIL {g['gate']}: {one_line(reason)}")
        if b.get("path"):
            out.append(f"      path to approved: {path_line(b)}")
    return out

