"""Cards, CharX-JPEG, presets, JSON exports, detection edge cases and bounds."""

from __future__ import annotations

import gzip
import io
import json
import os
import zipfile
import zlib
from pathlib import Path

import msgpack
import pytest
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from harness import ROOT, SOURCES, zip_bytes

from risutools.errors import FormatError
from risutools.formats import detect, read_path, risup, rpack
from risutools.formats.charx import MAX_MEMBER_BYTES
from risutools.formats.jsonsafe import MAX_DEPTH, loads_object, max_depth_exceeded
from risutools.formats.risum import write_risum

MODULES = ROOT / "fixtures" / "modules"




CARD = json.dumps(
    {"spec": "chara_card_v3", "spec_version": "3.0", "data": {"name": "Mina"}}
).encode()


# -- .charx ----------------------------------------------------------------------


def test_charx_module_card_facts_and_name() -> None:
    (m,) = read_path(SOURCES / "184500112_heroine-card.charx", with_assets=True)
    assert m.source is not None and m.source.member == "module.risum"
    assert m.name == "한서린 (Seorin) Module"  # the embedded module had an empty name
    assert "module-name-defaulted" in [a.code for a in m.anomalies]
    assert m.card is not None
    assert m.card["spec"] == "chara_card_v3" and m.card["name"] == "한서린 (Seorin)"
    assert m.card["assets"][0]["member"] == "assets/icon/image/main.png"
    assert m.card["assets"][0]["size"] == 76
    assert m.assets[0].data is not None and m.assets[0].data.startswith(b"\x89PNG")
    assert m.lorebook[0]["comment"] == "인물: 한서린"


def test_charx_jpeg_same_module_as_charx() -> None:
    (a,) = read_path(SOURCES / "184500112_heroine-card.charx")
    (b,) = read_path(SOURCES / "184500113_heroine-card-jpeg.jpeg")
    assert a.data == b.data
    assert b.source is not None and b.source.format == "charx-jpeg"
    assert (SOURCES / "184500113_heroine-card-jpeg.jpeg").read_bytes()[:3] == b"\xff\xd8\xff"


def test_card_without_module_gives_empty_list(tmp_path: Path) -> None:
    p = tmp_path / "card.charx"
    p.write_bytes(zip_bytes([("card.json", CARD), ("assets/x.png", b"png")]))
    assert detect(p) == "charx"
    assert read_path(p) == []


def test_named_module_keeps_its_name(tmp_path: Path) -> None:
    p = tmp_path / "c.charx"
    p.write_bytes(
        zip_bytes([("card.json", CARD),
                   ("module.risum", write_risum({"name": "Own", "id": "1"}, []))])
    )
    (m,) = read_path(p)
    assert m.name == "Own" and m.anomalies == []


def test_card_json_errors(tmp_path: Path) -> None:
    p = tmp_path / "c.charx"
    p.write_bytes(zip_bytes([("card.json", b"[1]"), ("module.risum", b"")]))
    with pytest.raises(FormatError) as ei:
        read_path(p)
    assert ei.value.code == "not-an-object" and ei.value.where == "card.json"
    p.write_bytes(zip_bytes([("card.json", CARD), ("module.risum", b"\x6f\x00\x05")]))
    with pytest.raises(FormatError) as ei:
        read_path(p)
    assert ei.value.code == "truncated" and ei.value.where.startswith("module.risum: ")


def test_member_over_50_mib_is_refused_quickly(tmp_path: Path) -> None:
    p = tmp_path / "big.charx"
    p.write_bytes(zip_bytes([("card.json", CARD), ("module.risum", bytes(MAX_MEMBER_BYTES + 1))]))
    assert p.stat().st_size < 200_000
    with pytest.raises(FormatError) as ei:
        read_path(p)
    assert ei.value.code in ("zip-member-too-large", "zip-bomb")


def test_lying_central_directory_size_is_still_bounded(tmp_path: Path) -> None:
    # declare a small size in the directory while the data inflates to 3 MiB of zeros
    data = bytearray(zip_bytes([("card.json", CARD), ("module.risum", bytes(3 * 1024 * 1024))]))
    # patch the central-directory uncompressed size of module.risum to 10 bytes
    cd = data.rfind(b"PK\x01\x02")
    assert data[cd + 46 : cd + 46 + 12] == b"module.risum"
    data[cd + 24 : cd + 28] = (10).to_bytes(4, "little")
    p = tmp_path / "lie.charx"
    p.write_bytes(bytes(data))
    with pytest.raises(FormatError) as ei:
        read_path(p)
    assert ei.value.code in ("zip-bomb", "zip-invalid")


def test_encrypted_zip_member(tmp_path: Path) -> None:
    data = bytearray(zip_bytes([("card.json", CARD)]))
    # set the "encrypted" flag bit in both headers
    lh = data.find(b"PK\x03\x04")
    data[lh + 6] |= 1
    cd = data.rfind(b"PK\x01\x02")
    data[cd + 8] |= 1
    p = tmp_path / "enc.charx"
    p.write_bytes(bytes(data))
    with pytest.raises(FormatError) as ei:
        read_path(p)
    assert ei.value.code == "zip-invalid"


# -- presets --------------------------------------------------------------------


def test_risup_fixture_decrypts() -> None:
    (m,) = read_path(SOURCES / "185000001_story-preset.risup")
    want = json.loads((MODULES / "185000001_story-preset.preset.json").read_text(encoding="utf-8"))
    assert m.component_type == "preset"
    assert m.data == want
    assert m.regex[0]["type"] == "editoutput"


def test_risupreset_variants(tmp_path: Path) -> None:
    preset = {"name": "P", "bin": b"\x00\x01", 5: "int key"}
    sealed = AESGCM(risup.KEY).encrypt(risup.IV, msgpack.packb(preset), None)
    envelope = msgpack.packb({"presetVersion": 0, "type": "preset", "pres": sealed})
    for name, blob, fmt in (
        ("a.risupreset", zlib.compress(envelope), "risupreset"),
        ("b.risupreset", gzip.compress(envelope, mtime=0), "risupreset"),
        ("c.risup", rpack.encode(zlib.compress(envelope)), "risup"),
    ):
        p = tmp_path / name
        p.write_bytes(blob)
        assert detect(p) == fmt
        (m,) = read_path(p)
        assert m.data == {"name": "P", "bin": {"$base64": "AAE="}, "5": "int key"}
        assert m.source is not None and m.source.format == fmt


def test_preset_bad_version_and_structure(tmp_path: Path) -> None:
    def write(env: dict[str, object]) -> Path:
        p = tmp_path / "x.risup"
        p.write_bytes(rpack.encode(gzip.compress(msgpack.packb(env), mtime=0)))
        return p

    cases = [
        ({"presetVersion": 9, "type": "preset", "preset": b"x" * 20}, "bad-version"),
        ({"presetVersion": 2, "type": "preset"}, "risup-bad-structure"),
        ({"presetVersion": 2, "type": "preset", "preset": b"short"}, "risup-decrypt-failed"),
    ]
    for env, code in cases:
        with pytest.raises(FormatError) as ei:
            read_path(write(env))
        assert ei.value.code == code
    p = tmp_path / "y.risup"
    p.write_bytes(rpack.encode(gzip.compress(b"\xc1not msgpack", mtime=0)))
    with pytest.raises(FormatError) as ei:
        read_path(p)
    assert ei.value.code == "risup-not-msgpack"


def test_preset_inflation_is_bounded(tmp_path: Path) -> None:
    p = tmp_path / "bomb.risupreset"
    p.write_bytes(gzip.compress(b"\x80" + bytes(risup.MAX_INFLATED_BYTES + 10), mtime=0))
    with pytest.raises(FormatError) as ei:
        read_path(p)
    assert ei.value.code == "too-large"


# -- JSON exports -----------------------------------------------------------------


def _write_json(tmp_path: Path, name: str, obj: object) -> Path:
    p = tmp_path / name
    p.write_text(json.dumps(obj, ensure_ascii=False), encoding="utf-8")
    return p


def test_json_module_export() -> None:
    (m,) = read_path(SOURCES / "186123400_mood-tracker.json")
    assert m.component_type == "module" and m.name == "기분 추적기 (Mood Tracker)"
    assert m.data["type"] == "risuModule"  # kept: every original field stays
    assert m.data["hideIcon"] is True


def test_json_module_wrapped_form(tmp_path: Path) -> None:
    p = _write_json(tmp_path, "w.json", {"module": {"name": "W", "id": "1"}, "type": "risuModule"})
    (m,) = read_path(p)
    assert m.data == {"name": "W", "id": "1"}


def test_json_lorebook_export(tmp_path: Path) -> None:
    entries = [{"key": "a", "content": "b", "mode": "normal"}]
    p = _write_json(tmp_path, "lb.json", {"type": "risu", "ver": 1, "data": entries})
    assert detect(p) == "json-lorebook"
    (m,) = read_path(p)
    assert m.component_type == "lorebook"
    assert m.data == {"type": "risu", "ver": 1, "lorebook": entries}


def test_json_regex_export(tmp_path: Path) -> None:
    scripts = [{"comment": "c", "in": "a", "out": "b", "type": "editdisplay"}]
    p = _write_json(tmp_path, "rx.json", {"type": "regex", "data": scripts})
    assert detect(p) == "json-regex"
    (m,) = read_path(p)
    assert m.component_type == "module"
    assert m.regex == scripts and "data" not in m.data


def test_json_external_lorebook(tmp_path: Path) -> None:
    obj = {
        "name": "ST book",
        "entries": {
            "0": {"key": ["용", "dragon"], "keysecondary": [], "comment": "c", "content": "x",
                  "constant": True, "selective": False, "order": 50},
            "1": {"key": "plain", "content": "y"},
        },
    }  # fmt: skip
    p = _write_json(tmp_path, "st.json", obj)
    assert detect(p) == "json-external-lorebook"
    (m,) = read_path(p)
    assert m.component_type == "lorebook"
    assert m.data["entries"] == obj["entries"]  # original kept untouched
    assert m.lorebook[0] == {
        "key": "용, dragon", "secondkey": "", "comment": "c", "content": "x", "mode": "normal",
        "insertorder": 50, "alwaysActive": True, "selective": False,
    }  # fmt: skip
    # (no order: RisuAI's convertExternalLorebook gives 0)
    assert m.lorebook[1]["key"] == "plain" and m.lorebook[1]["insertorder"] == 0


def test_json_type_last_beyond_peek_is_detected(tmp_path: Path) -> None:
    # RisuAI's export writes "type" last; make the file larger than the 1 MiB peek
    big = {
        "name": "Big",
        "id": "1",
        "lorebook": [{"content": "가" * 1000}] * 600,
        "type": "risuModule",
    }
    p = tmp_path / "big.bin"
    p.write_text(json.dumps(big, ensure_ascii=False, indent=2), encoding="utf-8")
    assert p.stat().st_size > 1024 * 1024
    assert detect(p) == "json-module"


@pytest.mark.parametrize("pad", [-2, -1, 0, 1, 2, 5000])
def test_json_around_the_first_read_is_detected(tmp_path: Path, pad: int) -> None:
    """A JSON export whose ``type`` comes last, its size a few bytes either side of the
    first read (reader.HEAD: the whole file read at once, or read again for the peek)."""
    from risutools.formats import reader

    base = json.dumps({"name": "M", "id": "1", "lorebook": [], "filler": "",
                       "type": "risuModule"})
    filler = "x" * (reader.HEAD + pad - len(base.encode()))
    text = base.replace('"filler": ""', f'"filler": "{filler}"')
    p = tmp_path / "m.bin"
    p.write_text(text, encoding="utf-8")
    assert p.stat().st_size == reader.HEAD + pad
    assert detect(p) == "json-module"
    p.write_text(text.replace("risuModule", "somethingElse"), encoding="utf-8")
    assert detect(p) is None


@pytest.mark.parametrize("key", ["type", "ty\\u0070e", "\\u0074ype"])
@pytest.mark.parametrize("value", ["risuModule", "risu\\u004dodule", "risuModule\\n",
                                   "risu\tModule", "\u00a0risu", "모듈"])
def test_json_keys_and_values_are_read_as_json_reads_them(tmp_path: Path, key: str,
                                                          value: str) -> None:
    """The peek reads a key or a string value as ``json.loads`` does: escapes decoded; a
    raw control character (invalid JSON) never matches."""
    from risutools.formats import jsonscan

    text = f'{{"name": "M", "lorebook": [], "{key}": "{value}"}}'
    want = {"name": "M", "lorebook": None}
    try:
        k = json.loads(f'"{key}"')
    except ValueError:
        k = ""
    try:
        v = json.loads(f'"{value}"')
    except ValueError:
        v = ""
    want[k] = v
    assert jsonscan.top_level_keys(text) == want


_EXPORTS = [
    {"name": "M", "id": "1", "lorebook": [], "type": "risuModule"},
    {"type": "risu", "ver": 1, "data": [{"key": "a", "content": "b", "mode": "normal"}]},
    {"type": "regex", "data": [{"comment": "c", "in": "a", "out": "b", "type": "editdisplay"}]},
    {"name": "ST", "entries": {"0": {"key": "k", "content": "x"}}},
    {"no": "risu export"},
]


@pytest.mark.parametrize("obj", _EXPORTS, ids=["module", "lorebook", "regex", "st-book", "none"])
def test_json_named_file_is_parsed_once_with_the_same_outcome(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, obj: dict[str, object]
) -> None:
    """A ``.json`` file skips the detection peek (issue 11: a second decode and scan) and
    reads exactly as a file whose format the peek found: same module or same error."""
    from risutools.formats import jsonscan

    peeked = tmp_path / "peeked.bin"  # any other name: detected in full, as before
    peeked.write_text(json.dumps(obj), encoding="utf-8")
    named = _write_json(tmp_path, "x.json", obj)

    def outcome(p: Path) -> object:
        try:
            return [(m.component_type, m.data, m.source.format) for m in read_path(p)]
        except FormatError as exc:
            return exc.code

    expected = outcome(peeked)
    if obj.get("no"):  # not an export: unknown by content, refused by either reader
        assert expected == "unknown-format"
    calls: list[str] = []
    real = jsonscan.top_level_keys
    monkeypatch.setattr(jsonscan, "top_level_keys", lambda t, *a: calls.append(t) or real(t, *a))
    got = outcome(named)
    assert calls == []  # no peek: the object itself was classified
    assert got == expected or (expected == "unknown-format" and got == "unsupported-export")


def test_json_named_file_that_is_not_json_is_still_detected(tmp_path: Path) -> None:
    p = tmp_path / "module.json"
    p.write_bytes(write_risum({"name": "R", "id": "r"}, []))
    (m,) = read_path(p)
    assert m.source.format == "risum" and m.name == "R"


def test_json_nan_is_not_json(tmp_path: Path) -> None:
    p = tmp_path / "n.json"
    p.write_text('{"type": "risuModule", "name": "n", "x": NaN}')
    with pytest.raises(FormatError) as ei:
        read_path(p)
    assert ei.value.code == "not-json"


def test_depth_guard_runs_before_json() -> None:
    assert max_depth_exceeded("[" * (MAX_DEPTH + 1)) == MAX_DEPTH
    assert max_depth_exceeded("[" * MAX_DEPTH + "]" * MAX_DEPTH) is None
    # brackets inside strings do not count
    assert max_depth_exceeded('"' + "[" * 1000 + '"') is None
    assert max_depth_exceeded('"\\"' + "[" * 1000 + '"') is None
    with pytest.raises(FormatError) as ei:
        loads_object(b'{"a":' + b"[" * 100_000 + b"]" * 100_000 + b"}", where="w")
    assert ei.value.code == "json-too-deep"
    assert loads_object(b'\xef\xbb\xbf{"a": "[[["}', where="w") == {"a": "[[["}


# -- paths ------------------------------------------------------------------------


def test_directory_and_missing_paths(tmp_path: Path) -> None:
    with pytest.raises(FormatError) as ei:
        read_path(tmp_path)
    assert ei.value.code == "not-a-file"
    with pytest.raises(FormatError) as ei:
        detect(tmp_path)
    assert ei.value.code == "not-a-file"
    with pytest.raises(FormatError) as ei:
        read_path(tmp_path / "nope.risum")
    assert ei.value.code == "not-found"


def test_unreadable_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    p = tmp_path / "locked.risum"
    p.write_bytes(b"x")
    if os.geteuid() != 0:
        p.chmod(0)
    else:  # root reads anything: make the open itself fail as it would for a user
        import risutools.formats.reader as reader_mod

        def denied(*_a: object, **_k: object) -> None:
            raise PermissionError(13, "Permission denied")

        monkeypatch.setattr(reader_mod.os, "open", denied)
    with pytest.raises(FormatError) as ei:
        read_path(p)
    assert ei.value.code == "unreadable"
    assert "Permission denied" in ei.value.one_line()


def test_detect_non_risu_files(tmp_path: Path) -> None:
    cases = {
        "empty": b"",
        "text.txt": b"once upon a time",
        "plain.zip": zip_bytes([("readme.txt", b"hi")]),
        "photo.jpg": b"\xff\xd8\xff\xe0" + b"\x00" * 100,
        "other.json": b'{"hello": 1}',
        "array.json": b"[1]",
    }
    for name, data in cases.items():
        p = tmp_path / name
        p.write_bytes(data)
        assert detect(p) is None, name


# -- hostile archives (audit) ----------------------------------------------------


def _zip_dups(members: list[tuple[str, bytes]]) -> bytes:
    import warnings

    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns about duplicate names
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
            for name, data in members:
                zf.writestr(name, data)
    return buf.getvalue()


@pytest.mark.parametrize("dup", ["module.risum", "card.json"])
def test_duplicate_card_or_module_member_is_refused(tmp_path: Path, dup: str) -> None:
    # RisuAI keeps the LAST copy; showing the first would review a different module
    good = write_risum({"name": "good", "id": "1"}, [])
    evil = write_risum({"name": "evil", "id": "2", "lowLevelAccess": True}, [])
    members = [("card.json", CARD), ("module.risum", good)]
    members.append((dup, evil if dup == "module.risum" else CARD))
    p = tmp_path / "dup.charx"
    p.write_bytes(_zip_dups(members))
    with pytest.raises(FormatError) as ei:
        read_path(p)
    assert ei.value.code == "zip-duplicate-member"
    assert repr(dup) in ei.value.why


def _patch_cd_size(data: bytes, cd_size: int) -> bytes:
    buf = bytearray(data)
    at = buf.rfind(b"PK\x05\x06")
    buf[at + 12 : at + 16] = cd_size.to_bytes(4, "little")
    return bytes(buf)


def test_central_directory_bounds_checked_before_parsing(tmp_path: Path) -> None:
    from risutools.formats import charx

    base = zip_bytes([("card.json", CARD)])
    p = tmp_path / "many.charx"
    p.write_bytes(_patch_cd_size(base, charx.MAX_CD_BYTES + 1))
    with pytest.raises(FormatError) as ei:
        read_path(p)
    assert ei.value.code == "zip-invalid" and "central directory" in ei.value.why
    # the 16-bit count cannot pass 65535; a ZIP64 end record's 64-bit count is checked
    z64 = bytearray(base)
    at = z64.rfind(b"PK\x05\x06")
    rec = b"PK\x06\x06" + (44).to_bytes(8, "little") + bytes(12)
    rec += (10**9).to_bytes(8, "little") * 2 + (1).to_bytes(8, "little") * 2
    loc = b"PK\x06\x07" + bytes(16)
    p.write_bytes(bytes(z64[:at]) + rec + loc + bytes(z64[at:]))
    with pytest.raises(FormatError) as ei:
        read_path(p)
    assert ei.value.code == "zip-invalid" and "1000000000 members" in ei.value.why


def test_card_assets_total_budget(tmp_path: Path) -> None:
    from risutools.formats import charx

    mib = 1024 * 1024
    p = tmp_path / "zeros.charx"
    members = [(f"assets/{i}.bin", bytes(mib)) for i in range(20)]
    p.write_bytes(zip_bytes([("card.json", CARD), *members]))
    size = p.stat().st_size
    assert size < 40_000  # each MiB of zeros deflates to ~1 KiB
    budget = charx.TOTAL_FLOOR + charx.TOTAL_RATIO * size  # ~ 16 MiB + 4 x size < 20 MiB
    with open(p, "rb") as fp:
        got = list(charx.iter_card_assets(fp))
    kept = [name for name, data, _ in got if data is not None]
    assert len(kept) == budget // mib  # whole MiB members fit until the budget runs out
    assert 1 <= len(kept) < 20
    refused = [reason for _, data, reason in got if data is None]
    assert refused and all(r.startswith("zip-total-too-large") for r in refused)


def test_too_many_asset_frames_is_refused(tmp_path: Path) -> None:
    from risutools.formats.risum import MAX_ASSETS, main_block

    main = main_block({"name": "n", "id": "i"})
    p = tmp_path / "frames.risum"
    head = b"\x6f\x00" + len(main).to_bytes(4, "little") + rpack.encode(main)
    p.write_bytes(head + b"\x01\x00\x00\x00\x00" * (MAX_ASSETS + 1) + b"\x00")
    with pytest.raises(FormatError) as ei:
        read_path(p)
    assert ei.value.code == "too-large"
    assert ei.value.where == f"offset {len(head) + 5 * MAX_ASSETS}"
    many = {"name": "n", "id": "i", "assets": [["a", "", ""]] * (MAX_ASSETS + 1)}
    p.write_bytes(write_risum(many, []))
    with pytest.raises(FormatError) as ei:
        read_path(p)
    assert ei.value.code == "too-large" and ei.value.where == "/module/assets"


def test_risupreset_raw_deflate_as_fflate_accepts(tmp_path: Path) -> None:
    # fflate.decompressSync (RisuAI's importer) inflates raw deflate when no header is found
    preset = {"name": "raw"}
    sealed = AESGCM(risup.KEY).encrypt(risup.IV, msgpack.packb(preset), None)
    envelope = msgpack.packb({"presetVersion": 2, "type": "preset", "preset": sealed})
    co = zlib.compressobj(9, zlib.DEFLATED, -15)
    raw = co.compress(envelope) + co.flush()
    assert risup.compression_of(raw[:2]) is None
    for name, blob, fmt in (
        ("raw.risupreset", raw, "risupreset"),
        ("raw.risup", rpack.encode(raw), "risup"),
    ):
        p = tmp_path / name
        p.write_bytes(blob)
        assert detect(p) == fmt
        (m,) = read_path(p)
        assert m.data == preset
    p = tmp_path / "junk.risupreset"
    p.write_bytes(b"\xff" * 64)  # BTYPE 11: not deflate at all
    with pytest.raises(FormatError) as ei:
        read_path(p)
    assert ei.value.code == "bad-magic"


def test_preset_envelope_rules_follow_risuai(tmp_path: Path) -> None:
    sealed = AESGCM(risup.KEY).encrypt(risup.IV, msgpack.packb({"name": "P"}), None)

    def write(env: dict[str, object]) -> Path:
        p = tmp_path / "x.risup"
        p.write_bytes(rpack.encode(gzip.compress(msgpack.packb(env), mtime=0)))
        return p

    # presetVersion must be 0 or 2 (JS ===): true/false are not numbers
    for bad in (True, False, "2", 1):
        with pytest.raises(FormatError) as ei:
            read_path(write({"presetVersion": bad, "type": "preset", "preset": sealed}))
        assert ei.value.code == "bad-version", bad
    # decoded.preset ?? decoded.pres: a nil "preset" falls back on "pres"
    (m,) = read_path(write({"presetVersion": 0, "type": "preset", "preset": None, "pres": sealed}))
    assert m.data == {"name": "P"}
    (m,) = read_path(write({"presetVersion": 2.0, "type": "preset", "preset": sealed}))
    assert m.data == {"name": "P"}


def test_read_path_with_the_detected_format_reads_the_same_and_checks_every_byte() -> None:
    for src in sorted(SOURCES.iterdir()):
        fmt = detect(src)
        assert fmt is not None, src
        plain, hinted = read_path(src), read_path(src, fmt=fmt)
        assert [(m.data, m.source, m.anomalies) for m in plain] == [
            (m.data, m.source, m.anomalies) for m in hinted], src
        assert read_path(src, fmt="unreadable")[0].source == plain[0].source  # not a format
    json_file = SOURCES / "186123400_mood-tracker.json"
    with pytest.raises(FormatError) as exc:  # a stale hint: that reader refuses the bytes
        read_path(json_file, fmt="risum")
    assert exc.value.code == "bad-magic"
    with pytest.raises(FormatError) as exc:
        read_path(SOURCES / "174678332_context-cutter.risum", fmt="json-module")
    assert exc.value.code in ("not-json", "not-utf8")


def test_a_built_preset_is_the_same_bytes_under_every_python() -> None:
    """A gzip member risutools builds (a preset, the fixtures' presets) has a fixed header:
    no modification time and the operating system "unknown", whatever Python writes there
    itself (3.11 and 3.12 write 3, Unix; 3.10 and 3.13 write 255), so a fixture built on
    one Python is the same bytes on another; and it inflates to what went in."""
    data = msgpack.packb({"presetVersion": 2, "type": "preset", "preset": b"x" * 100})
    member = risup.gzip_member(data)
    assert member[:10] == b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"
    assert gzip.decompress(member) == data
    assert member[10:] == gzip.compress(data, compresslevel=9, mtime=0)[10:]
    assert risup.encode_preset({"name": "p"}, rpacked=False)[:10] == member[:10]
