"""Issue 23 (validate on 10,000 files named one by one): work the usual run does not need
is not done, and what is done gives the same answers."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from risutools.contract import validate
from risutools.findings import _DIGITS, in_number_order
from risutools.jsonlines import _key_once
from risutools.values import _spells_a_colon

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def test_files_named_alone_are_no_whole_catalog(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """MC307 reads a whole catalog only where a folder was given: with files named one by
    one, the catalogs of their folders are not looked for (each document's folder was
    taken, then every root found dropped)."""
    for name in ("bom.json", "context-cutter.yaml"):
        shutil.copy(FIXTURES / "contract" / "good" / name, tmp_path / name)
    files = [str(tmp_path / "bom.json"), str(tmp_path / "context-cutter.yaml")]
    before = validate.validate_paths(files)
    asked: list[Any] = []
    real = validate.catalog_roots

    def counted(folders: Any, documents: Any) -> Any:
        asked.append(list(folders))
        return real(folders, documents)

    monkeypatch.setattr(validate, "catalog_roots", counted)
    after = validate.validate_paths(files)
    assert asked == []
    assert [f.to_dict() for f in after.findings] == [f.to_dict() for f in before.findings]
    validate.validate_paths([str(tmp_path)])  # (a folder given: its catalog is looked for)
    assert asked == [[str(tmp_path)]]


@pytest.mark.parametrize(("data", "spelled"), [
    (b'{"a": 1}', False), (b'{"a": "\\\\"}', False), (b'{"a\\u003a": 1}', True),
    (b'{"a": "\\u003A"}', True), (b"", False), (b"\\", False), (b"\\u003", True)])
def test_a_colon_spelled_as_an_escape(data: bytes, spelled: bool) -> None:
    assert _spells_a_colon(data) is spelled


def test_a_key_read_at_the_end_of_the_text() -> None:
    """The usual spelling (``": "`` then the value) is taken without the pattern; at the
    text's end (nothing after the space) the pattern decides, as before."""
    assert _key_once(b'{"a": 1}', b'"a"', 0) == (1, 6)
    assert _key_once(b'{"a": ', b'"a"', 0) == (1, 6)
    assert _key_once(b'{"a" :\n 1}', b'"a"', 0) == (1, 8)
    assert _key_once(b'{"a": 1, "a": 2}', b'"a"', 0) is None


def test_an_empty_place_sorts_as_the_split_gives_it() -> None:
    """A contract finding's evidence is "": its sort key is made without the pattern, the
    same key the split gives."""
    assert in_number_order("") == ("",) == tuple(_DIGITS.split(""))
    assert in_number_order("/a/10") == ("/a/", (2, "10"), "")


def test_counts_are_the_findings_counted() -> None:
    """Result.counts (its severities mapped in C) counts what each finding says."""
    result = validate.validate_paths([str(FIXTURES / "contract" / "bad"),
                                      str(FIXTURES / "contract" / "good")])
    found = result.findings
    assert sum(f.severity == "error" for f in found) > 0
    assert result.counts() == {
        "errors": sum(f.severity == "error" for f in found),
        "warnings": sum(f.severity == "warning" for f in found),
        "documents": len(result.documents), "files": len(result.files),
        "documents_with_errors": sum(any(f.severity == "error" for f in d.findings)
                                     for d in result.documents)}
