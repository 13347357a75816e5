"""Fuzz: random and mutated bytes give a clean result or a RisuError, never a crash."""

from __future__ import annotations

import contextlib
import io
import os
import tempfile
from pathlib import Path

from harness import ROOT
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from risutools.errors import RisuError
from risutools.formats import detect, read_path
from risutools.formats.charx import iter_card_assets, read_charx
from risutools.formats.jsonsafe import loads_object
from risutools.formats.risum import read_risum, read_risum_bytes
from risutools.formats.risup import decode_preset
from risutools.formats.summary import summarize
from risutools.report.inspect_text import render_inspect_text as render_text

GOOD = [
    *sorted((ROOT / "fixtures" / "sources").iterdir()),
    ROOT / "fixtures" / "formats" / "golden.risum",
]
SEEDS = [(p.suffix, p.read_bytes()) for p in GOOD if p.stat().st_size < 64 * 1024]
EXTS = [".risum", ".charx", ".jpeg", ".risup", ".risupreset", ".json", ".bin"]
FUZZ = settings(
    max_examples=int(os.environ.get("RISU_FUZZ_EXAMPLES", "300")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    database=None,
)


@st.composite
def mutated(draw: st.DrawFn) -> tuple[str, bytes]:
    ext, data = draw(st.sampled_from(SEEDS))
    buf = bytearray(data)
    for _ in range(draw(st.integers(1, 6))):
        op = draw(st.sampled_from(["flip", "cut", "insert", "set32"]))
        pos = draw(st.integers(0, max(len(buf) - 1, 0)))
        if op == "flip" and buf:
            buf[pos] ^= draw(st.integers(1, 255))
        elif op == "cut":
            del buf[pos : pos + draw(st.integers(1, 64))]
        elif op == "insert":
            buf[pos:pos] = draw(st.binary(min_size=1, max_size=16))
        elif op == "set32" and len(buf) > pos + 4:
            buf[pos : pos + 4] = draw(st.integers(0, 2**32 - 1)).to_bytes(4, "little")
    return draw(st.sampled_from([ext, *EXTS])), bytes(buf)


def _read_file(ext: str, data: bytes) -> None:
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / f"f{ext}"
        p.write_bytes(data)
        try:
            fmt = detect(p)
            assert fmt is None or isinstance(fmt, str)
        except RisuError:
            pass
        try:
            for m in read_path(p, with_assets=True):
                render_text(summarize(m))  # the inspect view must cope with whatever was read
        except RisuError:
            pass
        with contextlib.suppress(RisuError):
            read_risum(p)  # the seeking reader (no hash) takes other code paths


def _readers(data: bytes) -> None:
    calls = (
        lambda: read_risum_bytes(data, with_assets=True),
        lambda: read_charx(io.BytesIO(data)),
        lambda: list(iter_card_assets(io.BytesIO(data))),  # what unpack inflates
        lambda: decode_preset(data, rpacked=True),
        lambda: decode_preset(data, rpacked=False),
        lambda: loads_object(data, where="x"),
    )
    for call in calls:
        with contextlib.suppress(RisuError):
            call()


@FUZZ
@given(mutated())
def test_mutated_fixtures(case: tuple[str, bytes]) -> None:
    ext, data = case
    _read_file(ext, data)
    _readers(data)


@FUZZ
@given(st.sampled_from(EXTS), st.binary(max_size=512))
def test_random_bytes(ext: str, data: bytes) -> None:
    _read_file(ext, data)
    _readers(data)


@FUZZ
@given(
    st.sampled_from([b"\x6f\x00", b"PK\x03\x04", b"\x1f\x8b", b"{", b"\xff\xd8\xff"]),
    st.binary(max_size=256),
)
def test_random_bytes_behind_magic(magic: bytes, tail: bytes) -> None:
    _read_file(".bin", magic + tail)
    _readers(magic + tail)
