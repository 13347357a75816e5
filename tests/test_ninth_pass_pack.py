"""Findings of the ninth pass on ``pack`` and ``unpack``, each a test that fails before its fix:

* ``pack`` of a wrapper JSON with an ``id`` of its own (``{"id": ..., "module": {...},
  "type": "risuModule"}``) packed the inner module (``lowLevelAccess``, triggers) while
  ``inspect``, ``project`` and ``ingest`` read the outer object: one rule
  (``exports.module_object``) now says which object is the module, for every reader and
  ``pack``.
* ``pack`` wrote a ``.risum`` its own reader refuses: a manifest listing more than
  ``risum.MAX_ASSETS`` (65,536) asset files packed (exit 0) and ``inspect`` then said
  ``too-large``.  Every bound the reader enforces is now met before anything is written:
  the main block's by reading it back, the frames' (their number, each one's u32 length)
  from the manifest and the files' sizes.
"""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path
from typing import Any

import pytest
from harness import run_cli

from risutools.errors import RisuError
from risutools.formats.reader import read_path
from risutools.formats.risum import MAX_ASSETS, write_risum
from risutools.formats.unpack import _write_all

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


# ---- pack never writes a .risum its reader refuses ----------------------------------------

def _folder(tmp: Path, files: list[str], module: dict[str, Any] | None = None) -> Path:
    folder = tmp / "f"
    (folder / "assets").mkdir(parents=True)
    (folder / "assets" / "a.bin").write_bytes(b"A")
    (folder / "module.json").write_text(json.dumps(module or {"name": "m", "id": "x"}), "utf-8")
    (folder / "manifest.json").write_text(json.dumps({
        "manifest": "risutools-unpack-1", "component_type": "module", "module": "module.json",
        "assets": [{"file": f} for f in files]}), "utf-8")
    return folder


def test_pack_refuses_more_asset_frames_than_the_reader_takes(tmp_path: Path) -> None:
    folder = _folder(tmp_path, ["assets/a.bin"] * (MAX_ASSETS + 1))
    out = tmp_path / "o.risum"
    done = run_cli("pack", folder, "-o", out)
    assert done.returncode == 2, done.stdout
    assert f"/assets/{MAX_ASSETS}/file: too-large: " in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and not out.exists()


def test_pack_of_as_many_frames_as_the_reader_takes_is_read_back(tmp_path: Path) -> None:
    folder = _folder(tmp_path, ["assets/a.bin"] * MAX_ASSETS)
    out = tmp_path / "o.risum"
    assert run_cli("pack", folder, "-o", out).returncode == 0
    (back,) = read_path(str(out))
    assert len(back.assets) == MAX_ASSETS


def test_pack_refuses_an_asset_past_a_frame_before_writing(tmp_path: Path) -> None:
    """The frame's u32 length was checked only as the frame was reached (the assets before
    it streamed first, and the refusal said "exceeds 4 GiB"); it is now checked first, from
    the file's size (a sparse file: nothing read), naming the size and the bound."""
    folder = _folder(tmp_path, ["assets/a.bin", "assets/big.bin"])
    with open(folder / "assets" / "big.bin", "wb") as fp:
        fp.truncate(2**32)  # (a frame's length is a u32)
    out = tmp_path / "o.risum"
    done = run_cli("pack", folder, "-o", out)
    assert done.returncode == 2 and ": too-large: asset 1 of " in done.stderr, done.stderr
    assert not out.exists() and not list(tmp_path.glob("*.tmp*"))


# ---- a manifest that does not list the module's assets ------------------------------------

@pytest.mark.parametrize("entries", [None, [], [{"file": "assets/a.bin"}]])
def test_pack_refuses_a_manifest_without_the_modules_assets(tmp_path: Path,
                                                            entries: list[Any] | None) -> None:
    module = {"name": "m", "id": "x", "assets": [["a", "", "bin"], ["b", "", "bin"]]}
    folder = _folder(tmp_path, [], module)
    manifest = json.loads((folder / "manifest.json").read_text("utf-8"))
    if entries is None:
        del manifest["assets"]
    else:
        manifest["assets"] = entries
    (folder / "manifest.json").write_text(json.dumps(manifest), "utf-8")
    out = tmp_path / "o.risum"
    done = run_cli("pack", folder, "-o", out)
    assert done.returncode == 2 and "/assets: pack-assets-missing: " in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and not out.exists()
    (folder / "manifest.json").unlink()  # (the same folder without a manifest: refused too)
    done = run_cli("pack", folder, "-o", out)
    assert done.returncode == 2 and "pack-assets-missing" in done.stderr


def test_an_asset_without_data_still_packs_as_unpack_wrote_it(tmp_path: Path) -> None:
    """(Not a refusal: an entry with ``file: null`` is an asset the source had no frame for.)"""
    module = {"name": "m", "id": "x", "assets": [["a", "", "bin"], ["b", "", "bin"]]}
    folder = _folder(tmp_path, ["assets/a.bin"], module)
    manifest = json.loads((folder / "manifest.json").read_text("utf-8"))
    manifest["assets"].append({"file": None})
    (folder / "manifest.json").write_text(json.dumps(manifest), "utf-8")
    done = run_cli("pack", folder, "-o", tmp_path / "o.risum")
    assert done.returncode == 0, done.stderr


# ---- what is no regular file is named as every command names it ---------------------------

def _error(line: str) -> str:
    """``code: why`` of a one-line refusal (the path before it is each command's own)."""
    lines = line.strip().splitlines()
    assert len(lines) == 1, line
    return lines[0].split(": ", 2)[2]


@pytest.mark.parametrize("case", ["fifo", "dev-zero", "manifest-fifo", "bare-module-fifo"])
def test_pack_names_what_is_no_file_as_inspect_does(tmp_path: Path, case: str) -> None:
    folder = tmp_path / "f"
    folder.mkdir()
    (folder / "module.json").write_text('{"name": "m", "id": "x"}', "utf-8")
    src = read = tmp_path / "m.json"
    if case == "fifo":
        os.mkfifo(src)
    elif case == "dev-zero":
        src.symlink_to("/dev/zero")
    elif case == "manifest-fifo":
        src = read = folder / "manifest.json"
        os.mkfifo(src)
    else:
        (folder / "module.json").unlink()
        os.mkfifo(folder / "module.json")
        src, read = folder, folder / "module.json"
    done = run_cli("pack", src, "-o", tmp_path / "o.risum")
    seen = run_cli("inspect", read)
    assert done.returncode == seen.returncode == 2
    assert _error(done.stderr) == _error(seen.stderr), (done.stderr, seen.stderr)
    assert _error(done.stderr).startswith("not-a-file: is a ")


def test_a_bare_folders_module_json_linked_out_of_it_is_refused(tmp_path: Path) -> None:
    (tmp_path / "elsewhere.json").write_text('{"name": "m", "id": "x"}', "utf-8")
    folder = tmp_path / "f"
    folder.mkdir()
    (folder / "module.json").symlink_to(tmp_path / "elsewhere.json")
    out = tmp_path / "o.risum"
    done = run_cli("pack", folder, "-o", out)
    assert done.returncode == 2 and "module.json: outside-target: " in done.stderr, done.stderr
    assert not out.exists()


# ---- names long in bytes ------------------------------------------------------------------

PNG = b"\x89PNG\r\n\x1a\n"
LONG = ["\U0001D400" * 70, "\uac00" * 79 + ".txt", "\U0001D400" * 90 + ".mydata", "e\u0301" * 60]


def test_unpack_writes_assets_whose_names_are_long_in_bytes(tmp_path: Path) -> None:
    names = [*LONG, LONG[0], LONG[0].lower()]  # (duplicates: -2, -3)
    module = {"name": "m", "id": "x", "assets": [[n, "", ""] for n in names]}
    src = tmp_path / "m.risum"
    blobs = [PNG + bytes([i]) for i in range(len(names))]
    src.write_bytes(write_risum(module, blobs))
    out = tmp_path / "out"
    done = run_cli("unpack", src, "-o", out)
    assert done.returncode == 0, done.stderr
    manifest = json.loads((out / "manifest.json").read_text("utf-8"))
    files = [e["file"] for e in manifest["assets"]]
    assert [(out / f).read_bytes() for f in files] == blobs
    assert len({f.lower() for f in files}) == len(files)
    assert all(len(Path(f).name.encode()) <= 223 for f in files), files
    assert files[1].endswith(".txt.png") and files[2].endswith(".mydata.png")  # (kept whole)
    assert run_cli("pack", out, "-o", tmp_path / "re.risum").returncode == 0
    assert (tmp_path / "re.risum").read_bytes() == src.read_bytes()


def test_unpack_writes_card_members_whose_names_are_long_in_bytes(tmp_path: Path) -> None:
    card = tmp_path / "c.charx"
    with zipfile.ZipFile(card, "w") as z:
        z.writestr("card.json", json.dumps({"spec": "chara_card_v3", "spec_version": "3.0",
                                            "data": {"name": "C"}}))
        for i, name in enumerate(LONG):
            z.writestr(f"assets/{name}.png", PNG + bytes([i]))
    out = tmp_path / "out"
    done = run_cli("unpack", card, "-o", out)
    assert done.returncode == 0, done.stderr
    manifest = json.loads((out / "manifest.json").read_text("utf-8"))
    files = [e["file"] for e in manifest["card_assets"]]
    assert len(files) == len(LONG) and all(f.endswith(".png") for f in files), files
    assert [(out / f).read_bytes() for f in files] == [PNG + bytes([i]) for i in range(4)]


def test_a_write_the_system_refuses_is_unwritable(tmp_path: Path) -> None:
    """(The error said ``unreadable: the operating system refused the path`` and named the
    temp file.)"""
    with pytest.raises(RisuError) as got:
        _write_all(tmp_path, {"assets/" + "a" * 300: b"x"}, {}, False, "/nonexistent")
    assert got.value.code == "unwritable", got.value
    assert "a" * 300 in str(got.value) and ".risutools-tmp-" not in str(got.value)


# ---- the post id's rule, stated -----------------------------------------------------------

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("post_id, given", [("9" * 300, "300 digits"), ("12a", "'12a'")])
def test_a_bad_post_id_is_refused_with_its_rule(post_id: str, given: str) -> None:
    src = ROOT / "fixtures" / "sources" / "181550920_display-theme.risum"
    done = run_cli("project", src, "--post-id", post_id)
    assert done.returncode == 2
    assert f"post id must be 1 to 20 digits (0-9), not {given}" in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
