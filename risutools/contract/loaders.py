"""Load matrix-component-v1 documents from JSON, YAML and NDJSON files, folders and stdin.

A file that cannot be parsed becomes an ``MC000`` finding (with line, byte
offset or JSON pointer) and loading goes on with the next file; one broken
NDJSON line is one finding and the other lines are still loaded.  A path that
cannot be read at all (missing, permission denied, a folder where a file was
named, anything that is not a regular file: a device, FIFO or socket, whatever a
symbolic link says) becomes an ``MC001`` finding: the CLI exits 2 for those
("could not run").  Every file is opened through :mod:`risutools.safeio`
(regular files only, bounded reads); every name shown goes through
:func:`risutools.pathnames.show_name`.

Bounds (documented in docs/contract.md): one document (a JSON/YAML file or an
NDJSON line) is at most ``MAX_DOCUMENT_BYTES``; nesting at most ``MAX_DEPTH``.
NDJSON files of any size are streamed line by line.
"""

from __future__ import annotations

import io
import json
import os
import stat
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, cast

from risutools.canonical import sha256_prefixed
from risutools.contract.checks_load import mc000, mc001
from risutools.contract.folders import (
    JSON_EXTS,
    NDJSON_EXTS,
    YAML_EXTS,
    document_files,
    named_passed_over,
    once_each,
)
from risutools.contract.readonce import STDIN, ReadOnce
from risutools.contract.rules import ACTIVE_CODE_SECTIONS, known_prose
from risutools.contract.shown import as_path, display_path, given_path
from risutools.errors import Code
from risutools.findings import Finding
from risutools.jsonlines import PointerLines
from risutools.jsonplaces import PARSE_INT
from risutools.jsontypes import json_type_name
from risutools.safeio import FileRefused, open_regular, read_regular
from risutools.values import (
    EMPTY,
    MAX_DOCUMENT_BYTES,
    Problem,
    decode,
    fast_json,
    fast_json_texts,
    fast_json_texts_many,
    load_yaml,
    parse_json_exact,
    parse_json_hashed,
)

STDIN_NAME = "-"  # standard input, as it is named on the command line
#: :func:`load_bytes` parses a JSON text itself (no ``fast`` answer given)
ASK: Any = object()


def not_a_component(doc: Any) -> str | None:
    """Why ``doc`` is not a component document a command can hash, approve or move (None:
    it is one): an object whose ``component_id`` is text.  A notes file, a replay report,
    an approval record or ``[]`` hold no component: ``hash`` and ``promote`` refuse them
    rather than answer for an empty component."""
    if not isinstance(doc, dict):
        return f"not a component document (its top level is {json_type_name(doc)}, not an object)"
    if not isinstance(doc.get("component_id"), str):
        return "not a component document (it has no component_id)"
    return None


@dataclass(slots=True)
class LoadedDocument:
    """One document and where it came from."""

    file: str  # display path (as given / relative), "-" for stdin
    line: int | None  # NDJSON line / YAML document start line / 1 for a JSON file
    doc: Any
    fmt: str  # "json" | "yaml" | "ndjson"
    #: the real file (None for stdin): as it was named when that text is the path itself
    #: (:func:`given_path`), else a :class:`Path`
    path: str | Path | None = None
    _text: str | None = None  # JSON file text, walked to a pointer for its line
    _lines: dict[str, int] | None = None
    #: the canonical document hash, when the loader computed it on the way (fast path) and
    #: was asked for it (``hashed``: a run that shows no hash need not compute one)
    sha256: str | None = None
    #: the JSON file's bytes, when the fast path parsed them as they are (no text made)
    _data: bytes | None = None
    #: the strings below payload and projection, as the fast path's level walk met them
    #: (what MC500 reads: :func:`~risutools.contract.rules.active_code`), or None; empty
    #: when all of a batch's were known to be prose (:meth:`_ReadFirst.flush`)
    texts: list[str] | None = None
    #: the lines of its pointers, once one is asked (:meth:`line_of`)
    _finder: PointerLines | None = field(default=None, repr=False, compare=False)
    #: the document's canonical bytes, left unhashed for the caller, when the fast path
    #: made them and the caller asked for them instead of the hash (``canon``)
    canon: bytes | None = None

    @property
    def file_path(self) -> Path | None:
        """The real file as a :class:`Path` (None for stdin)."""
        return None if self.path is None else as_path(self.path)

    @property
    def parsed_bytes(self) -> bytes | None:
        """The JSON file's bytes when orjson parsed them as they are into :attr:`doc` (the
        loaders' fast path), else None."""
        return self._data

    def line_of(self, pointer: str) -> int | None:
        """The line of the value at ``pointer`` (or of its nearest parent), when known."""
        if self.fmt == "ndjson":
            return self.line
        finder = self._finder
        if finder is None and (self._data is not None or self._text is not None):
            # walked to the pointer, no further: found on demand (what a walk met kept
            # once a document has more than a few findings: linear in the document)
            finder = self._finder = PointerLines(self.doc, data=self._data, text=self._text)
        if finder is not None:
            found = finder.line(pointer)
            return self.line if found is None else found
        lines = self._lines or {}
        p = pointer
        while True:
            if p in lines:
                return lines[p]
            if not p:
                return self.line
            p = p.rsplit("/", 1)[0]


@dataclass(slots=True)
class LoadOutcome:
    documents: list[LoadedDocument] = field(default_factory=list)
    problems: list[Finding] = field(default_factory=list)  # MC000 / MC001
    files: list[str] = field(default_factory=list)  # files read
    skipped: list[str] = field(default_factory=list)  # folder files that are not documents
    #: a folder's links to a file it reads already (``link -> file``), not read again
    same: list[str] = field(default_factory=list)
    size: int = 0  # the bytes of a JSON or YAML file read whole (0: an NDJSON file's part)

    def extend(self, other: LoadOutcome) -> None:
        self.documents.extend(other.documents)
        self.problems.extend(other.problems)
        self.files.extend(other.files)
        self.skipped.extend(other.skipped)
        self.same.extend(other.same)


def _found(file: str, p: Problem) -> Finding:
    found: Finding = mc000(file, p.message, p.line, p.pointer)
    return found


def load_documents(
    path: str | os.PathLike[str],
    *,
    exclude: Iterable[str] = (),
    stdin: BinaryIO | None = None,
    skip_non_documents: bool = False,
    once: ReadOnce | None = None,
) -> LoadOutcome:
    """Load every document under ``path`` (a file, a folder searched recursively, or ``-``).

    ``skip_non_documents``: a file named explicitly is treated like one found in a
    folder walk (JSON/YAML without ``contract``/``component_id`` is skipped), for hooks
    that pass every changed .json/.yaml file.  ``once``: the files of the paths before
    (:class:`ReadOnce`), a file among them not read again."""
    out = LoadOutcome()
    for part in iter_documents(path, exclude=exclude, stdin=stdin,
                               skip_non_documents=skip_non_documents, once=once):
        out.extend(part)
    return out


def iter_documents(
    path: str | os.PathLike[str],
    *,
    exclude: Iterable[str] = (),
    stdin: BinaryIO | None = None,
    skip_non_documents: bool = False,
    hashed: bool = True,
    lines: bool = False,
    once: ReadOnce | None = None,
) -> Iterator[LoadOutcome]:
    """:func:`load_documents` a file at a time: what it gives, in the same order, in parts
    (a caller that is done with a file's documents need not keep them).

    ``hashed=False``: the canonical hashes are not computed on the way (every document's
    ``sha256`` is None; a caller that needs one asks
    :func:`~risutools.canonical.doc_sha256`): everything else is the same.  ``lines``: an
    NDJSON file and a long standard input a batch of lines at a time (:func:`iter_file`,
    :func:`iter_stdin`), for a caller that keeps nothing of a document once done with it
    (``hash``): its memory is then one batch whatever the file's size."""
    if str(path) == STDIN:
        if once is not None and not once.first(STDIN):
            return
        stream = stdin if stdin is not None else sys.stdin.buffer
        yield from iter_stdin(stream, hashed=hashed) if lines else \
            (load_stdin(stream, hashed=hashed),)
        return
    for got in _path_files(given_path(path), exclude, skip_non_documents, once):
        if isinstance(got, LoadOutcome):
            yield got
            continue
        f, from_folder, seen = got
        if lines and _fmt_of(_base_name(f)) == "ndjson":
            yield from iter_file(Path(f), from_folder=from_folder)
        else:
            yield load_file(f, from_folder=from_folder, seen=seen, hashed=hashed)


def _path_files(p: str | Path, exclude: Iterable[str], skip_non_documents: bool,
                once: ReadOnce | None = None
                ) -> Iterator[LoadOutcome | tuple[str | Path, bool, os.stat_result | None]]:
    """What a path named on the command line holds, in order: a folder's listing (a part)
    and each of its document files, or the file itself; each file with whether it is read
    as a folder's file and its status when it was just taken (for :func:`load_file`).
    With ``skip_non_documents``, a file a folder walk passes over (:func:`named_passed_over`:
    ``README.md``, ``approvals/x.yaml``, ``transitions.ndjson``) is a part that names it
    skipped, unread.  ``once``: a file met before (:class:`ReadOnce`) is left out."""
    try:
        seen: os.stat_result | None = os.stat(p)
    except (OSError, ValueError):
        seen = None  # load_file says what is wrong with it
    if seen is not None and stat.S_ISDIR(seen.st_mode):
        listing, found = list_folder(Path(p), exclude)
        yield listing
        real, top = (once.real(p), Path(p)) if once is not None else ("", Path())
        for f in found:
            if once is None or once.first(f, known_as=os.path.join(
                    real, os.fspath(f.relative_to(top)))):
                yield f, True, None
        return
    if once is not None and not once.first(p, status=seen):
        return
    if seen is not None and skip_non_documents and named_passed_over(p):
        name = display_path(p)
        yield LoadOutcome(files=[name], skipped=[name])
        return
    yield p, skip_non_documents, seen


#: a batch: at most this many files (:func:`file_batches`, :func:`document_batches`: a file
#: that would take it past BATCH_BYTES starts the next, so a file larger than that is
#: parsed alone) or documents (:func:`load_batches`, an NDJSON file's parts), and the bytes
#: of its files (what its values take is about 2-20 times that)
BATCH, BATCH_BYTES = 128, 1 << 20


def load_batches(files: Iterable[Iterable[LoadOutcome]]
                 ) -> Iterator[tuple[list[LoadOutcome], int]]:
    """The parts of the files ``files`` (each the iterable of its parts: :func:`iter_file`,
    :func:`iter_documents`), in order, a batch at a time: (the parts, how many more files
    were read to their end by then; a file whose last part ends a batch is counted with the
    next, its end known only then).  A batch ends once its parts hold :data:`BATCH`
    documents or were read from :data:`BATCH_BYTES` of files.

    A caller that takes each step of its work over a batch's documents before the next
    (hash, check, summarize) does the same work in the same order as one document through
    every step, with each step's code and tables at hand in the processor's caches for the
    whole batch (bench/RESULTS.md, round 12); what it holds at once stays a few MB."""
    parts: list[LoadOutcome] = []
    docs = size = ended = 0
    for file_parts in files:
        for part in file_parts:
            parts.append(part)
            docs += len(part.documents)
            size += part.size
            if docs >= BATCH or size >= BATCH_BYTES:
                yield parts, ended
                parts, docs, size, ended = [], 0, 0, 0
        ended += 1
    if parts or ended:
        yield parts, ended


def list_folder(p: Path, exclude: Iterable[str] = ()) -> tuple[LoadOutcome, list[Path]]:
    """The document files under the folder ``p`` in the order they are read, and the
    problems of listing it (a folder that cannot be listed is an MC001, never silently
    passed; so is a file that is a symbolic link leading out of ``p``, which is not read:
    a folder, a catalog, is untrusted input).  A link to a file the walk reads already is
    that file: not read again, said once in the listing's ``same``
    (:func:`~risutools.contract.folders.once_each`)."""
    unlisted: list[OSError] = []
    outside: list[tuple[Path, FileRefused]] = []
    links: set[Path] = set()
    found, same = once_each(p, sorted(document_files(p, tuple(exclude), unlisted, outside,
                                                     links), key=lambda q: q.as_posix()),
                            links)
    listing = LoadOutcome(same=[f"{display_path(f)} -> {display_path(t)}" for f, t in same])
    for err in unlisted:
        where = Path(os.fsdecode(err.filename)) if err.filename is not None else p
        listing.problems.append(mc001(
            display_path(where), f"cannot list the folder: {err.strerror or err}"))
    for f, exc in sorted(outside, key=lambda t: t[0].as_posix()):
        listing.problems.append(mc001(display_path(f), exc.why, exc.code))
    return listing, found


def _base_name(p: str | Path) -> str:
    """The file's own name (``Path.name``; a text of :func:`given_path`'s: its last part)."""
    return p.name if isinstance(p, Path) else p.rpartition("/")[2]


def _fmt_of(name: str) -> str | None:
    low = name.lower()
    if low.endswith(NDJSON_EXTS):
        return "ndjson"
    if low.endswith(YAML_EXTS):
        return "yaml"
    if low.endswith(JSON_EXTS):
        return "json"
    return None


#: which of a file's bytes are parsed (:func:`load_file`'s ``keep``): a JSON or YAML file's
#: bytes, or an NDJSON file's line (stripped), and the format (``json``, ``yaml``, ``ndjson``)
Keep = Callable[[bytes, str], bool]


def load_file(p: str | Path, *, from_folder: bool = False,
              seen: os.stat_result | None = None, hashed: bool = True,
              canon: bool = False, keep: Keep | None = None) -> LoadOutcome:
    """The documents of one file (``seen``: its status as the caller just took it;
    ``hashed``, ``canon``: as for :func:`load_bytes`).  ``keep``: only the bytes it keeps
    are parsed (a JSON or YAML file it does not keep gives no document and no problem; an
    NDJSON line, none for that line): a caller that looks for some documents only
    (:mod:`risutools.contract.sieve`); every file is read as without it (a JSON or YAML
    file it does not keep is not named in ``files``: nothing of it is shown)."""
    fmt = _fmt_of(_base_name(p))
    if keep is not None and fmt != "ndjson":
        data = _read_whole(p, None, seen)
        if isinstance(data, bytes) and not keep(data, fmt or "json"):
            return LoadOutcome(size=len(data))
        return _loaded_file(p, display_path(p), data, fmt, from_folder=from_folder,
                            hashed=hashed, canon=canon)
    name = display_path(p)
    if fmt == "ndjson":
        try:
            with open_regular(p) as f:  # streamed: any size, one line at a time
                out = load_ndjson_stream(f, name, path=p, hashed=hashed, keep=keep)
        except FileRefused as exc:
            return LoadOutcome(problems=[mc001(name, exc.why, exc.code)])
        except OSError as exc:  # a read error in the middle of an NDJSON file
            return LoadOutcome(problems=[mc001(name, f"cannot read: {exc.strerror or exc}")])
        out.files.append(name)
        return out
    return _loaded_file(p, name, _read_whole(p, name, seen), fmt, from_folder=from_folder,
                        hashed=hashed, canon=canon)


def _read_whole(p: str | Path, name: str | None, seen: os.stat_result | None = None
                ) -> bytes | LoadOutcome:
    """The bytes of a JSON or YAML file (``name``: as shown, None: :func:`display_path`'s
    name, made when a refusal shows it), or what refuses them."""
    try:
        return read_regular(p, MAX_DOCUMENT_BYTES, seen=seen)
    except FileRefused as exc:
        out = LoadOutcome()
        name = display_path(p) if name is None else name
        if exc.code == Code.TOO_LARGE:
            out.files.append(name)
            out.problems.append(mc000(
                name, f"{exc.why} for one document (split it, or use an NDJSON catalog)"))
        else:
            out.problems.append(mc001(name, exc.why, exc.code))
        return out
    except OSError as exc:  # (read_regular says it as a refusal: kept as load_file had it)
        name = display_path(p) if name is None else name
        return LoadOutcome(problems=[mc001(name, f"cannot read: {exc.strerror or exc}")])


def _loaded_file(p: str | Path, name: str, data: bytes | LoadOutcome, fmt: str | None, *,
                 from_folder: bool, hashed: bool, canon: bool, fast: Any = ASK
                 ) -> LoadOutcome:
    """The documents of a JSON or YAML file from its bytes (or what refused them);
    ``fmt``: the file's format (:func:`_fmt_of`); ``fast``: as :func:`load_bytes` takes
    it."""
    if isinstance(data, LoadOutcome):
        return data
    out = load_bytes(data, name, fmt=fmt, path=p, hashed=hashed, canon=canon, fast=fast)
    out.size = len(data)
    if from_folder:
        # In a folder walk, a readable JSON/YAML file without contract fields is not a
        # component document (e.g. a mkdocs.yml): it is skipped, not reported.
        keep = []
        for d in out.documents:
            if isinstance(d.doc, dict) and ("contract" in d.doc or "component_id" in d.doc):
                keep.append(d)
            else:
                out.skipped.append(name if d.line in (None, 1) else f"{name}:{d.line}")
        out.documents = keep
    return out


def file_batches(paths: Iterable[Path], *, from_folder: bool = False, canon: bool = False
                 ) -> Iterator[tuple[list[LoadOutcome], int]]:
    """:func:`load_batches` of ``iter_file(p)`` for each of ``paths``: the same parts in the
    same order, a batch at a time with the files it ends, its JSON and YAML files read
    first, all of them (at most :data:`BATCH` files and :data:`BATCH_BYTES`, or one larger
    file alone), then parsed, all of them: each step over the batch before the next.  An
    NDJSON file is batched alone, streamed as :func:`iter_file` streams it."""
    batch = _ReadFirst(canon=canon)
    for p in paths:
        fmt = _fmt_of(p.name)
        if fmt == "ndjson":
            yield from batch.flush()
            yield from load_batches([iter_file(p, from_folder=from_folder, canon=canon)])
            continue
        yield from batch.read(p, fmt, from_folder)
    yield from batch.flush()


def document_batches(paths: Sequence[str | os.PathLike[str]], *, exclude: Iterable[str] = (),
                     skip_non_documents: bool = False, hashed: bool = True,
                     folders: list[str] | None = None, prose: bool = True
                     ) -> Iterator[tuple[list[LoadOutcome], int]]:
    """The parts :func:`iter_documents` gives for each of ``paths``, in the same order, a
    batch at a time as :func:`file_batches` takes them (the second of each pair: the files
    and folders it ends); an NDJSON file, and standard input, each a batch alone.
    ``folders``: each of ``paths`` that was a folder when read is added to it.
    ``prose=False``: MC500 will not run, its strings are not looked at (each document's
    ``texts`` None)."""
    batch = _ReadFirst(hashed=hashed, prose=prose)
    once = ReadOnce() if len(paths) > 1 else None
    for path in paths:
        if str(path) == STDIN:
            if once is not None and not once.first(STDIN):
                continue
            yield from batch.flush()
            yield from load_batches([iter_documents(path, hashed=hashed)])
            continue
        for got in _path_files(given_path(path), exclude, skip_non_documents, once):
            if isinstance(got, LoadOutcome):  # (a folder's listing, or a file skipped)
                batch.take(got)
                if folders is not None and not got.skipped:
                    folders.append(os.fspath(path))
            else:
                yield from batch.whole_or_read(*got)
    yield from batch.flush()


#: a file of a batch: (its path, its name as shown, its bytes or what refused them, read as a
#: folder's file, its format: :func:`_fmt_of`)
_Part = tuple[str | Path, str, bytes | LoadOutcome, bool, str | None]


class _ReadFirst:
    """The JSON and YAML files of a batch read, then parsed (:func:`file_batches`)."""

    def __init__(self, *, canon: bool = False, hashed: bool = True, prose: bool = True
                 ) -> None:
        self.canon, self.hashed, self.prose = canon, hashed, prose
        self.parts: list[_Part] = []
        self.size = 0  # the bytes read
        self.ends = 0  # the files (and folders) the batch ends

    def take(self, part: LoadOutcome) -> None:
        """A part already made (a folder's listing) into the batch, in its place."""
        self.parts.append((Path(), "", part, False, None))
        self.ends += 1

    def read(self, p: str | Path, fmt: str | None, from_folder: bool,
             seen: os.stat_result | None = None) -> Iterator[tuple[list[LoadOutcome], int]]:
        """The file ``p`` (of the format ``fmt``: :func:`_fmt_of`) read into the batch (the
        batch before it given first when the file's bytes would take it past
        :data:`BATCH_BYTES`: a large file is parsed alone); the batch given when full."""
        name = display_path(p)
        got = _read_whole(p, name, seen)
        size = len(got) if isinstance(got, bytes) else 0
        if self.parts and self.size + size > BATCH_BYTES:
            yield from self.flush()
        self.parts.append((p, name, got, from_folder, fmt))
        self.size += size
        self.ends += 1
        if len(self.parts) >= BATCH or self.size >= BATCH_BYTES:
            yield from self.flush()

    def whole_or_read(self, p: str | Path, from_folder: bool, seen: os.stat_result | None
                      ) -> Iterator[tuple[list[LoadOutcome], int]]:
        """:meth:`read`, or an NDJSON file loaded whole (as :func:`load_file` loads it) in
        a batch of its own."""
        fmt = _fmt_of(_base_name(p))
        if fmt != "ndjson":
            yield from self.read(p, fmt, from_folder, seen)
            return
        yield from self.flush()
        yield [load_file(p, from_folder=from_folder, seen=seen, hashed=self.hashed)], 1

    def flush(self) -> Iterator[tuple[list[LoadOutcome], int]]:
        """The batch's files parsed, given (nothing when it is empty).  Nothing of the
        batch stays referenced here while it is out (no name holds it across the
        ``yield``): once its taker lets it go, its documents are freed, before the next
        batch is read (and before the collector's pass at a batch's end: validate)."""
        if self.parts or self.ends:
            ends, self.ends = self.ends, 0
            yield self._parsed(), ends
        self.parts, self.size, self.ends = [], 0, 0

    def _parsed(self) -> list[LoadOutcome]:
        """The batch's files parsed (:meth:`flush`); the batch emptied."""
        parts, self.parts, self.size = self.parts, [], 0
        fast = self._fast(parts)
        return [_loaded_file(p, name, got, fmt, from_folder=from_folder, hashed=self.hashed,
                             canon=self.canon, fast=fast.get(i, ASK))
                for i, (p, name, got, from_folder, fmt) in enumerate(parts)]

    def _fast(self, parts: list[_Part]) -> dict[int, tuple[Any, bytes, list[str] | None] | None]:
        """The batch's JSON files parsed on the fast path together, by their places: each
        as :func:`~risutools.values.fast_json_texts` gives it, but for its strings: none
        when every string of the batch's payloads and projections is prose
        (:func:`~risutools.contract.rules.known_prose`: MC500 has nothing to look at),
        else None (MC500 looks for them)."""
        at = [i for i, (_, _, got, _, fmt) in enumerate(parts)
              if fmt == "json" and isinstance(got, bytes) and len(got) <= MAX_DOCUMENT_BYTES]
        if not at:
            return {}
        parsed, found = fast_json_texts_many([cast(bytes, parts[i][2]) for i in at],
                                             ACTIVE_CODE_SECTIONS,
                                             sort=self.hashed or self.canon)
        texts: list[str] | None = [] if self.prose and known_prose(
            [one[0] for one in parsed if one is not None], found) else None
        return {i: None if one is None else (*one, texts)
                for i, one in zip(at, parsed, strict=True)}


def iter_file(p: Path, *, from_folder: bool = False, canon: bool = False
              ) -> Iterator[LoadOutcome]:
    """:func:`load_file` in parts: an NDJSON file a batch of lines at a time (what was read
    before a read error is given, then the error), any other file whole (``canon``: as for
    :func:`load_bytes`; an NDJSON file's lines are hashed)."""
    if _fmt_of(p.name) != "ndjson":
        yield load_file(p, from_folder=from_folder, canon=canon)
        return
    name = display_path(p)
    try:
        with open_regular(p) as f:
            yield from iter_ndjson(f, name, path=p)
    except FileRefused as exc:
        yield LoadOutcome(problems=[mc001(name, exc.why, exc.code)])
        return
    except OSError as exc:
        yield LoadOutcome(problems=[mc001(name, f"cannot read: {exc.strerror or exc}")])
        return
    yield LoadOutcome(files=[name])


class _Prefixed:
    """``head`` (bytes already read) followed by the rest of ``stream``: ``readline`` only."""

    def __init__(self, head: bytes, stream: BinaryIO) -> None:
        self.head = io.BytesIO(head)
        self.stream = stream
        self.head_done = False

    def readline(self, limit: int = -1) -> bytes:
        if not self.head_done:
            got = self.head.readline(limit)
            if got.endswith(b"\n") or (limit >= 0 and len(got) >= limit):
                return got
            self.head_done = True
            rest = limit - len(got) if limit >= 0 else -1
            return got + (self.stream.readline(rest) if rest != 0 else b"")
        return self.stream.readline(limit)


def load_stdin(stream: BinaryIO, *, hashed: bool = True) -> LoadOutcome:
    """Standard input, held in memory only up to one document's bound: a longer input is
    streamed as NDJSON when it looks like NDJSON, else refused (MC000)."""
    out: LoadOutcome | None = None
    for part in iter_stdin(stream, hashed=hashed):
        if out is None:
            out = part
        else:
            out.extend(part)
    assert out is not None  # (iter_stdin gives a part at least)
    return out


def iter_stdin(stream: BinaryIO, *, hashed: bool = True) -> Iterator[LoadOutcome]:
    """:func:`load_stdin` in parts: a long NDJSON input a batch of lines at a time; a read
    error (standard input closed when the program started, a device's) is one line, as a
    file's is, after the documents read before it."""
    try:
        head = stream.read(MAX_DOCUMENT_BYTES + 1)
        if len(head) <= MAX_DOCUMENT_BYTES:
            yield load_bytes(head, STDIN_NAME, fmt=None, hashed=hashed)
            return
        first = head.lstrip()[:1]
        if first == b"{" and b"\n" in head:
            yield from iter_ndjson(cast(BinaryIO, _Prefixed(head, stream)), STDIN_NAME,
                                   hashed=hashed)
            yield LoadOutcome(files=[STDIN_NAME])
            return
    except OSError as exc:
        yield LoadOutcome(problems=[mc001(STDIN_NAME, f"cannot read: {exc.strerror or exc}")])
        return
    yield LoadOutcome(files=[STDIN_NAME], problems=[mc000(
        STDIN_NAME, f"standard input is more than the {MAX_DOCUMENT_BYTES}-byte bound for one "
        "document and is not NDJSON; split it, or pipe an NDJSON catalog")])


# --------------------------------------------------------------------------- decoding


def load_bytes(data: bytes, name: str, *, fmt: str | None, path: str | Path | None = None,
               hashed: bool = True, canon: bool = False, fast: Any = ASK) -> LoadOutcome:
    """Load documents from bytes; ``fmt`` None sniffs JSON / NDJSON / YAML (stdin);
    ``hashed``: as for :func:`iter_documents`; ``canon``: a JSON document the fast path
    parsed keeps its canonical bytes (:attr:`LoadedDocument.canon`) and is not hashed
    here: the caller hashes them (with what else it hashes, sharing their beginning).
    ``fast`` (a JSON file): what :func:`~risutools.values.fast_json_texts` gave for
    ``data`` with ``sort=hashed or canon`` (its strings maybe fewer: see
    :attr:`LoadedDocument.texts`), when the caller asked it already (:data:`ASK`: not)."""
    out = LoadOutcome(files=[name])
    if fmt == "ndjson":
        return load_ndjson_stream(io.BytesIO(data), name, path=path, files=[name],
                                  hashed=hashed)
    if len(data) > MAX_DOCUMENT_BYTES and fmt is not None:
        out.problems.append(mc000(
            name, f"document is {len(data)} bytes, more than the {MAX_DOCUMENT_BYTES}-byte bound; "
            "split it"))
        return out
    if fmt == "json":  # UTF-8 JSON as orjson reads it (no byte-order mark): no text made
        if fast is ASK:
            fast = fast_json_texts(data, ACTIVE_CODE_SECTIONS, sort=hashed or canon)
        if fast is not None:
            out.documents.append(_fast_document(data, name, path, fast, hashed, canon))
            return out
    text, err = decode(data)
    if err is not None or text is None:
        out.problems.append(_found(name, err) if err else mc000(name, "cannot decode"))
        return out
    if not text.strip():
        out.problems.append(mc000(name, EMPTY))
        return out
    if fmt is None:
        fmt = _sniff(text)
        if fmt == "ndjson":
            return load_ndjson_stream(io.BytesIO(data), name, path=path, files=[name],
                                      hashed=hashed)
    if fmt == "yaml":
        docs, bad = load_yaml(text)
        out.documents.extend(LoadedDocument(name, d.line, d.value, "yaml", path, _lines=d.lines)
                             for d in docs)
        if bad is not None:
            out.problems.append(_found(name, bad))
        return out
    doc, problem, digest = parse_json_hashed(text, line=None)
    if problem is not None:
        out.problems.append(_found(name, problem))
    else:
        out.documents.append(LoadedDocument(name, 1, doc, "json", path, _text=text,
                                            sha256=digest))
    return out


def _fast_document(data: bytes, name: str, path: str | Path | None,
                   fast: tuple[Any, bytes, list[str] | None], hashed: bool, canon: bool
                   ) -> LoadedDocument:
    """The document of a JSON file the fast path took (``fast``: its value, its bytes,
    its strings for MC500), as :func:`load_bytes` gives it."""
    return LoadedDocument(name, 1, fast[0], "json", path, _data=data,
                          sha256=sha256_prefixed(fast[1]) if hashed and not canon else None,
                          canon=fast[1] if canon else None, texts=fast[2])


def _sniff(text: str) -> str:
    stripped = text.lstrip()
    if not stripped.startswith(("{", "[")):
        return "yaml"
    body = [ln for ln in stripped.splitlines() if ln.strip()]
    if len(body) > 1 and all(ln.lstrip().startswith("{") for ln in body):
        try:
            json.loads(stripped, parse_int=PARSE_INT)
        except (ValueError, RecursionError):  # (deep nesting: json's recursion refuses it)
            return "ndjson"
    return "json"


# --------------------------------------------------------------------------- JSON


# --------------------------------------------------------------------------- NDJSON


def load_ndjson_stream(f: BinaryIO, name: str, *, path: str | Path | None = None,
                       files: list[str] | None = None, hashed: bool = True,
                       keep: Keep | None = None) -> LoadOutcome:
    out = LoadOutcome(files=list(files or []))
    for part in iter_ndjson(f, name, path=path, hashed=hashed, keep=keep):
        out.extend(part)
    return out


#: documents of an NDJSON file :func:`iter_ndjson` gives at a time
NDJSON_BATCH = 256


def _skip_line(f: BinaryIO) -> int:
    """Read past the rest of a line, 1 MiB at a time; the bytes read past."""
    skipped = 0
    while True:
        more = f.readline(1 << 20)
        skipped += len(more)
        if not more or more.endswith(b"\n"):
            return skipped


def iter_ndjson(f: BinaryIO, name: str, *, path: str | Path | None = None,
                batch: int = NDJSON_BATCH, hashed: bool = True, keep: Keep | None = None
                ) -> Iterator[LoadOutcome]:
    """An NDJSON file's documents and problems in parts of at most ``batch`` documents and
    ``batch`` problems (its line order kept within each list; a file of bad lines is given
    in parts too): a caller that is done with a part need not keep it.
    ``hashed``: as for :func:`iter_documents`; ``keep``: as for :func:`load_file`."""
    out = LoadOutcome()
    lineno = 0
    offset = 0
    any_line = False
    while True:
        if len(out.documents) >= batch or len(out.problems) >= batch:  # (bad lines too)
            yield out
            out = LoadOutcome()
        raw = f.readline(MAX_DOCUMENT_BYTES + 1)
        if not raw:
            break
        lineno += 1
        start = offset
        offset += len(raw)
        if len(raw) > MAX_DOCUMENT_BYTES and not raw.endswith(b"\n"):
            offset += _skip_line(f)  # (the rest of the over-long line, never held)
            out.problems.append(mc000(
                name, f"line is longer than the {MAX_DOCUMENT_BYTES}-byte bound for one document",
                lineno))
            continue
        if lineno == 1 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
            start += 3
        stripped = raw.strip()
        if not stripped:
            continue
        any_line = True
        if keep is not None and not keep(stripped, "ndjson"):
            continue
        fast = fast_json(stripped)
        if fast is not None:
            out.documents.append(LoadedDocument(
                name, lineno, fast[0], "ndjson", path,
                sha256=sha256_prefixed(fast[1]) if hashed else None))
            continue
        try:
            text = stripped.decode("utf-8")
        except UnicodeDecodeError:
            _, err = decode(raw, start, lineno)
            out.problems.append(_found(name, err) if err else mc000(name, "not UTF-8", lineno))
            continue
        doc, problem = parse_json_exact(text, line=lineno)
        if problem is not None:
            out.problems.append(_found(name, problem))
        else:
            out.documents.append(LoadedDocument(name, lineno, doc, "ndjson", path))
    if not any_line:
        out.problems.append(mc000(name, EMPTY))
    yield out
