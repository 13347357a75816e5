"""``replay monitor`` reads an NDJSON fixture as ``replay run`` does: streamed, its turns
parsed as the replay reaches them, its rows kept out of memory.  Before, it read every
fixture whole, so an NDJSON fixture that ``replay run`` took (52 MB, 250,000 messages of
``replay synth``) was refused by ``replay monitor`` as more values than the memory bound
of a file read whole allows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from harness import FIXTURES, run_cli

from risutools import values
from risutools.commands import replay_monitor
from risutools.errors import ConfigError
from risutools.replay.api import run_monitor
from risutools.replay.fixture import load_fixture
from risutools.replay.spool import Spool
from risutools.report.present import present

HEAD = {"fixture": "conversation-v1", "name": "streamed",
        "config": {"max_context": 400, "debounce": 2}}


def _fixture(tmp_path: Path, turns: int) -> Path:
    """An NDJSON fixture whose usage climbs, with metrics on most turns (alerts)."""
    lines = [json.dumps(HEAD)]
    for i in range(turns):
        turn: dict[str, object] = {"append": [{"role": "user" if i % 2 else "assistant",
                                               "content": f"turn {i} " + "가나다 " * (i % 7)}]}
        if i % 3:
            used = min(99, 40 + i)
            turn["metrics"] = {"used_pct": used, "remaining_percentage": 100 - used}
        lines.append(json.dumps(turn, ensure_ascii=False))
    p = tmp_path / "long.ndjson"
    p.write_text("\n".join(lines) + "\n", "utf-8")
    return p


def _listing(report: dict[str, Any]) -> str:
    """What ``replay monitor`` prints of ``report`` (its pieces, as they are written)."""
    out = present(replay_monitor.Monitored(report)).out
    assert out is not None and not isinstance(out, str)  # (written as it is made)
    return "".join(p if isinstance(p, str) else p.decode() for p in out)


def test_the_streamed_report_is_the_whole_read_report(tmp_path: Path) -> None:
    """The same report and the same listing, rows in a spool instead of a list."""
    fx = _fixture(tmp_path, 300)
    whole = run_monitor(fx)
    streamed = run_monitor(fx, streamed=True)
    assert isinstance(streamed["requests"], Spool) and isinstance(whole["requests"], list)
    assert list(streamed["requests"]) == whole["requests"]
    assert list(streamed["alerts"]) == whole["alerts"] and whole["alerts"]
    rest = {k: v for k, v in whole.items() if k not in ("requests", "alerts")}
    assert {k: v for k, v in streamed.items() if k not in ("requests", "alerts")} == rest
    shown = _listing(streamed)
    assert shown == _listing(whole)
    assert shown.count("\n") > 300


def test_an_ndjson_fixture_past_the_whole_read_bound_is_replayed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With the bound of a file read whole made small (the real one needs a fixture of
    about 50 MB), the whole read refuses the fixture and the command replays it."""
    fx = _fixture(tmp_path, 300)
    before = run_monitor(fx)
    monkeypatch.setattr(values, "MAX_YAML_COST", 4096)
    with pytest.raises(ConfigError, match="too many values"):
        load_fixture(fx)
    out = tmp_path / "out" / "r.json"
    got = replay_monitor.run(replay_monitor.Options(str(fx), output=str(out)))
    assert list(got.report["requests"]) == before["requests"]
    assert json.loads(out.read_bytes())["requests"] == before["requests"]


def test_the_command_writes_what_it_wrote_before(tmp_path: Path) -> None:
    """The three files and the listing of the command, streamed, are those of the report
    held whole (written by the library's own writer from the list)."""
    from risutools.replay.api import write_report_files

    fx = _fixture(tmp_path, 120)
    done = run_cli("replay", "monitor", "-x", fx, "-o", tmp_path / "a" / "r.json")
    assert done.returncode == 0, done.stderr
    write_report_files(run_monitor(fx), tmp_path / "b" / "r.json")
    for name in ("r.json", "r.md", "r.html"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    assert done.stdout == _listing(run_monitor(fx))


@pytest.mark.parametrize("line", ['{"append": 5}', '{"metrics": {"used_pct": "x"}}',
                                  '{"append": [{"role": "user", "content": "a"}], "append": []}',
                                  '{"append": [{"role": "us'])
def test_a_bad_turn_is_the_same_one_line(tmp_path: Path, line: str) -> None:
    """A bad line past good ones: refused in the line the whole read gives, nothing
    written."""
    fx = _fixture(tmp_path, 40)
    fx.write_text(fx.read_text("utf-8") + line + "\n", "utf-8")
    with pytest.raises(ConfigError) as whole:
        load_fixture(fx)
    done = run_cli("replay", "monitor", "-x", fx, "-o", tmp_path / "out" / "r.json")
    assert done.returncode == 2 and not (tmp_path / "out").exists()
    assert str(whole.value).splitlines()[0] in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_the_seed_fixture_unchanged() -> None:
    """The monitor's own fixture (YAML: read whole either way) gives the same report."""
    fx = FIXTURES / "replay" / "monitor.yaml"
    streamed = run_monitor(fx, streamed=True)
    assert list(streamed["requests"]) == run_monitor(fx)["requests"]
