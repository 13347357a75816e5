"""Contract figures: ``validate`` on the catalog users have (one file a document) beside
check-jsonschema, throughput on a 10,000-document NDJSON catalog, and start-up.

Prints:
- the projected workload (issue 23; ``bench/workload.py``): ``BENCH_PROJECTED`` documents
  (default 10,000) made by ``risutools ingest`` from the fixtures' modules, one JSON file
  each, fresh candidates with their MC600 warnings, every 50th with a schema error and
  every 7th an MC401 error; ``risutools validate -f concise FILE...`` and
  ``check-jsonschema --schemafile ... FILE...`` (schema only) as whole processes, in turn,
  ``BENCH_CONTRACT_ROUNDS`` times (default 2) after a warm-up each: CPU (user + system of
  the child), wall, peak RSS, and the CPU ratio pair by pair (goal <= 0.25); a clear line
  instead when check-jsonschema is not there;
- documents/s for ``risutools`` (load + schema + every rule, MC104 included) on one core;
- documents/s for plain ``jsonschema`` (``Draft202012Validator(schema).iter_errors``, the
  same schema, documents parsed with ``json.loads``) on the same catalog;
- ``check-jsonschema`` (the pre-commit schema checker) on the same documents, one file each,
  same schema: ``CHECK_JSONSCHEMA=/path/to/check-jsonschema`` if set, else the script makes
  ``.venv-bench-contract`` in the repository root and installs it there (bench only, never a
  dependency; ``NO_BENCH_VENV=1`` skips it);
- wall time of ``python -m risutools validate <one small file>`` (median of 7) next to
  ``python -c pass``;
- one document with many findings (``hostile_documents``): the seed document with 4,000,
  16,000 and 64,000 unknown capabilities (an MC401 warning each, one to a line) and with
  2,500,000 integers among them (an MC100 error each); ``risutools validate -f json FILE``
  as a whole process: CPU, peak RSS and the findings listed (at most 1,000 a rule and one
  that counts the rest), so that a cost that grows faster than the document shows.
The three run in turn ``BENCH_CONTRACT_ROUNDS`` times (default 2), best time of each.  Each
line gives the wall time and the CPU time (``time.process_time`` in process; the child's user +
system time for check-jsonschema): on a shared machine the CPU ratio is the steadier figure.
Usage: ``python bench/bench_contract.py [N]`` (N: the NDJSON catalog's size, default 10000).
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
SEED = ROOT / "fixtures" / "documents" / "seed-000-context-cutter.json"


def generate(n: int) -> list[str]:
    """n distinct documents: every 50th has a schema error, every 7th a rule finding."""
    import hashlib

    base = json.loads(SEED.read_text(encoding="utf-8"))
    lines = []
    for i in range(n):
        d = copy.deepcopy(base)
        post = str(100000 + i)
        d["component_id"] = f"module.risu.{post}.cutter-{i}"
        d["provenance"]["source_refs"][0]["source_id"] = f"risu:{post}"
        d["provenance"]["source_refs"][0]["sha256"] = "sha256:" + hashlib.sha256(
            post.encode()).hexdigest()
        ev = d["payload"]["idea_layers"]["evidence"]
        ev["source_post"] = post
        ev["lead_id"] = f"risu.deep.module.{post}"
        d["projection"]["prompt"] += f" ({i})"
        d["projection"]["prompt_sha256"] = "sha256:" + hashlib.sha256(
            d["projection"]["prompt"].encode()).hexdigest()
        d["payload"]["triggers"].append(f"요청마다 {i}번째 규칙을 확인한다.")
        if i % 50 == 0:
            d["projection"]["flagship"] = "yes"  # schema error
        if i % 7 == 0:
            d["capabilities"]["requires"].append("hook.unknown_thing")  # MC401
        lines.append(json.dumps(d, ensure_ascii=False))
    return lines


def bench_risutools(path: Path) -> tuple[float, float, int, int]:
    """(wall seconds, CPU seconds, documents, findings)."""
    from risutools.contract.validate import validate_paths

    c = time.process_time()
    t = time.perf_counter()
    r = validate_paths([path])
    dt = time.perf_counter() - t
    return dt, time.process_time() - c, len(r.documents), len(r.findings)


def bench_jsonschema(path: Path) -> tuple[float, int, int]:
    from jsonschema import Draft202012Validator

    from risutools.resources import load_schema

    t = time.perf_counter()
    v = Draft202012Validator(load_schema("matrix-component-v1.schema.json"))
    n = errs = 0
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                n += 1
                errs += len(list(v.iter_errors(json.loads(line))))
    return time.perf_counter() - t, n, errs


def find_check_jsonschema() -> str | None:
    """CHECK_JSONSCHEMA, or check-jsonschema in ``.venv-bench-contract`` (made on first use)."""
    given = os.environ.get("CHECK_JSONSCHEMA")
    if given:
        return given
    venv = ROOT / ".venv-bench-contract"
    exe = venv / "bin" / "check-jsonschema"
    if exe.exists():
        return str(exe)
    if os.environ.get("NO_BENCH_VENV"):
        return None
    print("creating .venv-bench-contract with check-jsonschema (bench only) ...", flush=True)
    try:
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q",
                        "check-jsonschema"], check=True, timeout=600)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as exc:
        print(f"could not set up .venv-bench-contract: {exc}")
        return None
    return str(exe) if exe.exists() else None


def find_ajv() -> str | None:
    """A ``node_modules`` folder holding Ajv (issue 23's higher anchor): ``AJV_NODE_MODULES``,
    or ``.venv-bench-ajv/node_modules`` (``npm install ajv@8`` there on first use); None
    without Node and npm, or with ``NO_BENCH_VENV`` set and nothing installed."""
    given = os.environ.get("AJV_NODE_MODULES")
    if given:
        return given
    folder = ROOT / ".venv-bench-ajv"
    modules = folder / "node_modules"
    if (modules / "ajv").is_dir():
        return str(modules)
    if os.environ.get("NO_BENCH_VENV") or not shutil.which("node") or not shutil.which("npm"):
        return None
    print("installing Ajv into .venv-bench-ajv (bench only) ...", flush=True)
    try:
        folder.mkdir(exist_ok=True)
        subprocess.run(["npm", "install", "--silent", "--prefix", str(folder), "ajv@8"],
                       check=True, timeout=600, capture_output=True)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as exc:
        print(f"could not install Ajv: {exc}")
        return None
    return str(modules) if (modules / "ajv").is_dir() else None


def beside_ajv(files: list[str], cwd: Path, rounds: int) -> None:
    """``validate`` (every rule) beside Ajv (schema only), whole processes in turn, on the
    first 3,000 files (the issue's figure) and on all of them."""
    import workload

    modules = find_ajv()
    if modules is None:
        print("Ajv side by side: SKIPPED (no node/npm: set AJV_NODE_MODULES to a folder "
              "holding ajv)")
        return
    schema = str(ROOT / "schemas" / "matrix-component-v1.schema.json")
    for part in sorted({min(3000, len(files)), len(files)}):
        rt = [sys.executable, "-m", "risutools", "validate", "-f", "concise", *files[:part]]
        ajv = ["node", str(ROOT / "bench" / "ajv_validate.js"), schema, *files[:part]]
        os.environ["AJV_NODE_MODULES"] = modules
        r = workload.side_by_side(rt, ajv, rounds, cwd=cwd)
        print(f"{part} files: risutools validate CPU {r['a_cpu']:.2f} s, Ajv (schema only) CPU "
              f"{r['b_cpu']:.2f} s: {r['ratio']:.2f}x Ajv (pairs {r['ratio_min']:.2f}-"
              f"{r['ratio_max']:.2f}; the issue's aim: within 2x)")


def _children_cpu() -> float:
    import resource

    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def bench_check_jsonschema(cjs: str, path: Path, tmp: Path
                           ) -> tuple[float, float, int, int, int]:
    """(wall seconds, CPU seconds, documents, files with schema errors, exit code); one JSON
    file a document, written into the folder ``tmp`` (once)."""
    schema = ROOT / "schemas" / "matrix-component-v1.schema.json"
    files_dir = tmp
    files_dir.mkdir(exist_ok=True)
    files = []
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
        f = files_dir / f"{i:05d}.json"
        if not f.exists():
            f.write_text(line, encoding="utf-8")
        files.append(str(f))
    c = _children_cpu()
    t = time.perf_counter()
    proc = subprocess.run([cjs, "-o", "json", "--schemafile", str(schema), *files],
                          capture_output=True, check=False)
    dt = time.perf_counter() - t
    cpu = _children_cpu() - c
    try:
        out = json.loads(proc.stdout)
        bad = len({e["filename"] for e in out.get("errors", [])})
    except ValueError:
        bad = -1
    return dt, cpu, len(files), bad, proc.returncode


def projected(cjs: str | None, rounds: int) -> None:
    """validate and check-jsonschema side by side on the projected workload."""
    import workload

    n = int(os.environ.get("BENCH_PROJECTED", "10000"))
    catalog = workload.projected_catalog(n)
    files = [os.path.relpath(f, catalog.parent) for f in workload.document_files(catalog)]
    mb = sum(os.path.getsize(catalog / os.path.basename(f)) for f in files) / 1e6
    print(f"projected workload: {n} documents, one JSON file each ({mb:.1f} MB), in {catalog}")
    if cjs is None:
        print("check-jsonschema side by side: SKIPPED (not installed: set "
              "CHECK_JSONSCHEMA=/path/to/check-jsonschema or allow the bench venv)")
        beside_ajv(files, catalog.parent, rounds)
        return
    rt = [sys.executable, "-m", "risutools", "validate", "-f", "concise", *files]
    peer = [cjs, "--schemafile", str(ROOT / "schemas" / "matrix-component-v1.schema.json"),
            *files]
    r = workload.side_by_side(rt, peer, rounds, cwd=catalog.parent)
    print(workload.load_line())
    print(f"risutools validate (every rule): CPU {r['a_cpu']:.2f} s, wall {r['a_wall']:.2f} s, "
          f"peak {r['a_peak']:.0f} MiB, exit {r['a_rc']}")
    print(f"check-jsonschema (schema only): CPU {r['b_cpu']:.2f} s, wall {r['b_wall']:.2f} s, "
          f"peak {r['b_peak']:.0f} MiB, exit {r['b_rc']}")
    print(f"CPU ratio risutools / check-jsonschema: {r['ratio']:.2f}x (pairs "
          f"{r['ratio_min']:.2f}-{r['ratio_max']:.2f}, median of {rounds}; goal <= 0.25x)")
    beside_ajv(files, catalog.parent, rounds)


def startup(args: list[str], runs: int = 7) -> float:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(args, env=env, capture_output=True, check=False)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def hostile_documents() -> None:
    """``validate`` of one document with thousands of findings (see the module's text)."""
    import workload

    base = json.loads(SEED.read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory() as tmp:
        cases: list[tuple[str, Any, int | None]] = [
            (f"{k:,} unknown capabilities", [f"hook.unknown_{i}" for i in range(k)], 2)
            for k in (4_000, 16_000, 64_000)]
        cases.append(("2,500,000 integers among the capabilities", [0] * 2_500_000, None))
        for label, requires, indent in cases:
            doc = copy.deepcopy(base)
            doc["capabilities"]["requires"] = requires
            path = Path(tmp) / "many.json"
            path.write_text(json.dumps(doc, ensure_ascii=False, indent=indent), "utf-8")
            report = Path(tmp) / "report.json"
            cpu, _wall, peak, rc = workload.run_process(
                [sys.executable, "-m", "risutools", "validate", "-f", "json", "-o",
                 str(report), str(path)], cwd=ROOT)
            listed = len(json.loads(report.read_text("utf-8"))["findings"])
            print(f"one document, {label} ({path.stat().st_size / 1e6:.1f} MB): validate CPU "
                  f"{cpu:.2f} s, peak {peak:.0f} MiB, exit {rc}, {listed:,} findings listed")


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    rounds = int(os.environ.get("BENCH_CONTRACT_ROUNDS", "2"))
    cjs = find_check_jsonschema()
    projected(cjs, rounds)
    print()
    hostile_documents()
    print()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "components.ndjson"
        path.write_text("\n".join(generate(n)) + "\n", encoding="utf-8")
        mb = path.stat().st_size / 1e6
        print(f"catalog: {n} documents, {mb:.1f} MB NDJSON")
        # warm both (imports, schema compile) on a small slice, then measure
        small = Path(tmp) / "small.ndjson"
        small.write_text("\n".join(generate(20)) + "\n", encoding="utf-8")
        bench_risutools(small)
        bench_jsonschema(small)
        # the three run in turn, ROUNDS times, best of each: a busy machine slows all alike
        files_dir = Path(tmp) / "docs"
        dt = dj = dc = ct = cc = float("inf")
        for _ in range(rounds):
            t, c, docs, findings = bench_risutools(path)
            dt, ct = min(dt, t), min(ct, c)
            t, docs_j, errs = bench_jsonschema(path)
            dj = min(dj, t)
            if cjs:
                t, c, nc, bad, rc = bench_check_jsonschema(cjs, path, files_dir)
                dc, cc = min(dc, t), min(cc, c)
        print(f"load average: {' '.join(f'{x:.1f}' for x in os.getloadavg())} (1, 5, 15 min)")
        print(f"risutools validate (load + schema + all rules): {dt:.2f} s, "
              f"{docs / dt:,.0f} docs/s, CPU {ct:.2f} s ({findings} findings; best of {rounds})")
        print(f"jsonschema iter_errors (json.loads + schema only): {dj:.2f} s, "
              f"{docs_j / dj:,.0f} docs/s ({errs} schema errors)")
        print(f"speed-up: {dj / dt:.1f}x")
        if cjs:
            print(f"check-jsonschema (schema only, {nc} files, one process): {dc:.2f} s, "
                  f"{nc / dc:,.0f} docs/s, CPU {cc:.2f} s ({bad} files with schema errors, "
                  f"exit {rc}); risutools is {dc / dt:.1f}x faster (wall), {cc / ct:.1f}x "
                  "(CPU) (goal >= 4x)")
        else:
            print("check-jsonschema: not measured (set CHECK_JSONSCHEMA=/path/to/check-jsonschema "
                  "or allow the bench venv)")
    py = sys.executable
    base = startup([py, "-c", "pass"])
    cli = startup([py, "-m", "risutools", "validate", str(SEED)])
    imp = startup([py, "-c", "import risutools.cli"])
    print(f"startup: python -c pass {base * 1000:.0f} ms; import risutools.cli "
          f"{imp * 1000:.0f} ms; risutools validate <seed> {cli * 1000:.0f} ms (median of 7)")


if __name__ == "__main__":
    main()
