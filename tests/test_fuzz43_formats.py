"""Fuzzing pass 43 over the format readers: each defect it found, as a class."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from harness import run_cli

from risutools.formats import read_path
from risutools.formats.risup import encode_preset


def _strict_json(text: str) -> Any:
    """``json.loads`` that refuses NaN and the infinities (as every JSON reader but Python's)."""
    def refuse(token: str) -> Any:
        raise ValueError(f"not JSON: {token}")
    return json.loads(text, parse_constant=refuse)


# ----------------------------------------------------------------- presets: non-finite numbers

NONFINITE = [float("nan"), float("inf"), float("-inf")]


@pytest.mark.parametrize("rpacked", [True, False])
@pytest.mark.parametrize("bad", NONFINITE, ids=["nan", "inf", "-inf"])
def test_a_preset_number_json_cannot_hold_reads_as_null(tmp_path: Path, bad: float,
                                                        rpacked: bool) -> None:
    preset = {"name": "p", "temperature": bad, "list": [1, bad, {"a/b~": bad}],
              "deep": {"x": [[bad]]}, "ok": 0.5}
    p = tmp_path / ("p.risup" if rpacked else "p.risupreset")
    p.write_bytes(encode_preset(preset, rpacked=rpacked))
    [m] = read_path(p)
    assert m.data["temperature"] is None and m.data["ok"] == 0.5
    assert m.data["list"] == [1, None, {"a/b~": None}] and m.data["deep"] == {"x": [[None]]}
    _strict_json(json.dumps(m.data, allow_nan=False))
    [note] = m.anomalies
    assert note.code == "non-finite-number" and note.where == "/temperature"
    assert "4 number(s)" in note.message
    assert "/temperature, /list/1, /list/2/a~1b~0" in note.message  # the first three


def test_a_preset_with_non_finite_numbers_unpacks_and_prints_json(tmp_path: Path) -> None:
    p = tmp_path / "p.risup"
    p.write_bytes(encode_preset({"name": "p", "temperature": float("nan"),
                                 "top_p": float("inf")}))
    done = run_cli("unpack", p, "-o", tmp_path / "out")
    assert done.returncode == 0, done.stderr
    assert "non-finite-number" in done.stderr
    module = _strict_json((tmp_path / "out" / "module.json").read_text("utf-8"))
    assert module["temperature"] is None and module["top_p"] is None
    _strict_json((tmp_path / "out" / "manifest.json").read_text("utf-8"))
    for args in (("inspect", "--json"), ("analyze", "-f", "json"), ("analyze", "-f", "sarif")):
        done = run_cli(*args, p)
        assert done.returncode in (0, 1), done.stderr
        _strict_json(done.stdout)
    done = run_cli("project", p, "--post-id", "1", "-o", tmp_path / "doc.json")
    assert done.returncode == 0, done.stderr
    _strict_json((tmp_path / "doc.json").read_text("utf-8"))


def test_a_preset_without_non_finite_numbers_has_no_note(tmp_path: Path) -> None:
    p = tmp_path / "p.risup"
    p.write_bytes(encode_preset({"name": "p", "temperature": 1e308, "n": -0.0}))
    [m] = read_path(p)
    assert m.anomalies == [] and m.data["temperature"] == 1e308


# ------------------------------------------------- JSON: an integer past Python's digit bound

BIG = "9" * 5000  # more digits than Python's int reads from text (4300): ValueError in json


@pytest.mark.parametrize("sign", ["", "-"])
def test_a_json_export_integer_past_the_digit_bound_is_placed(tmp_path: Path,
                                                              sign: str) -> None:
    p = tmp_path / "m.json"
    p.write_text('{"type": "risuModule", "name": "x",\n "lorebook": [{"insertorder": '
                 f'{sign}{BIG}}}]}}', "utf-8")
    done = run_cli("inspect", p)
    assert done.returncode == 2
    [line] = done.stderr.splitlines()
    assert "not-json" in line and "line 2 (/lorebook/0/insertorder)" in line, line
    assert "sys.set_int_max_str_digits" not in line  # Python's advice is not the reader's
    assert "out of a JSON number's range" in line


def test_a_risum_main_block_integer_past_the_digit_bound_is_placed(tmp_path: Path) -> None:
    from risutools.formats import rpack

    main = ('{"module": {"name": "x", "id": "y", "n": ' + BIG + '}, "type": "risuModule"}')
    block = rpack.encode(main.encode())
    p = tmp_path / "m.risum"
    p.write_bytes(b"\x6f\x00" + len(block).to_bytes(4, "little") + block + b"\x00")
    done = run_cli("inspect", p)
    assert done.returncode == 2
    assert "(/module/n)" in done.stderr and "set_int_max_str_digits" not in done.stderr


def test_a_document_integer_past_the_digit_bound_is_placed(tmp_path: Path) -> None:
    p = tmp_path / "d.json"
    p.write_text('{"component_id": "x",\n "n": ' + BIG + "}", "utf-8")
    done = run_cli("hash", p)
    assert done.returncode == 2
    assert ":2:" in done.stderr and "out of a JSON number's range" in done.stderr
    assert "set_int_max_str_digits" not in done.stderr


def test_an_integer_within_the_digit_bound_still_reads(tmp_path: Path) -> None:
    p = tmp_path / "m.json"
    p.write_text('{"type": "risuModule", "name": "x", "id": "y", "n": ' + "9" * 4000 + "}",
                 "utf-8")
    [m] = read_path(p)
    assert m.data["n"] == int("9" * 4000)


BODIES = [f"n: {BIG}\n", f"l:\n  - 1\n  - {BIG}\n", f"m: {{a: [{BIG}]}}\n"]


@pytest.mark.parametrize("body", BODIES)
def test_a_yaml_integer_past_the_digit_bound_is_placed(tmp_path: Path, body: str) -> None:
    p = tmp_path / "d.yaml"
    p.write_text("component_id: x\n" + body, "utf-8")
    done = run_cli("hash", p)
    assert done.returncode == 2
    line = next(i for i, t in enumerate(body.splitlines(), start=2) if BIG in t)
    assert f"d.yaml:{line}:" in done.stderr and "out of a JSON number's range" in done.stderr
    assert "set_int_max_str_digits" not in done.stderr
    done = run_cli("validate", "-f", "json", p)
    [finding] = json.loads(done.stdout)["findings"]
    assert finding["rule"] == "MC000" and finding["line"] == line
    assert finding["pointer"] == {0: "/n", 1: "/l/1", 2: "/m/a/0"}[BODIES.index(body)]


# ------------------------------------- .charx: what RisuAI's streaming reader loads is reviewed

def _card_json(name: str = "C") -> bytes:
    return json.dumps({"spec": "chara_card_v3", "spec_version": "3.0",
                       "data": {"name": name, "extensions": {}}}).encode()


def _risum(name: str) -> bytes:
    from risutools.formats.risum import write_risum

    return write_risum({"name": name, "id": name, "lorebook": []}, [])


def _zip(members: list[tuple[str, bytes]], comment: bytes = b"") -> bytes:
    import io
    import zipfile

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in members:
            z.writestr(zipfile.ZipInfo(name, (2020, 1, 1, 0, 0, 0)), data)
        z.comment = comment
    return buf.getvalue()


def _local(name: str, data: bytes) -> bytes:
    """One stored local header and its data (no directory entry: what fflate still reads)."""
    import struct
    import zlib

    raw = name.encode()
    return (struct.pack("<4s5H3L2H", b"PK\x03\x04", 20, 0, 0, 0, 0, zlib.crc32(data),
                        len(data), len(data), len(raw), 0) + raw + data)


def _hidden_cases() -> dict[str, bytes]:
    good = [("card.json", _card_json()), ("module.risum", _risum("benign"))]
    evil = _local("module.risum", _risum("EVIL"))
    plain = _zip(good)
    cd = plain.index(b"PK\x01\x02")
    renamed = bytearray(_zip([("card.json", _card_json()), ("assets/a.png", _risum("EVIL"))]))
    at = renamed.index(b"assets/a.png")  # the local header's name, not the directory's
    renamed[at:at + 12] = b"module.risum"
    return {
        "in the end record's comment": _zip(good, comment=evil),
        "in a gap before the directory": _moved_directory(plain[:cd] + evil + plain[cd:],
                                                          len(evil)),
        "in front (a JPEG's bytes)": b"\xff\xd8\xff\xe0" + evil + plain,
        "renamed in its local header": bytes(renamed),
        "after the end record": plain + evil,
        "a directory module RisuAI never reaches": _swallowed(),
    }


def _moved_directory(z: bytes, by: int) -> bytes:
    """``z`` with its end record's directory offset moved on by ``by`` bytes."""
    import struct

    data = bytearray(z)
    end = data.rindex(b"PK\x05\x06")
    struct.pack_into("<L", data, end + 16, struct.unpack_from("<L", data, end + 16)[0] + by)
    return bytes(data)


def _swallowed() -> bytes:
    """A ZIP whose directory lists a module.risum at a local header inside another
    member's stored data: RisuAI walks past it, so what the directory shows never loads."""
    import struct

    inner = _local("module.risum", _risum("benign"))
    data = bytearray(_zip([("card.json", _card_json()), ("assets/x.bin", inner)]))
    at = data.index(inner)
    q = data.index(b"PK\x01\x02", data.rindex(b"PK\x01\x02card.json"[:4]))
    entry = data.index(b"assets/x.bin", q) - 46  # its directory entry (same name length)
    crc, size = struct.unpack_from("<L", inner, 14)[0], len(_risum("benign"))
    struct.pack_into("<3L", data, entry + 16, crc, size, size)
    struct.pack_into("<L", data, entry + 42, at)
    data[entry + 46:entry + 58] = b"module.risum"
    return bytes(data)


@pytest.mark.parametrize("case", sorted(_hidden_cases()))
def test_a_member_risuai_loads_but_the_directory_hides_is_refused(tmp_path: Path,
                                                                   case: str) -> None:
    data = _hidden_cases()[case]
    p = tmp_path / ("c.jpeg" if data.startswith(b"\xff\xd8") else "c.charx")
    p.write_bytes(data)
    done = run_cli("inspect", p)
    assert done.returncode == 2, (case, done.stdout)
    [line] = done.stderr.splitlines()
    assert "zip-hidden-member" in line and "offset" in line, line
    assert "EVIL" not in done.stdout
    done = run_cli("unpack", p, "-o", tmp_path / "out")
    assert done.returncode == 2 and "zip-hidden-member" in done.stderr
    assert not (tmp_path / "out" / "module.json").exists()


def test_honest_cards_still_read(tmp_path: Path) -> None:
    # a stored member whose data holds a local header's bytes is skipped, as RisuAI skips it
    data = _zip([("card.json", _card_json()), ("assets/a.bin", _local("module.risum", b"x")),
                 ("module.risum", _risum("benign"))], comment=b"PK\x03")
    p = tmp_path / "c.charx"
    p.write_bytes(data)
    names = [m.data.get("name") for m in read_path(p)]
    assert names == ["benign"]
    for fixture in ("184500112_heroine-card.charx", "184500113_heroine-card-jpeg.jpeg"):
        assert read_path(Path(__file__).parents[1] / "fixtures" / "sources" / fixture)


def test_the_local_header_walk_is_bounded(tmp_path: Path) -> None:
    import struct
    import time

    # 300,000 empty local headers named "x" in front of a card: RisuAI would walk them all
    one = struct.pack("<4s5H3L2H", b"PK\x03\x04", 20, 0, 0, 0, 0, 0, 0, 0, 1, 0) + b"x"
    p = tmp_path / "c.jpeg"
    p.write_bytes(b"\xff\xd8\xff\xe0" + one * 300_000 + _zip([("card.json", _card_json())]))
    start = time.perf_counter()
    done = run_cli("inspect", p)
    assert time.perf_counter() - start < 20
    assert done.returncode == 2 and "zip-hidden-member" in done.stderr
    assert "more than 65535 local headers" in done.stderr
