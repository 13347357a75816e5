"""``safeio.FolderFiles``: the files of one catalog folder read with ``read_inside``'s
refusals, the folder's own place looked at once."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from risutools.safeio import FileRefused, FolderFiles, read_inside


@pytest.fixture
def cat(tmp_path: Path) -> Path:
    root = tmp_path / "cat"
    (root / "facts").mkdir(parents=True)
    (root / "facts" / "a.json").write_bytes(b'{"a": 1}')
    (root / "docs.json").write_bytes(b"{}")
    (tmp_path / "outside.json").write_bytes(b"secret")
    return root


def _code(files: FolderFiles, name: str) -> str | bytes | None:
    try:
        return files.read(name, 1 << 20)
    except FileRefused as exc:
        return exc.code


def test_plain_files_read_and_missing_ones_none(cat: Path) -> None:
    files = FolderFiles(cat, "facts")
    assert files.read("a.json", 100) == b'{"a": 1}'
    assert files.read("missing.json", 100) is None
    assert _code(files, "a.json") == b'{"a": 1}'
    (cat / "facts" / "big.json").write_bytes(b"x" * 101)
    with pytest.raises(FileRefused) as exc:
        files.read("big.json", 100)
    assert exc.value.code == "too-large"


def test_links_are_judged_by_where_they_lead(cat: Path, tmp_path: Path) -> None:
    files = FolderFiles(cat, "facts")
    os.symlink(cat / "docs.json", cat / "facts" / "inside.json")
    os.symlink(tmp_path / "outside.json", cat / "facts" / "out.json")
    os.symlink(cat / "nowhere.json", cat / "facts" / "dangling.json")
    os.symlink("/dev/zero", cat / "facts" / "device.json")
    assert files.read("inside.json", 100) == b"{}"
    assert _code(files, "out.json") == "outside-catalog"
    assert _code(files, "dangling.json") == "not-found"  # a name there, but no file
    assert _code(files, "device.json") == "outside-catalog"
    for name in ("out.json", "dangling.json", "device.json", "inside.json"):
        want: str | bytes | None
        try:
            want = read_inside(cat, cat / "facts" / name, 100)
        except FileRefused as exc:
            want = exc.code
        assert _code(files, name) == want  # as read_inside answers


def test_a_folder_leading_outside_refuses_every_file(cat: Path, tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "a.json").write_bytes(b"{}")
    os.rename(cat / "facts", tmp_path / "old-facts")
    os.symlink(tmp_path / "elsewhere", cat / "facts")
    assert _code(FolderFiles(cat, "facts"), "a.json") == "outside-catalog"


def test_a_folder_linked_inside_is_read(cat: Path) -> None:
    os.rename(cat / "facts", cat / "real-facts")
    os.symlink(cat / "real-facts", cat / "facts")
    assert FolderFiles(cat, "facts").read("a.json", 100) == b'{"a": 1}'


def test_names_that_are_not_plain_go_through_read_inside(cat: Path, tmp_path: Path) -> None:
    files = FolderFiles(cat, "facts")
    assert files.read("../docs.json", 100) == b"{}"  # inside the catalog still
    assert _code(files, "../../outside.json") == "outside-catalog"
    assert _code(files, "..") == "not-a-file"


def test_not_regular_files_refused(cat: Path) -> None:
    os.mkfifo(cat / "facts" / "fifo.json")
    (cat / "facts" / "dir.json").mkdir()
    files = FolderFiles(cat, "facts")
    assert _code(files, "fifo.json") not in (None, b"")
    assert isinstance(_code(files, "fifo.json"), str)
    assert isinstance(_code(files, "dir.json"), str)


def test_a_facts_path_that_is_a_file_has_no_files(cat: Path) -> None:
    (cat / "notdir").write_bytes(b"{}")
    assert FolderFiles(cat, "notdir").read("a.json", 100) is None
