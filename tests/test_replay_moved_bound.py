"""The messages a replay hands the checker are bounded (``run.MAX_MOVED``): a switch of the
module sends the whole history, then withdraws it, which the cutter does in a few steps
and the checker message by message, so a small fixture of switches over a long history
must be refused with one line, not run for hours."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from harness import SEED, run_cli

from risutools.errors import ReplayError
from risutools.replay import run
from risutools.replay.fixture import load_fixture
from risutools.replay.run import iterate_cutter
from risutools.settings.replay import load_replay_config

HEADER = {"fixture": "conversation-v1", "name": "switches"}


def _switches(tmp_path: Path, messages: int, switches: int) -> Path:
    path = tmp_path / "switches.ndjson"
    turns = [{"append": [{"id": f"m{i}", "role": ("user", "assistant")[i % 2],
                          "content": "x" * 400} for i in range(messages)]}]
    turns += [{"toggle": bool(i % 2)} for i in range(switches)]
    path.write_text("\n".join(json.dumps(t) for t in [HEADER, *turns]) + "\n", "utf-8")
    return path


def _moves(path: Path) -> list[int]:
    """The messages the output gains or loses at each request, told by the cutter's
    results alone (the output is the history less a first few: the counts differ by them)."""
    fx = load_fixture(path)
    out, moves = 0, []
    for _, res, _ in iterate_cutter(fx, load_replay_config(None, None, fx.config),
                                    observe=False):
        moves.append(abs(res.messages_out - out))
        out = res.messages_out
    return moves


def test_switches_past_the_bound_are_refused_at_the_turn_that_crosses_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _switches(tmp_path, 300, 12)
    moves = _moves(path)
    assert moves[0] > 0 and all(m > 200 for m in moves[1:])  # (each switch moves most)
    total = sum(moves)
    fx = load_fixture(path)
    cfg = load_replay_config(None, None, fx.config)
    monkeypatch.setattr(run, "MAX_MOVED", total)  # at the bound: replayed
    assert len(list(iterate_cutter(fx, cfg))) == 13
    monkeypatch.setattr(run, "MAX_MOVED", sum(moves[:6]) + 1)  # crossed at the 7th request
    with pytest.raises(ReplayError) as err:
        list(iterate_cutter(load_fixture(path), cfg))
    line = err.value.one_line()
    assert line.startswith("turn 7: bad-fixture: the output gains or loses more than"), line
    assert f"{sum(moves[:6]) + 1:,} messages" in line


def test_the_command_says_it_in_one_line_and_writes_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _switches(tmp_path, 300, 12)
    monkeypatch.setattr(run, "MAX_MOVED", 1000)
    doc = tmp_path / "doc.json"
    shutil.copyfile(SEED, doc)
    done = run_cli("replay", "run", doc, "-x", path, "-o", tmp_path / "out" / "r.json")
    assert done.returncode == 2, done.stderr
    [line] = done.stderr.splitlines()
    assert "bad-fixture: the output gains or loses more than 1,000 messages" in line, line
    assert not (tmp_path / "out").exists()


def test_a_whole_history_observed_is_counted_too(monkeypatch: pytest.MonkeyPatch,
                                                 tmp_path: Path) -> None:
    """A cutter whose output is read whole (a :class:`Step` a request) is handed its
    history and its output each request: both counted."""

    class Whole(run.ContextCutter):
        def output(self, result: run.CutResult) -> list[run.Message]:
            return super().output(result)

    fx = load_fixture(_switches(tmp_path, 50, 0))
    cfg = load_replay_config(None, None, fx.config)
    monkeypatch.setattr(run, "MAX_MOVED", 99)
    with pytest.raises(ReplayError, match="more than 99 messages"):
        list(iterate_cutter(fx, cfg, Whole))
    monkeypatch.setattr(run, "MAX_MOVED", 100)
    assert len(list(iterate_cutter(fx, cfg, Whole))) == 1
