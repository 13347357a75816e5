"""Re-ingest figures (issue 23, goal 3: <= 50 us of CPU a file beyond the command's start-up).

Workload: ``BENCH_REINGEST_FILES`` (2,000) module JSON files, one a module (the fixtures'
modules renamed and varied, ``bench/workload.py`` ``_sources``), ingested once into a catalog
(``risutools ingest --lang en``), then re-ingested until the cache has recorded every catalog
file.  Each round runs, as whole processes (CPU = user + system of the child, ``os.wait4``):

* **nothing changed**: ``risutools ingest SRC -o CAT -q -j 1`` with the catalog and cache in
  place;
* **start-up**: the same command on an empty source folder (its own catalog);
* **10 changed**: 10 of the sources rewritten (another description) a second before the
  run (a source changed less than a second before a run is not recorded by it);
* **their own cost**: those 10 files alone, ``--no-cache`` into a new catalog; and
  **updating**: the same into a catalog that holds their previous documents (ingested before
  the change), so the documents are replaced (compare-and-swap, as in the run with 10
  changed) rather than created; and **updating, the same command**: those 10 alone with the
  run's own options (the cache on), into a catalog and cache that hold their previous
  documents, so the run records them in its cache as the run with 10 changed does.  The
  first two are the strict floor (no cache written); the third is the same command on a
  folder holding only those 10 files, the goal's yardstick since round 17.

Printed: the medians, the CPU a file beyond start-up (nothing changed), and the 10-changed
comparison: what the 10 changed files add over the run with nothing changed of the same round,
beside their own cost less the start-up of the same round (pair by pair, then the medians and
their ratio; goal: at most 1).  The cache's files after the last round are listed (the main
file and its delta).  The trees live in ``$RISUTOOLS_BENCH_DIR`` (default
``/tmp/risutools-bench``); ``BENCH_REINGEST_ROUNDS`` (5); ``BENCH_REINGEST_OTHERS`` (0): that many
files that are not Risu files beside the modules (PNG images, JSON objects that are no
export, text notes: ``_others``), which a run with nothing changed must not sniff again.

Whole processes on a shared machine vary by a tenth of a second from run to run (start-up is
most of each), more than what is compared here.  So the same runs are then measured **in one
process** (``time.process_time`` around :func:`risutools.catalog.ingest.ingest`, ``jobs=1``,
everything imported and warm: start-up excluded by construction), ``BENCH_REINGEST_ROUNDS``
rounds again, the same runs in the same order (it turns round by round: whatever a run leaves
warm in the process helps the next).
``BENCH_REINGEST_INPROC=0`` skips this part.

A difference of some 20-30 ms between whole runs that vary by more than that reads 1.0-1.5x
from one set of 5 rounds to the next.  So the 10-changed comparison is last counted in
**instructions** (:func:`instructions`: each run once under ``valgrind --tool=cachegrind``,
``PYTHONHASHSEED=0``), which do not drift: nothing changed, start-up, 10 changed and their
own cost (the same command, updating, the cache on).  Instructions count the process's own
code, not the kernel's work for it (its system time: the file writes and their renames).
``BENCH_REINGEST_INSTR=0`` skips this part; without ``valgrind`` it is skipped and says so.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from workload import BASE, ROOT, _sources, load_line, run_process  # noqa: E402

N_FILES = int(os.environ.get("BENCH_REINGEST_FILES", "2000"))
#: files that are not Risu files beside them (``_others``; 0: none, the figures of rounds 1-20)
N_OTHERS = int(os.environ.get("BENCH_REINGEST_OTHERS", "0"))
ROUNDS = int(os.environ.get("BENCH_REINGEST_ROUNDS", "5"))
CHANGED = 10
CLI = [sys.executable, "-m", "risutools", "ingest"]


def _tree(n: int) -> Path:
    root = BASE / (f"reingest-{n}" + (f"-others-{N_OTHERS}" if N_OTHERS else ""))
    marker = root / ".sources"
    if not (marker.exists() and marker.read_text() == str(n)):
        shutil.rmtree(root, ignore_errors=True)
        _sources(root / "sources", n)
        _others(root / "sources" / "others", N_OTHERS)
        marker.write_text(str(n))
    return root


def _others(folder: Path, n: int) -> None:
    """``n`` files that are not Risu files beside the modules, as a collection has them: a
    third PNG images (64 KiB, no card in them), a third JSON objects that are no export
    (every fifth of 5,000 keys: more than the detection's peek sees, so read whole when
    sniffed), a third text notes."""
    if not n:
        return
    folder.mkdir(parents=True)
    rng = random.Random(23)
    for j in range(n):
        if j % 3 == 0:
            data = b"\x89PNG\r\n\x1a\n" + rng.randbytes(64 << 10)
            (folder / f"image-{j}.png").write_bytes(data)
        elif j % 3 == 1:
            keys = 5000 if j % 5 == 1 else 20
            obj = {f"setting_{k}": k for k in range(keys)}
            (folder / f"settings-{j}.json").write_text(json.dumps(obj), "utf-8")
        else:
            (folder / f"notes-{j}.txt").write_text(f"notes {j}\n" * 50, "utf-8")


def _change(files: list[Path], round_no: int) -> None:
    for f in files:
        mod = json.loads(f.read_text("utf-8"))
        mod["description"] = f"{mod['description'].split(' [r')[0]} [r{round_no}]"
        f.write_text(json.dumps(mod, ensure_ascii=False), "utf-8")


def main() -> int:
    root = _tree(N_FILES)
    src, cat = root / "sources", root / "catalog"
    (root / "empty").mkdir(exist_ok=True)
    shutil.rmtree(cat, ignore_errors=True)
    changed = sorted(src.rglob("*.json"))[:: max(1, N_FILES // CHANGED)][:CHANGED]
    run_process([*CLI, str(src), "-o", str(cat), "--lang", "en", "-q", "-j", "1"])
    time.sleep(1.1)  # a catalog file is recorded by a run that starts a second after it changed
    for _ in range(2):
        run_process([*CLI, str(src), "-o", str(cat), "-q", "-j", "1"])

    def process(src: Path, out: Path, *flags: str) -> float:
        return run_process([*CLI, str(src), "-o", str(out), "-q", "-j", "1", *flags])[0]

    _print(*_rounds(root, changed, process, 0))
    cache = cat / ".risutools-cache"
    print("  the cache after the last round: " + ", ".join(
        f"{p.name} {p.stat().st_size:,} bytes" for p in sorted(cache.glob("ingest.msgpack*"))))
    if os.environ.get("BENCH_REINGEST_INPROC", "1") != "0":
        sys.path.insert(0, str(ROOT))
        from risutools.catalog.ingest import ingest

        def in_process(src: Path, out: Path, *flags: str) -> float:
            t = time.process_time()
            ingest(src, out, jobs=1, use_cache="--no-cache" not in flags)
            return time.process_time() - t

        print(f"in one process (ingest(), jobs=1, warm; {ROUNDS} rounds; start-up excluded):")
        _print(*_rounds(root, changed, in_process, 100), header=False)
        print(f"  {load_line()}")
    if os.environ.get("BENCH_REINGEST_INSTR", "1") != "0":
        instructions(root, changed)
    return 0


def _counted(args: list[str]) -> float:
    """Millions of instructions of the whole process ``args`` (cachegrind's ``I refs``)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONHASHSEED="0")
    done = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no",
                           "--cachegrind-out-file=/dev/null", *args], env=env,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                          check=False)
    found = re.search(r"I\s+refs:\s+([\d,]+)", done.stderr)
    if found is None:
        raise SystemExit(f"valgrind said no instruction count: {done.stderr[-300:]}")
    return int(found.group(1).replace(",", "")) / 1e6


def instructions(root: Path, changed: list[Path]) -> None:
    """The 10-changed comparison in instructions (see the module's text): once each, in
    the order of a round (10 changed and their own cost, then nothing changed and
    start-up), the same trees."""
    if shutil.which("valgrind") is None:
        print("in instructions: SKIPPED (no valgrind)")
        return
    src, cat = root / "sources", root / "catalog"
    few, cat_cached = root / "changed", root / "catalog-upd-cached"
    for folder in (few, cat_cached):
        shutil.rmtree(folder, ignore_errors=True)
    few.mkdir()
    for f in changed:
        shutil.copy2(f, few / f.name)

    def cli(source: Path, out: Path) -> list[str]:
        return [*CLI, str(source), "-o", str(out), "-q", "-j", "1"]

    run_process(cli(few, cat_cached))  # (their documents as they were, in a cache)
    _change(changed, 1000 + int(time.time()) % 100_000)  # (new bytes each time it runs)
    for f in changed:
        shutil.copy2(f, few / f.name)
    time.sleep(1.1)
    ten, own = _counted(cli(src, cat)), _counted(cli(few, cat_cached))
    time.sleep(1.1)
    run_process(cli(src, cat))  # (the changed documents recorded)
    same, start = _counted(cli(src, cat)), _counted(cli(root / "empty", root / "catalog-empty"))
    print("in instructions (whole processes, once each under cachegrind, PYTHONHASHSEED=0):")
    print(f"  nothing changed {same:,.1f} M, start-up {start:,.1f} M: "
          f"{(same - start) / N_FILES * 1e3:,.0f} k instructions a file beyond start-up")
    print(f"  {CHANGED} changed {ten:,.1f} M: added {ten - same:+,.1f} M; their own cost (the "
          f"same command, updating, the cache on) {own:,.1f} M less start-up = "
          f"{own - start:,.1f} M => added / own cost {(ten - same) / (own - start):.3f} "
          f"(goal: <= 1)")


Runs = list[float]


def _rounds(root: Path, changed: list[Path], cpu: Callable[..., float], first: int
            ) -> tuple[Runs, Runs, Runs, Runs, Runs, Runs]:
    """(nothing changed, start-up, 10 changed, those 10 alone into a new catalog, those 10
    alone updating their documents, the same with the cache on): CPU seconds,
    ``cpu(src, out, *flags)`` a run, in rounds.  Each round has two counted blocks, each
    after the same pause and the same small uncounted run: the run with 10 changed and those
    10 alone (new catalog, updating, updating with the cache on), in an order that turns
    round by round; then, once the changed documents are recorded, nothing
    changed and start-up, in an order that alternates (in one process, or from the disk's
    and the processor's caches, what a run leaves warm helps the next)."""
    src, cat = root / "sources", root / "catalog"
    few, cat_few, cat_upd = root / "changed", root / "catalog-changed", root / "catalog-upd"
    cat_cached = root / "catalog-upd-cached"
    runs: tuple[Runs, Runs, Runs, Runs, Runs, Runs] = ([], [], [], [], [], [])
    same, start, ten, own, upd, cached = runs
    def warm_up() -> None:  # (each counted block starts alike: a pause, then a small run)
        time.sleep(1.1)
        cpu(root / "empty", root / "catalog-empty")

    for r in range(ROUNDS):
        for folder in (few, cat_few, cat_upd, cat_cached):
            shutil.rmtree(folder, ignore_errors=True)
        few.mkdir()
        for f in changed:
            shutil.copy2(f, few / f.name)
        cpu(few, cat_upd, "--no-cache")  # (their documents as they were)
        cpu(few, cat_cached)  # (and recorded in a cache)
        _change(changed, first + r)
        for f in changed:
            shutil.copy2(f, few / f.name)
        # (changed more than a second before the runs, as a user's files are: a source
        # changed less than that before a run is not recorded by it, the next run reads it)
        warm_up()
        steps = [lambda: ten.append(cpu(src, cat)),
                 lambda: own.append(cpu(few, cat_few, "--no-cache")),
                 lambda: upd.append(cpu(few, cat_upd, "--no-cache")),
                 lambda: cached.append(cpu(few, cat_cached))]
        for step in steps[r % 4:] + steps[:r % 4]:
            step()
        time.sleep(1.1)  # (the changed documents are recorded by the next run)
        cpu(src, cat)
        warm_up()
        pair = [lambda: same.append(cpu(src, cat)),
                lambda: start.append(cpu(root / "empty", root / "catalog-empty"))]
        for step in pair if r % 2 == 0 else pair[::-1]:
            step()
    return runs


def _row(values: list[float]) -> str:
    return " ".join(f"{x:+.3f}" if x < 0 else f"{x:.3f}" for x in values)


def _print(same: Runs, start: Runs, ten: Runs, own: Runs, upd: Runs, cached: Runs,
           header: bool = True) -> None:
    med = statistics.median
    per_file = [(a - b) / N_FILES * 1e6 for a, b in zip(same, start, strict=True)]
    added = [a - b for a, b in zip(ten, same, strict=True)]
    alone = [a - b for a, b in zip(own, start, strict=True)]
    if header:
        print(f"workload: {N_FILES} module JSON files (bench/workload.py sources), catalog and "
              f"cache in place; `risutools ingest SRC -o CAT -q -j 1`; {ROUNDS} rounds; "
              f"{load_line()}")
    print(f"  nothing changed : {med(same):.3f} s CPU  ({_row(same)})")
    print(f"  start-up (empty): {med(start):.3f} s CPU  ({_row(start)})")
    print(f"  => {(med(same) - med(start)) / N_FILES * 1e6:.0f} us of CPU a file beyond start-up "
          f"(goal: <= 50; round by round: {' '.join(f'{x:.0f}' for x in per_file)})")
    print(f"  {CHANGED} changed, against their own cost (goal: add no more than it):")
    print(f"    the run with {CHANGED} changed       : {med(ten):.3f} s CPU  ({_row(ten)})")
    print(f"    added over nothing changed  : {med(added):+.3f} s  ({_row(added)})")
    updating = [a - b for a, b in zip(upd, start, strict=True)]
    print(f"    their own cost, new catalog : {med(alone):+.3f} s  ({_row(alone)})  "
          f"(--no-cache, those {CHANGED} alone: {med(own):.3f} s, less start-up)")
    print(f"    their own cost, updating    : {med(updating):+.3f} s  ({_row(updating)})  "
          f"(the same over their previous documents: {med(upd):.3f} s, less start-up)")
    with_cache = [a - b for a, b in zip(cached, start, strict=True)]
    print(f"    their own cost, same command: {med(with_cache):+.3f} s  ({_row(with_cache)})  "
          f"(updating, the cache on as in the run with {CHANGED} changed: {med(cached):.3f} s, "
          f"less start-up)")
    for what, cost in (("new catalog, --no-cache", alone), ("updating, --no-cache", updating),
                       ("updating, the same command", with_cache)):
        ratio = med(added) / med(cost) if med(cost) > 0 else float("nan")
        print(f"    => added / own cost ({what}): {ratio:.2f} (medians)")


if __name__ == "__main__":
    sys.exit(main())
