"""Round 10 of ``validate``'s fast paths (issue 23): each answers as the reference path it
stands for, on varied and hostile inputs.

- :func:`~risutools.contract.shown.display_path` shows a file as its folder's part
  (found once a folder: ``_folder_prefix``) and its own name: the same text as the
  reference, :func:`~risutools.contract.shown._raw_display` escaped, for every kind of
  path (inside and outside the working directory, relative, with ``..``, through links,
  non-ASCII and undecodable names, the working directory's own name, the root).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from risutools.contract import loaders, shown
from risutools.pathnames import show_name

#: file names: plain, non-ASCII, undecodable bytes, escapes, spaces, dots, the odd ones
NAMES = ["a.json", "한글 문서.json", "x\\y.json", "tab\there.json", ".hidden.json",
         "..json", "...", "e\u0301.yaml", "\udcc7\udcd1.json", "work", "real", "-",
         "line\nbreak.json", "\u200bzero.json"]


def _reference(path: Path) -> str:
    return show_name(shown._raw_display(path, os.getcwd()))


def _folders(root: Path) -> list[str]:
    """Folders as a caller may name them, seen from ``root/work`` (the working directory):
    relative below it, relative with ``..`` (up to it, past it, back into it), absolute
    inside and outside, through a link to the working directory and to a sibling."""
    return ["sub", "sub/deeper", ".", "..", "../work", "../work/sub", "../other",
            "../../", str(root / "work"), str(root / "work" / "sub"), str(root / "other"),
            str(root / "link"), str(root / "link" / "sub"), str(root / "linkdir"),
            "../link", "../linkdir/x", "/", "//", "//" + str(root).lstrip("/"), str(root)]


@pytest.mark.parametrize("real_cwd", [False, True])
def test_display_path_by_folder_is_the_reference(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch,
                                                 real_cwd: bool) -> None:
    work = tmp_path / "work"
    (work / "sub" / "deeper").mkdir(parents=True)
    (tmp_path / "other").mkdir()
    (tmp_path / "link").symlink_to(work, target_is_directory=True)
    (tmp_path / "linkdir").symlink_to(tmp_path / "other", target_is_directory=True)
    # the working directory as given (through the link) or as it is
    monkeypatch.chdir(work if real_cwd else tmp_path / "link")
    shown._folder_prefix.cache_clear()
    seen = 0
    for folder in _folders(tmp_path):
        for name in NAMES:
            path = Path(folder) / name
            for _ in range(2):  # the second time from the folder's remembered part
                assert shown.display_path(path) == _reference(path), (folder, name)
            seen += 1
    # a file named as the working directory's last part, in its parent: shown as "."
    assert shown.display_path(Path("..") / "work") == "."
    assert seen == len(_folders(tmp_path)) * len(NAMES)
    assert shown._folder_prefix.cache_info().hits > 0  # (the fast path was taken)


def test_display_path_of_a_folder_walk_is_the_reference(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    base = tmp_path / "cat"
    for i, name in enumerate(NAMES[:5]):
        d = base / f"d{i}" / "ü"
        d.mkdir(parents=True)
        (d / (name if name.endswith(".json") else name + ".json")).write_text("{}")
    monkeypatch.chdir(tmp_path)
    for root in ("cat", str(base), "./cat", "cat/../cat"):
        _, found = loaders.list_folder(Path(root))
        assert found
        assert [shown.display_path(f) for f in found] == [_reference(f) for f in found]
