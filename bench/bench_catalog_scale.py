"""Catalog cost at scale (issue 21): is it linear in what is asked?

Prints:
- ``risutools review CATALOG -f json -j 1`` on NDJSON catalogs of 10,000, 20,000 and 50,000
  documents (the workload of ``bench_review.py``: mostly candidates, every 10th promoted,
  every 50th active, some conflicts and shared sources), and on 20,000 documents as one
  JSON file each: CPU (user+sys) per document and peak RSS per document.  The documented
  figure (docs/catalog.md, "Speed") is 6.2 s CPU for 10,000 documents, 0.62 ms each;
- ``risutools promote X --to pending_human_review --dry-run`` (a real child process, median
  of 3) in a small catalog without other approval records, and with 10,000 records of other
  components in ``approvals/``: a promotion reads only the records named for its component
  and step, so the two should cost the same.

Usage: ``python bench/bench_catalog_scale.py [N ...]`` (default 10000 20000 50000).
CPU is the figure to compare on a shared machine.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from bench_review import SEED, generate, run_child  # noqa: E402

# the CLI in a child that reports its own peak RSS on exit (RUSAGE_CHILDREN keeps the
# largest child so far, which would carry one run's peak into the next)
_CLI = ("import atexit, resource, sys\n"
        "atexit.register(lambda: sys.stderr.write("
        "f'\\nPEAK-RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}\\n'))\n"
        "sys.argv[0] = 'risutools'\n"
        "from risutools.cli import main\n"
        "main()\n")


def review_child(args: list[str], cwd: Path) -> tuple[float, int, int]:
    """(CPU seconds, exit code, peak RSS in MiB) of ``risutools ARGS`` in a child."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run([sys.executable, "-c", _CLI, *args], cwd=cwd,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    rss = [int(ln.split()[1]) for ln in proc.stderr.splitlines() if ln.startswith("PEAK-RSS")]
    return cpu, proc.returncode, (rss[-1] // 1024 if rss else -1)


def review_at(n: int, tmp: Path, layout: str = "ndjson") -> None:
    cat = tmp / f"cat-{n}-{layout}"
    cat.mkdir()
    docs = generate(n)
    if layout == "ndjson":
        (cat / "components.ndjson").write_bytes(b"\n".join(docs) + b"\n")
    else:
        for i, d in enumerate(docs):
            (cat / f"c{i:06d}.json").write_bytes(d)
    del docs
    (cat / "approvals").mkdir()
    cpu, rc, rss = review_child(["review", str(cat), "-f", "json", "-q", "-j", "1",
                                 "-o", str(tmp / "review.json")], tmp)
    print(f"review of {n:,} documents ({layout}), -j 1: {cpu:.2f} s CPU = "
          f"{cpu / n * 1000:.3f} ms per document; peak RSS {rss} MiB = "
          f"{rss * 1024 / n:.1f} KiB per document; exit {rc}", flush=True)


def promote_with_records(tmp: Path, records: int) -> None:
    from risutools.commands import approve

    cat = tmp / f"promote-{records}"
    (cat / "approvals").mkdir(parents=True)
    doc = json.loads(SEED.read_text(encoding="utf-8"))
    doc["provenance"]["review_status"] = "candidate"
    doc["payload"]["idea_layers"]["lineage"]["promotion_status"] = "candidate"
    (cat / "c.json").write_text(json.dumps(doc, ensure_ascii=False, indent=1))
    approve.run(approve.Options(str(cat / "c.json"), "request_review", "bench", "", None,
                                str(cat)))
    (mine,) = (cat / "approvals").iterdir()
    text = mine.read_text("utf-8")
    for i in range(records):
        other = f"module.risu.{i:09d}.other"
        (cat / "approvals" / f"{other}--request_review--{i:012x}.yaml").write_text(
            text.replace(doc["component_id"], other), "utf-8")
    cpus = []
    for _ in range(3):
        _, cpu, rc, _, _ = run_child(["promote", doc["component_id"], "--to",
                                      "pending_human_review", "--dry-run"], cat)
        assert rc == 0, rc
        cpus.append(cpu)
    print(f"promote --dry-run with {records:,} approval records of other components: "
          f"{statistics.median(cpus) * 1000:.0f} ms CPU (median of 3)", flush=True)


def main() -> None:
    sizes = [int(a) for a in sys.argv[1:]] or [10_000, 20_000, 50_000]
    print(f"cores: {os.cpu_count()}, load average {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory(prefix="risutools-bench-scale-") as t:
        tmp = Path(t)
        promote_with_records(tmp, 0)
        promote_with_records(tmp, 10_000)
        for n in sizes:
            review_at(n, tmp)
        for n in sorted({min(x, 20_000) for x in sizes}):
            review_at(n, tmp, "files")


if __name__ == "__main__":
    main()
