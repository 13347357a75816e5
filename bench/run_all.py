"""Run every ``bench/bench_*.py`` in turn; each prints its own figures.

Usage: ``make bench`` (or ``python bench/run_all.py [NAME ...]`` for some).
The latest figures are recorded by hand in ``bench/RESULTS.md``.
"""

from __future__ import annotations

import platform
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv: list[str]) -> int:
    scripts = sorted(HERE.glob("bench_*.py"))
    if argv:
        scripts = [s for s in scripts if any(a in s.name for a in argv)]
    print(f"# machine: {platform.platform()}, python {platform.python_version()}, "
          f"{platform.processor() or platform.machine()}")
    failed = 0
    for script in scripts:
        print(f"\n## {script.name}", flush=True)
        rc = subprocess.call([sys.executable, str(script)])
        if rc:
            print(f"!! {script.name} exited {rc}")
            failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
