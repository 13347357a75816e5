"""Write-path figures (issue 8): what the lock and the compare-and-swap cost per write.

For N writes of a 4 KiB document into one folder (tmp, the machine's file system), prints
the mean time per write of:

* ``atomic_write`` with no base (plain: temp file, fsync, rename, fsync of the folder);
* ``atomic_write(expect_sha256=...)``: the same plus the folder lock and the hash check;
* the lock alone (acquire + release of ``write_lock``, uncontended);
* ``append_line`` to a log (lock, O_APPEND write, fsync);
* ``append_line(expect_size=...)`` on a 10,000-line log (the promote case).

Environment: ``BENCH_WRITES`` (default 300).
"""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from risutools.fsio import append_line, atomic_write, write_lock  # noqa: E402

N = int(os.environ.get("BENCH_WRITES", "300"))


def per_write(label: str, fn: object, n: int = N) -> float:
    assert callable(fn)
    t0 = time.perf_counter()
    for i in range(n):
        fn(i)
    ms = (time.perf_counter() - t0) / n * 1000
    print(f"{label:<52} {ms:8.3f} ms per write")
    return ms


def main() -> None:
    with tempfile.TemporaryDirectory(dir=os.environ.get("RISUTOOLS_BENCH_DIR")) as d:
        folder = Path(d)
        doc = folder / "doc.json"
        data = [bytes([65 + i % 26]) * 4096 for i in range(N + 1)]
        atomic_write(doc, data[0])
        plain = per_write("atomic_write, plain (no lock)", lambda i: atomic_write(doc, data[i]))
        cur = {"h": hashlib.sha256(data[N - 1]).hexdigest()}

        def cas(i: int) -> None:
            atomic_write(doc, data[i], expect_sha256=cur["h"])
            cur["h"] = hashlib.sha256(data[i]).hexdigest()

        atomic_write(doc, data[N - 1])
        locked = per_write("atomic_write, compare-and-swap (lock + hash)", cas)
        print(f"{'  cost of lock + check over a plain write':<52} {locked - plain:8.3f} ms")

        def lock_only(_i: int) -> None:
            with write_lock(doc):
                pass

        per_write("write_lock acquire + release alone", lock_only, n=N * 10)
        log = folder / "transitions.ndjson"
        line = b'{"from":"candidate","to":"pending_human_review","base":"' + b"a" * 64 + b'"}'
        per_write("append_line (lock, O_APPEND, fsync)", lambda _i: append_line(log, line))
        big = folder / "big.ndjson"
        big.write_bytes((line + b"\n") * 10_000)
        size = {"n": big.stat().st_size}

        def append_cas(_i: int) -> None:
            size["n"] = append_line(big, line, expect_size=size["n"]) + len(line) + 1

        per_write("append_line(expect_size) on a 10,000-line log", append_cas)


if __name__ == "__main__":
    main()
