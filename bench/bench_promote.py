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
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import workload  # noqa: E402

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "5"))
FRESH_ID = "module.risu.300005.mood-tracker-5"
WAITING_ID = "module.risu.300001.galactic-frontier-lore-1"  # (an approve record waiting)
PENDING_ID = "module.risu.300002.chat-display-theme-2"


def commands(fresh: Path, mature: Path) -> list[tuple[str, list[str]]]:
    """(label, arguments) of each command, by id and by path."""
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
            out.append((label, [a.replace("{c}", named) for a in args]
                        + ["--catalog", str(cat)]))
    return out


_MAKE = ("import sys, workload\n"
         "n = int(sys.argv[1])\n"
         "print(workload.projected_catalog(n), workload.mature_catalog(n))\n")


def main(argv: list[str]) -> None:
    n = int(argv[0]) if argv else 10_000
    trees = workload.trees_of_run()
    with workload.linked_workloads(_MAKE, n, ("fresh", "mature")) as (tmp, (fresh, mature)):
        print(f"# {n} documents, {ROUNDS} rounds, {workload.load_line()}")
        workload.time_commands(trees, commands(fresh, mature), tmp, ROUNDS)


if __name__ == "__main__":
    main(sys.argv[1:])
