"""``review`` pins the trust root as ``validate`` does (pin44): ``--allowed-signers FILE``
(signatures then required, whatever the configuration says) and
``--allow-config-signers-outside``, through the one code path
(:class:`risutools.commands.catalogs.TrustRoot`).  Before, a CI that ran ``review`` (the
action's ``check: review``) could not pin who may approve, and a pull request's
configuration could point ``allowed_signers`` at a file of its own outside the repository."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from harness import run_cli
from test_catalog_support import CUTTER, doc_path, fresh_catalog, load, require_signatures
from test_lifecycle_forgery import _key, needs_ssh

COMMANDS = [("validate",), ("review", "-q")]


@pytest.fixture
def outside_cfg(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> tuple[Path, Path]:
    """A catalog whose configuration names a signers file outside its repository."""
    cat = fresh_catalog(tmp_path_factory, tmp_path)
    outside = tmp_path / "elsewhere-signers"
    outside.write_text("")
    require_signatures(cat, "../elsewhere-signers")
    return cat, outside


@pytest.mark.parametrize("command", COMMANDS)
def test_the_trust_root_stays_inside_the_repository(outside_cfg: tuple[Path, Path],
                                                    command: tuple[str, ...],
                                                    tmp_path: Path) -> None:
    cat, outside = outside_cfg
    r = run_cli(*command, cat)
    assert r.returncode == 2 and "config-signers-outside" in r.stderr, (r.stdout, r.stderr)
    assert len(r.stderr.strip().splitlines()) == 1 and r.stdout == ""
    assert run_cli(*command, cat, "--allow-config-signers-outside").returncode == 0
    assert run_cli(*command, cat, "--allowed-signers", outside).returncode == 0


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("kind", ["missing", "fifo", "folder"])
def test_a_signers_file_that_cannot_be_read_stops_the_run(
        tmp_path_factory: pytest.TempPathFactory, tmp_path: Path, command: tuple[str, ...],
        kind: str) -> None:
    cat = fresh_catalog(tmp_path_factory, tmp_path)
    signers = tmp_path / "signers"
    if kind == "fifo":
        os.mkfifo(signers)
    elif kind == "folder":
        signers.mkdir()
    r = run_cli(*command, cat, "--allowed-signers", signers)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "--allowed-signers" in r.stderr and "signers" in r.stderr
    assert ("not-found" if kind == "missing" else "not-a-file") in r.stderr, r.stderr


@pytest.mark.parametrize("command", COMMANDS)
def test_pinned_signers_require_signatures_whatever_the_configuration_says(
        tmp_path_factory: pytest.TempPathFactory, tmp_path: Path,
        command: tuple[str, ...]) -> None:
    """An unsigned chain passes where the configuration does not require signatures; with
    the trust root pinned, the same chain fails."""
    cat = fresh_catalog(tmp_path_factory, tmp_path)
    for action, to in (("request_review", "pending_human_review"),):
        assert run_cli("approve", CUTTER, "--action", action, "--reviewer", "kim",
                       "--catalog", cat).returncode == 0
        assert run_cli("promote", CUTTER, "--to", to, "--catalog", cat).returncode == 0
    pinned = tmp_path / "base-branch-signers"
    pinned.write_text("")
    assert run_cli(*command, cat).returncode == 0
    r = run_cli(*command, cat, "--allowed-signers", pinned, "-f", "concise")
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert "does not count as an approval: signature unsigned" in r.stdout, r.stdout


@needs_ssh
@pytest.mark.parametrize("command", COMMANDS)
def test_a_key_the_pull_request_added_counts_only_until_the_trust_root_is_pinned(
        tmp_path_factory: pytest.TempPathFactory, tmp_path: Path,
        command: tuple[str, ...]) -> None:
    cat = fresh_catalog(tmp_path_factory, tmp_path)
    (cat / ".git").mkdir()
    _kim, line = _key(tmp_path, "kim")
    pinned = tmp_path / "base-branch-signers"
    pinned.write_text(line)
    mallory, evil = _key(tmp_path, "mallory")
    # the pull request's signers file: kim's key, and mallory's under kim's name
    (cat / ".allowed_signers").write_text(line + evil.replace("mallory", "kim", 1))
    cfg = (cat / ".risutools.yaml").read_text()
    (cat / ".risutools.yaml").write_text(
        cfg + "catalog:\n  allowed_signers: .allowed_signers\n  require_signatures: true\n")
    for action, to in (("request_review", "pending_human_review"), ("approve", "approved")):
        assert run_cli("approve", CUTTER, "--action", action, "--reviewer", "kim", "--sign",
                       mallory, "--catalog", cat).returncode == 0
        assert run_cli("promote", CUTTER, "--to", to, "--catalog", cat).returncode == 0
    assert load(doc_path(cat, CUTTER))["provenance"]["review_status"] == "approved"
    assert run_cli(*command, cat).returncode == 0  # the pull request's own trust root
    r = run_cli(*command, cat, "--allowed-signers", pinned, "-f", "json")
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert "signature not_allowed" in r.stdout, r.stdout
    json.loads(r.stdout)
