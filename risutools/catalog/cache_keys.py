"""What the ingest cache (:mod:`risutools.catalog.cache`) keys its entries by: a source's
relative path, the stat it compares, and the key of a projection's result."""

from __future__ import annotations

import hashlib
import os
from typing import Any

from risutools import __version__
from risutools.formats import FORMATS

#: a source's stat as the cache records and compares it: (size, mtime_ns, ctime_ns).  The
#: change time catches what size and modification time alone miss: other bytes of the same
#: size given the old modification time (``cp -p``, ``rsync -t``, an archive that stamps
#: every file alike), a file renamed over the old one (any write or rename sets it; no tool
#: sets it back).  Not the inode: FAT, exFAT and some network file systems make one up at
#: each mount, and a collection on such a drive would be hashed again after each re-plug.
SourceStat = tuple[int, int, int]

#: the digest a source's stat record holds for a file that is not a Risu file (sniffed at
#: that stat: neither read nor sniffed again while its stat stays the one recorded).  It
#: names the formats the sniff knew: a verdict of a sniff that knew fewer (``""``, before
#: PNG cards) is no hit, and the file is sniffed again when a reader learns a format
NOT_RISU_PREFIX = "not-risu:"
NOT_RISU = NOT_RISU_PREFIX + hashlib.sha256(" ".join(FORMATS).encode()).hexdigest()[:16]


def source_stat(st: os.stat_result) -> SourceStat:
    """What the cache records and compares of a source file's stat."""
    return st.st_size, st.st_mtime_ns, st.st_ctime_ns


def source_stat_of(path: str | os.PathLike[str]) -> SourceStat | None:
    """:func:`source_stat` of the file at ``path``; None when it cannot be stat'ed."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return source_stat(st)


def file_identity(st: os.stat_result) -> tuple[int, ...]:
    """A file as the same file: device, inode, size, modification and change times."""
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def path_key(rel: str) -> str:
    """The cache key of a relative path: the path itself, or for a name that is not
    UTF-8 (Python keeps its bytes as surrogates) a NUL (never in a file name) + hex."""
    if rel.isascii():
        return rel
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        return "\0" + os.fsencode(rel).hex()
    return rel


def result_key(sha256: str, lang: str, post_id: str | None, notes_sig: str) -> str:
    """The key of a source's outcome: its bytes' digest, the tool version, the language,
    the post id and the digest of the notes and settings."""
    raw = "\0".join([sha256, __version__, lang, post_id or "", notes_sig])
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


def in_columns(table: dict[str, tuple[Any, ...]], items: int) -> list[list[list[Any]]]:
    """A map's entries in key order, as columns (the keys, then each field), in chunks of at
    most ``items`` entries (the cache's records)."""
    rows = sorted(table.items())
    return [[[k for k, _ in chunk], *(list(col) for col in zip(*(v for _, v in chunk),
                                                               strict=True))]
            for chunk in (rows[i:i + items] for i in range(0, len(rows), items))]
