"""Eleventh pass, spec conformance: clauses of replay.md and catalog-and-promotion.md that the
code broke or did not check."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from harness import approve
from test_catalog_support import CUTTER, fresh_catalog

from risutools.catalog.catalog import Catalog
from risutools.catalog.promote import plan


@pytest.fixture
def cat(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> Path:
    return fresh_catalog(tmp_path_factory, tmp_path)


def _approval_gate(cat: Path, to: str) -> tuple[str, str]:
    c = Catalog.open(cat)
    p = plan(c, c.resolve(CUTTER), to, kind="status")
    (v,) = [v for v in p.verdicts if v.gate == "approval"]
    return v.verdict, v.reason


# catalog-and-promotion.md, "A catalog on disk": an approval's `at` is "ISO 8601 with zone".
# A time without a zone (or a date alone, which Python reads as a naive midnight) names no
# instant; a record written by hand with one was counted as an approval.
@pytest.mark.parametrize("at", ["2026-12-01T10:00:00", "2026-12-01", "2026-12-01 10:00",
                                "20261201T100000"])
def test_approval_at_without_zone_is_no_approval(cat: Path, at: str) -> None:
    approve(CUTTER, "request_review", "kim", "", None, str(cat))
    (rec_path,) = (cat / "approvals").glob("*request_review*.yaml")
    rec = yaml.safe_load(rec_path.read_text("utf-8"))
    assert _approval_gate(cat, "pending_human_review")[0] == "pass"  # as written: with zone
    rec["at"] = at
    rec_path.write_text(yaml.safe_dump(rec, sort_keys=False), "utf-8")
    verdict, reason = _approval_gate(cat, "pending_human_review")
    assert verdict == "fail", reason


@pytest.mark.parametrize("at", ["2026-12-01T10:00:00Z", "2026-12-01T10:00:00+09:00",
                                "2026-12-01T10:00:00.5-05:30"])
def test_approval_at_with_zone_still_counts(cat: Path, at: str) -> None:
    approve(CUTTER, "request_review", "kim", "", None, str(cat))
    (rec_path,) = (cat / "approvals").glob("*request_review*.yaml")
    rec = yaml.safe_load(rec_path.read_text("utf-8"))
    rec["at"] = at
    rec_path.write_text(yaml.safe_dump(rec, sort_keys=False), "utf-8")
    verdict, reason = _approval_gate(cat, "pending_human_review")
    assert verdict == "pass", reason
