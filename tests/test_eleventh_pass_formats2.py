"""The eleventh pass over the readers, second round (fix 65, helper 8): cards read as
RisuAI's ``CharXReader`` (fflate's streaming ``Unzip``) and ``importCharX`` read them.

- ``card.json`` is decoded with ``new TextDecoder().decode`` (U+FFFD for a sequence that is
  not UTF-8) and the card loads: risutools refused it (``not-utf8``).
"""

from __future__ import annotations

import io
import json
import os
import random
import struct
import subprocess
import sys
import time
import zipfile
import zlib
from pathlib import Path

import pytest
from harness import ROOT, run_cli

from risutools.errors import FormatError
from risutools.formats import read_path
from risutools.formats.risum import write_risum

MODULE = {"name": "Two Module", "id": "two-1", "lorebook": [], "regex": [], "trigger": []}


def _zip(members: list[tuple[str, bytes]], method: int = zipfile.ZIP_DEFLATED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", method) as z:
        for name, data in members:
            z.writestr(name, data)
    return buf.getvalue()


# -- card.json that is not UTF-8: TextDecoder replaces, RisuAI loads the card --------------

def _card_text(description: bytes) -> bytes:
    return (b'{"spec": "chara_card_v3", "spec_version": "3.0", "data": {"name": "Bytes", '
            b'"description": "' + description + b' {{getvar::mood}}", "first_mes": "hi", '
            b'"extensions": {}}}')


def test_a_card_json_that_is_not_utf8_is_read_as_textdecoder_reads_it(tmp_path: Path) -> None:
    raw = _card_text(b"caf\xe9 \xe3\x81 ok \xed\xa0\x80")  # latin-1, a cut sequence, a surrogate
    p = tmp_path / "latin.charx"
    p.write_bytes(_zip([("card.json", raw), ("module.risum", write_risum(MODULE, []))]))
    card, module = read_path(p)
    # one U+FFFD for each maximal bad part (the WHATWG decoder's rule): \xe9, \xe3\x81, and
    # each of the surrogate's three bytes
    fields = card.data["cardFields"]
    assert fields["description"] == "caf\ufffd \ufffd ok \ufffd\ufffd\ufffd {{getvar::mood}}"
    assert module.data["name"] == "Two Module"
    notes = [(a.code, a.where) for a in module.anomalies]
    assert notes == [("card-not-utf8", "card.json")]
    first = raw.index(b"\xe9")
    assert f"byte 0xe9 at byte {first}" in module.anomalies[0].message
    r = run_cli("inspect", str(p))
    assert r.returncode == 0, r.stderr
    assert "card-not-utf8" in r.stdout + r.stderr


def test_a_card_alone_that_is_not_utf8_carries_the_warning(tmp_path: Path) -> None:
    p = tmp_path / "alone.charx"
    p.write_bytes(_zip([("card.json", b"\xef\xbb\xbf" + _card_text(b"\xff"))]))  # BOM kept out
    (card,) = read_path(p)
    assert card.data["cardFields"]["description"].startswith("\ufffd {{getvar")
    (note,) = card.anomalies
    assert note.code == "card-not-utf8" and "byte 0xff at byte " in note.message


def test_a_utf8_card_has_no_warning(tmp_path: Path) -> None:
    p = tmp_path / "ok.charx"
    p.write_bytes(_zip([("card.json", _card_text("카드".encode()))]))
    (card,) = read_path(p)
    assert card.data["cardFields"]["description"].startswith("카드") and card.anomalies == []


# -- declared sizes: fflate's Unzip keeps what a member inflates, whatever it declares -------
# (a local header's inflated size of 0 alone stops RisuAI from reading the member; a member
# past 50 MiB once inflated is skipped: a card.json so does not load, a module.risum so the
# card loads without it, its own triggers, regex and lorebook kept)

MiB = 1024 * 1024
CARD = {"spec": "chara_card_v3", "spec_version": "3.0",
        "data": {"name": "Sizes", "first_mes": "hi", "extensions": {"risuai": {
            "triggerscript": [{"comment": "own", "type": "start", "conditions": [],
                               "effect": [{"type": "setvar", "var": "x", "value": "1",
                                           "operator": "="}]}]}}}}


def _deflate(data: bytes, level: int = 6) -> bytes:
    c = zlib.compressobj(level, zlib.DEFLATED, -15)
    return c.compress(data) + c.flush()


Row = tuple[str, int, bytes, "bytes | None", "int | None", "int | None"]


def _raw(members: list[Row]) -> bytes:
    """A ZIP written by hand: (name, method, data, compressed bytes, local size, directory
    size); ``data`` is stored or deflated here unless its compressed bytes are given, and
    an inflated size of None is the true one."""
    out, cd = bytearray(), bytearray()
    for name, method, data, given, local, central in members:
        raw = name.encode()
        comp = given if given is not None else data if method == 0 else _deflate(data)
        crc, at = zlib.crc32(data), len(out)
        usize = [len(data) if v is None else v for v in (local, central)]
        out += struct.pack("<4s5H3L2H", b"PK\x03\x04", 20, 0, method, 0, 0x21, crc,
                           len(comp), usize[0], len(raw), 0) + raw + comp
        cd += struct.pack("<4s6H3L5H2L", b"PK\x01\x02", 20, 20, 0, method, 0, 0x21, crc,
                          len(comp), usize[1], len(raw), 0, 0, 0, 0, 0, at) + raw
    return bytes(out + cd + struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, len(members),
                                        len(members), len(cd), len(out), 0))


def _card_json() -> bytes:
    return json.dumps(CARD).encode()


def _write(tmp_path: Path, blob: bytes) -> Path:
    p = tmp_path / "s.charx"
    p.write_bytes(blob)
    return p


@pytest.mark.parametrize("method", [0, 8])
@pytest.mark.parametrize("local, central", [(10, 10), (10, None), (None, 10), (99999, 99999),
                                            (None, 0), (None, 0xFFFFFFFF)])
def test_a_member_that_inflates_to_another_size_is_read_as_risuai_reads_it(
        tmp_path: Path, method: int, local: int | None, central: int | None) -> None:
    module = write_risum(MODULE, [])
    honest = read_path(_write(tmp_path, _raw([("card.json", 8, _card_json(), None, None, None),
                                              ("module.risum", method, module, None, None,
                                               None)])))
    assert all(not m.anomalies for m in honest)
    got = read_path(_write(tmp_path, _raw([("card.json", 8, _card_json(), None, local, central),
                                           ("module.risum", method, module, None, local,
                                            central)])))
    assert [m.data for m in got] == [m.data for m in honest]
    notes = sorted((a.code, a.where) for m in got for a in m.anomalies)
    # (the size read is the directory's: a local header's own, not 0, changes nothing)
    want = [] if central is None else sorted(
        ("zip-size-mismatch", f"member {n!r}") for n in ("card.json", "module.risum"))
    assert notes == want
    r = run_cli("inspect", str(tmp_path / "s.charx"))
    assert r.returncode == 0 and ("zip-size-mismatch" in r.stdout) == bool(want), r.stderr


@pytest.mark.parametrize("declared", [None, 1024])
def test_a_module_past_the_member_bound_is_dropped_and_the_card_read(
        tmp_path: Path, declared: int | None) -> None:
    # stored: RisuAI's reader keeps its 50 MiB + 1 KiB of bytes, then skips the member
    big = write_risum(MODULE, []) + bytes(50 * MiB + 1024)
    p = _write(tmp_path, _raw([("card.json", 8, _card_json(), None, None, None),
                               ("module.risum", 0, big, None, declared, declared)]))
    del big
    started = time.monotonic()
    (card,) = read_path(p)
    assert time.monotonic() - started < 20
    assert card.component_type == "character"
    assert [t["comment"] for t in card.data["trigger"]] == ["own"]  # the card's own, kept
    assert [a.code for a in card.anomalies] == ["module-too-large"]
    assert "52428800 byte bound" in card.anomalies[0].message
    r = run_cli("inspect", str(p))
    assert r.returncode == 0 and "module-too-large" in r.stdout, r.stderr


def test_a_card_json_past_the_member_bound_is_refused(tmp_path: Path) -> None:
    # RisuAI skips it too, and then has no card: "noData"
    text = _card_json()[:-1] + b', "pad": "' + b" " * (50 * MiB) + b'"}'
    p = _write(tmp_path, _raw([("card.json", 0, text, None, 1024, 1024)]))
    with pytest.raises(FormatError) as ei:
        read_path(p)
    assert ei.value.code == "zip-member-too-large"


def test_a_lying_bomb_is_refused_by_the_ratio_bound(tmp_path: Path) -> None:
    # declares 1 KiB, inflates 64 MiB of zeros (about 1000x): the ratio bound stays
    bomb = write_risum(MODULE, []) + bytes(64 * MiB)
    p = _write(tmp_path, _raw([("card.json", 8, _card_json(), None, None, None),
                               ("module.risum", 8, bomb, None, 1024, 1024)]))
    del bomb
    with pytest.raises(FormatError) as ei:
        read_path(p)
    assert ei.value.code == "zip-bomb"
    r = run_cli("inspect", str(p))
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1 and "zip-bomb" in r.stderr


def test_a_lying_bomb_stays_within_the_memory_bound(tmp_path: Path) -> None:
    # declares 1 KiB, inflates 64 MiB at under 200x (zeros with a random byte every 150
    # bytes): read as RisuAI reads it (module skipped), never inflated past 50 MiB + one
    # step, under a 600 MB address-space cap (the hostile corpus has a 1 GiB one)
    rng = random.Random(5)
    chunk = bytearray(bytes(8 * MiB))
    for i in range(0, len(chunk), 150):
        chunk[i] = rng.randrange(1, 256)
    co = zlib.compressobj(6, zlib.DEFLATED, -15)
    comp = co.compress(write_risum(MODULE, []))
    comp += b"".join(co.compress(bytes(chunk)) for _ in range(8)) + co.flush()
    assert len(comp) * 200 > 50 * MiB  # the ratio bound is not what stops it
    p = _write(tmp_path, _raw([("card.json", 8, _card_json(), None, None, None),
                               ("module.risum", 8, b"", comp, 1024, 1024)]))
    code = ("import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (600 << 20, 600 << 20));"
            "from risutools.formats import read_path;"
            "print([a.code for m in read_path(sys.argv[1]) for a in m.anomalies])")
    r = subprocess.run([sys.executable, "-c", code, str(p)], capture_output=True, text=True,
                       timeout=120, check=False, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip() == "['module-too-large']"


def test_a_module_whose_local_header_declares_nothing_is_not_loaded(tmp_path: Path) -> None:
    # RisuAI: file.originalSize ?? 0 < 50 MiB is originalSize ?? true: 0 never starts it
    module = write_risum(MODULE, [])
    for central in (None, 0):
        p = _write(tmp_path, _raw([("card.json", 8, _card_json(), None, None, None),
                                   ("module.risum", 8, module, None, 0, central)]))
        (card,) = read_path(p)
        assert [t["comment"] for t in card.data["trigger"]] == ["own"]
        assert [a.code for a in card.anomalies] == ["module-not-loaded"]
    p = _write(tmp_path, _raw([("card.json", 8, _card_json(), None, 0, None)]))
    with pytest.raises(FormatError) as ei:
        read_path(p)
    assert ei.value.code == "zip-no-card" and "0 bytes inflated" in ei.value.why


def test_a_member_of_no_compressed_bytes_is_read_empty(tmp_path: Path) -> None:
    # fflate: "if (!sc) file.ondata(null, et, true)": empty, whatever the method; an empty
    # module.risum fails RisuAI's readModule, so the card is refused, by the .risum reader
    p = _write(tmp_path, _raw([("card.json", 8, _card_json(), None, None, None),
                               ("module.risum", 8, b"", b"", 100, 100)]))
    with pytest.raises(FormatError) as ei:
        read_path(p)
    assert ei.value.code != "zip-invalid" and ei.value.where.startswith("module.risum")
