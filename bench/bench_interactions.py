"""The review's interactions at scale (issue 19 item 6): the index by key, every RV4xx and
RV5xx unit, the families and the lineages over N documents' summaries.

Workload (synthetic, deterministic, made here; nothing from the real corpus): N summaries
in families of 10 (a backend carrying a lorebook entry and declaring 4 toggles, 9
extensions that load the entry, read 2 of the toggles and one undeclared toggle, show
risu-btn buttons), each component with 8 chat variables of its own and 2 shared with its
family (one written by the backend), 2 of the 4 edit hooks transformed, 1 of 20 posted
twice (a repost) and 1 of 20 in a second version; about 60 facts a document.

``--popular`` adds popular keys (what must not make pairs quadratic): one toggle every
component reads and one in ten declares, one lorebook entry one in ten carries and every
extension loads, one capability one in ten conflicts with and every component provides.

Prints, for N = 12,500, 25,000 and 50,000 (or the N given): the facts counted, the CPU time
of building the index, running the units and each row's risk (what ``review`` runs:
:func:`risutools.catalog.review_interactions.relate` and ``risks``), the time per 1,000
facts, which stays flat when the work is linear in the facts, and the peak traced memory
(tracemalloc, in a second run: tracing slows a run about twofold and its cost grows with
what is traced, so the CPU time is measured without it).
Usage: ``python bench/bench_interactions.py [--popular] [N ...]``.
"""

from __future__ import annotations

import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from risutools.catalog.interactions import Summary  # noqa: E402
from risutools.catalog.review_interactions import relate, risks  # noqa: E402

HOOKS = ("hook.edit_input", "hook.edit_output", "hook.edit_request", "hook.edit_display")


def _facts(i: int) -> dict[str, Any]:
    fam, k = divmod(i, 10)
    backend = k == 0
    state = [{"key": f"own{i}_{j}", "scope": "chat", "read": True, "write": True}
             for j in range(8)]
    state += [{"key": f"fam{fam}_{j}", "scope": "chat", "read": True,
               "write": backend and j == 0} for j in range(2)]
    toggles = [f"f{fam}.t{j}" for j in range(4)]
    return {
        "module_id": f"mod-{i - 1 if i % 20 == 19 else i}",
        "source_sha256": f"sha256:{i - 1 if i % 40 == 39 else i:064x}",
        "source_part": "module.risum",
        "state": state,
        "transforms": [HOOKS[i % 4], HOOKS[(i + 1) % 4]],
        "toggles_declared": toggles if backend else [],
        "toggles_read": toggles[:2] + ([] if backend else [f"f{fam}.missing"]),
        "lorebook_entries": [f"fam{fam}-prelude", f"own{i}-notes"] if backend
        else [f"own{i}-notes"],
        "lorebook_loads": [] if backend else [f"fam{fam}-prelude"],
        "entry_points": ["onButtonClick"] if backend else ["onOutput"],
        "risu_buttons": 0 if backend else 1,
        "findings": [{"rule": "RA113", "severity": "warning", "message": "loads lore code"}],
        "hosts": [f"host{fam}.example.org"] if backend else [],
    }


def _popular(i: int, facts: dict[str, Any]) -> dict[str, Any]:
    """The popular keys of ``--popular`` added to one component's facts."""
    tenth = i % 10 == 3
    facts["toggles_read"] = [*facts["toggles_read"], "hub.t"]
    if tenth:
        facts["toggles_declared"] = [*facts["toggles_declared"], "hub.t"]
        facts["lorebook_entries"] = [*facts["lorebook_entries"], "hub-prelude"]
    elif facts["lorebook_loads"]:
        facts["lorebook_loads"] = [*facts["lorebook_loads"], "hub-prelude"]
    return facts


def summaries(n: int, popular: bool = False) -> list[Summary]:
    return [Summary(f"module.risu.{i:09d}.m", f"m{i}.json", f"M {i}", "candidate",
                    "inactive", ("ui.toggles",),
                    ("ui.toggles",) if popular and i % 10 == 3 else (),
                    _popular(i, _facts(i)) if popular else _facts(i), "", "1.0.0",
                    f"risu:{i}")
            for i in range(n)]


def facts_count(items: list[Summary]) -> int:
    total = 0
    for s in items:
        f = s.facts or {}
        total += sum(len(v) for v in f.values() if isinstance(v, list))
    return total


def run(items: list[Summary]) -> tuple[int, int]:
    inter = relate(items)  # what review runs: the index, every unit, families, lineages
    risks(inter)  # and each row's risk (where each lorebook load resolves)
    return len(inter.relations) + len(inter.versions), len(inter.families)


def main(argv: list[str]) -> None:
    popular = "--popular" in argv
    sizes = [int(a) for a in argv if a != "--popular"] or [12_500, 25_000, 50_000]
    print("documents  facts      relations  families  CPU s   per 1k facts  peak MiB"
          + ("  (--popular)" if popular else ""))
    for n in sizes:
        items = summaries(n, popular)
        facts = facts_count(items)
        t0 = time.process_time()
        found, fams = run(items)
        cpu = time.process_time() - t0
        tracemalloc.start()
        run(items)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        print(f"{n:>9,}  {facts:>9,}  {found:>9,}  {fams:>8,}  {cpu:6.2f}  "
              f"{1000 * cpu / facts * 1000:9.2f} ms  {peak / 2**20:7.1f}")


if __name__ == "__main__":
    main(sys.argv[1:])
