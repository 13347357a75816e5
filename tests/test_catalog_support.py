"""Shared helpers for the catalog tests: a real catalog built from the fixture sources.

The base catalog is ingested once per session (the demo's steps: Korean sentences,
curator notes, a replay of the context cutter written back), then each test works on
its own copy.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from harness import FIXTURES, run_cli

CUTTER = "module.risu.174678332.context-cutter"
MOOD = "module.risu.186123400.mood-tracker"
_BASE: dict[str, Path] = {}


def base_catalog(tmp_factory: pytest.TempPathFactory) -> Path:
    if "base" not in _BASE:
        from risutools.catalog.ingest import ingest
        from risutools.replay.api import run_component

        out = tmp_factory.mktemp("base") / "cat"
        out.mkdir()
        # only the cutter has curator notes: the others keep their MC600 findings (narrative
        # incomplete), which the gate, packet and review tests rely on
        (out / "notes").mkdir()
        shutil.copy(FIXTURES / "notes" / f"{CUTTER}.yaml", out / "notes")
        res = ingest(FIXTURES / "sources", out, lang="ko", jobs=1, use_cache=False)
        assert res.ok
        run_component(out / f"{CUTTER}.json", FIXTURES / "replay" / "anchor-edit.yaml",
                      update=True)
        shutil.copytree(FIXTURES / "sources", out / ".store")  # (inside: review keeps a
        (out / ".risutools.yaml").write_text("sources: .store\n")  # store there)
        _BASE["base"] = out
    return _BASE["base"]


def fresh_catalog(tmp_factory: pytest.TempPathFactory, dest: Path) -> Path:
    cat = dest / "cat"
    shutil.copytree(base_catalog(tmp_factory), cat)
    return cat


def require_signatures(cat: Path, signers: str) -> None:
    """Make ``cat`` a repository's root (``.git``, where a configuration's paths must stay)
    whose configuration requires signatures by the keys of ``signers`` (the path as the
    configuration names it)."""
    (cat / ".git").mkdir(exist_ok=True)
    cfg = (cat / ".risutools.yaml").read_text()
    (cat / ".risutools.yaml").write_text(
        cfg + f"catalog:\n  allowed_signers: {signers}\n  require_signatures: true\n")


def ok(*args: str | Path) -> None:
    """``risutools ARGS``, which must succeed."""
    r = run_cli(*args)
    assert r.returncode == 0, (args, r.stdout, r.stderr)


def approved_with_evidence(cat: Path, reviewer: str = "kim") -> None:
    """The cutter of ``cat`` moved to approved, each step approved (unsigned), and its
    replay evidence recorded (three log lines)."""
    for action, to in (("request_review", "pending_human_review"), ("approve", "approved")):
        ok("approve", CUTTER, "--action", action, "--reviewer", reviewer, "--catalog", cat)
        ok("promote", CUTTER, "--to", to, "--catalog", cat)
    ok("replay", "run", cat / f"{CUTTER}.json", "--fixture",
       FIXTURES / "replay" / "anchor-edit.yaml", "--update")


def run(*args: str, cwd: Path, env: dict[str, str] | None = None,
        ) -> subprocess.CompletedProcess[str]:
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "risutools", *args], cwd=cwd,
                          capture_output=True, text=True, env=e, timeout=120)


def doc_path(cat: Path, cid: str) -> Path:
    return cat / f"{cid}.json"


def load(p: Path) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(p.read_text("utf-8"))
    return result


def log_lines(cat: Path) -> list[dict[str, Any]]:
    p = cat / "transitions.ndjson"
    if not p.exists():
        return []
    return [json.loads(x) for x in p.read_text("utf-8").splitlines() if x.strip()]


def approve_and_promote(cat: Path, cid: str, action: str, to: str,
                        reviewer: str = "kim") -> None:
    from harness import approve, switch

    approve(cid, action, reviewer, "", None, str(cat))
    assert switch(cid, to, "status", False, False, str(cat)) == 0


def to_promoted(cat: Path, cid: str = CUTTER) -> None:
    for action, to in (("request_review", "pending_human_review"), ("approve", "approved"),
                       ("promote", "promoted")):
        approve_and_promote(cat, cid, action, to)


def test_support_catalog_is_valid(tmp_path_factory: pytest.TempPathFactory) -> None:
    from risutools.contract.validate import validate_paths

    cat = base_catalog(tmp_path_factory)
    res = validate_paths([cat])
    assert res.exit_code() == 0
    assert load(doc_path(cat, CUTTER))["projection"]["replay_status"] == "passed"
