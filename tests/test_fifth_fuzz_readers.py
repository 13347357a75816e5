"""Findings of a fifth fuzzing pass over the readers (``analyze``, ``project``, ``inspect``,
``unpack``, ``hash``), each a test that fails before its fix:

* a module name of 20,000 ``-`` took 12 s to project: the version pattern, tried at every
  offset of a run of separators, read the whole run each time (now linear, and the same
  matches as the pattern: a differential test);
* 20,000 assets of one name took 41 s to unpack: each searched its ``-N`` suffix from 2;
* ``hash`` of an NDJSON file held every document: 58 MB of documents 1 GB, 9.6 MB of bad
  lines 700 MB (an NDJSON file's bad lines were one part, whatever their number);
* a full standard output (``> /dev/full``) was an internal error;
* ``analyze -o m.risum m.risum`` replaced the module by its report;
* a Lua script of nothing but ``load(`` fed every token to 64 open argument readers.
(A pattern padded past the regex check's bounds is now RA205, a warning: its cases.)
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from harness import ROOT, run_capped, run_cli

from risutools.analysis import luaargs
from risutools.analysis.lua import scan_lua
from risutools.formats.risum import write_risum
from risutools.formats.unpack import _Names
from risutools.projection import naming

MODULE = ROOT / "fixtures" / "sources" / "174678332_context-cutter.risum"


# ---- the version in a name, in linear time -----------------------------------------------

def _by_pattern(name: str) -> list[tuple[int, int, tuple[str | None, ...]]]:
    return [(m.start(), m.end(), m.groups()) for m in naming._VERSION.finditer(name)]


def _by_walk(name: str) -> list[tuple[int, int, tuple[str | None, ...]]]:
    return [(s, e, m.groups()) for s, e, m in naming._versions(name)]


def test_the_versions_found_are_the_patterns() -> None:
    alphabet = list(" \t\u3000-_([【】)]vV.0123456789aZ_선")
    rng = random.Random(23)
    for _ in range(30_000):
        name = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 16)))
        assert _by_walk(name) == _by_pattern(name), repr(name)
    for name in ["Board 3.4.0", "v0.3", "선택지1.5", "abc1.2", "x2.0.1.3", "【v2】", "-_ v1.2.3)",
                 "(1.2) and [v3]", "a_v1.2", "1.2.3.4"]:
        assert _by_walk(name) == _by_pattern(name), name


@pytest.mark.parametrize("run", ["-", " ", "_", "(", "[", "【", "\t"])
def test_a_long_run_of_separators_is_read_once(run: str) -> None:
    """(200,000 characters: hours for the pattern alone; the test's timeout catches it)"""
    short = naming._VERSION.search(run * 5 + "v1.2")  # (what the pattern says of a few)
    rest, version = naming.split_version(run * 200_000 + "v1.2")
    assert version == ("1.2.0" if short else None)  # ("_v1.2": "_" is a word's: none)
    assert rest == ("" if short else " ".join((run * 200_000 + "v1.2").split()))
    assert naming.split_version(run * 200_000) == (run * 200_000, None)


# ---- one asset name many times ---------------------------------------------------------

def test_names_of_one_asset_many_times_take_each_suffix_once() -> None:
    names = _Names()
    got = [names.take("x", "png") for _ in range(50_000)]
    assert got[:3] == ["x.png", "x-2.png", "x-3.png"] and got[-1] == "x-50000.png"
    assert len(set(got)) == len(got)
    assert names.take("X", "PNG") == "X-50001.PNG"  # (case folded: one name)
    assert names.take("x-2", "png") == "x-2-2.png"  # (a name that is a suffixed one)


def test_unpack_of_many_assets_of_one_name(tmp_path: Path) -> None:
    module = {"name": "m", "id": "m", "description": "", "assets": [["x", "", "png"]] * 3000}
    src = tmp_path / "m.risum"
    src.write_bytes(write_risum(module, [b"\x89PNG" + bytes([i % 256]) for i in range(3000)]))
    done = run_cli("unpack", src, "-o", tmp_path / "out")
    assert done.returncode == 0, done.stderr
    files = sorted(p.name for p in (tmp_path / "out" / "assets").iterdir())
    assert len(files) == 3000 and "x-3000.png" in files


# ---- hash: one part of a file at a time --------------------------------------------------

@pytest.mark.parametrize("line, count", [
    ('{"contract": "matrix-component-v1", "component_id": "m.r.%d", "title": "%s"}', 60_000),
    ('{"a":', 200_000),
])
def test_hash_of_a_long_ndjson_file_is_flat(tmp_path: Path, line: str, count: int) -> None:
    path = tmp_path / "c.ndjson"
    with path.open("w", encoding="utf-8") as f:
        for i in range(count):
            f.write((line % (i, "x" * 150) if "%" in line else line) + "\n")
    code, out, err, peak = run_capped(["hash", str(path)], 1 << 30, cwd=tmp_path)
    assert code in (0, 2), err[-300:]
    lines = out.splitlines() if "%" in line else err.splitlines()
    assert len(lines) == count, (len(lines), err[-300:])
    # before: about 270 bytes a bad line held (54 MB here), and a document each
    assert 0 < peak < 60, peak


# ---- a full standard output --------------------------------------------------------------

@pytest.mark.parametrize("args", [
    ["hash", str(ROOT / "fixtures" / "contract" / "good" / "components.ndjson")],
    ["analyze", str(MODULE)], ["inspect", str(MODULE)], ["project", str(MODULE)],
    ["--help"], ["--version"], ["validate", "--help"],
])
def test_a_full_standard_output_is_one_line(tmp_path: Path, args: list[str]) -> None:
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full here")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("RISUTOOLS_DEBUG", None)
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", "risutools", *args], stdout=full,
                              stderr=subprocess.PIPE, text=True, cwd=tmp_path, env=env,
                              timeout=120)
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "risutools: standard output: unwritable: cannot write: No space left on device"]


# ---- an output that is an input ---------------------------------------------------------

@pytest.mark.parametrize("args", [
    ["analyze", "-o", "m.risum", "m.risum"],
    ["analyze", "-o", "./m.risum", "other.risum", "m.risum"],
    ["validate", "doc.json", "-o", "doc.json"],
    ["verify", "doc.json", "-o", "doc.json"],
    ["replay", "run", "doc.json", "-x", str(ROOT / "fixtures" / "replay" / "anchor-edit.yaml"),
     "-o", "doc.json"],
    ["project", "m.risum", "-o", "m.risum", "--force"],
    ["analyze", "doc.json", "-o", "link.json"],
])
def test_an_output_that_is_an_input_is_refused(tmp_path: Path, args: list[str]) -> None:
    (tmp_path / "m.risum").write_bytes(MODULE.read_bytes())
    (tmp_path / "other.risum").write_bytes(MODULE.read_bytes())
    seed = ROOT / "fixtures" / "documents" / "seed-000-context-cutter.json"
    (tmp_path / "doc.json").write_bytes(seed.read_bytes())
    (tmp_path / "link.json").symlink_to(tmp_path / "doc.json")
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
    done = run_cli(*args, cwd=tmp_path)
    assert done.returncode == 2, done.stdout[-300:] + done.stderr
    assert "is also read by the command" in done.stderr, done.stderr
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()} == before


# ---- Lua: a few calls' arguments read at once ---------------------------------------------

def test_a_token_goes_to_a_few_argument_readers(monkeypatch: pytest.MonkeyPatch) -> None:
    fed = [0]
    real = luaargs.Collector.feed

    def counted(self: luaargs.Collector, *args: object) -> bool:
        fed[0] += 1
        return real(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(luaargs.Collector, "feed", counted)
    scan_lua("load(" * 5000)
    assert fed[0] <= 8 * 2 * 5000, fed[0]  # (two tokens a call: its name, its "(")


def test_nested_calls_still_have_their_literals() -> None:
    scan = scan_lua('setChatVar("a", getChatVar("b"))\nload(request("http://x", "y"))')
    got = {c.name: [a.literal for a in c.args] for c in scan.calls}
    assert got["getChatVar"] == ["b"] and got["request"][:2] == ["http://x", "y"]
    assert json.dumps(got["setChatVar"][:1]) == '["a"]'


@pytest.mark.parametrize("args, refused", [
    (["review", "cat", "-o", "cat/doc.json"], True),  # (a document of the folder read)
    (["validate", "cat", "-o", "cat/doc.json"], True),
    (["verify", "cat", "-o", "cat/sub/m.risum"], True),  # (a Risu file in it)
    (["review", "cat", "-q", "-o", "cat/report.json"], False),  # (an earlier run's report)
    (["validate", "cat", "-f", "json", "-o", "cat/new.json"], False),  # (not there yet)
])
def test_an_output_inside_a_folder_read_is_refused_when_it_is_read(
        tmp_path: Path, args: list[str], refused: bool) -> None:
    cat = tmp_path / "cat"
    (cat / "sub").mkdir(parents=True)
    seed = ROOT / "fixtures" / "documents" / "seed-000-context-cutter.json"
    (cat / "doc.json").write_bytes(seed.read_bytes())
    (cat / "sub" / "m.risum").write_bytes(MODULE.read_bytes())
    (cat / "report.json").write_text('{"review": "an earlier run"}\n', "utf-8")
    before = {p: p.read_bytes() for p in cat.rglob("*") if p.is_file()}
    done = run_cli(*args, cwd=tmp_path)
    if refused:
        assert done.returncode == 2 and "is also read by the command" in done.stderr
        assert {p: p.read_bytes() for p in cat.rglob("*") if p.is_file()} == before
    else:
        assert "is also read by the command" not in done.stderr, done.stderr
        assert done.returncode in (0, 1), done.stderr
