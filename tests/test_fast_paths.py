"""The quick paths of the projection and of ingest (issue 12 goal 4) give exactly what the
paths they stand in for give: each is compared with the slow one it replaced, on good and
on awkward input (lone surrogates, floats, NaN, big integers, keys that are not strings,
subclasses, odd file trees)."""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from risutools.canonical import canonical
from risutools.projection import naming
from risutools.projection.identity import _sha256_of, jsonable

# -- fold: str.split instead of a regex ------------------------------------------------


def test_fold_takes_the_same_whitespace_as_the_regex_for_every_code_point() -> None:
    spaces = re.compile(r"\s")
    for code in range(sys.maxunicode + 1):
        ch = chr(code)
        assert (spaces.match(ch) is not None) == ch.isspace(), hex(code)


@given(st.text(alphabet=st.sampled_from(" \t\n\r\x0b\x0c\x1c\x1f\x85\xa0\u2028\u3000ab한\ud800"),
               max_size=30))
def test_fold_is_the_regex_fold(text: str) -> None:
    assert naming.fold(text) == re.sub(r"\s+", " ", text).strip()


# -- slug characters: a translate table --------------------------------------------------


@given(st.text(max_size=40))
def test_the_keep_table_keeps_what_keep_keeps(text: str) -> None:
    slow = "".join(ch if naming._keep(ch) else " " for ch in text)
    assert text.translate(naming._KEEP) == slow


def test_the_keep_table_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    table = naming._KeepTable()
    monkeypatch.setattr(naming, "_KEEP_CACHED", 3)
    text = "abcdefg!"
    assert text.translate(table) == "abcdefg "
    assert len(table) == 3  # the others were decided, not stored
    assert text.translate(table) == "abcdefg "


# -- content identity: orjson on a plain value, jsonable + canonical otherwise ----------


def _slow(value: Any) -> str:
    return hashlib.sha256(canonical(jsonable(value))).hexdigest()


_leaf = (st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70)
         | st.floats(allow_nan=True, allow_infinity=True)
         | st.text(alphabet=st.characters(min_codepoint=0xD7F0, max_codepoint=0xE010)
                   | st.sampled_from("a\"\\\n한😀"), max_size=4)
         | st.binary(max_size=3))
_values = st.recursive(_leaf, lambda inner: st.lists(inner, max_size=3)
                       | st.tuples(inner, inner)
                       | st.dictionaries(st.text(max_size=3) | st.integers(0, 3) | st.booleans(),
                                         inner, max_size=3), max_leaves=12)


@settings(max_examples=300)
@given(_values)
def test_content_identity_digest_is_the_slow_digest(value: Any) -> None:
    try:
        slow = _slow(value)
    except (ValueError, TypeError, RecursionError) as exc:
        with pytest.raises(type(exc)):
            _sha256_of(value)
        return
    assert _sha256_of(value) == slow


@pytest.mark.parametrize("value", [
    {"id": "x", "content": {"name": "lone \ud800", "n": 1}},  # jsonable replaces it
    {"f": 1e16, "g": float("nan"), "h": -0.0},  # floats: jsonable + json
    {"big": 2**64, "t": ("a", 1)},  # past orjson's integers; a tuple
    {1: "int key", False: "bool key"},  # keys jsonable turns into text
    {"s": type("S", (str,), {})("subclass")},  # not an exact type
])
def test_content_identity_awkward_values(value: Any) -> None:
    assert _sha256_of(value) == _slow(value)


# -- the UTF-8 check of a document ------------------------------------------------------


@pytest.mark.parametrize("doc", [
    {"a": "fine 한"}, {"a": [2**70]}, {"a": 1.5, "b": None}, {"k\ud800": "v"},
    {"a": ["x", {"b": "lone \udcff"}]}, {"s": type("S", (str,), {})("sub \ud800")},
])
def test_valid_utf8_scrubs_exactly_what_json_finds(doc: dict[str, Any]) -> None:
    from risutools.printable import scrub
    from risutools.projection.project import _valid_utf8

    try:
        json.dumps(doc, ensure_ascii=False).encode("utf-8")
        want = doc
    except UnicodeEncodeError:
        want = scrub(doc)
    got = _valid_utf8(doc)
    assert got == want
    assert (got is doc) == (want is doc)


def test_valid_utf8_refuses_what_json_refuses() -> None:
    from risutools.projection.project import _valid_utf8

    with pytest.raises(TypeError):
        _valid_utf8({"a": object()})


# -- the walk: os.walk's order and spelling, from the folder listing ---------------------


def _walk_before(root: Path, exclude: Path | None) -> list[tuple[str, str]]:
    """The walk as it was (os.walk + pathlib), for comparison."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        here = Path(dirpath)
        keep = []
        for d in sorted(dirnames):
            full = here / d
            if d.startswith(".") or (exclude is not None and full.resolve() == exclude):
                continue
            keep.append(d)
        dirnames[:] = keep
        for name in sorted(filenames):
            full = here / name
            if name.startswith(".") or full.is_symlink() or not full.is_file():
                continue
            out.append((str(full), full.relative_to(root).as_posix()))
    return out


def _odd_tree(root: Path) -> Path:
    for rel in ("b.risum", "a.json", ".hidden.risum", "z/1.risum", "z/0/x.charx",
                "a/b/c/d.risum", "a/.h/e.risum", "a/b/c2.risum", "cat/doc.json", "한/파일.risum",
                "sp ace/x y.risum"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(b"{}")
    (root / "link.risum").symlink_to(root / "b.risum")
    (root / "dirlink").symlink_to(root / "a")
    (root / "dangling.risum").symlink_to(root / "nowhere")
    (root / "fifo").mkdir()
    os.mkfifo(root / "fifo" / "pipe.risum")
    raw = os.fsencode(root) + b"/\xc7\xd1.risum"  # a name that is not UTF-8
    with open(raw, "wb") as f:
        f.write(b"{}")
    return root / "cat"


def test_walk_is_the_walk_it_replaced(tmp_path: Path) -> None:
    from risutools.catalog.walk import _walk

    exclude = _odd_tree(tmp_path).resolve()
    for ex in (None, exclude):
        assert list(_walk(tmp_path, ex, [])) == _walk_before(tmp_path, ex)


def test_walk_spells_paths_as_pathlib_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from risutools.catalog.walk import _walk

    _odd_tree(tmp_path)
    monkeypatch.chdir(tmp_path)
    for root in (Path("."), Path("z"), Path("./a/"), tmp_path):
        assert list(_walk(root, None, [])) == _walk_before(root, None)


def test_discover_keeps_its_public_shape(tmp_path: Path) -> None:
    from risutools.catalog.ingest import discover

    (tmp_path / "m.json").write_text('{"type": "risuModule", "module": {}}', encoding="utf-8")
    (tmp_path / "note.txt").write_text("hello", encoding="utf-8")
    found, skipped = discover(tmp_path)
    assert skipped == ["note.txt"]
    assert [(type(p), p.name) for p, _ in found] == [(type(tmp_path), "m.json")]


# -- staging a target found absent ----------------------------------------------------


def test_staging_an_absent_target_keeps_the_commit_checks(tmp_path: Path) -> None:
    from risutools.errors import WriteConflict
    from risutools.fsio import commit_staged, stage_write

    target = tmp_path / "doc.json"
    staged = stage_write(target, b"new", absent=True)
    target.write_bytes(b"someone else's")  # appears between the look and the commit
    with pytest.raises(WriteConflict):
        commit_staged(staged, expect_absent=True)
    assert target.read_bytes() == b"someone else's" and len(list(tmp_path.iterdir())) == 1


def test_a_missing_folder_is_still_created(tmp_path: Path) -> None:
    from risutools.fsio import atomic_write, stage_write

    atomic_write(tmp_path / "a" / "b" / "doc.json", b"x")
    assert (tmp_path / "a" / "b" / "doc.json").read_bytes() == b"x"
    (tmp_path / "file").write_bytes(b"")
    with pytest.raises(NotADirectoryError) as got:  # a parent that is a file: named
        stage_write(tmp_path / "file" / "doc.json", b"x")
    assert got.value.part == tmp_path / "file"  # type: ignore[attr-defined]


def test_ingest_stages_a_new_document_with_one_look_at_its_target(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A target that is not there is not stat'ed again while its temp file is written."""
    from risutools.catalog import ingest as ig
    from risutools.formats.risum import write_risum

    src, out = tmp_path / "src", tmp_path / "cat"
    src.mkdir()
    (src / "100_m.risum").write_bytes(write_risum(
        {"name": "M", "id": "00000000-0000-4000-8000-000000000001"}, []))
    looks: list[str] = []
    real_stat, real_lstat = os.stat, os.lstat

    def stat(p: Any, *a: Any, **k: Any) -> Any:
        if os.fspath(p).endswith(".json") and not os.path.basename(os.fspath(p)).startswith("."):
            looks.append(os.fspath(p))
        return real_stat(p, *a, **k)

    def lstat(p: Any, *a: Any, **k: Any) -> Any:
        if os.fspath(p).endswith(".json") and not os.path.basename(os.fspath(p)).startswith("."):
            looks.append(os.fspath(p))
        return real_lstat(p, *a, **k)

    monkeypatch.setattr(os, "stat", stat)
    monkeypatch.setattr(os, "lstat", lstat)
    result = ig.ingest(src, out, jobs=1, use_cache=False)
    assert result.ok and result.counts()["written"] == 1
    looks = [p for p in looks if "/facts/" not in p]  # the document's (facts/ apart)
    # once when staged, once when committed (was four times)
    assert len(looks) == 2 and len(set(looks)) == 1


# -- the cache keyed by the plan's stat --------------------------------------------------


def test_the_cache_records_the_stat_taken_before_the_read(tmp_path: Path) -> None:
    from risutools.catalog.cache import RACY_NS, IngestCache
    from risutools.catalog.ingest import SourceOutcome

    f = tmp_path / "a.risum"
    f.write_bytes(b"x")
    cache = IngestCache(tmp_path / "c.msgpack")
    out = SourceOutcome(path="a.risum", size=1, sha256="0" * 64)
    cache.store("a.risum", out, f, "en", "", (1, 123, 456))  # as planned (before the read)
    assert cache.stat["a.risum"] == (1, 123, 456, "0" * 64)
    # the file on disk has another stat: not trusted
    assert cache.lookup("a.risum", f, "en", None, "") is None
    assert cache.lookup("a.risum", f, "en", None, "", (1, 123, 456)) is not None
    for other in ((2, 123, 456), (1, 124, 456), (1, 123, 457)):  # (each of the three alone)
        assert cache.lookup("a.risum", f, "en", None, "", other) is None
    # without one: stat'ed here, as before; just written, so not recorded (racy) ...
    cache.store("a.risum", out, f, "en", "")
    assert "a.risum" not in cache.stat
    cache.started_ns += 2 * RACY_NS  # ... unless the run began well after it was written
    cache.store("a.risum", out, f, "en", "")
    st = f.stat()
    assert cache.stat["a.risum"] == (st.st_size, st.st_mtime_ns, st.st_ctime_ns, "0" * 64)


def test_a_cache_with_an_unpackable_result_keeps_the_others(tmp_path: Path) -> None:
    from risutools.catalog.cache import IngestCache
    from risutools.catalog.ingest import SourceOutcome

    f = tmp_path / "a.risum"
    f.write_bytes(b"x")
    cache = IngestCache(tmp_path / "c.msgpack")
    good = SourceOutcome(path="a.risum", size=1, sha256="0" * 64,
                         documents=[{"component_id": "a", "x": "fine"}], facts=[{}])
    bad = SourceOutcome(path="b.risum", size=1, sha256="1" * 64,
                        documents=[{"component_id": "b", "x": "lone \ud800"}], facts=[{}])
    cache.store("a.risum", good, f, "en", "", (1, 1, 1))
    cache.store("b.risum", bad, f, "en", "", (1, 1, 1))  # cannot be packed: not cached
    cache.save()
    again = IngestCache.load(tmp_path / "c.msgpack")
    assert again.problem is None and list(again.stat) == ["a.risum"]
    hit = again.lookup("a.risum", f, "en", None, "", (1, 1, 1))
    assert hit is not None and hit.documents == good.documents


def test_unicodedata_is_what_keep_reads() -> None:
    # the table is filled from _keep, which reads the Unicode database of this Python
    assert naming._keep("한") and naming._keep("7") and not naming._keep("!")
    assert unicodedata.category("한")[0] == "L"


# -- json_text: its class written as ranges ----------------------------------------------


def test_json_text_escapes_exactly_the_unsafe_code_points() -> None:
    """Every code point, one at a time in one text: escaped exactly when it is a control,
    format, line or paragraph separator character, a surrogate or a noncharacter (U+FFFE,
    U+FDD0 ...; the line break kept)."""
    from risutools.pathnames import noncharacter
    from risutools.printable import json_text

    unsafe = {"Cc", "Cf", "Zl", "Zp", "Cs"}
    codes = range(1, sys.maxunicode + 1)
    # joined by NUL (itself escaped as \u0000): split back, one piece a code point
    pieces = json_text("\x00".join(map(chr, codes)))
    out = pieces.split("\\u0000")
    assert len(out) == len(codes)
    for code, piece in zip(codes, out, strict=True):
        ch = chr(code)
        if code != 0x0A and (unicodedata.category(ch) in unsafe or noncharacter(ch)):
            if code > 0xFFFF:
                hi, lo = 0xD800 + ((code - 0x10000) >> 10), 0xDC00 + ((code - 0x10000) & 0x3FF)
                assert piece == f"\\u{hi:04x}\\u{lo:04x}", hex(code)
            else:
                assert piece == f"\\u{code:04x}", hex(code)
        else:
            assert piece == ch, hex(code)


def test_json_text_alone_escapes_as_in_a_text_it_cannot_pass_whole() -> None:
    """Every code point in a text of its own (the fast path for a printable text and the
    escape for one that is not) gives what it gives among other code points."""
    from risutools.printable import json_text

    codes = range(1, sys.maxunicode + 1)
    among = json_text("\x00".join(map(chr, codes))).split("\\u0000")
    for code, piece in zip(codes, among, strict=True):
        assert json_text("가" + chr(code) + "a") == "가" + piece + "a", hex(code)
    assert json_text("plain 한국어 text") == "plain 한국어 text"
    assert json_text("x\u2028y\n") == "x\\u2028y\n"


def test_the_notes_index_sees_other_bytes_of_the_same_size_and_mtime(tmp_path: Path) -> None:
    """The notes index is kept a process long, keyed by each file's stat: a notes file given
    other bytes of the same size and its old modification time is indexed again."""
    import hashlib
    import os
    import time

    from risutools.contract.notesfind import notes_index

    note = tmp_path / "a.yaml"
    note.write_text("summary: one\n", "utf-8")
    st = note.stat()
    first = notes_index(tmp_path)
    digest = "sha256:" + hashlib.sha256(b"summary: one\n").hexdigest()
    assert first.by_digest == {digest: "a.yaml"}
    time.sleep(0.05)  # (past the file system's clock tick)
    note.write_text("summary: two\n", "utf-8")
    os.utime(note, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert (note.stat().st_size, note.stat().st_mtime_ns) == (st.st_size, st.st_mtime_ns)
    again = notes_index(tmp_path)
    assert again.by_digest == {"sha256:" + hashlib.sha256(b"summary: two\n").hexdigest():
                               "a.yaml"}
