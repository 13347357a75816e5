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
from harness import run_capped as harness_run_capped
from hostile_analysis import CASES

from risutools.formats.risum import write_risum

# address space of the child (RLIMIT_AS): a hard stop for a runaway; the bound asserted is
# the peak resident size (the reader alone reserves more address space than it touches)
CAP = 600 * 1024 * 1024
PEAK_GOAL_MIB = 300

def _cap() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (CAP, CAP))


def run_capped(path: Path) -> tuple[int, str, str, int]:
    return harness_run_capped(["analyze", "--json", str(path)], CAP)


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
