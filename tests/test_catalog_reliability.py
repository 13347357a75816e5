"""Real child processes: concurrent promoters, kill -9 during a promotion, tampering."""

from __future__ import annotations

import json
import multiprocessing
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from test_catalog_support import (
    CUTTER,
    doc_path,
    fresh_catalog,
    log_lines,
    run,
)

from risutools.catalog.commands import approve
from risutools.contract import validate_paths

TO = "pending_human_review"


def _promote_child(cat: str, cid: str, to: str, barrier: Any, q: Any) -> None:
    from risutools.catalog.catalog import Catalog
    from risutools.catalog.promote import execute, plan
    from risutools.errors import WriteConflict

    c = Catalog.open(cat)
    p = plan(c, c.resolve(cid), to)
    barrier.wait(timeout=60)  # both have read the same base and passed the gates
    try:
        line = execute(c, p)
        q.put(("won", str(line)))
    except WriteConflict as exc:
        q.put(("lost", exc.one_line()))


@pytest.mark.parametrize("round_", range(6))
def test_two_concurrent_promoters_exactly_one_wins(
        tmp_path_factory: pytest.TempPathFactory, tmp_path: Path, round_: int) -> None:
    cat = fresh_catalog(tmp_path_factory, tmp_path)
    approve(CUTTER, "request_review", "kim", "", None, str(cat))
    ctx = multiprocessing.get_context("fork")
    barrier = ctx.Barrier(2)
    q = ctx.Queue()
    procs = [ctx.Process(target=_promote_child, args=(str(cat), CUTTER, TO, barrier, q))
             for _ in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    results = sorted(q.get(timeout=10) for _ in procs)
    assert [r[0] for r in results] == ["lost", "won"]
    lost = results[0][1]
    assert "changed since you read it" in lost and "\n" not in lost
    (line,) = log_lines(cat)  # nothing lost, nothing doubled
    assert line["to_status"] == TO
    assert validate_paths([cat]).exit_code() == 0  # the log still chains


def test_two_cli_promoters_at_once(tmp_path_factory: pytest.TempPathFactory,
                                   tmp_path: Path) -> None:
    for i in range(3):
        cat = fresh_catalog(tmp_path_factory, tmp_path / str(i))
        approve(CUTTER, "request_review", "kim", "", None, str(cat))
        cmd = [sys.executable, "-m", "risutools", "promote", CUTTER, "--to", TO]
        procs = [subprocess.Popen(cmd, cwd=cat, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True) for _ in range(2)]
        outs = [p.communicate(timeout=120) for p in procs]
        codes = sorted(p.returncode for p in procs)
        assert codes == [0, 1], outs
        loser = outs[[p.returncode for p in procs].index(1)]
        if loser[1].strip():  # it raced into the write: one line saying why
            assert len(loser[1].strip().splitlines()) == 1
            assert "changed since you read it" in loser[1]
        else:  # it read the promoted document: refused by the gates
            assert "refused" in loser[0]
        assert len(log_lines(cat)) == 1
        assert validate_paths([cat]).exit_code() == 0


def _tmp_files(cat: Path) -> list[Path]:
    return [p for p in cat.rglob("*.tmp")]


def _wait_for_log(cat: Path, n: int, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if len(log_lines(cat)) >= n:
            return
        if proc.poll() is not None:
            raise AssertionError(f"promote ended early: {proc.communicate()}")
        time.sleep(0.02)
    raise AssertionError("the log line never appeared")


def test_kill9_between_log_and_document_then_rerun_completes(
        tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    cat = fresh_catalog(tmp_path_factory, tmp_path)
    approve(CUTTER, "request_review", "kim", "", None, str(cat))
    before = doc_path(cat, CUTTER).read_bytes()
    env = dict(os.environ, RISUTOOLS_TEST_PAUSE_AFTER_LOG="60")
    proc = subprocess.Popen([sys.executable, "-m", "risutools", "promote", CUTTER, "--to", TO],
                            cwd=cat, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    _wait_for_log(cat, 1, proc)
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=30)
    assert doc_path(cat, CUTTER).read_bytes() == before  # old document, whole
    (line,) = log_lines(cat)  # new log, whole
    assert line["before_sha256"] != line["after_sha256"]
    assert not _tmp_files(cat)
    # the catalog says a change was never written
    r = run("review", str(cat), "--format", "json", cwd=cat)
    assert r.returncode == 1
    assert any("interrupted" in c["message"] for c in json.loads(r.stdout)["chain"])
    # another transition is refused until the interrupted one is completed
    r = run("promote", CUTTER, "--to", "rejected", cwd=cat)
    assert r.returncode == 1 and "interrupted" in r.stdout
    r = run("promote", CUTTER, "--to", TO, cwd=cat)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "completes the interrupted transition" in r.stdout
    assert len(log_lines(cat)) == 1
    assert json.loads(doc_path(cat, CUTTER).read_text())["provenance"]["review_status"] == TO
    assert validate_paths([cat]).exit_code() == 0
    assert not _tmp_files(cat)


@pytest.mark.parametrize("round_", range(8))
def test_kill9_at_random_points(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path,
                                round_: int) -> None:
    cat = fresh_catalog(tmp_path_factory, tmp_path)
    approve(CUTTER, "request_review", "kim", "", None, str(cat))
    before = doc_path(cat, CUTTER).read_bytes()
    proc = subprocess.Popen([sys.executable, "-m", "risutools", "promote", CUTTER, "--to", TO],
                            cwd=cat, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(random.Random(round_).uniform(0.0, 1.5))
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=30)
    now = doc_path(cat, CUTTER).read_bytes()
    status = json.loads(now)["provenance"]["review_status"]  # parses: never torn
    lines = log_lines(cat)  # every line parses
    assert len(lines) <= 1
    if now == before:
        assert status == "candidate"
    else:
        assert status == TO and len(lines) == 1
    # a re-run completes (or, when the first run finished, refuses cleanly)
    r = run("promote", CUTTER, "--to", TO, cwd=cat)
    assert r.returncode in (0, 1)
    if r.returncode == 1:
        assert status == TO and "refused" in r.stdout
    assert len(log_lines(cat)) == 1
    assert json.loads(doc_path(cat, CUTTER).read_text())["provenance"]["review_status"] == TO
    assert validate_paths([cat]).exit_code() == 0
