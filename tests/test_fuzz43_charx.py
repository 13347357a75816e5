"""Fuzzing pass 43 (4th): a ``.charx`` member with a data descriptor is walked as RisuAI walks it.

RisuAI reads cards with fflate's streaming ``Unzip``; a member whose local header has flag
bit 3 (sizes in a data descriptor after the data, as fflate's own streaming ``Zip``
writes every member) ends, stored or deflate alike, at the first local-header,
descriptor or directory-entry signature in its bytes.  The walk went by the directory's
size there instead, so a module.risum hidden inside such a member loaded in RisuAI and
was never shown.  Each case below was checked against fflate 0.8.3 itself.
"""

from __future__ import annotations

import json
import struct
import time
import zlib
from pathlib import Path

import pytest
from harness import run_cli

from risutools.errors import FormatError
from risutools.formats import read_path
from risutools.formats.risum import write_risum

DD, DIR = b"PK\x07\x08", b"PK\x01\x02"


def _card(extra: str = "") -> bytes:
    head = json.dumps({"spec": "chara_card_v3", "spec_version": "3.0",
                       "data": {"name": "C", "extensions": {}}}).encode()[:-2]
    return head + extra.encode() + b"}}"


def _risum(name: str) -> bytes:
    return write_risum({"name": name, "id": name, "lorebook": []}, [])


def _deflate(data: bytes, level: int = 6) -> bytes:
    c = zlib.compressobj(level, zlib.DEFLATED, -15)
    return c.compress(data) + c.flush()


def _local(name: str, data: bytes) -> bytes:
    """A stored local header with its sizes, and its data (listed nowhere)."""
    raw = name.encode()
    return (struct.pack("<4s5H3L2H", b"PK\x03\x04", 20, 0, 0, 0, 0, zlib.crc32(data),
                        len(data), len(data), len(raw), 0) + raw + data)


def _zip(members: list[tuple[str, bytes, int]], *, described: bool = True,
         signed: bool = True) -> bytes:
    """A ZIP as fflate's streaming ``Zip`` writes one (RisuAI's writer): local headers with
    flag bit 3 and no sizes, a descriptor (with its signature) after each member's data.
    ``members``: (name, data, method); method 8 deflates, level 0 for ``-8`` (stored
    blocks: the bytes show through, as RisuAI writes cards)."""
    out, cd = bytearray(), bytearray()
    for name, data, method in members:
        raw = name.encode()
        comp = data if method == 0 else _deflate(data, 0 if method < 0 else 6)
        method = abs(method)
        crc, flags, at = zlib.crc32(data), 0x808 if described else 0x800, len(out)
        sizes = (0, 0, 0) if described else (crc, len(comp), len(data))
        out += struct.pack("<4s5H3L2H", b"PK\x03\x04", 20, flags, method, 0, 0x21, *sizes,
                           len(raw), 0) + raw + comp
        if described:
            out += (DD if signed else b"") + struct.pack("<3L", crc, len(comp), len(data))
        cd += struct.pack("<4s6H3L5H2L", DIR, 20, 20, flags, method, 0, 0x21, crc,
                          len(comp), len(data), len(raw), 0, 0, 0, 0, 0, at) + raw
    return bytes(out + cd + struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, len(members),
                                        len(members), len(cd), len(out), 0))


_EVIL = _local("module.risum", _risum("EVIL"))


def _cases() -> dict[str, bytes]:
    card, benign = _card(), _risum("benign")
    method_swapped = bytearray(_zip([("card.json", card, 8), ("module.risum", benign, 0)]))
    at = method_swapped.index(b"module.risum") - 30
    struct.pack_into("<H", method_swapped, at + 8, 8)  # local header: deflate; directory: stored
    return {
        "a stored asset's bytes hold a module header": _zip(
            [("card.json", card, 8), ("assets/x.bin", b"\x89PNG" + _EVIL, 0),
             ("module.risum", benign, 8)]),
        "a deflated asset's stored blocks hold a module header": _zip(
            [("card.json", card, 8), ("assets/x.png", b"\x89PNG" + _EVIL, -8),
             ("module.risum", benign, 8)]),
        "a fake descriptor in an asset, a module header after it": _zip(
            [("card.json", card, 8), ("assets/x.bin", b"AAAA" + DD + bytes(8) + _EVIL, 0),
             ("module.risum", benign, 8)]),
        "the listed module's own bytes hold a second module": _zip(
            [("card.json", card, 8), ("module.risum", benign + _EVIL, 0)]),
        "a card.json that RisuAI cuts at a descriptor signature in it": _zip(
            [("card.json", _card(', "x": "' + DD.decode() + 'tail"'), 0),
             ("module.risum", benign, 8)]),
        "descriptors without their signature": _zip(
            [("card.json", card, 8), ("module.risum", benign, 8)], signed=False),
        "an asset that RisuAI ends at a directory entry's signature": _zip(
            [("card.json", card, 8), ("assets/x.bin", DIR + b"junk", 0),
             ("module.risum", benign, 8)]),
        "a local header's method differs from the directory's": bytes(method_swapped),
    }


@pytest.mark.parametrize("case", sorted(_cases()))
def test_a_member_risuai_reads_otherwise_is_refused(tmp_path: Path, case: str) -> None:
    p = tmp_path / "c.charx"
    p.write_bytes(_cases()[case])
    with pytest.raises(FormatError) as ei:
        read_path(p)
    assert ei.value.code == "zip-hidden-member", (case, ei.value)
    assert ei.value.where and ei.value.where.startswith("offset "), ei.value.where
    done = run_cli("inspect", p)
    assert done.returncode == 2, (case, done.stdout)
    [line] = done.stderr.splitlines()
    assert "zip-hidden-member" in line and "offset" in line and "Traceback" not in line
    assert "EVIL" not in done.stdout


@pytest.mark.parametrize("method", [0, 8, -8])
def test_cards_as_risuai_writes_them_still_read(tmp_path: Path, method: int) -> None:
    # every member with a descriptor, as fflate's streaming Zip writes (RisuAI's CharXWriter);
    # an asset's bytes may hold "PK" anywhere but a whole signature (RisuAI would cut it too)
    blob = bytes(range(256)) * 400 + b"PK\x05\x06PK\x03" * 10
    p = tmp_path / "c.charx"
    p.write_bytes(_zip([("card.json", _card(), method), ("assets/a.png", blob, method),
                        ("module.risum", _risum("benign"), method)]))
    assert [m.data.get("name") for m in read_path(p)] == ["benign"]


def test_the_descriptor_scan_is_bounded(tmp_path: Path) -> None:
    # 24 MiB of an asset RisuAI scans byte by byte: "PK" everywhere, no signature
    p = tmp_path / "c.charx"
    p.write_bytes(_zip([("card.json", _card(), 8), ("assets/a.bin", b"PK" * (12 << 20), 0),
                        ("module.risum", _risum("benign"), 8)]))
    start = time.perf_counter()
    assert [m.data.get("name") for m in read_path(p)] == ["benign"]
    assert time.perf_counter() - start < 10
