""".risum reading and writing: golden bytes, round trips, streaming, every broken case."""

from __future__ import annotations

import hashlib
import json
import struct
from pathlib import Path

import pytest
from harness import ROOT

from risutools.errors import FormatError, RisuError
from risutools.formats import detect, read_path, rpack
from risutools.formats.risum import iter_risum, read_risum, read_risum_bytes, write_risum

FIX = ROOT / "fixtures"
BROKEN = FIX / "broken"
SOURCES = FIX / "sources"

# Hand-written: RisuAI's JSON.stringify(value, null, 2) of the golden module.
GOLDEN_MAIN = """{
  "module": {
    "name": "golden",
    "id": "00000000-0000-4000-8000-000000000001",
    "description": "한글",
    "lorebook": [],
    "assets": [
      [
        "a",
        "",
        "bin"
      ]
    ]
  },
  "type": "risuModule"
}"""


def test_golden_file_exact_bytes() -> None:
    data = (FIX / "formats" / "golden.risum").read_bytes()
    main = GOLDEN_MAIN.encode("utf-8")
    assert data[:2] == b"\x6f\x00"
    assert struct.unpack("<I", data[2:6])[0] == len(main) == 243
    # first main-block bytes: ENCODE['{'] = 0xe6, ENCODE['\n'] = 0x6e (from the spec table)
    assert data[6:8] == bytes([0xE6, 0x6E])
    assert rpack.decode(data[6 : 6 + len(main)]) == main
    # asset frame: marker 1, length 4, ENCODE of 00 01 02 ff, then the end marker
    assert data[6 + len(main) :] == bytes.fromhex("0104000000c40d1eb800")


def test_golden_decodes_to_module_and_asset() -> None:
    (m,) = read_path(FIX / "formats" / "golden.risum", with_assets=True)
    assert m.name == "golden"
    assert m.description == "한글"
    assert [(a.name, a.path, a.ext, a.data) for a in m.assets] == [
        ("a", "", "bin", b"\x00\x01\x02\xff")
    ]
    assert m.assets[0].offset == 6 + 243 + 5
    assert m.anomalies == []


def test_writer_reproduces_golden() -> None:
    module = json.loads(GOLDEN_MAIN)["module"]
    assert (
        write_risum(module, [b"\x00\x01\x02\xff"])
        == (FIX / "formats" / "golden.risum").read_bytes()
    )
    assert b"".join(iter_risum(module, iter([b"\x00\x01\x02\xff"]))) == write_risum(
        module, [b"\x00\x01\x02\xff"]
    )


def test_round_trip_keeps_unknown_fields_and_assets(tmp_path: Path) -> None:
    module = {
        "name": "라운드",
        "id": "x",
        "weirdField": {"nested": [1, 2, {"k": None}]},
        "assets": [["a", "", "png"], ["b", "", "webp"]],
        "lone": "\ud800",  # a lone surrogate must survive (escaped like JSON.stringify)
    }
    blobs = [bytes(range(256)) * 3, b""]
    p = tmp_path / "m.risum"
    p.write_bytes(write_risum(module, blobs))
    (m,) = read_path(p, with_assets=True)
    assert m.data == module
    assert [a.data for a in m.assets] == blobs
    assert [a.sha256 for a in m.assets] == [hashlib.sha256(b).hexdigest() for b in blobs]
    assert m.assets[0].head == bytes(range(16))
    assert m.source is not None
    assert m.source.sha256 == hashlib.sha256(p.read_bytes()).hexdigest()
    assert m.source.size == p.stat().st_size
    assert m.source.format == "risum"


def test_assets_not_loaded_unless_asked(tmp_path: Path) -> None:
    p = tmp_path / "m.risum"
    p.write_bytes(
        write_risum({"name": "n", "id": "i", "assets": [["a", "", "bin"]]}, [b"Z" * 100_000])
    )
    (m,) = read_path(p)
    assert m.assets[0].data is None
    assert m.assets[0].size == 100_000
    assert m.assets[0].head == b"Z" * 16
    # the seeking reader gives the same module without hashing
    s = read_risum(p)
    assert s.data == m.data
    assert s.assets[0].offset == m.assets[0].offset
    assert s.source is not None and s.source.sha256 == ""


def test_read_risum_bytes_with_where_prefix() -> None:
    with pytest.raises(FormatError) as ei:
        read_risum_bytes(b"\x6f\x00\xff\xff\x00\x00", where="module.risum: ")
    assert ei.value.code == "length-beyond-eof"
    assert ei.value.where == "module.risum: offset 2"


def test_sources_are_detected_by_content(tmp_path: Path) -> None:
    expected = {
        "174678332_context-cutter.risum": "risum",
        "180211045_lorebook-world.risum": "risum",
        "181550920_display-theme.risum": "risum",
        "182004771_net-summarizer.risum": "risum",
        "183120336_asset-pack.risum": "risum",
        "184500112_heroine-card.charx": "charx",
        "184500113_heroine-card-jpeg.jpeg": "charx-jpeg",
        "185000001_story-preset.risup": "risup",
        "186123400_mood-tracker.json": "json-module",
    }
    assert sorted(p.name for p in SOURCES.iterdir()) == sorted(expected)
    for name, fmt in expected.items():
        assert detect(SOURCES / name) == fmt, name
        # and without the extension's help
        renamed = tmp_path / f"copy-{name}.bin"
        renamed.write_bytes((SOURCES / name).read_bytes())
        assert detect(renamed) == fmt, name
        assert read_path(renamed)[0].source.format == fmt  # type: ignore[union-attr]


# file -> expected error code (each reviewed by hand against the builder's intent)
BROKEN_ERRORS = {
    "empty.risum": "empty-file",
    "truncated-header.risum": "truncated",
    "wrong-magic.risum": "bad-magic",
    "wrong-version.risum": "bad-version",
    "length-beyond-eof.risum": "length-beyond-eof",
    "asset-beyond-eof.risum": "length-beyond-eof",
    "truncated-frame-header.risum": "truncated",
    "main-not-utf8.risum": "not-utf8",
    "main-not-json.risum": "not-json",
    "main-too-deep.risum": "json-too-deep",
    "main-not-object.risum": "not-an-object",
    "wrong-type.risum": "wrong-type",
    "module-not-object.risum": "module-not-object",
    "bad-frame-marker.risum": "bad-frame-marker",
    "no-card.charx": "zip-no-card",
    "not-a-zip.charx": "zip-invalid",
    "zip-bomb.charx": "zip-bomb",
    "corrupted.risup": "risup-decompress-failed",
    "truncated.risup": "risup-decompress-failed",
    "wrong-key.risup": "risup-decrypt-failed",
    "not-a-preset.risup": "wrong-type",
    "invalid.json": "not-json",
    "not-utf8.json": "not-utf8",
    "too-deep.json": "json-too-deep",
    "not-object.json": "not-an-object",
    "unknown-shape.json": "unsupported-export",
    "lorebook-data-not-list.json": "bad-field",
    "random.bin": "unknown-format",
    # the hostile corpus (fixtures/build_fixtures.py: hostile(1))
    "zip-bzip2-bomb.charx": "zip-unsupported-method",
    "zip-lzma-bomb.charx": "zip-unsupported-method",
    # (declares 1 KiB: RisuAI keeps all it inflates, so the ratio bound refuses it)
    "zip-deflate-bomb.charx": "zip-bomb",
    "zip-deflate-ratio.charx": "zip-bomb",
    "zip-eocd-offset-trick.charx": "zip-invalid",
    "risup-envelope-bomb.risup": "too-large",
    "risup-deep.risupreset": "json-too-deep",
    "json-quadratic.json": "json-too-deep",  # the first problem: 300 levels, before the string
}
# file -> anomaly codes expected (read succeeds, with warnings)
BROKEN_WARNINGS = {
    "missing-end-marker.risum": ["missing-end-marker"],
    "trailing-bytes.risum": ["trailing-bytes"],
    "asset-count-mismatch.risum": ["asset-count-mismatch"],
    "extra-asset-frames.risum": ["asset-count-mismatch"],
    "unsafe-names.charx": ["zip-unsafe-member-name"],
    "zip-overlapping.charx": [],  # read fine; unpack's total budget is tested elsewhere
    # stored, declares 64 MiB: RisuAI's reader keeps its compressed bytes, the module
    "zip-stored-bomb.charx": ["zip-size-mismatch"],
}


def test_broken_corpus_is_fully_covered() -> None:
    assert sorted(p.name for p in BROKEN.iterdir()) == sorted({**BROKEN_ERRORS, **BROKEN_WARNINGS})


@pytest.mark.parametrize("name", sorted(BROKEN_ERRORS))
def test_broken_file_error_code(name: str) -> None:
    path = BROKEN / name
    with pytest.raises(FormatError) as ei:
        read_path(path)
    err = ei.value
    assert err.code == BROKEN_ERRORS[name]
    assert err.path == str(path)
    line = err.one_line()
    assert "\n" not in line and str(path) in line and err.code in line


def test_locations_are_precise() -> None:
    cases = {
        "wrong-version.risum": "offset 1",
        "length-beyond-eof.risum": "offset 2",
        "main-not-json.risum": "offset 6 (main block)",
        "bad-frame-marker.risum": "offset 129",
    }
    for name, where in cases.items():
        with pytest.raises(FormatError) as ei:
            read_path(BROKEN / name)
        assert ei.value.where == where, name


@pytest.mark.parametrize("name", sorted(BROKEN_WARNINGS))
def test_broken_file_warning(name: str) -> None:
    modules = read_path(BROKEN / name)
    assert len(modules) == 1
    assert [a.code for a in modules[0].anomalies] == BROKEN_WARNINGS[name]


def test_asset_count_mismatch_details() -> None:
    (m,) = read_path(BROKEN / "asset-count-mismatch.risum")
    assert [(a.name, a.size is not None) for a in m.assets] == [("a", True), ("b", False)]
    (m,) = read_path(BROKEN / "extra-asset-frames.risum")
    assert [(a.index, a.name, a.size is not None) for a in m.assets] == [(0, "", True)]


def test_trailing_bytes_are_hashed_but_ignored() -> None:
    p = BROKEN / "trailing-bytes.risum"
    (m,) = read_path(p)
    assert m.source is not None
    assert m.source.sha256 == hashlib.sha256(p.read_bytes()).hexdigest()
    assert "17 byte(s)" in m.anomalies[0].message


def test_declared_length_is_checked_before_reading(tmp_path: Path) -> None:
    # 4 GiB - 1 declared, 10 bytes present: must fail fast, without allocating
    p = tmp_path / "x.risum"
    p.write_bytes(b"\x6f\x00\xff\xff\xff\xff" + b"\x00" * 10)
    with pytest.raises(FormatError) as ei:
        read_path(p)
    assert ei.value.code == "length-beyond-eof"


def test_main_block_not_a_module_type_message() -> None:
    with pytest.raises(RisuError) as ei:
        read_path(BROKEN / "wrong-type.risum")
    assert '"risuPreset"' in ei.value.why


def test_big_assets_are_streamed_not_loaded(tmp_path: Path) -> None:
    import tracemalloc

    size = 64 * 1024 * 1024
    main = json.dumps({"module": {"name": "big", "id": "1", "assets": [["a", "", "bin"]]},
                       "type": "risuModule"}).encode()  # fmt: skip
    p = tmp_path / "big.risum"
    with open(p, "wb") as f:  # sparse: encoded zeros = plain 0x2c bytes
        f.write(b"\x6f\x00" + struct.pack("<I", len(main)) + rpack.encode(main))
        f.write(b"\x01" + struct.pack("<I", size))
        f.seek(size, 1)
        f.write(b"\x00")
    tracemalloc.start()
    try:
        (m,) = read_path(p)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 * 1024 * 1024
    assert m.assets[0].size == size and m.assets[0].head == b"\x2c" * 16
    assert m.anomalies == []
    h = hashlib.sha256()
    with open(p, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    assert m.source is not None and m.source.sha256 == h.hexdigest()
