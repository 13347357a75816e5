"""The tenth pass over what a command writes (stop 64): an output may never be a file the
command reads, however it is named.

- ``-o nosuch/../doc.json``: the check stat-ed the path as written, which fails while
  ``nosuch/`` is not there; the writer then made the folder and the path landed on the
  input, replaced by the report (``validate``, ``replay run``, ``replay monitor``, every
  command).  Now an output is taken where it lands.
- ``replay run`` / ``replay monitor`` write ``X.md`` and ``X.html`` next to ``-o X.json``;
  only ``X.json`` was checked, so a fixture or a ``--config`` named ``X.md`` was replaced
  by the Markdown report.
- ``verify -o`` inside the source store (``--sources``, or the configuration's
  ``sources:``) replaced a file of it that is not a Risu file: every file of a store may be
  looked up and hashed.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from harness import ROOT, run_cli

SEED = ROOT / "fixtures" / "documents" / "seed-000-context-cutter.json"
FX = ROOT / "fixtures" / "replay" / "anchor-edit.yaml"


@pytest.fixture
def work(tmp_path: Path) -> Path:
    shutil.copy(SEED, tmp_path / "doc.json")
    shutil.copy(FX, tmp_path / "fx.yaml")
    return tmp_path


def _refused(r: object, name: str) -> None:
    assert r.returncode == 2, (r.stdout, r.stderr)  # type: ignore[attr-defined]
    assert "is also read by the command" in r.stderr  # type: ignore[attr-defined]


@pytest.mark.parametrize("args", [
    ("validate", "-f", "sarif", "-o", "nosuch/../doc.json", "doc.json"),
    ("validate", "-o", "a/b/../../doc.json", "doc.json"),
    ("replay", "run", "doc.json", "-x", "fx.yaml", "-o", "nosuch/../doc.json"),
    ("replay", "monitor", "doc.json", "-x", "fx.yaml", "-o", "q/../fx.yaml"),
    ("verify", "-o", "x/../doc.json", "doc.json"),
])
def test_an_output_through_a_folder_not_there_yet_is_where_it_lands(work: Path,
                                                                  args: tuple[str, ...]) -> None:
    before = {p.name: p.read_bytes() for p in work.iterdir()}
    _refused(run_cli(*args, cwd=work), args[-1])
    assert {p.name: p.read_bytes() for p in work.iterdir()} == before  # (no folder made)


@pytest.mark.parametrize("args", [
    ("replay", "run", "doc.json", "-x", "rep.md", "-o", "rep.json"),
    ("replay", "monitor", "-x", "mon.html", "-o", "mon.json"),
    ("replay", "run", "doc.json", "-x", "fx.yaml", "--config", "cfg.md", "-o", "cfg.json"),
])
def test_a_replay_report_rendering_never_replaces_an_input(work: Path,
                                                          args: tuple[str, ...]) -> None:
    shutil.copy(FX, work / "rep.md")
    shutil.copy(FX, work / "mon.html")
    (work / "cfg.md").write_text('{"max_context": 100}\n', "utf-8")
    before = {p.name: p.read_bytes() for p in work.iterdir()}
    _refused(run_cli(*args, cwd=work), "")
    assert {p.name: p.read_bytes() for p in work.iterdir()} == before


def test_the_renderings_are_written_when_they_replace_nothing(work: Path) -> None:
    r = run_cli("replay", "run", "doc.json", "-x", "fx.yaml", "-o", "out/r.json", cwd=work)
    assert r.returncode in (0, 1), r.stderr
    assert sorted(p.name for p in (work / "out").iterdir()) == ["r.html", "r.json", "r.md"]


@pytest.mark.parametrize("configured", [False, True])
def test_an_output_inside_the_source_store_is_refused(work: Path, configured: bool) -> None:
    store = work / "store"
    store.mkdir()
    (store / "readme.txt").write_text("hello\n", "utf-8")
    if configured:
        (work / ".risutools.yaml").write_text("sources: store\n", "utf-8")
        args: tuple[str, ...] = ()
    else:
        args = ("--sources", "store")
    r = run_cli("verify", "-f", "json", "-o", "store/readme.txt", *args, "doc.json", cwd=work)
    _refused(r, "")
    assert (store / "readme.txt").read_text("utf-8") == "hello\n"
