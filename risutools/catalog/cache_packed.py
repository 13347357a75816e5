"""The packed outcomes of the ingest cache (:mod:`risutools.catalog.cache`): where their
region lies in the main file (:func:`region_of`), its bytes read again and checked against
their SHA-256 (:func:`read_region`), and one unpacked (:func:`unpack_outcome`): its
documents and facts, unpacked by msgpack's own C unpacker within bounds (below) and the
values checked against what the cache recorded of them.

Bounds (hostile bytes: the cache lives in the catalog): every length msgpack declares is
at most the packed bytes' length, no ``ext`` type, no key but a string; at most
:data:`MAX_PACKED_VALUES` values (a value takes one byte at least, so packed bytes no
longer than that hold no more; longer ones have their shape walked first,
:func:`risutools.formats.risup.msgpack_shape`, which stops at the bound); at most
:data:`~risutools.formats.risup.MAX_DEPTH` levels of non-empty containers (msgpack's own
stack stops at 1,024 as it unpacks; the levels are then counted a level a C call,
:func:`nesting_within`)."""

from __future__ import annotations

import gc
import hashlib
import os
from pathlib import Path
from typing import Any

from risutools.catalog.cache_keys import file_identity
from risutools.errors import Code, RisuError
from risutools.formats.risup import MAX_DEPTH, msgpack_shape
from risutools.fsio import display_path
from risutools.safeio import open_fd, read_at

# at most this many msgpack values in one packed outcome (a source's documents and facts)
MAX_PACKED_VALUES = 2_000_000


def unpack_outcome(packed: bytes, ids: list[str]
                   ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]] | None:
    """(documents, facts) of a packed outcome, each a list of maps, one a component id,
    the documents' ids those recorded; None when it does not fit."""
    import msgpack

    n = len(packed)
    try:
        if n > MAX_PACKED_VALUES:  # (shorter bytes cannot hold more values)
            msgpack_shape(packed, "a cached outcome", max_items=MAX_PACKED_VALUES)
        value = msgpack.unpackb(packed, raw=False, strict_map_key=True, max_str_len=n,
                                max_bin_len=n, max_array_len=n, max_map_len=n, max_ext_len=0)
    except Exception:  # msgpack raises many types; the walk raises RisuError
        return None
    if not nesting_within(value, MAX_DEPTH):
        return None
    if not (isinstance(value, list) and len(value) == 2):
        return None
    docs, facts = value
    if not (isinstance(docs, list) and isinstance(facts, list)
            and len(docs) == len(facts) == len(ids)):
        return None
    for doc, f, cid in zip(docs, facts, ids, strict=True):
        if not (isinstance(doc, dict) and isinstance(f, dict) and doc.get("component_id") == cid):
            return None
    return docs, facts


def nesting_within(value: Any, limit: int) -> bool:
    """Whether ``value`` (lists, dicts and scalars, as msgpack unpacks them) nests at most
    ``limit`` levels of non-empty containers (as :func:`~risutools.formats.risup.msgpack_shape`
    counts them).  A level at a time: ``gc.get_referents`` lists what the containers of a
    level hold in one C call, and skips the scalars (no strings, numbers, booleans or None
    are objects the collector tracks), so only containers lead to the next level."""
    level = [value]
    for _ in range(limit + 1):
        level = gc.get_referents(*level)
        if not level:
            return True
    return False


def region_of(head: bytes, shown: str, header: list[Any]) -> tuple[int, int, bytes] | None:
    """Where the packed outcomes lie in a main file that starts with ``head``: (offset,
    length, SHA-256) of the ``bin`` of its first record after the header,
    ``[3, sha256, bin]``; None when the header is not ``header`` (another format's or tool
    version's).  Raises ``cache-unreadable``."""
    import msgpack

    unpacker = msgpack.Unpacker(None, raw=False, max_buffer_size=len(head) or 1,
                                max_str_len=len(head), max_bin_len=0, max_array_len=4,
                                max_map_len=0, max_ext_len=0)
    unpacker.feed(head)
    try:
        found = unpacker.unpack()
    except Exception as exc:  # msgpack raises many types (OutOfData, ValueError, ...)
        why = "no header" if isinstance(exc, msgpack.OutOfData) else str(exc)
        raise RisuError(Code.CACHE_UNREADABLE, f"not a valid cache: {why}",
                        path=shown) from None
    if not (isinstance(found, list) and len(found) == 2):
        raise RisuError(Code.CACHE_UNREADABLE, "not a valid cache: no header", path=shown)
    if found != header:
        return None
    at = unpacker.tell() + len(_REGION_HEAD)
    digest = head[at:at + 32]
    width = _BIN_WIDTHS.get(head[at + 32:at + 33], 0)
    size = head[at + 33:at + 33 + width]
    if head[at - len(_REGION_HEAD):at] != _REGION_HEAD or not width or len(size) != width:
        raise RisuError(Code.CACHE_UNREADABLE, "not a valid cache: record 1 is not of the "
                        "expected shape", path=shown)
    return at + 33 + width, int.from_bytes(size, "big"), digest


# the region's record up to its digest: an array of 3, the number 3, a bin 8 of 32 bytes
_REGION_HEAD = b"\x93\x03\xc4\x20"
# msgpack's bin 8, 16 and 32: the bytes of the length that follows each
_BIN_WIDTHS = {b"\xc4": 1, b"\xc5": 2, b"\xc6": 4}


def read_region(path: Path, ident: tuple[int, ...], start: int, length: int,
                digest: bytes) -> bytes | None:
    """The main file's packed outcomes, when the file is still the one read (else None).
    Raises ``cache-unreadable`` when they are not the bytes written (their SHA-256 is not
    the one recorded: a damaged disk, a hand edit)."""
    try:
        fd, st = open_fd(path)
    except RisuError:
        return None
    try:
        data = read_at(fd, start, length, path) if file_identity(st) == ident else None
    except RisuError:
        return None
    finally:
        os.close(fd)
    if data is not None and hashlib.sha256(data).digest() != digest:
        raise RisuError(Code.CACHE_UNREADABLE, "not a valid cache: its packed outcomes are "
                        "not the bytes written (their SHA-256 differs)",
                        path=display_path(path))
    return data
