"""Ingest figures (issues 4 and 12).

Generates (once, reused) two trees of source files with assets: mostly ``.risum``
modules, some ``.charx`` cards carrying a ``module.risum``, a few JSON exports; sizes
follow a long-tailed distribution like a real collection.

* the **small-file** tree: 2,000 files, ~1.3 MB average (2.5 GB);
* the **large-file** tree: 250 files at 10x the sizes, ~13 MB average (~3.2 GB).

For each tree, ``BENCH_INGEST_ROUNDS`` (3) rounds, each measuring back to back (so a
machine shared with other jobs loads both sides alike):

* the floor: plain SHA-256 over the same bytes (read + hashlib, 1 MiB reads) in a
  subprocess, 1 process and a pool of all cores;
* ``risutools ingest -q --no-cache -j N`` (the real CLI in a subprocess, start-up and
  the fsync'd writes of every document included) for N = 1 and all cores.

Each line gives wall time, files/s, MB/s and the ratio floor/ingest, for wall time and
for CPU time (user + sys of the processes: the part of the ratio a busy machine does not
blur); the summary gives the median ratio of the rounds.  Then: a re-run with the cache
after adding 10 new files, and the peak RSS of an ingest over small vs large files.

The trees live in ``$RISUTOOLS_BENCH_DIR`` (default ``/tmp/risutools-bench``); figures are
warm-cache.  Environment: ``BENCH_INGEST_FILES`` (2000), ``BENCH_INGEST_SCALE`` (1.0),
``BENCH_INGEST_LARGE_FILES`` (250), ``BENCH_INGEST_LARGE_SCALE`` (10), ``BENCH_INGEST_ROUNDS``
(3), ``BENCH_INGEST_TREES`` (``small,large``), ``BENCH_INGEST_NO_COMPILE=1`` (the package is
byte-compiled first, as an install is: see :func:`compile_package`); ``BENCH_INGEST_STAGES=1``
prints only where the CPU of the small-file tree goes, stage by stage (sha256 floor,
discovery, ``read_path``, ``project``, rendering, the temp files, one syncfs, the commits,
the CLI's start-up).
"""

from __future__ import annotations

import io
import json
import os
import random
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from risutools.formats.risum import write_risum  # noqa: E402

BASE = Path(os.environ.get("RISUTOOLS_BENCH_DIR", "/tmp/risutools-bench"))
N_FILES = int(os.environ.get("BENCH_INGEST_FILES", "2000"))
SCALE = float(os.environ.get("BENCH_INGEST_SCALE", "1.0"))
LARGE_FILES = int(os.environ.get("BENCH_INGEST_LARGE_FILES", "250"))
LARGE_SCALE = float(os.environ.get("BENCH_INGEST_LARGE_SCALE", "10"))
ROUNDS = int(os.environ.get("BENCH_INGEST_ROUNDS", "3"))
TREES = os.environ.get("BENCH_INGEST_TREES", "small,large").split(",")
CORES = os.cpu_count() or 1

LUA = (
    "-- context helper\n"
    'listenEdit("editRequest", function(id, data)\n'
    '  local n = tonumber(getChatVar(id, "omitted_count")) or 0\n'
    '  setChatVar(id, "omitted_count", tostring(n))\n'
    "  return data\n"
    "end)\n"
)


def _module(i: int, n_assets: int) -> dict[str, object]:
    return {
        "name": f"Bench Module {i}",
        "description": "벤치마크용 모듈 / benchmark module",
        "id": f"00000000-0000-4000-8000-{i:012d}",
        "lorebook": [
            {"key": f"k{j}", "content": "설정 " * 20, "comment": f"entry {j}", "mode": "normal"}
            for j in range(5)
        ],
        "regex": [{"comment": "r", "in": "foo", "out": "bar", "type": "editdisplay"}],
        "trigger": [
            {
                "comment": "lua",
                "type": "start",
                "conditions": [],
                "effect": [{"type": "triggerlua", "code": LUA}],
            }
        ],
        "assets": [[f"img{j}", "", "webp"] for j in range(n_assets)],
    }


def _asset_sizes(rng: random.Random, scale: float) -> list[int]:
    # long tail: most files carry a few small images, some carry tens of MB
    total = int(rng.lognormvariate(12.2, 1.4) * scale)  # median ~200 KB
    if rng.random() < 0.02:
        total = int(rng.uniform(20e6, 60e6) * scale)
    total = min(total, int(80e6 * scale))
    parts = max(1, min(12, total // 150_000))
    return [max(16, total // parts)] * parts


def _write_file(path: Path, i: int, rng: random.Random, scale: float = SCALE) -> int:
    sizes = _asset_sizes(rng, scale)
    blob = rng.randbytes(max(sizes))  # incompressible, like WebP
    assets = [b"RIFF\x00\x00\x00\x00WEBP" + blob[: s - 12] for s in sizes]
    kind = rng.random()
    if kind < 0.10:  # a card carrying a module
        risum = write_risum(_module(i, 0), [])
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
            card = {"spec": "chara_card_v3", "spec_version": "3.0", "data": {"name": f"Char {i}"}}
            z.writestr("card.json", json.dumps(card))
            z.writestr("module.risum", risum)
            for j, a in enumerate(assets):
                z.writestr(f"assets/other/image/{j}.webp", a)
        path = path.with_suffix(".charx")
        path.write_bytes(buf.getvalue())
    elif kind < 0.13:  # a JSON export
        path = path.with_suffix(".json")
        mod = _module(i, 0)
        mod["type"] = "risuModule"
        path.write_text(json.dumps(mod, ensure_ascii=False), encoding="utf-8")
    else:
        path = path.with_suffix(".risum")
        path.write_bytes(write_risum(_module(i, len(assets)), assets))
    return path.stat().st_size


def make_tree(root: Path, n: int, seed: int = 7, scale: float = SCALE) -> tuple[int, int]:
    marker = root / ".complete"
    if marker.exists() and marker.read_text() == f"{n} {seed} {scale}":
        files = [p for p in root.rglob("*") if p.is_file() and p.name != ".complete"]
        return len(files), sum(p.stat().st_size for p in files)
    shutil.rmtree(root, ignore_errors=True)
    rng = random.Random(seed)
    total = 0
    for i in range(n):
        sub = root / f"batch{i // 250:02d}"
        sub.mkdir(parents=True, exist_ok=True)
        total += _write_file(sub / f"{100000 + i}_bench-{i}", i, rng, scale)
    marker.write_text(f"{n} {seed} {scale}")
    return n, total


FLOOR = """
import hashlib, sys
from concurrent.futures import ProcessPoolExecutor
def sha(path):
    h = hashlib.sha256()
    with open(path, "rb", buffering=0) as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()
if __name__ == "__main__":
    paths = open(sys.argv[1], encoding="utf-8").read().splitlines()
    workers = int(sys.argv[2])
    if workers == 1:
        for p in paths:
            sha(p)
    else:
        with ProcessPoolExecutor(workers) as pool:
            list(pool.map(sha, paths, chunksize=8))
"""

TIMED = (
    "import resource, subprocess, sys, time;"
    "cmd=sys.argv[1:];"
    "t=time.perf_counter();"
    "rc=subprocess.call(cmd);"
    "dt=time.perf_counter()-t;"
    "r=resource.getrusage(resource.RUSAGE_CHILDREN);"
    "print(dt, r.ru_utime+r.ru_stime, r.ru_maxrss/1024, rc)"
)


def timed(cmd: list[str]) -> tuple[float, float, float, int]:
    """Run ``cmd`` in a subprocess: (wall s, CPU s of it and its children, peak RSS MB, rc)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    outp = subprocess.run(
        [sys.executable, "-c", TIMED, *cmd], capture_output=True, text=True, env=env,
        check=True,
    )
    dt, cpu, rss, rc = outp.stdout.split()
    return float(dt), float(cpu), float(rss), int(rc)


def floor(paths_file: Path, workers: int) -> tuple[float, float]:
    script = BASE / "floor.py"
    script.write_text(FLOOR, encoding="utf-8")
    dt, cpu, _, _ = timed([sys.executable, str(script), str(paths_file), str(workers)])
    return dt, cpu


def run_ingest(
    src: Path, out: Path, jobs: int, cache: bool = False
) -> tuple[float, float, float]:
    """The real CLI in a subprocess; returns (seconds, CPU seconds, peak RSS MB)."""
    cmd = [sys.executable, "-m", "risutools", "ingest", str(src), "-o", str(out), "-q"]
    cmd += ["-j", str(jobs)]
    if not cache:
        cmd.append("--no-cache")
    dt, cpu, rss, rc = timed(cmd)
    if rc != 0:
        print(f"   (ingest exit code {rc})")
    return dt, cpu, rss


def bench_tree(label: str, n_files: int, scale: float) -> None:
    src = BASE / f"tree-{n_files}-x{scale:g}"
    print(f"\n### {label} files: generating/reusing {n_files} files under {src} ...",
          flush=True)
    n, total = make_tree(src, n_files, scale=scale)
    print(f"tree: {n} files, {total / 1e9:.2f} GB, {total / n / 1e6:.1f} MB a file")
    paths = sorted(str(p) for p in src.rglob("*") if p.is_file() and p.name != ".complete")
    paths_file = BASE / f"paths-{n_files}-x{scale:g}.txt"
    paths_file.write_text("\n".join(paths) + "\n", encoding="utf-8")
    floor(paths_file, 1)  # warm the page cache
    outs = BASE / f"catalogs-{n_files}-x{scale:g}"
    shutil.rmtree(outs, ignore_errors=True)
    ratios: dict[int, list[tuple[float, float]]] = {1: [], CORES: []}
    for r in range(ROUNDS):
        for jobs in (1, CORES):
            fw, fc = floor(paths_file, jobs)
            # a new folder each round, all removed at the end: a catalog deleted just before
            # would make ext4 (without a journal) skip its ~2,000 recently freed inodes on
            # every create of the next run, charging the clean-up to ingest (see RESULTS.md)
            out = outs / f"round{r + 1}-j{jobs}"
            dt, cpu, rss = run_ingest(src, out, jobs)
            ratios[jobs].append((fw / dt, fc / cpu))
            print(
                f"round {r + 1}, -j {jobs}: floor {fw:6.2f} s (cpu {fc:5.2f})  ingest {dt:6.2f} s"
                f" (cpu {cpu:5.2f})  {n / dt:7.1f} files/s  {total / dt / 1e6:7.1f} MB/s"
                f"  = {fw / dt * 100:5.1f}% of the floor (cpu {fc / cpu * 100:5.1f}%)"
                f"  peak RSS {rss:.0f} MB",
                flush=True,
            )
    for jobs, got in ratios.items():
        wall = sorted(w for w, _ in got)[len(got) // 2]
        cpu = sorted(c for _, c in got)[len(got) // 2]
        print(f"{label} files, -j {jobs}: median {wall * 100:.1f}% of the sha256 floor "
              f"(wall), {cpu * 100:.1f}% (CPU), {ROUNDS} rounds")
    shutil.rmtree(outs, ignore_errors=True)


STAGES = """
import os, sys
from pathlib import Path
from risutools import fsio
from risutools.catalog import ingest as ig
from risutools.catalog.render import safe_name
from risutools.formats import read_path
from risutools.projection import post_id_from_name, project
paths, src, out = open(sys.argv[1], encoding="utf-8").read().splitlines(), sys.argv[2], sys.argv[3]
def cpu():
    t = os.times()
    return t.user + t.system
def stage(label, fn):
    t = cpu()
    value = fn()
    print(f"{label:<36} {cpu() - t:6.2f}")
    return value
def sha(p):
    return fsio.sha256_file(p)
[sha(p) for p in paths]  # warm the page cache first: the first pass after other work paid more
stage("sha256 floor (read + hash)", lambda: [sha(p) for p in paths])
stage("discover (walk + detect)", lambda: ig.discover(Path(src)))
mods = stage("read_path (parse + hash)", lambda: [read_path(p) for p in paths])
docs = stage("project", lambda: [project(m, post_id=post_id_from_name(Path(p).name), lang="en")
                                 for p, ms in zip(paths, mods) for m in ms])
texts = stage("render", lambda: [ig.render(d, False) for d in docs])
os.makedirs(out)
staged = stage("stage temp files (no fsync)", lambda: [
    fsio.stage_write(Path(out) / f"{safe_name(d['component_id'])}.json", t.encode(), sync=False)
    for d, t in zip(docs, texts)])
stage("one syncfs", lambda: fsio.sync_filesystem(out) if fsio.syncfs_available() else None)
stage("commit (link, unlink)", lambda: [fsio.commit_staged(s, expect_absent=True, sync_dir=False)
                                        for s in staged])
"""


def stages(n_files: int, scale: float) -> None:
    """Where ingest's CPU goes: each stage over the whole tree in turn, in one process
    (CPU seconds, ``os.times``), then the CLI's start-up on an empty folder."""
    src = BASE / f"tree-{n_files}-x{scale:g}"
    paths_file = BASE / f"paths-{n_files}-x{scale:g}.txt"
    if not paths_file.exists():
        return
    out = BASE / f"stages-out-{os.getpid()}"  # new: see the fresh folders of bench_tree
    print(f"\n### where the CPU goes, {n_files} files (CPU s, one process, stage by stage)")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    got = subprocess.run([sys.executable, "-c", STAGES, str(paths_file), str(src), str(out)],
                         check=True, env=env, capture_output=True, text=True).stdout
    print(got, end="")
    cost = {line[:36].strip(): float(line[36:]) for line in got.splitlines() if line.strip()}
    empty = BASE / "stages-empty"
    shutil.rmtree(empty, ignore_errors=True)
    empty.mkdir()
    _, cpu, _, _ = timed([sys.executable, "-m", "risutools", "ingest", str(empty), "-o",
                          str(BASE / "stages-empty-out"), "-q", "-j", "1", "--no-cache"])
    print(f"{'start-up (interpreter, imports, CLI)':<36} {cpu:6.2f}")
    floor_cpu = cost.pop("sha256 floor (read + hash)")
    total = sum(cost.values()) + cpu
    without = total - cost["project"]
    # the ratio ingest could reach if its stages cost no more than apart, and if analysing
    # and projecting a module cost nothing: what reading, hashing, starting and writing
    # alone leave of the goal (issue 12, goal 4)
    print(f"stage sum {total:.2f} s = {floor_cpu / total * 100:.0f}% of the floor; without "
          f"`project` {without:.2f} s = {floor_cpu / without * 100:.0f}% (the ceiling of any "
          f"ingest that reads, hashes and writes a document per file this way)")
    for folder in (out, empty, BASE / "stages-empty-out"):
        shutil.rmtree(folder, ignore_errors=True)


def compile_package() -> None:
    """Byte-compile risutools once, as installing the wheel does (pip compiles every
    module).  Run from a checkout with ``PYTHONDONTWRITEBYTECODE=1`` (set on the shared
    bench machine) and no ``__pycache__``, every timed CLI run would compile ~60 modules
    from source first: ~0.10 s of CPU that no installed copy pays and the floor's
    one-screen script does not have (see RESULTS.md, "Ingest, round 4").
    ``BENCH_INGEST_NO_COMPILE=1`` leaves the package as it is."""
    if os.environ.get("BENCH_INGEST_NO_COMPILE"):
        return
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "risutools")],
                   check=True, stdout=subprocess.DEVNULL)


def main() -> None:
    BASE.mkdir(parents=True, exist_ok=True)
    print(f"{CORES} cores; load average {os.getloadavg()[0]:.1f} at the start")
    compile_package()
    if os.environ.get("BENCH_INGEST_STAGES"):
        stages(N_FILES, SCALE)
        return
    if "small" in TREES:
        bench_tree("small", N_FILES, SCALE)
    if "large" in TREES:
        bench_tree("large", LARGE_FILES, LARGE_SCALE)
    # incremental re-run: 10 new files among the rest, with the cache
    src = BASE / f"tree-{N_FILES}-x{SCALE:g}"
    n, _ = make_tree(src, N_FILES)
    out = BASE / f"catalog-{N_FILES}-x{SCALE:g}"
    shutil.rmtree(out, ignore_errors=True)
    run_ingest(src, out, CORES, cache=True)
    extra = src / "zz-new"
    shutil.rmtree(extra, ignore_errors=True)
    extra.mkdir()
    rng = random.Random(99)
    for i in range(10):
        _write_file(extra / f"{900000 + i}_new-{i}", 900000 + i, rng)
    dt, _, _ = run_ingest(src, out, CORES, cache=True)
    print(f"\nre-run with cache, 10 new files among {n}: {dt:.2f} s")
    shutil.rmtree(extra, ignore_errors=True)
    shutil.rmtree(out, ignore_errors=True)
    (src / ".complete").touch()
    # memory stays flat as file sizes grow
    for label, size in (("3 files x 2 MB", 2_000_000), ("3 files x 200 MB", 200_000_000)):
        mem = BASE / f"mem-{size}"
        shutil.rmtree(mem, ignore_errors=True)
        mem.mkdir(parents=True)
        blob = os.urandom(1 << 20)
        for i in range(3):
            chunks = [blob] * (size // len(blob))
            (mem / f"{500 + i}_big.risum").write_bytes(
                write_risum(_module(i, len(chunks)), chunks)
            )
        dt, _, rss = run_ingest(mem, BASE / f"mem-out-{size}", 1)
        print(f"peak RSS, {label}: {rss:.0f} MB ({dt:.2f} s)")
        shutil.rmtree(mem, ignore_errors=True)
        shutil.rmtree(BASE / f"mem-out-{size}", ignore_errors=True)


if __name__ == "__main__":
    main()
