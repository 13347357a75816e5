"""Self-contained HTML page for a ``replay-report-v1``: an inline SVG chart and tables.

No external resources and no JavaScript: the chart is plain SVG (tokens in and
out per request against ``max_context`` and the trim target; markers for cuts,
anchor losses, ``budget_unreachable`` and monitor alerts, each with a tooltip).
"""

from __future__ import annotations

from html import escape
from typing import Any

from risutools.report.replay_markdown import interesting, verdict_text

W, H = 1000, 380
ML, MR, MT, MB = 70, 20, 30, 50
MAX_TABLE_ROWS = 400


def _f(v: float) -> str:
    return f"{v:.1f}"


def render_chart(report: dict[str, Any]) -> str:
    rows = report["requests"]
    cfg = report["config"]
    cutter = report["simulation"] == "context-cutter"
    max_ctx = int(cfg["max_context"])
    n = max(len(rows), 1)
    peak = max([max_ctx] + [r["tokens_in"] for r in rows])
    ymax = peak * 1.08 or 1
    pw, ph = W - ML - MR, H - MT - MB

    def x(i: int) -> float:  # i: 1-based request number
        return ML + (pw * (i - 0.5) / n)

    def y(v: float) -> float:
        return MT + ph - ph * v / ymax

    p: list[str] = []
    p.append(
        f'<svg id="replay-chart" xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
        f'viewBox="0 0 {W} {H}" role="img" aria-label="tokens per request">'
    )
    p.append(f'<rect x="0" y="0" width="{W}" height="{H}" fill="#ffffff"/>')
    p.append(f'<rect x="{ML}" y="{MT}" width="{pw}" height="{ph}" fill="#fafafa" stroke="#888"/>')
    for k in range(0, 6):  # y grid
        v = ymax * k / 5
        yy = y(v)
        p.append(
            f'<line class="grid" x1="{ML}" y1="{_f(yy)}" x2="{ML + pw}" y2="{_f(yy)}" '
            'stroke="#e3e3e3"/>'
        )
        p.append(
            f'<text x="{ML - 6}" y="{_f(yy + 4)}" font-size="11" text-anchor="end" '
            f'fill="#444">{round(v)}</text>'
        )
    ticks = sorted({1, n, *range(1, n + 1, max(1, n // 10))})
    for i in ticks:
        p.append(
            f'<text x="{_f(x(i))}" y="{MT + ph + 16}" font-size="11" text-anchor="middle" '
            f'fill="#444">{i}</text>'
        )
    p.append(
        f'<text x="{ML + pw / 2}" y="{H - 12}" font-size="12" text-anchor="middle">request</text>'
    )
    p.append(
        f'<text x="16" y="{MT + ph / 2}" font-size="12" text-anchor="middle" '
        f'transform="rotate(-90 16 {MT + ph / 2})">estimated tokens</text>'
    )
    p.append(
        f'<line id="max-context" x1="{ML}" y1="{_f(y(max_ctx))}" x2="{ML + pw}" '
        f'y2="{_f(y(max_ctx))}" stroke="#c62828" stroke-width="1.5" stroke-dasharray="6 4">'
        f"<title>max_context {max_ctx}</title></line>"
    )
    if cutter:
        tgt = int(cfg["target_after_trim"])
        p.append(
            f'<line id="trim-target" x1="{ML}" y1="{_f(y(tgt))}" x2="{ML + pw}" '
            f'y2="{_f(y(tgt))}" stroke="#ef6c00" stroke-width="1" stroke-dasharray="2 3">'
            f"<title>target after trim {tgt}</title></line>"
        )
    pts_in = " ".join(f"{_f(x(r['request']))},{_f(y(r['tokens_in']))}" for r in rows)
    p.append(
        f'<polyline id="tokens-in" fill="none" stroke="#9e9e9e" stroke-width="1.5" '
        f'points="{pts_in}"/>'
    )
    if cutter:
        pts_out = " ".join(f"{_f(x(r['request']))},{_f(y(r['tokens_out']))}" for r in rows)
        p.append(
            f'<polyline id="tokens-out" fill="none" stroke="#1565c0" stroke-width="2" '
            f'points="{pts_out}"/>'
        )
    p.append('<g id="markers">')
    for r in rows:
        i = r["request"]
        xx = x(i)
        if cutter and r["budget_dropped"]:
            yy = y(r["tokens_out"])
            p.append(
                f'<circle class="cut" cx="{_f(xx)}" cy="{_f(yy)}" r="3.5" fill="#1565c0">'
                f"<title>request {i}: cut {r['budget_dropped']} message(s), "
                f"{r['tokens_in']} -&gt; {r['tokens_out']} tokens</title></circle>"
            )
        if cutter and r["anchor"] == "lost":
            p.append(
                f'<path class="anchor-lost" d="M{_f(xx)},{MT + 4} l-5,-9 h10 z" '
                f'fill="#c62828"><title>request {i}: anchor lost, fell back to '
                f"{r['continuity_dropped']} omitted</title></path>"
            )
        if cutter and r["budget_unreachable"]:
            yy = y(r["tokens_out"])
            p.append(
                f'<path class="unreachable" d="M{_f(xx - 4)},{_f(yy - 4)} l8,8 '
                f'M{_f(xx + 4)},{_f(yy - 4)} l-8,8" stroke="#000" stroke-width="2">'
                f"<title>request {i}: budget unreachable</title></path>"
            )
        mon = r["monitor"]
        if mon["alert"]:
            colour = "#c62828" if mon["level"] == "CRITICAL" else "#f9a825"
            yy = MT + ph - 6
            p.append(
                f'<rect class="alert" x="{_f(xx - 4)}" y="{_f(yy - 4)}" width="8" '
                f'height="8" fill="{colour}" transform="rotate(45 {_f(xx)} {_f(yy)})">'
                f"<title>request {i}: {mon['level']} alert ({mon['used_pct']}% used, "
                f"{escape(str(mon['alert_reason']))})</title></rect>"
            )
    p.append("</g>")
    # legend
    lx, ly = ML + 8, MT + 14
    legend = [("#9e9e9e", "tokens in")]
    if cutter:
        legend += [("#1565c0", "tokens out (dots: cuts)"), ("#ef6c00", "trim target")]
    legend += [("#c62828", "max_context / anchor lost / critical"), ("#f9a825", "warning")]
    for j, (colour, label) in enumerate(legend):
        yy = ly + 15 * j
        p.append(f'<rect x="{lx}" y="{yy - 8}" width="10" height="10" fill="{colour}"/>')
        p.append(f'<text x="{lx + 14}" y="{yy + 1}" font-size="11">{escape(label)}</text>')
    p.append("</svg>")
    return "\n".join(p)


_CSS = (
    "body{font-family:system-ui,sans-serif;margin:24px;color:#222}"
    "table{border-collapse:collapse;margin:8px 0 20px}"
    "td,th{border:1px solid #ccc;padding:3px 8px;font-size:13px;text-align:left}"
    "th{background:#f0f0f0}.passed{color:#2e7d32;font-weight:bold}"
    ".failed{color:#c62828;font-weight:bold}code{font-size:12px}"
)


def _table(head: list[str], body: list[list[Any]]) -> str:
    h = "".join(f"<th>{escape(c)}</th>" for c in head)
    rows = "".join(
        "<tr>" + "".join(f"<td>{escape(_txt(c))}</td>" for c in row) + "</tr>" for row in body
    )
    return f"<table><thead><tr>{h}</tr></thead><tbody>{rows}</tbody></table>"


def _txt(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, list):
        return ", ".join(_txt(x) for x in v)
    if isinstance(v, dict):
        return ", ".join(f"{k}={_txt(x)}" for k, x in v.items())
    return str(v)


def render_html(report: dict[str, Any]) -> str:
    s = report["summary"]
    comp = report.get("component") or {}
    fx = report["fixture"]
    cutter = report["simulation"] == "context-cutter"
    title = f"Replay of {comp.get('component_id') or '(no component)'} on {fx['name']}"
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{escape(title)}</title>",
        f"<style>{_CSS}</style></head><body>",
        f"<h1>{escape(title)}</h1>",
        f'<p>Verdict: <span class="{escape(s["verdict"])}">{escape(s["verdict"])}</span> · '
        f"simulation <code>{escape(report['simulation'])}</code> · {s['requests']} request(s)"
        f"<br>fixture <code>{escape(fx['file'])}</code> {escape(fx['sha256'])}"
        + (f"<br>component document {escape(str(comp.get('doc_sha256')))}" if comp else "")
        + f"<br>report {escape(report['report_sha256'])}</p>",
        render_chart(report),
        "<h2>Summary</h2>",
        _table(["measure", "value"], [[k, s[k]] for k in sorted(s)]),
    ]
    if report["invariants"]:
        parts.append("<h2>Invariants</h2>")
        parts.append(
            _table(
                ["id", "verdict", "requests checked", "first failing request", "invariant"],
                [
                    [
                        i["id"],
                        verdict_text(i),
                        i["requests_checked"],
                        f"{i['first_failure']['request']}: {i['first_failure']['detail']}"
                        if i["first_failure"]
                        else None,
                        i["text"],
                    ]
                    for i in report["invariants"]
                ],
            )
        )
    parts.append("<h2>Configuration</h2>")
    parts.append(
        _table(["key", "value"], [[k, report["config"][k]] for k in sorted(report["config"])])
    )
    rows = report["requests"]
    shown = rows if len(rows) <= MAX_TABLE_ROWS else [r for r in rows if interesting(r)]
    parts.append("<h2>Requests</h2>")
    if len(shown) != len(rows):
        parts.append(
            f"<p>{len(shown)} of {len(rows)} requests (those with a cut, an anchor "
            "loss, a toggle or an alert); every row is in the JSON report.</p>"
        )
    shown = shown[:MAX_TABLE_ROWS]
    if cutter:
        head = [
            "request",
            "on",
            "messages in/out",
            "tokens in/out",
            "dropped",
            "continuity+budget",
            "anchor",
            "unreachable",
            "level",
            "alert",
        ]
        body = [
            [
                r["request"],
                r["enabled"],
                f"{r['messages_in']}/{r['messages_out']}",
                f"{r['tokens_in']}/{r['tokens_out']}",
                r["dropped"],
                f"{r['continuity_dropped']}+{r['budget_dropped']}",
                r["anchor"] + (" (fallback)" if r["fallback"] else ""),
                r["budget_unreachable"],
                r["monitor"]["level"] or r["monitor"]["metrics"],
                r["monitor"]["alert_reason"],
            ]
            for r in shown
        ]
    else:
        head = ["request", "messages", "tokens", "used %", "level", "alert"]
        body = [
            [
                r["request"],
                r["messages_in"],
                r["tokens_in"],
                r["monitor"]["used_pct"],
                r["monitor"]["level"] or r["monitor"]["metrics"],
                r["monitor"]["alert_reason"],
            ]
            for r in shown
        ]
    parts.append(_table(head, body))
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
