"""``promote`` and ``approve`` on a catalog of 10,000 documents (issue 23, round 22).

    PYTHONPATH=. python bench/bench_promote.py [N]
    BENCH_BEFORE=/path/to/old/checkout PYTHONPATH=. python bench/bench_promote.py [N]

The workloads are ``bench/workload.py``'s: the projected catalog of N documents (default
10,000; fresh candidates, one JSON file each) and the mature one (the same documents moved
to ``pending_human_review`` with a record and a transition line each, every 50th promoted
and active, every 4th with an ``approve`` record waiting: 10,600 lines, 12,900 records).
Each command runs as a whole process, the component named by its component_id and by its
file's path: ``promote ... --to pending_human_review`` (fresh; refused by the approval
gate, nothing written), ``approve ... --action request_review`` (fresh), ``promote ... --to
approved`` (mature; the conflict gate reads the live components; refused by the contract
and digest gates, nothing written), ``approve ... --action approve`` (mature) and
``activate`` (mature; refused). ``approve`` writes a record a run: each workload is used
through a copy whose files are hard links (a command replaces a file, never writes into
one). Prints the median CPU (user + system, the kernel's accounting) and peak RSS of each;
with ``BENCH_BEFORE``, the old checkout and this one in turn (A/B pairs) and the median
ratio. Bytecode is written for each tree first, as an installed package has it.
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

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "5"))
FRESH_ID = "module.risu.300005.mood-tracker-5"
WAITING_ID = "module.risu.300001.galactic-frontier-lore-1"  # (an approve record waiting)
PENDING_ID = "module.risu.300002.chat-display-theme-2"


def commands(fresh: Path, mature: Path) -> list[tuple[str, Path, list[str]]]:
    """(label, catalog, arguments) of each command, by id and by path."""
    out = []
    for cat, cid, args in (
            (fresh, FRESH_ID, ["promote", "{c}", "--to", "pending_human_review"]),
            (fresh, FRESH_ID, ["approve", "{c}", "--action", "request_review",
                               "--reviewer", "kim"]),
            (mature, WAITING_ID, ["promote", "{c}", "--to", "approved"]),
            (mature, PENDING_ID, ["approve", "{c}", "--action", "approve", "--reviewer", "kim"]),
            (mature, PENDING_ID, ["activate", "{c}"])):
        for how, named in (("id", cid), ("path", str(cat / f"{cid}.json"))):
            label = f"{'fresh' if cat == fresh else 'mature'} {args[0]} by {how}"
            out.append((label, cat, [a.replace("{c}", named) for a in args]
                        + ["--catalog", str(cat)]))
    return out


_MAKE = ("import sys, workload\n"
         "n = int(sys.argv[1])\n"
         "print(workload.projected_catalog(n), workload.mature_catalog(n))\n")


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
    # the workloads made in a child: a child of this process would start with its memory
    # (the kernel's peak of a forked child counts what it inherited)
    made = subprocess.run([sys.executable, "-c", _MAKE, str(n)], cwd=HERE, check=True,
                          capture_output=True, text=True).stdout.split()
    workload.BASE.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=workload.BASE) as tmp:
        fresh, mature = Path(tmp) / "fresh", Path(tmp) / "mature"
        shutil.copytree(made[0], fresh, copy_function=os.link)
        shutil.copytree(made[1], mature, copy_function=os.link)
        print(f"# {n} documents, {ROUNDS} rounds, {workload.load_line()}")
        for label, _cat, args in commands(fresh, mature):
            if len(trees) == 2:  # (from a neutral folder: ``-m`` puts it first on the path)
                r = workload.side_by_side(_cli(trees["after"], args),
                                          _cli(trees["before"], args), ROUNDS, cwd=Path(tmp))
                print(f"{label:24} before {r['b_cpu']:.3f} s {r['b_peak']:.0f} MiB, after "
                      f"{r['a_cpu']:.3f} s {r['a_peak']:.0f} MiB: {r['ratio']:.2f}x "
                      f"({r['ratio_min']:.2f}-{r['ratio_max']:.2f}), exit {r['b_rc']}/"
                      f"{r['a_rc']}")
                continue
            workload.run_process(_cli(trees["after"], args), Path(tmp))
            runs = [workload.run_process(_cli(trees["after"], args), Path(tmp))
                    for _ in range(ROUNDS)]
            print(f"{label:24} {statistics.median(x[0] for x in runs):.3f} s CPU, "
                  f"{statistics.median(x[2] for x in runs):.0f} MiB, exit {runs[-1][3]}")


if __name__ == "__main__":
    main(sys.argv[1:])
