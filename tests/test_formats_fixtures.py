"""The committed fixtures are exactly what the builder makes (deterministic, up to date)."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

from harness import ROOT


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
    b = _builder()
    for make, folder in ((b.sources, b.SOURCES), (b.broken, b.BROKEN), (b.golden, b.GOLDEN)):
        first, second = make(), make()
        assert first == second
        for name, data in first.items():
            assert (folder / name).read_bytes() == data, name


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
