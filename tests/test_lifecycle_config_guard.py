"""A configuration cannot silence the checks that guard the lifecycle (adversarial pass,
life44).

A configuration travels with the catalog, so a pull request edits it.  CI pins the trust
root (``validate --allowed-signers FILE``), but ``rules: {MC305: off}`` in the pull
request's ``.risutools.yaml`` turned the lifecycle check off: a document set to
``promoted`` by hand, with no line and no approval, passed ``validate --allowed-signers``
and ``review`` (exit 0); ``rules: {RV3: off}`` hid a forged signature from ``review``.  The
checks declared with ``guards=True`` are now verdicts to a configuration: naming one is
``config-bad-value`` (exit 2), and a prefix (``MC3: off``, ``MC: warning``) leaves them as
they are."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from harness import run_cli
from test_catalog_support import CUTTER, MOOD, doc_path, fresh_catalog, load

from risutools.checks.ids import GUARDS, SCOPE_OF


def _forged(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path, rules: str) -> Path:
    """The mood tracker set to promoted and active by hand (no line, no approval), with
    ``rules:`` in the configuration."""
    cat = fresh_catalog(tmp_path_factory, tmp_path)
    p = doc_path(cat, MOOD)
    doc = load(p)
    doc["provenance"]["review_status"] = "promoted"
    doc["provenance"]["runtime_status"] = "active"
    p.write_text(json.dumps(doc, ensure_ascii=False, indent=2) + "\n", "utf-8")
    (cat / "transitions.ndjson").write_text("")
    cfg = cat / ".risutools.yaml"
    cfg.write_text(cfg.read_text() + f"rules: {rules}\n")
    return cat


def test_the_guards_are_checks_a_configuration_could_otherwise_grade() -> None:
    assert set(GUARDS) <= set(SCOPE_OF)
    assert {SCOPE_OF[c] for c in GUARDS} <= {"document", "catalog"}


@pytest.mark.parametrize("rule", [*GUARDS, "MC305", "mc305"])
@pytest.mark.parametrize("level", ["off", "warning", "'off'"])
def test_naming_a_guard_in_rules_is_refused(tmp_path_factory: pytest.TempPathFactory,
                                            tmp_path: Path, rule: str, level: str) -> None:
    cat = _forged(tmp_path_factory, tmp_path, f"{{{rule}: {level}}}")
    for command in (("validate", cat), ("review", cat, "-q"),
                    ("promote", CUTTER, "--to", "pending_human_review", "--catalog", cat)):
        r = run_cli(*command)
        assert r.returncode == 2, (command, r.stdout, r.stderr)
        assert "config-bad-value" in r.stderr and "guards the lifecycle" in r.stderr
        assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr


@pytest.mark.parametrize("rules", ["{MC3: off}", "{MC: warning}", "{MC: off, RV: off}",
                                   "{MC30: off, RV2: warning, RV3: off}", "{MC305x: off}"])
def test_a_prefix_leaves_the_guards_as_they_are(tmp_path_factory: pytest.TempPathFactory,
                                                tmp_path: Path, rules: str) -> None:
    cat = _forged(tmp_path_factory, tmp_path, rules)
    if rules == "{MC305x: off}":  # (no check starts with it)
        assert run_cli("validate", cat).returncode == 2
        return
    for command in (("validate", cat, "-f", "concise"), ("review", cat, "-q", "-f", "concise")):
        r = run_cli(*command)
        assert r.returncode == 1, (command, r.stdout, r.stderr)
        errors = [ln for ln in r.stdout.splitlines() if MOOD in ln and " MC305 " in ln]
        assert errors, (command, r.stdout)


def test_checks_next_to_the_guards_are_still_configurable(
        tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    cat = fresh_catalog(tmp_path_factory, tmp_path)
    cfg = cat / ".risutools.yaml"
    cfg.write_text(cfg.read_text() + "rules: {MC304: off, MC600: off, RV202: off, RV304: "
                   "warning, RV305: off}\n")
    r = run_cli("validate", cat, "-f", "concise")
    assert r.returncode == 0, (r.stdout, r.stderr)
    assert "MC600" not in r.stdout
