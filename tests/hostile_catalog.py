"""Helpers of the hostile-catalog tests (issue 21): a catalog to attack, the command line in
a real child process with a time limit, and forked children whose memory is bounded.

``tests/test_catalog_hostile*.py`` use them.  A test that checks "no hang" runs the command
in a child with a timeout: before the fixes these children hung (a FIFO) or read until
memory was gone (``/dev/zero``), so every child's address space is capped.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import resource
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from harness import FIXTURES, ROOT, approve, switch
from test_catalog_support import CUTTER, base_catalog

TWIN = "module.risu.174678332.context-cutter-twin"
SECRET = "TOPSECRET-4f1c"
CHILD_TIMEOUT = 40.0  # seconds: a command that takes longer hangs
MEMORY_CAP = 2 << 30  # bytes of address space a child may use (a /dev/zero read stops)
_PAIR: dict[str, Path] = {}


def _cap_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def cli(*args: str | os.PathLike[str], cwd: Path, env: dict[str, str] | None = None,
        timeout: float = CHILD_TIMEOUT) -> subprocess.CompletedProcess[str]:
    """``python -m risutools ARGS`` in a child process (memory capped); a child still
    running after ``timeout`` seconds is killed and the test fails: it hung."""
    e = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    e.pop("RISUTOOLS_DEBUG", None)
    try:
        return subprocess.run([sys.executable, "-m", "risutools", *map(os.fspath, args)],
                              cwd=cwd, env=e, capture_output=True, text=True, timeout=timeout,
                              preexec_fn=_cap_memory)
    except subprocess.TimeoutExpired:
        pytest.fail(f"risutools {' '.join(map(str, args))} hung (>{timeout:g} s)")


def one_line(stderr: str) -> str:
    lines = [x for x in stderr.splitlines() if x.strip()]
    assert len(lines) == 1, stderr
    return lines[0]


def in_child(fn: Callable[..., Any], *args: Any, timeout: float = CHILD_TIMEOUT) -> Any:
    """``fn(*args)`` in a forked child (memory capped): what it returned, or
    ``("raised", type name, code, one line)``; the test fails when the child hangs."""
    ctx = multiprocessing.get_context("fork")
    q = ctx.Queue()

    def body() -> None:
        _cap_memory()
        try:
            q.put(("returned", fn(*args)))
        except BaseException as exc:  # every outcome goes back to the parent
            code = getattr(exc, "code", None)
            line = exc.one_line() if hasattr(exc, "one_line") else repr(exc)
            q.put(("raised", type(exc).__name__, code, line))

    proc = ctx.Process(target=body)
    proc.start()
    proc.join(timeout)
    if proc.is_alive():
        proc.kill()
        proc.join(10)
        pytest.fail(f"{fn.__name__} hung (>{timeout:g} s)")
    got = q.get(timeout=10)
    return got[1] if got[0] == "returned" else got


def catalog_copy(tmp_factory: pytest.TempPathFactory, dest: Path) -> Path:
    """A fresh copy of the tests' catalog (ingested fixtures), under ``dest/cat``."""
    cat = dest / "cat"
    shutil.copytree(base_catalog(tmp_factory), cat)
    return cat


#: how the twin differs from the cutter: ``both`` as the issue found it (a conflict and a
#: shared exclusive capability), ``conflict`` only (G12 for ``active``, G7 for ``promoted``),
#: ``exclusive`` only (G13)
PAIRS = ("both", "conflict", "exclusive")


def _twin_caps(doc: dict[str, Any], variant: str) -> None:
    caps = doc["capabilities"]
    caps["provides"].remove("context.anchor_continuity")
    if variant in ("both", "conflict"):
        caps["conflicts"] = ["context.anchor_continuity"]
    if variant == "conflict":
        caps["provides"].remove("context.token_budget")


def pair_catalog(tmp_factory: pytest.TempPathFactory, dest: Path, variant: str = "both",
                 ) -> Path:
    """A copy of a catalog with two approved components that cannot be active (or, with
    ``variant`` ``conflict``, promoted) together: the context cutter and its twin, which
    provides the same exclusive capability (``context.token_budget``, G13) and/or conflicts
    with the cutter's ``context.anchor_continuity`` (G12; for ``promoted``, G7).  Both
    also hold an approval to be promoted."""
    if variant not in _PAIR:
        from risutools.catalog.ingest import ingest
        from risutools.replay.api import run_component

        out = tmp_factory.mktemp(f"pair-{variant}") / "cat"
        (out / "notes").mkdir(parents=True)
        for cid in (CUTTER, TWIN):
            shutil.copy(FIXTURES / "notes" / f"{CUTTER}.yaml", out / "notes" / f"{cid}.yaml")
        assert ingest(FIXTURES / "sources", out, lang="ko", jobs=1, use_cache=False).ok
        doc = json.loads((out / f"{CUTTER}.json").read_text("utf-8"))
        doc["component_id"] = TWIN
        _twin_caps(doc, variant)
        (out / f"{TWIN}.json").write_text(json.dumps(doc, ensure_ascii=False, indent=2),
                                          "utf-8")
        for cid in (CUTTER, TWIN):
            run_component(out / f"{cid}.json", FIXTURES / "replay" / "anchor-edit.yaml",
                          update=True)
        shutil.copytree(FIXTURES / "sources", out / ".store")  # (inside: review keeps a
        (out / ".risutools.yaml").write_text("sources: .store\n")  # store there)
        for cid in (CUTTER, TWIN):
            for action, to in (("request_review", "pending_human_review"),
                               ("approve", "approved")):
                approve(cid, action, "kim", "", None, str(out))
                assert switch(cid, to, "status", False, False, str(out)) == 0
            approve(cid, "promote", "kim", "", None, str(out))
        _PAIR[variant] = out
    cat = dest / f"pair-{variant}"
    shutil.copytree(_PAIR[variant], cat)
    return cat


def status(cat: Path, cid: str) -> tuple[str, str]:
    doc = json.loads((cat / f"{cid}.json").read_text("utf-8"))
    prov = doc["provenance"]
    return prov["review_status"], prov["runtime_status"]


def sparse_file(path: Path, size: int) -> None:
    """A file of ``size`` bytes that takes no room on disk (one line, then zeros)."""
    with open(path, "wb") as f:
        f.write(b'{"component_id":"x"}\n')
        f.truncate(size)


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every regular file under ``folder`` (not following links) and its bytes."""
    out = {}
    for p in sorted(folder.rglob("*")):
        if p.is_file() and not p.is_symlink():
            out[p.relative_to(folder).as_posix()] = p.read_bytes()
    return out
