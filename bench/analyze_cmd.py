"""The whole ``risutools analyze FILE`` command and ``analyze()`` alone, best of N.

    PYTHONPATH=. python bench/analyze_cmd.py [FILE]
    BENCH_BEFORE=/path/to/old/checkout PYTHONPATH=. python bench/analyze_cmd.py [FILE]

FILE defaults to the HellTrain module JSON of the real corpus (issue 11's figure: under
0.3 s). With ``BENCH_BEFORE``, the old checkout and this one are run in turn (A/B, same
load); each side is imported from its own tree (``PYTHONPATH``, from a neutral folder), with
bytecode written as an installed package has it. Prints the best wall time and CPU time of
the command (interpreter start included) and the best CPU time of ``analyze()`` in one
process, and the load average.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
_CORPUS_FILE = "shared/corpus/real/json/helltrain-runtime.module.json"
# ``../shared`` from the repository (a worktree one level deeper finds it one level up)
DEFAULT = next((p / _CORPUS_FILE for p in (HERE.parent, HERE.parent.parent)
                if (p / _CORPUS_FILE).is_file()), HERE.parent / _CORPUS_FILE)
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "5"))

_IN_PROCESS = """
import sys, time
from risutools.formats import read_path
from risutools.analysis.analyzer import analyze
mods = read_path(sys.argv[1])
m = mods[0] if isinstance(mods, list) else mods
best = 9.0
for _ in range(int(sys.argv[2])):
    t = time.process_time()
    analyze(m)
    best = min(best, time.process_time() - t)
print(best)
"""


def _env(tree: Path) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(tree))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _command(tree: Path, file: Path, cwd: str) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "risutools", "analyze", str(file)], cwd=cwd,
                   env=_env(tree), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   check=False)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    file = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT
    if not file.is_file():
        print(f"analyze_cmd: {file} not found; skipped")
        return
    trees = {"this tree": HERE}
    if os.environ.get("BENCH_BEFORE"):
        trees = {"before": Path(os.environ["BENCH_BEFORE"]), "after": HERE}
    with tempfile.TemporaryDirectory() as cwd:
        for tree in trees.values():  # write bytecode once, as an installed package has it
            _command(tree, file, cwd)
        best: dict[str, list[float]] = {k: [9.0, 9.0] for k in trees}
        for _ in range(ROUNDS):
            for name, tree in trees.items():
                wall, cpu = _command(tree, file, cwd)
                best[name] = [min(best[name][0], wall), min(best[name][1], cpu)]
        for name, tree in trees.items():
            out = subprocess.run([sys.executable, "-c", _IN_PROCESS, str(file), str(ROUNDS)],
                                 cwd=cwd, env=_env(tree), capture_output=True, text=True,
                                 check=False)
            analyse = out.stdout.strip() or "failed"
            print(f"{name}: command wall {best[name][0]:.3f} s, CPU {best[name][1]:.3f} s "
                  f"(best of {ROUNDS}); analyze() CPU {float(analyse):.3f} s"
                  if analyse != "failed" else f"{name}: analyze() failed: {out.stderr[-300:]}")
    print("load average: " + ", ".join(f"{x:.2f}" for x in os.getloadavg()))


if __name__ == "__main__":
    main()
