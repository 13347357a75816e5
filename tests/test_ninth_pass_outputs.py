"""Findings of the ninth pass on outputs (stop 63), each a test that fails before its fix:

* ``replay run -o``, ``replay monitor -o`` and ``replay synth -o`` replaced a catalog's
  ``transitions.ndjson``, another component's document, its notes or its configuration
  with a report or a fixture (exit 0), where ``review -o`` and ``ingest --report`` refuse
  them: the replay commands read the catalog the document (or the output) is in, asked
  before they run (they write as they run), and a report written again in ``replays/``
  stays allowed;
* ``pack DIR -o DIR/assets/a.png --force`` (or ``-o DIR/module.json``) replaced a file it
  packs with the ``.risum``: any file inside the folder packed is one it may read;
* ``replay synth --name ../../x`` was refused as ``--output`` with "write fewer messages":
  the option at fault is ``--name``, and no size advice.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from harness import ROOT, SEED, run_cli

FIXTURE = ROOT / "fixtures" / "replay" / "anchor-edit.yaml"
MONITOR = ROOT / "fixtures" / "replay" / "monitor.yaml"


@pytest.fixture
def cat(tmp_path: Path) -> Path:
    out = tmp_path / "cat"
    (out / "notes").mkdir(parents=True)
    shutil.copy(SEED, out / "seed.json")
    shutil.copy(SEED, out / "other.json")
    (out / "transitions.ndjson").write_text("", "utf-8")
    (out / "notes" / "x.yaml").write_text("slug: x\n", "utf-8")
    (out / ".risutools.yaml").write_text("rules: {}\n", "utf-8")
    return out


TARGETS = ["transitions.ndjson", "other.json", "notes/x.yaml", ".risutools.yaml"]


def _same(cat: Path, before: dict[str, bytes]) -> None:
    assert {t: (cat / t).read_bytes() for t in TARGETS} == before


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("how", ["run", "run --update", "monitor", "synth"])
def test_a_replay_output_never_replaces_a_file_of_the_catalog(
        cat: Path, target: str, how: str) -> None:
    before = {t: (cat / t).read_bytes() for t in TARGETS}
    if how.startswith("run"):
        args = ["replay", "run", "seed.json", "-x", FIXTURE, "-o", target]
        args += ["--update"] if how.endswith("update") else []
    elif how == "monitor":
        args = ["replay", "monitor", "seed.json", "-x", MONITOR, "-o", target]
    else:
        args = ["replay", "synth", "--seed", "1", "--messages", "5", "-o", target]
    done = run_cli(*args, cwd=cat)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "is also read by the command" in done.stderr
    _same(cat, before)


def test_a_replay_report_is_written_again_in_replays(cat: Path) -> None:
    first = run_cli("replay", "run", "seed.json", "-x", FIXTURE, cwd=cat)
    assert first.returncode == 0, first.stderr
    [report] = sorted((cat / "replays").glob("*.json"))
    again = run_cli("replay", "run", "seed.json", "-x", FIXTURE, "-o",
                    f"replays/{report.name}", cwd=cat)
    assert again.returncode == 0, again.stderr


def test_a_fixture_is_written_again(cat: Path) -> None:
    for _ in range(2):
        done = run_cli("replay", "synth", "--seed", "1", "--messages", "5", "-o", "fx.yaml",
                       cwd=cat)
        assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("target", ["module.json", "manifest.json", "assets/any.bin"])
def test_pack_never_replaces_a_file_of_the_folder_it_packs(tmp_path: Path,
                                                            target: str) -> None:
    src = ROOT / "fixtures" / "sources" / "183120336_asset-pack.risum"
    assert run_cli("unpack", src, "-o", tmp_path / "d").returncode == 0
    d = tmp_path / "d"
    out = d / target
    if not out.exists():
        out.write_bytes(b"not packed")
    before = {p: p.read_bytes() for p in d.rglob("*") if p.is_file()}
    done = run_cli("pack", d, "-o", out, "--force")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "is also read by the command" in done.stderr
    assert {p: p.read_bytes() for p in d.rglob("*") if p.is_file()} == before


def test_synth_names_the_name_option_at_fault(tmp_path: Path) -> None:
    done = run_cli("replay", "synth", "--seed", "1", "--messages", "3", "--name", "../../x",
                   "-o", tmp_path / "a.ndjson")
    assert done.returncode == 2 and "--name" in done.stderr, done.stderr
    assert "fewer messages" not in done.stderr and not (tmp_path / "a.ndjson").exists()


def test_a_replay_report_left_beside_the_document_is_written_again(cat: Path) -> None:
    """A report an earlier run wrote in the catalog's folder (read there as a document by a
    folder walk) is written again by the replay that wrote it."""
    for _ in range(2):
        done = run_cli("replay", "run", "seed.json", "-x", FIXTURE, "-o", "r.json", cwd=cat)
        assert done.returncode == 0, done.stderr
