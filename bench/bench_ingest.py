"""Ingest figures (issue 4).

Generates (once, reused) a tree of 2,000 source files with assets: mostly
``.risum`` modules, some ``.charx`` cards carrying a ``module.risum``, a few
JSON exports; sizes follow a long-tailed distribution like a real collection
(most files small, a few tens of MB).  Then prints:

* plain SHA-256 over the same bytes (read + hashlib), 1 process and all cores:
  the floor;
* ``ingest`` on 1 core and on all cores: files/s, MB/s, and the ratio to the floor;
* a re-run with the cache after adding 10 new files;
* peak RSS of an ingest over small files vs over large files (memory stays flat).

The tree lives in ``$RISUTOOLS_BENCH_DIR`` (default ``/tmp/risutools-bench``).
Figures are warm-cache (the files are in the page cache after generation).
Environment: ``BENCH_INGEST_FILES`` (2000), ``BENCH_INGEST_SCALE`` (1.0; sizes).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import random
import shutil
import subprocess
import sys
import time
import zipfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from risutools.formats.risum import write_risum  # noqa: E402

BASE = Path(os.environ.get("RISUTOOLS_BENCH_DIR", "/tmp/risutools-bench"))
N_FILES = int(os.environ.get("BENCH_INGEST_FILES", "2000"))
SCALE = float(os.environ.get("BENCH_INGEST_SCALE", "1.0"))
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


def _asset_sizes(rng: random.Random) -> list[int]:
    # long tail: most files carry a few small images, some carry tens of MB
    total = int(rng.lognormvariate(12.2, 1.4) * SCALE)  # median ~200 KB
    if rng.random() < 0.02:
        total = int(rng.uniform(20e6, 60e6) * SCALE)
    total = min(total, int(80e6 * SCALE))
    parts = max(1, min(12, total // 150_000))
    return [max(16, total // parts)] * parts


def _write_file(path: Path, i: int, rng: random.Random) -> int:
    sizes = _asset_sizes(rng)
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


def make_tree(root: Path, n: int, seed: int = 7) -> tuple[int, int]:
    marker = root / ".complete"
    if marker.exists() and marker.read_text() == f"{n} {seed} {SCALE}":
        files = [p for p in root.rglob("*") if p.is_file() and p.name != ".complete"]
        return len(files), sum(p.stat().st_size for p in files)
    shutil.rmtree(root, ignore_errors=True)
    rng = random.Random(seed)
    total = 0
    for i in range(n):
        sub = root / f"batch{i // 250:02d}"
        sub.mkdir(parents=True, exist_ok=True)
        total += _write_file(sub / f"{100000 + i}_bench-{i}", i, rng)
    marker.write_text(f"{n} {seed} {SCALE}")
    return n, total


def _sha(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb", buffering=0) as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def floor(paths: list[str], workers: int) -> float:
    t = time.perf_counter()
    if workers == 1:
        for p in paths:
            _sha(p)
    else:
        with ProcessPoolExecutor(workers) as pool:
            list(pool.map(_sha, paths, chunksize=8))
    return time.perf_counter() - t


def run_ingest(src: Path, out: Path, jobs: int, cache: bool = False) -> tuple[float, float]:
    """Run the real CLI in a subprocess; returns (seconds, peak RSS MB of the run)."""
    cmd = [sys.executable, "-m", "risutools", "ingest", str(src), "-o", str(out), "-q"]
    cmd += ["-j", str(jobs)]
    if not cache:
        cmd.append("--no-cache")
    code = (
        "import resource, subprocess, sys, time;"
        "t=time.perf_counter();"
        f"rc=subprocess.call({cmd!r});"
        "dt=time.perf_counter()-t;"
        "r=resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss;"
        "print(dt, r/1024, rc)"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    outp = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    dt, rss, rc = outp.stdout.split()
    if rc not in ("0",):
        print(f"   (ingest exit code {rc})")
    return float(dt), float(rss)


def main() -> None:
    src = BASE / f"tree-{N_FILES}-x{SCALE:g}"
    print(f"generating/reusing {N_FILES} files under {src} ...", flush=True)
    n, total = make_tree(src, N_FILES)
    print(f"tree: {n} files, {total / 1e9:.2f} GB")
    paths = sorted(str(p) for p in src.rglob("*") if p.is_file() and p.name != ".complete")
    floor(paths, 1)  # warm the page cache
    f1 = floor(paths, 1)
    fn = floor(paths, CORES)
    print(f"floor sha256, 1 process : {f1:6.2f} s  {total / f1 / 1e6:8.1f} MB/s")
    print(f"floor sha256, {CORES} processes: {fn:6.2f} s  {total / fn / 1e6:8.1f} MB/s")
    out = BASE / f"catalog-{N_FILES}-x{SCALE:g}"
    for jobs, fl in ((1, f1), (CORES, fn)):
        shutil.rmtree(out, ignore_errors=True)
        dt, rss = run_ingest(src, out, jobs)
        print(
            f"ingest -j {jobs}: {dt:6.2f} s  {n / dt:7.1f} files/s  {total / dt / 1e6:8.1f} MB/s"
            f"  = {fl / dt * 100:5.1f}% of the sha256 floor  (peak RSS {rss:.0f} MB)"
        )
    # incremental re-run: 10 new files among the rest, with the cache
    shutil.rmtree(out, ignore_errors=True)
    run_ingest(src, out, CORES, cache=True)
    extra = src / "zz-new"
    shutil.rmtree(extra, ignore_errors=True)
    extra.mkdir()
    rng = random.Random(99)
    for i in range(10):
        _write_file(extra / f"{900000 + i}_new-{i}", 900000 + i, rng)
    dt, _ = run_ingest(src, out, CORES, cache=True)
    print(f"re-run with cache, 10 new files among {n}: {dt:.2f} s")
    shutil.rmtree(extra, ignore_errors=True)
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
        dt, rss = run_ingest(mem, BASE / f"mem-out-{size}", 1)
        print(f"peak RSS, {label}: {rss:.0f} MB ({dt:.2f} s)")
        shutil.rmtree(mem, ignore_errors=True)
        shutil.rmtree(BASE / f"mem-out-{size}", ignore_errors=True)


if __name__ == "__main__":
    main()
