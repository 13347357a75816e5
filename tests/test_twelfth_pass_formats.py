"""The twelfth hostile-input pass over the readers (fix 66, helper h3).

A structure-aware mutator (ZIP fields, msgpack lengths, risum frames, PNG text chunks, JSON
values) run over the fixtures through ``inspect`` and ``analyze -f json`` found what is
pinned here.  Each test fails on the commit before its fix.
"""

from __future__ import annotations

import io
import json
import struct
import zipfile
from pathlib import Path

import msgpack
import pytest
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from harness import run_cli, zip_bytes

from risutools.errors import FormatError
from risutools.formats import charx, read_path, risup, rpack

CARD = json.dumps(
    {"spec": "chara_card_v3", "spec_version": "3.0", "data": {"name": "Mina"}}
).encode()




def _many_members(n: int) -> bytes:
    """A real ZIP of ``n`` members (past 65535: zipfile writes the ZIP64 end record)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr("card.json", CARD)
        for i in range(n - 1):
            zf.writestr(zipfile.ZipInfo(f"assets/{i}", (1980, 1, 1, 0, 0, 0)), b"")
    return buf.getvalue()


def _cd_size(data: bytes, size: int) -> bytes:
    buf = bytearray(data)
    at = buf.rfind(b"PK\x05\x06")
    buf[at + 12 : at + 16] = struct.pack("<I", size)
    return bytes(buf)


def test_a_zip64_count_past_the_bound_names_its_end_record(tmp_path: Path) -> None:
    """The member-count bound said no "where" (``risutools: F: zip-invalid: declares 70003
    members``): now the offset of the end record that declares it."""
    blob = _many_members(charx.MAX_MEMBERS + 2)
    p = tmp_path / "many.charx"
    p.write_bytes(blob)
    with pytest.raises(FormatError) as ei:
        read_path(p)
    rec = blob.rfind(b"PK\x06\x06")
    assert ei.value.where == f"offset {rec} (ZIP64 end of central directory)"
    done = run_cli("inspect", p)
    assert done.returncode == 2
    assert done.stderr == (f"risutools: {p}: offset {rec} (ZIP64 end of central directory): "
                           f"zip-invalid: declares {charx.MAX_MEMBERS + 2} members; "
                           f"the bound is {charx.MAX_MEMBERS}\n")


@pytest.mark.parametrize("prefix", [b"", b"\xff\xd8\xff\xe0JFIF" + bytes(100)])
def test_a_directory_past_its_bound_names_its_end_record(tmp_path: Path,
                                                         prefix: bytes) -> None:
    """The same for the directory-size bound (the 32-bit end record, also behind a JPEG)."""
    blob = prefix + _cd_size(zip_bytes([("card.json", CARD)]), charx.MAX_CD_BYTES + 1)
    p = tmp_path / ("big.charx" if not prefix else "big.jpeg")
    p.write_bytes(blob)
    with pytest.raises(FormatError) as ei:
        read_path(p)
    end = blob.rfind(b"PK\x05\x06")
    assert ei.value.where == f"offset {end} (end of central directory)"
    for cmd in (["inspect"], ["analyze", "-f", "json"]):
        done = run_cli(*cmd, p)
        assert done.returncode == 2 and done.stdout == ""
        assert done.stderr.count("\n") == 1
        assert f"offset {end} (end of central directory): zip-invalid" in done.stderr


def _sealed_preset(inner: bytes) -> bytes:
    """A .risup whose decrypted preset is the msgpack bytes ``inner``, as they are."""
    sealed = AESGCM(risup.KEY).encrypt(risup.IV, inner, None)
    envelope = msgpack.packb({"presetVersion": 2, "type": "preset", "preset": sealed},
                             use_bin_type=True)
    return rpack.encode(risup.gzip_member(envelope))


_NAME = b"\x82\xa4name\xa1x\xa4list"  # {"name": "x", "list": <the value after it>}


@pytest.mark.parametrize("inner, code, said", [
    # a 32-bit array count no byte left could fill: the array's type byte is at 13
    (_NAME + b"\xdd\xff\xff\xff\xff", "risup-not-msgpack",
     "declares a container of 4294967295 values at byte 13 with 0 bytes left"),
    (_NAME + b"\x9f\x01", "risup-not-msgpack", "declares a container of 15 values at byte 13"),
    # 201 containers deep: the map, then the 200th array (at 13 + 199) opens the 201st level
    (_NAME + b"\x91" * 250 + b"\x01", "json-too-deep",
     "nests deeper than 200 levels (at byte 212)"),
    (_NAME + b"\xdc\x00\x03" + b"\x91" * 3 + b"\xdc\x00\x02" + b"\x91" * 197 + b"\x01\x01\x01",
     "json-too-deep", "levels (at byte 216)"),
    # more values than the bound: the first one past it named
    (_NAME + b"\xdd" + (1_000_000).to_bytes(4, "big") + bytes(1_000_000), "too-large",
     "more than 1000000 msgpack values (the next at byte 1000013)"),
    # a map as a map's key (msgpack's TypeError): the key's byte
    (b"\x82\xa4name\xa1x\x81\x90\x01\x01", "risup-not-msgpack",
     "a map whose key is a map or an array (at byte 8;"),
    (b"\x81\xa4list\x92\x01\xde\x00\x01\x81\x01\x02\x03", "risup-not-msgpack",
     "(at byte 11;"),
])
def test_a_preset_msgpack_refusal_names_its_byte(tmp_path: Path, inner: bytes, code: str,
                                                 said: str) -> None:
    """The decrypted preset's shape walk named no byte for these refusals (a container that
    cannot fit, a nesting too deep, too many values, a container as a map key) where every
    other msgpack refusal names one ("extra bytes at 131", "byte 0xc1 at 7")."""
    p = tmp_path / "p.risup"
    p.write_bytes(_sealed_preset(inner))
    with pytest.raises(FormatError) as ei:
        read_path(p)
    assert ei.value.code == code and ei.value.where == "preset"
    assert said in ei.value.why
    done = run_cli("inspect", p)
    assert done.returncode == 2 and done.stdout == "" and done.stderr.count("\n") == 1
    assert f": preset: {code}: " in done.stderr and said in done.stderr


def test_the_envelope_walk_names_its_byte_too(tmp_path: Path) -> None:
    """The same walk reads the envelope (before decryption): its refusals name a byte too."""
    env = b"\x83\xadpresetVersion\x02\xa4type\xa6preset\xa6preset" + b"\x91" * 300 + b"\x01"
    p = tmp_path / "e.risup"
    p.write_bytes(rpack.encode(risup.gzip_member(env)))
    with pytest.raises(FormatError) as ei:
        read_path(p)
    assert ei.value.code == "json-too-deep" and ei.value.where == "envelope"
    assert ei.value.why.endswith(f"levels (at byte {len(env) - 301 + 199})")


@pytest.mark.parametrize("bom", [b"", b"\xef\xbb\xbf"])
def test_a_text_that_is_not_utf8_names_its_own_offset(tmp_path: Path, bom: bytes) -> None:
    """``not-utf8`` named the bad byte's offset after a leading byte order mark was cut off
    (3 too few in the file) and said "of the block" for a whole file too: the offset is the
    file's (or the member's) own, the text named as the reader names it."""
    body = b'{"type":"risuModule","name":"a\xffb"}'
    f = tmp_path / "export.json"
    f.write_bytes(bom + body)
    with pytest.raises(FormatError) as caught:
        read_path(f)
    at = len(bom) + body.index(b"\xff")
    assert f"JSON export is not UTF-8 (byte 0xff at byte {at})" in str(caught.value)
    assert "of the block" not in str(caught.value)
    assert (bom + body)[at] == 0xFF
