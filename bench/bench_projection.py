"""Projection figures (issue 12): microseconds per ``project`` call on a small module.

The modules are bench_ingest's small-file module (five lorebook entries, one regex script,
one Lua trigger with ``listenEdit`` and two chat variables), one per call, each with its
own name and id (as ingest meets them: what a projection remembers of one module -- a
name's slug, a text's MC500 verdict -- does not make the next call cheaper than in a real
run), written as ``.risum`` files and read back, so each carries its source like an
ingested file.  Printed per call: the CPU time of the process, best of
``BENCH_PROJECTION_ROUNDS`` rounds of ``BENCH_PROJECTION_CALLS`` calls (the round a busy
machine disturbed least):

* ``analyze``: the static analysis alone (not the projection's code);
* ``project, analysis given``: the projection alone, ``en`` and ``ko``;
* ``project``: analysis + projection (what ingest calls per module);
* ``render``: the document as ingest writes it (``catalog.ingest.render``: the text of
  ``canonical.document_json``).

A/B on the same machine in the same run: ``BENCH_BEFORE=/path/to/old/checkout`` (a folder
holding ``risutools/``) measures that checkout in a child process, alternating with this
one, round by round.  Also prints the load average.

Run: ``PYTHONPATH=. python bench/bench_projection.py``
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROUNDS = int(os.environ.get("BENCH_PROJECTION_ROUNDS", "5"))
CALLS = int(os.environ.get("BENCH_PROJECTION_CALLS", "2000"))
HERE = Path(__file__).resolve().parent
NAMES = ("analyze", "project en, analysis given", "project ko, analysis given",
         "project ko (analysis + projection)", "render")


def _one_round() -> dict[str, float]:
    """Microseconds per call of each step, in this process (risutools from sys.path)."""
    # risutools first: the checkout on PYTHONPATH (bench_ingest puts this one on sys.path)
    from risutools.analysis import analyze
    from risutools.catalog.ingest import render
    from risutools.formats import read_path
    from risutools.formats.risum import write_risum
    from risutools.projection import project

    sys.path.insert(0, str(HERE))
    from bench_ingest import _module

    # one module per call, as ingest meets them: each its own name and id, so nothing a
    # projection remembers from one module to the next (a name's slug, a text's MC500
    # verdict) makes a later call cheaper than it is in a real run
    with tempfile.TemporaryDirectory() as tmp:
        modules = []
        for i in range(CALLS):
            path = Path(tmp) / f"{100000001 + i}_bench.risum"
            path.write_bytes(write_risum(_module(100000001 + i, 0), []))
            (module,) = read_path(str(path))
            modules.append(module)
    analyses = [analyze(m) for m in modules]
    docs = [project(m, analysis=a, lang="ko") for m, a in zip(modules, analyses, strict=True)]
    pairs = list(zip(modules, analyses, strict=True))
    steps = {
        "analyze": lambda: [analyze(m) for m in modules],
        "project en, analysis given": lambda: [project(m, analysis=a, lang="en")
                                               for m, a in pairs],
        "project ko, analysis given": lambda: [project(m, analysis=a, lang="ko")
                                               for m, a in pairs],
        "project ko (analysis + projection)": lambda: [project(m, lang="ko") for m in modules],
        "render": lambda: [render(d, False) for d in docs],
    }
    out: dict[str, float] = {}
    for name, fn in steps.items():
        _forget()
        t0 = time.process_time()  # CPU time: a busy machine's waits are not counted
        fn()  # each step over every module once (first-call imports were paid above)
        out[name] = (time.process_time() - t0) / CALLS * 1e6
    return out


def _forget() -> None:
    """Empty what the projection remembers between calls (``functools`` caches of its
    modules): each step meets the modules as new, as one ingest run does."""
    for name, mod in list(sys.modules.items()):
        if name.startswith("risutools.projection"):
            for value in list(vars(mod).values()):
                clear = getattr(value, "cache_clear", None)
                if callable(clear):
                    clear()


def _child(before: str) -> dict[str, float]:
    env = dict(os.environ, PYTHONPATH=before, BENCH_PROJECTION_CHILD="1")
    run = subprocess.run([sys.executable, str(Path(__file__).resolve())], env=env,
                         capture_output=True, text=True, check=True, cwd=before)
    got: dict[str, float] = json.loads(run.stdout)
    return got


def main() -> int:
    if os.environ.get("BENCH_PROJECTION_CHILD"):
        print(json.dumps(_one_round()))
        return 0
    before = os.environ.get("BENCH_BEFORE")
    print(f"# load average {os.getloadavg()[0]:.2f}; {ROUNDS} rounds x {CALLS} calls, "
          "best round, microseconds per call")
    now: list[dict[str, float]] = []
    old: list[dict[str, float]] = []
    for _ in range(ROUNDS):
        if before:
            old.append(_child(before))
        now.append(_child(str(HERE.parent)))
    header = f"{'step':36} {'this':>9}"
    if before:
        header += f" {'before':>9} {'ratio':>7}"
    print(header)
    for name in NAMES:
        best = min(r[name] for r in now)
        line = f"{name:36} {best:9.1f}"
        if before:
            was = min(r[name] for r in old)
            line += f" {was:9.1f} {was / best:6.2f}x"
        print(line)
    print(f"# load average {os.getloadavg()[0]:.2f} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
