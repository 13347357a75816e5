"""``bench/workload.py``'s ``spawned``: a measured process's CPU, exit code and peak are its
own, not those of the bench that started it (a child's peak RSS counts its starting
image's; the helper keeps that small)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# a bench that grew to 300 MiB, then starts ``python -c pass`` itself and through spawned
# (run in a child of its own: the test process's peak stays what it was)
_GROWN_BENCH = """
import json, os, subprocess, sys
sys.path.insert(0, sys.argv[1])
from workload import spawned
held = bytearray(300 << 20)
held[::4096] = b"x" * len(held[::4096])
proc = subprocess.Popen([sys.executable, "-c", "pass"])
direct = os.wait4(proc.pid, 0)[2].ru_maxrss / 1024
quiet = spawned([sys.executable, "-c", "pass"])
grown = spawned([sys.executable, "-c", "b = bytearray(120 << 20); "
                 "b[::4096] = b'x' * len(b[::4096]); raise SystemExit(3)"])
print(json.dumps([direct, quiet, grown]))
"""


def test_a_childs_peak_is_its_own_after_the_bench_grew() -> None:
    done = subprocess.run([sys.executable, "-c", _GROWN_BENCH, str(ROOT / "bench")],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    direct, quiet, grown = json.loads(done.stdout)
    assert direct > 300  # (started by the grown bench itself: its peak counted in)
    cpu, wall, peak, code = quiet
    assert code == 0 and 0 < cpu <= wall + 1 and peak < 100, quiet
    assert grown[3] == 3 and 120 < grown[2] < 250, grown
