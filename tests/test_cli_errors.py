"""Cross-cutting CLI behaviour, in-process (tests/harness.py): every command refuses bad
input and bad option values with exactly one line on stderr and exit 2, never a
traceback or a multi-line usage box."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from harness import FIXTURES, ROOT, SEED, SOURCES, run_cli, run_subprocess

MODULE = SOURCES / "174678332_context-cutter.risum"
FIXTURE = FIXTURES / "replay" / "anchor-edit.yaml"


def run(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, cwd=cwd or ROOT)


def one_line(p: subprocess.CompletedProcess[str]) -> str:
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    lines = p.stderr.splitlines()
    assert len(lines) == 1, p.stderr
    assert lines[0].startswith("risutools: ") and "Traceback" not in p.stderr
    return lines[0]


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["validate", "-f", "xml", str(SEED)], "validate: usage: Invalid value for --format"),
        (["inspect"], "inspect: usage: Missing argument"),
        (["replay", "run", str(SEED)], "replay run: usage: Missing option '--fixture'"),
        (["replay", "synth", "--seed", "x", "--messages", "9", "-o", "x.ndjson"],
         "replay synth: usage: Invalid value for '--seed'"),
        (["no-such-command"], "usage: No such command"),
        (["analyze", str(MODULE), "--fail-on", "bogus"], "--fail-on: bad-option: must be one of"),
        (["ingest", "fixtures/sources", "-o", "{tmp}/c", "--lang", "fr"], "--lang: bad-lang"),
        (["ingest", "fixtures/sources", "-o", "{tmp}/c", "-j", "0"], "--jobs: bad-option"),
        (["ingest", "fixtures/sources", "-o", "{tmp}/c", "--notes", "{tmp}/none"],
         "none: not-a-directory"),
        (["replay", "synth", "--seed", "1", "--messages", "1", "-o", "{tmp}/s.ndjson"],
         "--messages: bad-argument: must be between 2"),
    ],
)
def test_bad_options_are_one_line(tmp_path: Path, args: list[str], needle: str) -> None:
    line = one_line(run(*(a.replace("{tmp}", str(tmp_path)) for a in args)))
    assert needle in line
    assert not (tmp_path / "c").exists()  # refused before anything was written


def test_unwritable_report_targets_are_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "a-folder"
    folder.mkdir()
    line = one_line(run("validate", str(SEED), "-o", folder))
    assert line == f"risutools: {folder}: unwritable: cannot write: Is a directory"
    line = one_line(run("ingest", "fixtures/sources", "-o", tmp_path / "cat", "-q", "-j", "1",
                        "--report", folder))
    assert line.endswith("unwritable: cannot write: Is a directory")


def test_help_and_no_arguments_still_show_help() -> None:
    p = run()
    assert p.returncode == 2 and "Usage" in p.stdout and p.stderr == ""
    p = run("validate", "-h")
    assert p.returncode == 0 and "--skip-non-documents" in p.stdout
    assert "promote" in run("--help").stdout  # built (docs/catalog.md)


@pytest.mark.parametrize("args", [("validate", str(SEED)), ("validate", "missing.json"),
                                  ("rule", "MC999"), ("inspect", "--bogus")])
def test_the_in_process_runner_matches_a_real_process(args: tuple[str, ...]) -> None:
    """The harness's in-process runner (tests/harness.py) and a real ``python -m risutools``
    give the same exit code, stdout and stderr."""
    real = run_subprocess(*args, cwd=ROOT)
    here = run_cli(*args, cwd=ROOT)
    assert (here.returncode, here.stdout, here.stderr) == (
        real.returncode, real.stdout, real.stderr)
