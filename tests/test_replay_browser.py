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


def test_html_chart_renders_in_chromium(tmp_path: Path) -> None:
    browser = _browser()
    fx = load_fixture(ROOT / "fixtures" / "replay" / "toggle.yaml")
    cfg = load_config(None, fx.config)
    report = build_report(replay_cutter(fx, cfg), fx, cfg, None)
    write_report_files(report, tmp_path / "report.json")
    page = (tmp_path / "report.html").resolve()

    dom = _run(browser, tmp_path, "--dump-dom", page.as_uri())
    assert dom.returncode == 0, dom.stderr[-2000:]
    html = dom.stdout
    assert html.count('id="replay-chart"') == 1
    assert 'id="tokens-in"' in html and 'id="tokens-out"' in html and 'id="max-context"' in html
    assert html.count('class="cut"') == 2  # requests 1 and 5 cut (see test_replay_fixtures)
    assert html.count('class="alert"') == report["summary"]["alerts"] > 0

    png = tmp_path / "shot.png"
    shot = _run(
        browser,
        tmp_path,
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
    assert dark > 5000, "the page looks blank"
    assert blue > 200, "the tokens-out line is not drawn"
