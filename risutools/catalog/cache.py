"""The incremental ingest cache (msgpack, one file, written atomically).

Two maps:

* ``stat``: relative path -> ``[size, mtime_ns, sha256]`` (a path that is not UTF-8,
  e.g. a CP949 name from a Korean zip, is keyed by ``"\\0"`` + the hex of its exact
  bytes: the key is exact and always storable).  A file whose size
  and modification time are unchanged is not hashed again (hashing is the
  dominant cost of a run over gigabytes of assets).  ``--no-cache`` or
  deleting the cache forces a full re-hash.
* ``results``: ``result_key(sha256, ...)`` -> the projected documents (or the
  error) for those bytes, valid for this tool version, language, post id and
  notes.  A re-run after adding ten files reads ten files.

A cache written by another tool version is ignored silently; one that cannot be read
(not a regular file, larger than ``MAX_CACHE_BYTES``, more than ``MAX_CACHE_VALUES``
msgpack values, nested deeper than ``risup.MAX_DEPTH``, a length claim past its bytes,
not msgpack, not the expected maps) is ignored with one line in ``problem`` (the run
rebuilds it), never trusted, never fatal.  Bound: the file is read through
:func:`risutools.safeio.read_regular` (at most ``MAX_CACHE_BYTES + 1`` bytes), its
shape is walked by :func:`risutools.formats.risup.msgpack_shape` before anything is
built, and msgpack's own ``max_*_len`` limits hold every container and string to the
bytes read, so decoding builds at most ``MAX_CACHE_VALUES`` objects.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from risutools import __version__
from risutools.catalog.outcome import SourceOutcome
from risutools.errors import Code, RisuError
from risutools.formats.risup import msgpack_shape
from risutools.fsio import atomic_write, display_path
from risutools.safeio import read_regular

CACHE_FORMAT = 3  # 3: facts summaries with the reader's facts (issue 19)
MAX_CACHE_BYTES = 256 << 20  # a cache file larger than 256 MiB is not read (rebuilt)
# at most this many msgpack values (a source's entry holds a few hundred): ~1 GB of
# Python objects at worst, whatever the bytes claim
MAX_CACHE_VALUES = 8_000_000


def path_key(rel: str) -> str:
    """The cache key of a relative path: the path itself, or for a name that is not
    UTF-8 (Python keeps its bytes as surrogates) a NUL (never in a file name) + hex."""
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        return "\0" + os.fsencode(rel).hex()
    return rel


def result_key(sha256: str, lang: str, post_id: str | None, notes_sig: str) -> str:
    raw = "\0".join([sha256, __version__, lang, post_id or "", notes_sig])
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


@dataclass
class IngestCache:
    path: Path
    enabled: bool = True
    stat: dict[str, list[Any]] = field(default_factory=dict)
    results: dict[str, dict[str, Any]] = field(default_factory=dict)
    used: set[str] = field(default_factory=set)

    problem: str | None = None  # one line when the cache on disk could not be used

    @classmethod
    def load(cls, path: Path, enabled: bool = True) -> IngestCache:
        cache = cls(path=path, enabled=enabled)
        if not enabled or not os.path.lexists(path):
            return cache
        try:
            data = _decode(read_regular(path, MAX_CACHE_BYTES), display_path(path))
        except RisuError as exc:  # a damaged or hostile cache is rebuilt, never fatal
            cache.problem = f"{exc.one_line()}; ignored, rebuilt by this run"
            return cache
        if (
            isinstance(data, dict)
            and data.get("format") == CACHE_FORMAT
            and data.get("tool") == __version__
        ):
            stat_map, results = data.get("stat"), data.get("results")
            if isinstance(stat_map, dict) and isinstance(results, dict):
                cache.stat, cache.results = stat_map, results
            else:
                cache.problem = (f"{display_path(path)}: cache-unreadable: not the expected "
                                 "maps; ignored, rebuilt by this run")
        return cache

    def _known_sha(
        self, rel: str, path: str | os.PathLike[str], st: tuple[int, int] | None = None
    ) -> str | None:
        entry = self.stat.get(path_key(rel))
        if not isinstance(entry, list) or len(entry) != 3:
            return None
        if st is None:
            st = _size_mtime(path)
            if st is None:
                return None
        if entry[0] == st[0] and entry[1] == st[1] and isinstance(entry[2], str):
            return entry[2]
        return None

    def known_format(self, rel: str, path: str | os.PathLike[str], lang: str,
                     post_id: str | None, notes_sig: str) -> str | None:
        """The format recorded with the cached outcome of the file at ``path`` when
        :meth:`lookup` would find that outcome (its stat is the one recorded), else None:
        such a file need not be opened to tell its format."""
        if not self.enabled:
            return None
        sha = self._known_sha(rel, path)
        entry = self.results.get(result_key(sha, lang, post_id, notes_sig)) if sha else None
        fmt = entry.get("format") if isinstance(entry, dict) else None
        return fmt if isinstance(fmt, str) else None

    def lookup(
        self, rel: str, path: str | os.PathLike[str], lang: str, post_id: str | None,
        notes_sig: str, st: tuple[int, int] | None = None,
    ) -> SourceOutcome | None:
        """The outcome cached for the file at ``path`` when its size and modification time
        (``st``: as the caller just stat'ed them; else stat'ed here) are the ones recorded
        and its bytes were projected with these settings; None otherwise."""
        if not self.enabled:
            return None
        sha = self._known_sha(rel, path, st)
        if sha is None:
            return None
        key = result_key(sha, lang, post_id, notes_sig)
        entry = self.results.get(key)
        if not isinstance(entry, dict):
            return None

        try:
            outcome = SourceOutcome(
                path=rel,
                size=0,
                format=entry.get("format"),
                sha256=sha,
                post_id=post_id,
                documents=list(entry.get("documents") or []),
                facts=list(entry.get("facts") or []),
                warnings=list(entry.get("warnings") or []),
                error=entry.get("error"),
            )
        except (TypeError, ValueError):
            return None
        if len(outcome.facts) != len(outcome.documents):
            return None  # an entry written before facts were kept: project again
        self.used.add(key)
        return outcome

    def store(
        self, rel: str, outcome: SourceOutcome, path: str | os.PathLike[str], lang: str,
        notes_sig: str, st: tuple[int, int] | None = None,
    ) -> None:
        """Remember ``outcome`` for the file at ``path`` (``rel``: its exact relative path;
        ``st``: its size and modification time as stat'ed before it was read, else stat'ed
        here)."""
        if not self.enabled or not outcome.sha256:
            return
        if st is None:
            st = _size_mtime(path)
            if st is None:
                return
        self.stat[path_key(rel)] = [st[0], st[1], outcome.sha256]
        key = result_key(outcome.sha256, lang, outcome.post_id, notes_sig)
        self.results[key] = {
            "format": outcome.format,
            "documents": outcome.documents,
            "facts": outcome.facts,
            "warnings": outcome.warnings,
            "error": outcome.error,
        }
        self.used.add(key)

    def prune(self, seen: set[str]) -> None:
        """Forget files that are gone and results nothing refers to any more."""
        keys = {path_key(rel) for rel in seen}
        self.stat = {k: v for k, v in self.stat.items() if k in keys}
        self.results = {k: v for k, v in self.results.items() if k in self.used}

    def save(self) -> None:
        if not self.enabled:
            return
        import msgpack

        results = dict(sorted(self.results.items()))
        value: dict[str, Any] = {
            "format": CACHE_FORMAT,
            "tool": __version__,
            "stat": dict(sorted(self.stat.items())),
            "results": results,
        }
        try:  # packed once; only when a result cannot be stored is each one tried
            data = msgpack.packb(value, use_bin_type=True)
        except (ValueError, TypeError, OverflowError):  # e.g. a lone surrogate in a text
            value["results"] = {k: v for k, v in results.items() if _packable(v)}
            data = msgpack.packb(value, use_bin_type=True)
        atomic_write(self.path, data)


def _size_mtime(path: str | os.PathLike[str]) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns


def _decode(data: bytes, shown: str) -> Any:
    """The cache's msgpack value, bounded before it is built (see the module docstring)."""
    import msgpack


    what = "the cache"
    try:
        msgpack_shape(data, what, max_items=MAX_CACHE_VALUES)
    except RisuError as exc:
        raise RisuError(Code.CACHE_UNREADABLE, exc.why, path=shown) from None
    n = len(data)
    try:
        return msgpack.unpackb(
            data, raw=False, strict_map_key=True, max_str_len=n, max_bin_len=n,
            max_array_len=min(n, MAX_CACHE_VALUES), max_map_len=min(n, MAX_CACHE_VALUES),
            max_ext_len=n,
        )
    except Exception as exc:  # msgpack raises many types (ExtraData, ValueError, ...)
        raise RisuError(Code.CACHE_UNREADABLE, f"not valid msgpack: {exc}", path=shown) from None


def _packable(value: Any) -> bool:
    """Whether msgpack can store ``value`` (an entry that cannot is simply not cached)."""
    import msgpack

    try:
        msgpack.packb(value, use_bin_type=True)
    except (ValueError, TypeError, OverflowError):
        return False
    return True
