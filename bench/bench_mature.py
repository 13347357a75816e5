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
import sys
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


def main(argv: list[str]) -> None:
    n = int(argv[0]) if argv else 10_000
    trees = workload.trees_of_run()
    with workload.linked_workloads(_MAKE, n, ("mature",)) as (tmp, (cat,)):
        print(f"# {n} documents (mature), {ROUNDS} rounds, {workload.load_line()}")
        workload.time_commands(trees, commands(cat, tmp), tmp, ROUNDS)


if __name__ == "__main__":
    main(sys.argv[1:])
