"""The source store's lookups (``risutools.contract.sourcestore``): answered from indexes
built once, they must find exactly what a scan of the listing finds, in its order.

The scans below are the lookups' rules written out as the docstrings state them (what
``SourceStore.by_name`` and the content lookup did before the indexes): every query of a
store built of awkward names is put to both."""

from __future__ import annotations

import hashlib
import itertools
import os
from pathlib import Path

import pytest

from risutools.contract.sourcestore import SourceStore


def scan_by_name(files: list[Path], post_id: str | None, source_version: str) -> list[Path]:
    container, _, member = source_version.rpartition("!")
    wanted = container or member
    out = []
    for p in files:
        name = p.name
        by_container = bool(container) and name == container
        by_post = bool(post_id) and post_id is not None and (
            name == post_id
            or (name.startswith(post_id) and name[len(post_id)] in "._- ")
            or (p.parent.name == post_id and name == wanted))
        if by_container or by_post:
            out.append(p)
    return out


HEX = hashlib.sha256(b"a source").hexdigest()
HEX2 = hashlib.sha256(b"another").hexdigest()

NAMES = [
    "123", "123.risum", "123_old.risum", "123-x", "123 copy.json", "1234.risum",
    "123abc", "12.3.risum", "12", "a_b.risum", "a_b_c.charx", "a.b", ".123", "123.",
    "card.charx", "card.charx.bak", "module.risum", f"{HEX}.risum", f"x{HEX}{HEX2[:10]}",
    f"{HEX.upper()}.bin", f"{HEX[:63]}.part", f"{HEX2}{HEX}", "요정_모듈.risum", "요정",
]
FOLDERS = ["", "123", "a_b", "batch", "요정", "123/nested"]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> SourceStore:
    root = tmp_path_factory.mktemp("store")
    for folder in FOLDERS:
        (root / folder).mkdir(parents=True, exist_ok=True)
    for folder, name in itertools.product(FOLDERS, NAMES):
        if not (root / folder / name).is_dir():  # (the folders "123" and "요정")
            (root / folder / name).write_bytes(f"{folder}/{name}".encode())
    (root / "batch" / "module.risum").write_bytes(b"a source")  # HEX's bytes
    outside = tmp_path_factory.mktemp("outside") / "123.risum"
    outside.write_bytes(b"outside")
    os.symlink(outside, root / "batch" / "123_link.risum")  # leads out: none of the files
    os.symlink(root / "123" / "123.risum", root / "batch" / "123_in.risum")  # stays in
    return SourceStore(root)


def _queries() -> list[tuple[str | None, str]]:
    pieces = ["", "123", "12", "1", "a", "a_b", "a_b_c", "card", "요정", "123/nested",
              "module", HEX, "nope"]
    versions = ["module.risum", "card.charx!module.risum", "a_b_c.charx!x", "123.risum",
                "!module.risum", "", "123", "12.3.risum", "nested!123", "요정_모듈.risum"]
    return [(p, v) for p in [None, *pieces] for v in versions]


@pytest.mark.parametrize(("post_id", "version"), _queries())
def test_by_name_finds_what_a_scan_finds(store: SourceStore, post_id: str | None,
                                         version: str) -> None:
    assert store.by_name(post_id, version) == scan_by_name(store.files(), post_id, version)


def test_the_queries_find_something(store: SourceStore) -> None:
    """(the comparison above is not between two empty lists)"""
    found = [q for q in _queries() if store.by_name(*q)]
    assert len(found) > len(_queries()) // 3
    # the root's own files first (a sorted top-down walk), "1234.risum" and "123abc" not
    assert [p.name for p in store.by_name("123", "x")][:5] == [
        "123 copy.json", "123-x", "123.", "123.risum", "123_old.risum"]


@pytest.mark.parametrize("digest", [HEX, HEX2, HEX.upper(), HEX[:63], HEX[1:] + "0",
                                    HEX2[:10] + HEX[:54], (HEX2 + HEX)[5:69],
                                    HEX[10:] + HEX2[:10], "", "123"])
def test_named_with_finds_what_a_scan_finds(store: SourceStore, digest: str) -> None:
    expected = [p for p in store.files() if digest in p.name]
    assert store.named_with(digest) == expected
    if digest in (HEX, HEX2, (HEX2 + HEX)[5:69], HEX[10:] + HEX2[:10]):
        assert expected  # (the names do hold these: whole, and inside a longer run)


def test_a_link_leading_out_is_none_of_the_files(store: SourceStore) -> None:
    names = {p.name for p in store.files()}
    assert "123_in.risum" in names and "123_link.risum" not in names


def test_by_content_by_name_then_by_bytes(store: SourceStore) -> None:
    assert store.by_content(HEX) == [p for p in store.files()
                                     if p.read_bytes() == b"a source"]
    assert store.by_content(hashlib.sha256(b"no such bytes").hexdigest()) == []
    # without the content scan, only files whose name holds the digest are hashed
    named_only = SourceStore(store.root, content_scan=False)
    assert named_only.by_content(HEX) == []


def test_a_lookup_looks_at_its_candidates_only(tmp_path: Path, monkeypatch) -> None:
    """A store of many files asked for one source's: only the files its name names are
    looked at (a regular file? inside the store?), each once."""
    from risutools.contract import sourcestore

    for i in range(200):
        (tmp_path / f"{1000 + i}_module.risum").write_bytes(b"x")
    looked: list[Path] = []
    real = sourcestore.is_regular

    def counted(p: Path) -> bool:
        looked.append(p)
        return real(p)

    monkeypatch.setattr(sourcestore, "is_regular", counted)
    store = SourceStore(tmp_path)
    assert [p.name for p in store.by_name("1007", "module.risum")] == ["1007_module.risum"]
    assert [p.name for p in store.by_name("1007", "module.risum")] == ["1007_module.risum"]
    assert looked == [tmp_path / "1007_module.risum"]
