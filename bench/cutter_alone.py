"""The reference cutter alone over a fixture, as a whole process: the cutter's side of
``replay run``'s whole-process comparison (issue 23, goal 4; ``bench_replay.py
--run-only``, bench/RESULTS.md round 28).

The process does what ``replay run`` does before its checkers, and nothing after: the
fixture read as the command reads it (``stream_fixture``: an NDJSON file's turns parsed as
the replay reaches them, any other read whole), the configuration loaded from it as the
command loads it without a catalog, then every request made by the cutter with the cycle
collector paused (``cycles_paused``, as the command pauses it), no observation, no row,
no file written.  Its cost a request is its CPU time less its own on a one-request
fixture (the same start-up), divided by the requests.

Usage: ``python bench/cutter_alone.py FIXTURE`` (from the repository root; prints the
requests made).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from risutools.collector import cycles_paused
from risutools.errors import RisuError
from risutools.replay.fixture import stream_fixture
from risutools.replay.run import iterate_cutter
from risutools.settings.replay import load_replay_config


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__.strip().splitlines()[0], "\nusage: cutter_alone.py FIXTURE",
              file=sys.stderr)
        return 2
    requests = 0
    try:
        fx = stream_fixture(argv[0])
        cfg = load_replay_config(None, None, fx.config, paths=(None, argv[0]))
        with cycles_paused():
            for _ in iterate_cutter(fx, cfg, observe=False):
                requests += 1
    except RisuError as exc:  # (a fixture refused: its one line, as the command says it)
        print(exc, file=sys.stderr)
        return 1
    print(requests)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
