"""Writing the catalog at the end of an ingest run: every generated document in component id
order, each atomic and compare-and-swap (from its staged temp file when there is one).  Only
a document that reads as ``review_status: candidate`` is replaced; a reviewed one, or one that
cannot be read, is kept and reported.  ``--ndjson`` merges into ``components.ndjson``
(:mod:`risutools.catalog.ndjson_merge`)."""

from __future__ import annotations

import hashlib
import json
import os
import stat
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from risutools.catalog.cache import IngestCache
from risutools.catalog.carry import STALE, carry
from risutools.catalog.catalog import Catalog
from risutools.catalog.evidence import record_reprojection
from risutools.catalog.ndjson_merge import NDJSON_NAME, Line, write_ndjson
from risutools.catalog.outcome import ANOTHER_CONTAINER, IngestResult, SourceOutcome
from risutools.catalog.render import render, review_status, safe_name, under
from risutools.catalog.staging import Staged, Stager
from risutools.errors import RisuError, WriteConflict
from risutools.fsio import (
    StagedWrite,
    atomic_write,
    commit_staged,
    discard_staged,
    display_path,
    fsync_directory,
)
from risutools.jsonlines import same_json
from risutools.projection.project import without_container
from risutools.projection.text import TYPE_WORDS
from risutools.safeio import FileRefused, read_regular
from risutools.targets import os_error_line
from risutools.values import MAX_DOCUMENT_BYTES, parse_value_bytes

WRITE_THREADS = 8  # fsync-bound: threads overlap the waits


def _generated(result: IngestResult) -> dict[str, tuple[SourceOutcome, int]]:
    """component_id -> (its source, the document's index there); an id produced twice is a
    collision (the documents are compared only then)."""

    docs: dict[str, tuple[SourceOutcome, int]] = {}
    for s in result.sources:  # (said again below while it holds: never twice, never stale)
        if any(w.endswith(ANOTHER_CONTAINER) for w in s.warnings):
            s.warnings = [w for w in s.warnings if not w.endswith(ANOTHER_CONTAINER)]
    for s in result.sources:
        if s.status != "ok":
            continue
        for k, cid in enumerate(s.component_ids()):
            if cid in docs:
                first, j = docs[cid]
                mine, theirs = s.documents[k], first.documents[j]
                if theirs != mine and s.format != first.format and (
                        without_container(theirs) == without_container(mine)):
                    # one module in two containers (a JSON export and a .risum): one
                    # component, the first source kept (two files of one format are two
                    # modules, whatever their documents say: an id collision)
                    kind = TYPE_WORDS["en"].get(str(mine.get("component_type")), "component")
                    s.warnings.append(f"{cid}: the same {kind} as in {first.path} "
                                      + ANOTHER_CONTAINER)
                elif theirs != mine:
                    result.collisions.append(
                        f"{s.path}: id-collision: {cid} is also produced by {first.path}; "
                        "kept the first (give one of them a post id or a notes slug)"
                    )
                continue
            docs[cid] = (s, k)
    return docs


def _text(source: SourceOutcome, k: int, ndjson: bool) -> str | None:
    """Document ``k``'s text: as the worker rendered it, None when the worker wrote it into
    a temp file, rendered here for a cached source."""
    if source.staged is not None and isinstance(source.staged[k], str):
        return None
    if len(source.rendered) == len(source.documents):
        return source.rendered[k]
    return render(source.documents[k], ndjson)


def write_catalog(
    result: IngestResult, out: Path, ndjson: bool, stager: Stager | None = None,
    memo: IngestCache | None = None, ndjson_memo: tuple[str | None, bool] = (None, False),
) -> None:
    """Write every generated document.  ``memo``: the cache, which tells what comparing a
    document the cache verified gave (:attr:`SourceOutcome.verified`: neither rendered nor
    read) and records what comparing the others gave.  ``ndjson_memo``: with ``ndjson``,
    the digest of every source's recorded outcome (:func:`ndjson_key`, or None) and
    whether :func:`ndjson_settled` found the file as that digest leaves it."""
    docs = _generated(result)
    if ndjson:
        _write_ndjson(result, out / NDJSON_NAME, docs, memo, ndjson_memo)
        return

    if stager is not None:
        try:
            stager.flush()
        except OSError as exc:  # the staged files are removed on the way out
            raise os_error_line(exc, out) from None
    before = time.time_ns()
    order = sorted(docs)
    known, jobs = _jobs(docs, order, under(os.fspath(out)), stager)
    jobs = _not_elsewhere(known, out, jobs)
    if all(j[3] is not None for j in jobs):
        outcomes = [_write_one(*job) for job in jobs]  # renames only: no waits to overlap
    else:
        with ThreadPoolExecutor(WRITE_THREADS) as pool:
            outcomes = list(pool.map(lambda job: _write_one(*job), jobs))
    if jobs:
        fsync_directory(out)
    _raise_failed(outcomes, jobs)
    for (status, line, st), job in zip(outcomes, jobs, strict=True):
        assert isinstance(line, str)
        if status == "kept_reviewed":
            # the history gate's answer for a reviewed document (a pure function of its
            # bytes and of the generated document): remembered when it kept it as it is
            status, line = _reviewed(result, job[0], job[1], job[4])
        known[job[1]] = (status, line)
        s, k = docs[job[1]]
        if memo is not None and st is not None and len(s.digests) > k:
            memo.remember(job[0].name, st, s.digests[k], status, line, before)
    lists = {"written": result.written, "unchanged": result.unchanged,
             "kept_reviewed": result.kept_reviewed, "kept_unreadable": result.kept_unreadable,
             "conflict": result.collisions}
    for cid in order:  # (in id order, whatever order the threads finished in)
        status, text = known[cid]
        if status == "kept_reviewed":  # (text: why it was kept, '' when nothing changed)
            result.kept_reviewed.append(cid)
            if text:
                result.notices.append(f"{cid}: kept as reviewed: {text}")
                result.facts_kept.add(cid)
            continue
        lists[status].append(_evidence(result, cid, text) if "\0" in text else text)


def ndjson_settled(memo: IngestCache | None, target: Path, key: str | None) -> bool:
    """Whether ``components.ndjson`` is as a run that found every line it generated there
    unchanged left it, with outcomes of the digest ``key`` (the cache's record of the
    file's stat): then it holds every line again, and nothing is rendered or read."""
    if memo is None or key is None:
        return False
    return memo.verify(NDJSON_NAME, os.fspath(target), key) == ("unchanged", "")


def _write_ndjson(result: IngestResult, target: Path,
                  docs: dict[str, tuple[SourceOutcome, int]], memo: IngestCache | None,
                  known: tuple[str | None, bool]) -> None:
    """The NDJSON merge, or nothing when it is settled (``known``: the outcomes' digest,
    and :func:`ndjson_settled`): every line unchanged.  A merge that finds every line
    unchanged (nothing written, kept or unreadable) records the file's stat, taken before
    it was read, with that digest."""
    key, settled = known
    if settled:
        result.unchanged.extend(sorted(docs))
        return
    before = time.time_ns()
    try:
        st: os.stat_result | None = os.lstat(target)
    except OSError:
        st = None
    written, kept, unreadable, unchanged = _tally(result)
    write_ndjson(result, target, {k: _line(s, i) for k, (s, i) in docs.items()})
    if (memo is not None and key is not None and st is not None
            and _tally(result) == (written, kept, unreadable, unchanged + len(docs))):
        memo.remember(NDJSON_NAME, st, key, "unchanged", "", before)


def _tally(result: IngestResult) -> tuple[int, int, int, int]:
    """How many documents were written, kept as reviewed, kept unreadable, unchanged."""
    return (len(result.written), len(result.kept_reviewed), len(result.kept_unreadable),
            len(result.unchanged))


def _line(source: SourceOutcome, k: int) -> Line:
    """Document ``k``'s NDJSON line: its digest (when the source has one a document: what
    the run rendered, or what the cache recorded) and what renders its text (a cached
    source's documents unpacked then, when they were not: None when they cannot be)."""
    def text() -> str | None:
        return _text(source, k, True) if len(source.documents) > k else None

    return (source.digests[k] if len(source.digests) > k else None), text


def ndjson_key(sources: list[SourceOutcome]) -> str | None:
    """The digest of what an NDJSON merge writes (each source by its path, error, component
    ids and their documents' digests), when every source is known by those (cached, with a
    digest a document); None otherwise (no source, or one projected by this run: merged)."""
    h = hashlib.sha256()
    for s in sources:
        ids = s.component_ids()
        if not s.cached or len(s.digests) != len(ids):
            return None
        h.update("\0".join([s.path, s.error or "", *ids, *s.digests, "\n"]).encode(
            "utf-8", "surrogatepass"))
    return h.hexdigest() if sources else None


def _raise_failed(outcomes: list[tuple[str, str | OSError, os.stat_result | None]],
                  jobs: list[Job]) -> None:
    """A write that could not be done (no space, no permission): one line, exit 2, naming
    the first document not written (a write's error often names no file: ENOSPC)."""
    failed = [(exc, job[0]) for (status, exc, _), job in zip(outcomes, jobs, strict=True)
              if status == "oserror" and isinstance(exc, OSError)]
    if failed:
        more = f" (and {len(failed) - 1} more)" if len(failed) > 1 else ""
        err = os_error_line(*failed[0])
        err.why += more
        raise err


Job = tuple[Path, str, "bytes | None", "Future[StagedWrite | None] | Staged | None",
            "dict[str, Any]"]


def _jobs(docs: dict[str, tuple[SourceOutcome, int]], order: list[str], folder: str,
          stager: Stager | None) -> tuple[dict[str, tuple[str, str]], list[Job]]:
    """(what the cache verified: id -> (status, line); the writes to do, in id order)."""
    known: dict[str, tuple[str, str]] = {}
    jobs: list[Job] = []
    for cid in order:
        s, k = docs[cid]
        done = s.verified[k] if len(s.verified) == len(s.digests) > k else None
        if done is not None:
            known[cid] = done
            continue
        jobs.append((Path(folder + safe_name(cid) + ".json"), cid, _data(_text(s, k, False)),
                     stager.take(s.path, k) if stager is not None else None, s.documents[k]))
    return known, jobs


def _not_elsewhere(known: dict[str, tuple[str, str]], out: Path, jobs: list[Job]
                   ) -> list[Job]:
    """The writes whose component has no document elsewhere in the catalog (another folder,
    a YAML file, ``components.ndjson``): a document ``CATALOG/<id>.json`` would be a second
    one of that id (MC104; every lifecycle command then refuses the id as ambiguous), so it
    is not written and the run says so as an id collision (exit 1).  The catalog is read
    only when a write would make a new file (a run that changes files in place reads none;
    which are new is one listing of the folder, no look at each target)."""
    if not jobs:
        return jobs
    try:
        there = set(os.listdir(out))
    except OSError:  # (the folder is made by the writes: every target is new)
        there = set()
    new = [j for j in jobs if j[0].name not in there]
    if not new:
        return jobs
    try:
        entries = Catalog.open(out).entries()
    except RisuError:  # (a catalog that cannot be read as one: each file judged as before)
        return jobs
    where: dict[str, str] = {}
    for e in entries:
        where.setdefault(e.component_id, e.where())
    elsewhere = {j[1] for j in new if j[1] in where}
    for cid in elsewhere:  # (said in id order with the others: a collision, exit 1)
        known[cid] = ("conflict", f"{where[cid]}: id-collision: {cid} has its document "
                      f"there; not written again as {safe_name(cid)}.json (move it back, or "
                      "remove one)")
    return [j for j in jobs if j[1] not in elsewhere]


def _reviewed(result: IngestResult, target: Path, cid: str, doc: dict[str, Any] | None
              ) -> tuple[str, str]:
    """A reviewed document: its re-projection (curator notes applied) recorded as logged
    evidence when the history gate accepts it (:func:`evidence.record_reprojection`, under
    the catalog lock, one at a time), else kept as it is: ("kept_reviewed", why it was
    kept, '' when nothing changed).  Only what the document's bytes and ``doc`` decide:
    the same two give the same answer (which the cache remembers while the file's stat
    stays)."""
    if doc is None:
        return "kept_reviewed", ""
    try:
        done, line = record_reprojection(target, doc)
    except WriteConflict as exc:
        return "conflict", exc.one_line()
    if done:
        result.evidence_logged.append(line)
        return "written", target.name
    return "kept_reviewed", line


def _evidence(result: IngestResult, cid: str, text: str) -> str:
    """Count the replay evidence a write carried over (``name\0kept|stale\0reason``);
    returns the name."""
    if "\0" not in text:
        return text
    name, how, why = text.split("\0")
    (result.evidence_stale if how == STALE else result.evidence_kept).append(
        f"{cid}: {why}" if why else cid)
    return name


def _carried(existing: Any, doc: dict[str, Any] | None) -> tuple[bytes | None, str]:
    """The candidate's new bytes with its replay evidence carried over, and the suffix its
    outcome carries (None, '' when there is none to carry)."""
    carried, how, why = carry(existing, doc) if doc is not None else (None, "", "")
    if carried is None:
        return None, ""
    return render(carried, False).encode("utf-8"), f"\0{how}\0{why}"


def _discard(staged: StagedWrite | None) -> StagedWrite | None:
    """Remove a staged file not to be used; the caller's reference becomes None."""
    if staged is not None:
        discard_staged(staged)
    return None


def _data(text: str | None) -> bytes | None:
    return text.encode("utf-8") if text is not None else None


def _current(target: Path, st: os.stat_result, cid: str) -> bytes | str:
    """The bytes of the document file ``st`` found at ``target`` (read as that file: no
    link followed, no wait on a FIFO put there since, at most ``MAX_DOCUMENT_BYTES``), or
    the line saying why it is kept as it is."""
    if not stat.S_ISREG(st.st_mode):
        what = "a symbolic link" if stat.S_ISLNK(st.st_mode) else "not a regular file"
        return (f"{display_path(target)}: unreadable-document: {what}; left as it is, {cid} "
                "not written")
    try:
        return read_regular(target, MAX_DOCUMENT_BYTES, found=(st.st_dev, st.st_ino))
    except FileRefused as exc:
        return f"{exc.one_line()}; left as it is, {cid} not written"


def _same_content(existing: Any, data: bytes | None, doc: dict[str, Any] | None) -> bool:
    """Whether the file holds the very document ingest would write, spelled otherwise (the
    user re-indented it, saved it with CRLF or a byte-order mark, escaped its text): then
    it is left as it is.  ``data``: the bytes ingest would write (None: ``doc`` is what
    the staged file holds)."""
    new = json.loads(data) if data is not None else doc  # (ingest's own text)
    return new is not None and same_json(existing, new)


def _write_one(
    target: Path, cid: str, data: bytes | None,
    pending: Future[StagedWrite | None] | Staged | None = None,
    doc: dict[str, Any] | None = None,
) -> tuple[str, str | OSError, os.stat_result | None]:
    """Write one document file (from its staged temp file when there is one; ``data`` is
    None only then); returns (status, name or message, or the OSError; the stat the file
    had when it was read, None when it was not).  A candidate's replay evidence is carried
    into ``doc`` (:mod:`risutools.catalog.carry`; the name ends ``\0kept|stale\0reason``)."""
    staged: StagedWrite | None = None
    try:
        staged = pending.result() if pending is not None else None  # (staging's OSError)

        def put(**expect: Any) -> None:
            if staged is not None:
                commit_staged(staged, sync_dir=False, **expect)
            else:
                assert data is not None  # only a staged document comes without its text
                atomic_write(target, data, sync_dir=False, **expect)

        try:
            st = os.lstat(target)
        except FileNotFoundError:
            put(expect_absent=True)
            return "written", target.name, None
        shown = display_path(target)
        current = _current(target, st, cid)
        if isinstance(current, str):
            return "kept_unreadable", current, None
        if current == data:
            return "unchanged", target.name, st
        try:
            existing = parse_value_bytes(current, shown, "json")
        except RisuError as exc:
            return "kept_unreadable", f"{exc.one_line()}; left as it is, {cid} not written", st
        status = review_status(existing)
        if status is None:
            return "kept_unreadable", (
                f"{shown}: /provenance/review_status: unreadable-document: missing, so its "
                f"review state is unknown; left as it is, {cid} not written"), st
        if status != "candidate":
            return "kept_reviewed", cid, st
        new_data, note = _carried(existing, doc)
        if new_data is not None:  # written from these bytes, not from the staged file
            staged = _discard(staged)
            data = new_data
        if current == data or _same_content(existing, data, doc):  # (the user's layout kept)
            return "unchanged", target.name + note, st
        put(expect_sha256=hashlib.sha256(current).hexdigest())
        return "written", target.name + note, None
    except WriteConflict as exc:
        return "conflict", exc.one_line(), None
    except RisuError as exc:  # (a link, FIFO or device put there since the look at it)
        return "kept_unreadable", f"{exc.one_line()}; left as it is, {cid} not written", None
    except OSError as exc:
        return "oserror", exc, None
    finally:
        if staged is not None:
            discard_staged(staged)  # not used (or already committed: nothing to do)
    return "written", target.name, None
