"""The composite GitHub Action (``action.yml``, issue 24): its shape, and its shell steps run
as the runner runs them (bash, the inputs as environment, ``$GITHUB_OUTPUT``) on fixture
catalogs.  pip is replaced by a stand-in that records what it was asked to install, and
``risutools`` by this checkout."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from harness import ROOT, SEED

ACTION = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
STEPS: list[dict[str, Any]] = ACTION["runs"]["steps"]
BASH = shutil.which("bash")
pytestmark = pytest.mark.skipif(BASH is None, reason="bash is not installed")


def _step(name: str) -> dict[str, Any]:
    return next(s for s in STEPS if s.get("name") == name)


def _exe(path: Path, body: str) -> None:
    path.write_text("#!/bin/sh\n" + body, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


@pytest.fixture
def runner(tmp_path: Path) -> Path:
    """A workspace: a bin folder with ``python`` (a pip stand-in) and ``risutools`` (this
    checkout), and catalogs: ``good`` (the seed), ``bad`` (a document breaking rules)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    _exe(bin_dir / "python", f'echo "$@" >> "{tmp_path}/pip.log"\n')
    _exe(bin_dir / "risutools",
         f'PYTHONPATH="{ROOT}" exec "{sys.executable}" -m risutools "$@"\n')
    for name, docs in (("good", [SEED]),
                       ("bad", [SEED, ROOT / "fixtures" / "contract" / "bad" / "rules.json"])):
        cat = tmp_path / "work" / name
        cat.mkdir(parents=True)
        for d in docs:
            shutil.copy(d, cat)
        (cat / "transitions.ndjson").touch()
    return tmp_path


def _run(step: dict[str, Any], runner: Path, **inputs: str) -> tuple[int, dict[str, str], str]:
    """Run a step's script as the runner would: ``${{ inputs.x }}`` of its env from
    ``inputs`` (else the input's default), bash with -e (GitHub's ``shell: bash``)."""
    assert step["shell"] == "bash"
    out_file = runner / "github_output"
    out_file.write_text("", encoding="utf-8")
    env = {"PATH": f"{runner / 'bin'}:{os.environ['PATH']}", "GITHUB_OUTPUT": str(out_file),
           "GITHUB_ACTION_PATH": str(ROOT), "HOME": str(runner)}
    for key, value in (step.get("env") or {}).items():
        name = re.fullmatch(r"\$\{\{ inputs\.([a-z-]+) \}\}", value)
        assert name, f"{key}: {value}"
        given = inputs.get(name.group(1), ACTION["inputs"][name.group(1)].get("default", ""))
        env[key] = given
    assert "${{" not in step["run"], "an expression in a script: pass it through env"
    p = subprocess.run([str(BASH), "--noprofile", "--norc", "-eo", "pipefail", "-c",
                        step["run"]], cwd=runner / "work", env=env, capture_output=True,
                       text=True, timeout=120)
    outputs = dict(line.split("=", 1) for line in out_file.read_text().splitlines())
    return p.returncode, outputs, p.stderr


def test_the_action_is_composite_and_uploads_the_sarif_it_wrote() -> None:
    assert ACTION["runs"]["using"] == "composite"
    uses = [s.get("uses", "") for s in STEPS]
    assert uses[0].startswith("actions/setup-python@")
    upload = _step("Upload to code scanning")
    assert upload["uses"].startswith("github/codeql-action/upload-sarif@")
    assert upload["with"]["sarif_file"] == "${{ steps.check.outputs.sarif-file }}"
    assert "steps.check.outputs.exit-code != '2'" in upload["if"]  # nothing to upload
    assert "-f sarif" in _step("Check the catalog")["run"]
    assert ACTION["outputs"]["exit-code"]["value"] == "${{ steps.check.outputs.exit-code }}"


def test_install_installs_this_copy_of_risutools(runner: Path) -> None:
    code, _, err = _run(_step("Install risutools"), runner)
    assert code == 0, err
    assert (runner / "pip.log").read_text().split()[-1] == str(ROOT)
    code, _, _ = _run(_step("Install risutools"), runner, package="risutools==0.1.0")
    assert (runner / "pip.log").read_text().splitlines()[-1].endswith("risutools==0.1.0")


@pytest.mark.parametrize("check", ["validate", "review"])
def test_a_clean_catalog_passes(runner: Path, check: str) -> None:
    code, out, err = _run(_step("Check the catalog"), runner, path="good", check=check)
    assert code == 0, err
    assert out == {"sarif-file": "risutools.sarif", "exit-code": "0"}
    log = json.loads((runner / "work" / "risutools.sarif").read_text(encoding="utf-8"))
    assert log["version"] == "2.1.0" and log["runs"][0]["results"] == []


@pytest.mark.parametrize("check", ["validate", "review"])
def test_findings_are_uploaded_then_fail_the_job(runner: Path, check: str) -> None:
    code, out, err = _run(_step("Check the catalog"), runner, path="bad", check=check,
                          **{"sarif-file": "r.sarif"})
    assert code == 0, err  # the step goes on, so the upload runs
    assert out == {"sarif-file": "r.sarif", "exit-code": "1"}
    log = json.loads((runner / "work" / out["sarif-file"]).read_text(encoding="utf-8"))
    results = log["runs"][0]["results"]
    assert results and {r["ruleId"] for r in results} >= {"MC301", "MC302"}
    uris = {loc["physicalLocation"]["artifactLocation"]["uri"]
            for r in results for loc in r.get("locations", [])}
    assert any(u.endswith("rules.json") for u in uris)
    fail = _step("Fail on findings")
    assert "steps.check.outputs.exit-code == '1'" in fail["if"]
    code, _, err = _run(fail, runner)
    assert code == 1 and "found what fails a run" in err


def test_a_catalog_that_cannot_be_read_stops_the_step(runner: Path) -> None:
    code, out, err = _run(_step("Check the catalog"), runner, path="missing")
    assert code == 2 and out["exit-code"] == "2"
    assert "risutools: missing: not-found" in err


def test_an_unknown_check_is_refused(runner: Path) -> None:
    code, out, err = _run(_step("Check the catalog"), runner, path="good", check="lint")
    assert code == 2 and out == {} and "check must be validate or review" in err


def test_the_readme_shows_the_action() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = readme.split("## In CI", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```yaml\n(.*?)```", ci, re.S)
    assert block
    workflow = yaml.safe_load(block.group(1))
    steps = workflow["jobs"]["catalog"]["steps"]
    used = [s for s in steps if "risutools@" in s.get("uses", "")]
    assert len(used) == 1 and set(used[0].get("with", {})) <= set(ACTION["inputs"])
    perms = workflow["jobs"]["catalog"]["permissions"]
    assert perms["security-events"] == "write"  # what the upload needs
