"""``review --scheduler``: the document rules run on a Dask cluster (a
``distributed.LocalCluster`` of 2 worker processes), and the review is the one the local
run gives.  Skipped, with the reason, when ``distributed`` is not installed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from harness import ROOT, run_cli

from risutools.catalog.catalog import Catalog
from risutools.catalog.review import review_catalog
from risutools.report.review_text import render_review_json


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    distributed = pytest.importorskip(
        "distributed", reason="distributed is not installed (pip install 'risutools[dask]')")
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                  dashboard_address=None) as lc:
        yield lc


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cat = tmp_path_factory.mktemp("dask") / "catalog"
    assert run_cli("ingest", ROOT / "fixtures" / "sources", "-o", cat, "-q").returncode == 0
    assert run_cli("ingest", ROOT / "fixtures" / "interactions", "-o", cat, "-q"
                   ).returncode == 0
    return cat


def test_the_cluster_review_is_the_local_one(cluster: Any, catalog: Path) -> None:
    from distributed import Client

    local = render_review_json(review_catalog(Catalog.open(catalog), jobs=1))
    with Client(cluster.scheduler_address, set_as_default=False) as client:
        remote = render_review_json(review_catalog(Catalog.open(catalog),
                                                   executor=client.get_executor()))
    assert remote == local


def test_cli_scheduler(cluster: Any, catalog: Path) -> None:
    r = run_cli("review", catalog, "-q", "-f", "json", "--scheduler", cluster.scheduler_address)
    assert r.returncode == 0, r.stderr
    assert r.stdout == run_cli("review", catalog, "-q", "-f", "json").stdout


def test_scheduler_with_jobs_is_refused(catalog: Path) -> None:
    r = run_cli("review", catalog, "--scheduler", "tcp://127.0.0.1:1", "-j", "2")
    assert r.returncode == 2 and "--scheduler" in r.stderr and "-j" in r.stderr


def test_unreachable_scheduler_is_one_line(catalog: Path) -> None:
    pytest.importorskip("distributed")
    r = run_cli("review", catalog, "-q", "--scheduler", "tcp://127.0.0.1:9")
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1 and "scheduler-unreachable" in lines[0]


def test_a_large_document_gives_no_dask_warning(cluster: Any, tmp_path: Path) -> None:
    """Dask warns of a task graph past 10 MB ("Sending large graph ...", six lines with a
    library path): a catalog holding a 6 MiB document printed it on standard error, where
    every line is one of risutools' (seventh pass)."""
    import json
    import subprocess
    import sys

    cat = tmp_path / "cat"
    cat.mkdir()
    doc = json.loads((ROOT / "fixtures" / "documents" / "seed-000-context-cutter.json")
                     .read_text("utf-8"))
    doc["payload"]["notes_pad"] = "가" * (2 * 1024 * 1024)  # (6 MiB of UTF-8)
    (cat / "big.json").write_text(json.dumps(doc, ensure_ascii=False), "utf-8")
    (cat / "approvals").mkdir()
    r = subprocess.run([sys.executable, "-m", "risutools", "review", str(cat), "-q", "-f",
                        "concise", "--scheduler", cluster.scheduler_address],
                       capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert r.returncode in (0, 1), r.stderr
    assert r.stderr == "", r.stderr
