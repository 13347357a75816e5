"""The HTML report, opened in a real headless browser (Debian's ``chromium``).

Skipped with a visible reason when no Chromium is installed, unless
``RISUTOOLS_REQUIRE_BROWSER=1`` (CI), where a missing browser is a failure.
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest

from risutools.replay.api import write_report_files
from risutools.replay.config import load_config
from risutools.replay.fixture import load_fixture
from risutools.replay.run import build_report, replay_cutter

ROOT = Path(__file__).resolve().parents[1]


def _browser() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    if os.environ.get("RISUTOOLS_REQUIRE_BROWSER") == "1":
        pytest.fail("RISUTOOLS_REQUIRE_BROWSER=1 but no chromium on PATH")
    pytest.skip(
        "chromium not installed (apt-get install chromium): HTML report not checked in a browser"
    )


def _run(browser: str, tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    cmd = [
        browser,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        f"--user-data-dir={tmp / 'profile'}",
        *args,
    ]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


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


def chart_problems(browser: str, tmp: Path, page: Path, cuts: int, alerts: int) -> list[str]:
    """What is wrong with the chart as Chromium renders ``page`` (empty list: all good)."""
    problems: list[str] = []
    dom = _run(browser, tmp, "--dump-dom", page.as_uri())
    assert dom.returncode == 0, dom.stderr[-2000:]
    html = dom.stdout
    if html.count('id="replay-chart"') != 1:
        problems.append("no chart element in the DOM")
    for part in ("tokens-in", "tokens-out", "max-context"):
        if f'id="{part}"' not in html:
            problems.append(f"no {part} element in the DOM")
    for kind, want in (("cut", cuts), ("alert", alerts)):
        got = html.count(f'class="{kind}"')
        if got != want:
            problems.append(f"{got} {kind} markers, expected {want}")

    png = tmp / "shot.png"
    png.unlink(missing_ok=True)
    shot = _run(
        browser,
        tmp,
        f"--screenshot={png}",
        "--window-size=1200,900",
        "--hide-scrollbars",
        page.as_uri(),
    )
    assert png.exists(), shot.stderr[-2000:]
    w, h, rows = decode_png(png.read_bytes())
    bpp = len(rows[0]) // w
    # the chart area (1000x380 at the page's left margin, below the heading)
    blue = dark = 0
    for row in rows[: min(h, 700)]:
        for x in range(0, min(w, 1050) * bpp, bpp):
            r, g, b = row[x], row[x + 1], row[x + 2]
            if (r, g, b) != (255, 255, 255):
                dark += 1
            if b > 150 and r < 60 and 80 < g < 140:  # the tokens-out line, #1565c0
                blue += 1
    if dark <= 5000:
        problems.append(f"the page looks blank ({dark} non-white pixels)")
    if blue <= 200:
        problems.append(f"the tokens-out line is not drawn ({blue} blue pixels)")
    return problems


def _toggle_page(tmp: Path) -> tuple[Path, dict[str, object]]:
    fx = load_fixture(ROOT / "fixtures" / "replay" / "toggle.yaml")
    cfg = load_config(None, fx.config)
    report = build_report(replay_cutter(fx, cfg), fx, cfg, None)
    write_report_files(report, tmp / "report.json")
    return (tmp / "report.html").resolve(), report


def test_html_chart_renders_in_chromium(tmp_path: Path) -> None:
    browser = _browser()
    page, report = _toggle_page(tmp_path)
    summary = report["summary"]
    # tokens out 70, 130, 140, 100, 80 of 100 (test_replay_fixtures): remaining 30 % at
    # request 1 (WARNING, first alert), -30 % at 2 (CRITICAL, escalation), then CRITICAL
    # within the debounce: two alerts; requests 1 and 5 cut
    assert isinstance(summary, dict) and summary["alerts"] == 2
    assert chart_problems(browser, tmp_path, page, cuts=2, alerts=2) == []


def test_the_browser_check_fails_without_the_chart(tmp_path: Path) -> None:
    """The same check on the same page with the SVG removed must complain."""
    browser = _browser()
    page, _ = _toggle_page(tmp_path)
    html = page.read_text(encoding="utf-8")
    start, end = html.index("<svg"), html.index("</svg>") + len("</svg>")
    page.write_text(html[:start] + html[end:], encoding="utf-8")
    problems = chart_problems(browser, tmp_path, page, cuts=2, alerts=2)
    assert "no chart element in the DOM" in problems
    assert any(p.startswith("the tokens-out line is not drawn") for p in problems), problems


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
