"""Hostile catalog paths (issue 8): time and peak memory of `validate` / `verify` when catalog
files, notes or the source store are devices, FIFOs or link cycles.

Each case is the real command line in a child process capped at 1 GiB of address space and
30 s; the figure is the child's own peak RSS (``wait4``).  Prints one row per case.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SEED = ROOT / "fixtures" / "documents" / "seed-000-context-cutter.json"
CAP = 1024 * 1024 * 1024


def _cap() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (CAP, CAP))


def measure(args: list[str], cwd: Path) -> tuple[float, float, int]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    t0 = time.perf_counter()
    p = subprocess.Popen([sys.executable, "-m", "risutools", *args], cwd=cwd, env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         preexec_fn=_cap)
    deadline = t0 + 30
    while True:
        pid, status, usage = os.wait4(p.pid, os.WNOHANG)
        if pid:
            break
        if time.perf_counter() > deadline:
            p.kill()
            pid, status, usage = os.wait4(p.pid, 0)
            return time.perf_counter() - t0, usage.ru_maxrss / 1024, -1
        time.sleep(0.01)
    p.returncode = os.waitstatus_to_exitcode(status)
    return time.perf_counter() - t0, usage.ru_maxrss / 1024, p.returncode


def main() -> None:
    if not os.path.exists("/dev/zero") or not hasattr(os, "mkfifo"):
        print("needs /dev/zero and FIFOs (Linux)")
        return
    tmp = Path(tempfile.mkdtemp(prefix="risutools-bench-paths-"))
    try:
        repo = tmp / "repo"
        (repo / ".git").mkdir(parents=True)
        cat = repo / "cat"
        (cat / "notes").mkdir(parents=True)
        doc = json.loads(SEED.read_text(encoding="utf-8"))
        (cat / "ok.json").write_text(json.dumps(doc), encoding="utf-8")
        (cat / "zero.json").symlink_to("/dev/zero")
        (cat / "zero.ndjson").symlink_to("/dev/zero")
        (cat / "zero.yaml").symlink_to("/dev/zero")
        os.mkfifo(cat / "pipe.json")
        (cat / "notes" / f"{doc['component_id']}.yaml").symlink_to("/dev/zero")
        store = repo / "store"
        store.mkdir()
        (store / "174678332.risum").symlink_to("/dev/zero")
        os.mkfifo(store / "174678332_x.risum")
        (store / "loop").symlink_to(store)
        (store / "dev").symlink_to("/dev")
        cases = [
            ("validate cat/ (3 links to /dev/zero, 1 FIFO)", ["validate", "cat"]),
            ("verify cat/ --sources store (devices, FIFO, cycle)",
             ["verify", "cat", "--sources", "store"]),
            ("verify cat/ --sources /dev (walks /dev)", ["verify", "cat", "--sources", "/dev"]),
        ]
        (repo / ".risutools.yaml").write_text("sources: /dev\n", encoding="utf-8")
        cases.append(("verify cat/ with `sources: /dev` in the config", ["verify", "cat"]))
        print(f"{'case':<55} {'time':>8} {'peak RSS':>10} {'exit':>5}")
        for name, args in cases:
            secs, mib, rc = measure(args, repo)
            shown = "TIMEOUT" if rc == -1 else str(rc)
            print(f"{name:<55} {secs:>7.2f}s {mib:>8.1f} MB {shown:>5}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
