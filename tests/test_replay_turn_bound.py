"""A fixture's turns are bounded (``fixture.MAX_TURNS``): each is a request and a row of the
report, so a small file of empty turns must not make a report of gigabytes; and ``replay
synth`` writes no fixture that ``replay`` would refuse."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from harness import run_cli

from risutools import values
from risutools.errors import ConfigError, UsageError
from risutools.replay import fixture, synth
from risutools.replay.fixture import stream_fixture
from risutools.replay.synth import synthesize, write_synth

ROOT = Path(__file__).parents[1]
DOC = ROOT / "fixtures" / "documents" / "seed-000-context-cutter.json"
HEADER = {"fixture": "conversation-v1", "name": "bound"}
TURN = {"append": [{"role": "user", "content": "hi"}]}


def _write(tmp_path: Path, kind: str, turns: int) -> Path:
    path = tmp_path / f"f.{kind}"
    if kind in ("ndjson", "crlf.ndjson"):
        end = "\r\n" if kind == "crlf.ndjson" else "\n"
        lines = [json.dumps(HEADER)] + [json.dumps(TURN)] * turns
        path.write_bytes(end.join(lines).encode() + end.encode())
    else:  # (YAML reads this JSON too)
        path.write_text(json.dumps({**HEADER, "turns": [TURN] * turns}), "utf-8")
    return path


@pytest.mark.parametrize("kind", ["yaml", "json", "ndjson", "crlf.ndjson"])
def test_a_fixture_of_more_turns_than_the_bound_is_refused(
        tmp_path: Path, kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fixture, "MAX_TURNS", 3)
    assert stream_fixture(_write(tmp_path, kind, 3)).turn_count() == 3  # (at the bound: read)
    with pytest.raises(ConfigError) as err:
        stream_fixture(_write(tmp_path, kind, 4))
    line = err.value.one_line()
    assert "bad-fixture" in line and "4 turns, more than the 3" in line, line


def test_a_small_file_of_empty_turns_past_the_bound_is_one_line(tmp_path: Path) -> None:
    # ~3 MB of "{}" lines: a million requests and more, refused before any is replayed
    path = tmp_path / "many.ndjson"
    path.write_text(json.dumps(HEADER) + "\n" + "{}\n" * (fixture.MAX_TURNS + 1), "utf-8")
    doc = tmp_path / "doc.json"
    shutil.copyfile(DOC, doc)
    done = run_cli("replay", "run", doc, "-x", path, "-o", tmp_path / "out" / "r.json")
    assert done.returncode == 2
    [line] = done.stderr.splitlines()
    assert f"{fixture.MAX_TURNS + 1:,} turns, more than the {fixture.MAX_TURNS:,}" in line
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("kind", ["yaml", "json", "ndjson"])
def test_synth_writes_no_fixture_replay_would_refuse(
        tmp_path: Path, kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # (the class of a writer whose output its own reader refuses: a long fixture as YAML or
    # JSON was written, then refused by replay as too many values)
    data = synthesize(1, 21)  # (10 turns)
    ok = tmp_path / f"ok.{kind}"
    assert write_synth(data, ok) == ok.stat().st_size
    assert stream_fixture(ok).turn_count() == 10
    monkeypatch.setattr(fixture, "MAX_TURNS", 9)
    out = tmp_path / f"f.{kind}"
    with pytest.raises(UsageError, match=r"replay would refuse this fixture \(turns: "
                       r"10 turns, more than the 9"):
        write_synth(data, out)
    assert not out.exists()
    monkeypatch.setattr(fixture, "MAX_TURNS", 10)
    monkeypatch.setattr(synth, "MAX_FIXTURE_BYTES", 100)
    with pytest.raises(UsageError, match="bytes, more than the 100 a fixture may hold"):
        write_synth(data, out)
    assert not out.exists()


def test_synth_refuses_a_fixture_past_the_values_bound(tmp_path: Path) -> None:
    # a JSON fixture of 200,000 messages holds more values than a JSON file may: replay
    # refuses it whole, so synth writes none (NDJSON is streamed: written)
    done = run_cli("replay", "synth", "--seed", "1", "--messages", "200000",
                   "-o", tmp_path / "big.json")
    assert done.returncode == 2
    [line] = done.stderr.splitlines()
    assert "replay would refuse this fixture (too many values" in line, line
    assert not (tmp_path / "big.json").exists()


def test_synth_reads_ndjson_back_as_replay_run_streams_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the values bound holds for a fixture read whole (YAML, JSON), not for NDJSON, which
    # replay run streams: synth refused a 300,000-message NDJSON fixture replay runs
    monkeypatch.setattr(values, "MAX_YAML_COST", 10_000)
    data = synthesize(1, 201)
    assert write_synth(data, tmp_path / "f.ndjson") > 0
    with pytest.raises(UsageError, match="too many values"):
        write_synth(data, tmp_path / "f.json")
