"""Ingest on a Dask distributed cluster (``--scheduler``): the same catalog as the local pool.

The cluster is a ``distributed.LocalCluster`` with 2 worker processes, started once for
the module (skipped, with the reason, when ``distributed`` is not installed; it is in
the ``dev`` extra, so ``make test`` runs these).  The tests about a missing
``distributed`` or a bad address need no cluster.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from harness import ROOT

from risutools.catalog.ingest import ingest
from risutools.formats.risum import write_risum

SOURCES = ROOT / "fixtures" / "sources"
NOTES = ROOT / "fixtures" / "notes"


def _catalog_bytes(out: Path) -> dict[str, bytes]:
    return {
        p.relative_to(out).as_posix(): p.read_bytes()
        for p in sorted(out.rglob("*"))
        if p.is_file() and ".risutools-cache" not in p.parts and not p.name.startswith(".")
    }


def _tree(tmp: Path) -> Path:
    """The fixture sources, 40 generated modules (some with assets), one copy (a
    duplicate), one truncated file and one file that is not a Risu file."""
    src = tmp / "src"
    shutil.copytree(SOURCES, src)
    for i in range(40):
        assets = [os.urandom(1000 + 97 * i)] if i % 3 == 0 else []
        mod = {
            "name": f"Cluster Module {i}",
            "description": "모듈 / module",
            "id": f"00000000-0000-4000-8000-{i:012d}",
            "lorebook": [{"key": f"k{i}", "content": "설정 " * i, "comment": "c",
                          "mode": "normal"}],
            "assets": [[f"a{j}", "", "webp"] for j in range(len(assets))],
        }
        sub = src / f"part{i % 4}"
        sub.mkdir(exist_ok=True)
        (sub / f"{5000 + i}_cluster-{i}.risum").write_bytes(write_risum(mod, assets))
    shutil.copy(src / "part0" / "5000_cluster-0.risum", src / "9999_copy.risum")
    (src / "7777_truncated.risum").write_bytes(b"\x6f\x00\xff\xff\x00\x00abc")
    (src / "readme.txt").write_text("not a risu file", encoding="utf-8")
    return src


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    distributed = pytest.importorskip(
        "distributed", reason="distributed is not installed (pip install 'risutools[dask]')"
    )
    with distributed.LocalCluster(
        n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None
    ) as lc:
        yield lc


def _summary(result: Any) -> list[tuple[str, str, str | None]]:
    return [(s.path, s.status, s.duplicate_of) for s in result.sources]


def test_cluster_catalog_is_byte_identical_to_the_local_pool(
    tmp_path: Path, cluster: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from distributed import Client

    src = _tree(tmp_path)
    for out in (tmp_path / "pool", tmp_path / "dask"):
        shutil.copytree(NOTES, out / "notes")
    pool = ingest(src, tmp_path / "pool", jobs=2, use_cache=False, lang="ko")
    # relative paths from another folder: the workers started elsewhere, so ingest must
    # send them absolute paths (sources and the catalog's notes)
    monkeypatch.chdir(tmp_path)
    with Client(cluster.scheduler_address, set_as_default=False) as client:
        dask = ingest("src", "dask", executor=client.get_executor(), use_cache=False,
                      lang="ko")
    assert _catalog_bytes(tmp_path / "dask") == _catalog_bytes(tmp_path / "pool")
    assert _summary(dask) == _summary(pool)
    assert dask.counts() == pool.counts()
    counts = dask.counts()
    assert counts["failed"] == 1 and counts["duplicate"] == 1 and counts["not_risu"] == 1
    assert counts["written"] == counts["components"] >= 45
    # the notes reached the workers: a noted component carries the notes' digest
    noted = (tmp_path / "dask" / "module.risu.174678332.context-cutter.json").read_text(
        encoding="utf-8")
    assert "notes.yaml" in noted


def test_cli_scheduler_runs_on_the_cluster(tmp_path: Path, cluster: Any) -> None:
    src = _tree(tmp_path)
    written = time.monotonic()
    base = [sys.executable, "-m", "risutools", "ingest", str(src)]
    local = subprocess.run([*base, "-o", str(tmp_path / "local"), "-j", "2", "--json"],
                           capture_output=True, text=True)
    # a source changed less than a second before a run is not recorded by it (RACY_NS)
    time.sleep(max(0.0, written + 1.1 - time.monotonic()))
    remote = subprocess.run(
        [*base, "-o", str(tmp_path / "remote"), "--scheduler", cluster.scheduler_address,
         "--json"], capture_output=True, text=True)
    assert local.returncode == remote.returncode == 1, remote.stderr  # the truncated file
    assert "Traceback" not in remote.stderr
    assert _catalog_bytes(tmp_path / "remote") == _catalog_bytes(tmp_path / "local")
    a, b = json.loads(local.stdout), json.loads(remote.stdout)
    assert a["counts"] == b["counts"] and a["written"] == b["written"]
    # a second run on the cluster reads the cache and changes nothing
    again = subprocess.run(
        [*base, "-o", str(tmp_path / "remote"), "--scheduler", cluster.scheduler_address,
         "--json"], capture_output=True, text=True)
    counts = json.loads(again.stdout)["counts"]
    assert counts["cached"] == counts["files"] - counts["failed"] and counts["written"] == 0


def test_scheduler_with_jobs_is_refused(tmp_path: Path) -> None:
    r = subprocess.run(
        [sys.executable, "-m", "risutools", "ingest", str(SOURCES), "-o", str(tmp_path / "c"),
         "--scheduler", "tcp://127.0.0.1:1", "-j", "2"], capture_output=True, text=True)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "--scheduler" in lines[0] and "-j" in lines[0], r.stderr
    assert not (tmp_path / "c").exists()


def test_without_distributed_one_line_names_the_extra(tmp_path: Path) -> None:
    code = (
        "import sys; sys.modules['distributed'] = None\n"  # import distributed -> ImportError
        "from risutools.cli import main\n"
        f"sys.argv = ['risutools', 'ingest', {str(SOURCES)!r}, '-o', "
        f"{str(tmp_path / 'c')!r}, '--scheduler', 'tcp://127.0.0.1:8786']\n"
        "main()\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert "pip install 'risutools[dask]'" in lines[0] and "dask-missing" in lines[0]
    assert not (tmp_path / "c").exists()


def test_unreachable_scheduler_is_one_line(tmp_path: Path) -> None:
    pytest.importorskip("distributed", reason="distributed is not installed")
    r = subprocess.run(
        [sys.executable, "-m", "risutools", "ingest", str(SOURCES), "-o", str(tmp_path / "c"),
         "--scheduler", "tcp://127.0.0.1:9"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "scheduler-unreachable" in lines[0], r.stderr
    assert "Traceback" not in r.stderr
    assert not (tmp_path / "c").exists()


def test_worker_with_another_version_is_refused(cluster: Any, monkeypatch: Any) -> None:
    from risutools.catalog import cluster as cl
    from risutools.errors import ConfigError

    monkeypatch.setattr(cl, "__version__", "0.0.0-other")  # the client's view only
    with pytest.raises(ConfigError) as err, cl.cluster_executor(cluster.scheduler_address):
        pass
    assert err.value.code == "worker-mismatch" and "0.0.0-other" in err.value.why
