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

A cache written by another tool version, or one that cannot be read, is
ignored (never trusted, never fatal).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from risutools import __version__
from risutools.fsio import atomic_write

if TYPE_CHECKING:
    from risutools.catalog.ingest import SourceOutcome

CACHE_FORMAT = 2
MAX_CACHE_BYTES = 1 << 30  # refuse to read a cache file larger than 1 GiB


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

    @classmethod
    def load(cls, path: Path, enabled: bool = True) -> IngestCache:
        cache = cls(path=path, enabled=enabled)
        if not enabled or not path.is_file():
            return cache
        try:
            import msgpack

            if path.stat().st_size > MAX_CACHE_BYTES:
                return cache
            data = msgpack.unpackb(path.read_bytes(), raw=False, strict_map_key=True)
            if (
                isinstance(data, dict)
                and data.get("format") == CACHE_FORMAT
                and data.get("tool") == __version__
                and isinstance(data.get("stat"), dict)
                and isinstance(data.get("results"), dict)
            ):
                cache.stat = data["stat"]
                cache.results = data["results"]
        except Exception:  # a damaged cache is ignored, never fatal
            cache.stat, cache.results = {}, {}
        return cache

    def _known_sha(self, rel: str, path: Path) -> str | None:
        entry = self.stat.get(path_key(rel))
        if not isinstance(entry, list) or len(entry) != 3:
            return None
        try:
            st = os.stat(path)
        except OSError:
            return None
        if entry[0] == st.st_size and entry[1] == st.st_mtime_ns and isinstance(entry[2], str):
            return entry[2]
        return None

    def lookup(
        self, rel: str, path: Path, lang: str, post_id: str | None, notes_sig: str
    ) -> SourceOutcome | None:
        if not self.enabled:
            return None
        sha = self._known_sha(rel, path)
        if sha is None:
            return None
        key = result_key(sha, lang, post_id, notes_sig)
        entry = self.results.get(key)
        if not isinstance(entry, dict):
            return None
        from risutools.catalog.ingest import SourceOutcome

        try:
            outcome = SourceOutcome(
                path=rel,
                size=0,
                format=entry.get("format"),
                sha256=sha,
                post_id=post_id,
                documents=list(entry.get("documents") or []),
                warnings=list(entry.get("warnings") or []),
                error=entry.get("error"),
            )
        except (TypeError, ValueError):
            return None
        self.used.add(key)
        return outcome

    def store(
        self, rel: str, outcome: SourceOutcome, path: Path, lang: str, notes_sig: str
    ) -> None:
        """Remember ``outcome`` for the file at ``path`` (``rel``: its exact relative path)."""
        if not self.enabled or not outcome.sha256:
            return
        try:
            st = os.stat(path)
        except OSError:
            return
        self.stat[path_key(rel)] = [st.st_size, st.st_mtime_ns, outcome.sha256]
        key = result_key(outcome.sha256, lang, outcome.post_id, notes_sig)
        self.results[key] = {
            "format": outcome.format,
            "documents": outcome.documents,
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
        try:
            msgpack.packb(results, use_bin_type=True)
        except (ValueError, TypeError, OverflowError):  # e.g. a lone surrogate in a text
            results = {k: v for k, v in results.items() if _packable(v)}
        data = msgpack.packb(
            {
                "format": CACHE_FORMAT,
                "tool": __version__,
                "stat": dict(sorted(self.stat.items())),
                "results": results,
            },
            use_bin_type=True,
        )
        atomic_write(self.path, data)


def _packable(value: Any) -> bool:
    """Whether msgpack can store ``value`` (an entry that cannot is simply not cached)."""
    import msgpack

    try:
        msgpack.packb(value, use_bin_type=True)
    except (ValueError, TypeError, OverflowError):
        return False
    return True
