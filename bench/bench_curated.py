"""A curated catalog at scale: what grows with the number of components, notes and sources
(issue 23, round 22).

Workload (made once under ``$RISUTOOLS_BENCH_DIR``, default ``/tmp/risutools-bench``): ``N``
module exports (``workload._sources``, default 2,000) in a source store, ingested into a
catalog whose ``notes/`` folder holds the curators' notes of about two components in three:
half by their id, a quarter under an older slug of their stable id (an alias), one in
sixteen by a ``for:`` naming the source's digest (a repost), and one notes file that
matches nothing.  Every figure is the CPU (user + system) of a whole process, start-up
included, median of ``BENCH_ROUNDS`` (5) runs:

* ``ingest --no-cache``: every source projected again, each looking its notes up;
* ``ingest``: a re-run with nothing changed (its cache warm);
* ``review --sources STORE -j 1``: the review with every source digest verified;
* ``verify --sources STORE``: the digests alone;
* ``packet --queue`` of every candidate (``--limit`` the catalog's size), into a new folder.

``BENCH_BEFORE=<another checkout>`` times the same commands with that checkout in turn
(A B A B, after a warm-up each) and prints the pair-by-pair ratio (this tree / that one).

Usage: ``PYTHONPATH=. python bench/bench_curated.py [N]``.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from workload import BASE, _sources, load_line  # noqa: E402

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "5"))
BEFORE = os.environ.get("BENCH_BEFORE")
NOTES = ("notes: notes-v1\npayload:\n  invariants:\n"
         "  - \"메모 {i}, 이 모듈의 규칙은 그대로 둔다.\"\n")


def _workload(n: int) -> tuple[Path, Path]:
    root = BASE / f"catalog-scale-{n}"
    marker = root / ".made"
    src, cat = root / "sources", root / "catalog"
    if marker.exists() and marker.read_text() == str(n):
        return src, cat
    shutil.rmtree(root, ignore_errors=True)
    _sources(src, n)
    scratch = root / "scratch"
    _run(ROOT, ["ingest", str(src), "-o", str(scratch), "-j", "1"])
    notes = cat / "notes"
    notes.mkdir(parents=True)
    for i, p in enumerate(sorted(scratch.glob("*.json"))):
        doc = json.loads(p.read_text("utf-8"))
        cid, sha = doc["component_id"], doc["provenance"]["source_refs"][0]["sha256"]
        text = NOTES.format(i=i)
        if i % 3 == 0 and i % 2 == 0:
            (notes / f"{cid}.yaml").write_text(text, "utf-8")
        elif i % 3 == 0:
            stable = cid.rsplit(".", 1)[0]
            (notes / f"{stable}.older-slug.yaml").write_text(text, "utf-8")
        elif i % 16 == 1:
            (notes / f"repost-{i}.yaml").write_text(f'for:\n  source_sha256: "{sha}"\n' + text,
                                                    "utf-8")
        elif i % 3 == 1:
            (notes / f"{cid}.yaml").write_text(text, "utf-8")
    (notes / "module.risu.1.nothing.yaml").write_text(NOTES.format(i=-1), "utf-8")
    shutil.rmtree(scratch)
    _run(ROOT, ["ingest", str(src), "-o", str(cat), "-j", "1"])
    _run(ROOT, ["ingest", str(src), "-o", str(cat), "-j", "1"])  # (the cache past the racy window)
    marker.write_text(str(n))
    return src, cat


def _run(tree: Path, args: list[str]) -> float:
    """CPU seconds (user + system) of ``risutools ARGS`` as a whole process with ``tree``'s
    code (``os.wait4``: that child alone); its output thrown away."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    cmd = args[1:] if args[0] == "sh" else [sys.executable, "-m", "risutools", *args]
    # (run from the tree: ``python -m`` puts the current folder first on the path)
    proc = subprocess.Popen(cmd, cwd=tree, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    _, _status, usage = os.wait4(proc.pid, 0)
    return usage.ru_utime + usage.ru_stime


def _commands(src: Path, cat: Path, n: int) -> list[tuple[str, list[str]]]:
    queue = cat.parent / "queue"
    packet = (f"rm -rf {queue} && {sys.executable} -m risutools packet --lane light --queue "
              f"{queue} --status candidate --limit {n} --catalog {cat}")
    return [
        ("ingest --no-cache (every source projected, its notes looked up)",
         ["ingest", str(src), "-o", str(cat), "-j", "1", "--no-cache"]),
        ("ingest, nothing changed", ["ingest", str(src), "-o", str(cat), "-j", "1"]),
        ("review --sources -j 1", ["review", str(cat), "--sources", str(src), "-j", "1",
                                   "-f", "json", "-o", str(cat.parent / "review.json")]),
        ("verify --sources", ["verify", str(cat), "--sources", str(src), "-f", "json"]),
        ("packet --queue (every candidate)", ["sh", "sh", "-c", packet]),
    ]


def main(argv: list[str]) -> int:
    n = int(argv[1]) if len(argv) > 1 else 2000
    src, cat = _workload(n)
    notes = len(list((cat / "notes").iterdir()))
    print(f"workload: {n:,} sources, a catalog of their documents, {notes:,} notes files; "
          f"{load_line()}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    trees = [ROOT] + ([Path(BEFORE)] if BEFORE else [])
    for name, args in _commands(src, cat, n):
        runs: dict[Path, list[float]] = {t: [] for t in trees}
        for t in trees:  # (a warm-up each)
            _run(t, args)
        for _ in range(ROUNDS):
            for t in trees:
                runs[t].append(_run(t, args))
        line = f"  {name:64} {statistics.median(runs[ROOT]):7.3f} s"
        if BEFORE:
            pairs = [a / b for a, b in zip(runs[ROOT], runs[trees[1]], strict=True)]
            line += (f"   before {statistics.median(runs[trees[1]]):7.3f} s   ratio "
                     f"{statistics.median(pairs):.2f}x ({min(pairs):.2f}-{max(pairs):.2f})")
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
