"""Re-ingest figures (issue 23, goal 3: <= 50 us of CPU a file beyond the command's start-up).

Workload: ``BENCH_REINGEST_FILES`` (2,000) module JSON files, one a module (the fixtures'
modules renamed and varied, ``bench/workload.py`` ``_sources``), ingested once into a catalog
(``risutools ingest --lang en``), then re-ingested until the cache has recorded every catalog
file.  Each round runs, as whole processes (CPU = user + system of the child, ``os.wait4``):

* **nothing changed**: ``risutools ingest SRC -o CAT -q -j 1`` with the catalog and cache in
  place;
* **start-up**: the same command on an empty source folder (its own catalog);
* **10 changed**: 10 of the sources rewritten (another description) before the run;
* **their own cost**: those 10 files alone, ``--no-cache`` into a new catalog.

Printed: the medians, the CPU a file beyond start-up (nothing changed), and what the 10 changed
files add over a run with nothing changed, beside their own cost less start-up.  The trees live
in ``$RISUTOOLS_BENCH_DIR`` (default ``/tmp/risutools-bench``); ``BENCH_REINGEST_ROUNDS`` (5).
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from workload import BASE, _sources, load_line, run_process  # noqa: E402

N_FILES = int(os.environ.get("BENCH_REINGEST_FILES", "2000"))
ROUNDS = int(os.environ.get("BENCH_REINGEST_ROUNDS", "5"))
CHANGED = 10
CLI = [sys.executable, "-m", "risutools", "ingest"]


def _tree(n: int) -> Path:
    root = BASE / f"reingest-{n}"
    marker = root / ".sources"
    if not (marker.exists() and marker.read_text() == str(n)):
        shutil.rmtree(root, ignore_errors=True)
        _sources(root / "sources", n)
        marker.write_text(str(n))
    return root


def _change(files: list[Path], round_no: int) -> None:
    for f in files:
        mod = json.loads(f.read_text("utf-8"))
        mod["description"] = f"{mod['description'].split(' [r')[0]} [r{round_no}]"
        f.write_text(json.dumps(mod, ensure_ascii=False), "utf-8")


def main() -> int:
    root = _tree(N_FILES)
    src, cat = root / "sources", root / "catalog"
    empty, cat0 = root / "empty", root / "catalog-empty"
    few, cat_few = root / "changed", root / "catalog-changed"
    empty.mkdir(exist_ok=True)
    shutil.rmtree(cat, ignore_errors=True)
    changed = sorted(src.rglob("*.json"))[:: max(1, N_FILES // CHANGED)][:CHANGED]
    run_process([*CLI, str(src), "-o", str(cat), "--lang", "en", "-q", "-j", "1"])
    time.sleep(1.1)  # a catalog file is recorded by a run that starts a second after it changed
    for _ in range(2):
        run_process([*CLI, str(src), "-o", str(cat), "-q", "-j", "1"])
    same, start, ten, own = [], [], [], []
    for r in range(ROUNDS):
        same.append(run_process([*CLI, str(src), "-o", str(cat), "-q", "-j", "1"])[0])
        start.append(run_process([*CLI, str(empty), "-o", str(cat0), "-q", "-j", "1"])[0])
        _change(changed, r)
        ten.append(run_process([*CLI, str(src), "-o", str(cat), "-q", "-j", "1"])[0])
        shutil.rmtree(few, ignore_errors=True)
        shutil.rmtree(cat_few, ignore_errors=True)
        few.mkdir()
        for f in changed:
            shutil.copy2(f, few / f.name)
        own.append(run_process([*CLI, str(few), "-o", str(cat_few), "-q", "-j", "1",
                                "--no-cache"])[0])
        time.sleep(1.1)  # (the changed documents are recorded by the next run)
        run_process([*CLI, str(src), "-o", str(cat), "-q", "-j", "1"])
    med = statistics.median
    per_file = (med(same) - med(start)) / N_FILES * 1e6
    print(f"workload: {N_FILES} module JSON files (bench/workload.py sources), catalog and cache "
          f"in place; `risutools ingest SRC -o CAT -q -j 1`; {ROUNDS} rounds; {load_line()}")
    print(f"  nothing changed : {med(same):.3f} s CPU  ({' '.join(f'{x:.3f}' for x in same)})")
    print(f"  start-up (empty): {med(start):.3f} s CPU  ({' '.join(f'{x:.3f}' for x in start)})")
    print(f"  => {per_file:.0f} us of CPU a file beyond start-up (goal: <= 50)")
    print(f"  {CHANGED} changed      : {med(ten):.3f} s CPU, +{med(ten) - med(same):.3f} s over "
          f"nothing changed; their own cost (--no-cache, alone, less start-up): "
          f"{med(own) - med(start):.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
