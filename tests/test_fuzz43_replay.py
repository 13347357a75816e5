"""Fuzzing pass 43 (4th) over replay outputs and output paths: each defect, as a class."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from harness import run_cli

ROOT = Path(__file__).parents[1]
DOC = ROOT / "fixtures" / "documents" / "seed-000-context-cutter.json"
FIXTURE = ROOT / "fixtures" / "replay" / "anchor-edit.yaml"
LONG = "a" * 300  # past every file system's 255-byte name


def _doc(tmp_path: Path) -> Path:
    doc = tmp_path / "doc.json"
    shutil.copyfile(DOC, doc)
    return doc


@pytest.mark.parametrize("command", ["run", "monitor"])
@pytest.mark.parametrize("name", ["r.md", "r.html", "r.MD", "r.Html"])
def test_a_report_path_a_rendering_would_overwrite_is_refused(tmp_path: Path, command: str,
                                                              name: str) -> None:
    # the .md/.html rendering is written next to the JSON under its own suffix: -o r.md
    # wrote the JSON report, then the Markdown over it (and --update recorded the JSON's hash)
    out = tmp_path / "out" / name
    done = run_cli("replay", command, _doc(tmp_path), "-x", FIXTURE, "-o", out)
    assert done.returncode == 2, done.stdout
    [line] = done.stderr.splitlines()
    assert "--output" in line and ".json" in line
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("sibling", [".md", ".html"])
@pytest.mark.parametrize("kind", ["fifo", "folder"])
def test_a_rendering_path_in_the_way_leaves_nothing_written(tmp_path: Path, sibling: str,
                                                             kind: str) -> None:
    # the JSON report was written, then the .md (a FIFO) refused: a report without renderings
    out = tmp_path / "r.json"
    blocker = out.with_suffix(sibling)
    if kind == "fifo":
        os.mkfifo(blocker)
    else:
        blocker.mkdir()
    done = run_cli("replay", "run", _doc(tmp_path), "-x", FIXTURE, "-o", out)
    assert done.returncode == 2
    [line] = done.stderr.splitlines()
    assert "not-a-file" in line and blocker.name in line
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["doc.json", blocker.name])


@pytest.mark.parametrize("args", [
    ("replay", "run", "{doc}", "-x", str(FIXTURE), "-o", "{tmp}/" + LONG + ".json"),
    ("replay", "run", "{doc}", "-x", str(FIXTURE), "-o", "{tmp}/" + LONG + "/r.json"),
    ("replay", "monitor", "{doc}", "-x", str(FIXTURE), "-o", "{tmp}/" + LONG + ".json"),
    ("project", str(ROOT / "fixtures" / "sources" / "174678332_context-cutter.risum"), "-o",
     "{tmp}/" + LONG + ".json"),
    ("ingest", str(ROOT / "fixtures" / "sources"), "-o", "{tmp}/" + LONG),
    ("pack", "{tmp}/" + LONG, "-o", "{tmp}/x.risum"),
    ("validate", "{tmp}/" + LONG + ".json"),
    ("verify", "{tmp}/" + LONG + ".json"),
])
def test_a_path_name_too_long_is_one_line(tmp_path: Path, args: tuple[str, ...]) -> None:
    # an OSError about the name itself (ENAMETOOLONG) from a stat was an internal error
    filled = [a.format(doc=_doc(tmp_path), tmp=tmp_path) for a in args]
    done = run_cli(*filled)
    assert done.returncode == 2, done.stdout
    [line] = done.stderr.splitlines()
    assert "internal error" not in line and "too long" in line.lower(), line
    assert LONG[:50] in line
