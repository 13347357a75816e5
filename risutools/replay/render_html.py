"""Self-contained HTML page for a ``replay-report-v1``: an inline SVG chart and tables.

No external resources and no JavaScript; the same report gives the same bytes.
The chart (``render_chart``) is read at 10 requests as at 10,000:

* scales: request ticks and token ticks on 1-2-5 steps; when the uncut history
  (tokens in) climbs far above ``max_context``, the part above the linear range
  goes to a log-scale band at the top, separated by a marked break, so what is
  sent stays readable instead of being squashed at the bottom;
* lines: tokens in (grey), tokens out (blue), ``max_context`` (black dashes, labelled
  with its value and 100 %) and the trim target (green dashes, labelled with its
  share), the labels inside the frame on a white halo;
* markers, one colour and shape per meaning, every kind in the legend (which sits
  right of the frame, never over the data) with its count, every marker inside the
  frame: budget cut (orange triangle down on tokens out), budget unreachable
  (black cross), anchor lost (pink diamond) and WARNING / CRITICAL alerts (yellow /
  vermilion triangles) in their own labelled lanes under the plot (an alert is an
  event, not a token count), module off (grey band), and the first failing request
  of each failed invariant (crimson line and label linking to the invariant's row);
* above ``MAX_POINTS`` requests, lines keep each pixel column's lowest and highest
  value and markers are grouped per column (``data-count`` and the tooltip give the
  requests and counts), so a 10,000-request page stays small.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from typing import Any

from risutools.printable import html_value
from risutools.replay.render_markdown import Picked, pick_rows, verdict_text

W = 1120
ML, MT = 84, 24  # left and top margins of the frame
PW = 720  # plot width; the line labels, then the legend, sit right of it
PH = 300  # plot height (data area)
LANE_H = 16  # one event lane under the data area
MAX_TABLE_ROWS = 400
MAX_POINTS = PW  # above this many requests, lines keep each pixel column's low and high
MAX_MARKERS = PW // 9  # above this many requests, markers are grouped (>= 9 px apart)

# kind -> (legend label, colour); shapes are drawn by _shape()
KINDS: dict[str, tuple[str, str]] = {
    "cut": ("budget cut", "#e69f00"),
    "unreachable": ("budget unreachable", "#000000"),
    "anchor-lost": ("anchor lost", "#cc79a7"),
    "alert-warning": ("WARNING alert", "#f0e442"),
    "alert-critical": ("CRITICAL alert", "#d55e00"),
    "orphan": ("result without its call (R9)", "#56b4e9"),
    "failure": ("first failure (invariant)", "#b00020"),
    "off": ("module off", "#d9d9d9"),
}
# event lanes under the data area: kind -> lane label (cutter kinds only with the cutter)
LANES: dict[str, str] = {
    "cut": "cut",
    "unreachable": "unreachable",
    "anchor-lost": "anchor lost",
    "alert-warning": "WARNING",
    "alert-critical": "CRITICAL",
    "orphan": "orphaned",
}
CUTTER_ONLY = ("cut", "unreachable", "anchor-lost", "orphan", "off")
LINES: dict[str, tuple[str, str, str]] = {  # id -> label, colour, dash
    "tokens-in": ("tokens in (uncut history)", "#8c8c8c", ""),
    "tokens-out": ("tokens out (sent)", "#0072b2", ""),
    "max-context": ("max_context (100 %)", "#000000", "6 4"),
    "trim-target": ("trim target", "#009e73", "2 3"),
}


def _f(v: float) -> str:
    return f"{v:.1f}"


def nice_step(raw: float) -> int:
    """The smallest 1, 2 or 5 times a power of ten that is >= ``raw`` (at least 1)."""
    if raw <= 1:
        return 1
    exp = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 5, 10):
        if m * exp >= raw:
            return int(m * exp)
    return int(10 * exp)  # pragma: no cover - the loop always returns


def _num(v: int) -> str:
    if v >= 1_000_000 and v % 100_000 == 0:
        return f"{v / 1_000_000:g}M"
    if v >= 1000 and v % 100 == 0:
        return f"{v / 1000:,g}k"
    return f"{v:,}"


@dataclass(frozen=True)
class YScale:
    """Linear from 0 to ``lin_top``; above it (when ``log_top``), a log band at the top."""

    lin_top: int
    log_top: int | None

    @property
    def lin_h(self) -> float:
        return PH * (0.72 if self.log_top else 1.0)

    @property
    def band_h(self) -> float:
        return PH * 0.22

    def y(self, v: float) -> float:
        bottom = MT + PH
        if v <= self.lin_top or self.log_top is None:
            return bottom - self.lin_h * min(v, self.lin_top) / self.lin_top
        top_of_band = MT
        frac = math.log(v / self.lin_top) / math.log(self.log_top / self.lin_top)
        return top_of_band + self.band_h * (1 - min(frac, 1.0))

    def heights(self, values: list[Any]) -> list[float]:
        """:meth:`y` of each value (the same arithmetic on the same figures, so the same
        floats: each ``min`` written out as ``min`` picks, the first of equal ones), in
        one pass with its figures (and the log band's span) worked out once."""
        bottom, lin_top, lin_h, log_top = MT + PH, self.lin_top, self.lin_h, self.log_top
        if log_top is None:
            return [bottom - lin_h * (lin_top if lin_top < v else v) / lin_top for v in values]
        span, band_h, log = math.log(log_top / lin_top), self.band_h, math.log
        return [bottom - lin_h * (lin_top if lin_top < v else v) / lin_top if v <= lin_top
                else MT + band_h * (1 - (1.0 if (f := log(v / lin_top) / span) > 1.0 else f))
                for v in values]

    def ticks(self) -> list[int]:
        step = nice_step(self.lin_top / 5)
        lin = list(range(0, self.lin_top + 1, step))
        if not self.log_top:
            return lin
        up: list[int] = []
        m = 10 ** math.floor(math.log10(self.lin_top))
        while m <= self.log_top:
            for k in (1, 2, 5):
                if self.lin_top * 1.5 < k * m <= self.log_top:
                    up.append(k * m)
            m *= 10
        while len(up) > 4:  # thin out: every other one, keeping the highest
            up = up[::-1][::2][::-1]
        return lin + up


def y_scale(max_ctx: int, peak_shown: int, peak_in: int) -> YScale:
    """``peak_shown``: what must be read closely (tokens out, or max_context)."""
    base = max(max_ctx, peak_shown, 1)
    if peak_in <= base * 1.6:
        top = max(base, peak_in) * 1.08
        step = nice_step(top / 5)
        return YScale(step * math.ceil(top / step), None)
    step = nice_step(base * 1.12 / 5)
    lin_top = step * math.ceil(base * 1.12 / step)
    return YScale(lin_top, nice_step(peak_in) if peak_in > lin_top else None)


def _shape(kind: str, x: float, y: float, extra: str = "") -> str:
    """The marker of ``kind`` centred on (x, y), about 10 px across."""
    colour = KINDS[kind][1]
    cls = f'class="marker {kind}" data-kind="{kind}"{extra}'
    if kind == "cut":
        return f'<path {cls} d="M{_f(x - 5)},{_f(y - 4.5)} h10 l-5,9 z" fill="{colour}"/>'
    if kind == "unreachable":
        return (
            f'<path {cls} d="M{_f(x - 4)},{_f(y - 4)} l8,8 M{_f(x + 4)},{_f(y - 4)} '
            f'l-8,8" stroke="{colour}" stroke-width="2.2" fill="none"/>'
        )
    if kind == "anchor-lost":
        return (
            f'<path {cls} d="M{_f(x)},{_f(y - 5.5)} l5,5.5 l-5,5.5 l-5,-5.5 z" '
            f'fill="{colour}" stroke="#6b3556" stroke-width="0.8"/>'
        )
    if kind == "orphan":  # a circle
        return (f'<circle {cls} cx="{_f(x)}" cy="{_f(y)}" r="4.5" fill="{colour}" '
                'stroke="#1f5f80" stroke-width="0.8"/>')
    return (  # alerts: a triangle up
        f'<path {cls} d="M{_f(x)},{_f(y - 5)} l5.5,10 h-11 z" fill="{colour}" '
        'stroke="#5a4a00" stroke-width="0.8"/>'
    )


def _titled(svg_el: str, escaped: str) -> str:
    """Put a <title> (tooltip) inside a self-closing SVG element; ``escaped``: its text as
    :func:`~risutools.printable.html_value` gives it."""
    return svg_el[:-2] + f"><title>{escaped}</title></{svg_el[1:svg_el.index(' ')]}>"


@dataclass
class ChartSweep:
    """What the chart needs of the rows, read in one pass and kept bounded: the peaks, the
    events of each kind counted and grouped as their lane draws them (a group's count and
    first row), the runs of requests with the module off, and each line group's lowest and
    highest value (first position of each).  Fed one row at a time (:meth:`add`), so it can
    be filled as a replay makes its rows, knowing how many there will be (``n``)."""

    n: int = 0
    cutter: bool = True
    peak_in: int = 0
    peak_out: int = 0
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KINDS, 0))
    groups: dict[str, dict[int, list[Any]]] = field(
        default_factory=lambda: {k: {} for k in KINDS})
    off: list[list[int]] = field(default_factory=list)
    lines: dict[str, list[list[Any]]] = field(default_factory=dict)
    added: int = 0  # rows fed so far

    def __post_init__(self) -> None:
        self.lines = {key: [] for key in _line_keys(self.cutter)}
        self._marker_size = max(1, math.ceil(max(self.n, 1) / MAX_MARKERS))
        self._line_size = max(1, math.ceil(self.n / MAX_POINTS))

    def add(self, r: dict[str, Any], still: bool = False) -> None:
        """The next row (the ``added``-th, 0-based); ``still``: it is no event of any kind
        (:func:`~risutools.replay.run.quiet`: :func:`_kinds` would find none)."""
        i = self.added
        self.added += 1
        tokens = r["tokens_in"]
        if tokens > self.peak_in:
            self.peak_in = tokens
        if self.cutter:
            tokens = r["tokens_out"]
            if tokens > self.peak_out:
                self.peak_out = tokens
        for kind in () if still else _kinds(r, self.cutter):
            self.counts[kind] += 1
            g = self.groups[kind].setdefault((r["request"] - 1) // self._marker_size, [0, r])
            g[0] += 1
            if kind == "off":
                req = r["request"]
                if self.off and self.off[-1][1] == req - 1:
                    self.off[-1][1] = req
                else:
                    self.off.append([req, req])
        size = self._line_size
        for key, line in self.lines.items():
            v = r[key]
            if i % size == 0:  # a new group: [first lowest position, value, first highest]
                line.append([i, v, i, v])
                continue
            g = line[-1]
            if v < g[1]:
                g[0], g[1] = i, v
            if v > g[3]:
                g[2], g[3] = i, v


def _line_keys(cutter: bool) -> tuple[str, ...]:
    return ("tokens_in", "tokens_out") if cutter else ("tokens_in",)


def _sweep(rows: Sequence[dict[str, Any]], cutter: bool) -> ChartSweep:
    sw = ChartSweep(len(rows), cutter)
    for r in rows:
        sw.add(r)
    return sw


def _kinds(r: dict[str, Any], cutter: bool) -> list[str]:
    """The kinds of event a row is (in the order of :data:`KINDS`' lanes)."""
    kinds = []
    if cutter:
        if r["budget_dropped"]:
            kinds.append("cut")
        if r["budget_unreachable"]:
            kinds.append("unreachable")
        if r["anchor"] == "lost":
            kinds.append("anchor-lost")
        if not r["enabled"]:
            kinds.append("off")
        if r.get("orphaned_tool_results"):
            kinds.append("orphan")
    mon = r["monitor"]
    if mon["alert"]:
        kinds.append("alert-critical" if mon["level"] == "CRITICAL" else "alert-warning")
    return kinds


def _line_points(line: list[list[Any]], n: int, x: Callable[[float], float],
                 heights: Callable[[list[Any]], list[float]],
                 xs: dict[int, str] | None = None) -> str:
    """The polyline's points of a line's groups; ``heights``: the y of each of a list of
    values (:meth:`YScale.heights`); ``xs``: each slot's centre as spelled so far (by the
    line drawn before, whose slots are the same), filled as it goes.  A value's height is
    worked out and spelled once (a line that is cut holds many equal ones), all the
    figures together (:func:`_spelled`)."""
    if not line:
        return ""
    size = max(1, math.ceil(n / MAX_POINTS))
    xs = {} if xs is None else xs
    los, lo_vs, his, hi_vs = zip(*line, strict=True)
    slots = [lo - lo % size + 1 for lo in los]
    new = [a for a in dict.fromkeys(slots) if a not in xs]
    # (min(n, b) of each slot's last request b)
    xs.update(zip(new, _spelled([x((a + (a + size - 1 if a + size - 1 < n else n)) / 2)
                                 for a in new]), strict=True))
    values = list({*lo_vs, *hi_vs})
    ys = dict(zip(values, _spelled(heights(values)), strict=True))
    return " ".join([
        f"{xx},{ys[hv]}" if lo == hi  # one point (its figures the same)
        else f"{xx},{ys[lv]} {xx},{ys[hv]}" if lo < hi else f"{xx},{ys[hv]} {xx},{ys[lv]}"
        for xx, lo, lv, hi, hv in zip(map(xs.__getitem__, slots), los, lo_vs, his, hi_vs,
                                      strict=True)])


def _spelled(figures: list[float]) -> list[str]:
    """Each figure spelled as :func:`_f` spells it (``%.1f``: the same digits), all by one
    ``%`` (none of them holds a space)."""
    return (" ".join(["%.1f"] * len(figures)) % tuple(figures)).split(" ") if figures else []


def _event_title(kind: str, r: dict[str, Any]) -> str:
    i = r["request"]
    if kind == "cut":
        return (f"request {i}: budget cut of {r['budget_dropped']} message(s), "
                f"{r['tokens_in']} -> {r['tokens_out']} tokens")
    if kind == "unreachable":
        return f"request {i}: budget unreachable, {r['tokens_out']} tokens sent"
    if kind == "anchor-lost":
        return f"request {i}: anchor lost, fell back to {r['continuity_dropped']} omitted"
    if kind == "orphan":
        return (f"request {i}: {r['orphaned_tool_results']} tool result(s) sent without the "
                "assistant message that called them (R9)")
    mon = r["monitor"]
    return (f"request {i}: {mon['level']} alert ({mon['used_pct']}% used, "
            f"{mon['alert_reason']})")


def render_chart(report: dict[str, Any], sweep: ChartSweep | None = None) -> str:
    """``sweep``: the report's rows swept as the replay made them (None: swept here)."""
    rows = report["requests"]
    cfg = report["config"]
    cutter = report["simulation"] == "context-cutter"
    max_ctx = int(cfg["max_context"])
    n = max(len(rows), 1)
    sw = sweep if sweep is not None else _sweep(rows, cutter)
    ys = y_scale(max_ctx, sw.peak_out, sw.peak_in)
    lanes = [k for k in LANES if cutter or k not in CUTTER_ONLY]
    frame_h = PH + LANE_H * len(lanes)
    height = MT + frame_h + 46

    def x(i: float) -> float:  # i: 1-based request number (centre of its slot)
        return ML + PW * (i - 0.5) / n

    p: list[str] = [
        f'<svg id="replay-chart" xmlns="http://www.w3.org/2000/svg" width="100%" '
        f'viewBox="0 0 {W} {height}" role="img" '
        'aria-label="estimated tokens per request">',
        f'<rect x="0" y="0" width="{W}" height="{height}" fill="#ffffff"/>',
        f'<rect id="frame" x="{ML}" y="{MT}" width="{PW}" height="{frame_h}" fill="#fbfbfb" '
        'stroke="#777"/>',
        f'<rect id="plot-area" x="{ML}" y="{MT}" width="{PW}" height="{PH}" fill="none"/>',
    ]
    p += _off_bands(sw.off, x)
    p += _y_axis(ys)
    p += _x_axis(len(rows), x, MT + frame_h)
    p += _limit_lines(cfg, cutter, ys)
    xs: dict[int, str] = {}  # (each slot's centre, spelled: the same for both lines)
    for lid, key in (("tokens-in", "tokens_in"), ("tokens-out", "tokens_out")):
        if key in sw.lines:
            width = "2" if lid == "tokens-out" else "1.5"
            points = _line_points(sw.lines[key], len(rows), x, ys.heights, xs)
            p.append(
                f'<polyline id="{lid}" fill="none" stroke="{LINES[lid][1]}" '
                f'stroke-width="{width}" points="{points}"/>'
            )
    p += _lanes(lanes, sw.groups, x, n)
    p += _failures(report, x)
    p += _legend(sw.counts, lanes, cutter, report)
    p.append("</svg>")
    return "\n".join(p)


def _y_axis(ys: YScale) -> list[str]:
    p = []
    for v in ys.ticks():
        yy = ys.y(v)
        p.append(f'<line class="grid" x1="{ML}" y1="{_f(yy)}" x2="{ML + PW}" y2="{_f(yy)}" '
                 'stroke="#e6e6e6"/>')
        ty = yy - 2 if v == 0 else yy + 4  # 0 sits above the lane labels
        p.append(f'<text class="y-tick" data-value="{v}" x="{ML - 6}" y="{_f(ty)}" '
                 f'font-size="11" text-anchor="end" fill="#444">{_num(v)}</text>')
    if ys.log_top:
        yb = MT + ys.band_h + (PH - ys.lin_h - ys.band_h) / 2
        p.append(f'<rect id="scale-break" x="{ML - 6}" y="{_f(yb - 4)}" width="{PW + 12}" '
                 'height="8" fill="#ffffff"/>')
        p.append(f'<path d="M{ML - 8},{_f(yb + 3)} l8,-6 M{ML + PW},{_f(yb + 3)} l8,-6" '
                 'stroke="#777"/>')
        p.append(f'<text id="log-band-label" x="{ML + 6}" y="{MT + 12}" font-size="10.5" '
                 f'fill="#555">log scale above {_num(ys.lin_top)}</text>')
    mid = MT + PH / 2
    p.append(f'<text x="14" y="{_f(mid)}" font-size="12" text-anchor="middle" '
             f'transform="rotate(-90 14 {_f(mid)})">estimated tokens</text>')
    return p


def _x_axis(n: int, x: Callable[[float], float], bottom: float) -> list[str]:
    step = nice_step(n / 10)
    ticks = list(range(step, n + 1, step)) if step > 1 else list(range(1, n + 1))
    p = []
    for i in ticks:
        p.append(f'<line x1="{_f(x(i))}" y1="{_f(bottom)}" x2="{_f(x(i))}" y2="{_f(bottom + 4)}" '
                 'stroke="#777"/>')
        p.append(f'<text class="x-tick" data-value="{i}" x="{_f(x(i))}" y="{_f(bottom + 16)}" '
                 f'font-size="11" text-anchor="middle" fill="#444">{_num(i)}</text>')
    p.append(f'<text x="{ML + PW / 2}" y="{_f(bottom + 34)}" font-size="12" '
             'text-anchor="middle">request</text>')
    return p


def _limit_lines(cfg: dict[str, Any], cutter: bool, ys: YScale) -> list[str]:
    """max_context and the trim target, labelled right of the frame (share, name, value)."""
    max_ctx = int(cfg["max_context"])
    lines = [("max-context", max_ctx, "100 %")]
    if cutter:
        tgt = int(cfg["target_after_trim"])
        lines.append(("trim-target", tgt, f"{100 * tgt / max_ctx:.0f} %" if max_ctx else "-"))
    p = []
    last_y = -100.0
    for lid, v, share in lines:
        _, colour, dash = LINES[lid]
        yy = ys.y(v)
        name = "max_context" if lid == "max-context" else "trim target"
        p.append(f'<line id="{lid}" x1="{ML}" y1="{_f(yy)}" x2="{ML + PW}" y2="{_f(yy)}" '
                 f'stroke="{colour}" stroke-width="1.5" stroke-dasharray="{dash}">'
                 f"<title>{name} {v} ({share})</title></line>")
        ty = max(yy + 4, last_y + 13)  # never on top of the label above
        last_y = ty
        p.append(f'<text id="{lid}-label" x="{ML + PW + 6}" y="{_f(ty)}" font-size="11" '
                 f'fill="{colour}">{share} {"max" if lid == "max-context" else "trim"} · '
                 f"{_num(v)}</text>")
    return p


def _off_bands(runs: list[list[int]], x: Callable[[float], float]) -> list[str]:
    """A band over each run of requests with the module off (first and last request)."""
    p = []
    for a, b in runs:
        x0, x1 = x(a - 0.5), x(b + 0.5)
        title = f"requests {a}-{b}: module off" if a != b else f"request {a}: module off"
        p.append(f'<rect class="band off" data-kind="off" data-count="{b - a + 1}" '
                 f'x="{_f(x0)}" y="{MT}" width="{_f(x1 - x0)}" height="{PH}" '
                 f'fill="{KINDS["off"][1]}" fill-opacity="0.6"><title>{title}</title></rect>')
    return p


def _lanes(
    lanes: list[str], ev: dict[str, dict[int, list[Any]]], x: Callable[[float], float], n: int
) -> list[str]:
    """One labelled lane per event kind under the data area; markers grouped when dense."""
    size = max(1, math.ceil(n / MAX_MARKERS))
    p = ['<g id="markers">']
    for k, kind in enumerate(lanes):
        top = MT + PH + LANE_H * k
        p.append(f'<line x1="{ML}" y1="{top}" x2="{ML + PW}" y2="{top}" stroke="#c8c8c8"/>')
        p.append(f'<text class="lane-label" x="{ML - 6}" y="{top + 12}" font-size="10.5" '
                 f'text-anchor="end" fill="#555">{LANES[kind]}</text>')
        for g, (count, first) in sorted(ev[kind].items()):  # (the rows read by _sweep)
            a, b = g * size + 1, min(n, (g + 1) * size)
            # (a group's title: its numbers and the kind's label, nothing to escape in them)
            title = (
                html_value(_event_title(kind, first)) if count == 1
                else f"requests {a}-{b}: {count} x {KINDS[kind][0]}"
            )
            extra = f' data-count="{count}" data-request="{first["request"]}"'
            xx = min(max(x((a + b) / 2 if size > 1 else a), ML + 6), ML + PW - 6)  # in frame
            el = _shape(kind, xx, top + LANE_H / 2, extra)
            p.append(_titled(el, title))
    p.append("</g>")
    return p


def _failures(report: dict[str, Any], x: Callable[[float], float]) -> list[str]:
    """A crimson line at each invariant's first failing request, linked to its row."""
    at: dict[int, list[dict[str, Any]]] = {}
    for inv in report["invariants"]:
        if inv["verdict"] == "failed" and inv["first_failure"]:
            at.setdefault(inv["first_failure"]["request"], []).append(inv)
    colour = KINDS["failure"][1]
    p = ['<g id="failures">']
    for k, (req, invs) in enumerate(sorted(at.items())):
        xx = x(req)
        warned = report["summary"].get("warned_invariants", [])
        why = "; ".join(f"{i['id']} {'warned' if i['id'] in warned else 'failed'}: "
                        f"{i['first_failure']['detail']}" for i in invs)
        p.append(f'<line class="marker failure" data-kind="failure" data-request="{req}" '
                 f'data-count="{len(invs)}" x1="{_f(xx)}" y1="{MT}" x2="{_f(xx)}" '
                 f'y2="{MT + PH}" stroke="{colour}" stroke-width="2">'
                 f"<title>request {req}: {html_value(why)}</title></line>")
        ty = MT + 14 + 14 * (k % 3)
        left = xx > ML + PW - 80
        for j, inv in enumerate(invs):
            tx = xx - 4 - 24 * j if left else xx + 4 + 24 * j
            p.append(f'<a class="failure-link" href="#inv-{html_value(inv["id"])}" '
                     f'data-request="{req}"><text x="{_f(tx)}" y="{ty}" font-size="11" '
                     f'font-weight="bold" text-anchor="{"end" if left else "start"}" '
                     f'fill="{colour}" stroke="#ffffff" stroke-width="3" paint-order="stroke">'
                     f'{html_value(inv["id"])}<title>request {req}: {html_value(why)}</title>'
                     '</text></a>')
    p.append("</g>")
    return p


def _legend(
    counts: dict[str, int], lanes: list[str], cutter: bool, report: dict[str, Any]
) -> list[str]:
    """Every line and every kind of marker of this simulation, with its count."""
    lx, ly = ML + PW + 122, MT + 6
    failed = sum(1 for i in report["invariants"] if i["verdict"] == "failed")
    p = ['<g id="legend">']
    entries: list[tuple[str, str]] = [
        ("line", lid) for lid in LINES if cutter or lid in ("tokens-in", "max-context")
    ]
    entries += [("kind", k) for k in lanes]
    if cutter:
        entries.append(("kind", "off"))
    entries.append(("kind", "failure"))
    for j, (what, key) in enumerate(entries):
        yy = ly + 18 * j + 8
        if what == "line":
            label, colour, dash = LINES[key]
            sw = (f'<line x1="{lx}" y1="{yy}" x2="{lx + 18}" y2="{yy}" stroke="{colour}" '
                  f'stroke-width="2" stroke-dasharray="{dash}"/>')
        else:
            label, colour = KINDS[key]
            count = failed if key == "failure" else counts[key]
            label = f"{label}: {count}"
            if key == "off":
                sw = f'<rect x="{lx + 2}" y="{yy - 6}" width="14" height="12" fill="{colour}"/>'
            elif key == "failure":
                sw = (f'<line x1="{lx + 9}" y1="{yy - 7}" x2="{lx + 9}" y2="{yy + 7}" '
                      f'stroke="{colour}" stroke-width="2"/>')
            else:
                sw = _shape(key, lx + 9, yy).replace(f'class="marker {key}"', 'class="swatch"')
        p.append(f'<g class="legend-entry" data-kind="{key}">{sw}'
                 f'<text x="{lx + 24}" y="{yy + 4}" font-size="11">{html_value(label)}</text></g>')
    p.append("</g>")
    return p


_CSS = (
    "body{font-family:system-ui,sans-serif;margin:24px;color:#222}"
    "table{border-collapse:collapse;margin:8px 0 20px}"
    "td,th{border:1px solid #ccc;padding:3px 8px;font-size:13px;text-align:left}"
    "th{background:#f0f0f0}.passed{color:#2e7d32;font-weight:bold}"
    ".failed{color:#b00020;font-weight:bold}.not-checked{color:#8a6d00;font-weight:bold}"
    "tr.failed-row td,tr.failing td{background:#fde8ec}tr.warned-row td{background:#fff6d6}"
    "tr:target td{outline:2px solid #b00020}#replay-chart{display:block;width:100%;"
    "height:auto}"
    "code{font-size:12px}"
)


def _table(
    head: list[str], body: list[list[Any]], attrs: list[str] | None = None
) -> str:
    """``attrs``: per body row, extra attributes for its ``<tr>`` (id, class)."""
    h = "".join(f"<th>{html_value(c)}</th>" for c in head)
    seen: dict[str, str] = {}  # (a column's few words, escaped once)
    rows = "".join(
        f"<tr{attrs[k] if attrs else ''}><td>" + "</td><td>".join(map(_cell, row, repeat(seen)))
        + "</td></tr>" if row else f"<tr{attrs[k] if attrs else ''}></tr>"
        for k, row in enumerate(body)
    )
    return f"<table><thead><tr>{h}</tr></thead><tbody>{rows}</tbody></table>"


#: the characters :func:`~risutools.printable.html_value` escapes (``html.escape``'s)
_ESCAPED = re.compile("[&<>\"']")
#: a cell's text of a value :func:`_txt` spells without looking further, escaped
_SPELLED: dict[Any, str] = {True: "yes", False: "no", None: "-"}


def _cell(v: Any, seen: dict[str, str] | None = None) -> str:
    """A table cell's text, escaped: an integer's digits as they are (nothing in them to
    escape; most cells of the requests table), a bool's or None's word (nothing to escape
    in them), anything else through :func:`_txt`; ``seen``: the strings escaped so far
    (each escaped once; one that :func:`~risutools.printable.html_value` leaves as it is,
    printable and none of ``& < > " '`` in it, not passed through it)."""
    kind = type(v)
    if kind is int:  # (not a bool: _txt spells those yes/no)
        return str(v)
    if kind is bool or v is None:
        return _SPELLED[v]
    if kind is str and seen is not None:
        out = seen.get(v)
        if out is None:  # (_txt of a str is the str)
            plain = v.isprintable() and _ESCAPED.search(v) is None
            out = seen[v] = v if plain else html_value(v)
        return out
    return html_value(_txt(v))


def _txt(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, list):
        return ", ".join(_txt(x) for x in v) or "none"
    if isinstance(v, dict):
        return ", ".join(f"{k}={_txt(x)}" for k, x in v.items())
    return str(v)


def render_html(report: dict[str, Any], sweep: ChartSweep | None = None,
                table: Picked | None = None) -> str:
    """The page; ``sweep`` (:class:`ChartSweep`) and ``table`` (the requests table's rows
    and how many qualified, as :func:`_requests_section` picks them): what the rows give,
    gathered while the replay ran (None: read from the report's rows)."""
    s = report["summary"]
    comp = report.get("component") or {}
    fx = report["fixture"]
    title = f"Replay of {comp.get('component_id') or '(no component)'} on {fx['name']}"
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{html_value(title)}</title>",
        f"<style>{_CSS}</style></head><body>",
        f"<h1>{html_value(title)}</h1>",
        f'<p>Verdict: <span class="{html_value(s["verdict"])}">{html_value(s["verdict"])}</span> · '
        f"simulation <code>{html_value(report['simulation'])}</code> · {s['requests']} request(s)"
        f"<br>fixture <code>{html_value(fx['file'])}</code> {html_value(fx['sha256'])}"
        + (f"<br>component document {html_value(str(comp.get('doc_sha256')))}" if comp else "")
        + f"<br>report {html_value(report['report_sha256'])}</p>",
        render_chart(report, sweep),
        "<h2>Summary</h2>",
        _table(["measure", "value"], [[k, s[k]] for k in sorted(s)]),
    ]
    parts += _invariants_section(report)
    parts.append("<h2>Configuration</h2>")
    parts.append(
        _table(["key", "value"], [[k, report["config"][k]] for k in sorted(report["config"])])
    )
    parts += _requests_section(report, table)
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def _invariants_section(report: dict[str, Any]) -> list[str]:
    """The invariants table (one row per check, anchored ``#inv-<id>``)."""
    parts: list[str] = []
    warned = report["summary"].get("warned_invariants", [])
    if report["invariants"]:
        parts.append("<h2>Invariants</h2>")
        parts.append(
            _table(
                ["id", "verdict", "requests checked", "first failing request", "invariant"],
                [
                    [
                        i["id"],
                        verdict_text(i, warned),
                        i["requests_checked"],
                        f"{i['first_failure']['request']}: {i['first_failure']['detail']}"
                        if i["first_failure"]
                        else None,
                        i["text"],
                    ]
                    for i in report["invariants"]
                ],
                [
                    f' id="inv-{html_value(i["id"])}" class="'
                    f'{"warned" if i["id"] in warned else html_value(i["verdict"])}-row"'
                    for i in report["invariants"]
                ],
            )
        )
    return parts


def _requests_section(report: dict[str, Any], table: Picked | None = None) -> list[str]:
    """The requests table: every row, or past MAX_TABLE_ROWS the failing and eventful ones."""
    parts: list[str] = []
    rows = report["requests"]
    failing: dict[int, list[str]] = {}
    for inv in report["invariants"]:
        if inv["first_failure"]:
            failing.setdefault(inv["first_failure"]["request"], []).append(inv["id"])
    if table is not None:
        shown, total = table
    elif len(rows) <= MAX_TABLE_ROWS:
        shown, total = list(rows), len(rows)
    else:  # one pass, MAX_TABLE_ROWS rows kept (and those of a first failure)
        shown, total = pick_rows(rows, failing, MAX_TABLE_ROWS)
        if total == len(rows):  # every row qualifies: every row is shown
            shown = list(rows)
    parts.append("<h2>Requests</h2>")
    if total != len(rows):
        parts.append(
            f"<p>{min(total, MAX_TABLE_ROWS)} of {len(rows)} requests (the first failing "
            "ones, then those with a cut, an anchor loss, a toggle, an alert or an orphaned tool "
            "result); every row is in the JSON report.</p>"
        )
    cutter = report["simulation"] == "context-cutter"
    head = [*(_CUTTER_HEAD if cutter else _MONITOR_HEAD), "first failure of"]
    cells = _cutter_cells if cutter else _monitor_cells
    seen: dict[str, str] = {}  # (a column's few words, escaped once: as _table does)
    rows_html = [
        (_cutter_row(r, failing, seen) if cutter else None)
        or _request_row(r, cells(r), failing, seen) for r in shown]
    h = "".join(f"<th>{html_value(c)}</th>" for c in head)
    parts.append(f"<table><thead><tr>{h}</tr></thead><tbody>{''.join(rows_html)}"
                 "</tbody></table>")
    return parts


def _request_row(r: dict[str, Any], row: list[Any], failing: dict[int, list[str]],
                 seen: dict[str, str]) -> str:
    """A row of the requests table as :func:`_table` spells it: its cells (``row``) and
    the invariants whose first failure it is, anchored ``#req-<request>``."""
    row.append(", ".join(failing.get(r["request"], [])) or None)
    return (f'<tr id="req-{r["request"]}"'
            + (' class="failing"' if r["request"] in failing else "")
            + "><td>" + "</td><td>".join(map(_cell, row, repeat(seen))) + "</td></tr>")


def _cutter_row(r: dict[str, Any], failing: dict[int, list[str]],
                seen: dict[str, str]) -> str | None:
    """:func:`_request_row` of a context cutter's row (:func:`_cutter_cells`) whose
    counts are integers and whose flags are bools, as it is spelled (the counts' digits
    as they are, nothing in them to escape, and each cell without a list made for it);
    None for any other row."""
    req, m_in, m_out, t_in, t_out = (r["request"], r["messages_in"], r["messages_out"],
                                     r["tokens_in"], r["tokens_out"])
    dropped, cont, budget = r["dropped"], r["continuity_dropped"], r["budget_dropped"]
    on, unreachable = r["enabled"], r["budget_unreachable"]
    if not (type(req) is type(m_in) is type(m_out) is type(t_in) is type(t_out)
            is type(dropped) is type(cont) is type(budget) is int
            and type(on) is type(unreachable) is bool):
        return None
    mon = r["monitor"]
    anchor = r["anchor"] + (" (fallback)" if r["fallback"] else "")
    firsts = failing.get(req)
    mark = "" if firsts is None else ' class="failing"'
    return (f'<tr id="req-{req}"{mark}><td>{req}'
            f'</td><td>{"yes" if on else "no"}</td><td>{m_in}/{m_out}</td><td>{t_in}/{t_out}'
            f'</td><td>{dropped}</td><td>{cont}+{budget}</td><td>{_cell(anchor, seen)}</td>'
            f'<td>{"yes" if unreachable else "no"}</td>'
            f'<td>{_cell(mon["level"] or mon["metrics"], seen)}</td>'
            f'<td>{_cell(mon["alert_reason"], seen)}</td>'
            f'<td>{_cell(", ".join(firsts) if firsts else None, seen)}</td></tr>')


_CUTTER_HEAD = ("request", "on", "messages in/out", "tokens in/out", "dropped",
                "continuity+budget", "anchor", "unreachable", "level", "alert")
_MONITOR_HEAD = ("request", "messages", "tokens", "used %", "level", "alert")


def _cutter_cells(r: dict[str, Any]) -> list[Any]:
    """One row of the cutter's requests table (the cells of :data:`_CUTTER_HEAD`)."""
    return [
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


def _monitor_cells(r: dict[str, Any]) -> list[Any]:
    """One row of the monitor's requests table (the cells of :data:`_MONITOR_HEAD`)."""
    return [
        r["request"],
        r["messages_in"],
        r["tokens_in"],
        r["monitor"]["used_pct"],
        r["monitor"]["level"] or r["monitor"]["metrics"],
        r["monitor"]["alert_reason"],
    ]
