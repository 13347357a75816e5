"""Figures for risutools.formats (a plain script; run: PYTHONPATH=. python bench/bench_formats.py).

1. RPack decode throughput vs ``bytes.translate`` on the same buffer.
2. A .risum with ~1 GiB of assets (written sparse into a temp dir, deleted after):
   reading the module (assets seeked past) vs the same module with tiny assets;
   single-pass ``read_path`` (hash + frames) vs plain hashlib.sha256 over the file;
   peak RSS of a process doing that read.
3. ``inspect`` over a folder of 1,000 small modules: files per second.
4. Bounds (issue 8): the worst input each reader accepts at its size limit, and the
   hostile corpus of ``fixtures/build_fixtures.py`` (bombs by ZIP method, msgpack
   envelope bombs, quadratic-trigger JSON...): peak memory (VmHWM of a child process)
   and time of each; then each linear scan timed at n and 4n (the ratio shows linearity).

Options: ``--asset-mib N`` (default 1024), ``--dense`` (write real bytes instead of a
sparse file), ``--files N`` (default 1000), ``--only bounds`` (just section 4).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from risutools.formats import read_path, rpack  # noqa: E402
from risutools.formats.risum import main_block, read_risum, write_risum  # noqa: E402
from risutools.formats.summary import summarize  # noqa: E402

MIB = 1024 * 1024


def best(fn, repeat: int = 5) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def bench_rpack() -> None:
    buf = os.urandom(64 * MIB)
    t_dec = best(lambda: rpack.decode(buf))
    t_tr = best(lambda: buf.translate(rpack.DECODE_TABLE))
    t_enc = best(lambda: rpack.encode(buf))
    mb = len(buf) / MIB
    print(f"rpack.decode      : {mb / t_dec:8.0f} MB/s   (64 MiB buffer, best of 5)")
    print(f"bytes.translate   : {mb / t_tr:8.0f} MB/s   (same buffer, same table)")
    print(f"rpack.encode      : {mb / t_enc:8.0f} MB/s")
    print(f"decode / translate: {t_tr / t_dec:8.2f}x")


def _module() -> dict[str, object]:
    src = ROOT / "fixtures" / "modules" / "174678332_context-cutter.json"
    mod = json.loads(src.read_text(encoding="utf-8"))
    return dict(mod)


def write_big(path: Path, total: int, parts: int, dense: bool) -> None:
    """A .risum whose assets total ``total`` bytes; plain asset bytes 0x2c encode to 0x00."""
    module = _module()
    module["assets"] = [[f"big{i}", "", "bin"] for i in range(parts)]
    main = main_block(module)
    each = total // parts
    with open(path, "wb") as f:
        f.write(b"\x6f\x00" + struct.pack("<I", len(main)) + rpack.encode(main))
        for _ in range(parts):
            f.write(b"\x01" + struct.pack("<I", each))
            if dense:
                block = bytes(MIB)
                left = each
                while left:
                    n = min(left, MIB)
                    f.write(block[:n])
                    left -= n
            else:
                f.seek(each, os.SEEK_CUR)
        f.write(b"\x00")


def _sha256_plain(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb", buffering=0) as f:
        buf = bytearray(MIB)
        view = memoryview(buf)
        while n := f.readinto(buf):
            h.update(view[:n])
    return h.hexdigest()


# VmHWM (peak resident set of this process image; ru_maxrss would carry over the
# parent's peak across fork+exec on Linux, so it is only the fallback).
_PEAK = (
    "def peak_kb():\n"
    "    try:\n"
    "        for line in open('/proc/self/status'):\n"
    "            if line.startswith('VmHWM:'):\n"
    "                return int(line.split()[1])\n"
    "    except OSError:\n"
    "        pass\n"
    "    import resource\n"
    "    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
)


def _child_peak(path: Path) -> tuple[float, int]:
    code = (
        _PEAK + "import sys,time\n"
        f"sys.path.insert(0, {str(ROOT)!r})\n"
        "from risutools.formats import read_path\n"
        "t=time.perf_counter()\n"
        f"m=read_path({str(path)!r})\n"
        "dt=time.perf_counter()-t\n"
        "print(dt, peak_kb())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    dt, rss = out.stdout.split()
    return float(dt), int(rss)


def _child_baseline() -> int:
    code = (
        _PEAK + "import sys\n"
        f"sys.path.insert(0, {str(ROOT)!r})\n"
        "from risutools.formats import read_path\n"
        "print(peak_kb())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return int(out.stdout)


def bench_big(asset_mib: int, dense: bool) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="risu-bench-"))
    try:
        big, small = tmp / "big.risum", tmp / "small.risum"
        t = time.perf_counter()
        write_big(big, asset_mib * MIB, 4, dense)
        print(f"wrote {big.stat().st_size / MIB:.0f} MiB .risum ({'dense' if dense else 'sparse'}) "
              f"in {time.perf_counter() - t:.1f}s")  # fmt: skip
        write_big(small, 4 * 1024, 4, True)
        t_small = best(lambda: read_risum(small), 20)
        t_big = best(lambda: read_risum(big), 20)
        m = read_risum(big)
        assert m.name and len(m.assets) == 4 and m.assets[0].head == b"\x2c" * 16
        print(f"module read, 4 KiB of assets : {t_small * 1000:7.2f} ms  (assets seeked past)")
        print(f"module read, {asset_mib} MiB of assets: {t_big * 1000:7.2f} ms  "
              f"(ratio {t_big / t_small:.2f}x)")  # fmt: skip
        size_mb = big.stat().st_size / MIB
        _sha256_plain(big)  # warm the page cache
        t_plain = t_read = float("inf")
        for _ in range(3):  # interleaved, so page-cache state favours neither side
            t_plain = min(t_plain, best(lambda: _sha256_plain(big), 1))
            t_read = min(t_read, best(lambda: read_path(big), 1))
        (mod,) = read_path(big)
        assert mod.source is not None and mod.source.sha256 == _sha256_plain(big)
        print(f"hashlib.sha256 over the file : {size_mb / t_plain:7.0f} MB/s")
        print(f"read_path (hash + frames)    : {size_mb / t_read:7.0f} MB/s  "
              f"= {100 * t_plain / t_read:.0f}% of plain sha256 (goal >= 80%)")  # fmt: skip
        _dt, rss = _child_peak(big)
        base = _child_baseline()
        print(f"peak RSS of a process reading it: {rss / 1024:.1f} MB "
              f"(interpreter + imports alone: {base / 1024:.1f} MB; goal < 100 MB)")  # fmt: skip
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def bench_inspect(n: int) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="risu-bench-inspect-"))
    try:
        sources = [p for p in sorted((ROOT / "fixtures" / "modules").glob("*.json"))
                   if p.name.count(".") == 1]  # fmt: skip
        mods = [json.loads(p.read_text(encoding="utf-8")) for p in sources]
        files = []
        for i in range(n):
            mod = dict(mods[i % len(mods)])
            mod["id"] = f"bench-{i:05d}"
            mod.pop("assets", None)
            p = tmp / f"{100000 + i}_bench.risum"
            p.write_bytes(write_risum(mod, []))
            files.append(str(p))
        t = time.perf_counter()
        for f in files:
            for m in read_path(f):
                summarize(m)
        dt = time.perf_counter() - t
        print(f"read_path + summarize (in process): {n / dt:7.0f} files/s ({n} files)")
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        t = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "risutools", "inspect", "--json", *files],
                              capture_output=True, env=env)  # fmt: skip
        dt = time.perf_counter() - t
        assert proc.returncode == 0, proc.stderr[-500:]
        print(f"risutools inspect --json (CLI)    : {n / dt:7.0f} files/s ({n} files, "
              f"{dt:.2f}s incl. start-up)")  # fmt: skip
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# -- 4. bounds: worst cases at the size limits, hostile corpus, linearity ---------


def _child_run(path: Path) -> tuple[float, int, str]:
    """(seconds, peak KB, result line) of ``read_path`` in a fresh child process."""
    code = (
        _PEAK + "import sys,time\n"
        f"sys.path.insert(0, {str(ROOT)!r})\n"
        "from risutools.errors import RisuError\n"
        "from risutools.formats import read_path\n"
        "t=time.perf_counter()\n"
        "try:\n"
        f"    m=read_path({str(path)!r}); line='read: %d module(s)' % len(m)\n"
        "except RisuError as e:\n"
        "    line=e.code\n"
        "dt=time.perf_counter()-t\n"
        "print(dt, peak_kb(), line)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    dt, rss, line = out.stdout.split(maxsplit=2)
    return float(dt), int(rss), line.strip()


def _limit_inputs() -> dict[str, bytes]:
    """The largest input each reader accepts, shaped to cost the most memory."""
    import gzip
    import zipfile

    import msgpack
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    from risutools.formats import charx, jsonscan, reader, risup
    from risutools.formats.risum import MAX_MAIN_BYTES

    out: dict[str, bytes] = {}
    # JSON export: just under the file, container and value bounds; values are
    # 1-key objects holding a 40-byte string (the costliest shape per byte)
    import base64
    import random

    n = (jsonscan.MAX_JSON_VALUES - 100) // 3  # each element: 1 object, 1 colon, 1 comma
    body = b'{"k":"' + b"x" * 40 + b'"},'
    rnd = random.Random(0)

    def pad(k: int) -> bytes:  # incompressible-ish text (base64 of pseudo-random bytes)
        return base64.b64encode(rnd.randbytes(max(k, 0) * 3 // 4 + 3))[: max(k, 0)]

    fill = reader.MAX_JSON_BYTES - 200 - n * len(body)
    text = (b'{"type": "risuModule", "name": "limit", "id": "limit", "pad": "'
            + pad(fill) + b'", "x": [' + body * n + b'{}]}')  # fmt: skip
    out["json-export-at-limit.json"] = text
    # .risum: the same text as the 64 MiB main block
    main = (b'{"type": "risuModule", "module": {"name": "limit", "id": "limit", "pad": "'
            + pad(MAX_MAIN_BYTES - 300 - n * len(body)) + b'", "x": ['
            + body * n + b"{}]}}")  # fmt: skip
    out["risum-main-at-limit.risum"] = (
        b"\x6f\x00" + struct.pack("<I", len(main)) + rpack.encode(main) + b"\x00"
    )
    # .charx: a module.risum member at the 50 MiB member bound (deflate, ratio < 200)
    mod = (b'{"type": "risuModule", "module": {"name": "limit", "id": "limit", "pad": "'
           + pad(charx.MAX_MEMBER_BYTES - 1000 - n * len(body)) + b'", "x": ['
           + body * n + b"{}]}}")  # fmt: skip
    risum = b"\x6f\x00" + struct.pack("<I", len(mod)) + rpack.encode(mod) + b"\x00"
    import io

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("card.json", json.dumps({"spec": "chara_card_v3", "data": {"name": "c"}}))
        zf.writestr("module.risum", risum, compresslevel=1)
    out["charx-member-at-limit.charx"] = buf.getvalue()
    # .risup: a preset of just under 1 M msgpack values, 1-key maps with 40-byte strings
    items = risup.MAX_MSGPACK_ITEMS // 3 - 10
    preset = msgpack.packb({"name": "limit", "x": [{"k": "x" * 40} for _ in range(items)]})
    sealed = AESGCM(risup.KEY).encrypt(risup.IV, preset, None)
    env = msgpack.packb({"presetVersion": 2, "type": "preset", "preset": sealed})
    out["risup-at-limit.risup"] = rpack.encode(gzip.compress(env, compresslevel=1, mtime=0))
    # .risup: one incompressible binary filling the 64 MiB file bound
    blob = rnd.randbytes(risup.MAX_FILE_BYTES - 4 * MIB)
    sealed = AESGCM(risup.KEY).encrypt(risup.IV, msgpack.packb({"b": blob}), None)
    env = msgpack.packb({"presetVersion": 2, "type": "preset", "preset": sealed})
    out["risup-binary-at-limit.risup"] = rpack.encode(gzip.compress(env, compresslevel=1,
                                                                    mtime=0))  # fmt: skip
    return out


def bench_bounds() -> None:
    sys.path.insert(0, str(ROOT / "fixtures"))
    import build_fixtures as b  # type: ignore[import-not-found]

    tmp = Path(tempfile.mkdtemp(prefix="risu-bench-bounds-"))
    try:
        print("worst accepted input of each reader at its size limit (child process):")
        print(f"{'input':32} {'size':>9} {'time':>7} {'peak':>8}  result")
        for name, data in _limit_inputs().items():
            p = tmp / name
            p.write_bytes(data)
            dt, rss, line = _child_run(p)
            print(f"{name:32} {len(data) / MIB:7.1f}Mi {dt:6.2f}s {rss / 1024:6.0f}MB  {line}")
            p.unlink()
        print("\nhostile corpus (build_fixtures.hostile(64) + hostile_large()):")
        print(f"{'input':32} {'size':>9} {'time':>7} {'peak':>8}  result")
        for name, data in sorted({**b.hostile(64), **b.hostile_large()}.items()):
            p = tmp / name
            p.write_bytes(data)
            dt, rss, line = _child_run(p)
            print(f"{name:32} {len(data) / MIB:7.2f}Mi {dt:6.2f}s {rss / 1024:6.0f}MB  {line}")
            p.unlink()
        print(f"(interpreter + imports alone: {_child_baseline() / 1024:.0f} MB)")
        bench_linear()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def bench_linear() -> None:
    from risutools.errors import FormatError
    from risutools.formats import charx, jsonscan, risup

    def quadratic(n: int) -> bytes:
        return b'{"type": "risuModule", "x": ' + b"[" * 300 + b'"' + b'\\"' * (n // 2)

    def attempt(fn) -> None:  # type: ignore[no-untyped-def]
        """Run a scan that may refuse its input (its time is what is measured: linear)."""
        try:
            fn()
        except FormatError:
            return

    cases = []
    for n in (4 * MIB, 16 * MIB):
        raw = quadratic(n)

        def pre(raw: bytes = raw) -> None:
            attempt(lambda: jsonscan.precheck(raw, where=""))

        cases.append(("JSON precheck, unterminated \\\" string", n, best(pre, 3)))
    for n in (2 * MIB, 8 * MIB):  # (detection itself only ever scans a 1 MiB peek)
        text = quadratic(n).decode()
        cases.append(("detection key scan, same input", n,
                      best(lambda text=text: jsonscan.top_level_keys(text), 3)))  # fmt: skip
    for n in (4 * MIB, 16 * MIB):
        unit = b'"' + b'a\\"' * 20 + b'",'  # 20 escapes a value, under the value bound
        valid = b'{"type": "risuModule", "x": [' + unit * (n // len(unit)) + b'""]}'
        cases.append(("JSON precheck, valid escapes", n,
                      best(lambda valid=valid: jsonscan.precheck(valid, where=""), 3)))  # fmt: skip
    for k in (200_000, 800_000):
        data = b"\xdd" + k.to_bytes(4, "big") + b"\x80" * k
        cases.append(("msgpack walk, empty maps", k,
                      best(lambda data=data: risup.msgpack_shape(data, "x"), 3)))  # fmt: skip
    for k in (16, 64):  # a deflate member that inflates k MiB, streamed to the end
        import io

        unit = os.urandom(MIB)  # incompressible: below the ratio bound
        stream, crc, size = __import__("build_fixtures").deflate_repeat(b"", unit, k)
        z = __import__("build_fixtures").raw_zip([("card.json", 8, stream, crc, size)])

        def inflate(z: bytes = z) -> None:
            zf = charx.open_zip(io.BytesIO(z))
            for _ in charx.iter_member(zf, zf.infolist()[0], limit=1 << 40):
                pass

        cases.append(("ZIP deflate stream (MiB out)", k, best(inflate, 3)))
    for k in (10_000, 40_000):
        entries = b"".join(
            struct.pack("<4s6H3L5H2L", b"PK\x01\x02", 0x314, 20, 0x800, 0, 0, 0x21, 0, 0, 0,
                        8, 0, 0, 0, 0, 0, 0) + b"%08d" % i for i in range(k)
        )  # fmt: skip
        z = entries + struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, k, k, len(entries), 0, 0)

        def directory(z: bytes = z) -> None:
            import io

            charx.open_zip(io.BytesIO(z))

        cases.append(("ZIP directory parse (entries)", k, best(directory, 3)))
    print("\nlinearity: each scan at n and 4n (ratio ~4 = linear):")
    for i in range(0, len(cases), 2):
        (what, n1, t1), (_, _, t2) = cases[i], cases[i + 1]
        print(f"{what:40} n={n1:>9}: {t1 * 1000:8.1f} ms   4n: {t2 * 1000:8.1f} ms   "
              f"ratio {t2 / t1:4.1f}")  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--asset-mib", type=int, default=1024)
    ap.add_argument("--dense", action="store_true")
    ap.add_argument("--files", type=int, default=1000)
    ap.add_argument("--only", choices=["bounds"])
    args = ap.parse_args()
    if args.only == "bounds":
        print("# bounds")
        bench_bounds()
        return
    print("# RPack")
    bench_rpack()
    print(f"\n# .risum with {args.asset_mib} MiB of assets")
    bench_big(args.asset_mib, args.dense)
    print(f"\n# inspect on {args.files} small modules")
    bench_inspect(args.files)
    print("\n# bounds")
    bench_bounds()


if __name__ == "__main__":
    main()
