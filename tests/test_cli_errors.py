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
        (["analyze", str(MODULE), "--fail-on", "bogus"],
         "analyze: usage: Invalid value for --fail-on: must be one of"),
        (["ingest", "fixtures/sources", "-o", "{tmp}/c", "--lang", "fr"],
         "ingest: usage: Invalid value for --lang: 'fr' is not one of en, ko"),
        (["project", str(MODULE), "--lang", "fr"], "project: usage: Invalid value for --lang"),
        (["replay", "synth", "--seed", "1", "--messages", "9", "--lang", "fr", "-o",
          "{tmp}/s.ndjson"], "replay synth: usage: Invalid value for --lang"),
        (["ingest", "fixtures/sources", "-o", "{tmp}/c", "-j", "0"],
         "ingest: usage: Invalid value for --jobs: must be at least 1"),
        (["review", "fixtures/contract/catalog", "-j", "0"],
         "review: usage: Invalid value for --jobs: must be at least 1"),
        (["ingest", "fixtures/sources", "-o", "{tmp}/c", "--notes", "{tmp}/none"],
         "none: not-found: no such folder (the notes folder)"),
        (["replay", "synth", "--seed", "1", "--messages", "1", "-o", "{tmp}/s.ndjson"],
         "replay synth: usage: Invalid value for --messages: must be between 2"),
        (["promote", "x", "--to", "bogus"], "promote: usage: Invalid value for --to: 'bogus' "
         "is not one of pending_human_review, approved, promoted, rejected, retired"),
        (["packet", "x", "--lane", "wide"], "Invalid value for --lane: 'wide' is not one of"),
        (["packet", "--lane", "light", "--queue", "{tmp}/q", "--status", "shipped"],
         "Invalid value for --status: 'shipped' is not one of candidate, pending_human_review"),
        (["approve", "x", "--action", "bless", "--reviewer", "kim"],
         "Invalid value for --action: 'bless' is not one of request_review, approve"),
    ],
)
def test_bad_options_are_one_line(tmp_path: Path, args: list[str], needle: str) -> None:
    line = one_line(run(*(a.replace("{tmp}", str(tmp_path)) for a in args)))
    assert needle in line
    assert not (tmp_path / "c").exists()  # refused before anything was written


def test_report_targets_in_the_way_are_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "a-folder"
    folder.mkdir()
    line = one_line(run("validate", str(SEED), "-o", folder))
    assert line == f"risutools: {folder}: not-a-file: is a folder, not a file"
    line = one_line(run("ingest", "fixtures/sources", "-o", tmp_path / "cat", "-q", "-j", "1",
                        "--report", folder))
    assert line.endswith("not-a-file: is a folder, not a file")
    assert not (tmp_path / "cat").exists()  # refused before the run


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
