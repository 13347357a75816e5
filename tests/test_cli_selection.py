"""Nothing silently passes (issue 24): a ``--select``/``--ignore`` that names a check the
command never reports, or keeps none of its checks, is a usage error (exit 2) naming what
the command reports; a JUnit report counts as failures what makes the run exit 1."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from harness import FIXTURES, ROOT, SEED, SOURCES, run_cli

from risutools.checks.registry import REPORTS, check_selection, describe_ids, reported_ids
from risutools.commands.verify import RUNS
from risutools.errors import ConfigError, UsageError

BROKEN = FIXTURES / "contract" / "bad" / "rules.json"
NET = SOURCES / "182004771_net-summarizer.risum"


@pytest.mark.parametrize(("args", "needle"), [
    (["validate", "--select", "RA1", str(BROKEN)],
     "validate: usage: Invalid value for --select: validate never reports RA1: it reports MC "
     "checks (MC000-MC201, MC300-MC600)"),
    (["validate", "--select", "MC2,RA1", str(BROKEN)], "validate never reports RA1"),
    (["validate", "--select", "MC202", str(BROKEN)], "validate never reports MC202"),
    (["verify", "--select", "MC4", str(SEED)], "verify never reports MC4: it reports MC checks"),
    (["analyze", "--select", "MC2", str(NET)],
     "analyze: usage: Invalid value for --select: analyze never reports MC2: it reports RA "
     "checks"),
    (["analyze", "--ignore", "MC2", str(NET)], "Invalid value for --ignore: analyze never "
     "reports MC2"),
    (["validate", "--select", "MC2", "--ignore", "MC2", str(BROKEN)],
     "Invalid value for --select: nothing is left of what validate reports"),
    (["validate", "--ignore", "MC", str(BROKEN)],
     "Invalid value for --ignore: nothing is left of what validate reports"),
    (["review", "--ignore", "RA1", "fixtures/contract/catalog"],
     "review never reports RA1: it reports MC checks (MC000-MC600) and RV checks"),
    (["ingest", "fixtures/sources", "-o", "{tmp}/c", "--select", "MC1"],
     "ingest never reports MC1"),
    (["project", str(NET), "--ignore", "RV1"], "project never reports RV1"),
])
def test_a_selection_of_nothing_is_a_usage_error(args: list[str], needle: str,
                                                 tmp_path: Path) -> None:
    p = run_cli(*(a.replace("{tmp}", str(tmp_path)) for a in args), cwd=ROOT)
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert p.stdout == "" and len(p.stderr.splitlines()) == 1, p.stderr
    assert needle in p.stderr
    assert not (tmp_path / "c").exists()  # refused before anything ran


def test_an_unknown_code_stays_unknown_rule() -> None:
    with pytest.raises(ConfigError) as exc:
        check_selection("validate", ["ZZ9"])
    assert exc.value.code == "unknown-rule"


def test_a_selection_of_something_runs() -> None:
    check_selection("validate", ["MC2"], ["MC201"])
    check_selection("analyze", ["RA1"])
    check_selection("review", ["RV", "MC1"])
    p = run_cli("validate", "--select", "MC3", "-f", "concise", BROKEN, cwd=ROOT)
    assert p.returncode == 1 and "MC301" in p.stdout and "MC400" not in p.stdout


def test_every_command_reports_something_and_says_what() -> None:
    for command in REPORTS:
        ids = reported_ids(command)
        assert ids, command
        assert describe_ids(ids).endswith(")")
    assert describe_ids(reported_ids("verify", RUNS)) == "MC checks (MC000-MC100, MC200-MC203)"
    assert describe_ids(reported_ids("validate")) == "MC checks (MC000-MC201, MC300-MC600)"
    with pytest.raises(UsageError):
        check_selection("verify", ["MC5"])


def test_help_examples_name_checks_the_command_reports() -> None:
    for command, example in (("validate", "MC2,MC4"), ("analyze", "RA1,RA8"),
                             ("review", "MC2,RV2")):
        text = " ".join(run_cli(command, "-h", cwd=ROOT).stdout.split())
        assert f"({example})" in text and "MC2,RA1" not in text
        check_selection(command, [example])


def _counts(xml: str) -> tuple[int, int]:
    root = ET.fromstring(xml)
    return int(root.get("failures", "-1")), int(root.get("errors", "-1"))


@pytest.mark.parametrize(("args", "code", "failures"), [
    (["analyze", str(NET)], 1, 1),  # --fail-on warning (the default): warnings fail
    (["analyze", str(NET), "--fail-on", "error"], 0, 0),
    (["analyze", str(NET), "--fail-on", "never"], 0, 0),
    (["validate", str(BROKEN)], 1, 1),
    (["validate", str(SEED)], 0, 0),
])
def test_junit_failures_match_the_exit_code(args: list[str], code: int, failures: int) -> None:
    p = run_cli(*args, "-f", "junit", cwd=ROOT)
    assert p.returncode == code, p.stderr
    assert _counts(p.stdout) == (failures, 0)
    if failures:
        assert "<failure" in p.stdout


def test_junit_strict_warnings_are_failures(tmp_path: Path) -> None:
    """A warning-only document passes validate and fails validate --strict; JUnit agrees."""
    doc = json.loads(SEED.read_text(encoding="utf-8"))
    doc["capabilities"]["conflicts"] = ["context.zzz_unknown"]  # MC401, a warning
    path = tmp_path / "warned.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    lax = run_cli("validate", "-f", "junit", path)
    strict = run_cli("validate", "--strict", "-f", "junit", path)
    assert (lax.returncode, _counts(lax.stdout)) == (0, (0, 0))
    assert (strict.returncode, _counts(strict.stdout)) == (1, (1, 0))
    assert 'message="1 warning(s): MC401' in strict.stdout
