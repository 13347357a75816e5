"""A transition line or an approval record whose field is of another type than text (a list,
a mapping, a number: what a hand edit or a forged pull request can put there) is a broken
line or an unreadable record, said in one line where it is; never an internal error, and
never a chain that passes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from harness import run_cli
from test_catalog_support import CUTTER, fresh_catalog, to_promoted

from risutools.settings.lifecycle import APPROVAL_FIELDS, LOG_TEXT_FIELDS

BAD: list[Any] = [[], {"a": 1}, 5, True]


@pytest.fixture(scope="module")
def promoted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cat = fresh_catalog(tmp_path_factory, tmp_path_factory.mktemp("promoted"))
    to_promoted(cat)
    assert run_cli("validate", cat).returncode == 0
    return cat


def _copy(src: Path, tmp: Path) -> Path:
    import shutil

    cat = tmp / "cat"
    shutil.copytree(src, cat)
    return cat


def _checked(cat: Path, *where: str) -> None:
    """validate and review fail (exit 1), in lines naming the place, no internal error."""
    for args in (("validate", cat), ("review", cat, "-q", "-j", "1")):
        r = run_cli(*args)
        said = r.stdout + r.stderr
        assert "internal error" not in said, said
        assert r.returncode == 1, (args, said)
        for w in where:
            assert w in said, (args, w, said)


@pytest.mark.parametrize("bad", BAD, ids=["list", "mapping", "number", "boolean"])
@pytest.mark.parametrize("key", [*LOG_TEXT_FIELDS, "approval"])
def test_a_log_field_of_another_type_is_a_broken_line(
        promoted: Path, tmp_path: Path, key: str, bad: Any) -> None:
    cat = _copy(promoted, tmp_path)
    log = cat / "transitions.ndjson"
    lines = log.read_text("utf-8").splitlines()
    rec = json.loads(lines[-1])
    rec[key] = bad
    lines[-1] = json.dumps(rec)
    log.write_text("\n".join(lines) + "\n", "utf-8")
    _checked(cat, "transitions.ndjson", key if key != "component_id" else "component_id")


@pytest.mark.parametrize("bad", BAD[:3], ids=["list", "mapping", "number"])
@pytest.mark.parametrize("key", APPROVAL_FIELDS)
def test_an_approval_field_of_another_type_is_an_unreadable_approval(
        promoted: Path, tmp_path: Path, key: str, bad: Any) -> None:
    cat = _copy(promoted, tmp_path)
    files = sorted((cat / "approvals").glob("*.yaml"))
    assert files
    rec = yaml.safe_load(files[0].read_text("utf-8"))
    rec[key] = bad
    files[0].write_text(yaml.safe_dump(rec, allow_unicode=True), "utf-8")
    _checked(cat, files[0].name)


def test_the_promoted_catalog_is_valid_as_written(promoted: Path) -> None:
    """(The cases above start from a catalog that passes: each failure is the field's.)"""
    assert run_cli("validate", promoted).returncode == 0
    assert CUTTER in (promoted / "transitions.ndjson").read_text("utf-8")
