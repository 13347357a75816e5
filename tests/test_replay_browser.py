"""The HTML report, opened in a real headless browser (Debian's ``chromium``).

Skipped with a visible reason when no Chromium is installed, unless
``RISUTOOLS_REQUIRE_BROWSER=1`` (CI), where a missing browser is a failure.
"""

from __future__ import annotations

import itertools
import json
import math
import re
import shutil
import struct
import zlib
from html import unescape
from pathlib import Path
from typing import Any

import pytest
from harness import ROOT, browser_or_skip, run_browser

from risutools.replay.api import write_report_files
from risutools.replay.fixture import Fixture, build_fixture, load_fixture, parse_fixture_bytes
from risutools.replay.run import build_report, replay_cutter, replay_monitor
from risutools.replay.synth import synthesize
from risutools.settings.replay import ReplayConfig, build_config, load_replay_config


def _browser() -> str:
    return browser_or_skip("the HTML replay report")


_run = run_browser


def decode_png(data: bytes) -> tuple[int, int, list[bytes]]:
    """Width, height and RGB(A) rows of an 8-bit non-interlaced PNG (colour type 2 or 6)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat = 8, b""
    width = height = bpp = 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        body = data[pos + 8 : pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and ctype in (2, 6) and interlace == 0
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows: list[bytes] = []
    prev = bytearray(stride)
    i = 0
    for _ in range(height):
        ftype = raw[i]
        line = bytearray(raw[i + 1 : i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if ftype == 1:
                line[x] = (line[x] + a) & 255
            elif ftype == 2:
                line[x] = (line[x] + b) & 255
            elif ftype == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif ftype == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[x] = (line[x] + pred) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, rows


def test_png_decoder_on_a_known_image() -> None:
    # 2x1 RGB: one red pixel, one white; filter type 1 (Sub) on the row
    row = bytes([1, 255, 0, 0, 0, 255, 255])  # white = red + (0, 255, 255)
    ihdr = struct.pack(">IIBBBBB", 2, 1, 8, 2, 0, 0, 0)

    def chunk(kind: bytes, body: bytes) -> bytes:
        return (
            struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
        )

    png = (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", ihdr)
        + chunk(b"IDAT", zlib.compress(row))
        + chunk(b"IEND", b"")
    )
    w, h, rows = decode_png(png)
    assert (w, h) == (2, 1) and rows[0] == bytes([255, 0, 0, 255, 255, 255])


# A probe run by Chromium on a copy of the page (the page itself has no script): it
# measures the chart as laid out and leaves the figures in <pre id="probe"> for --dump-dom.
PROBE_JS = r"""
(function () {
  // Reads any version of the chart: the ids and classes the page gives, and where it gives
  // none (an older page), the same things found by their look (so an old chart fails for
  // what is wrong with it, not for a missing id).
  function box(el) {
    if (!el) return null;
    var r = el.getBoundingClientRect();
    return {x: r.left, y: r.top, r: r.right, b: r.bottom, w: r.width, h: r.height};
  }
  function union(boxes) {
    if (!boxes.length) return null;
    var u = {x: 1e9, y: 1e9, r: -1e9, b: -1e9};
    boxes.forEach(function (b) { u.x = Math.min(u.x, b.x); u.y = Math.min(u.y, b.y);
                                 u.r = Math.max(u.r, b.r); u.b = Math.max(u.b, b.b); });
    u.w = u.r - u.x; u.h = u.b - u.y;
    return u;
  }
  function attr(el, name) { return el ? el.getAttribute(name) : null; }
  var svg = document.getElementById("replay-chart");
  var q = function (sel) {
    return svg ? Array.prototype.slice.call(svg.querySelectorAll(sel)) : []; };
  var num = function (t) { return Number(t.textContent.replace(/,/g, "")); };
  var frameEl = document.getElementById("frame") || q("rect[stroke]")[0];
  var frame = box(frameEl);
  var plot = box(document.getElementById("plot-area")) || frame;
  var texts = q("text");
  var legendTexts = [];
  var first = texts.filter(function (t) { return /tokens in/.test(t.textContent); })[0];
  if (first) legendTexts = texts.filter(function (t) { return attr(t, "x") === attr(first, "x"); });
  var legend = box(document.getElementById("legend")) ||
               union(legendTexts.map(function (t) { return box(t); }));
  var kindOf = function (m) {
    var k = attr(m, "data-kind");
    if (k) return k;
    var c = attr(m, "class");
    if (c === "alert") return attr(m, "fill") === "#c62828" ? "alert-critical" : "alert-warning";
    return c;
  };
  var ticks = function (cls, test) {
    var els = q("." + cls);
    if (!els.length) els = texts.filter(test);
    return els.map(function (t) {
      return {value: attr(t, "data-value") !== null ? Number(attr(t, "data-value")) : num(t),
              text: t.textContent, box: box(t)}; });
  };
  var numeric = function (t) { return /^[0-9][0-9,.]*[kM]?$/.test(t.textContent.trim()); };
  var out = {
    chart: !!svg, frame: frame, plot: plot, legend: legend, lines: {}, labels: {},
    markers: q(".marker, .cut, .anchor-lost, .unreachable, .alert").map(function (m) {
      return {kind: kindOf(m), count: Number(attr(m, "data-count") || 1),
              request: Number(attr(m, "data-request") || 0), box: box(m),
              fill: attr(m, "fill"), stroke: attr(m, "stroke")};
    }),
    legend_entries: q(".legend-entry").map(function (g) {
      var sw = g.firstElementChild;
      return {kind: attr(g, "data-kind"), text: g.textContent, box: box(g),
              fill: attr(sw, "fill"), stroke: attr(sw, "stroke"),
              dash: attr(sw, "stroke-dasharray")};
    }),
    legend_texts: legendTexts.map(function (t) { return t.textContent; }),
    x_ticks: ticks("x-tick", function (t) {
      return numeric(t) && frame && box(t).y > frame.b; }),
    y_ticks: ticks("y-tick", function (t) {
      return numeric(t) && frame && box(t).r < frame.x; }),
    links: q("a").map(function (a) {
      var href = attr(a, "href") || "";
      var target = href.charAt(0) === "#" ? document.getElementById(href.slice(1)) : null;
      return {href: href, request: Number(attr(a, "data-request") || 0),
              target: target ? target.textContent : null, box: box(a)};
    })
  };
  ["tokens-in", "tokens-out", "max-context", "trim-target"].forEach(function (id) {
    var el = document.getElementById(id);
    if (el) out.lines[id] = {box: box(el), stroke: attr(el, "stroke"),
                             dash: attr(el, "stroke-dasharray")};
    var lab = document.getElementById(id + "-label");
    if (lab) out.labels[id] = {box: box(lab), text: lab.textContent};
  });
  var pre = document.createElement("pre");
  pre.id = "probe";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
"""


def probe(browser: str, tmp: Path, page: Path) -> dict[str, Any]:
    """The page's chart geometry as Chromium lays it out (a probing copy of the page)."""
    copy = page.with_name(page.stem + ".probe.html")
    html = page.read_text(encoding="utf-8")
    copy.write_text(html.replace("</body>", f"<script>{PROBE_JS}</script></body>"), "utf-8")
    dom = _run(browser, tmp, "--window-size=1200,900", "--dump-dom", copy.as_uri())
    assert dom.returncode == 0, dom.stderr[-2000:]
    start = dom.stdout.index('<pre id="probe">') + len('<pre id="probe">')
    text = dom.stdout[start : dom.stdout.index("</pre>", start)]
    data: dict[str, Any] = json.loads(unescape(text))
    return data


def _inside(a: dict[str, float], b: dict[str, float], tol: float = 0.6) -> bool:
    return (a["x"] >= b["x"] - tol and a["y"] >= b["y"] - tol
            and a["r"] <= b["r"] + tol and a["b"] <= b["b"] + tol)


def _overlap(a: dict[str, float], b: dict[str, float]) -> bool:
    return a["x"] < b["r"] and b["x"] < a["r"] and a["y"] < b["b"] and b["y"] < a["b"]


def _is_125(step: float) -> bool:
    if step <= 0:
        return False
    mant = step / 10 ** math.floor(math.log10(step))
    return any(abs(mant - m) < 1e-9 for m in (1, 2, 5))


def _expected_counts(report: dict[str, Any]) -> dict[str, int]:
    rows = report["requests"]
    cutter = report["simulation"] == "context-cutter"
    want = {
        "alert-warning": sum(1 for r in rows
                             if r["monitor"]["alert"] and r["monitor"]["level"] == "WARNING"),
        "alert-critical": sum(1 for r in rows
                              if r["monitor"]["alert"] and r["monitor"]["level"] == "CRITICAL"),
        "failure": len({i["first_failure"]["request"] for i in report["invariants"]
                        if i["verdict"] == "failed"}),
    }
    if cutter:
        want["cut"] = sum(1 for r in rows if r["budget_dropped"])
        want["unreachable"] = sum(1 for r in rows if r["budget_unreachable"])
        want["anchor-lost"] = sum(1 for r in rows if r["anchor"] == "lost")
        want["orphan"] = sum(1 for r in rows if r["orphaned_tool_results"])
    return want


def geometry_problems(g: dict[str, Any], report: dict[str, Any]) -> list[str]:
    """What is wrong with the chart's layout (empty: all good)."""
    if not g["chart"] or not g["frame"] or not g["plot"]:
        return ["no chart, frame or plot area in the DOM"]
    frame, plot = g["frame"], g["plot"]
    cutter = report["simulation"] == "context-cutter"
    problems: list[str] = []
    # legend: present, right of the data, never over it
    if not g["legend"]:
        problems.append("no legend")
    elif _overlap(g["legend"], frame):
        problems.append("the legend covers the frame")
    # every marker inside the frame; alerts in their lane, not at a token count
    for m in g["markers"]:
        if not _inside(m["box"], frame):
            problems.append(f"{m['kind']} marker at request {m['request']} outside the frame")
        if m["kind"].startswith("alert") and m["box"]["y"] < plot["b"] - 0.6:
            problems.append(f"{m['kind']} marker at request {m['request']} drawn among the "
                            "token values")
    # the limit lines are labelled with their share, next to the line, apart from each other
    wanted = {"max-context": "100 %"}
    if cutter:
        cfg = report["config"]
        wanted["trim-target"] = f"{100 * cfg['target_after_trim'] / cfg['max_context']:.0f} %"
    for lid, share in wanted.items():
        line, label = g["lines"].get(lid), g["labels"].get(lid)
        if not line or not label or share not in label["text"]:
            problems.append(f"the {lid} line has no label saying {share}")
            continue
        mid = (label["box"]["y"] + label["box"]["b"]) / 2
        if abs(mid - line["box"]["y"]) > 14:
            problems.append(f"the {lid} label is {mid - line['box']['y']:.0f} px from its line")
        if g["legend"] and _overlap(label["box"], g["legend"]):
            problems.append(f"the {lid} label is under the legend")
    labels = [g["labels"][k]["box"] for k in wanted if k in g["labels"]]
    if len(labels) == 2 and _overlap(labels[0], labels[1]):
        problems.append("the max_context and trim target labels overlap")
    problems += _tick_problems(g)
    problems += _legend_problems(g, report)
    # not squashed: what is sent, and the budget, use the height of the plot
    out = g["lines"].get("tokens-out")
    if cutter and out and plot["b"] - out["box"]["y"] < 0.3 * plot["h"]:
        problems.append(f"tokens out squashed into the bottom {plot['b'] - out['box']['y']:.0f} "
                        f"of {plot['h']:.0f} px")
    mc = g["lines"].get("max-context")
    if mc and plot["b"] - mc["box"]["y"] < 0.2 * plot["h"]:
        problems.append("max_context sits in a band at the bottom of the plot")
    problems += _failure_problems(g, report)
    return problems


def _tick_problems(g: dict[str, Any]) -> list[str]:
    problems = []
    xs = [t["value"] for t in g["x_ticks"]]
    if len(xs) < 2 and len(g["x_ticks"]) != 1:
        problems.append("fewer than two request ticks")
    steps = {b - a for a, b in itertools.pairwise(xs)}
    if len(steps) > 1 or not all(_is_125(s) for s in steps) or (
        xs and steps and xs[0] % next(iter(steps)) and xs[0] != 1
    ):
        problems.append(f"request ticks not on a 1-2-5 step: {xs[:6]}")
    ys = [t["value"] for t in g["y_ticks"]]
    ysteps = [b - a for a, b in itertools.pairwise(ys)]
    lin = list(itertools.takewhile(lambda s: s == ysteps[0], ysteps)) if ysteps else []
    if not ys or ys[0] != 0 or not lin or not _is_125(lin[0]):
        problems.append(f"token ticks not on a 1-2-5 step from 0: {ys[:8]}")
    for v in ys[len(lin) + 1 :]:  # the log band: 1, 2 or 5 times a power of ten
        if not _is_125(v):
            problems.append(f"log-band tick {v} is not 1, 2 or 5 times a power of ten")
    return problems


def _legend_problems(g: dict[str, Any], report: dict[str, Any]) -> list[str]:
    problems = []
    legend = {e["kind"]: e for e in g["legend_entries"]}
    if not legend and g.get("legend_texts"):
        return [f"legend without one entry per kind: {g['legend_texts']}"]
    want = _expected_counts(report)
    for kind, count in want.items():
        got = sum(m["count"] for m in g["markers"] if m["kind"] == kind)
        if got != count:
            problems.append(f"{got} {kind} marked, the report has {count}")
        if kind not in legend:
            problems.append(f"no legend entry for {kind}")
        elif kind != "failure" and not legend[kind]["text"].endswith(f": {count}"):
            problems.append(f"legend count for {kind}: {legend[kind]['text']!r}, want {count}")
    for m in g["markers"]:
        if m["kind"] not in legend:
            problems.append(f"{m['kind']} markers are not in the legend")
    for lid in g["lines"]:
        if lid not in legend:
            problems.append(f"the {lid} line is not in the legend")
    # one colour, one meaning: marker kinds and lines each get their own
    colours: dict[str, set[str]] = {}
    for m in g["markers"]:
        colours.setdefault(m["kind"], set()).add(m["fill"] if m["fill"] not in (None, "none")
                                                 else m["stroke"])
    seen: dict[str, str] = {}
    for kind, cs in colours.items():
        if len(cs) != 1:
            problems.append(f"{kind} markers in several colours {sorted(cs)}")
        for c in cs:
            if c in seen and seen[c] != kind:
                problems.append(f"{kind} and {seen[c]} share the colour {c}")
            seen[c] = kind
    line_styles = [(v["stroke"], v["dash"]) for v in g["lines"].values()]
    if len(set(line_styles)) != len(line_styles):
        problems.append(f"two lines look the same: {line_styles}")
    return problems


def _failure_problems(g: dict[str, Any], report: dict[str, Any]) -> list[str]:
    problems = []
    ticks = g["x_ticks"]
    for inv in report["invariants"]:
        if inv["verdict"] != "failed":
            continue
        req = inv["first_failure"]["request"]
        marks = [m for m in g["markers"] if m["kind"] == "failure" and m["request"] == req]
        if not marks:
            problems.append(f"{inv['id']} failed at request {req}, which is not marked")
            continue
        if len(ticks) >= 2:
            (a, b) = ticks[0], ticks[-1]
            xa, xb = (a["box"]["x"] + a["box"]["r"]) / 2, (b["box"]["x"] + b["box"]["r"]) / 2
            slot = (xb - xa) / (b["value"] - a["value"])
            want = xa + (req - a["value"]) * slot
            got = (marks[0]["box"]["x"] + marks[0]["box"]["r"]) / 2
            if abs(got - want) > max(2.0, slot / 2):
                problems.append(f"request {req} is marked at x {got:.0f}, not {want:.0f}")
        links = [lk for lk in g["links"] if lk["href"] == f"#inv-{inv['id']}"]
        if not links or not links[0]["target"] or inv["id"] not in links[0]["target"]:
            problems.append(f"no link from the chart to {inv['id']}'s row")
    return problems


def screenshot_problems(browser: str, tmp: Path, page: Path, name: str) -> list[str]:
    """Save ``<name>.png`` in ``tmp`` and check it shows a drawn chart."""
    png = tmp / f"{name}.png"
    png.unlink(missing_ok=True)
    shot = _run(browser, tmp, f"--screenshot={png}", "--window-size=1200,760",
                "--hide-scrollbars", page.as_uri())
    assert png.exists(), shot.stderr[-2000:]
    w, h, rows = decode_png(png.read_bytes())
    bpp = len(rows[0]) // w
    blue = dark = 0
    for row in rows[: min(h, 760)]:
        for x in range(0, min(w, 1150) * bpp, bpp):
            r, gr, b = row[x], row[x + 1], row[x + 2]
            if (r, gr, b) != (255, 255, 255):
                dark += 1
            if b > 150 and r < 60 and 80 < gr < 140:  # the tokens-out line, #0072b2
                blue += 1
    problems = []
    if dark <= 5000:
        problems.append(f"the page looks blank ({dark} non-white pixels)")
    if blue <= 200:
        problems.append(f"the tokens-out line is not drawn ({blue} blue pixels)")
    return problems


def chart_problems(browser: str, tmp: Path, page: Path, report: dict[str, Any],
                   name: str = "chart") -> list[str]:
    """Everything wrong with the chart as Chromium renders ``page`` (empty list: all good)."""
    problems = geometry_problems(probe(browser, tmp, page), report)
    if report["simulation"] == "context-cutter":
        problems += screenshot_problems(browser, tmp, page, name)
    return problems


def _page(tmp: Path, fx: Fixture, cfg: ReplayConfig | None = None) -> tuple[Path, dict[str, Any]]:
    cfg = cfg or load_replay_config(None, fx.config)
    report = build_report(replay_cutter(fx, cfg), fx, cfg, None)
    write_report_files(report, tmp / f"{fx.name}.json")
    return (tmp / f"{fx.name}.html").resolve(), report


def _toggle_page(tmp: Path) -> tuple[Path, dict[str, Any]]:
    return _page(tmp, load_fixture(ROOT / "fixtures" / "replay" / "toggle.yaml"))


RESURRECT = """fixture: conversation-v1
name: resurrect
config: {tokenizer_profile: 1, message_overhead: 0, max_context: 40, preserve_latest: 1,
         trim_percent: 0}
turns:
  - append: [{role: user, content: aaaaaaaaaa}, {role: user, content: bbbbbbbbbb},
             {role: user, content: cccccccccc}, {role: user, content: dddddddddd},
             {role: user, content: eeeeeeeeee}]
  - edit: {id: m1, content: BBBBBBBBBB}
  - edit: [{id: m0, content: BBBBBBBBBB}, {id: m1, content: ''}]
  - append: [{role: user, content: ffffffffff}]
"""


def test_html_chart_renders_in_chromium(tmp_path: Path) -> None:
    browser = _browser()
    page, report = _toggle_page(tmp_path)
    summary = report["summary"]
    # tokens out 70, 130, 140, 100, 80 of 100 (test_replay_fixtures): remaining 30 % at
    # request 1 (WARNING, first alert), -30 % at 2 (CRITICAL, escalation), then CRITICAL
    # within the debounce: two alerts; requests 1 and 5 cut
    assert summary["alerts"] == 2 and summary["cuts"] == 2
    assert chart_problems(browser, tmp_path, page, report, "toggle") == []
    assert (tmp_path / "toggle.png").stat().st_size > 0


def test_failing_replay_marks_and_links_the_failing_request(tmp_path: Path) -> None:
    browser = _browser()
    fx = parse_fixture_bytes(RESURRECT.encode(), "resurrect.yaml")
    page, report = _page(tmp_path, fx)
    assert report["summary"]["failed_invariants"] == ["R5"]
    assert chart_problems(browser, tmp_path, page, report, "failing") == []
    html = page.read_text(encoding="utf-8")
    assert 'id="inv-R5"' in html and 'id="req-3" class="failing"' in html


@pytest.mark.parametrize(
    ("requests", "layer"),
    [
        # a large tail: budget unreachable on most requests, the uncut history far above
        (1000, {"max_context": 3000, "preserve_latest": 120, "trim_percent": 20}),
        (10_000, {"max_context": 32_000, "preserve_latest": 8, "trim_percent": 10}),
    ],
)
def test_long_runs_stay_readable(tmp_path: Path, requests: int, layer: dict[str, Any]) -> None:
    browser = _browser()
    data = synthesize(9, 2 * requests, turns=requests, edit_rate=0.05, delete_rate=0.02,
                      tool_rate=0.3)
    page, report = _page(tmp_path, build_fixture(data), build_config(layer))
    if requests == 1000:
        assert report["summary"]["budget_unreachable"] > 100
    assert page.stat().st_size < 600_000  # lines and markers grouped per pixel column
    assert chart_problems(browser, tmp_path, page, report, f"run-{requests}") == []


def test_monitor_page(tmp_path: Path) -> None:
    browser = _browser()
    fx = load_fixture(ROOT / "fixtures" / "replay" / "monitor.yaml")
    cfg = load_replay_config(None, fx.config)
    report = build_report(replay_monitor(fx, cfg), fx, cfg, None)
    write_report_files(report, tmp_path / "monitor.json")
    assert chart_problems(browser, tmp_path, tmp_path / "monitor.html", report) == []


def test_the_browser_check_fails_without_the_chart(tmp_path: Path) -> None:
    """The same check on the same page with the SVG removed must complain."""
    browser = _browser()
    page, report = _toggle_page(tmp_path)
    html = page.read_text(encoding="utf-8")
    start, end = html.index("<svg"), html.index("</svg>") + len("</svg>")
    page.write_text(html[:start] + html[end:], encoding="utf-8")
    assert geometry_problems(probe(browser, tmp_path, page), report) == [
        "no chart, frame or plot area in the DOM"
    ]
    shot = screenshot_problems(browser, tmp_path, page, "no-chart")
    assert any(p.startswith("the tokens-out line is not drawn") for p in shot), shot


def test_the_browser_check_sees_each_defect(tmp_path: Path) -> None:
    """The defects the issue lists, put back one by one into a good page, are each seen."""
    browser = _browser()
    fx = parse_fixture_bytes(RESURRECT.encode(), "resurrect.yaml")
    page, report = _page(tmp_path, fx)
    good = page.read_text(encoding="utf-8")

    def problems_with(old: str, new: str, count: int = 1) -> list[str]:
        assert old in good, old
        page.write_text(good.replace(old, new, count), encoding="utf-8")
        return geometry_problems(probe(browser, tmp_path, page), report)

    def seen(found: list[str], fragment: str) -> bool:
        return any(fragment in p for p in found)

    # the legend moved over the plot
    got = problems_with('<g id="legend">', '<g id="legend" transform="translate(-600,0)">')
    assert seen(got, "the legend covers the frame"), got
    # an alert drawn at 0 tokens (in the data area)
    m = re.search(r'<path class="marker alert-critical"[^>]*d="M([\d.]+),([\d.]+)', good)
    assert m
    old = f'd="M{m.group(1)},{m.group(2)}'
    got = problems_with(old, f'd="M{m.group(1)},{float(m.group(2)) - 150:.1f}')
    assert seen(got, "drawn among the token values"), got
    # a marker outside the frame
    m = re.search(r'<path class="marker anchor-lost"[^>]*d="M([\d.]+),([\d.]+)', good)
    assert m
    got = problems_with(f'd="M{m.group(1)},{m.group(2)}', f'd="M{m.group(1)},5')
    assert seen(got, "anchor-lost marker at request 2 outside the frame"), got
    # no label on the 100 % line
    got = problems_with('id="max-context-label"', 'id="no-label"')
    assert seen(got, "the max-context line has no label"), got
    # ticks on odd numbers
    got = problems_with('class="x-tick" data-value="2"', 'class="x-tick" data-value="3"')
    assert seen(got, "request ticks not on a 1-2-5 step"), got
    # one colour for two meanings
    got = problems_with('fill="#cc79a7"', 'fill="#d55e00"')
    assert seen(got, "share the colour"), got
    # a marker kind missing from the legend
    got = problems_with('class="legend-entry" data-kind="cut"', 'class="legend-entry" data-kind=""')
    assert seen(got, "no legend entry for cut"), got
    # the failing request not marked
    got = problems_with('class="marker failure"', 'class="not-a-marker"')
    assert seen(got, "R5 failed at request 3, which is not marked"), got
    # the link to the invariant broken
    got = problems_with('href="#inv-R5"', 'href="#inv-nowhere"')
    assert seen(got, "no link from the chart to R5"), got


def test_missing_browser_skips_visibly_or_fails_when_required(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(shutil, "which", lambda name: None)
    monkeypatch.delenv("RISUTOOLS_REQUIRE_BROWSER", raising=False)
    with pytest.raises(pytest.skip.Exception, match="chromium not installed"):
        _browser()
    monkeypatch.setenv("RISUTOOLS_REQUIRE_BROWSER", "1")
    with pytest.raises(pytest.fail.Exception, match="RISUTOOLS_REQUIRE_BROWSER=1"):
        _browser()
