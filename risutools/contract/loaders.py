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
import re
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from fnmatch import fnmatch
from pathlib import Path
from typing import Any, BinaryIO, cast

from risutools.contract.jsonlines import scan, unpaired_surrogate
from risutools.contract.rules import MC000, MC001
from risutools.errors import Code
from risutools.findings import Finding

try:
    import orjson
except ImportError:  # pragma: no cover - a dependency; without it the exact path alone
    orjson = None  # type: ignore[assignment]

MAX_DOCUMENT_BYTES = 8 * 1024 * 1024
MAX_DEPTH = 64

JSON_EXTS = (".json",)
YAML_EXTS = (".yaml", ".yml")
NDJSON_EXTS = (".ndjson", ".jsonl")
DOC_EXTS = JSON_EXTS + YAML_EXTS + NDJSON_EXTS

# Catalog folders and files that hold other things than component documents.
SKIP_DIRS = frozenset({"approvals", "notes", "replays", "node_modules", "__pycache__"})
SKIP_FILES = frozenset({"transitions.ndjson", "pyproject.toml"})

STDIN = "-"

_TOO_DEEP = f"nested deeper than {MAX_DEPTH} levels; flatten the document"
_EMPTY = "empty file: no document in it; write a document or remove the file"
_NOTHING = "no document in the file (only comments or null); write a document"
STDIN_NAME = "<stdin>"


@dataclass
class LoadedDocument:
    """One document and where it came from."""

    file: str  # display path (as given / relative), "<stdin>" for stdin
    line: int | None  # NDJSON line / YAML document start line / 1 for a JSON file
    doc: Any
    fmt: str  # "json" | "yaml" | "ndjson"
    path: Path | None = None  # the real file (None for stdin)
    _text: str | None = None  # JSON file text, scanned lazily for pointer lines
    _lines: dict[str, int] | None = None
    #: the canonical document hash, when the loader computed it on the way (fast path)
    sha256: str | None = None

    def line_of(self, pointer: str) -> int | None:
        """The line of the value at ``pointer`` (or of its nearest parent), when known."""
        if self.fmt == "ndjson":
            return self.line
        if self._lines is None and self._text is not None:
            self._lines = scan(self._text).lines
            self._text = None
        lines = self._lines or {}
        p = pointer
        while True:
            if p in lines:
                return lines[p]
            if not p:
                return self.line
            p = p.rsplit("/", 1)[0]


@dataclass
class LoadOutcome:
    documents: list[LoadedDocument] = field(default_factory=list)
    problems: list[Finding] = field(default_factory=list)  # MC000 / MC001
    files: list[str] = field(default_factory=list)  # files read
    skipped: list[str] = field(default_factory=list)  # folder files that are not documents

    def extend(self, other: LoadOutcome) -> None:
        self.documents.extend(other.documents)
        self.problems.extend(other.problems)
        self.files.extend(other.files)
        self.skipped.extend(other.skipped)


def _problem(file: str, why: str, line: int | None = None, pointer: str = "") -> Finding:
    return Finding(MC000.id, "error", why, file=file, line=line, pointer=pointer)


def _unreadable(file: str, why: str) -> Finding:
    return Finding(MC001.id, "error", why, file=file)


def display_path(path: Path) -> str:
    """``path`` relative to the working directory when inside it, posix separators,
    escaped by :func:`~risutools.pathnames.show_name` (printable UTF-8, reversible)."""
    from risutools.pathnames import show_name

    try:
        cwd = Path.cwd()
        # the name itself is never resolved: a link to /dev/zero is shown as the link
        tries = ((cwd, Path(os.path.abspath(path))),
                 (cwd.resolve(), path.parent.resolve() / path.name))
    except (OSError, RuntimeError):
        return show_name(path.as_posix())
    for base, target in tries:
        try:
            return show_name(target.relative_to(base).as_posix())
        except ValueError:
            continue
    return show_name(path.as_posix())


# --------------------------------------------------------------------------- entry points


def load_documents(
    path: str | os.PathLike[str],
    *,
    exclude: Iterable[str] = (),
    stdin: BinaryIO | None = None,
    skip_non_documents: bool = False,
) -> LoadOutcome:
    """Load every document under ``path`` (a file, a folder searched recursively, or ``-``).

    ``skip_non_documents``: a file named explicitly is treated like one found in a
    folder walk (JSON/YAML without ``contract``/``component_id`` is skipped), for hooks
    that pass every changed .json/.yaml file."""
    if str(path) == STDIN:
        return load_stdin(stdin if stdin is not None else sys.stdin.buffer)
    p = Path(path)
    out = LoadOutcome()
    if p.is_dir():
        patterns = tuple(exclude)
        unlisted: list[OSError] = []
        found = sorted(_walk(p, patterns, unlisted), key=lambda q: q.as_posix())
        for err in unlisted:  # a folder that cannot be listed is not silently passed
            where = Path(os.fsdecode(err.filename)) if err.filename is not None else p
            out.problems.append(_unreadable(
                display_path(where), f"cannot list the folder: {err.strerror or err}"))
        for f in found:
            out.extend(load_file(f, from_folder=True))
        return out
    return load_file(p, from_folder=skip_non_documents)


def _walk(root: Path, exclude: tuple[str, ...], errors: list[OSError]) -> Iterator[Path]:
    # followlinks=False: a link to a folder is never entered (no cycles, no /dev); a link
    # to a file is yielded and read (or refused) by load_file like any other file.
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False,
                                                 onerror=errors.append):
        dirnames[:] = sorted(
            d for d in dirnames if not d.startswith(".") and d not in SKIP_DIRS
        )
        for fn in filenames:
            if fn.startswith(".") or fn in SKIP_FILES:
                continue
            if not fn.lower().endswith(DOC_EXTS):
                continue
            f = Path(dirpath) / fn
            rel = f.relative_to(root).as_posix()
            if any(fnmatch(rel, pat) or fnmatch(fn, pat) for pat in exclude):
                continue
            yield f


def _fmt_of(name: str) -> str | None:
    low = name.lower()
    if low.endswith(NDJSON_EXTS):
        return "ndjson"
    if low.endswith(YAML_EXTS):
        return "yaml"
    if low.endswith(JSON_EXTS):
        return "json"
    return None


def load_file(p: Path, *, from_folder: bool = False) -> LoadOutcome:
    from risutools.safeio import FileRefused, open_regular, read_regular

    name = display_path(p)
    fmt = _fmt_of(p.name)
    out = LoadOutcome()
    try:
        if fmt == "ndjson":
            with open_regular(p) as f:  # streamed: any size, one line at a time
                out = load_ndjson_stream(f, name, path=p)
            out.files.append(name)
            return out
        data = read_regular(p, MAX_DOCUMENT_BYTES)
    except FileRefused as exc:
        if exc.code == Code.TOO_LARGE:
            out.files.append(name)
            out.problems.append(_problem(
                name, f"{exc.why} for one document (split it, or use an NDJSON catalog)"))
        else:
            out.problems.append(_unreadable(name, exc.why))
        return out
    except OSError as exc:  # a read error in the middle of an NDJSON file
        out.problems.append(_unreadable(name, f"cannot read: {exc.strerror or exc}"))
        return out
    out = load_bytes(data, name, fmt=fmt, path=p)
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


def load_stdin(stream: BinaryIO) -> LoadOutcome:
    """Standard input, held in memory only up to one document's bound: a longer input is
    streamed as NDJSON when it looks like NDJSON, else refused (MC000)."""
    head = stream.read(MAX_DOCUMENT_BYTES + 1)
    if len(head) <= MAX_DOCUMENT_BYTES:
        return load_bytes(head, STDIN_NAME, fmt=None)
    first = head.lstrip()[:1]
    if first == b"{" and b"\n" in head:
        return load_ndjson_stream(cast(BinaryIO, _Prefixed(head, stream)), STDIN_NAME,
                                  files=[STDIN_NAME])
    out = LoadOutcome(files=[STDIN_NAME])
    out.problems.append(_problem(
        STDIN_NAME, f"standard input is more than the {MAX_DOCUMENT_BYTES}-byte bound for one "
        "document and is not NDJSON; split it, or pipe an NDJSON catalog"))
    return out


# --------------------------------------------------------------------------- decoding


def _decode(data: bytes, name: str, base_offset: int = 0, line: int | None = None
            ) -> tuple[str | None, Finding | None]:
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return None, _problem(name, "file is UTF-16 encoded (has a UTF-16 byte order mark); "
                              "save it as UTF-8", line)
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
        base_offset += 3
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        off = base_offset + exc.start
        return None, _problem(
            name, f"not UTF-8: byte 0x{data[exc.start]:02x} at byte offset {off} "
            f"({exc.reason}); save the file as UTF-8", line)


def load_bytes(data: bytes, name: str, *, fmt: str | None, path: Path | None = None
               ) -> LoadOutcome:
    """Load documents from bytes; ``fmt`` None sniffs JSON / NDJSON / YAML (stdin)."""
    out = LoadOutcome(files=[name])
    if fmt == "ndjson":
        return load_ndjson_stream(io.BytesIO(data), name, path=path, files=[name])
    if len(data) > MAX_DOCUMENT_BYTES and fmt is not None:
        out.problems.append(_problem(
            name, f"document is {len(data)} bytes, more than the {MAX_DOCUMENT_BYTES}-byte bound; "
            "split it"))
        return out
    text, err = _decode(data, name)
    if err is not None or text is None:
        out.problems.append(err or _problem(name, "cannot decode"))
        return out
    if not text.strip():
        out.problems.append(_problem(name, _EMPTY))
        return out
    if fmt is None:
        fmt = _sniff(text)
        if fmt == "ndjson":
            return load_ndjson_stream(io.BytesIO(data), name, path=path, files=[name])
    if fmt == "yaml":
        _load_yaml(text, name, path, out)
        return out
    doc, problem, digest = parse_json_hashed(text, name, line=None)
    if problem is not None:
        out.problems.append(problem)
    else:
        out.documents.append(LoadedDocument(name, 1, doc, "json", path, _text=text,
                                            sha256=digest))
    return out


def _sniff(text: str) -> str:
    stripped = text.lstrip()
    if not stripped.startswith(("{", "[")):
        return "yaml"
    body = [ln for ln in stripped.splitlines() if ln.strip()]
    if len(body) > 1 and all(ln.lstrip().startswith("{") for ln in body):
        try:
            json.loads(stripped)
        except ValueError:
            return "ndjson"
    return "json"


def _load_yaml(text: str, name: str, path: Path | None, out: LoadOutcome) -> None:
    import yaml

    from risutools.contract.yamlsafe import YamlRefused, load_yaml_documents

    try:
        for ydoc in load_yaml_documents(text, max_depth=MAX_DEPTH):
            if ydoc.value is None:
                continue
            out.documents.append(
                LoadedDocument(name, ydoc.line, ydoc.value, "yaml", path, _lines=ydoc.lines)
            )
    except YamlRefused as exc:
        out.problems.append(_problem(name, exc.why, exc.line, exc.pointer))
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        what = " ".join(x for x in (exc.context, exc.problem) if x) or "YAML syntax error"
        out.problems.append(_problem(name, f"not valid YAML: {what}; fix the syntax there", line))
    except yaml.YAMLError as exc:
        out.problems.append(_problem(name, f"not valid YAML: {exc}"))
    except RecursionError:
        out.problems.append(_problem(name, _TOO_DEEP))
    except ValueError as exc:  # e.g. an integer with too many digits
        out.problems.append(_problem(name, f"value cannot be read: {exc}"))
    if not out.documents and not out.problems:
        out.problems.append(_problem(name, _NOTHING))


# --------------------------------------------------------------------------- JSON


class _DuplicateKey(Exception):
    pass


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    d = dict(pairs)
    if len(d) != len(pairs):
        raise _DuplicateKey()
    return d


def _nonfinite(token: str) -> Any:
    raise ValueError(f"{token} is not JSON")


_DECODER = json.JSONDecoder(object_pairs_hook=_pairs, parse_constant=_nonfinite)

# A number token that orjson could read otherwise than ``json``: a float (a digit then
# ``.``/``e``/``E``: the spelling of floats may differ) or 19+ digits (orjson reads an
# integer past 64 bits as a float).  Searched outside string literals only.
_NUMBER_RISK = re.compile(rb"[0-9](?:[.eE]|[0-9]{18})")
def _outside_strings(data: bytes) -> bytes:
    """The bytes of valid JSON ``data`` outside its string literals (structure, numbers,
    keywords): escape pairs (``\\\\``, ``\\"``) are neutralised first, then every quote
    left opens or closes a string."""
    if b"\\" in data:
        data = data.replace(b"\\\\", b"__").replace(b'\\"', b"__")
    return b"".join(data.split(b'"')[0::2])


def fast_json(data: bytes) -> tuple[Any, bytes] | None:
    """(value, canonical bytes) of UTF-8 JSON ``data`` parsed by orjson, or None when the
    exact path (``json`` with the duplicate-key hook) must decide.  Every guard holds:

    - orjson refuses (None) what ``json`` refuses or takes differently: invalid JSON or
      UTF-8, a byte-order mark, NaN/Infinity, unpaired surrogates, numbers out of range,
      nesting past 1,024 levels;
    - floats and integers of 19+ digits are left to ``json`` (``_NUMBER_RISK``), so every
      value is exactly the one ``json`` gives;
    - duplicate keys: the canonical form (orjson, keys sorted; see ``canonical``) holds one
      ``:`` per key kept plus the ``:`` of every string, and the text one per key written
      plus the same ``:`` of every string, as long as no ``\\u003a`` escape spells one:
      the two counts are equal exactly when no key was repeated (``"a"`` and ``"\\u0061"``
      included: they are one key once decoded);
    - nesting past ``MAX_DEPTH`` levels: a walk over the containers, by level.
    """
    from risutools.contract.canonical import plain_canonical

    if orjson is None or b"\\u003" in data:
        return None
    if _NUMBER_RISK.search(_outside_strings(data)):  # a regex over the whole text: 4x slower
        return None
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    if data.count(b"{") + data.count(b"[") > MAX_DEPTH:  # else it cannot nest deeper
        from risutools.formats.jsonsafe import _nests_deeper

        if _nests_deeper(value, MAX_DEPTH):
            return None
    canon = plain_canonical(value)
    if canon is None or canon.count(b":") != data.count(b":"):
        return None
    return value, canon


def parse_json_text(text: str, name: str, *, line: int | None
                    ) -> tuple[Any, Finding | None]:
    """Parse one JSON document; returns (value, None) or (None, MC000 finding)."""
    doc, problem, _ = parse_json_hashed(text, name, line=line)
    return doc, problem


def parse_json_hashed(text: str, name: str, *, line: int | None
                      ) -> tuple[Any, Finding | None, str | None]:
    """:func:`parse_json_text`, with the canonical document hash when the fast path
    computed it on the way (else None)."""
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:  # an unpaired surrogate: the exact path says where
        data = None
    fast = fast_json(data) if data is not None else None
    if fast is not None:
        from risutools.contract.canonical import sha256_prefixed

        return fast[0], None, sha256_prefixed(fast[1])
    doc, problem = _parse_json_exact(text, name, line=line)
    return doc, problem, None


def _parse_json_exact(text: str, name: str, *, line: int | None
                      ) -> tuple[Any, Finding | None]:
    first = line or 1
    try:
        doc = _DECODER.decode(text)
    except _DuplicateKey:
        res = scan(text, first)
        ptr, ln = res.duplicate if res.duplicate else ("", first)
        key = ptr.rsplit("/", 1)[-1].replace("~1", "/").replace("~0", "~")
        return None, _problem(name, f"duplicate key {key!r}: a key may appear once per object; "
                              "remove or rename one of them", ln, ptr)
    except json.JSONDecodeError as exc:
        ln = first + exc.lineno - 1
        where = f"column {exc.colno}" if line is not None else f"line {ln} column {exc.colno}"
        return None, _problem(name, f"not valid JSON: {exc.msg} at {where}; fix the syntax there",
                              ln)
    except RecursionError:
        return None, _problem(name, _TOO_DEEP, first)
    except ValueError as exc:
        res = scan(text, first)
        if res.nonfinite is not None:
            ptr, ln, tok = res.nonfinite
            return None, _problem(name, f"{tok} is not a JSON number (NaN/Infinity are refused); "
                                  "write a number or null", ln, ptr)
        return None, _problem(name, f"value cannot be read: {exc}", first)
    problem = check_value(doc, name, first, text)
    if problem is not None:
        return None, problem
    return doc, None


def check_value(doc: Any, name: str, line: int, text: str | None) -> Finding | None:
    """Depth bound and unpaired surrogates (only searched when the text has a \\ud escape)."""
    look_for_surrogates = text is None or "\\ud" in text or "\\uD" in text
    if (not look_for_surrogates and text is not None
            and text.count("{") + text.count("[") < MAX_DEPTH):
        return None  # fewer brackets than the bound: it cannot nest deeper
    stack: list[tuple[Any, int]] = [(doc, 0)]
    while stack:
        v, depth = stack.pop()
        if isinstance(v, dict):
            if depth >= MAX_DEPTH:
                return _problem(name, _TOO_DEEP, line)
            if look_for_surrogates:
                stack.extend((k, depth + 1) for k in v)
            stack.extend((x, depth + 1) for x in v.values())
        elif isinstance(v, list):
            if depth >= MAX_DEPTH:
                return _problem(name, _TOO_DEEP, line)
            stack.extend((x, depth + 1) for x in v)
        elif look_for_surrogates and isinstance(v, str):
            try:
                v.encode("utf-8")
            except UnicodeEncodeError:  # the first one in document order, with its pointer
                ptr, why = unpaired_surrogate(doc) or ("", "")
                at = scan(text, line).lines.get(ptr, line) if text is not None else line
                return _problem(name, why, at, ptr)
    return None


# --------------------------------------------------------------------------- NDJSON


def load_ndjson_stream(f: BinaryIO, name: str, *, path: Path | None = None,
                       files: list[str] | None = None) -> LoadOutcome:
    out = LoadOutcome(files=list(files or []))
    lineno = 0
    offset = 0
    any_line = False
    while True:
        raw = f.readline(MAX_DOCUMENT_BYTES + 1)
        if not raw:
            break
        lineno += 1
        start = offset
        offset += len(raw)
        if len(raw) > MAX_DOCUMENT_BYTES and not raw.endswith(b"\n"):
            # skip the rest of the over-long line without holding it
            while True:
                more = f.readline(1 << 20)
                offset += len(more)
                if not more or more.endswith(b"\n"):
                    break
            out.problems.append(_problem(
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
        fast = fast_json(stripped)
        if fast is not None:
            from risutools.contract.canonical import sha256_prefixed

            out.documents.append(LoadedDocument(name, lineno, fast[0], "ndjson", path,
                                                sha256=sha256_prefixed(fast[1])))
            continue
        try:
            text = stripped.decode("utf-8")
        except UnicodeDecodeError:
            _, err = _decode(raw, name, start, lineno)
            out.problems.append(err or _problem(name, "not UTF-8", lineno))
            continue
        doc, problem = _parse_json_exact(text, name, line=lineno)
        if problem is not None:
            out.problems.append(problem)
        else:
            out.documents.append(LoadedDocument(name, lineno, doc, "ndjson", path))
    if not any_line:
        out.problems.append(_problem(name, _EMPTY))
    return out


# --------------------------------------------------------------------------- one value


def parse_value(text: str, name: str, fmt: str) -> Any:
    """One JSON (``fmt="json"``) or YAML value, with every guard of the catalog loader:
    duplicate keys, NaN/Infinity, YAML aliases and non-JSON tags, nesting depth.

    Used for the other files risutools reads as data (replay fixtures, configurations,
    component files, notes).  A YAML file holding no document gives ``None``; several
    documents are refused, and so is blank JSON (as an empty file).  Raises
    :class:`DocumentError` (code ``bad-document``) with the line and the reason.
    """
    from risutools.errors import DocumentError

    out = LoadOutcome()
    if fmt == "json" and not text.strip():
        raise DocumentError(Code.BAD_DOCUMENT, _EMPTY, path=name)
    if fmt == "json":
        value, problem = parse_json_text(text, name, line=None)
        if problem is not None:
            out.problems.append(problem)
        else:
            return value
    else:
        _load_yaml(text, name, None, out)
        if not out.problems and len(out.documents) > 1:
            raise DocumentError(
                Code.BAD_DOCUMENT,
                "several YAML documents in one file; keep one",
                where=f"line {out.documents[1].line}",
                path=name,
            )
        if out.documents and not out.problems:
            return out.documents[0].doc
        if all(p.message == _NOTHING for p in out.problems):
            return None
    first = out.problems[0]
    raise DocumentError(
        Code.BAD_DOCUMENT, first.message, where=f"line {first.line}" if first.line else "",
        path=name,
    )


def decode_text(data: bytes, name: str) -> str:
    """The UTF-8 text of a data file, with the catalog loader's rules: a UTF-8 byte-order
    mark is dropped, UTF-16 and undecodable bytes are refused with the byte offset.
    Raises :class:`DocumentError` (code ``bad-document``)."""
    from risutools.errors import DocumentError

    text, err = _decode(data, name)
    if text is None:
        raise DocumentError(Code.BAD_DOCUMENT, err.message if err else "cannot decode", path=name)
    return text


def parse_value_bytes(data: bytes, name: str, fmt: str) -> Any:
    """:func:`parse_value` over a file's bytes, decoded by :func:`decode_text`."""
    return parse_value(decode_text(data, name), name, fmt)
