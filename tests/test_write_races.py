"""Two writers at once, and writers killed with SIGKILL, through the real commands.

Every test here runs real child processes (forked from the test, so they start in
milliseconds; each runs ``risutools.cli.main`` as ``python -m risutools`` would):

* two ``replay run DOC --update`` on one document, and two ``ingest --ndjson`` into one
  catalog, started together many times: no update is lost (every writer that says it
  wrote finds its change in the final file), and a loser exits 1 with one line saying
  "changed since you read it";
* ``ingest`` and ``replay --update`` killed with ``kill -9`` at random points: every
  document is the old or the new bytes, never torn, and after the next complete run no
  temp file is left.

``RISUTOOLS_RACE_ROUNDS`` sets the number of rounds (default 12) for a longer soak.
"""

from __future__ import annotations

import contextlib
import json
import multiprocessing
import os
import random
import shutil
import signal
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from harness import ROOT, SEED

from risutools.catalog.ingest import NDJSON_NAME
from risutools.formats.risum import write_risum

FIX = ROOT / "fixtures" / "replay"
ROUNDS = int(os.environ.get("RISUTOOLS_RACE_ROUNDS", "12"))
CONFLICT = "changed since you read it"

CTX = multiprocessing.get_context("fork")  # real child processes, without a fresh import


@pytest.fixture(scope="module", autouse=True)
def _warm(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Run each command once in this process, so the forked children start with every
    module already imported (the children then spend their time writing, not importing)."""
    from typer.testing import CliRunner

    from risutools.cli import app

    tmp = tmp_path_factory.mktemp("warm")
    shutil.copy(SEED, tmp / "c.json")
    _risum(tmp / "src" / "101_w.risum", "w", "w")
    runner = CliRunner()
    for args in (
        ["replay", "run", str(tmp / "c.json"), "-x", str(FIX / "toggle.yaml"), "--update"],
        ["ingest", str(tmp / "src"), "-o", str(tmp / "cat"), "-j1", "-q"],
        ["ingest", str(tmp / "src"), "-o", str(tmp / "cat2"), "-j1", "-q", "--ndjson"],
    ):
        r = runner.invoke(app, args)
        assert r.exit_code == 0, r.output


def _child(args: tuple[str, ...], out: str, err: str, go: Any) -> None:
    import risutools.cli

    code: object = 0
    sys.stdout = open(out, "w", encoding="utf-8")  # noqa: SIM115
    sys.stderr = open(err, "w", encoding="utf-8")  # noqa: SIM115
    try:
        if go is not None:
            go.wait()
        sys.argv = ["risutools", *args]
        risutools.cli.main()
    except SystemExit as exc:
        code = exc.code
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code if isinstance(code, int) else 2)


def _spawn(tmp: Path, n: int, args: tuple[str, ...], go: Any = None) -> Any:
    out, err = tmp / f"out{n}", tmp / f"err{n}"
    p = CTX.Process(target=_child, args=(args, str(out), str(err), go))
    p.start()
    return p, out, err


def _together(tmp: Path, *commands: tuple[str, ...]) -> list[tuple[int, str, str]]:
    go = CTX.Event()
    started = [_spawn(tmp, n, c, go) for n, c in enumerate(commands)]
    go.set()
    result = []
    for p, out, err in started:
        p.join(120)
        result.append((p.exitcode, out.read_text(encoding="utf-8"),
                       err.read_text(encoding="utf-8")))
    return result


def _temps(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if ".risutools-tmp-" in p.name]


def _assert_loser(rc: int, stderr: str) -> None:
    assert rc == 1, stderr
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and CONFLICT in lines[0], stderr


# ---- two writers ----------------------------------------------------------------------


def test_two_replay_updates_lose_nothing(tmp_path: Path) -> None:
    doc = tmp_path / "c.json"
    fixtures = {"toggle": FIX / "toggle.yaml", "duplicates": FIX / "duplicates.yaml"}
    losers = 0
    for _ in range(ROUNDS):
        shutil.copy(SEED, doc)
        runs = _together(
            tmp_path,
            *[("replay", "run", str(doc), "-x", str(f), "--update") for f in fixtures.values()],
        )
        final = json.loads(doc.read_text(encoding="utf-8"))
        ids = {r.get("source_id") for r in final["provenance"]["source_refs"]}
        for name, (rc, so, se) in zip(fixtures, runs, strict=True):
            if rc == 0:
                assert f"updated {doc}" in so
                assert f"replay:{name}" in ids, f"lost update of {name}"
            else:
                losers += 1
                _assert_loser(rc, se)
                assert "updated" not in so
        assert any(rc == 0 for rc, _, _ in runs)
        assert _temps(tmp_path) == []
    print(f"{ROUNDS} rounds, {losers} lost compare-and-swap")


def _risum(path: Path, name: str, text: str) -> None:
    mod = {
        "name": name,
        "description": "race module",
        "id": "00000000-0000-4000-8000-000000000001",
        "lorebook": [{"key": "k", "content": text, "comment": "c", "mode": "normal"}],
        "assets": [],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(write_risum(mod, []))


def test_two_ingests_into_one_catalog_lose_nothing(tmp_path: Path) -> None:
    """Two sources with different components merged into one components.ndjson."""
    src_a, src_b, cat = tmp_path / "a", tmp_path / "b", tmp_path / "cat"
    _risum(src_a / "101_alpha.risum", "alpha", "a")
    _risum(src_b / "102_beta.risum", "beta", "b")
    losers = 0
    for _ in range(ROUNDS):
        shutil.rmtree(cat, ignore_errors=True)
        cat.mkdir()
        runs = _together(
            tmp_path,
            ("ingest", str(src_a), "-o", str(cat), "--ndjson", "-q", "--no-cache"),
            ("ingest", str(src_b), "-o", str(cat), "--ndjson", "-q", "--no-cache"),
        )
        lines = (cat / NDJSON_NAME).read_bytes().split(b"\n")
        assert lines[-1] == b""
        ids = {json.loads(x)["component_id"] for x in lines[:-1]}
        for want, (rc, _so, se) in zip(("alpha", "beta"), runs, strict=True):
            if rc == 0:
                assert any(want in i for i in ids), f"lost update: {want} not in {ids}"
            else:
                losers += 1
                _assert_loser(rc, se)
        assert _temps(cat) == []
    print(f"{ROUNDS} rounds, {losers} lost compare-and-swap")


# ---- kill -9 ----------------------------------------------------------------------------


def _kill_at(tmp: Path, delay: float, *args: str) -> list[int]:
    """Run a command, SIGKILL it after ``delay`` s; returns the pids of its worker
    processes at that moment (Linux; [] elsewhere)."""
    p, _, _ = _spawn(tmp, 9, args)
    p.join(delay)
    workers: list[int] = []
    if p.exitcode is None:
        with contextlib.suppress(OSError):
            kids = Path(f"/proc/{p.pid}/task/{p.pid}/children").read_text(encoding="ascii")
            workers = [int(x) for x in kids.split()]
        os.kill(p.pid, signal.SIGKILL)
        p.join()
    return workers


def _gone(pids: list[int]) -> bool:
    """Whether none of ``pids`` runs any more (zombies count as gone), waiting up to 30 s."""
    for _ in range(300):
        alive = []
        for pid in pids:
            with contextlib.suppress(OSError):
                state = Path(f"/proc/{pid}/stat").read_text(encoding="ascii")
                if state.rsplit(")", 1)[-1].split()[0] != "Z":
                    alive.append(pid)
        if not alive:
            return True
        time.sleep(0.1)
    return False


def _run(tmp: Path, *args: str) -> float:
    t0 = time.perf_counter()
    p, _, err = _spawn(tmp, 8, args)
    p.join(120)
    assert p.exitcode in (0, 1), err.read_text(encoding="utf-8")
    return time.perf_counter() - t0


def _snapshot(cat: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in cat.glob("*.json")} | (
        {NDJSON_NAME: (cat / NDJSON_NAME).read_bytes()} if (cat / NDJSON_NAME).exists() else {}
    )


def test_ingest_killed_at_random_points(tmp_path: Path) -> None:
    rng = random.Random(8)
    src, cat = tmp_path / "src", tmp_path / "cat"
    for i in range(24):
        _risum(src / f"{200 + i}_m{i}.risum", f"m{i}", "old")
    for ndjson in (False, True):
        shutil.rmtree(cat, ignore_errors=True)
        flags = ["--ndjson"] if ndjson else []
        _run(tmp_path, "ingest", str(src), "-o", str(cat), "-j1", "-q", *flags)
        old = _snapshot(cat)
        for i in range(24):
            _risum(src / f"{200 + i}_m{i}.risum", f"m{i}", "new")
        full = _run(tmp_path, "ingest", str(src), "-o", str(tmp_path / "ref"), "-j1", "-q", *flags)
        new = _snapshot(tmp_path / "ref")
        shutil.rmtree(tmp_path / "ref")
        mixed = left = 0
        for _ in range(ROUNDS):
            delay = rng.uniform(0.3, 1.1) * full
            # -j2: the workers write the temp files, this process renames them
            jobs = rng.choice(("-j1", "-j2")) if not ndjson else "-j1"
            workers = _kill_at(tmp_path, delay, "ingest", str(src), "-o", str(cat), jobs, "-q",
                               *flags)
            assert _gone(workers), f"pool workers {workers} outlived their killed parent"
            snap = _snapshot(cat)
            for name, data in snap.items():  # each file old or new, never torn
                assert data in (old.get(name), new[name]), name
            mixed += len({data == new[name] for name, data in snap.items()}) > 1
            left += bool(_temps(cat))
        print(f"ndjson={ndjson}: {ROUNDS} kills, {mixed} mid-write, {left} left temp files")
        _run(tmp_path, "ingest", str(src), "-o", str(cat), "-j1", "-q", *flags)
        assert _snapshot(cat) == new
        assert _temps(cat) == []
        for i in range(24):
            _risum(src / f"{200 + i}_m{i}.risum", f"m{i}", "old")


def test_replay_update_killed_at_random_points(tmp_path: Path) -> None:
    rng = random.Random(9)
    doc = tmp_path / "c.json"
    shutil.copy(SEED, doc)
    old = doc.read_bytes()
    args = ("replay", "run", str(doc), "-x", str(FIX / "toggle.yaml"), "--update")
    full = _run(tmp_path, *args)
    new = doc.read_bytes()
    assert new != old
    for _ in range(ROUNDS):
        doc.write_bytes(old)
        _kill_at(tmp_path, rng.uniform(0.5, 1.1) * full, *args)
        assert doc.read_bytes() in (old, new)
    doc.write_bytes(old)
    _run(tmp_path, *args)
    assert doc.read_bytes() == new
    assert _temps(tmp_path) == []
