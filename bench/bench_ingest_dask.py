"""Ingest on a Dask cluster vs the local process pool (issue 12, goal 5).

On the small-file tree of ``bench_ingest.py`` (2,000 files, ~1.3 MB average; generated
once and reused), ``BENCH_INGEST_ROUNDS`` (3) rounds, each back to back:

* ``ingest(..., jobs=N)``: the local process pool, N = all cores;
* ``ingest(..., executor=client.get_executor())`` on a ``distributed.LocalCluster`` of N
  worker processes with one thread each (started once, its start-up timed apart).

Both write a fresh catalog (no cache).  Printed: seconds, files/s, and the overhead of
the cluster per file ((cluster - pool) / files).  Skipped, with a line, when
``distributed`` is not installed (``pip install 'risutools[dask]'``).
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_ingest import BASE, CORES, N_FILES, ROUNDS, SCALE, make_tree  # noqa: E402

from risutools.catalog.ingest import ingest  # noqa: E402


def main() -> None:
    try:
        import distributed
    except ImportError:
        print("skipped: distributed is not installed (pip install 'risutools[dask]')")
        return
    src = BASE / f"tree-{N_FILES}-x{SCALE:g}"
    print(f"generating/reusing {N_FILES} files under {src} ...", flush=True)
    n, total = make_tree(src, N_FILES)
    print(f"tree: {n} files, {total / 1e9:.2f} GB; {CORES} cores; "
          f"load average {os.getloadavg()[0]:.1f}")
    out = BASE / "catalog-dask"
    t = time.perf_counter()
    with distributed.LocalCluster(
        n_workers=CORES, processes=True, threads_per_worker=1, dashboard_address=None
    ) as cluster, distributed.Client(cluster) as client:
        print(f"LocalCluster of {CORES} worker processes started in "
              f"{time.perf_counter() - t:.2f} s", flush=True)
        executor = client.get_executor()
        overheads = []
        for r in range(ROUNDS):
            shutil.rmtree(out, ignore_errors=True)
            t = time.perf_counter()
            pool = ingest(src, out, jobs=CORES, use_cache=False)
            tp = time.perf_counter() - t
            shutil.rmtree(out, ignore_errors=True)
            t = time.perf_counter()
            dask = ingest(src, out, executor=executor, use_cache=False)
            td = time.perf_counter() - t
            assert dask.counts() == pool.counts(), (dask.counts(), pool.counts())
            per_file = (td - tp) / n * 1000
            overheads.append(per_file)
            print(f"round {r + 1}: local pool -j {CORES} {tp:6.2f} s ({n / tp:6.1f} files/s)"
                  f"  LocalCluster {td:6.2f} s ({n / td:6.1f} files/s)"
                  f"  overhead {per_file:+.2f} ms a file ({td / tp:.2f}x)", flush=True)
        shutil.rmtree(out, ignore_errors=True)
    mid = sorted(overheads)[len(overheads) // 2]
    print(f"median overhead of the cluster: {mid:+.2f} ms a file, {ROUNDS} rounds")


if __name__ == "__main__":
    main()
