"""The bounded pieces of the readers, in process: ZIP reader, JSON scans, msgpack walk, files."""

from __future__ import annotations

import io
import json
import os
import struct
import zipfile
import zlib
from pathlib import Path
from typing import Any

import msgpack
import pytest
from hypothesis import given
from hypothesis import strategies as st

from risutools.errors import FormatError
from risutools.formats import charx, detect, jsonscan, read_path, risup
from risutools.formats.risum import read_risum, write_risum

MODULE = write_risum({"name": "m", "id": "i"}, [])
CARD = json.dumps({"spec": "chara_card_v3", "data": {"name": "c"}}).encode()


def _zip(members: list[tuple[str, bytes]], method: int = zipfile.ZIP_DEFLATED,
         comment: bytes = b"", zip64: bool = False) -> bytes:  # fmt: skip
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", method) as zf:
        for name, data in members:
            with zf.open(name, "w", force_zip64=zip64) as f:
                f.write(data)
        zf.comment = comment
    return buf.getvalue()


def _members(data: bytes) -> dict[str, bytes]:
    zf = charx.open_zip(io.BytesIO(data))
    return {i.filename: charx.read_member(zf, i) for i in zf.infolist() if not i.is_dir()}


# -- ZIP ---------------------------------------------------------------------------

names = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
                min_size=1, max_size=20)  # fmt: skip


@given(st.dictionaries(names, st.binary(max_size=3000), min_size=1, max_size=6),
       st.sampled_from([zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED]), st.booleans())  # fmt: skip
def test_zip_reader_agrees_with_zipfile(files: dict[str, bytes], method: int, zip64: bool) -> None:
    data = _zip(list(files.items()), method, zip64=zip64)
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        expected = {i.filename: zf.read(i) for i in zf.infolist() if not i.is_dir()}
    assert _members(data) == expected


def test_end_record_candidates_are_validated() -> None:
    base = [("card.json", CARD), ("module.risum", MODULE)]
    # a comment holding the signature (and a forged record): the real record is found
    forged = b"PK\x05\x06" + b"\xff" * 18
    for comment in (b"PK\x05\x06", forged, b"x" * 100 + forged):
        assert _members(_zip(base, comment=comment))["module.risum"] == MODULE
    # bytes in front (a JPEG) are skipped through the directory
    assert _members(b"\xff\xd8\xff" + b"j" * 5000 + _zip(base))["card.json"] == CARD


def test_end_record_whose_offset_spells_the_signature_is_refused() -> None:
    data = bytearray(_zip([("card.json", CARD)]))
    at = data.rfind(b"PK\x05\x06")
    data[at + 16 : at + 20] = b"PK\x05\x06"
    with pytest.raises(FormatError) as ei:
        charx.open_zip(io.BytesIO(bytes(data)))
    assert ei.value.code == "zip-invalid"


def test_no_end_record() -> None:
    with pytest.raises(FormatError) as ei:
        charx.open_zip(io.BytesIO(b"PK\x03\x04" + bytes(100)))
    assert ei.value.code == "zip-invalid" and "end of central directory" in ei.value.why


def _patch_member(data: bytes, name: str, **fields: int) -> bytes:
    """Rewrite central-directory fields (method, flags, crc, usize) of one member."""
    buf = bytearray(data)
    p = buf.find(b"PK\x01\x02")
    while p >= 0:
        nlen = struct.unpack_from("<H", buf, p + 28)[0]
        if bytes(buf[p + 46 : p + 46 + nlen]) == name.encode():
            offsets = {"flags": (8, "<H"), "method": (10, "<H"), "crc": (16, "<L"),
                       "usize": (24, "<L")}  # fmt: skip
            for key, value in fields.items():
                off, fmt = offsets[key]
                struct.pack_into(fmt, buf, p + off, value)
        p = buf.find(b"PK\x01\x02", p + 4)
    return bytes(buf)


@pytest.mark.parametrize(
    ("fields", "code", "text"),
    [
        ({"method": 12}, "zip-unsupported-method", "bzip2"),
        ({"method": 14}, "zip-unsupported-method", "lzma"),
        ({"method": 93}, "zip-unsupported-method", "zstd"),
        ({"method": 77}, "zip-unsupported-method", "method 77"),
        ({"flags": 1}, "zip-invalid", "encrypted"),
        ({"crc": 1}, "zip-invalid", "CRC-32"),
        ({"usize": 3}, "zip-invalid", "declared size"),
        ({"usize": 10**6}, "zip-invalid", "the directory says"),
        ({"usize": charx.MAX_MEMBER_BYTES + 1}, "zip-member-too-large", "declares"),
    ],
)
def test_member_refusals(fields: dict[str, int], code: str, text: str) -> None:
    data = _patch_member(_zip([("card.json", CARD), ("module.risum", MODULE)]), "module.risum",
                         **fields)  # fmt: skip
    zf = charx.open_zip(io.BytesIO(data))
    info = next(i for i in zf.infolist() if i.filename == "module.risum")
    with pytest.raises(FormatError) as ei:
        charx.read_member(zf, info)
    assert ei.value.code == code and text in ei.value.why, ei.value.why


def test_member_data_running_into_the_directory_is_refused() -> None:
    data = bytearray(_zip([("card.json", CARD)], zipfile.ZIP_STORED))
    p = data.find(b"PK\x01\x02")
    struct.pack_into("<L", data, p + 20, 10**5)  # compressed size past the directory
    zf = charx.open_zip(io.BytesIO(bytes(data)))
    with pytest.raises(FormatError) as ei:
        charx.read_member(zf, zf.infolist()[0])
    assert ei.value.code == "zip-invalid" and "central directory" in ei.value.why


def test_member_is_streamed_in_bounded_steps() -> None:
    payload = os.urandom(3 * 1024 * 1024)
    data = _zip([("card.json", payload)])
    zf = charx.open_zip(io.BytesIO(data))
    pieces = list(charx.iter_member(zf, zf.infolist()[0]))
    assert b"".join(pieces) == payload
    assert len(pieces) > 1 and max(len(p) for p in pieces) <= 1024 * 1024


def test_member_sha256() -> None:
    import hashlib

    data = _zip([("card.json", CARD), ("module.risum", MODULE)])
    assert charx.member_sha256(io.BytesIO(data), "module.risum") == hashlib.sha256(
        MODULE
    ).hexdigest()
    assert charx.member_sha256(io.BytesIO(data), "nope") is None
    assert charx.member_sha256(io.BytesIO(b"not a zip"), "card.json") is None


# -- JSON scans --------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner,
                                                                max_size=4),
    max_leaves=20,
)  # fmt: skip


@given(st.dictionaries(st.text(max_size=12), json_values, max_size=8), st.booleans())
def test_top_level_keys_agree_with_json(obj: dict[str, Any], ascii_only: bool) -> None:
    text = json.dumps(obj, ensure_ascii=ascii_only)
    want = {k: (v if isinstance(v, str) else None) for k, v in obj.items()}
    assert jsonscan.top_level_keys(text) == want
    for cut in (1, len(text) // 2, len(text) - 1):  # truncated peeks never fail
        jsonscan.top_level_keys(text[:cut])


@given(st.dictionaries(st.text(max_size=12), json_values, max_size=8))
def test_precheck_passes_every_valid_object(obj: dict[str, Any]) -> None:
    jsonscan.precheck(json.dumps(obj).encode(), where="")
    jsonscan.precheck(json.dumps(obj, ensure_ascii=False, indent=2).encode(), where="")


@pytest.mark.parametrize(
    ("raw", "col"),
    [
        (b'{"a": "x\\"', 7),
        (b'{"a": "\\\\\\"', 7),
        (b'{"a": "\\', 7),
        (b'\xef\xbb\xbf{"\xea\xb0\x80": "', 7),
        (b'{"a": [' + b"[" * 150 + b'"' + b'\\"' * 1000, 158),
    ],
)
def test_unterminated_string_is_one_line_with_jsons_column(raw: bytes, col: int) -> None:
    """The readers' path (precheck, then the safe loader) refuses it as json would."""
    from risutools.formats import jsonsafe

    with pytest.raises(FormatError) as ei:
        jsonscan.precheck(raw, where="JSON", what="x")
        jsonsafe.loads_object(raw, where="JSON", what="x")
    assert ei.value.code == "not-json"
    assert ei.value.why.endswith(f"Unterminated string starting at line 1 column {col}")
    try:
        json.loads(raw.decode("utf-8-sig"))
    except json.JSONDecodeError as exc:
        assert exc.colno == col  # the column json itself reports
    else:
        raise AssertionError("json accepted it")


def test_precheck_counts_outside_strings_only() -> None:
    inside = b'{"a": "' + b"[{,:" * (jsonscan.MAX_JSON_VALUES // 2) + b'"}'
    jsonscan.precheck(inside, where="")  # brackets in a string are not containers
    many = b'{"a": [' + b"[]," * jsonscan.MAX_JSON_CONTAINERS + b"[]]}"
    with pytest.raises(FormatError) as ei:
        jsonscan.precheck(many, where="JSON")
    assert ei.value.code == "too-large" and "arrays/objects" in ei.value.why
    values = b'{"a": [' + b"1," * jsonscan.MAX_JSON_VALUES + b"1]}"
    with pytest.raises(FormatError) as ei:
        jsonscan.precheck(values, where="JSON")
    assert ei.value.code == "too-large" and "values" in ei.value.why
    # a string longer than a scan chunk, holding quotes and brackets
    long = b'{"a": "' + b'\\"[' * (1 << 20) + b'", "b": [' + b"[]," * 10 + b"[]]}"
    jsonscan.precheck(long, where="")


# -- msgpack -------------------------------------------------------------------------

packable = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.floats(allow_nan=False)
    | st.text(max_size=40) | st.binary(max_size=300),
    lambda inner: st.lists(inner, max_size=20) | st.dictionaries(st.text(max_size=8), inner,
                                                                 max_size=20),
    max_leaves=60,
)  # fmt: skip


@given(packable)
def test_msgpack_walk_accepts_what_msgpack_writes(value: Any) -> None:
    data = msgpack.packb(value, use_bin_type=True)
    risup.msgpack_shape(data, "x")
    assert risup._unpack(data, "x") == msgpack.unpackb(data, raw=False, strict_map_key=False)
    if len(data) > 1:
        with pytest.raises(FormatError) as ei:
            risup.msgpack_shape(data[:-1], "x")
        assert ei.value.code == "risup-not-msgpack"
    with pytest.raises(FormatError):
        risup.msgpack_shape(data + b"\xc0", "x")


@pytest.mark.parametrize(
    ("data", "code"),
    [
        (b"\xdd\xff\xff\xff\xff" + b"\x80" * 10, "risup-not-msgpack"),  # more than is left
        (b"\xdf\x00\x01\x00\x00" + b"\x80" * 100, "risup-not-msgpack"),
        (b"\x91" * 201 + b"\xc0", "json-too-deep"),
        (b"\xc1", "risup-not-msgpack"),
        (b"\xdb\x00\x00\x10\x00ab", "risup-not-msgpack"),
        (b"\xdd" + (risup.MAX_MSGPACK_ITEMS).to_bytes(4, "big") + b"\x80" * risup.MAX_MSGPACK_ITEMS,
         "too-large"),
    ],
)  # fmt: skip
def test_msgpack_walk_refusals(data: bytes, code: str) -> None:
    with pytest.raises(FormatError) as ei:
        risup.msgpack_shape(data, "x")
    assert ei.value.code == code


# -- only regular files ----------------------------------------------------------------


@pytest.mark.parametrize("kind", ["fifo", "dev-urandom", "dev-zero", "folder", "folder-link"])
def test_only_regular_files_are_read(tmp_path: Path, kind: str) -> None:
    p = tmp_path / "x.risum"
    if kind == "fifo":
        os.mkfifo(p)  # opening it for reading would block without O_NONBLOCK
    elif kind == "folder":
        p.mkdir()
    elif kind == "folder-link":
        (tmp_path / "d").mkdir()
        p.symlink_to(tmp_path / "d")
    else:
        p.symlink_to("/dev/urandom" if kind == "dev-urandom" else "/dev/zero")
    for fn in (read_path, detect, read_risum):
        with pytest.raises(FormatError) as ei:
            fn(p)
        assert ei.value.code == "not-a-file", (fn, ei.value)
        assert "\n" not in ei.value.one_line()


def test_pack_reads_only_regular_files(tmp_path: Path) -> None:
    from risutools.formats.unpack import pack, pack_inputs, unpack

    src = Path(__file__).resolve().parents[1] / "fixtures" / "sources"
    manifest = unpack(src / "183120336_asset-pack.risum", tmp_path / "u")
    asset = tmp_path / "u" / manifest["assets"][0]["file"]
    asset.unlink()
    asset.symlink_to("/dev/zero")
    with pytest.raises(FormatError) as ei:
        pack_inputs(tmp_path / "u")
    assert ei.value.code == "outside-target"  # never opened
    asset.unlink()
    os.mkfifo(asset)  # (an asset is opened when it is packed, streamed: pack_inputs names it)
    with pytest.raises(FormatError) as ei:
        pack(tmp_path / "u", tmp_path / "o.risum")
    assert ei.value.code == "not-a-file" and ei.value.path == str(asset)
    assert not (tmp_path / "o.risum").exists()


def test_crc_helper_used_by_the_fixture_builder_matches_zlib() -> None:
    # the hostile fixtures rely on deflate blocks repeating after a full flush
    import importlib.util
    import sys

    root = Path(__file__).resolve().parents[1]
    spec = importlib.util.spec_from_file_location("build_fixtures", root / "fixtures" /
                                                  "build_fixtures.py")  # fmt: skip
    assert spec is not None and spec.loader is not None
    b = importlib.util.module_from_spec(spec)
    sys.modules["build_fixtures"] = b
    spec.loader.exec_module(b)
    stream, crc, size = b.deflate_repeat(b"head", b"unit-" * 100, 50)
    out = zlib.decompressobj(-15).decompress(stream)
    assert out == b"head" + b"unit-" * 100 * 50 and size == len(out)
    assert crc == zlib.crc32(out)


def test_the_opened_descriptor_is_what_counts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A path swapped for a FIFO after the first look: the open does not block, fstat refuses."""
    import risutools.formats.reader as reader_mod

    regular = tmp_path / "regular.risum"
    regular.write_bytes(MODULE)
    fifo = tmp_path / "swapped.risum"
    os.mkfifo(fifo)
    real_stat = os.stat

    def looks_regular(p: Any, *a: Any, **k: Any) -> os.stat_result:
        return real_stat(regular) if os.fspath(p) == str(fifo) else real_stat(p, *a, **k)

    monkeypatch.setattr(reader_mod.os, "stat", looks_regular)
    with pytest.raises(FormatError) as ei:
        read_path(fifo)
    assert ei.value.code == "not-a-file" and "FIFO" in ei.value.why


def test_a_socket_is_not_a_file(tmp_path: Path) -> None:
    import socket

    p = tmp_path / "s.risum"
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(p))
        with pytest.raises(FormatError) as ei:
            read_path(p)
    assert ei.value.code == "not-a-file" and "socket" in ei.value.why
