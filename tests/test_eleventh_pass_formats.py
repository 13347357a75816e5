"""The eleventh pass over the readers (fix 65, helper 3).

- A preset's compressed stream was inflated by Python's zlib, which compares gzip's CRC-32,
  zlib's Adler-32 and gzip's header CRC, and refuses gzip's reserved flag bits.  RisuAI reads
  presets with fflate's ``decompressSync``, which compares none of them: a preset RisuAI
  loads was refused (``risup-decompress-failed: incorrect data check``).  Now the wrapper is
  parsed as fflate parses it, a checksum that does not match is a warning
  (``stream-checksum-mismatch``), and what fflate refuses or cuts (an output past gzip's
  ``ISIZE``, a zlib preset dictionary) is refused in one line.
"""

from __future__ import annotations

import hashlib
import io
import json
import struct
import zipfile
import zlib
from pathlib import Path

import msgpack
import pytest
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from harness import run_cli

from risutools.errors import FormatError
from risutools.formats import detect, read_path, risup, rpack
from risutools.formats.charx import member_sha256
from risutools.formats.risum import write_risum

PRESET = {"name": "checksums", "mainPrompt": "hello"}


def _envelope() -> bytes:
    sealed = AESGCM(risup.KEY).encrypt(risup.IV, msgpack.packb(PRESET), None)
    return msgpack.packb({"presetVersion": 2, "type": "preset", "preset": sealed})


def _deflate(data: bytes) -> bytes:
    co = zlib.compressobj(9, zlib.DEFLATED, -15)
    return co.compress(data) + co.flush()


def _gzip(data: bytes, *, flags: int = 0, extra: bytes = b"", crc: int | None = None,
          size: int | None = None, tail: bytes = b"") -> bytes:
    head = b"\x1f\x8b\x08" + bytes([flags]) + b"\0\0\0\0" + b"\0\xff" + extra
    crc = zlib.crc32(data) if crc is None else crc
    size = len(data) if size is None else size
    return head + _deflate(data) + struct.pack("<II", crc, size) + tail


def _zlib(data: bytes, adler: int | None = None) -> bytes:
    adler = zlib.adler32(data) if adler is None else adler
    return b"\x78\xda" + _deflate(data) + struct.pack(">I", adler)


def _read(tmp_path: Path, blob: bytes, name: str = "p.risupreset") -> list[str]:
    p = tmp_path / name
    p.write_bytes(rpack.encode(blob) if name.endswith(".risup") else blob)
    assert detect(p) == Path(name).suffix[1:]
    (m,) = read_path(p)
    assert m.data == PRESET
    return [a.code for a in m.anomalies]


def _wrong(value: int) -> int:
    return value ^ 0x5A5A


@pytest.mark.parametrize("name", ["p.risupreset", "p.risup"])
def test_a_wrong_gzip_crc_is_read_as_risuai_reads_it(tmp_path: Path, name: str) -> None:
    env = _envelope()
    assert _read(tmp_path, _gzip(env), name) == []
    assert _read(tmp_path, _gzip(env, crc=_wrong(zlib.crc32(env))), name) == [
        "stream-checksum-mismatch"]


def test_a_wrong_zlib_adler_is_read_as_risuai_reads_it(tmp_path: Path) -> None:
    env = _envelope()
    assert _read(tmp_path, _zlib(env)) == []
    assert _read(tmp_path, _zlib(env, _wrong(zlib.adler32(env)))) == ["stream-checksum-mismatch"]


@pytest.mark.parametrize("flags, extra", [
    (2, b"\x12\x34"),  # FHCRC with a header CRC that is not the header's
    (0xE0, b""),  # the reserved flag bits (zlib: "unknown header flags set")
    (4 | 8 | 16 | 2, b"\x03\x00abc" + b"name\0" + b"comment\0" + b"\0\0"),  # every field
])
def test_a_gzip_header_is_skipped_as_fflate_skips_it(tmp_path: Path, flags: int,
                                                     extra: bytes) -> None:
    assert _read(tmp_path, _gzip(_envelope(), flags=flags, extra=extra)) == []


def test_a_long_gzip_header_is_still_detected(tmp_path: Path) -> None:
    extra = struct.pack("<H", 6000) + b"x" * 6000  # past the 4 KiB head detection reads
    p = tmp_path / "long.bin"
    p.write_bytes(_gzip(_envelope(), flags=4, extra=extra))
    assert detect(p) == "risupreset"


@pytest.mark.parametrize("blob, why", [
    # fflate sizes its output by the file's last 4 bytes: a preset past them is cut
    (lambda env: _gzip(env, size=10), "past the 10 its trailer declares"),
    (lambda env: _gzip(env, tail=b"\0" * 8), "past the 0 its trailer declares"),
    (lambda env: b"\x78\xbb" + _deflate(env) + b"\0\0\0\0", "preset dictionary"),
    (lambda env: b"\x1f\x8b\x08\x04\0\0\0\0\0\xff\xff\xff", "past the end of the stream"),
    (lambda env: _gzip(env)[:-9], "truncated"),
])
def test_what_fflate_refuses_or_cuts_is_one_line(tmp_path: Path, blob: object,
                                                  why: str) -> None:
    p = tmp_path / "bad.risupreset"
    assert callable(blob)
    p.write_bytes(blob(_envelope()))
    with pytest.raises(FormatError) as ei:
        read_path(p)
    assert ei.value.code == "risup-decompress-failed"
    assert why in str(ei.value) and "\n" not in str(ei.value)
    r = run_cli("inspect", str(p))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_inspect_reads_a_preset_with_a_wrong_checksum(tmp_path: Path) -> None:
    env = _envelope()
    p = tmp_path / "crc.risup"
    p.write_bytes(rpack.encode(_gzip(env, crc=_wrong(zlib.crc32(env)))))
    r = run_cli("inspect", str(p))
    assert r.returncode == 0, r.stderr
    assert "checksums" in r.stdout


# -- a ZIP member's CRC-32: fflate's Unzip (RisuAI's CharXReader) never compares it ----------

CARD = {"spec": "chara_card_v3", "spec_version": "3.0",
        "data": {"name": "Crc", "description": "{{getvar::mood}}", "first_mes": "hi",
                 "extensions": {}}}
MODULE = {"name": "Crc Module", "id": "crc-1", "lorebook": [], "regex": [], "trigger": []}


def _card(*, wrong: tuple[str, ...], asset: bytes = b"GIF89a-not-really") -> bytes:
    """A .charx whose members named in ``wrong`` carry a CRC-32 (local header and directory
    alike) that is not their bytes'."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("card.json", json.dumps(CARD))
        z.writestr("module.risum", write_risum(MODULE, []))
        z.writestr("assets/other/a.gif", asset)
    data = bytearray(buf.getvalue())
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as z:
        infos = {i.filename: i for i in z.infolist()}
    for name in wrong:
        info = infos[name]
        bad = struct.pack("<I", _wrong(info.CRC))
        data[info.header_offset + 14: info.header_offset + 18] = bad
        at = _central(data, name)
        data[at + 16: at + 20] = bad
    return bytes(data)


def _central(data: bytearray, name: str) -> int:
    at = 0
    while True:
        at = data.index(b"PK\x01\x02", at)
        nlen = struct.unpack_from("<H", data, at + 28)[0]
        if data[at + 46: at + 46 + nlen] == name.encode():
            return at
        at += 4


@pytest.mark.parametrize("wrong", [("card.json",), ("module.risum",),
                                   ("card.json", "module.risum")])
def test_a_card_member_with_a_wrong_crc_is_read_as_risuai_reads_it(tmp_path: Path,
                                                                  wrong: tuple[str, ...]) -> None:
    p = tmp_path / "c.charx"
    p.write_bytes(_card(wrong=()))
    honest = read_path(p)
    assert [m.component_type for m in honest] == ["character", "module"]
    assert all(not m.anomalies for m in honest)
    p.write_bytes(_card(wrong=wrong))
    got = read_path(p)
    assert [m.data for m in got] == [m.data for m in honest]
    codes = {(a.code, a.where) for m in got for a in m.anomalies}
    assert codes == {("zip-crc-mismatch", f"member {n!r}") for n in wrong}
    r = run_cli("inspect", str(p))
    assert r.returncode == 0, r.stderr


def test_unpack_and_verify_read_a_card_with_a_wrong_crc(tmp_path: Path) -> None:
    p = tmp_path / "c.charx"
    p.write_bytes(_card(wrong=("card.json", "module.risum", "assets/other/a.gif")))
    r = run_cli("unpack", str(p), "-o", str(tmp_path / "out"))
    assert r.returncode == 0, r.stderr
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    (asset,) = manifest["card_assets"]
    assert asset["file"] is not None and asset["warning"].startswith("zip-crc-mismatch: ")
    assert json.loads((tmp_path / "out" / "card.json").read_text()) == CARD
    assert member_sha256(p.open("rb"), "module.risum") == hashlib.sha256(
        write_risum(MODULE, [])).hexdigest()


def test_a_card_without_a_module_carries_its_own_warning(tmp_path: Path) -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("card.json", json.dumps(CARD))
    data = bytearray(buf.getvalue())
    crc = struct.unpack_from("<I", data, 14)[0]
    bad = struct.pack("<I", _wrong(crc))
    data[14:18] = bad
    at = _central(data, "card.json")
    data[at + 16: at + 20] = bad
    p = tmp_path / "alone.charx"
    p.write_bytes(bytes(data))
    (m,) = read_path(p)
    assert m.component_type == "character"
    assert [(a.code, a.where) for a in m.anomalies] == [("zip-crc-mismatch", "member 'card.json'")]


# -- msgpack extensions: RisuAI's reader is msgpackr 1.10.1 (``decode``) ----------------------

def _preset_file(tmp_path: Path, preset: dict[str, object] | bytes,
                 envelope_extra: dict[str, object] | None = None) -> Path:
    plain = preset if isinstance(preset, bytes) else msgpack.packb(preset, use_bin_type=True)
    sealed = AESGCM(risup.KEY).encrypt(risup.IV, plain, None)
    env = {"presetVersion": 2, "type": "preset", **(envelope_extra or {}), "preset": sealed}
    p = tmp_path / "x.risup"
    p.write_bytes(rpack.encode(_gzip(msgpack.packb(env, use_bin_type=True))))
    return p


UNDEF = msgpack.ExtType(0, b"\x00")  # msgpackr writes every undefined value so


def test_an_undefined_value_is_read_as_json_writes_it(tmp_path: Path) -> None:
    p = _preset_file(tmp_path, {"name": "u", "mainPrompt": UNDEF, "list": [1, UNDEF],
                                "again": "x", "__proto__": {"polluted": True}})
    (m,) = read_path(p)
    # (JSON.stringify leaves an undefined property out and writes an undefined element as
    # null; msgpackr names a "__proto__" key "__proto_")
    assert m.data == {"name": "u", "list": [1, None], "again": "x",
                      "__proto_": {"polluted": True}}
    assert "ExtType" not in json.dumps(m.data)


def test_a_later_undefined_key_hides_the_earlier_one(tmp_path: Path) -> None:
    # {"a": "seen", "a": undefined}: the object RisuAI builds has a === undefined
    body = b"\x83\xa4name\xa1d\xa1a\xa4seen\xa1a\xd4\x00\x00"
    (m,) = read_path(_preset_file(tmp_path, body))
    assert m.data == {"name": "d"}


def test_an_undefined_preset_field_falls_back_to_pres(tmp_path: Path) -> None:
    # RisuAI: decoded.preset ?? decoded.pres -- an undefined preset is passed over
    sealed = AESGCM(risup.KEY).encrypt(risup.IV, msgpack.packb(PRESET), None)
    env = msgpack.packb({"presetVersion": 2, "type": "preset", "preset": UNDEF,
                         "pres": sealed}, use_bin_type=True)
    p = tmp_path / "pres.risupreset"
    p.write_bytes(_gzip(env))
    (m,) = read_path(p)
    assert m.data == PRESET


@pytest.mark.parametrize("ext, seen", [
    (msgpack.ExtType(0x73, b"\x00"), "a Set"),
    (msgpack.ExtType(0x72, b"\x40"), "a record definition"),
    (msgpack.ExtType(0x65, b"\x00"), "an Error"),
    (msgpack.ExtType(0x62, b"\x00\x00\x00\x00"), "bundled strings"),
    (msgpack.Timestamp(0), "a Date"),
    (msgpack.ExtType(5, b"abc"), "refuses it"),
])
def test_an_extension_msgpackr_reads_otherwise_is_one_line(tmp_path: Path, ext: object,
                                                           seen: str) -> None:
    for p in (_preset_file(tmp_path, {"name": "e", "x": [ext]}),
              _preset_file(tmp_path, PRESET, {"note": ext})):
        with pytest.raises(FormatError) as ei:
            read_path(p)
        assert ei.value.code == "risup-extension" and seen in ei.value.why
        r = run_cli("inspect", str(p))
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
        assert "risup-extension" in r.stderr and "Traceback" not in r.stderr
