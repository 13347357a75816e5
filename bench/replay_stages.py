"""``replay run``'s steps one at a time, each in its own process, to be counted (issue 23,
goal 4; bench/RESULTS.md, round 23).

Each invocation runs one step once, the collector paused as the command pauses it, after
the same set-up (the fixture loaded once, for its configuration; the component read):

* ``none``: the set-up alone;
* ``cutter0`` / ``cutter``: the fixture loaded again, then (``cutter``) the reference cutter
  over it (``iterate_cutter(..., observe=False)``): the cutter's own cost is ``cutter`` minus
  ``cutter0``;
* ``parse``: the fixture streamed (``stream_fixture``) and every turn read;
* ``cut+stream``: the cutter over the streamed fixture;
* ``obs``: ... and the observations the checker is handed;
* ``check``: ... and the R1-R9 checker;
* ``rows``: ``replay_cutter`` as the command runs it (the monitor, M1-M3, the rows, the
  tally, the views, the spool) and the report built;
* ``whole``: ... and its three files written.

A step's cost is its count minus ``none``'s.  On a machine whose CPU times drift, count
instructions, which do not (``PYTHONHASHSEED`` fixed: set and dict orders move them by
1-2 %)::

    PYTHONHASHSEED=0 valgrind --tool=cachegrind --cache-sim=no \\
        --cachegrind-out-file=/dev/null python bench/replay_stages.py FIXTURE STEP

Usage: ``python bench/replay_stages.py FIXTURE STEP`` (run from the repository root).

``python bench/replay_stages.py FIXTURE --cpu N`` times every step instead: N rounds, each
step once a round in its own process, in turn (so a machine's drift falls on all of them
alike); it prints each step's median CPU time (user + system) and minor page faults, and
each step's cost (its median less the previous step's) against the cutter's own
(``cutter`` less ``cutter0``).  CPU time is the goal's own measure; it is noisier than the
instruction count, and it reads what the count does not see (cache misses, mispredicted
branches, the kernel's work: bench/RESULTS.md, round 25).
"""

from __future__ import annotations

import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from risutools.collector import cycles_paused  # noqa: E402
from risutools.replay.api import write_report_files  # noqa: E402
from risutools.replay.checker import InvariantChecker  # noqa: E402
from risutools.replay.component import load_component  # noqa: E402
from risutools.replay.fixture import load_fixture, stream_fixture  # noqa: E402
from risutools.replay.row_views import RowViews  # noqa: E402
from risutools.replay.run import build_report, iterate_cutter, replay_cutter  # noqa: E402
from risutools.settings.replay import ReplayConfig, load_replay_config  # noqa: E402

DOC = ROOT / "fixtures" / "documents" / "seed-000-context-cutter.json"
STEPS = ("none", "cutter0", "cutter", "parse", "cut+stream", "obs", "check", "rows", "whole")


def _cutter(path: str, cfg: ReplayConfig, run: bool) -> None:
    fx = load_fixture(path)
    if run:
        for _ in iterate_cutter(fx, cfg, observe=False):
            pass


def _observed(path: str, cfg: ReplayConfig, step: str) -> None:
    fx = stream_fixture(path)
    if step == "parse":
        for _ in fx.iter_turns():
            pass
        return
    checker = InvariantChecker(cfg) if step == "check" else None
    for _, _, obs in iterate_cutter(fx, cfg, observe=step != "cut+stream"):
        if checker is not None and obs is not None:
            checker.check(obs)


def _replayed(path: str, cfg: ReplayConfig, doc: dict[str, object], write: bool) -> None:
    fx = stream_fixture(path)
    views = RowViews(fx.turn_count(), True)
    run = replay_cutter(fx, cfg, spool=True, watch=views.add, readable=False,
                        watch_many=views.add_columns)
    report = build_report(run, fx, cfg, doc)
    if write:
        with tempfile.TemporaryDirectory() as d:
            write_report_files(report, Path(d) / "r.json", views, hashed=False)


def _timed(path: str, rounds: int) -> None:
    """Every step ``rounds`` times in turn, each in its own process: medians, step costs."""
    cpu: dict[str, list[float]] = {s: [] for s in STEPS}
    faults: dict[str, list[int]] = {s: [] for s in STEPS}
    for _ in range(rounds):
        for step in STEPS:
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            subprocess.run([sys.executable, __file__, path, step], check=True)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu[step].append(after.ru_utime - before.ru_utime
                             + after.ru_stime - before.ru_stime)
            faults[step].append(after.ru_minflt - before.ru_minflt)
    ms = {s: statistics.median(v) * 1000 for s, v in cpu.items()}
    cutter = ms["cutter"] - ms["cutter0"]
    print(f"{rounds} rounds; the cutter's own: {cutter:.1f} ms")
    print(f"{'step':12} {'median ms':>10} {'faults':>8} {'step ms':>8} {'x cutter':>9}")
    for step in STEPS:
        before = _BEFORE.get(step)
        own = "" if before is None else f"{ms[step] - ms[before]:8.1f}"
        ratio = "" if before is None else f"{(ms[step] - ms[before]) / cutter:8.2f}x"
        print(f"{step:12} {ms[step]:10.1f} {statistics.median(faults[step]):8.0f} {own:>8} "
              f"{ratio:>9}")


#: the step each step's cost is counted from (none for the set-up and the cutter's pair)
_BEFORE = {"parse": "none", "cut+stream": "parse", "obs": "cut+stream", "check": "obs",
           "rows": "check", "whole": "rows"}


def main(argv: list[str]) -> int:
    if len(argv) == 3 and argv[1] == "--cpu" and argv[2].isdigit() and int(argv[2]) > 0:
        _timed(argv[0], int(argv[2]))
        return 0
    if len(argv) != 2 or argv[1] not in STEPS:
        print(__doc__.split("\n\n")[0], f"\nsteps: {', '.join(STEPS)}", file=sys.stderr)
        return 2
    path, step = argv
    cfg = load_replay_config(None, None, load_fixture(path).config)
    doc = load_component(DOC).doc
    with cycles_paused():
        if step in ("cutter0", "cutter"):
            _cutter(path, cfg, step == "cutter")
        elif step in ("parse", "cut+stream", "obs", "check"):
            _observed(path, cfg, step)
        elif step in ("rows", "whole"):
            _replayed(path, cfg, doc, step == "whole")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
