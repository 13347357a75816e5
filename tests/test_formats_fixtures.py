"""The committed fixtures are exactly what the builder makes (deterministic, up to date)."""

from __future__ import annotations

import importlib.util
import sys
import zlib
from types import ModuleType

import pytest
from harness import ROOT

#: a text, and what the zlib the fixtures are built with (madler's zlib, 1.2 and 1.3: the
#: same deflate output for years) makes of it at level 9.  Another deflate that a system may
#: ship as its zlib (zlib-ng) writes other bytes for the same input, so the fixtures it
#: would build (presets, cards, images) are not byte for byte the committed ones.
_SAMPLE = b"".join(b"risutools fixture %d: %s; " % (i % 7, b"abcdefghij"[i % 10:])
                   for i in range(96))
_SAMPLE_DEFLATED = bytes.fromhex(
    "78daedd53b6e42411044d1adf412fa1f8c570336d8cfb284f400c9cb87dcaaeadc22be134c9da4f7ed7abf"
    "5d2e3f57396fbfb7fb7e125d7238be7f9cce9f5fdbf79bec7f1ed812da7d09cbb184d45c82632d81ad97a0"
    "f45c84a7c00de8f31c27079ce2384d7194e118c1718c131027114e019c9e7074c0318ee31427184e129cc2"
    "380d7114e118c0f10927069ce43845719ae128c1318ce31027104e029c9a707ac0518e6314c7194e109cc4"
    "3805711ae128c0b109c7079ce03849718ae134c1518c6310c7114e009c9c706ac0698ea314c7188e139cc0"
    "3809710ae134c0799df2d729ffc7a7fc017881e679")


def _builder() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "build_fixtures", ROOT / "fixtures" / "build_fixtures.py"
    )
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["build_fixtures"] = mod
    spec.loader.exec_module(mod)
    return mod


def test_builder_is_deterministic_and_fixtures_are_current() -> None:
    """The builder makes the same bytes twice, and they are the committed fixtures (with
    the zlib they are built with: with another deflate, the determinism alone)."""
    b = _builder()
    reference = zlib.compress(_SAMPLE, 9) == _SAMPLE_DEFLATED
    for make, folder in ((b.sources, b.SOURCES), (b.broken, b.BROKEN), (b.golden, b.GOLDEN)):
        first, second = make(), make()
        assert first == second
        for name, data in first.items():
            assert (folder / name).is_file(), name
            if reference:
                assert (folder / name).read_bytes() == data, name
    if not reference:
        pytest.skip(f"this Python's zlib ({zlib.ZLIB_RUNTIME_VERSION}) deflates otherwise than "
                    "the one the fixtures were built with: the builder's determinism checked, "
                    "not the committed bytes")


def test_source_names_carry_a_post_id() -> None:
    for p in (ROOT / "fixtures" / "sources").iterdir():
        head, sep, _ = p.name.partition("_")
        assert sep and head.isdigit(), p.name


def test_generated_images_are_well_formed() -> None:
    b = _builder()
    webp = b.webp_1x1((255, 1, 2, 3))
    assert webp[:4] == b"RIFF" and webp[8:16] == b"WEBPVP8L"
    assert int.from_bytes(webp[4:8], "little") == len(webp) - 8
    png = b.png(2, 2, (1, 2, 3, 4))
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and png.endswith(b"IEND\xaeB`\x82")
