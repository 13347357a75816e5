"""Where a re-ingest spends, phase by phase (issue 23, goal 3: 10 changed add no more than
their own cost).

Workload: the trees of ``bench_reingest.py`` (``BENCH_REINGEST_FILES`` module JSON files,
default 2,000, under ``$RISUTOOLS_BENCH_DIR``), made by it when missing.  Each round runs
five whole processes of ``risutools ingest SRC -o CAT -q -j 1``, as ``bench_reingest.py``
does: **10 changed** (10 sources rewritten a second before), **nothing changed**, **those 10
alone updating** their documents (``--no-cache``, a catalog holding their previous
documents), the same with **the cache on** (the same command as the run with 10 changed: a
catalog and cache holding their previous documents) and **start-up** (an empty folder).
Each process runs the command through this script's ``--child`` mode, which wraps the
steps of :func:`risutools.catalog.ingest.ingest` and writes each step's CPU
(``time.process_time``) as one JSON line.  Printed: each phase's
median over the rounds, and the differences 10 changed - nothing changed, updating -
start-up and updating with the cache on - start-up, in ms.

Usage: ``python bench/bench_reingest_phases.py [ROUNDS]`` (default 9; ``make bench`` runs it).
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
#: (module, class or None, attribute, phase): the steps of an ingest that are timed
STEPS = (
    ("risutools.catalog.ingest", None, "ingest", "whole ingest()"),
    ("risutools.catalog.ingest", None, "_prepare_catalog", "preparing the catalog"),
    ("risutools.catalog.ingest", None, "find_sources", "the walk"),
    ("risutools.catalog.ingest", "_Run", "plan", "the plan"),
    ("risutools.catalog.ingest", None, "run_sources", "projecting the sources"),
    ("risutools.catalog.ingest", "_Run", "unpack_needed", "the cache's unpacking"),
    ("risutools.catalog.ingest", "_Run", "finished", "a source ended (cache store)"),
    ("risutools.catalog.ingest", None, "write_catalog", "writing the documents"),
    ("risutools.catalog.ingest", None, "write_facts", "writing the facts"),
    ("risutools.fsio", None, "sweep_temp_files", "sweeps at a first write"),
    ("risutools.catalog.ingest", None, "_save_cache", "saving the cache"),
)
RUNS = ("10 changed", "nothing changed", "updating", "updating, cache on", "start-up")


def _child(out: str, argv: list[str]) -> None:
    """Run the CLI with the steps wrapped; append their times to ``out``."""
    import importlib

    sys.path.insert(0, str(ROOT))
    times: dict[str, float] = defaultdict(float)

    def wrap(owner: Any, name: str, phase: str) -> None:
        real = getattr(owner, name)

        def timed(*args: Any, **kw: Any) -> Any:
            t = time.process_time()
            try:
                return real(*args, **kw)
            finally:
                times[phase] += time.process_time() - t

        setattr(owner, name, timed)

    for module, cls, name, phase in STEPS:
        owner: Any = importlib.import_module(module)
        wrap(getattr(owner, cls) if cls else owner, name, phase)
    from risutools.cli import main

    sys.argv = ["risutools", *argv]
    try:
        main()
    finally:
        with open(out, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(times) + "\n")


def main(rounds: int) -> int:
    sys.path.insert(0, str(HERE))
    import bench_reingest as br

    root = br._tree(br.N_FILES)
    src, cat = root / "sources", root / "catalog-phases"
    empty = root / "empty"
    empty.mkdir(exist_ok=True)
    changed = sorted(src.rglob("*.json"))[:: max(1, br.N_FILES // br.CHANGED)][:br.CHANGED]
    few, upd = root / "changed-phases", root / "catalog-upd-phases"
    cached = root / "catalog-cached-phases"
    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "phases.jsonl")
        got: dict[str, list[dict[str, float]]] = defaultdict(list)

        def run(what: str | None, *args: str | Path) -> None:
            cmd = [sys.executable, __file__, "--child", log, "ingest", *map(str, args), "-q",
                   "-j", "1"]
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL,
                           env={**os.environ, "PYTHONPATH": str(ROOT)})
            with open(log, encoding="utf-8") as fh:
                last = fh.read().splitlines()[-1]
            if what is not None:
                got[what].append(json.loads(last))

        def warm_up() -> None:
            time.sleep(1.1)
            run(None, empty, "-o", root / "catalog-empty")

        run(None, src, "-o", cat)
        for r in range(rounds):
            for folder in (few, upd, cached):
                shutil.rmtree(folder, ignore_errors=True)
            few.mkdir()
            for f in changed:
                shutil.copy2(f, few / f.name)
            run(None, few, "-o", upd, "--no-cache")
            run(None, few, "-o", cached)
            br._change(changed, 1000 + r)
            for f in changed:
                shutil.copy2(f, few / f.name)
            warm_up()
            three = [("10 changed", (src, "-o", cat)),
                     ("updating", (few, "-o", upd, "--no-cache")),
                     ("updating, cache on", (few, "-o", cached))]
            for what, args in three[r % 3:] + three[:r % 3]:
                run(what, *args)
            time.sleep(1.1)
            run(None, src, "-o", cat)  # (the changed documents recorded)
            warm_up()
            pair = [("nothing changed", (src, "-o", cat)),
                    ("start-up", (empty, "-o", root / "catalog-empty"))]
            for what, args in pair if r % 2 == 0 else pair[::-1]:
                run(what, *args)
    _print(got, rounds)
    return 0


def _print(got: dict[str, list[dict[str, float]]], rounds: int) -> None:
    print(f"re-ingest phases, ms of CPU (medians of {rounds} rounds; workload: the "
          f"sources of bench_reingest.py, `ingest SRC -o CAT -q -j 1`)")
    print(f"  {'phase':36}" + "".join(f"{w:>20}" for w in RUNS)
          + "   10ch - same   upd - start   cached - start")
    for _, _, _, phase in STEPS:
        m = {w: 1000 * statistics.median(row.get(phase, 0.0) for row in got[w]) for w in RUNS}
        print(f"  {phase:36}" + "".join(f"{m[w]:20.2f}" for w in RUNS)
              + f"   {m['10 changed'] - m['nothing changed']:11.2f}"
              f"   {m['updating'] - m['start-up']:11.2f}"
              f"   {m['updating, cache on'] - m['start-up']:14.2f}")


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        _child(sys.argv[2], sys.argv[3:])
        sys.exit(0)
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 9))
