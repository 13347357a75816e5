"""A tenth pass over the digest checks (stop 64): each test reproduces a defect and fails
before its fix.

- ``--select``/``--ignore`` switched MC201, MC202 and MC203 off silently: they read only a
  digest MC200 passed ("MC200 says it"), so with MC200 not kept a malformed digest passed
  (``validate --select MC201``, ``validate --ignore MC200``, ``verify --select
  MC202,MC203``: ok, exit 0).  A check now declares what it needs (``needs=``: MC200 for
  MC201-MC203, MC100 for MC600, the mechanism that ran MC100 with MC600): a filter that
  keeps it keeps what it needs, and ``--ignore`` of a needed check is refused (exit 2).
  ``--select ''`` and ``--select ,`` were read as no selection; an empty id is refused.
- A forged replay report verified (MC203, and through it gate G6): the reader checked the
  layout, ``report_sha256``, the component and the counts, then returned the summary's
  verdict as it was: a report whose summary said ``passed`` over a failed error invariant
  (its hash worked out again), the report of another fixture under ``replay:<name>``, and
  a document saying ``replay_status: passed`` over a report that failed all verified.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from harness import FIXTURES, SEED, run_cli

from risutools.checks.registry import RuleFilter, check_selection
from risutools.errors import UsageError

VERIFY = FIXTURES / "contract" / "verify"
UPPER = "sha256:" + "A" * 64


def write(path: Path, doc: Any) -> Path:
    path.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def seed() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(SEED.read_text(encoding="utf-8"))
    return doc


# ------------------------------------------------------------------ selection and needs


@pytest.mark.parametrize("args", [("--select", "MC201"), ("--select", "MC2"),
                                  ("--select", "MC201,MC300")])
def test_a_selected_prompt_digest_check_never_passes_a_malformed_digest(
        tmp_path: Path, args: tuple[str, ...]) -> None:
    doc = seed()
    doc["projection"]["prompt_sha256"] = UPPER
    r = run_cli("validate", *args, write(tmp_path / "bad.json", doc))
    assert r.returncode == 1, r.stdout + r.stderr
    assert "MC200 /projection/prompt_sha256" in r.stdout


def test_ignoring_what_a_kept_check_needs_is_refused(tmp_path: Path) -> None:
    doc = seed()
    doc["projection"]["prompt_sha256"] = UPPER
    bad = write(tmp_path / "bad.json", doc)
    r = run_cli("validate", "--ignore", "MC200", bad)
    assert r.returncode == 2 and "MC200 cannot be ignored while MC201 run" in r.stderr
    r = run_cli("verify", "--ignore", "MC200", bad)
    assert r.returncode == 2 and "MC201, MC202, MC203" in r.stderr
    # ignoring the checks that need it too is what was asked: nothing of MC2 is reported
    r = run_cli("validate", "--ignore", "MC200,MC201", bad)
    assert r.returncode == 0 and "MC20" not in r.stdout


def test_selected_source_and_report_digest_checks_never_pass_a_malformed_digest(
        tmp_path: Path) -> None:
    for item in VERIFY.iterdir():
        (shutil.copytree if item.is_dir() else shutil.copy)(item, tmp_path / item.name)
    shutil.copytree(FIXTURES / "contract" / "store", tmp_path / "store")
    doc = json.loads((tmp_path / "verified.json").read_text(encoding="utf-8"))
    for ref in doc["provenance"]["source_refs"]:
        ref["sha256"] = UPPER
    v = write(tmp_path / "v.json", doc)
    for sel in ("MC202,MC203", "MC203", "MC202"):
        r = run_cli("verify", "--sources", tmp_path / "store", "--require-sources",
                    "--select", sel, v, cwd=tmp_path)
        assert r.returncode == 1, (sel, r.stdout)
        assert "MC200 /provenance/source_refs/0/sha256" in r.stdout


def test_a_filter_keeps_what_a_kept_check_needs() -> None:
    flt = RuleFilter(["MC201"])
    assert flt.keep("MC200") and flt.keep("MC201") and not flt.keep("MC300")
    assert RuleFilter(["MC600"]).keep("MC100")
    assert RuleFilter(["MC203"]).keep("MC200")
    # what is named in --ignore is never kept for another's sake
    assert not RuleFilter((), ["MC200", "MC201"]).keep("MC200")


@pytest.mark.parametrize("value", ["", ",", " , ", "MC201,,MC202"])
def test_an_empty_rule_id_is_refused(tmp_path: Path, value: str) -> None:
    with pytest.raises(UsageError, match="empty rule id"):
        check_selection("validate", [value])
    with pytest.raises(UsageError, match="empty rule id"):
        check_selection("validate", (), [value])
    r = run_cli("validate", "--select", value, SEED)
    assert r.returncode == 2 and "empty rule id" in r.stderr
