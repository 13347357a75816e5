"""The hashed single pass over a ``.risum`` (issue 12 goal 4): ``_HashedFrames`` reads the
file in fixed chunks and parses frames out of them; it must give exactly what the
frame-by-frame reader (``_Frames`` with a hasher) gives, good input and bad, whatever the
chunk size, for files cut short, files that shrink under the reader and files that grow."""

from __future__ import annotations

import hashlib
import io
import random
from collections.abc import Iterator
from typing import Any

import pytest

from risutools.errors import FormatError
from risutools.formats import risum
from risutools.formats.risum import read_risum_stream, write_risum

CHUNKS = (1, 3, 7, 64, 1 << 20)


def _module(n_assets: int) -> dict[str, Any]:
    return {
        "name": "m",
        "id": "id-1",
        "lorebook": [{"key": "k", "content": "한글 " * 4}],
        "assets": [[f"a{i}", "", "png"] for i in range(n_assets)],
    }


def _sample(n_assets: int = 3) -> bytes:
    assets = [bytes(range(40)) * (i + 1) + b"tail" for i in range(n_assets)]
    return write_risum(_module(n_assets), assets)


def _outcome(
    data: bytes, size: int, *, hashed: bool, with_assets: bool = False
) -> tuple[Any, ...]:
    """What one read gives: the contents and digest, or the error (code, message, where)."""
    h = hashlib.sha256()
    fp = io.BytesIO(data)
    if hashed:
        frames: Any = risum._HashedFrames
    else:
        frames = lambda f, s, hh, w: risum._Frames(f, s, hh, w)  # noqa: E731
    saved = risum._HashedFrames
    risum._HashedFrames = frames  # type: ignore[misc]
    try:
        got = read_risum_stream(fp, size, hasher=h, with_assets=with_assets, where="x: ")
    except FormatError as exc:
        return ("error", exc.code, str(exc), exc.where)
    finally:
        risum._HashedFrames = saved  # type: ignore[misc]
    return ("ok", repr(got), h.hexdigest())


def _variants(data: bytes) -> Iterator[tuple[bytes, int]]:
    """(bytes really there, size claimed by fstat): whole, every cut, shrunk, grown."""
    yield data, len(data)
    for cut in range(len(data)):
        yield data[:cut], cut  # cut short: fstat agrees
        yield data[:cut], len(data)  # shrank after the fstat
    yield data + b"\x00grown", len(data)  # grew after the fstat: the extra is never read
    yield data + b"\x00", len(data) + 1  # one trailing byte
    yield data[:-1], len(data) - 1  # no end marker


@pytest.mark.parametrize("chunk", CHUNKS)
def test_every_cut_and_size_gives_what_the_frame_reader_gives(
    chunk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(risum, "CHUNK", chunk)
    data = _sample()
    seen = set()
    for blob, size in _variants(data):
        want = _outcome(blob, size, hashed=False)
        assert _outcome(blob, size, hashed=True) == want, (len(blob), size)
        seen.add(want[0] if want[0] == "ok" else want[1])
    # the variants really reach the error paths this reader has
    assert {"ok", "truncated", "length-beyond-eof"} <= seen


@pytest.mark.parametrize("chunk", (3, 64, 1 << 20))
def test_whole_file_digest_and_assets(chunk: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(risum, "CHUNK", chunk)
    data = _sample(5)
    got = _outcome(data, len(data), hashed=True, with_assets=True)
    assert got == _outcome(data, len(data), hashed=False, with_assets=True)
    assert got[0] == "ok" and got[2] == hashlib.sha256(data).hexdigest()


@pytest.mark.parametrize("chunk", (1, 7, 1 << 20))
def test_random_damage_gives_what_the_frame_reader_gives(
    chunk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(risum, "CHUNK", chunk)
    rng = random.Random(12)
    data = bytearray(_sample(2))
    kinds = set()
    for _ in range(300):
        bad = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            bad[rng.randrange(len(bad))] = rng.choice((0, 1, 0xFF, rng.randrange(256)))
        blob = bytes(bad)
        for wa in (False, True):
            want = _outcome(blob, len(blob), hashed=False, with_assets=wa)
            assert _outcome(blob, len(blob), hashed=True, with_assets=wa) == want
            kinds.add(want[1] if want[0] == "error" else "ok")
    assert len(kinds) >= 3  # the damage reaches several different outcomes


def test_never_reads_past_the_size(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(risum, "CHUNK", 5)
    data = _sample(1)
    fp = io.BytesIO(data + b"more bytes written meanwhile")
    h = hashlib.sha256()
    read_risum_stream(fp, len(data), hasher=h)
    assert fp.tell() == len(data)
    assert h.hexdigest() == hashlib.sha256(data).hexdigest()
