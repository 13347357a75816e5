"""A name read from a manifest or a record can be no file name at all: ``"\\ud800"`` in JSON
is an unpaired surrogate, which no file name encodes, and ``"a\\u0000b"`` holds a NUL; ``os``
raises ``ValueError`` for either, not ``OSError``.  ``pack`` of a manifest whose module was
``"\\ud800"`` showed a traceback (the fuzzer's sixth finding).  The class is closed where a
path is opened or judged: the safe reads (``safeio``) and the unpack/pack folder check."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from harness import SOURCES, run_cli

from risutools.safeio import FileRefused, check_inside, read_regular

_NAMES = ["\ud800", "a\udfffb.json", "a\x00b.json"]


@pytest.mark.parametrize("name", _NAMES)
@pytest.mark.parametrize("key", ["module", "assets"])
def test_pack_refuses_a_name_no_file_can_have(tmp_path: Path, name: str, key: str) -> None:
    out = tmp_path / "u"
    assert run_cli("unpack", SOURCES / "183120336_asset-pack.risum", "-o", out).returncode == 0
    manifest = json.loads((out / "manifest.json").read_text("utf-8"))
    if key == "module":
        manifest["module"] = name
    else:
        manifest["assets"][0]["file"] = name
    (out / "manifest.json").write_text(json.dumps(manifest), "utf-8")
    r = run_cli("pack", out, "-o", tmp_path / "x.risum")
    assert r.returncode == 2 and r.stdout == "", (r.stdout, r.stderr)
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr
    assert len(r.stderr.splitlines()) == 1
    assert not (tmp_path / "x.risum").exists()


@pytest.mark.parametrize("name", _NAMES)
def test_the_safe_reads_refuse_a_name_no_file_can_have(tmp_path: Path, name: str) -> None:
    with pytest.raises(FileRefused) as ei:
        read_regular(str(tmp_path / name), 100)
    assert "no name a file can have" in ei.value.why
    with pytest.raises(FileRefused):
        check_inside(tmp_path, str(tmp_path / name))
