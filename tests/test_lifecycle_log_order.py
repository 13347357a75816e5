"""``validate`` reads a component's log lines in order, as ``review`` does (adversarial pass,
life44).

MC305 checked the status steps as one chain and the runtime switches, publishes and
evidence apart; only the review's RV204 checked that each line starts where the previous
line of the component ended.  So a pull request that moved lines of the log about -- an
activation written before the approval it needs, an evidence line moved before the step it
followed -- passed ``validate`` (CI's default check) with exit 0."""

from __future__ import annotations

from pathlib import Path

import pytest
from harness import run_cli
from test_catalog_support import CUTTER, approved_with_evidence, fresh_catalog


def _ok(*args: str | Path) -> None:
    r = run_cli(*args)
    assert r.returncode == 0, (args, r.stdout, r.stderr)


def _walked(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> Path:
    """The cutter moved to approved and switched on, each step approved (unsigned)."""
    cat = fresh_catalog(tmp_path_factory, tmp_path)
    approved_with_evidence(cat)
    _ok("approve", CUTTER, "--action", "activate", "--reviewer", "kim", "--catalog", cat)
    _ok("activate", CUTTER, "--catalog", cat)
    _ok("validate", cat)
    _ok("review", cat, "-q")
    return cat


#: the walked log is: 1 pending, 2 approved, 3 evidence (the replay), 4 activation; each
#: order below keeps every line and moves some of them
ORDERS = [(1, 4, 2, 3), (4, 1, 2, 3), (1, 4, 3, 2), (1, 2, 4, 3), (1, 3, 2, 4), (2, 1, 3, 4)]


@pytest.mark.parametrize("order", ORDERS)
def test_lines_moved_about_fail_validate(tmp_path_factory: pytest.TempPathFactory,
                                         tmp_path: Path, order: tuple[int, ...]) -> None:
    cat = _walked(tmp_path_factory, tmp_path)
    log = cat / "transitions.ndjson"
    lines = log.read_bytes().splitlines(keepends=True)
    assert len(lines) == 4, lines
    log.write_bytes(b"".join(lines[n - 1] for n in order))
    for command in (("validate", cat, "-f", "concise"), ("review", cat, "-q", "-f", "concise")):
        r = run_cli(*command)
        assert r.returncode == 1, (order, command, r.stdout, r.stderr)
        assert " MC305 " in r.stdout, (order, command, r.stdout)


def test_lines_in_order_pass(tmp_path_factory: pytest.TempPathFactory,
                             tmp_path: Path) -> None:
    cat = _walked(tmp_path_factory, tmp_path)
    r = run_cli("validate", cat, "-f", "concise")
    assert r.returncode == 0 and " MC305 " not in r.stdout, r.stdout
