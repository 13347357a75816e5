"""Files named one by one on the command line are kept as the text named when that text is
already the path ``Path`` would make (``loaders.given_path``): ``validate`` of 10,000 files
then makes no path object a file (issue 23, goal 1; bench/RESULTS.md, round 34).  What must
hold: the text names the same file, shows as the same name, has the same file name and
format, and every reader of a document's real file (``--fix``, MC305's catalog root,
``verify``'s start) gets the file the name means.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from harness import SEED, run_cli
from hypothesis import given
from hypothesis import strategies as st

from risutools.contract.loaders import LoadedDocument, _base_name
from risutools.contract.shown import as_path, display_path, given_path

GOOD_DIGEST = "sha256:05aaa73785840a4779ac10348d3e6f8df2acc480691f4f2facdcd362b59dfc1d"
STALE_DIGEST = "sha256:" + "ab" * 32

#: parts a path named on a command line is made of, the ones ``Path`` rewrites included
_PARTS = st.sampled_from(["", ".", "..", "a", "b.json", "c.yaml", "d.ndjson", " ", "ü.json",
                          "x\\y.json", "..json", ".hidden.json", "cat"])


@given(st.lists(_PARTS, min_size=1, max_size=5), st.booleans())
def test_the_text_is_kept_only_where_path_would_make_the_same(parts: list[str],
                                                               absolute: bool) -> None:
    name = ("/" if absolute else "") + "/".join(parts)
    got = given_path(name)
    if isinstance(got, str):
        assert got == name == str(Path(name))  # nothing Path would rewrite
        assert not absolute and all(p not in ("", ".", "..") for p in parts)
    else:
        assert got == Path(name)
    # the same file name, the same name shown, the same file
    assert _base_name(got) == Path(name).name
    assert display_path(got) == display_path(Path(name))
    assert as_path(got) == Path(name)


def test_paths_are_kept_as_paths() -> None:
    p = Path("a/b.json")
    assert given_path(p) is p
    assert isinstance(given_path("./a.json"), Path)  # (Path drops the "./")
    assert isinstance(given_path("a//b.json"), Path)
    assert isinstance(given_path("a/"), Path)
    assert given_path("a/b.json") == "a/b.json"


def test_a_document_read_from_a_text_gives_its_path() -> None:
    ld = LoadedDocument("a/b.json", 1, {}, "json", "a/b.json")
    assert ld.file_path == Path("a/b.json")
    assert LoadedDocument("-", 1, {}, "json", None).file_path is None


def _files(root: Path) -> list[str]:
    return sorted(os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root)
                  for f in fs if not f.startswith(".risutools"))


@pytest.mark.parametrize("named", ["doc.json", "sub/doc.json"])
def test_fix_writes_a_file_named_as_plain_text(tmp_path: Path, named: str) -> None:
    """``validate --fix`` on a file named by plain relative text (kept as that text): the file
    is fixed, byte for byte, and nothing else is written."""
    seed = SEED.read_text("utf-8")
    assert seed.count(GOOD_DIGEST) == 1
    target = tmp_path / named
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(seed.replace(GOOD_DIGEST, STALE_DIGEST), "utf-8")
    before = _files(tmp_path)
    r = run_cli("validate", "--fix", "-f", "concise", named, cwd=tmp_path)
    assert r.returncode == 0, (r.stdout, r.stderr)
    assert "fixed 1 finding(s) in 1 file(s) (MC201 1)" in r.stderr
    assert target.read_text("utf-8") == seed
    assert _files(tmp_path) == before  # (beside the write lock)


def test_the_same_report_whichever_way_a_file_is_named(tmp_path: Path) -> None:
    """The same file named as plain text, with ``./``, with a doubled ``/`` and absolute:
    each shown as ``Path`` shows it, with the same findings."""
    (tmp_path / "cat").mkdir()
    (tmp_path / "cat" / "doc.json").write_text(
        SEED.read_text("utf-8").replace(GOOD_DIGEST, STALE_DIGEST), "utf-8")
    names = ["cat/doc.json", "./cat/doc.json", "cat//doc.json",
             str(tmp_path / "cat" / "doc.json")]
    files = []
    for name in names:
        r = run_cli("validate", "-f", "json", name, cwd=tmp_path)
        assert r.returncode == 1, (r.stdout, r.stderr)  # (MC201: the stale digest)
        report = json.loads(r.stdout)
        files.append(report["documents"][0]["file"])
        assert [(f["file"], f["rule"], f["line"]) for f in report["findings"]] == [
            ("cat/doc.json", "MC201", 98)]
    assert files == ["cat/doc.json"] * 4
    shown = {run_cli("verify", name, cwd=tmp_path).stdout for name in names}
    assert len(shown) == 1 and "0 verified, 0 mismatched, 1 not at hand" in shown.pop()
