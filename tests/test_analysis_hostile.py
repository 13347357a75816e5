"""Hostile inputs for every analysis scanner, through ``risutools analyze`` in a child
process under a memory cap (issue 8): each finishes, one JSON answer, no traceback,
peak memory under 300 MB.  No timings are asserted (bench/bench_analysis.py has them)."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import ROOT
from hostile_analysis import CASES

from risutools.formats.risum import write_risum

# address space of the child (RLIMIT_AS): a hard stop for a runaway; the bound asserted is
# the peak resident size (the reader alone reserves more address space than it touches)
CAP = 600 * 1024 * 1024
PEAK_GOAL_MIB = 300

# runs the CLI, then prints the peak resident size (MiB) as the last line of stderr
_RUNNER = (
    "import resource, runpy, sys\n"
    "sys.argv = ['risutools', 'analyze', '--json', sys.argv[1]]\n"
    "try:\n"
    "    runpy.run_module('risutools', run_name='__main__')\n"
    "finally:\n"
    "    print('peak', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024,"
    " file=sys.stderr)\n"
)


def _cap() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (CAP, CAP))


def run_capped(path: Path) -> tuple[int, str, str, int]:
    run = subprocess.run([sys.executable, "-c", _RUNNER, str(path)], capture_output=True,
                         text=True, preexec_fn=_cap, cwd=ROOT,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    lines = run.stderr.strip().splitlines()
    peak = int(lines[-1].split()[1]) if lines and lines[-1].startswith("peak ") else -1
    return run.returncode, run.stdout, "\n".join(lines[:-1]), peak


@pytest.mark.parametrize("case", sorted(CASES))
def test_hostile_module_is_analysed_under_the_memory_cap(case: str, tmp_path: Path) -> None:
    build, size = CASES[case]
    # a .risum: the JSON-export reader has bounds of its own (the formats' work)
    path = tmp_path / f"{case}.risum"
    path.write_bytes(write_risum(build(size), []))
    code, out, err, peak = run_capped(path)
    assert "Traceback" not in err and "internal error" not in err, err[-2000:]
    assert code in (0, 1), err[-2000:]
    doc = json.loads(out)
    analysis = doc["modules"][0]["analysis"]
    assert analysis["counts"] is not None
    print(f"{case}: peak {peak} MiB")
    assert 0 < peak < PEAK_GOAL_MIB, f"peak {peak} MiB"
    if case == "toggles-many":
        assert analysis["counts"]["toggles"] == 10_000
        assert any(f["rule"] == "RA702" and "not read" in f["message"]
                   for f in analysis["findings"])
    if case == "lua-calls":
        assert any(s["key"] == "k" and s["read_count"] == size // 18
                   for s in analysis["state"])
    if case == "wrong-types":
        assert any(f["rule"] == "RA801" for f in analysis["findings"])


def test_the_cap_is_real() -> None:
    """The harness's cap stops a child that asks for more (so a pass means something)."""
    run = subprocess.run([sys.executable, "-c", "x = bytearray(700 * 2**20)"],
                         capture_output=True, text=True, preexec_fn=_cap)
    assert run.returncode != 0 and "MemoryError" in run.stderr
