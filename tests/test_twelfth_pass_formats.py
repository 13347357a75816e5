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

import pytest
from harness import run_cli

from risutools.errors import FormatError
from risutools.formats import charx, read_path

CARD = json.dumps(
    {"spec": "chara_card_v3", "spec_version": "3.0", "data": {"name": "Mina"}}
).encode()


def _zip(members: list[tuple[str, bytes]]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members:
            zf.writestr(name, data)
    return buf.getvalue()


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
    blob = prefix + _cd_size(_zip([("card.json", CARD)]), charx.MAX_CD_BYTES + 1)
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
