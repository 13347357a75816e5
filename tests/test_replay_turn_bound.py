"""A fixture's turns are bounded (``fixture.MAX_TURNS``): each is a request and a row of the
report, so a small file of empty turns must not make a report of gigabytes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from harness import run_cli

from risutools.errors import ConfigError
from risutools.replay import fixture
from risutools.replay.fixture import stream_fixture

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
