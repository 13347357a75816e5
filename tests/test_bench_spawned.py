"""``bench/workload.py``'s ``spawned``: a measured process's CPU, exit code and peak are its
own, not those of the bench that started it (a child's peak RSS counts its starting
image's; the helper keeps that small)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from workload import spawned  # noqa: E402


def test_a_childs_peak_is_its_own_after_the_parent_grew() -> None:
    held = bytearray(300 << 20)
    held[::4096] = b"x" * len(held[::4096])  # (300 MiB resident in this process)
    cpu, wall, peak, code = spawned([sys.executable, "-c", "pass"])
    assert code == 0 and 0 < cpu <= wall + 1 and peak < 100, (cpu, wall, peak)
    grown = spawned([sys.executable, "-c", "b = bytearray(120 << 20); b[::4096] = "
                     "b'x' * len(b[::4096]); raise SystemExit(3)"])
    assert grown[3] == 3 and 120 < grown[2] < 250, grown
    del held
