"""Markdown summary of a ``replay-report-v1`` (for a pull request)."""

from __future__ import annotations

from typing import Any

MAX_ROWS = 60


def _cell(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, dict):
        v = ", ".join(f"{k}={_plain(x)}" for k, x in v.items())
    if isinstance(v, list):
        v = ", ".join(_plain(x) for x in v)
    return str(v).replace("|", "\\|").replace("\n", " ")


def _plain(v: Any) -> str:
    return "-" if v is None else str(v)


def interesting(row: dict[str, Any]) -> bool:
    mon = row.get("monitor") or {}
    return bool(
        row.get("budget_dropped")
        or row.get("anchor") == "lost"
        or row.get("budget_unreachable")
        or mon.get("alert")
        or row.get("ops", {}).get("toggle") is not None
    )


def verdict_text(inv: dict[str, Any]) -> str:
    """``passed (m)``, ``failed (n of m)``, or ``not checked (no request applied)``."""
    if inv["verdict"] == "failed":
        return f"failed ({inv['failures']} of {inv['requests_checked']})"
    if inv["verdict"] == "not-checked":
        return "not checked (no request applied)"
    return "passed"


def _req(row: dict[str, Any], failing: dict[int, str]) -> str:
    """The request number, with the invariant whose first failure it is."""
    n = row["request"]
    return f"**{n}** (first failure of {failing[n]})" if n in failing else str(n)


def render_markdown(report: dict[str, Any]) -> str:
    s = report["summary"]
    comp = report.get("component") or {}
    fx = report["fixture"]
    out: list[str] = []
    title = comp.get("component_id") or "(no component)"
    out.append(f"# Replay of `{title}` on `{fx['name']}`")
    out.append("")
    out.append(
        f"**Verdict: {s['verdict']}** · simulation `{report['simulation']}` · "
        f"{s['requests']} request(s)"
    )
    out.append("")
    if s["verdict"] == "not-checked":
        out.append("No invariant applied to any request: nothing was verified, so this replay "
                   "is not a pass (and `--update` does not record it).")
        out.append("")
    out.append(f"- fixture: `{fx['file']}` ({fx['sha256']})")
    if comp:
        out.append(f"- component document: {comp.get('doc_sha256')}")
    out.append(f"- report: {report['report_sha256']}")
    out.append("")
    out.append("## Summary")
    out.append("")
    out.append("| measure | value |")
    out.append("| --- | --- |")
    for key in sorted(s):
        out.append(f"| {key} | {_cell(s[key])} |")
    out.append("")
    if report["invariants"]:
        out.append("## Invariants")
        out.append("")
        out.append("| id | verdict | requests checked | first failing request | invariant |")
        out.append("| --- | --- | --- | --- | --- |")
        for inv in report["invariants"]:
            first = inv["first_failure"]
            ff = f"{first['request']}: {first['detail']}" if first else "-"
            out.append(
                f"| {inv['id']} | {verdict_text(inv)} | {inv['requests_checked']} "
                f"| {_cell(ff)} | {_cell(inv['text'])} |"
            )
        out.append("")
    out.append("## Configuration")
    out.append("")
    out.append("| key | value |")
    out.append("| --- | --- |")
    for key in sorted(report["config"]):
        out.append(f"| {key} | {_cell(report['config'][key])} |")
    out.append("")
    failing: dict[int, str] = {}
    for inv in report["invariants"]:
        if inv["first_failure"]:
            n = inv["first_failure"]["request"]
            failing[n] = f"{failing[n]}, {inv['id']}" if n in failing else inv["id"]
    rows = [r for r in report["requests"] if r["request"] in failing or interesting(r)]
    rows.sort(key=lambda r: (r["request"] not in failing, r["request"]))
    rows = sorted(rows[:MAX_ROWS], key=lambda r: r["request"])
    out.append("## Requests with a first failure, a cut, an anchor loss, a toggle or an alert")
    out.append("")
    if not rows:
        out.append("None.")
    else:
        cutter = report["simulation"] == "context-cutter"
        if cutter:
            out.append(
                "| request | messages in/out | tokens in/out | dropped (continuity+budget) "
                "| anchor | unreachable | level | alert |"
            )
            out.append("| --- | --- | --- | --- | --- | --- | --- | --- |")
        else:
            out.append("| request | messages | tokens | used % | level | alert |")
            out.append("| --- | --- | --- | --- | --- | --- |")
        for r in rows:
            mon = r["monitor"]
            if cutter:
                out.append(
                    f"| {_req(r, failing)} | {r['messages_in']}/{r['messages_out']} "
                    f"| {r['tokens_in']}/{r['tokens_out']} | {r['dropped']} "
                    f"({r['continuity_dropped']}+{r['budget_dropped']}) | {r['anchor']}"
                    f"{' (fallback)' if r['fallback'] else ''} | {_cell(r['budget_unreachable'])} "
                    f"| {_cell(mon['level'])} | {_cell(mon['alert_reason'])} |"
                )
            else:
                out.append(
                    f"| {_req(r, failing)} | {r['messages_in']} | {r['tokens_in']} "
                    f"| {_cell(mon['used_pct'])} | {_cell(mon['level'] or mon['metrics'])} "
                    f"| {_cell(mon['alert_reason'])} |"
                )
        total = sum(1 for r in report["requests"] if r["request"] in failing or interesting(r))
        if total > MAX_ROWS:
            out.append("")
            out.append(f"... and {total - MAX_ROWS} more (see the JSON report).")
    out.append("")
    return "\n".join(out)
