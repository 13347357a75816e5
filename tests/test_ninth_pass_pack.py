"""Findings of the ninth pass on ``pack`` and ``unpack``, each a test that fails before its fix:

* ``pack`` of a wrapper JSON with an ``id`` of its own (``{"id": ..., "module": {...},
  "type": "risuModule"}``) packed the inner module (``lowLevelAccess``, triggers) while
  ``inspect``, ``project`` and ``ingest`` read the outer object: one rule
  (``exports.module_object``) now says which object is the module, for every reader and
  ``pack``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from harness import run_cli

from risutools.formats.reader import read_path

# ---- pack takes the module every reader takes ---------------------------------------------

INNER = {"name": "INNER", "id": "inner-id", "lowLevelAccess": True,
         "trigger": [{"type": "start", "effect": [{"type": "triggerlua", "code": "x()"}]}]}


@pytest.mark.parametrize("outer", [
    {"id": "outer-id", "module": INNER, "type": "risuModule"},
    {"id": "outer-id", "name": "OUTER", "module": INNER, "type": "risuModule"},
    {"name": "OUTER", "module": INNER, "type": "risuModule"},
    {"module": INNER, "type": "risuModule"},
])
@pytest.mark.parametrize("as_folder", [False, True])
def test_pack_packs_the_module_inspect_reads(tmp_path: Path, outer: dict[str, Any],
                                             as_folder: bool) -> None:
    src = tmp_path / "m.json"
    if as_folder:
        (tmp_path / "f").mkdir()
        src = tmp_path / "f" / "module.json"
    src.write_text(json.dumps(outer), "utf-8")
    (read,) = read_path(str(tmp_path / "m.json" if not as_folder else src))
    packed = tmp_path / "out.risum"
    done = run_cli("pack", src.parent if as_folder else src, "-o", packed)
    if done.returncode != 0:  # (refused: a module without a name is not packed)
        assert "pack-invalid-input" in done.stderr and "Traceback" not in done.stderr
        assert "name" not in read.data
        assert not packed.exists()
        return
    (back,) = read_path(str(packed))
    assert back.data == read.data
