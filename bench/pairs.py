"""Issue 23's three side-by-side figures in one run, on the projected workload
(``bench/workload.py``: 10,000 documents, one JSON file each, with their facts):

- ``risutools validate -f concise FILE...`` beside Ajv (schema only, ``bench/ajv_validate.js``);
- ``risutools review catalog -f json -o FILE -j 1`` beside check-jsonschema (schema only);
- the same review on all cores (the default ``-j``) beside check-jsonschema.

Each pair: whole processes in turn (A B A B ...) after a warm-up each, ``ROUNDS`` rounds
(default 3), the medians of CPU (user + system of the child), wall and peak, and the CPU
ratio pair by pair (``workload.side_by_side``).  Ajv and check-jsonschema are found as
``bench_contract.py`` finds them (``AJV_NODE_MODULES``, ``CHECK_JSONSCHEMA``, or installed
into throwaway ``.venv-bench*`` folders); a pair whose peer is missing says so.
Usage: ``python bench/pairs.py [validate] [j1] [all]`` (default: all three).
``BENCH_PROJECTED=N``: N documents (default 10,000); ``BENCH_WORKLOAD=real``: the documents
projected from the real corpus instead (``workload.real_catalog``: ``../shared/corpus/real``
ingested, copied to N with their facts; larger documents, real modules' capabilities).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import workload  # noqa: E402
from bench_contract import find_ajv, find_check_jsonschema  # noqa: E402

SCHEMA = str(ROOT / "schemas" / "matrix-component-v1.schema.json")


def _line(name: str, r: dict[str, float], goal: str) -> str:
    return (f"{name}: CPU {r['a_cpu']:.2f} s against {r['b_cpu']:.2f} s, ratio {r['ratio']:.2f}x "
            f"(pairs {r['ratio_min']:.2f}-{r['ratio_max']:.2f}), wall {r['a_wall']:.2f} s, "
            f"peak {r['a_peak']:.0f} MiB; goal {goal}")


def main(what: list[str]) -> None:
    rounds = int(os.environ.get("ROUNDS", "3"))
    n = int(os.environ.get("BENCH_PROJECTED", "10000"))
    real = os.environ.get("BENCH_WORKLOAD") == "real"
    catalog = workload.real_catalog(n) if real else workload.projected_catalog(n)
    files = [os.path.relpath(f, catalog.parent) for f in workload.document_files(catalog)]
    py = sys.executable
    print(workload.load_line())
    kind = ("projected from the real corpus, with their facts" if real
            else "of the projected catalog")
    print(f"workload: {n:,} documents {kind} ({catalog})")
    if "validate" in what:
        modules = find_ajv()
        if modules is None:
            print("validate beside Ajv: SKIPPED (no node/npm)")
        else:
            os.environ["AJV_NODE_MODULES"] = modules
            r = workload.side_by_side(
                [py, "-m", "risutools", "validate", "-f", "concise", *files],
                ["node", str(ROOT / "bench" / "ajv_validate.js"), SCHEMA, *files], rounds,
                cwd=catalog.parent)
            print(_line("validate / Ajv", r, "<= 2x"), flush=True)
    cjs = find_check_jsonschema()
    for name, jobs in (("j1", ["-j", "1"]), ("all", [])):
        if name not in what:
            continue
        if cjs is None:
            print(f"review {name} beside check-jsonschema: SKIPPED (not installed)")
            continue
        out = catalog.parent / "pairs-review.json"
        r = workload.side_by_side(
            [py, "-m", "risutools", "review", "catalog", "-f", "json", "-o", str(out), *jobs],
            [cjs, "--schemafile", SCHEMA, *files], rounds, cwd=catalog.parent)
        label = "review -j 1" if jobs else "review, all cores"
        print(_line(f"{label} / check-jsonschema", r, "<= 0.35x"), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:] or ["validate", "j1", "all"])
