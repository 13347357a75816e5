"""Catalog figures: ``review`` of a large catalog, and ``promote`` with a long transition log.

Prints:
- the projected workload (issue 23; ``bench/workload.py``, as in ``bench_contract.py``):
  ``risutools review CATALOG -f json`` on ``BENCH_PROJECTED`` documents (default 10,000),
  one JSON file each, beside check-jsonschema (schema only) on the same files, whole
  processes in turn, ``BENCH_CONTRACT_ROUNDS`` times (default 2): CPU, wall, peak RSS and
  the CPU ratio pair by pair (goal <= 0.35); a clear line instead when check-jsonschema
  is not there;
- peak memory as the catalog grows (``BENCH_REVIEW_SCALE``, default 10,000, 20,000 and
  50,000 copies of the projected documents; goal <= 300 MB at 50,000);
- wall time and peak memory (max RSS of the child) of ``risutools review CATALOG -f json``
  on an N-document NDJSON catalog (default 10,000) with its capability graph: mostly
  candidates, every 10th promoted, every 50th active, some conflicts and shared sources;
- end-to-end wall time of ``risutools promote X --to pending_human_review`` (a real child
  process, median of 5, each on a fresh copy) in a small catalog whose ``transitions.ndjson``
  has 10,000 lines.
Usage: ``python bench/bench_review.py [N]``.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
SEED = ROOT / "fixtures" / "documents" / "seed-000-context-cutter.json"


def generate(n: int) -> list[bytes]:
    from risutools.canonical import canonical

    base = json.loads(SEED.read_text(encoding="utf-8"))
    base["provenance"]["review_status"] = "candidate"
    base["payload"]["idea_layers"]["lineage"]["promotion_status"] = "candidate"
    out = []
    for i in range(n):
        d = copy.deepcopy(base)
        post = str(100000 + i)
        d["component_id"] = f"module.risu.{post}.cutter-{i}"
        ref = d["provenance"]["source_refs"][0]
        ref["source_id"] = f"risu:{post}"
        src = post if i % 97 else str(100000 + i - 1)  # every 97th shares a source
        ref["sha256"] = "sha256:" + hashlib.sha256(src.encode()).hexdigest()
        ev = d["payload"]["idea_layers"]["evidence"]
        ev["source_post"] = post
        ev["lead_id"] = f"risu.deep.module.{post}"
        d["capabilities"]["provides"] = ["regex.transform"] if i % 3 else \
            list(d["capabilities"]["provides"])
        if i % 41 == 0:
            d["capabilities"]["conflicts"] = ["context.token_budget"]
        if i % 10 == 0:  # forged statuses: the review reports them (MC305), as it should
            d["provenance"]["review_status"] = "promoted"
            d["payload"]["idea_layers"]["lineage"]["promotion_status"] = "promoted"
            if i % 50 == 0:
                d["provenance"]["runtime_status"] = "active"
        out.append(canonical(d))
    return out


# The CLI, run in a child that reports its own (main process) CPU on exit: the rest of the
# child's CPU is its workers'.
_CLI = ("import atexit, resource, sys\n"
        "def _cpu():\n"
        "    r = resource.getrusage(resource.RUSAGE_SELF)\n"
        "    sys.stderr.write(f'\\nMAIN-CPU {r.ru_utime + r.ru_stime:.3f}\\n')\n"
        "atexit.register(_cpu)\n"
        "sys.argv[0] = 'risutools'\n"
        "from risutools.cli import main\n"
        "main()\n")


def run_child(args: list[str], cwd: Path) -> tuple[float, float, int, int, float]:
    """(wall seconds, CPU seconds (user + sys, workers included), exit code, peak RSS in MiB
    of the largest child so far, CPU seconds of the main process alone).  CPU is the figure
    to compare on a loaded machine."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", _CLI, *args], cwd=cwd,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    main = [float(ln.split()[1]) for ln in proc.stderr.splitlines() if ln.startswith("MAIN-CPU")]
    return wall, cpu, proc.returncode, r1.ru_maxrss // 1024, main[-1] if main else cpu


def bench_review(n: int, tmp: Path) -> None:
    cat = tmp / "big"
    cat.mkdir()
    (cat / "components.ndjson").write_bytes(b"\n".join(generate(n)) + b"\n")
    (cat / "approvals").mkdir()
    for jobs in ("1", str(os.cpu_count() or 1)):
        wall, cpu, rc, rss, main = run_child(["review", str(cat), "-f", "json", "-q", "-j",
                                              jobs, "-o", str(tmp / "review.json")], tmp)
        workers = cpu - main
        j = int(jobs)
        # on an idle machine the wall time is about the main process's own CPU (the serial
        # part) plus the workers' CPU shared out over the cores
        idle = main + (workers / j if j > 1 else 0.0)
        print(f"review of {n:,} documents, -j {jobs}: {wall:.2f} s wall, {cpu:.2f} s CPU "
              f"(user+sys; main process {main:.2f} s, workers {workers:.2f} s; idle-machine "
              f"estimate {idle:.1f} s), exit {rc}, peak RSS {rss} MiB")


def bench_promote(tmp: Path, lines: int = 10_000) -> None:
    from risutools.commands import approve

    cat = tmp / "small"
    cat.mkdir()
    seed = SEED.read_bytes()
    doc = json.loads(seed)
    doc["provenance"]["review_status"] = "candidate"
    doc["payload"]["idea_layers"]["lineage"]["promotion_status"] = "candidate"
    (cat / "c.json").write_text(json.dumps(doc, ensure_ascii=False, indent=1))
    log = []
    for i in range(lines):
        log.append(json.dumps({"component_id": f"module.risu.{i}.other", "from_status":
                               "candidate", "to_status": "pending_human_review",
                               "before_sha256": "sha256:" + "1" * 64,
                               "after_sha256": "sha256:" + "2" * 64,
                               "approval": {"file": "approvals/x.yaml", "sha256": "sha256:" +
                                            "3" * 64}, "at": "2025-01-01T00:00:00+00:00",
                               "tool_version": "0.1.0"}, sort_keys=True))
    (cat / "transitions.ndjson").write_text("\n".join(log) + "\n")
    (cat / "approvals").mkdir()
    approve.run(approve.Options(str(cat / "c.json"), "request_review", "bench", "", None,
                                str(cat)))
    times, cpus = [], []
    for i in range(5):
        work = tmp / f"run{i}"
        shutil.copytree(cat, work)
        wall, cpu, rc, _, _ = run_child(["promote", doc["component_id"], "--to",
                                      "pending_human_review"], work)
        assert rc == 0, rc
        times.append(wall)
        cpus.append(cpu)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    base = time.perf_counter() - t0
    print(f"promote with a {lines:,}-line transitions.ndjson: {statistics.median(times) * 1000:.0f}"
          f" ms wall, {statistics.median(cpus) * 1000:.0f} ms CPU (user+sys) end to end (median "
          f"of 5; python -c pass: {base * 1000:.0f} ms wall)")
    helps = []
    for _ in range(5):
        wall, cpu, rc, _, _ = run_child(["--help"], tmp)
        helps.append(cpu)
    print(f"risutools --help: {statistics.median(helps) * 1000:.0f} ms CPU (median of 5)")


def projected_review(tmp: Path) -> None:
    """review and check-jsonschema side by side on the projected workload."""
    import workload
    from bench_contract import find_check_jsonschema

    n = int(os.environ.get("BENCH_PROJECTED", "10000"))
    rounds = int(os.environ.get("BENCH_CONTRACT_ROUNDS", "2"))
    catalog = workload.projected_catalog(n)
    print(f"projected workload: {n} documents, one JSON file each, in {catalog}")
    rt = [sys.executable, "-m", "risutools", "review", str(catalog), "-f", "json", "-q", "-o",
          str(tmp / "review-projected.json")]
    cjs = find_check_jsonschema()
    if cjs is None:
        cpu, wall, peak, rc = workload.run_process(rt)
        print(f"risutools review: CPU {cpu:.2f} s, wall {wall:.2f} s, peak {peak:.0f} MiB, "
              f"exit {rc}")
        print("check-jsonschema side by side: SKIPPED (not installed: set "
              "CHECK_JSONSCHEMA=/path/to/check-jsonschema or allow the bench venv)")
        return
    files = [os.path.relpath(f, catalog.parent) for f in workload.document_files(catalog)]
    peer = [cjs, "--schemafile", str(ROOT / "schemas" / "matrix-component-v1.schema.json"),
            *files]
    r = workload.side_by_side(rt, peer, rounds, cwd=catalog.parent)
    print(workload.load_line())
    print(f"risutools review (-f json, all cores): CPU {r['a_cpu']:.2f} s, wall "
          f"{r['a_wall']:.2f} s, peak {r['a_peak']:.0f} MiB, exit {r['a_rc']}")
    print(f"check-jsonschema (schema only): CPU {r['b_cpu']:.2f} s, wall {r['b_wall']:.2f} s, "
          f"peak {r['b_peak']:.0f} MiB, exit {r['b_rc']}")
    print(f"CPU ratio risutools review / check-jsonschema: {r['ratio']:.2f}x (pairs "
          f"{r['ratio_min']:.2f}-{r['ratio_max']:.2f}, median of {rounds}; goal <= 0.35x)")


def approved_review(tmp: Path) -> None:
    """review beside check-jsonschema on the projected catalog with an approval record for
    four documents in five (``workload.approved_catalog``): the board reads each candidate's
    own records (before, every record for every candidate: 48 s CPU at 10,000)."""
    import workload
    from bench_contract import find_check_jsonschema

    n = int(os.environ.get("BENCH_PROJECTED", "10000"))
    rounds = int(os.environ.get("BENCH_CONTRACT_ROUNDS", "2"))
    catalog = workload.approved_catalog(n)
    records = sum(1 for _ in (catalog / "approvals").iterdir())
    print(f"projected workload with {records} approval records: {n} documents in {catalog}")
    rt = [sys.executable, "-m", "risutools", "review", str(catalog), "-f", "json", "-q", "-o",
          str(tmp / "review-approved.json")]
    cjs = find_check_jsonschema()
    if cjs is None:
        cpu, wall, peak, rc = workload.run_process(rt)
        print(f"risutools review: CPU {cpu:.2f} s, wall {wall:.2f} s, peak {peak:.0f} MiB, "
              f"exit {rc}; check-jsonschema side by side: SKIPPED (not installed)")
        return
    files = [os.path.relpath(f, catalog.parent) for f in workload.document_files(catalog)]
    peer = [cjs, "--schemafile", str(ROOT / "schemas" / "matrix-component-v1.schema.json"),
            *files]
    r = workload.side_by_side(rt, peer, rounds, cwd=catalog.parent)
    print(f"risutools review (-f json, all cores): CPU {r['a_cpu']:.2f} s, wall "
          f"{r['a_wall']:.2f} s, peak {r['a_peak']:.0f} MiB, exit {r['a_rc']}")
    print(f"check-jsonschema (schema only): CPU {r['b_cpu']:.2f} s, exit {r['b_rc']}")
    print(f"CPU ratio: {r['ratio']:.2f}x (pairs {r['ratio_min']:.2f}-{r['ratio_max']:.2f}, "
          f"median of {rounds})")


def review_scale(tmp: Path) -> None:
    """Peak memory as the catalog grows: ``review -f json`` (all cores) on the projected
    documents copied to ``BENCH_REVIEW_SCALE`` sizes (default 10,000, 20,000, 50,000; one
    file each); goal <= 300 MB at 50,000, flat in the catalog's size.  Then the largest
    size with the documents' facts, with their facts and capabilities drawn anew for each
    document (``workload.scaled_catalog(varied=True)``), and the same with facts as large
    as a real module's (``rich=True``); and the documents projected from the real corpus
    (``workload.real_catalog``), ``-j 1`` and on all cores, when the corpus is there."""
    import workload

    sizes = [int(x) for x in os.environ.get("BENCH_REVIEW_SCALE",
                                            "10000,20000,50000").split(",") if x]
    seen: list[tuple[int, float]] = []
    for n in sizes:
        catalog = workload.scaled_catalog(n)
        cpu, wall, peak, rc = workload.run_process(
            [sys.executable, "-m", "risutools", "review", str(catalog), "-f", "json", "-q",
             "-o", str(tmp / "review-scale.json")])
        seen.append((n, peak))
        print(f"review of {n:,} projected documents (one file each, -f json, all cores): CPU "
              f"{cpu:.2f} s ({cpu / n * 1e3:.2f} ms a document), wall {wall:.2f} s, peak "
              f"{peak:.0f} MiB, exit {rc}")
    if len(seen) > 1:
        (n0, p0), (n1, p1) = seen[0], seen[-1]
        print(f"peak grows {(p1 - p0) * 1024 / (n1 - n0):.1f} KiB a document from {n0:,} to "
              f"{n1:,} (goal: <= 300 MB at 50,000)")
    # the largest size again with each copy's facts: what ingest writes beside every module
    # (read by the interactions), every copy then a repost of its original (the lineages)
    # and again with each document's capabilities its own (drawn from the vocabulary: what
    # a catalog of many authors has, where the copies share theirs)
    n = sizes[-1]
    for varied, rich, what in (
            (False, False, ""), (True, False, ", capabilities drawn anew for each"),
            (True, True, ", capabilities drawn anew, facts the size of real modules'")):
        catalog = workload.scaled_catalog(n, facts=True, varied=varied, rich=rich)
        cpu, wall, peak, rc = workload.run_process(
            [sys.executable, "-m", "risutools", "review", str(catalog), "-f", "json", "-q",
             "-o", str(tmp / "review-scale.json")])
        print(f"review of {n:,} projected documents with their facts, every copy a repost"
              f"{what}: CPU {cpu:.2f} s ({cpu / n * 1e3:.2f} ms a document), wall "
              f"{wall:.2f} s, peak {peak:.0f} MiB, exit {rc}")
    # and the documents projected from the real corpus, with their facts (larger documents,
    # real modules' facts; every copy a repost: lineages of thousands), where it is at hand
    if not any(c.is_dir() for c in workload.CORPUS):
        print(f"review of {n:,} documents projected from the real corpus: SKIPPED (no "
              f"corpus at {workload.CORPUS[0]})")
        return
    catalog = workload.real_catalog(n)
    for jobs in (["-j", "1"], []):
        cpu, wall, peak, rc = workload.run_process(
            [sys.executable, "-m", "risutools", "review", str(catalog), "-f", "json", "-q",
             "-o", str(tmp / "review-scale.json"), *jobs])
        print(f"review of {n:,} documents projected from the real corpus with their facts"
              f" ({'-j 1' if jobs else 'all cores'}): CPU {cpu:.2f} s ({cpu / n * 1e3:.2f} ms"
              f" a document), wall {wall:.2f} s, peak {peak:.0f} MiB, exit {rc}")


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    print(f"cores: {os.cpu_count()}, load average {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory(prefix="risutools-bench-review-") as t:
        projected_review(Path(t))
        print()
        approved_review(Path(t))
        print()
        review_scale(Path(t))
        print()
    with tempfile.TemporaryDirectory(prefix="risutools-bench-review-") as t:
        tmp = Path(t)
        bench_promote(tmp)
        bench_review(n, tmp)


if __name__ == "__main__":
    main()
