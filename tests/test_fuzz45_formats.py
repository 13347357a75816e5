"""Fuzzing pass 45 over the format readers and the read path of ``inspect``, ``analyze``,
``project`` and ``ingest``: each defect it found, as a class."""

from __future__ import annotations

import io
import json
import struct
import zipfile
from pathlib import Path
from typing import Any

import pytest
from harness import run_cli

from risutools.formats import read_path, rpack
from risutools.projection.run import project_path

# --------------------------------------------- a lone surrogate in a key (not only in a value)

LONE = "\ud800"


def _risum(module: dict[str, Any]) -> bytes:
    main = json.dumps({"module": module, "type": "risuModule"}).encode()  # (\ud800 escaped)
    return bytes([0x6F, 0]) + struct.pack("<I", len(main)) + rpack.encode(main) + b"\x00"


def _charx(card: dict[str, Any], module: dict[str, Any] | None = None) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("card.json", json.dumps(card))
        if module is not None:
            zf.writestr("module.risum", _risum(module))
    return buf.getvalue()


_MODULE = {"name": "n", "id": "i", LONE: 1,
           "lorebook": [{"content": "{{getvar::a}}", LONE: {LONE: LONE}}]}
_CARD = {"spec": "chara_card_v3", "data": {"name": "c", "first_mes": "{{getvar::x}}", LONE: 1,
                                           "character_book": {"entries": [
                                               {LONE: 1, "content": "{{getvar::y}}"}]}}}


def _surrogate_key_sources() -> dict[str, bytes]:
    return {
        "m.json": json.dumps({**_MODULE, "type": "risuModule"}).encode(),
        "m.risum": _risum(_MODULE),
        "card.json": json.dumps(_CARD).encode(),
        "c.charx": _charx(_CARD, _MODULE),
        "lore.json": json.dumps({"type": "risu", "data": [{LONE: 1, "content": "{{a}}"}]}).encode(),
    }


@pytest.mark.parametrize("name", ["m.json", "m.risum", "c.charx"])  # (a card's and a
# lorebook's identity hash never held the key: they are in the ingest test below)
def test_a_lone_surrogate_in_a_key_projects(tmp_path: Path, name: str) -> None:
    """A key holding an unpaired surrogate (``"\\ud800": 1``, valid JSON text) reached the
    content identity's hash unreplaced: ``project`` and a whole ``ingest`` run stopped with
    ``internal error: UnicodeEncodeError``.  Keys are text and are replaced like values."""
    p = tmp_path / name
    p.write_bytes(_surrogate_key_sources()[name])
    docs = project_path(str(p))
    assert docs
    for doc in docs:  # the identity names a component; it is the same on every run
        assert doc["component_id"] == project_path(str(p))[docs.index(doc)]["component_id"]
    r = run_cli("project", p, "-o", tmp_path / "out")
    assert r.returncode == 0, r.stderr
    assert "internal error" not in r.stderr


def test_ingest_goes_on_past_a_lone_surrogate_key(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    for name, data in _surrogate_key_sources().items():
        (src / name).write_bytes(data)
    r = run_cli("ingest", src, "-o", tmp_path / "cat", "-j", "1", "-q")
    assert "internal error" not in r.stderr
    assert r.returncode in (0, 1), r.stderr  # (1: the id collisions of one module's copies)
    assert len(list((tmp_path / "cat").glob("*.json"))) >= 3
