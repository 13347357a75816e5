"""What ingest reads of the catalog it writes into is untrusted (a pull request can put
anything there): an existing document or ``components.ndjson`` is read bounded, without
following a link, and without waiting on a FIFO put in its place after the look at it;
each refusal is one line, the file is left as it is and nothing of it is lost."""

from __future__ import annotations

import os
import shutil
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from harness import SOURCES

from risutools.catalog import cache as cache_mod
from risutools.catalog import ingest_write, ndjson_merge
from risutools.catalog.ingest import ingest
from risutools.catalog.ndjson_merge import NDJSON_NAME


@pytest.fixture(autouse=True)
def _bounded_time() -> Iterator[None]:
    """A read that waits on a FIFO fails the test instead of hanging the suite."""
    def late(*_: Any) -> None:
        raise AssertionError("a read waited")

    old = signal.signal(signal.SIGALRM, late)
    signal.alarm(20)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


def _catalog(tmp: Path, ndjson: bool = False) -> tuple[Path, Path]:
    src, out = tmp / "src", tmp / "cat"
    shutil.copytree(SOURCES, src)
    ingest(src, out, jobs=1, ndjson=ndjson, use_cache=False)
    return src, out


def _seen_as(monkeypatch: pytest.MonkeyPatch, target: Path, stand_in: Path) -> None:
    """``os.lstat(target)`` answers what it found before the swap: ``stand_in``'s status."""
    real = os.lstat

    def lstat(path: Any, *a: Any, **k: Any) -> os.stat_result:
        return real(stand_in if os.fspath(path) == os.fspath(target) else path, *a, **k)

    monkeypatch.setattr(os, "lstat", lstat)


def _swapped(target: Path, data: bytes, swap: str,
             monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """``target`` replaced by a FIFO or a link to a file outside the catalog (``outside``)
    after the look at it, which found a regular file holding ``data`` (``stand_in``)."""
    stand_in = target.parent.parent / f"stand-in{target.suffix}"
    stand_in.write_bytes(data)
    outside = target.parent.parent / f"outside{target.suffix}"
    outside.write_bytes(data)
    target.unlink()
    if swap == "fifo":
        os.mkfifo(target)
    else:
        target.symlink_to(outside)
    _seen_as(monkeypatch, target, stand_in)
    return stand_in, outside


def test_an_oversized_document_is_kept_and_reported(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    src, out = _catalog(tmp_path)
    doc = sorted(out.glob("*.json"))[0]
    data = doc.read_bytes()
    doc.write_bytes(data.replace(b'"1.0.0"', b'"1.0.1"', 1))  # (a change to write)
    before = doc.read_bytes()
    monkeypatch.setattr(ingest_write, "MAX_DOCUMENT_BYTES", len(before) - 1)
    run = ingest(src, out, jobs=1, use_cache=False)
    assert doc.read_bytes() == before
    [line] = [k for k in run.kept_unreadable if doc.name in k]
    assert line.startswith(f"{doc}: too-large: ")
    assert line.endswith(f"; left as it is, {doc.stem} not written")


@pytest.mark.parametrize("swap", ["fifo", "link"])
def test_a_document_swapped_after_the_look_is_refused(tmp_path: Path, swap: str,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    src, out = _catalog(tmp_path)
    doc = sorted(out.glob("*.json"))[0]
    stand_in, outside = _swapped(doc, doc.read_bytes().replace(b'"1.0.0"', b'"1.0.1"', 1),
                                 swap, monkeypatch)
    run = ingest(src, out, jobs=1, use_cache=False)
    monkeypatch.undo()
    assert [k for k in run.kept_unreadable if doc.name in k]
    assert outside.read_bytes() == stand_in.read_bytes()  # (never written through the link)
    assert doc.is_fifo() if swap == "fifo" else doc.is_symlink()


def test_an_oversized_ndjson_catalog_is_kept_and_reported(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cache_mod, "RACY_NS", 0)
    src, out = _catalog(tmp_path, ndjson=True)
    target = out / NDJSON_NAME
    target.write_bytes(target.read_bytes().split(b"\n", 1)[1])  # (a line to write again)
    before = target.read_bytes()
    monkeypatch.setattr(ndjson_merge, "MAX_NDJSON_BYTES", len(before) - 1)
    run = ingest(src, out, jobs=1, ndjson=True)
    assert target.read_bytes() == before and not run.written
    assert len(run.kept_unreadable) == 1 and "left as it is, nothing written" in \
        run.kept_unreadable[0] and "bytes" in run.kept_unreadable[0]


@pytest.mark.parametrize("swap", ["fifo", "link"])
def test_an_ndjson_catalog_swapped_after_the_look_is_refused(
        tmp_path: Path, swap: str, monkeypatch: pytest.MonkeyPatch) -> None:
    src, out = _catalog(tmp_path, ndjson=True)
    target = out / NDJSON_NAME
    stand_in, outside = _swapped(target, target.read_bytes().split(b"\n", 1)[1], swap,
                                 monkeypatch)
    run = ingest(src, out, jobs=1, ndjson=True, use_cache=False)
    monkeypatch.undo()
    assert len(run.kept_unreadable) == 1 and "nothing written" in run.kept_unreadable[0]
    assert outside.read_bytes() == stand_in.read_bytes() and not run.written
    assert target.is_fifo() if swap == "fifo" else target.is_symlink()


def _socket_at(path: Path) -> None:
    import socket

    s = socket.socket(socket.AF_UNIX)
    s.bind(os.fspath(path))
    s.close()


@pytest.mark.parametrize("jobs", [1, 2])
@pytest.mark.parametrize("kind", ["fifo", "socket", "folder"])
def test_a_document_path_holding_no_file_is_one_line_and_the_rest_is_written(
        tmp_path: Path, kind: str, jobs: int) -> None:
    """In this process or in the pool's workers (a worker's refusal once broke the whole
    pool: the error could not travel back): that document is kept and reported, every
    other one written."""
    src, out = tmp_path / "src", tmp_path / "cat"
    shutil.copytree(SOURCES, src)
    first = ingest(src, out, jobs=1, use_cache=False)
    docs = sorted(out.glob("*.json"))
    victim = docs[0]
    for doc in docs:
        doc.unlink()
    {"fifo": os.mkfifo, "socket": _socket_at, "folder": os.mkdir}[kind](victim)
    run = ingest(src, out, jobs=jobs, use_cache=False)
    assert [line for line in run.kept_unreadable if victim.name in line] == \
        [f"{victim}: unreadable-document: not a regular file; left as it is, "
         f"{victim.stem} not written"]
    assert not [s for s in run.sources if s.error]
    assert sorted(run.written) == sorted(d.name for d in docs[1:])
    assert sorted(p.name for p in out.glob("*.json")) == sorted(d.name for d in docs)
    assert len(first.written) == len(docs)


def test_a_source_without_modules_is_hashed_as_the_file_the_walk_found(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A source that holds no module is hashed, not projected: that read too is of the file
    the walk found (a FIFO put there since is refused in one line, never waited on)."""
    from risutools.catalog import sourcefile

    path = tmp_path / "card.charx"
    path.write_bytes(b"PK\x05\x06" + bytes(18))
    st = os.lstat(path)
    monkeypatch.setattr(sourcefile, "read_path", lambda *a, **k: [])
    out = sourcefile.process_file(os.fspath(path), "card.charx", "en", None,
                                  found=(st.st_dev, st.st_ino))
    assert out.error is None and out.sha256 is not None and len(out.sha256) == 64
    path.unlink()
    os.mkfifo(path)
    out = sourcefile.process_file(os.fspath(path), "card.charx", "en", None,
                                  found=(st.st_dev, st.st_ino))
    assert out.error is not None and out.error.startswith(f"{path}: ")
    assert out.sha256 is None and not out.documents


def test_a_facts_file_that_is_a_link_is_left_and_never_read_through(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    src, out = _catalog(tmp_path)
    facts = sorted((out / "facts").glob("*.json"))
    victim = facts[0]
    outside = tmp_path / "outside.json"
    outside.write_text('{"not": "these facts"}', "utf-8")
    victim.unlink()
    victim.symlink_to(outside)
    opened: list[str] = []
    real_open = os.open

    def watched(path: Any, *a: Any, **k: Any) -> int:
        opened.append(os.path.realpath(path) if not isinstance(path, int) else "")
        return real_open(path, *a, **k)

    monkeypatch.setattr(os, "open", watched)
    ingest(src, out, jobs=1, use_cache=False)
    monkeypatch.undo()
    assert os.path.realpath(outside) not in opened
    assert victim.is_symlink() and outside.read_text("utf-8") == '{"not": "these facts"}'
    assert all(f.is_file() and not f.is_symlink() for f in facts[1:])
