"""Every document rule on documents with a value of the wrong type anywhere: a finding or
nothing, never an exception (an exception is the command's "internal error", exit 2).

Each fixture component document is changed one place at a time: every value down to four
levels is replaced by each JSON type (objects and lists among them, which a set or a dict
cannot hold), and every list gets one more item of each type.  The rules run both ways (the
quiet rules skipped, and every rule: ``every_rule=True``) and must agree.  The catalog
review reads the same rules; one of its runs over such documents is in
``test_a_review_of_wrongly_typed_documents_reports_them``.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from harness import run_cli

from risutools.contract.validate import validate_document

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"

#: a value of each JSON type, empty and not
WRONG: tuple[Any, ...] = ({}, {"k": 1}, [], [{}], [[]], [1], "s", "", 1, -1, 1.5, None,
                          True, False)


def _documents() -> list[Path]:
    found = []
    for p in sorted(FIXTURES.rglob("*.json")):
        try:
            doc = json.loads(p.read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError, RecursionError):  # (hostile fixtures)
            continue
        if isinstance(doc, dict) and "payload" in doc and "capabilities" in doc:
            found.append(p)
    return found


def _places(value: Any, parts: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    yield parts, value
    if len(parts) >= 4:
        return
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _places(v, (*parts, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _places(v, (*parts, i))


def _at(doc: Any, parts: tuple[Any, ...]) -> Any:
    for part in parts:
        doc = doc[part]
    return doc


def _changed(base: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    for parts, value in list(_places(base)):
        for wrong in WRONG:
            where = "/" + "/".join(map(str, parts))
            if parts:
                doc = copy.deepcopy(base)
                _at(doc, parts[:-1])[parts[-1]] = copy.deepcopy(wrong)
                yield f"{where} = {wrong!r}", doc
            if isinstance(value, list):
                doc = copy.deepcopy(base)
                _at(doc, parts).append(copy.deepcopy(wrong))
                yield f"{where}/- = {wrong!r}", doc


DOCUMENTS = _documents()


def test_there_are_documents_to_change() -> None:
    assert len(DOCUMENTS) >= 5
    assert any(p.name.startswith("seed-000") for p in DOCUMENTS)


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_every_rule_takes_a_wrong_type_anywhere(path: Path) -> None:
    base = json.loads(path.read_text(encoding="utf-8"))
    changed = 0
    for where, doc in _changed(base):
        try:
            quick = validate_document(doc, file="d.json")
            every = validate_document(doc, file="d.json", every_rule=True)
        except Exception as exc:  # (the test names the place and the error)
            pytest.fail(f"{path.name} {where}: {type(exc).__name__}: {exc}")
        assert quick == every, where
        changed += 1
    assert changed > 50


def test_conflicts_holding_an_object_or_a_list_is_a_schema_finding() -> None:
    """The case that raised before: MC400 compared each item of ``conflicts`` with a set."""
    base = json.loads((FIXTURES / "documents" / "seed-000-context-cutter.json")
                      .read_text(encoding="utf-8"))
    for item in ({"x": 1}, ["y"]):
        doc = copy.deepcopy(base)
        doc["capabilities"]["provides"] = ["a.b"]
        doc["capabilities"]["conflicts"] = [item, "a.b"]
        found = validate_document(doc, file="d.json")
        rules = {f.rule for f in found}
        assert "MC100" in rules  # (the schema: an item is not a string)
        both = [f for f in found if f.rule == "MC400"]
        assert [f.pointer for f in both] == ["/capabilities/conflicts/1"]


def test_a_review_of_wrongly_typed_documents_reports_them(tmp_path: Path) -> None:
    """A catalog of seed 000 changed in every place the tests above change it (one document
    each): the review reports them (exit 1), never an internal error (exit 2)."""
    base = json.loads((FIXTURES / "documents" / "seed-000-context-cutter.json")
                      .read_text(encoding="utf-8"))
    cat = tmp_path / "catalog"
    cat.mkdir()
    for n, (_, doc) in enumerate(_changed(base)):
        (cat / f"d{n:05d}.json").write_text(json.dumps(doc, ensure_ascii=False),
                                            encoding="utf-8")
    for fmt in ("json", "text"):
        r = run_cli("review", str(cat), "-f", fmt, "-j", "1", "-o", str(tmp_path / "r"),
                    cwd=tmp_path)
        assert r.returncode == 1, r.stderr
        assert "internal error" not in r.stderr
