"""The incremental ingest cache (msgpack, one file, written atomically).

The file is a header ``[CACHE_FORMAT, tool version]``, then ``[3, sha256, bin]``: the
region holding every packed outcome (below) one after the other, and the SHA-256 of its
bytes (checked when the region is read: a region of other bytes is never unpacked), then a
stream of records, each a short msgpack array:

* ``[0, paths, sizes, mtimes_ns, ctimes_ns, sha256s]`` (columns of at most
  ``MAX_CACHE_ITEMS``): each source file's stat (a path that is not UTF-8, e.g. a CP949 name
  from a Korean zip, is keyed by ``"\\0"`` + the hex of its exact bytes: the key is exact
  and always storable).  A file whose size, modification time and change time are the
  ones recorded is not hashed again (hashing is the dominant cost of a run over gigabytes
  of assets), nor opened to tell its format.  The change time catches what size and
  modification time alone miss: other bytes of the same size given the old modification
  time (``cp -p``, ``rsync -t``, an archive that stamps every file alike), a file renamed
  over it (:data:`~risutools.catalog.cache_keys.SourceStat`: why not the inode).  The stat
  of a source changed less than ``RACY_NS`` before the run began is not recorded (a write
  in the same clock tick, after it was read, could leave its stat as it was): the next run
  reads it again.  ``--no-cache`` or deleting the cache forces a full re-hash.
* ``[1, result_keys, formats, warnings, errors, component ids, digests, facts digests,
  packed]`` (columns: each row ``result_key(sha256, ...)`` -> the outcome of those bytes),
  valid for this tool version, language, post id, notes and settings (all in the key).  The
  documents and their facts stay packed (msgpack) until something needs them: in the main
  file ``packed`` is ``[offset, length]`` in the region, which a run reads only when it
  needs a source's documents (a run with nothing changed never does), from the file it
  read at the start (the same device, inode, size, mtime and ctime; else those outcomes are
  misses); in a delta line, the packed bytes themselves;
  the digests are the sha256 of each document's text as the run wrote it (a JSON file,
  or a line of ``--ndjson``'s file: either names the document) and of its facts file's
  text.  A re-run after adding ten
  files reads ten files.  A file sniffed as not a Risu file has the digest
  :data:`~risutools.catalog.cache_keys.NOT_RISU` (which names the formats the sniff knew):
  while its stat is the one recorded it is neither opened nor sniffed again (a folder of
  images or other JSON beside the modules costs a stat a run); a verdict of a sniff that
  knew fewer formats is not trusted (the file is sniffed again).
* ``[2, names, sizes, mtimes_ns, ctimes_ns, inodes, digests, statuses, lines]`` (columns):
  each catalog file (``x.json`` or ``facts/x.json``) as the last run found it when it
  compared it with the text of that digest: the status (``unchanged`` or
  ``kept_reviewed``) and the line it gave (for ``kept_reviewed``, the history gate's
  reason for keeping it, the notice); ``components.ndjson`` (``--ndjson``) with the
  digest of every source's outcome (:func:`risutools.catalog.ingest_write.ndjson_key`)
  when a merge found every line it generated unchanged.  While the file's stat is the
  one recorded (a write by anyone changes its ctime) and the new text's digest is the
  same, the run gives the same answer without reading or rendering anything.  A file
  changed less than ``RACY_NS`` before it was read is not recorded (a write in the same
  clock tick could leave its stat as it was).

**The delta.**  A run that changed a few entries does not write the whole file again (8 MB
for 2,000 sources): it appends them to ``<cache>.delta`` beside it, one line a run, through
the one append path (:func:`risutools.fsio.append_line`: the folder's lock, ``O_APPEND``,
fsync).  A line is ``<sha256 of the rest> <binding> <base64 of msgpack records>``: the
records have the main file's kinds and checks, and later ones replace earlier ones with the
same key; the binding names the main file they were made against (format, tool version, its
size, mtime and inode as read).  A line whose digest does not match (an append cut short by
a crash, ended by the next append's newline), bytes after the last newline (one cut short
just now), or a line made against another main file (merged since) is not used (its
sources are looked at again) and the run merges.  The main file and the delta are merged
(the whole file written again, atomically, and the delta emptied) when the delta would grow
past ``1/DELTA_FRACTION`` of the main file (at least ``DELTA_FLOOR`` bytes), when more than
``1/WASTE_FRACTION`` of the entries on disk are no longer used (files gone, results nothing
refers to, entries replaced), and after anything doubtful (a cache not read, a torn line, an
outcome that did not fit).  Entries a run no longer uses are dropped at the merge.

A cache of another tool version is ignored silently; one that cannot be read (a symbolic
link, whatever it leads to, or not a regular file: never opened, and replaced; larger than
``MAX_CACHE_BYTES``, more than ``MAX_CACHE_ENTRIES`` entries, a record of another shape or
type, not msgpack) is ignored with one line in ``problem`` (the run rebuilds it). Bound: the
file is opened by :func:`risutools.safeio.open_fd` (a regular file of at most
``MAX_CACHE_BYTES``), its first ``HEAD_BYTES`` read for the header and where the region lies
(it must end inside the file), then the records after the region, decoded by msgpack's own
unpacker, one record at a time, with its limits: no map at all, no array longer than
``MAX_CACHE_ITEMS``, no ext type, no string or ``bin`` longer than the bytes read; each
record is checked (a few type checks, each ``[offset, length]`` inside the region) before it
is kept. A packed outcome is unpacked only when needed, within bounds
(:mod:`risutools.catalog.cache_packed`); one that does not fit is a cache miss (the source
is projected again). The delta is read the same way (at most ``MAX_DELTA_BYTES``; its
entries count towards ``MAX_CACHE_ENTRIES``); a line whose digest matches but whose base64
or records do not fit is ``cache-unreadable`` like the main file (the whole cache is ignored
and rebuilt).
"""

from __future__ import annotations

import binascii
import dataclasses
import hashlib
import os
import stat as stat_mod
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path
from typing import Any

from risutools import __version__
from risutools.catalog.cache_keys import (
    NOT_RISU,
    NOT_RISU_PREFIX,
    SourceStat,
    file_identity,
    in_columns,
    path_key,
    result_key,
    source_stat_of,
)
from risutools.catalog.cache_packed import read_region, region_of, unpack_outcome
from risutools.catalog.outcome import SourceOutcome
from risutools.errors import Code, RisuError
from risutools.fsio import append_line, atomic_write, display_path
from risutools.locking import write_lock
from risutools.safeio import is_plain_file, open_fd, read_at, read_regular

# 3: records read by msgpack's own unpacker (issue 23); 4: facts summaries with the
# reader's facts (issue 19); 5: the delta file (issue 23); 6: the packed outcomes in one
# region, read only when needed (issue 23); 7: a source's change time recorded; 8: the
# catalog's folders as swept (issue 23); 9: the region's SHA-256 (a damaged region is never
# unpacked: a flipped byte there became a document's text); 10: files that are not Risu files
# recorded by their stat (a re-run does not sniff them again)
CACHE_FORMAT = 10
MAX_CACHE_BYTES = 256 << 20  # a cache file larger than 256 MiB is not read (rebuilt)
DELTA_SUFFIX = ".delta"  # the delta file: the cache's name + this
# the delta is merged when it would grow past 1/16 of the main file (at least 64 KiB) ...
DELTA_FRACTION = 16
DELTA_FLOOR = 64 << 10
# ... or when more than 1/4 of the entries on disk are no longer used
WASTE_FRACTION = 4
# a delta larger than this is not read (the cache is rebuilt): past what a merge allows
MAX_DELTA_BYTES = MAX_CACHE_BYTES // DELTA_FRACTION
# at most this many entries (stats, results and catalog files: about four a source): ~1 GB
# of Python objects at worst
MAX_CACHE_ENTRIES = 6_000_000
# no array in a record longer than this (a source's documents, its warnings): with
# msgpack's nesting bound, what a record can hold before it is checked stays small
MAX_CACHE_ITEMS = 4096
RACY_NS = 1_000_000_000  # a file (source or catalog) changed this close to the run: not recorded
MEMO_STATUSES = ("unchanged", "kept_reviewed")
#: the status of a catalog folder's record ("<name>/"): swept, no temp file found in it
FOLDER_STATUS = "swept"
# the header and the head of the record of packed outcomes lie in the file's first bytes
HEAD_BYTES = 256

# a packed outcome: its bytes, or where they lie in the main file's region of packed
# outcomes: [offset, length]
Packed = bytes | list[int]
# (format, warnings, error, component ids, digests, facts digests, packed)
Entry = tuple[str | None, list[str], str | None, list[str], list[str], list[str], Packed]
# (size, mtime_ns, ctime_ns, inode, digest, status, text)
FileRecord = tuple[int, int, int, int, str, str, str]


class CachedOutcome(SourceOutcome):
    """A source's outcome from the cache: its documents and facts stay packed until
    something asks for them (:meth:`unpack`); the component ids are known without them.
    Made by :meth:`of`."""

    ids: list[str]
    packed: Packed | None
    blobs: Callable[[Packed], bytes | None]  # a packed outcome's bytes (the cache's)
    _docs: list[dict[str, Any]] | None
    _facts: list[dict[str, Any]] | None
    settled: bool  # whether every document and facts file was verified (none to unpack)

    @classmethod
    def of(cls, path: str, entry: Entry, sha: str, post_id: str | None,
           blobs: Callable[[Packed], bytes | None]) -> CachedOutcome:
        """The outcome of a cache entry (its fields set at once: a re-run makes one of these
        a source, and a dataclass's ``__init__`` costs more than the rest of the check);
        ``blobs``: what gives its packed documents' bytes."""
        fmt, warnings, error, ids, digests, fdigests, packed = entry
        out = cls.__new__(cls)
        out.__dict__ = {
            "path": path, "size": 0, "format": fmt, "sha256": sha, "post_id": post_id,
            "warnings": list(warnings), "error": error, "cached": False, "duplicate_of": None,
            "rendered": [], "staged": None, "digests": digests, "facts_digests": fdigests,
            "facts_texts": [], "verified": [], "facts_verified": [],
            "ids": ids, "packed": packed, "blobs": blobs, "_docs": None, "_facts": None,
            "settled": False}
        return out

    def unpack(self) -> bool:
        """Unpack the documents and facts (once); False when they do not fit (a damaged or
        forged cache: the caller projects the source again)."""
        if self.packed is None:
            return self._docs is not None
        packed = self.blobs(self.packed)
        self.packed = None
        value = unpack_outcome(packed, self.ids) if packed is not None else None
        if value is None:
            return False
        self._docs, self._facts = value
        return True

    @property
    def unpacked(self) -> bool:
        """Whether its documents were unpacked (or set)."""
        return self._docs is not None

    def component_ids(self) -> list[str]:
        return self.ids if self._docs is None else super().component_ids()

    @property
    def documents(self) -> list[dict[str, Any]]:
        if self._docs is None:
            self.unpack()
        return self._docs if self._docs is not None else []

    @documents.setter
    def documents(self, value: list[dict[str, Any]]) -> None:
        self._docs = value

    @property
    def facts(self) -> list[dict[str, Any]]:
        if self._facts is None:
            self.unpack()
        return self._facts if self._facts is not None else []

    @facts.setter
    def facts(self, value: list[dict[str, Any]]) -> None:
        self._facts = value


# (CachedOutcome.of sets every field of a SourceOutcome but documents and facts)
_OF_FIELDS = {"path", "size", "format", "sha256", "post_id", "warnings", "error", "cached",
              "duplicate_of", "rendered", "staged", "digests", "facts_digests", "facts_texts",
              "verified", "facts_verified"}
assert {f.name for f in dataclasses.fields(SourceOutcome)} - {"documents", "facts"} == _OF_FIELDS


@dataclass
class IngestCache:
    path: Path
    enabled: bool = True
    stat: dict[str, tuple[int, int, int, str]] = field(default_factory=dict)
    results: dict[str, Entry] = field(default_factory=dict)
    # the catalog's files as last compared (name relative to the catalog, "/" separators)
    files: dict[str, FileRecord] = field(default_factory=dict)
    used: set[str] = field(default_factory=set)
    files_used: set[str] = field(default_factory=set)
    main_bytes: int = 0  # the size of the main file as read (0: none of this version)
    dirty: bool = False  # whether save has anything new to write
    # whether save writes the whole file (a merge) rather than appending to the delta: no
    # main file of this version was read, or something in it or the delta is in doubt
    rewrite: bool = True
    # the entries this run added or changed (what an append writes), by table
    fresh: tuple[set[str], set[str], set[str]] = field(
        default_factory=lambda: (set(), set(), set()), repr=False)
    binding: bytes = b""  # what ties a delta line to the main file read (see the docstring)
    delta_bytes: int = 0  # the size of the delta as read
    on_disk: int = 0  # the entries read (main file and delta: replaced ones included)
    # where the main file's packed outcomes lie: (the file's identity as read, offset,
    # length, their SHA-256); None: none read, or they could not be read again
    region: tuple[tuple[int, ...], int, int, bytes] | None = None
    region_bytes: bytes | None = None  # those bytes, once read (when first needed)

    problem: str | None = None  # one line when the cache on disk could not be used
    #: when the run began (wall clock, ns): a source changed since ``RACY_NS`` before it is
    #: not recorded
    started_ns: int = field(default_factory=time.time_ns)

    @classmethod
    def load(cls, path: Path, enabled: bool = True) -> IngestCache:
        cache = cls(path=path, enabled=enabled)
        if not enabled or not os.path.lexists(path):
            return cache
        odd = next((p for p in (path, delta_path(path))
                    if os.path.lexists(p) and not is_plain_file(p)), None)
        if odd is not None:  # (a link is never followed: it may lead out of the catalog)
            cache.rewrite = cache.dirty = True
            cache.problem = (f"{display_path(odd)}: a symbolic link or not a regular file, "
                             "never read; ignored, rebuilt by this run")
            return cache
        try:
            seen = os.stat(path)
        except OSError:
            seen = None  # (open_fd says why in one line)
        try:
            st = _read_main(cache, path, seen)
            if cache.main_bytes:  # this version's main file, read whole
                cache.binding = _binding(st, cache.main_bytes)
                cache.rewrite = False
                _read_delta(cache, delta_path(path))
        except RisuError as exc:  # a damaged or hostile cache is rebuilt, never fatal
            cache.stat, cache.results, cache.files = {}, {}, {}
            cache.main_bytes, cache.on_disk, cache.rewrite = 0, 0, True
            cache.region = None
            cache.problem = f"{exc.one_line()}; ignored, rebuilt by this run"
        cache.dirty = cache.problem is not None or (cache.rewrite and cache.delta_bytes > 0)
        return cache

    def _known_sha(
        self, rel: str, path: str | os.PathLike[str], st: SourceStat | None = None
    ) -> str | None:
        entry = self.stat.get(path_key(rel))
        if entry is None:
            return None
        if st is None:
            st = source_stat_of(path)
            if st is None:
                return None
        if entry[:3] == st:
            return entry[3]
        return None

    def known_not_risu(self, rel: str, st: SourceStat) -> bool:
        """Whether the file ``rel`` was sniffed as not a Risu file at the stat ``st`` (as the
        walk just took it): it need not be opened again."""
        return self.enabled and self._known_sha(rel, rel, st) == NOT_RISU

    def store_not_risu(self, rel: str, st: SourceStat) -> None:
        """Remember that the file ``rel``, at the stat ``st`` (taken before it was sniffed),
        is not a Risu file; not when it changed less than ``RACY_NS`` before the run began
        (the next run sniffs it again)."""
        if not self.enabled:
            return
        pk = path_key(rel)
        if max(st[1], st[2]) >= self.started_ns - RACY_NS:
            self.stat.pop(pk, None)  # (another stat than any recorded: never a hit)
            return
        record = (*st, NOT_RISU)
        if self.stat.get(pk) != record:
            self.stat[pk] = record
            self.fresh[0].add(pk)
            self.dirty = True

    def known_format(self, rel: str, path: str | os.PathLike[str], lang: str,
                     post_id: str | None, notes_sig: str) -> str | None:
        """The format recorded with the cached outcome of the file at ``path`` when
        :meth:`lookup` would find that outcome (its stat is the one recorded), else None:
        such a file need not be opened to tell its format."""
        if not self.enabled:
            return None
        sha = self._known_sha(rel, path)
        entry = self.results.get(result_key(sha, lang, post_id, notes_sig)) if sha else None
        return entry[0] if entry is not None else None

    def lookup(
        self, rel: str, path: str | os.PathLike[str], lang: str, post_id: str | None,
        notes_sig: str, st: SourceStat | None = None,
    ) -> CachedOutcome | None:
        """The outcome cached for the file at ``path`` when its stat (:func:`source_stat`;
        ``st``: as the caller just took it; else taken here) is the one recorded and its
        bytes were projected with these settings; None otherwise."""
        if not self.enabled:
            return None
        sha = self._known_sha(rel, path, st)
        if not sha or sha.startswith(NOT_RISU_PREFIX):  # (none recorded, another stat, or not
            return None  # a Risu file, by this sniff or an older one: "" or NOT_RISU)
        key = result_key(sha, lang, post_id, notes_sig)
        entry = self.results.get(key)
        if entry is None:
            return None
        self.used.add(key)
        return CachedOutcome.of(rel, entry, sha, post_id, self.packed_bytes)

    def packed_bytes(self, packed: Packed) -> bytes | None:
        """The bytes of a packed outcome: held, or read from the main file's region (all of
        it, the first time one is needed, from the file read at the start, else None)."""
        if type(packed) is bytes:
            return packed
        region = self._region()
        if region is None:
            return None
        start, length = packed
        return region[start:start + length]

    def _region(self) -> bytes | None:
        if self.region_bytes is None and self.region is not None:
            try:
                self.region_bytes = read_region(self.path, *self.region)
            except RisuError as exc:  # other bytes than were written: never unpacked
                self.problem = self.problem or f"{exc.one_line()}; those sources projected again"
            if self.region_bytes is None:
                self.region = None  # (replaced since, or damaged: what it held is forgotten)
                self.dirty = self.rewrite = True
        return self.region_bytes

    def forget(self, outcome: CachedOutcome, lang: str, notes_sig: str) -> None:
        """An outcome whose packed documents did not fit: not kept."""
        if outcome.sha256:
            key = result_key(outcome.sha256, lang, outcome.post_id, notes_sig)
            self.results.pop(key, None)
            self.used.discard(key)
            self.dirty = self.rewrite = True

    def store(
        self, rel: str, outcome: SourceOutcome, path: str | os.PathLike[str], lang: str,
        notes_sig: str, st: SourceStat | None = None,
    ) -> None:
        """Remember ``outcome`` for the file at ``path`` (``rel``: its exact relative path;
        ``st``: its stat as taken before it was read, else taken here).  An outcome msgpack
        cannot store (a lone surrogate in a text) or past the cache's bounds is simply not
        cached; the stat of a file changed less than ``RACY_NS`` before the run began is
        not recorded (the next run reads the file again)."""
        if not self.enabled or not outcome.sha256:
            return
        if st is None:
            st = source_stat_of(path)
            if st is None:
                return
        ids = outcome.component_ids()
        if len(ids) > MAX_CACHE_ITEMS or len(outcome.warnings) > MAX_CACHE_ITEMS:
            return
        import msgpack

        try:
            packed = msgpack.packb([outcome.documents, outcome.facts], use_bin_type=True)
            msgpack.packb([outcome.format, outcome.warnings, outcome.error, ids],
                          use_bin_type=True)
        except (ValueError, TypeError, OverflowError):
            return
        pk = path_key(rel)
        if max(st[1], st[2]) < self.started_ns - RACY_NS:
            self.stat[pk] = (*st, outcome.sha256)
        else:  # (changed as the run began: looked at again next time)
            self.stat.pop(pk, None)
        key = result_key(outcome.sha256, lang, outcome.post_id, notes_sig)
        self.results[key] = (outcome.format, outcome.warnings, outcome.error, ids,
                             _digests(outcome.digests, ids), _digests(outcome.facts_digests, ids),
                             packed)
        self.used.add(key)
        self.fresh[0].add(pk)
        self.fresh[1].add(key)
        self.dirty = True

    def verify(self, name: str, path: str, digest: str) -> tuple[str, str] | None:
        """What the last run found comparing the catalog file ``name`` (at ``path``) with
        the text of ``digest``, when the file's stat is still the one recorded: (status,
        line); else None (the file is read and compared)."""
        rec = self.files.get(name)
        if rec is None or rec[4] != digest:
            return None
        try:
            st = os.lstat(path)
        except OSError:
            return None
        if (st.st_ino == rec[3] and st.st_ctime_ns == rec[2] and st.st_mtime_ns == rec[1]
                and st.st_size == rec[0] and _S_ISREG(st.st_mode)):
            self.files_used.add(name)
            return rec[5], rec[6]
        return None

    def remember(self, name: str, st: os.stat_result, digest: str, status: str, line: str,
                 before_ns: int) -> None:
        """Record what comparing the catalog file ``name`` (``st``: its stat taken before
        it was read) with the text of ``digest`` gave, unless it changed less than
        ``RACY_NS`` before ``before_ns`` (when the comparing began)."""
        if (not self.enabled or status not in MEMO_STATUSES or not stat_mod.S_ISREG(st.st_mode)
                or max(st.st_mtime_ns, st.st_ctime_ns) >= before_ns - RACY_NS):
            return
        rec = (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, digest, status, line)
        self.files_used.add(name)
        if self.files.get(name) != rec:
            self.files[name] = rec
            self.fresh[2].add(name)
            self.dirty = True

    def folder_swept(self, name: str, st: os.stat_result) -> bool:
        """Whether the catalog folder ``name`` (``<path>/``, ``st`` its stat now) is as it
        was when a sweep found no temp file in it (:meth:`remember_folder`)."""
        rec = self.files.get(name)
        if (not self.enabled or rec is None or rec[5] != FOLDER_STATUS
                or rec[:4] != (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)):
            return False
        self.files_used.add(name)
        return True

    def remember_folder(self, name: str, st: os.stat_result) -> None:
        """Record the stat of the catalog folder ``name``, unchanged since a sweep of this
        run found no temp file in it and since ``RACY_NS`` before that sweep."""
        if not self.enabled:
            return
        rec = (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, "", FOLDER_STATUS, "")
        self.files_used.add(name)
        if self.files.get(name) != rec:
            self.files[name] = rec
            self.fresh[2].add(name)
            self.dirty = True

    def prune(self, seen: set[str]) -> None:
        """Forget files that are gone and results nothing refers to any more; when more than
        ``1/WASTE_FRACTION`` of the entries on disk (after this run's append) would be such
        (or replaced), the next save merges."""
        keys = set(map(path_key, seen))
        for table, kept_keys in ((self.stat, keys), (self.results, self.used),
                                 (self.files, self.files_used)):
            for gone in table.keys() - kept_keys:  # (the few it loses, in place: order kept)
                del table[gone]
        kept = len(self.stat) + len(self.results) + len(self.files)
        waste = self.on_disk + sum(map(len, self.fresh)) - kept
        if waste * WASTE_FRACTION > kept and self.on_disk:
            self.dirty = self.rewrite = True

    def save(self) -> None:
        """Write what this run changed: appended to the delta, or the whole file (a merge,
        see the module docstring); nothing when nothing changed."""
        if not self.enabled or not self.dirty:
            return
        if not self.rewrite:
            line = self._delta_line()
            room = max(DELTA_FLOOR, self.main_bytes // DELTA_FRACTION)
            if line is None or self.delta_bytes + len(line) + 1 <= room:
                if line is not None:
                    append_line(delta_path(self.path), line, torn_tail="newline")
                    self.delta_bytes += len(line) + 1
                self._saved()
                return
        import msgpack

        for p in (self.path, delta_path(self.path)):  # (a link or a FIFO in the cache's own
            if os.path.lexists(p) and not is_plain_file(p):  # folder: the file in its place)
                os.unlink(p)
        pack = msgpack.Packer(use_bin_type=True).pack
        blobs, results = self._placed()
        parts = [pack([CACHE_FORMAT, __version__]),
                 pack([3, hashlib.sha256(blobs).digest(), blobs])]
        parts += [pack([0, *columns]) for columns in in_columns(self.stat, MAX_CACHE_ITEMS)]
        parts += [pack([1, *columns]) for columns in in_columns(results, MAX_CACHE_ITEMS)]
        parts += [pack([2, *columns]) for columns in in_columns(self.files, MAX_CACHE_ITEMS)]
        atomic_write(self.path, b"".join(parts))
        _ignored_by_git(self.path.parent)
        delta = delta_path(self.path)
        if os.path.lexists(delta):  # (its lines were made against the file just replaced)
            atomic_write(delta, b"")
        self.rewrite = True  # (a later save: no binding to the file just written)
        self._saved()

    def _placed(self) -> tuple[bytes, dict[str, Entry]]:
        """The packed outcomes in one region, and the results with where theirs lie in it
        (one whose bytes cannot be read again is dropped)."""
        blobs: list[bytes] = []
        results: dict[str, Entry] = {}
        at = 0
        for key in sorted(self.results):
            entry = self.results[key]
            packed = self.packed_bytes(entry[6])
            if packed is not None:
                results[key] = (*entry[:6], [at, len(packed)])
                blobs.append(packed)
                at += len(packed)
        return b"".join(blobs), results

    def _saved(self) -> None:
        self.dirty = False
        for keys in self.fresh:
            keys.clear()

    def merge(self) -> None:
        """Write the whole file now (the delta emptied), whatever changed."""
        self.dirty = self.rewrite = True
        self.save()

    def _delta_line(self) -> bytes | None:
        """The line that appends this run's entries to the delta (None: there are none)."""
        import msgpack

        pack = msgpack.Packer(use_bin_type=True).pack
        stats, results, files = self.fresh
        parts = [pack([0, *columns]) for columns in in_columns(
            {k: self.stat[k] for k in stats if k in self.stat}, MAX_CACHE_ITEMS)]
        held = {k: (*self.results[k][:6], self.packed_bytes(self.results[k][6]))
                for k in results if k in self.results}
        parts += [pack([1, *columns]) for columns in in_columns(
            {k: v for k, v in held.items() if v[6] is not None}, MAX_CACHE_ITEMS)]
        parts += [pack([2, *columns]) for columns in in_columns(
            {k: self.files[k] for k in files if k in self.files}, MAX_CACHE_ITEMS)]
        if not parts:
            return None
        body = self.binding + b" " + binascii.b2a_base64(b"".join(parts), newline=False)
        return hashlib.sha256(body).hexdigest().encode("ascii") + b" " + body


#: the cache folder's .gitignore (when missing): a catalog in git never commits the cache
GITIGNORE = b"# written by risutools: the ingest cache is this machine's, never committed\n*\n"


def _ignored_by_git(folder: Path) -> None:
    """A ``.gitignore`` ignoring the cache's folder, unless one is there (kept as it is)."""
    if not os.path.lexists(folder / ".gitignore"):
        atomic_write(folder / ".gitignore", GITIGNORE)


def delta_path(path: Path) -> Path:
    """The delta file beside the cache file ``path``."""
    return path.with_name(path.name + DELTA_SUFFIX)


def _binding(st: os.stat_result, size: int) -> bytes:
    """What ties a delta line to the main file read (``st``: its stat; ``size``: the bytes
    read): the cache format, the tool version, its size, mtime and inode."""
    return f"{CACHE_FORMAT}:{__version__}:{size}:{st.st_mtime_ns}:{st.st_ino}".encode()


def _read_delta(cache: IngestCache, path: Path) -> None:
    """Add the delta's entries to ``cache`` (its lines in order; see the module docstring);
    a line not to use makes the next save merge.  Raises ``cache-unreadable`` (and the file
    refusals of ``safeio``)."""
    if not os.path.lexists(path):
        return
    data = read_regular(path, MAX_DELTA_BYTES)
    if not data.endswith(b"\n") and data:
        data = _settled_delta(path, data)
    cache.delta_bytes = len(data)
    lines = data.split(b"\n")
    if lines.pop():  # bytes after the last newline: an append cut short by a crash
        cache.rewrite = True
    prefix = cache.binding + b" "
    shown = display_path(path)
    for number, line in enumerate(lines, 1):
        digest, _, body = line.partition(b" ")
        if (not body.startswith(prefix)
                or hashlib.sha256(body).hexdigest().encode("ascii") != digest):
            cache.rewrite = True  # torn by a crash, or made against another main file
            continue
        try:
            payload = binascii.a2b_base64(body[len(prefix):])
        except binascii.Error as exc:
            raise RisuError(Code.CACHE_UNREADABLE, f"line {number}: not base64: {exc}",
                            path=shown) from None
        _decode_records(cache, payload, shown)


def _settled_delta(path: Path, data: bytes) -> bytes:
    """The delta read again under the folder's write lock, which every append holds
    (:func:`~risutools.fsio.append_line`): bytes after its last newline were then an append
    of another run still being written, not a crash's, when they are gone or ended there.
    Where the lock cannot be taken (a read-only folder) the first reading stands."""
    try:
        with write_lock(path):
            return read_regular(path, MAX_DELTA_BYTES)
    except (OSError, RisuError):
        return data


def _digests(values: list[str], ids: list[str]) -> list[str]:
    return list(values) if len(values) == len(ids) else []


def _read_main(cache: IngestCache, path: Path, seen: os.stat_result | None
               ) -> os.stat_result:
    """Fill ``cache`` from the main file, bounded while it is decoded (see the module
    docstring), all but its packed outcomes (where they lie is kept: ``cache.region``);
    the status of the file read.  Raises ``cache-unreadable`` and the refusals of
    ``safeio``."""
    shown = display_path(path)
    fd, st = open_fd(path, MAX_CACHE_BYTES, seen=seen)
    try:
        size = st.st_size
        head = read_at(fd, 0, min(size, HEAD_BYTES), path)
        if head[:1] in _MAP_BYTES:
            return st  # an earlier format's cache (one map): ignored silently, rebuilt
        region = region_of(head, shown, [CACHE_FORMAT, __version__])
        if region is None:
            return st  # another format or tool version: ignored silently, rebuilt
        start, length, digest = region
        if start + length > size:
            raise RisuError(Code.CACHE_UNREADABLE, f"not a valid cache: truncated (its packed "
                            f"outcomes end at byte {start + length} of {size})", path=shown)
        records = read_at(fd, start + length, size - start - length, path)
    finally:
        os.close(fd)
    _decode_records(cache, records, shown, region=length)
    cache.main_bytes = size
    cache.region = (file_identity(st), start, length, digest)
    return st


def _unpacker(n: int) -> Any:
    """msgpack's unpacker with the cache's limits, for ``n`` bytes."""
    import msgpack

    return msgpack.Unpacker(None, raw=False, strict_map_key=True, max_buffer_size=max(n, 1),
                            max_str_len=n, max_bin_len=n, max_array_len=MAX_CACHE_ITEMS,
                            max_map_len=0, max_ext_len=0)


def _decode_records(cache: IngestCache, data: bytes, shown: str, *,
                    region: int | None = None) -> None:
    """Add the records in ``data`` to ``cache``: the main file's, after its region of packed
    outcomes (``region``: its length; a result's packed outcome may lie there), or a delta
    line's payload (None: each packed outcome held).  Raises ``cache-unreadable``."""
    n = len(data)
    unpacker = _unpacker(n)
    unpacker.feed(data)
    first = 1 if region is None else 2  # (the records' numbers in the file)
    try:
        for count, rec in enumerate(unpacker, first):
            got = _take(cache, rec, region)
            if not got:
                raise ValueError(f"record {count} is not of the expected shape")
            cache.on_disk += got
            if cache.on_disk > MAX_CACHE_ENTRIES:
                raise RisuError(Code.CACHE_UNREADABLE,
                                f"holds more than {MAX_CACHE_ENTRIES} entries", path=shown)
        if unpacker.tell() != n:
            raise ValueError(f"truncated at byte {unpacker.tell()}")
    except RisuError:
        raise
    except Exception as exc:  # msgpack raises many types (ExtraData, ValueError, ...)
        raise RisuError(Code.CACHE_UNREADABLE, f"not a valid cache: {exc}", path=shown) from None


_S_ISREG = stat_mod.S_ISREG
_MAP_BYTES = {bytes([b]) for b in (*range(0x80, 0x90), 0xDE, 0xDF)}


_STR = {str}


def _column(values: Any, kind: set[type], size: int) -> bool:
    return type(values) is list and len(values) == size and set(map(type, values)) <= kind


def _take(cache: IngestCache, rec: Any, region: int | None) -> int:
    """Keep one record when it has its kind's shape and types: the number of entries it
    held (0: it does not fit).  ``region``: as in :func:`_decode_records`."""
    if type(rec) is not list or not rec:
        return 0
    if rec[0] == 1:
        return _take_results(cache, rec, region)
    return _take_columns(cache, rec)


def _lists_of_strs(column: list[Any]) -> bool:
    return set(map(type, column)) <= _LIST and set(map(type, chain.from_iterable(column))) <= _STR


def _take_results(cache: IngestCache, rec: list[Any], region: int | None) -> int:
    """A record of results (columns): each field's type checked column by column, a row's
    digests either none or one a component, a packed outcome held or (in the main file)
    ``[offset, length]`` inside its region of ``region`` bytes."""
    if len(rec) != 9:
        return 0
    _, keys, fmts, warnings, errors, ids, digests, fdigests, packed = rec
    if type(keys) is not list or not keys:
        return 0
    n = len(keys)
    if not (all(type(col) is list and len(col) == n for col in rec[2:])
            and set(map(type, keys)) <= _STR and set(map(type, fmts)) <= _OPT_STR
            and set(map(type, errors)) <= _OPT_STR and _lists_of_strs(warnings)
            and _lists_of_strs(ids) and _lists_of_strs(digests) and _lists_of_strs(fdigests)
            and _packed_fit(packed, region)):
        return 0
    counts = list(map(len, ids))
    for col in (digests, fdigests):
        if any(k and k != c for k, c in zip(map(len, col), counts, strict=True)):
            return 0
    cache.results.update(zip(keys, zip(fmts, warnings, errors, ids, digests, fdigests, packed,
                                       strict=True), strict=True))
    return n


def _packed_fit(packed: list[Any], region: int | None) -> bool:
    """Each packed outcome held (``bytes``), or ``[offset, length]`` inside the region of
    ``region`` bytes (None: there is none)."""
    kinds = set(map(type, packed))
    if kinds <= _BYTES:
        return True
    if region is None or not kinds <= _PACKED:
        return False
    spans = [p for p in packed if type(p) is list]
    numbers = list(chain.from_iterable(spans))
    return (set(map(len, spans)) == {2} and set(map(type, numbers)) <= _INT
            and min(numbers) >= 0 and max(map(sum, spans)) <= region)


def _take_columns(cache: IngestCache, rec: list[Any]) -> int:
    kind, size = rec[0], len(rec)
    types = _STAT_COLUMNS if kind == 0 else _FILE_COLUMNS if kind == 2 else None
    keys = rec[1] if size > 1 else None
    if types is None or size != len(types) + 2 or type(keys) is not list or not keys:
        return 0
    n = len(keys)
    if not all(_column(col, t, n) for col, t in zip(rec[1:], (_STR, *types), strict=True)):
        return 0
    if kind == 0:
        cache.stat.update(zip(keys, zip(*rec[2:], strict=True), strict=True))
    elif set(rec[7]) <= _MEMO:
        cache.files.update(zip(keys, zip(*rec[2:], strict=True), strict=True))
    else:
        return 0
    return n


_INT = {int}
_LIST = {list}
_BYTES = {bytes}
_PACKED = {bytes, list}
_OPT_STR = {str, type(None)}
_MEMO = {*MEMO_STATUSES, FOLDER_STATUS}
# the fields' types of a record of source stats (kind 0: size, mtime_ns, ctime_ns, sha256)
# and of
# catalog files (kind 2: size, mtime_ns, ctime_ns, inode, digest, status, line), after
# the column of keys
_STAT_COLUMNS = (_INT, _INT, _INT, _STR)
_FILE_COLUMNS = (_INT, _INT, _INT, _INT, _STR, _STR, _STR)
