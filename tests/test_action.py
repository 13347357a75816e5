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
GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid",
           "GIT_CONFIG_NOSYSTEM": "1"}
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
    # (pip a stand-in; any other use of python, the check's probe of a pyproject.toml, this
    # checkout's interpreter)
    _exe(bin_dir / "python", f'if [ "$1" != -m ]; then PYTHONPATH="{ROOT}" exec '
         f'"{sys.executable}" "$@"; fi\necho "$@" >> "{tmp_path}/pip.log"\n')
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


def _run(step: dict[str, Any], runner: Path, cwd: Path | None = None,
         **inputs: str) -> tuple[int, dict[str, str], str]:
    """Run a step's script as the runner would: ``${{ inputs.x }}`` of its env from
    ``inputs`` (else the input's default), bash with -e (GitHub's ``shell: bash``), in
    ``cwd`` (the workspace, ``work``, by default)."""
    assert step["shell"] == "bash"
    out_file = runner / "github_output"
    out_file.write_text("", encoding="utf-8")
    (runner / "temp").mkdir(exist_ok=True)
    env = {"PATH": f"{runner / 'bin'}:{os.environ['PATH']}", "GITHUB_OUTPUT": str(out_file),
           "GITHUB_ACTION_PATH": str(ROOT), "HOME": str(runner),
           "RUNNER_TEMP": str(runner / "temp"), **GIT_ENV}
    for key, value in (step.get("env") or {}).items():
        name = re.fullmatch(r"\$\{\{ inputs\.([a-z-]+) \}\}", value)
        assert name, f"{key}: {value}"
        given = inputs.get(name.group(1), ACTION["inputs"][name.group(1)].get("default", ""))
        env[key] = given
    assert "${{" not in step["run"], "an expression in a script: pass it through env"
    p = subprocess.run([str(BASH), "--noprofile", "--norc", "-eo", "pipefail", "-c",
                        step["run"]], cwd=cwd or runner / "work", env=env, capture_output=True,
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


# --------------------------------------------------------------------------- base-ref (pin44)
# With ``base-ref``, what a pull request must not change is read from its base branch: the
# signers file (--allowed-signers), the configuration (--config) and the log (--base-log).

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                   env={**os.environ, **GIT_ENV})


def _cli(*args: str | Path) -> None:
    from harness import run_cli

    r = run_cli(*args)
    assert r.returncode == 0, (args, r.stdout, r.stderr)


@pytest.fixture
def repo(runner: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``origin``: a repository whose ``main`` holds a catalog (``cat/``) with the cutter
    approved (two log lines, unsigned approvals); ``work/pr``: its clone, the pull request's
    checkout; ``snap``: the catalog after the first step (a rollback's material)."""
    from test_catalog_support import CUTTER, fresh_catalog

    origin = runner / "origin"
    origin.mkdir()
    cat = fresh_catalog(tmp_path_factory, origin)
    _cli("approve", CUTTER, "--action", "request_review", "--reviewer", "kim", "--catalog", cat)
    _cli("promote", CUTTER, "--to", "pending_human_review", "--catalog", cat)
    shutil.copytree(cat, runner / "snap")
    _cli("approve", CUTTER, "--action", "approve", "--reviewer", "kim", "--catalog", cat)
    _cli("promote", CUTTER, "--to", "approved", "--catalog", cat)
    _git(origin, "init", "-q", "-b", "main")
    _git(origin, "add", "-A")
    _git(origin, "commit", "-q", "-m", "base")
    _git(runner / "work", "clone", "-q", str(origin), "pr")
    return runner / "work" / "pr"


def _check(runner: Path, repo: Path, **inputs: str) -> tuple[int, dict[str, str], str]:
    inputs = {"path": "cat", "allowed-signers": "", **inputs}
    return _run(_step("Check the catalog"), runner, cwd=repo, **inputs)


def _results(repo: Path) -> list[dict[str, Any]]:
    log = json.loads((repo / "risutools.sarif").read_text(encoding="utf-8"))
    out: list[dict[str, Any]] = log["runs"][0]["results"]
    return out


@needs_git
def test_base_ref_catches_a_rollback(runner: Path, repo: Path) -> None:
    """The last step cut off the log, the documents put back: passes unpinned; with
    base-ref, MC306 on the log's line 2."""
    shutil.copytree(runner / "snap", repo / "cat", dirs_exist_ok=True)
    assert len((repo / "cat" / "transitions.ndjson").read_text().splitlines()) == 1
    code, out, err = _check(runner, repo)
    assert code == 0 and out["exit-code"] == "0", err
    code, out, err = _check(runner, repo, **{"base-ref": "main"})
    assert code == 0 and out["exit-code"] == "1", err
    [mc306] = [r for r in _results(repo) if r["ruleId"] == "MC306"]
    loc = mc306["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"]["uri"].endswith("transitions.ndjson")
    assert loc["region"]["startLine"] == 2, mc306


@needs_git
@pytest.mark.parametrize("check", ["validate", "review"])
def test_base_ref_pins_the_configuration(runner: Path, repo: Path, check: str) -> None:
    """A forged document the pull request's ``exclude:`` hides is checked under the base
    branch's configuration (found above ``path`` there), which replaces the pull
    request's."""
    doc = json.loads((repo / "cat" / "module.risu.186123400.mood-tracker.json").read_text())
    doc["component_id"] = "module.risu.999.evil"
    doc["provenance"]["review_status"] = "promoted"
    (repo / "cat" / "drafts").mkdir()
    (repo / "cat" / "drafts" / "evil.json").write_text(json.dumps(doc))
    with open(repo / "cat" / ".risutools.yaml", "a", encoding="utf-8") as f:
        f.write('exclude: ["drafts/*"]\n')
    code, out, err = _check(runner, repo, check=check)
    assert out["exit-code"] == "0", err
    code, out, err = _check(runner, repo, check=check, sources="cat/.store",
                            **{"base-ref": "main"})
    assert code == 0 and out["exit-code"] == "1", err
    assert [r for r in _results(repo) if r["ruleId"] == "MC305" and "evil.json" in json.dumps(r)]
    # the base branch without a configuration: the defaults, never the pull request's
    _git(runner / "origin", "rm", "-q", "cat/.risutools.yaml")
    _git(runner / "origin", "commit", "-q", "-m", "no configuration")
    code, out, err = _check(runner, repo, check=check, sources="cat/.store",
                            **{"base-ref": "main"})
    assert out["exit-code"] == "1" and "the base branch has no configuration" in err, err
    # a configuration named that the base branch lacks: the step stops
    code, out, err = _check(runner, repo, check=check, config="cat/.risutools.yaml",
                            **{"base-ref": "main"})
    assert code == 2 and out == {} and "not on the base branch" in err, err


@needs_git
def test_base_ref_pins_the_trust_root(runner: Path, repo: Path) -> None:
    """The signers file from the base branch (signatures then required); one the base
    branch lacks stops the step (exit 2), never read from the pull request."""
    (repo / ".allowed_signers").write_text("")  # the pull request's own
    code, out, err = _check(runner, repo, **{"base-ref": "main",
                                             "allowed-signers": ".allowed_signers"})
    assert code == 2 and out == {}, err
    assert ".allowed_signers is not on the base branch (main)" in err, err
    (runner / "origin" / ".allowed_signers").write_text("")
    _git(runner / "origin", "add", ".allowed_signers")
    _git(runner / "origin", "commit", "-q", "-m", "signers")
    code, out, err = _check(runner, repo, **{"base-ref": "main",
                                             "allowed-signers": ".allowed_signers"})
    assert code == 0 and out["exit-code"] == "1", err
    assert any(r["ruleId"] == "MC305" and "signature unsigned" in r["message"]["text"]
               for r in _results(repo)), _results(repo)


@needs_git
def test_base_ref_without_a_log_on_the_base_branch(runner: Path, repo: Path) -> None:
    """A base branch with no log yet: an empty base log (said), which every log extends."""
    _git(runner / "origin", "rm", "-q", "cat/transitions.ndjson")
    _git(runner / "origin", "commit", "-q", "-m", "no log")
    code, out, err = _check(runner, repo, **{"base-ref": "main"})
    assert code == 0 and out["exit-code"] == "0", err
    assert "the base branch has no transition log: an empty base log" in err


@needs_git
def test_a_base_ref_that_cannot_be_fetched_stops_the_step(runner: Path, repo: Path) -> None:
    code, out, err = _check(runner, repo, **{"base-ref": "no-such-branch"})
    assert code == 2 and out == {} and "cannot fetch base-ref 'no-such-branch'" in err, err


def test_the_pinning_inputs_are_documented_and_off_by_default() -> None:
    inputs = ACTION["inputs"]
    assert inputs["base-ref"]["default"] == ""  # without it, nothing changes
    for name in ("base-ref", "allowed-signers", "config", "sources"):
        assert inputs[name]["description"].strip(), name
    run = _step("Check the catalog")["run"]
    for option in ("--allowed-signers", "--config", "--base-log", "--sources"):
        assert option in run, option
