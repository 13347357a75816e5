"""The catalog users really have (issue 23): projected documents, one JSON file each.

:func:`projected_catalog` ingests ``n`` module exports (the fixtures' modules, renamed and
varied: ``fixtures/modules/*.json`` without the card and the preset) into a catalog folder
with ``risutools ingest --lang en``: fresh candidates, each with the MC600 warnings of a
narrative nobody has written yet.  Every 50th document is then given a schema error
(``projection.flagship`` set to a string) and every 7th an unknown capability (an MC401
error), rewritten in the catalog's own file style.  The folder is made once under
``$RISUTOOLS_BENCH_DIR`` (default ``/tmp/risutools-bench``) and reused while its marker
says the same ``n``.

:func:`ndjson_of` writes the same documents as one NDJSON catalog (canonical lines).
:func:`side_by_side` runs two commands in turn as whole processes and gives their CPU
(``os.wait4``: the kernel's user + system time of each child) and the ratio pair by pair.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BASE = Path(os.environ.get("RISUTOOLS_BENCH_DIR", "/tmp/risutools-bench"))
TEMPLATES = ("174678332_context-cutter", "180211045_lorebook-world", "181550920_display-theme",
             "182004771_net-summarizer", "183120336_asset-pack", "186123400_mood-tracker")
VERSION = "1"


def _sources(folder: Path, n: int) -> None:
    folder.mkdir(parents=True)
    mods = [json.loads((ROOT / "fixtures" / "modules" / f"{t}.json").read_text("utf-8"))
            for t in TEMPLATES]
    for i in range(n):
        m = dict(mods[i % len(mods)])
        post = 300000 + i
        m["type"] = "risuModule"
        m["name"] = f"{m['name']} {i}"
        m["id"] = f"00000000-0000-4000-8000-{i:012d}"
        m["description"] = f"{m.get('description', '')} (variant {i})"
        sub = folder / f"batch{i // 500:03d}"
        sub.mkdir(exist_ok=True)
        (sub / f"{post}_bench-{i}.json").write_text(json.dumps(m, ensure_ascii=False), "utf-8")


def _damage(catalog: Path) -> int:
    """Every 50th document a schema error, every 7th an MC401 error; the count changed."""
    sys.path.insert(0, str(ROOT))
    from risutools.catalog.render import render

    changed = 0
    for i, f in enumerate(sorted(catalog.glob("*.json"))):
        if i % 50 and i % 7:
            continue
        doc = json.loads(f.read_text("utf-8"))
        if i % 50 == 0:
            doc["projection"]["flagship"] = "yes"
        if i % 7 == 0:
            doc["capabilities"]["requires"].append("hook.unknown_thing")
        f.write_text(render(doc, False), "utf-8")
        changed += 1
    return changed


def projected_catalog(n: int) -> Path:
    """A folder of ``n`` projected documents (one ``.json`` each), made once and reused."""
    root = BASE / f"projected-{n}"
    marker = root / ".complete"
    if marker.exists() and marker.read_text() == f"{n} {VERSION}":
        return root / "catalog"
    shutil.rmtree(root, ignore_errors=True)
    _sources(root / "sources", n)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    subprocess.run([sys.executable, "-m", "risutools", "ingest", str(root / "sources"), "-o",
                    str(root / "catalog"), "--lang", "en", "-q", "--no-cache"],
                   env=env, check=False, stdout=subprocess.DEVNULL)
    docs = list((root / "catalog").glob("*.json"))
    if len(docs) != n:
        raise SystemExit(f"workload: ingest made {len(docs)} documents, not {n}")
    _damage(root / "catalog")
    shutil.rmtree(root / "sources")
    marker.write_text(f"{n} {VERSION}")
    return root / "catalog"


def scaled_catalog(n: int, base: int = 10_000, facts: bool = False,
                   varied: bool = False, rich: bool = False) -> Path:
    """A folder of ``n`` documents made of copies of the ``base``-document projected
    catalog (copy k > 0 of a document has ``-c<k>`` after its component_id and its file
    name), made once and reused: a catalog of the same documents at any size.  ``facts``:
    with their ``facts/`` files copied alike (the component_id changed the same way, the
    file named for it, as ingest names it); every copy is then a repost of its original
    (the same source, the same facts), which the review's lineages relate.  ``varied``:
    each document's ``provides`` and ``requires`` drawn anew from the capability
    vocabulary (1-4 and 1-6 names, seeded: :func:`_varied`), so that nearly every document
    has capabilities of its own, as a catalog of many authors has.  ``rich`` (with
    ``facts``): each original's facts given the members the interactions index, as many
    as a real module's facts have on average (:func:`_rich_facts`), the same for its
    copies."""
    root = BASE / (f"scaled-{n}-facts" if facts else f"scaled-{n}")
    root = root.with_name(root.name + "-varied") if varied else root
    root = root.with_name(root.name + "-rich") if rich else root
    marker = root / ".complete"
    if marker.exists() and marker.read_text() == (
            f"{n} {base} {VERSION} {facts} {varied} {rich}"):
        return root / "catalog"
    vary = _varied() if varied else None
    shutil.rmtree(root, ignore_errors=True)
    out = root / "catalog"
    _copies(projected_catalog(base), out, n, facts, vary, rich)
    marker.write_text(f"{n} {base} {VERSION} {facts} {varied} {rich}")
    return out


def _copies(src: Path, out: Path, n: int, facts: bool,
            vary: Callable[[bytes], bytes] | None = None, rich: bool = False) -> None:
    """``n`` documents into ``out``: the documents of the catalog ``src`` in file order,
    again and again, copy k > 0 of each with ``-c<k>`` after its component_id and its file
    name (:func:`scaled_catalog`; ``facts``, ``vary``, ``rich`` as it says)."""
    sys.path.insert(0, str(ROOT))
    from risutools.catalog.render import safe_name

    (out / "facts").mkdir(parents=True)
    names = sorted(p.name for p in src.glob("*.json"))
    made = 0
    for k in range(-(-n // len(names))):
        for name in names:
            if made == n:
                break
            data = (src / name).read_bytes()
            cid = json.loads(data)["component_id"]
            facts_file = src / "facts" / f"{safe_name(cid)}.json"
            if k:
                data = re.sub(rb'("component_id":\s*"[^"]+)"',
                              lambda m, k=k: m.group(1) + b"-c%d\"" % k, data, count=1)
            if vary is not None:
                data = vary(data)
            (out / name.replace(".json", f"-c{k}.json")).write_bytes(data)
            if facts and facts_file.exists():
                value = json.loads(facts_file.read_bytes())
                value["component_id"] = f"{cid}-c{k}" if k else cid
                if rich:
                    _rich_facts(value, cid)
                (out / "facts" / f"{safe_name(value['component_id'])}.json").write_text(
                    json.dumps(value, ensure_ascii=False, indent=2) + "\n", "utf-8")
            made += 1


#: the real corpus (``../shared/corpus/real``: modules and cards RisuAI users published),
#: from a checkout or from a worktree one folder further down
CORPUS = [ROOT.parent / "shared" / "corpus" / "real",
          ROOT.parent.parent / "shared" / "corpus" / "real"]


def real_catalog(n: int) -> Path:
    """A folder of ``n`` documents projected from the real corpus, with their facts: every
    Risu file of :data:`CORPUS` ingested (``risutools ingest --lang en``: fresh candidates,
    each with its own MC600 warnings), then copied as :func:`scaled_catalog` copies (copy
    k > 0 with ``-c<k>`` after its component_id; its facts alike).  Its documents are as
    large as real modules' projections (about 5.4 KB against the projected catalog's 3.6),
    with what real modules hold (Korean text, many capabilities).  Made once under
    :data:`BASE` and reused; SystemExit when the corpus is not there (it is never copied
    into the project)."""
    corpus = next((c for c in CORPUS if c.is_dir()), None)
    if corpus is None:
        raise SystemExit(f"workload: no real corpus at {CORPUS[0]}")
    root = BASE / f"real-{n}"
    marker = root / ".complete"
    if marker.exists() and marker.read_text() == f"{n} {VERSION}":
        return root / "catalog"
    shutil.rmtree(root, ignore_errors=True)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    subprocess.run([sys.executable, "-m", "risutools", "ingest", str(corpus), "-o",
                    str(root / "projected"), "--lang", "en", "-q", "--no-cache"],
                   env=env, check=False, stdout=subprocess.DEVNULL)
    if not list((root / "projected").glob("*.json")):
        raise SystemExit(f"workload: ingest of {corpus} made no documents")
    _copies(root / "projected", root / "catalog", n, facts=True)
    shutil.rmtree(root / "projected")
    marker.write_text(f"{n} {VERSION}")
    return root / "catalog"


def _rich_facts(value: dict[str, Any], cid: str) -> None:
    """Facts with the members the interactions index as many as the 21 facts files that
    ``ingest`` writes for ``../shared/corpus/real`` have on average (rounded; stop 55):
    12 lorebook entries, 10 state keys, 6 toggles declared and 5 read, 5 button targets,
    1 button name; each named in the module's own namespace (its id's last part: a copy
    names what its original names)."""
    ns = cid.rsplit(".", 1)[-1]
    value["lorebook_entries"] = [f"{ns}.lore.{j}" for j in range(12)]
    value["state"] = [{"key": f"{ns}-state-{j}", "scope": "chat", "read": True,
                       "write": j % 2 == 0} for j in range(10)]
    value["toggles_declared"] = [f"{ns}.toggle.{j}" for j in range(6)]
    value["toggles_read"] = value["toggles_declared"][:5]
    value["button_targets"] = [f"{ns}-target-{j}" for j in range(5)]
    value["button_names"] = [f"{ns}-button"]


def _varied() -> Callable[[bytes], bytes]:
    """What gives a document's JSON its capabilities drawn anew (:func:`scaled_catalog`):
    ``provides`` 1-4 names of the vocabulary's provided kind, ``requires`` 1-6 of its
    required kind, sorted, from one seeded generator (the same catalog each time)."""
    import yaml

    vocab = yaml.safe_load((ROOT / "risutools" / "data" / "capabilities.yaml").read_text(
        "utf-8"))["capabilities"]
    provided = sorted(k for k, v in vocab.items() if v.get("kind") == "provides")
    required = sorted(k for k, v in vocab.items() if v.get("kind") == "requires")
    rng = random.Random(55)

    def vary(data: bytes) -> bytes:
        doc = json.loads(data)
        caps = doc.setdefault("capabilities", {})
        caps["provides"] = sorted(rng.sample(provided, rng.randint(1, min(4, len(provided)))))
        caps["requires"] = sorted(rng.sample(required, rng.randint(1, min(6, len(required)))))
        return (json.dumps(doc, ensure_ascii=False, indent=2) + "\n").encode("utf-8")

    return vary


def approved_catalog(n: int, every: int = 5) -> Path:
    """The ``n``-document projected catalog with an approval record (``request_review``, on
    its current base hash, unsigned) for every document but each ``every``-th: a catalog a
    team has been curating, whose board reads thousands of records (``approvals/``)."""
    sys.path.insert(0, str(ROOT))
    from risutools.settings import lifecycle

    root = BASE / f"approved-{n}-{every}"
    if not _start_copy(root, f"{n} {every} {VERSION}", n):
        return root / "catalog"
    records = root / "catalog" / "approvals"
    records.mkdir()
    for i, f in enumerate(sorted((root / "catalog").glob("*.json"))):
        if i % every == every - 1:
            continue
        doc = json.loads(f.read_bytes())
        base = lifecycle.base_sha256(doc)
        (records / f"{doc['component_id']}--request_review--{base[7:19]}.yaml").write_text(
            f"component_id: {doc['component_id']}\n"
            f"component_version: {doc['component_version']}\n"
            "action: request_review\nreviewer: kim\nat: '2026-12-02T20:00:00+00:00'\n"
            f"base_sha256: {base}\nnote: ''\nread:\n  how: none\n  note: bench\n", "utf-8")
    (root / ".complete").write_text(f"{n} {every} {VERSION}")
    return root / "catalog"


def mature_catalog(n: int) -> Path:
    """The ``n``-document projected catalog a team has been curating (issue 23, round 22):
    every document moved to ``pending_human_review`` (a ``request_review`` record and its
    transition line), every 50th further to ``promoted`` and switched ``active`` (records
    and lines for each step), every 4th of the others with an ``approve`` record waiting
    for its promotion.  Written as ``approve``, ``promote`` and ``activate`` write them
    (their record, line and document functions, one process: thousands of commands would
    take hours), without their gates; made once and reused while its marker says ``n``."""
    root = BASE / f"mature-{n}"
    if _start_copy(root, f"{n} {VERSION}", n):
        _curate(root / "catalog")
        (root / ".complete").write_text(f"{n} {VERSION}")
    return root / "catalog"


def _start_copy(root: Path, key: str, n: int) -> bool:
    """Whether ``root/catalog`` must be made (its marker ``root/.complete`` does not say
    ``key``): then it is a fresh copy of the ``n``-document projected catalog, to curate
    and mark."""
    marker = root / ".complete"
    if marker.exists() and marker.read_text() == key:
        return False
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(projected_catalog(n), root / "catalog")
    return True


def _curate(catalog: Path) -> None:
    """:func:`mature_catalog`'s records, lines and documents, in ``catalog``."""
    sys.path.insert(0, str(ROOT))
    from risutools.canonical import canonical
    from risutools.catalog.catalog import Catalog
    from risutools.catalog.promote import runtime_document
    from risutools.catalog.writes import link, render_document
    from risutools.settings import lifecycle

    cat = Catalog.open(catalog)
    (catalog / "approvals").mkdir()
    lines: list[bytes] = []
    clock = [1_800_000_000]
    for i, e in enumerate(cat.entries()):
        raw = e.path.read_bytes()
        doc, last = _step(cat, e, e.doc, "pending_human_review", None, lines, clock)
        if i % 50 == 0:
            for to in ("approved", "promoted"):
                doc, last = _step(cat, _as(e, doc), doc, to, last, lines, clock)
            now = _as(e, doc)
            doc = runtime_document(doc, "active")
            rec = {"kind": "runtime", "component_id": e.component_id,
                   "from_runtime": now.runtime_status, "to_runtime": "active",
                   "before_sha256": now.base_sha256, "after_sha256": lifecycle.base_sha256(doc),
                   "actor": "kim", "at": _tick(clock), "tool_version": "bench"}
            lines.append(canonical(link(rec, now, last)))
        elif i % 4 == 1:
            _record(cat, _as(e, doc), "approve", clock)
        e.path.write_bytes(render_document(e, raw, doc))
    (catalog / "transitions.ndjson").write_bytes(b"".join(x + b"\n" for x in lines))


def _tick(clock: list[int]) -> str:
    """The next second of the curation, as a record or a line writes a time."""
    clock[0] += 1
    return time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(clock[0]))


def _as(e: Any, doc: dict[str, Any]) -> Any:
    """The entry of ``e``'s file holding ``doc`` (its next state)."""
    from risutools.catalog.catalog import Entry

    return Entry(e.path, e.line, e.fmt, doc, "", None)


def _record(cat: Any, e: Any, action: str, clock: list[int]) -> tuple[str, str]:
    """An approval record of ``e`` for ``action`` (unsigned), as ``approve`` writes it."""
    from risutools.canonical import prefixed
    from risutools.catalog.approvals import build_record, dump_record, file_sha256, record_path
    from risutools.catalog.binding import binding

    _tick(clock)
    os.environ["SOURCE_DATE_EPOCH"] = str(clock[0])
    try:
        rec = build_record(e, action, "kim", "")
    finally:
        del os.environ["SOURCE_DATE_EPOCH"]
    rec["read"] = binding(None, None, None)
    path = record_path(cat, rec)
    data = dump_record(rec)
    path.write_bytes(data)
    return cat.rel(path), prefixed(file_sha256(data))


def _step(cat: Any, e: Any, doc: dict[str, Any], to: str, last: Any, lines: list[bytes],
          clock: list[int]) -> tuple[dict[str, Any], str]:
    """``e`` moved to ``to``: its record, its transition line (as ``promote`` writes them)
    and the new document, with the line's ``after_sha256``."""
    from risutools.canonical import canonical
    from risutools.catalog.promote import new_document
    from risutools.catalog.writes import link
    from risutools.settings import lifecycle

    file, sha = _record(cat, e, lifecycle.action_for(e.review_status, to) or "", clock)
    new = new_document(doc, to)
    after = lifecycle.base_sha256(new)
    rec = {"component_id": e.component_id, "from_status": e.review_status, "to_status": to,
           "before_sha256": e.base_sha256, "after_sha256": after,
           "approval": {"file": file, "sha256": sha}, "at": _tick(clock),
           "tool_version": "bench"}
    lines.append(canonical(link(rec, e, last)))
    return new, after


def document_files(catalog: Path) -> list[str]:
    """The catalog's document files, sorted (what a CI step hands a validator)."""
    return sorted(str(p) for p in catalog.glob("*.json"))


def ndjson_of(catalog: Path, target: Path) -> Path:
    """The same documents as one NDJSON catalog (canonical lines) at ``target``."""
    sys.path.insert(0, str(ROOT))
    from risutools.canonical import canonical

    with open(target, "wb") as out:
        for f in document_files(catalog):
            out.write(canonical(json.loads(Path(f).read_text("utf-8"))) + b"\n")
    return target


# --------------------------------------------------------------------------- side by side


#: the small process that starts each measured one (:func:`spawned`)
_SPAWNER = r"""
import json, os, subprocess, sys, time
for line in sys.stdin:
    args, cwd, env = json.loads(line)
    t = time.perf_counter()
    proc = subprocess.Popen(args, cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    print(json.dumps([usage.ru_utime + usage.ru_stime, wall, usage.ru_maxrss / 1024,
                      os.waitstatus_to_exitcode(status)]), flush=True)
"""
_spawner: list[subprocess.Popen[str]] = []


def spawned(args: list[str], cwd: Path | None = None, env: dict[str, str] | None = None
            ) -> tuple[float, float, float, int]:
    """One whole process: (CPU seconds = user + system, wall seconds, peak RSS in MiB, exit
    code), from the kernel's accounting of that child alone (``os.wait4``); its output
    thrown away.

    Started by a small helper process (``python -S``, kept for the next), not by this one: a
    child's peak RSS counts the peak of the process it was started from (Linux records the
    starting image's high-water mark into the child's at ``exec``), so a bench that had
    loaded a 100,000-message fixture reported that much for every command it started after
    (a child of a parent that had held 500 MB read 514 MiB for ``python -c pass``; 13 MiB
    through the helper).  The helper's own peak, about 10 MiB, is the floor."""
    if not _spawner or _spawner[0].poll() is not None:
        _spawner[:] = [subprocess.Popen([sys.executable, "-S", "-c", _SPAWNER],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        text=True)]
    helper = _spawner[0]
    assert helper.stdin is not None and helper.stdout is not None
    helper.stdin.write(json.dumps([args, None if cwd is None else str(cwd),
                                   dict(os.environ) if env is None else env]) + "\n")
    helper.stdin.flush()
    cpu, wall, peak, code = json.loads(helper.stdout.readline())
    return float(cpu), float(wall), float(peak), int(code)


def run_process(args: list[str], cwd: Path | None = None) -> tuple[float, float, float, int]:
    """One whole process, start-up included, with this checkout first on the path
    (:func:`spawned`: CPU seconds, wall seconds, peak RSS in MiB, exit code)."""
    return spawned(args, cwd, dict(os.environ, PYTHONPATH=str(ROOT)))


def side_by_side(a: list[str], b: list[str], rounds: int, cwd: Path | None = None
                 ) -> dict[str, float]:
    """A and B in turn (A B A B ...) after one warm-up each; the medians of each one's CPU,
    wall and peak and of the pair-by-pair CPU ratio A/B (pairs keep the ratio fair while
    the machine's load drifts)."""
    run_process(a, cwd)
    run_process(b, cwd)
    ra, rb = [], []
    for _ in range(rounds):
        ra.append(run_process(a, cwd))
        rb.append(run_process(b, cwd))
    med = statistics.median
    return {"a_cpu": med(r[0] for r in ra), "a_wall": med(r[1] for r in ra),
            "a_peak": med(r[2] for r in ra), "a_rc": ra[-1][3],
            "b_cpu": med(r[0] for r in rb), "b_wall": med(r[1] for r in rb),
            "b_peak": med(r[2] for r in rb), "b_rc": rb[-1][3],
            "ratio": med(x[0] / y[0] for x, y in zip(ra, rb, strict=True)),
            "ratio_min": min(x[0] / y[0] for x, y in zip(ra, rb, strict=True)),
            "ratio_max": max(x[0] / y[0] for x, y in zip(ra, rb, strict=True))}


@contextlib.contextmanager
def linked_workloads(code: str, n: int, names: tuple[str, ...]
                     ) -> Iterator[tuple[Path, list[Path]]]:
    """The workloads whose folders ``code`` prints (run in a child with ``n`` as its
    argument, from this folder: a child of the benchmark would start with its memory, and
    the kernel's peak of a forked child counts what it inherited), each copied into a new
    temporary folder under :data:`BASE` as ``names``, file by file as hard links (a command
    replaces a file, never writes into one): (that folder, the copies)."""
    made = subprocess.run([sys.executable, "-c", code, str(n)], cwd=Path(__file__).parent,
                          check=True, capture_output=True, text=True).stdout.split()
    BASE.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=BASE) as tmp:
        copies = [Path(tmp) / name for name in names]
        for src, dst in zip(made, copies, strict=True):
            shutil.copytree(src, dst, copy_function=os.link)
        yield Path(tmp), copies


def trees_of_run() -> dict[str, Path]:
    """The checkouts a benchmark times: this one (``after``), and the one ``BENCH_BEFORE``
    names (``before``) when it is set; bytecode written for each first, as an installed
    package has it."""
    trees = {"after": ROOT}
    if os.environ.get("BENCH_BEFORE"):
        trees = {"before": Path(os.environ["BENCH_BEFORE"]).resolve(), "after": ROOT}
    for tree in trees.values():
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "risutools")],
                       check=True)
    return trees


def time_commands(trees: dict[str, Path], commands: list[tuple[str, list[str]]], cwd: Path,
                  rounds: int) -> None:
    """Print each command's median CPU and peak (``risutools ARGS`` as a whole process, the
    tree on ``PYTHONPATH``), or with two trees the two in turn and the median ratio."""
    width = max(len(label) for label, _ in commands)

    def cli(tree: Path, args: list[str]) -> list[str]:
        return ["env", f"PYTHONPATH={tree}", sys.executable, "-m", "risutools", *args]

    for label, args in commands:
        if len(trees) == 2:  # (from a neutral folder: ``-m`` puts it first on the path)
            r = side_by_side(cli(trees["after"], args), cli(trees["before"], args), rounds,
                             cwd=cwd)
            print(f"{label:{width}} before {r['b_cpu']:.3f} s {r['b_peak']:.0f} MiB, after "
                  f"{r['a_cpu']:.3f} s {r['a_peak']:.0f} MiB: {r['ratio']:.2f}x "
                  f"({r['ratio_min']:.2f}-{r['ratio_max']:.2f}), exit {r['b_rc']}/"
                  f"{r['a_rc']}", flush=True)
            continue
        run_process(cli(trees["after"], args), cwd)
        runs = [run_process(cli(trees["after"], args), cwd) for _ in range(rounds)]
        print(f"{label:{width}} {statistics.median(x[0] for x in runs):.3f} s CPU, "
              f"{statistics.median(x[2] for x in runs):.0f} MiB, exit {runs[-1][3]}",
              flush=True)


def load_line() -> str:
    return "load average " + " ".join(f"{x:.1f}" for x in os.getloadavg()) + " (1, 5, 15 min)"
