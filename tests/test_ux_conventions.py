"""Output conventions a new user or a CI user relies on (issue 24): help texts without
internal jargon, usage lines that say several paths are taken, standard input named ``-``,
SARIF without a guessed web address, no narrative finding on top of a failed schema."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
from pathlib import Path

import pytest
import typer.main
from harness import ROOT, SEED, SOURCES, run_cli

from risutools import cli
from risutools.contract.validate import validate_document
from risutools.report.color import use_color

_CLICK = typer.main.get_command(cli.app)


def _commands() -> list[list[str]]:
    """Every command path: ["validate"], ["replay", "run"], ..."""
    out = []
    for name, cmd in _CLICK.commands.items():  # type: ignore[attr-defined]
        subs = getattr(cmd, "commands", None)
        if subs:
            out += [[name, sub] for sub in subs]
        else:
            out.append([name])
    return out


COMMANDS = _commands()


def test_every_command_is_walked() -> None:
    names = {" ".join(c) for c in COMMANDS}
    assert {"validate", "review", "replay run", "replay synth", "ingest", "packet"} <= names
    assert len(names) >= 18


@pytest.mark.parametrize("argv", COMMANDS, ids=[" ".join(c) for c in COMMANDS])
def test_help_has_no_jargon_and_usage_says_how_many(argv: list[str]) -> None:
    p = run_cli(*argv, "-h")
    assert p.returncode == 0
    text = p.stdout
    assert not re.search(r"\bseed \d{3}\b", text), text  # the spec's seed numbers
    usage = text.splitlines()[0]
    assert usage.startswith("Usage: risutools " + " ".join(argv)), usage
    assert "{" not in usage and "<" not in usage, usage


@pytest.mark.parametrize(("argv", "shown"), [
    (["validate"], "PATH..."), (["verify"], "PATH..."), (["hash"], "FILE..."),
    (["inspect"], "FILE..."), (["analyze"], "FILE..."), (["review"], "[CATALOG]"),
    (["rule"], "[ID]"), (["unpack"], "FILE"),
])
def test_usage_line_shows_several_paths(argv: list[str], shown: str) -> None:
    usage = run_cli(*argv, "-h").stdout.splitlines()[0]
    assert usage.endswith(" " + shown), usage


def test_standard_input_is_named_dash() -> None:
    p = run_cli("validate", "-f", "concise", "-", stdin="{}")
    assert p.returncode == 1
    assert p.stdout.splitlines()[0].startswith("-:1:1: MC100 ")
    assert "<stdin>" not in p.stdout + p.stderr
    p = run_cli("validate", "-f", "json", "-", stdin="{")
    assert json.loads(p.stdout)["findings"][0]["file"] == "-"


def test_sarif_names_no_web_address_that_does_not_exist() -> None:
    p = run_cli("validate", "-f", "sarif", str(SEED), "-", stdin="{}")
    assert p.returncode == 1
    log = json.loads(p.stdout)
    driver = log["runs"][0]["tool"]["driver"]
    assert "informationUri" not in driver
    assert driver["rules"], "no rules listed"
    for rule in driver["rules"]:
        assert "helpUri" not in rule
        assert f"risutools rule {rule['id']}" in rule["help"]["text"]
    # standard input has no location; the file has one
    results = log["runs"][0]["results"]
    assert results and all("locations" not in r for r in results)


def test_no_narrative_finding_when_the_schema_fails() -> None:
    rules = {f.rule for f in validate_document({})}
    assert "MC100" in rules and "MC600" not in rules
    doc = json.loads(SEED.read_text(encoding="utf-8"))
    doc["payload"]["invariants"] = []  # schema still holds: MC600 speaks
    rules = {f.rule for f in validate_document(doc)}
    assert "MC100" not in rules and "MC600" in rules


# --------------------------------------------------------------------------- colour

MODULE = str(SOURCES / "182004771_net-summarizer.risum")  # two RA warnings
BAD = str(ROOT / "fixtures" / "contract" / "bad" / "rules.json")  # errors

#: every report for people, by command and format
TEXT_REPORTS = [
    ["validate", BAD], ["validate", "-f", "concise", BAD], ["validate", "--statistics", BAD],
    ["verify", BAD], ["verify", "-f", "concise", BAD],
    ["analyze", MODULE], ["analyze", "-f", "concise", MODULE],
    ["analyze", "--statistics", MODULE],
    ["review", "-q", "CAT"], ["review", "-q", "-f", "concise", "CAT"],
]
MACHINE_REPORTS = [["validate", "-f", f, BAD] for f in ("json", "github", "sarif", "junit")] + [
    ["review", "-q", "-f", f, "CAT"] for f in ("json", "markdown", "html", "sarif")]


@pytest.fixture
def cat(tmp_path: Path) -> str:
    """A catalog with findings: the seed, and a document breaking the rules."""
    folder = tmp_path / "cat"
    folder.mkdir()
    shutil.copy(SEED, folder)
    shutil.copy(BAD, folder)
    (folder / "transitions.ndjson").touch()
    return str(folder)


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    return {**env, **extra}


@pytest.mark.parametrize("argv", TEXT_REPORTS, ids=[" ".join(a[:-1]) for a in TEXT_REPORTS])
def test_every_text_report_is_coloured_when_asked(argv: list[str], tmp_path: Path,
                                                  cat: str) -> None:
    argv = [cat if a == "CAT" else a for a in argv]
    coloured = run_cli(*argv, env=_env(FORCE_COLOR="1"))
    assert coloured.returncode in (0, 1), coloured.stderr
    assert "\x1b[" in coloured.stdout
    always = run_cli(*argv, "--color", "always", env=_env())
    assert "\x1b[" in always.stdout
    plain = run_cli(*argv, env=_env())  # not a terminal: plain
    assert "\x1b[" not in plain.stdout and plain.stdout
    # the same report, its colours taken away, is the plain one
    assert re.sub(r"\x1b\[[0-9;]*m", "", coloured.stdout) == plain.stdout
    for off in (_env(NO_COLOR="1", FORCE_COLOR="1"), _env(FORCE_COLOR="1")):
        args = [*argv, "--color", "never"] if "NO_COLOR" not in off else argv
        assert "\x1b[" not in run_cli(*args, env=off).stdout
    out = tmp_path / "report.txt"  # a report written to a file: never coloured
    run_cli(*argv, "--color", "always", "-o", str(out), env=_env(FORCE_COLOR="1"))
    assert "\x1b[" not in out.read_text(encoding="utf-8")


@pytest.mark.parametrize("argv", MACHINE_REPORTS, ids=[" ".join(a[:-1]) for a in MACHINE_REPORTS])
def test_reports_for_machines_are_never_coloured(argv: list[str], cat: str) -> None:
    argv = [cat if a == "CAT" else a for a in argv]
    p = run_cli(*argv, "--color", "always", env=_env(FORCE_COLOR="1"))
    assert p.returncode in (0, 1) and p.stdout and "\x1b[" not in p.stdout


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_auto_colours_a_terminal_unless_no_color(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    assert use_color("auto", _Terminal()) and not use_color("auto", io.StringIO())
    monkeypatch.setenv("NO_COLOR", "1")
    assert not use_color("auto", _Terminal()) and use_color("always", io.StringIO())
    monkeypatch.delenv("NO_COLOR")
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert use_color("auto", io.StringIO()) and not use_color("never", _Terminal())


# --------------------------------------------------------------------------- ruff's totals


def _stale_candidate(tmp_path: Path, name: str = "doc.json") -> Path:
    doc = json.loads(SEED.read_text(encoding="utf-8"))
    doc["projection"]["prompt"] = "An edited prompt."  # MC201, fixable
    path = tmp_path / name
    path.write_text(json.dumps(doc, indent=1, ensure_ascii=False), encoding="utf-8")
    return path


def test_text_reports_say_how_many_fix_would_fix(tmp_path: Path) -> None:
    doc = _stale_candidate(tmp_path)
    for fmt in ("text", "concise"):
        p = run_cli("validate", "-f", fmt, str(doc))
        assert p.returncode == 1
        assert p.stdout.splitlines()[-1] == "[*] 1 fixable with `risutools validate --fix`."
    for fmt in ("json", "github", "sarif", "junit"):
        assert "fixable with" not in run_cli("validate", "-f", fmt, str(doc)).stdout
    p = run_cli("validate", "--fix", str(doc))  # fixed: nothing left to say
    assert p.returncode == 0 and "fixable with" not in p.stdout


def test_the_hint_counts_only_what_fix_would_fix(tmp_path: Path) -> None:
    doc = json.loads(_stale_candidate(tmp_path).read_text(encoding="utf-8"))
    doc["provenance"]["review_status"] = "pending_human_review"  # --fix leaves it alone
    reviewed = tmp_path / "reviewed.json"
    reviewed.write_text(json.dumps(doc, indent=1), encoding="utf-8")
    p = run_cli("validate", str(reviewed))
    assert "MC201" in p.stdout and "fixable with" not in p.stdout
    p = run_cli("validate", "-", stdin=_stale_candidate(tmp_path).read_text(encoding="utf-8"))
    assert "MC201" in p.stdout and "fixable with" not in p.stdout  # stdin is not written back
    p = run_cli("verify", str(_stale_candidate(tmp_path)))
    assert "fixable with" not in p.stdout  # verify has no --fix


def test_statistics_end_with_a_total(tmp_path: Path) -> None:
    doc = _stale_candidate(tmp_path)
    p = run_cli("validate", "--statistics", str(doc))
    assert p.stdout.splitlines() == ["1  MC201  [*] prompt-digest",
                                     "Found 1 finding (1 error, 0 warnings).",
                                     "[*] 1 fixable with `risutools validate --fix`."]
    p = run_cli("validate", "--statistics", str(doc), BAD)
    lines = p.stdout.splitlines()
    assert re.fullmatch(r"\[\*\] \d+ fixable with `risutools validate --fix`\.", lines[-1])
    counts = [int(ln.split()[0]) for ln in lines[:-2]]
    errors = sum(1 for ln in run_cli("validate", "-f", "concise", str(doc), BAD).stdout
                 .splitlines() if re.match(r".*: MC\d{3} ", ln))
    assert sum(counts) == errors
    assert re.fullmatch(rf"Found {errors} findings \(\d+ errors, \d+ warnings\)\.", lines[-2])
    p = run_cli("validate", "--statistics", str(SEED))
    assert p.returncode == 0 and p.stdout == "Found 0 findings (0 errors, 0 warnings).\n"
