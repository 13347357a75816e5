"""Two conflicting steps started at the same moment (issue 21): exactly one wins, every time.

The catalog holds two approved components that cannot be live together (the cutter and its
twin, :func:`hostile_catalog.pair_catalog`).  Each round starts two real processes (forked
from this one, so they start in milliseconds and run ``risutools.cli.main`` as ``python -m
risutools`` would), released together: ``activate`` both (G12 and G13, as the issue found
it; each gate alone too), or ``promote --to promoted`` both (G7).  Before the gates that read
other components ran again under the catalog's lock, both won in most rounds.

Several rounds run at once, each on its own copy of the catalog, so 50 rounds stay fast.
``RISUTOOLS_RACE_ROUNDS`` sets the number of rounds of the main race (default 50).
"""

from __future__ import annotations

import json
import multiprocessing
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from hostile_catalog import TWIN, pair_catalog, status
from test_catalog_support import CUTTER

ROUNDS = int(os.environ.get("RISUTOOLS_RACE_ROUNDS", "50"))
AT_ONCE = 4  # rounds run side by side (each two processes)
CTX = multiprocessing.get_context("fork")


@pytest.fixture(scope="module", autouse=True)
def _warm() -> None:
    """The command line and the promote command imported here, so the forked children spend
    their time in the race, not importing."""
    import risutools.cli
    import risutools.commands.promote
    import risutools.report.present  # noqa: F401


def _child(args: tuple[str, ...], cwd: str, out: str, err: str, go: Any) -> None:
    import risutools.cli

    code: object = 0
    os.chdir(cwd)
    sys.stdout = open(out, "w", encoding="utf-8")  # noqa: SIM115
    sys.stderr = open(err, "w", encoding="utf-8")  # noqa: SIM115
    try:
        go.wait()
        sys.argv = ["risutools", *args]
        risutools.cli.main()
    except SystemExit as exc:
        code = exc.code
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(code if isinstance(code, int) else 2)


def _rounds(cats: list[Path], argv: list[tuple[str, ...]]) -> list[list[tuple[int, str]]]:
    """In each catalog of ``cats``, the commands ``argv`` started together; per catalog,
    each command's exit code and standard error."""
    go = CTX.Event()
    started = []
    for cat in cats:
        for n, args in enumerate(argv):
            out, err = cat.parent / f"out{n}", cat.parent / f"err{n}"
            p = CTX.Process(target=_child, args=(args, str(cat), str(out), str(err), go))
            p.start()
            started.append((cat, p, err))
    go.set()
    result: dict[Path, list[tuple[int, str]]] = {c: [] for c in cats}
    for cat, p, err in started:
        p.join(120)
        if p.is_alive():
            p.kill()
            pytest.fail(f"{argv} hung in {cat}")
        assert p.exitcode is not None
        result[cat].append((p.exitcode, err.read_text("utf-8")))
    return [result[c] for c in cats]


def _log(cat: Path) -> list[dict[str, Any]]:
    p = cat / "transitions.ndjson"
    return [json.loads(x) for x in p.read_bytes().splitlines() if x.strip()]


def _race(tmp_factory: pytest.TempPathFactory, tmp: Path, variant: str,
          argv: list[tuple[str, ...]], won: Any, rounds: int) -> None:
    base_log = len(_log(pair_catalog(tmp_factory, tmp / "base", variant)))
    done = 0
    while done < rounds:
        n = min(AT_ONCE, rounds - done)
        cats = [pair_catalog(tmp_factory, tmp / f"r{done + i}", variant) for i in range(n)]
        for cat, runs in zip(cats, _rounds(cats, argv), strict=True):
            codes = sorted(rc for rc, _ in runs)
            winners = [cid for cid in (CUTTER, TWIN) if won(status(cat, cid))]
            assert len(winners) == 1, (f"round {done}: {winners} both won", runs)
            assert codes == [0, 1], runs
            (loser_err,) = [e for rc, e in runs if rc == 1]
            lines = [x for x in loser_err.splitlines() if x.strip()]
            assert len(lines) <= 1, loser_err  # a lost compare-and-swap is one line
            assert len(_log(cat)) == base_log + 1  # one step written, the other nothing
        done += n


def _active(st: tuple[str, str]) -> bool:
    return st[1] == "active"


def _promoted(st: tuple[str, str]) -> bool:
    return st[0] == "promoted"


def test_two_conflicting_activations_one_wins(tmp_path_factory: pytest.TempPathFactory,
                                              tmp_path: Path) -> None:
    _race(tmp_path_factory, tmp_path, "both", [("activate", CUTTER), ("activate", TWIN)],
          _active, ROUNDS)


@pytest.mark.parametrize("variant", ["conflict", "exclusive"])
def test_each_runtime_gate_alone_holds_the_race(tmp_path_factory: pytest.TempPathFactory,
                                                tmp_path: Path, variant: str) -> None:
    """G12 (a conflict only) and G13 (an exclusive capability only), each on its own."""
    _race(tmp_path_factory, tmp_path, variant, [("activate", CUTTER), ("activate", TWIN)],
          _active, max(ROUNDS // 5, 4))


def test_two_conflicting_promotions_one_wins(tmp_path_factory: pytest.TempPathFactory,
                                             tmp_path: Path) -> None:
    """G7: two conflicting approved components promoted at once."""
    _race(tmp_path_factory, tmp_path, "conflict",
          [("promote", CUTTER, "--to", "promoted"), ("promote", TWIN, "--to", "promoted")],
          _promoted, max(ROUNDS // 5, 4))
