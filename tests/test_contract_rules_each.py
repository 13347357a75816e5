"""The rules that need more than one document: catalog (MC104, MC305) and verify (MC202,
MC203), each firing and quiet; and the patterns' trailing-newline trap.

The document rules' firing and quiet cases are data: risutools/checks/cases/<ID>.yaml,
run by tests/test_checks_cases.py."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from harness import ROOT, SEED

from risutools.commands.checks import every_check
from risutools.contract.validate import validate_document, validate_paths
from risutools.contract.verify import verify_paths

FX = ROOT / "fixtures" / "contract"

Doc = dict[str, Any]


def seed() -> Doc:
    d: Doc = json.loads(SEED.read_text(encoding="utf-8"))
    return d


def set_status(d: Doc, status: str) -> None:
    d["provenance"]["review_status"] = status
    d["payload"]["idea_layers"]["lineage"]["promotion_status"] = status


# The firing and quiet cases of the document rules are data now
# (risutools/checks/cases/<ID>.yaml, run by tests/test_checks_cases.py); the rules that
# need files (catalog, verify) are tested here.


def test_mc201_message_gives_the_real_digest() -> None:
    d = seed()
    d["projection"]["prompt"] += "!"
    want = "sha256:" + hashlib.sha256(d["projection"]["prompt"].encode("utf-8")).hexdigest()
    [f] = validate_document(d)
    assert want in f.message


# --------------------------------------------------------------------------- catalog and verify


def test_mc104_fires_and_quiet(tmp_path: Path) -> None:
    a = seed()
    b = seed()
    (tmp_path / "a.json").write_text(json.dumps(a), encoding="utf-8")
    (tmp_path / "b.json").write_text(json.dumps(b), encoding="utf-8")
    r = validate_paths([tmp_path])
    [f] = r.findings
    assert (f.rule, f.file.rsplit("/", 1)[-1], f.pointer) == ("MC104", "b.json", "/component_id")
    assert "a.json" in f.message and "; " in f.message
    b["component_version"] = "1.0.1"
    (tmp_path / "b.json").write_text(json.dumps(b), encoding="utf-8")
    assert validate_paths([tmp_path]).findings == []


def test_mc202_fires_and_quiet() -> None:
    r = verify_paths([FX / "verify" / "mismatch.json"], FX / "store")
    assert [(f.rule, f.severity) for f in r.findings] == [("MC202", "error")]
    assert "; " in r.findings[0].message
    r = verify_paths([FX / "verify" / "card-module.json"], FX / "store")
    assert r.findings == [] and [v.status for v in r.verifications] == ["verified"]


def test_mc203_fires_and_quiet(tmp_path: Path) -> None:
    r = verify_paths([FX / "verify" / "stale-report.json"], FX / "store")
    assert [(f.rule, f.severity) for f in r.findings] == [("MC203", "error")]
    r = verify_paths([FX / "verify" / "verified.json"], FX / "store")
    assert r.findings == []
    # the report goes missing from replays/: MC203 fires again
    cat = tmp_path / "cat"
    shutil.copytree(FX / "verify", cat)
    for p in (cat / "replays").iterdir():
        p.unlink()
    r = verify_paths([cat / "verified.json"], FX / "store")
    assert [f.rule for f in r.findings] == ["MC203"]


def test_mc305_fires_and_quiet() -> None:
    r = validate_paths([FX / "catalog" / "components" / "forged.json"])
    assert [(f.rule, f.severity) for f in r.findings] == [("MC305", "error")]
    assert "; " in r.findings[0].message
    r = validate_paths([FX / "catalog" / "components" / "approved-cutter.json"])
    assert r.findings == []


def test_every_spec_rule_has_a_fire_and_a_quiet_case() -> None:
    from risutools.checks.examples import CASES_DIR

    rules = {k: c for k, c in every_check().items() if c.family == "MC"}
    with_cases = {p.stem for p in CASES_DIR.glob("MC*.yaml")}
    tested_here = {r for r in rules if rules[r].scope in ("catalog", "verify")}
    # (the tests just above; MC306, MC307: tests/test_pin_base_log.py, test_pin_config.py)
    assert tested_here == {"MC104", "MC202", "MC203", "MC305", "MC306", "MC307"}
    assert with_cases == set(rules)  # every scope's cases are data too, load included
    for info in rules.values():
        assert info.summary.endswith(".") and info.fix.endswith(".")


# --------------------------------------------------------------------------- "$" and "\n"


@pytest.mark.parametrize(("path", "rule"), [
    (("component_id",), "MC100"),
    (("component_version",), "MC100"),
    (("payload", "namespace"), "MC100"),
    (("projection", "tags", 0), "MC100"),
    (("provenance", "source_refs", 0, "source_id"), "MC100"),
    (("provenance", "source_refs", 0, "sha256"), "MC200"),
    (("projection", "prompt_sha256"), "MC200"),
    (("capabilities", "requires", 0), "MC400"),
])
def test_trailing_newline_is_not_accepted(path: tuple[Any, ...], rule: str) -> None:
    """Python's ``$`` matches before a final newline; the patterns must not."""
    d = seed()
    node: Any = d
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] += "\n"
    rules = {f.rule for f in validate_document(d)}
    assert rule in rules, rules
