"""What a team runs over a catalog it has been curating, read only (issue 23, round 23).

    PYTHONPATH=. python bench/bench_mature.py [N]
    BENCH_BEFORE=/path/to/old/checkout PYTHONPATH=. python bench/bench_mature.py [N]

The workload is ``bench/workload.py``'s mature catalog of N documents (default 10,000, one
JSON file each: every document moved to ``pending_human_review`` with a record and a
transition line, every 50th promoted and active, every 4th with an ``approve`` record
waiting: 10,600 lines, 12,900 records; ``bench_promote.py`` times the commands that move
a component).  Each command runs as a whole process: ``review -f json -j 1`` (every
document, the log's chains, the approvals and the board), ``validate -f json`` (the
contract rules and MC305's chains), and ``packet ID`` in both lanes for one component
(a reviewer's packet: the catalog's relations, the component's records).  Prints the
median CPU (user + system, the kernel's accounting) and peak RSS of each; with
``BENCH_BEFORE``, the old checkout and this one in turn (A/B pairs) and the median ratio.
Bytecode is written for each tree first, as an installed package has it.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import workload  # noqa: E402

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
PACKET_ID = "module.risu.300004.emotion-icon-pack-4"  # (pending, with its record)

_MAKE = ("import sys, workload\n"
         "print(workload.mature_catalog(int(sys.argv[1])))\n")


def commands(cat: Path, out: Path) -> list[tuple[str, list[str]]]:
    """(label, arguments) of each command; what they write goes under ``out``."""
    return [
        ("review -j 1", ["review", str(cat), "-f", "json", "-o", str(out / "review.json"),
                         "-j", "1"]),
        ("validate", ["validate", str(cat), "-f", "json", "-o", str(out / "validate.json")]),
        ("packet ID, light lane", ["packet", PACKET_ID, "--lane", "light", "-o",
                                   str(out / "packets"), "--catalog", str(cat)]),
        ("packet ID, full lane", ["packet", PACKET_ID, "--lane", "full", "-o",
                                  str(out / "packets"), "--catalog", str(cat)]),
    ]


def _cli(tree: Path, args: list[str]) -> list[str]:
    return ["env", f"PYTHONPATH={tree}", sys.executable, "-m", "risutools", *args]


def main(argv: list[str]) -> None:
    n = int(argv[0]) if argv else 10_000
    trees = {"after": workload.ROOT}
    if os.environ.get("BENCH_BEFORE"):
        trees = {"before": Path(os.environ["BENCH_BEFORE"]).resolve(), "after": workload.ROOT}
    for tree in trees.values():
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "risutools")],
                       check=True)
    # the workload made in a child (the kernel's peak of a forked child counts what it
    # inherited)
    made = subprocess.run([sys.executable, "-c", _MAKE, str(n)], cwd=HERE, check=True,
                          capture_output=True, text=True).stdout.split()
    workload.BASE.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=workload.BASE) as tmp:
        cat = Path(tmp) / "mature"
        shutil.copytree(made[0], cat, copy_function=os.link)
        print(f"# {n} documents (mature), {ROUNDS} rounds, {workload.load_line()}")
        for label, args in commands(cat, Path(tmp)):
            if len(trees) == 2:  # (from a neutral folder: ``-m`` puts it first on the path)
                r = workload.side_by_side(_cli(trees["after"], args),
                                          _cli(trees["before"], args), ROUNDS, cwd=Path(tmp))
                print(f"{label:22} before {r['b_cpu']:.3f} s {r['b_peak']:.0f} MiB, after "
                      f"{r['a_cpu']:.3f} s {r['a_peak']:.0f} MiB: {r['ratio']:.2f}x "
                      f"({r['ratio_min']:.2f}-{r['ratio_max']:.2f}), exit {r['b_rc']}/"
                      f"{r['a_rc']}", flush=True)
                continue
            workload.run_process(_cli(trees["after"], args), Path(tmp))
            runs = [workload.run_process(_cli(trees["after"], args), Path(tmp))
                    for _ in range(ROUNDS)]
            print(f"{label:22} {statistics.median(x[0] for x in runs):.3f} s CPU, "
                  f"{statistics.median(x[2] for x in runs):.0f} MiB, exit {runs[-1][3]}",
                  flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
