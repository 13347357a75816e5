"""``bench/cutter_alone.py``, the cutter's side of goal 4's whole-process comparison
(bench/RESULTS.md, round 28), runs the cutter over every turn of a fixture read as
``replay run`` reads it, and nothing else."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from risutools.replay.fixture import load_fixture

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "bench" / "cutter_alone.py"


def _run(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True,
                          text=True, cwd=cwd, check=False)


@pytest.mark.parametrize("name", ["toggle.yaml", "anchor-edit.yaml", "budget-unreachable.yaml"])
def test_every_request_of_a_fixture(name: str) -> None:
    path = ROOT / "fixtures" / "replay" / name
    done = _run(str(path))
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) == load_fixture(path).turn_count() > 0


def test_an_ndjson_fixture_streamed(tmp_path: Path) -> None:
    """The NDJSON path (the one the bench times): the turns of a written file, each made."""
    out = tmp_path / "fx.ndjson"
    made = subprocess.run([sys.executable, "-m", "risutools", "replay", "synth", "--seed", "3",
                           "--messages", "300", "-o", str(out)], capture_output=True,
                          text=True, cwd=ROOT, check=False)
    assert made.returncode == 0, made.stderr
    done = _run(str(out))
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) == load_fixture(out).turn_count() > 100


def test_usage_and_a_fixture_refused() -> None:
    done = _run()
    assert done.returncode == 2
    assert "usage: cutter_alone.py FIXTURE" in done.stderr
    done = _run(str(ROOT / "fixtures" / "replay" / "small.json"))  # (a configuration)
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1
    assert "bad-fixture: unknown top-level key 'max_context'" in done.stderr
