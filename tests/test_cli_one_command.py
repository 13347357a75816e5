"""The command line makes only the command it runs (``risutools.report.usage.one_command``):
whatever a command line shows and does is what it was with every command made."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer.main

from risutools import cli
from risutools.report.usage import one_command

ROOT = Path(__file__).resolve().parents[1]
SEED = str(ROOT / "fixtures" / "documents" / "seed-000-context-cutter.json")


@contextlib.contextmanager
def _every_command(_app: Any, _argv: Any) -> Iterator[None]:
    yield


def _run(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
         args: list[str]) -> tuple[Any, str, str]:
    monkeypatch.setattr("sys.argv", ["risutools", *args])
    with pytest.raises(SystemExit) as exc:
        cli.main()
    out, err = capsys.readouterr()
    return exc.value.code, out, err


def _names() -> list[str]:
    """Every command and group of the command line, as its help lists them."""
    return sorted(typer.main.get_command(cli.app).commands)  # type: ignore[attr-defined]


COMMAND_LINES = [
    *([name, "-h"] for name in _names()),
    *([name] for name in _names()),  # no arguments: a usage error or the group's help
    ["replay", "run", "-h"], ["replay", "synth", "-h"], ["notes", "init", "-h"],
    ["replay", "nosuch"], ["notes"],
    [], ["-h"], ["--version"], ["valdate", SEED], ["--nosuch"], ["-h", "validate"],
    ["validate", SEED], ["validate", SEED, "-f", "json"], ["validate", "--nosuch"],
    ["validate", SEED, "-f", "nosuch"], ["validate", "--version"], ["hash", SEED],
    ["rule", "MC100"], ["rule", "nosuch"], ["validate", "-h", "--", "review"],
]


@pytest.mark.parametrize("args", COMMAND_LINES, ids=" ".join)
def test_a_command_line_shows_and_does_what_it_did_with_every_command_made(
        args: list[str], capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    narrowed = _run(capsys, monkeypatch, args)
    with monkeypatch.context() as m:
        m.setattr(cli, "one_command", _every_command)
        whole = _run(capsys, monkeypatch, args)
    assert narrowed == whole


def test_only_the_command_named_first_is_made_and_every_one_comes_back() -> None:
    before = (list(cli.app.registered_commands), list(cli.app.registered_groups))
    with one_command(cli.app, ["validate", "x.json"]):
        made = typer.main.get_command(cli.app)
        assert list(made.commands) == ["validate"]  # type: ignore[attr-defined]
    with one_command(cli.app, ["replay", "run"]):
        made = typer.main.get_command(cli.app)
        assert list(made.commands) == ["replay"]  # type: ignore[attr-defined]
    assert (cli.app.registered_commands, cli.app.registered_groups) == before
    for argv in ([], ["-h"], ["nosuch"], ["--version", "validate"]):
        with one_command(cli.app, argv):
            made = typer.main.get_command(cli.app)
            assert len(made.commands) == len(_names())  # type: ignore[attr-defined]
    with contextlib.suppress(RuntimeError), one_command(cli.app, ["validate"]):
        raise RuntimeError  # a command that fails: every command comes back all the same
    assert (cli.app.registered_commands, cli.app.registered_groups) == before


def test_every_command_is_found_by_the_name_it_is_run_by() -> None:
    for name in _names():
        with one_command(cli.app, [name]):
            made = typer.main.get_command(cli.app)
            assert list(made.commands) == [name]  # type: ignore[attr-defined]
