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
from harness import approve
from test_catalog_support import (
    CUTTER,
    doc_path,
    fresh_catalog,
    log_lines,
    run,
)

from risutools.contract.validate import validate_paths

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
    """Every temp file of the one write path (fsio's names) anywhere in the catalog."""
    from risutools.fsio import TMP_MARK

    return [p for p in cat.rglob("*") if TMP_MARK in p.name]


def test_tmp_files_sees_a_left_temp_file(tmp_path: Path) -> None:
    """The helper the kill -9 tests rely on finds what fsio leaves (it could fail)."""
    from risutools.fsio import TMP_MARK

    assert not _tmp_files(tmp_path)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / f".c.json{TMP_MARK}99999-0123abcd").write_bytes(b"{")
    assert len(_tmp_files(tmp_path)) == 1


def _wait_for_log(cat: Path, n: int, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if len(log_lines(cat)) >= n:
            return
        if proc.poll() is not None:
            raise AssertionError(f"promote ended early: {proc.communicate()}")
        time.sleep(0.02)
    raise AssertionError("the log line never appeared")


def _promote_then_stall(cat: str, cid: str, to: str, logged: Any) -> None:
    """A forked child: a real promotion whose document write is replaced (in this child
    only) by "say the log line is written, then wait to be killed"."""
    import risutools.catalog.promote as promote_mod
    from risutools.catalog.catalog import Catalog

    def stall(*_args: Any, **_kw: Any) -> None:
        logged.set()
        time.sleep(120)
        os._exit(3)  # never reached when the parent kills us

    promote_mod.write_document = stall  # type: ignore[assignment]
    c = Catalog.open(cat)
    promote_mod.execute(c, promote_mod.plan(c, c.resolve(cid), to))
    os._exit(4)


def test_kill9_between_log_and_document_then_rerun_completes(
        tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    cat = fresh_catalog(tmp_path_factory, tmp_path)
    approve(CUTTER, "request_review", "kim", "", None, str(cat))
    before = doc_path(cat, CUTTER).read_bytes()
    ctx = multiprocessing.get_context("fork")
    logged = ctx.Event()
    proc = ctx.Process(target=_promote_then_stall, args=(str(cat), CUTTER, TO, logged))
    proc.start()
    assert logged.wait(120), f"the child never reached the document write ({proc.exitcode})"
    assert len(log_lines(cat)) == 1  # the line is in, the document not yet written
    os.kill(proc.pid, signal.SIGKILL)
    proc.join(30)
    assert proc.exitcode == -signal.SIGKILL
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


def _promote_stalled_in_rename(cat: str, cid: str, to: str, ready: Any) -> None:
    """A forked child: a real promotion that stops (in this child only) inside fsio's
    atomic write, after its temp file is written and synced, before the rename."""
    import risutools.fsio as fsio
    from risutools.catalog.catalog import Catalog
    from risutools.catalog.promote import execute, plan

    def stall(*_args: Any, **_kw: Any) -> None:
        ready.set()
        time.sleep(120)
        os._exit(3)

    fsio._check_base = stall  # type: ignore[assignment]
    c = Catalog.open(cat)
    execute(c, plan(c, c.resolve(cid), to))
    os._exit(4)


def test_kill9_inside_the_document_write_leaves_a_temp_file_the_rerun_removes(
        tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    cat = fresh_catalog(tmp_path_factory, tmp_path)
    approve(CUTTER, "request_review", "kim", "", None, str(cat))
    before = doc_path(cat, CUTTER).read_bytes()
    ctx = multiprocessing.get_context("fork")
    ready = ctx.Event()
    proc = ctx.Process(target=_promote_stalled_in_rename, args=(str(cat), CUTTER, TO, ready))
    proc.start()
    assert ready.wait(120), f"the child never reached the rename ({proc.exitcode})"
    os.kill(proc.pid, signal.SIGKILL)
    proc.join(30)
    (left,) = _tmp_files(cat)  # the killed writer's temp file, whole new bytes, not renamed
    assert left.parent == cat
    assert doc_path(cat, CUTTER).read_bytes() == before
    assert len(log_lines(cat)) == 1
    r = run("promote", CUTTER, "--to", TO, cwd=cat)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "completes the interrupted transition" in r.stdout
    assert not _tmp_files(cat)
    assert len(log_lines(cat)) == 1
    assert validate_paths([cat]).exit_code() == 0


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
    left = _tmp_files(cat)  # a kill inside a write may leave its temp file ...
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
    assert not _tmp_files(cat), left  # ... which the next writer into the folder removes


# -- file modes ------------------------------------------------------------------------


@pytest.mark.parametrize("mode", [0o640, 0o664])
def test_file_modes_kept_by_promote_activate_and_new_approvals_follow_umask(
        tmp_path_factory: pytest.TempPathFactory, tmp_path: Path, mode: int) -> None:
    from harness import switch
    from test_catalog_support import approve_and_promote

    cat = fresh_catalog(tmp_path_factory, tmp_path)
    doc = doc_path(cat, CUTTER)
    doc.chmod(mode)
    old_umask = os.umask(0o027)
    try:
        approve(CUTTER, "request_review", "kim", "", None, str(cat))
        (rec,) = (cat / "approvals").glob("*.yaml")
        assert rec.stat().st_mode & 0o777 == 0o640  # 0o666 & ~0o027: the umask's
        before = doc.read_bytes()
        assert switch(CUTTER, TO, "status", False, False, str(cat)) == 0
        assert doc.read_bytes() != before  # really rewritten
        assert doc.stat().st_mode & 0o777 == mode
        for action, to in (("approve", "approved"), ("promote", "promoted")):
            approve_and_promote(cat, CUTTER, action, to)
            assert doc.stat().st_mode & 0o777 == mode
        assert switch(CUTTER, "active", "runtime", False, False, str(cat)) == 0
        assert doc.stat().st_mode & 0o777 == mode
        assert switch(CUTTER, "inactive", "runtime", False, False, str(cat)) == 0
        assert doc.stat().st_mode & 0o777 == mode
        os.umask(0o002)
        approve(CUTTER, "retire", "kim", "", None, str(cat))
        (rec,) = (cat / "approvals").glob("*--retire--*.yaml")
        assert rec.stat().st_mode & 0o777 == 0o664
    finally:
        os.umask(old_umask)
    assert len(log_lines(cat)) == 5
    assert validate_paths([cat]).exit_code() == 0


# -- a promoter racing the other writers of the catalog ----------------------------------


def _replay_child(cat: str, barrier: Any, q: Any) -> None:
    """``replay run --update`` of the cutter; its write waits at the barrier (this child
    only), after it has read the document."""
    import risutools.replay.component as comp
    from risutools.errors import RisuError
    from risutools.replay.api import run_component

    real = comp.write_or_fail

    def gated(path: Path, data: bytes, **kw: Any) -> None:
        barrier.wait(timeout=60)
        real(path, data, **kw)

    comp.write_or_fail = gated  # type: ignore[assignment]
    from test_catalog_support import FIXTURES

    try:
        run_component(Path(cat) / f"{CUTTER}.json", FIXTURES / "replay" / "anchor-edit.yaml",
                      update=True)
        q.put(("won", "replay"))
    except RisuError as exc:
        q.put(("lost", exc.one_line()))


def _ingest_child(cat: str, barrier: Any, q: Any) -> None:
    """``ingest`` of the fixture sources into the catalog; once it has read the cutter's
    current document (to decide whether it may replace it), it waits at the barrier (this
    child only) before it writes."""
    from test_catalog_support import FIXTURES

    import risutools.catalog.ingest as ing
    import risutools.catalog.ingest_write as writing

    real = writing.review_status

    def gated(existing: Any) -> Any:
        if isinstance(existing, dict) and existing.get("component_id") == CUTTER:
            barrier.wait(timeout=60)
        return real(existing)

    writing.review_status = gated  # type: ignore[assignment]
    res = ing.ingest(FIXTURES / "sources", Path(cat), lang="ko", jobs=1, use_cache=False)
    if any(CUTTER in c for c in res.collisions):
        q.put(("lost", next(c for c in res.collisions if CUTTER in c)))
    elif f"{CUTTER}.json" in res.written:
        q.put(("won", "ingest"))
    else:
        q.put(("neither", repr(res)))


@pytest.mark.parametrize("other", ["replay", "ingest"])
@pytest.mark.parametrize("round_", range(3))
def test_promoter_racing_replay_update_and_ingest(
        tmp_path_factory: pytest.TempPathFactory, tmp_path: Path, other: str,
        round_: int) -> None:
    cat = fresh_catalog(tmp_path_factory, tmp_path)
    # (ingest rewrites a candidate whose bytes differ from what it projects; the replay
    # evidence is carried over while the module is unchanged (issue 20), so a summary
    # edited by hand is what makes them differ here)
    path = doc_path(cat, CUTTER)
    edited = json.loads(path.read_text("utf-8"))
    edited["projection"]["summary"] = "edited by hand before the race"
    path.write_text(json.dumps(edited, ensure_ascii=False, indent=2) + "\n", "utf-8")
    approve(CUTTER, "request_review", "kim", "", None, str(cat))
    ctx = multiprocessing.get_context("fork")
    barrier = ctx.Barrier(2)
    q = ctx.Queue()
    rival = _replay_child if other == "replay" else _ingest_child
    procs = [ctx.Process(target=_promote_child, args=(str(cat), CUTTER, TO, barrier, q)),
             ctx.Process(target=rival, args=(str(cat), barrier, q))]
    for p in procs:
        p.start()
    for p in procs:
        p.join(180)
        assert p.exitcode == 0
    results = [q.get(timeout=10) for _ in procs]
    assert sorted(r[0] for r in results) == ["lost", "won"], results
    winner = next(r for r in results if r[0] == "won")
    lost = next(r for r in results if r[0] == "lost")
    assert "\n" not in lost[1] and ("changed since you read it" in lost[1]
                                    or "changed" in lost[1]), lost
    doc = json.loads(doc_path(cat, CUTTER).read_text("utf-8"))
    lines = log_lines(cat)
    if winner[1].isdigit():  # the promoter won: its line and its document, nothing else
        assert len(lines) == 1 and doc["provenance"]["review_status"] == TO
        assert lines[0]["after_sha256"] == _hash(doc)
        assert validate_paths([cat]).exit_code() == 0  # the log still chains
    else:  # the other writer won: no line, a candidate, its update kept whole
        assert lines == [] and doc["provenance"]["review_status"] == "candidate"
        if other == "ingest":  # the projection, the hand edit gone, the evidence kept
            assert doc["projection"]["summary"] != "edited by hand before the race"
            assert doc["projection"]["replay_status"] == "passed"


def _hash(doc: dict[str, Any]) -> str:
    from risutools.settings.lifecycle import base_sha256

    return base_sha256(doc)
