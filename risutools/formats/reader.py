"""Detection by content and the one entry point every other part uses: :func:`read_path`."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any, BinaryIO, cast

from risutools.errors import Code, FormatError
from risutools.formats import card, charx, exports, jsonscan, png, risup, rpack
from risutools.formats.files import open_regular, read_to_bound
from risutools.formats.jsonsafe import loads_object
from risutools.formats.model import Anomaly, AssetInfo, Module, SourceInfo
from risutools.formats.risum import MAGIC, read_risum_stream
from risutools.fsio import sha256_stream
from risutools.safeio import FoundFile

FORMATS = (
    "risum",
    "charx",
    "charx-jpeg",
    "png-card",
    "risup",
    "risupreset",
    "json-module",
    "json-lorebook",
    "json-external-lorebook",
    "json-regex",
    "json-card",
    "json-preset",
)
#: bytes read from the start of a file for detection
HEAD = 4096
#: bounded peek used to find the top-level keys of a JSON export
JSON_PEEK = 1024 * 1024
#: at most this many top-level keys are scanned in the peek (a JSON Lines file whose first
#: object has a hundred keys is told from the peek, not by parsing its whole text)
PEEK_KEYS = 4096
#: largest JSON export accepted
MAX_JSON_BYTES = 64 * 1024 * 1024
#: extension -> reader used when content detection fails (for a precise error)
_BY_EXTENSION = {
    ".risum": "risum",
    ".charx": "charx",
    ".jpg": "charx-jpeg",
    ".jpeg": "charx-jpeg",
    ".png": "png-card",
    ".risup": "risup",
    ".risupreset": "risupreset",
    ".json": "json",
}
#: names that are Risu files to RisuAI whatever they hold (it picks the reader by the name:
#: ``.risum`` -> readModule, ``.charx`` -> CharXReader, ``.risup``/``.risupreset`` -> the
#: preset import), unlike ``.json`` and ``.jpg``, which are often something else
_RISU_NAMES = frozenset(ext for ext, fmt in _BY_EXTENSION.items()
                        if fmt in ("risum", "charx", "risup", "risupreset"))
_CHUNK = 1 << 20


def named_as_risu(path: str | os.PathLike[str]) -> bool:
    """Whether RisuAI imports ``path`` as a Risu file by its name alone (see
    :data:`_RISU_NAMES`): a folder walk must read such a file even when :func:`detect` does
    not recognise its content (RisuAI's streaming ZIP reader loads a card whose central
    directory is cut or names other members; :func:`read_path` then reads it, or says
    precisely why it cannot), never pass it over as "not a Risu file"."""
    return Path(path).suffix.lower() in _RISU_NAMES


_open = open_regular


def _is_printable(b: int) -> bool:
    return b in (0x09, 0x0A, 0x0D) or 0x20 <= b < 0x7F or b >= 0x80


def _detect_open(fp: BinaryIO, size: int, *, defer_json: bool = False) -> str | None:
    """The format by content (see :func:`detect`).  ``defer_json``: a JSON object text is
    answered ``"json"`` without the bounded peek, for a caller that parses the whole text
    next and classifies the object itself (:func:`_read_json`)."""
    if size == 0:
        return None
    head = fp.read(HEAD)
    if head[0] == MAGIC and len(head) > 1 and not _is_printable(head[1]):
        return "risum"
    if png.has_signature(head):  # a PNG is a card when RisuAI's walk meets a card chunk
        return "png-card" if png.looks_like_card(fp, size) else None
    if head[:1] in (b"P", b"\xff"):  # a ZIP or a JPEG may follow: only then load the reader
        zipped, fmt = _detect_zip(fp, head)
        if zipped:
            return fmt
    for rpacked, fmt in ((False, "risupreset"), (True, "risup")):
        seen = risup.peek(rpack.decode(head[:256]) if rpacked else head)
        if seen is None and size <= risup.MAX_FILE_BYTES:  # a map whose keys come later
            fp.seek(0)
            seen = risup.is_envelope(read_to_bound(fp, size, risup.MAX_FILE_BYTES),
                                     rpacked=rpacked)
        if seen:
            return fmt
    if _first_text_byte(fp, head, size) == b"{":
        return "json" if defer_json else _detect_json(fp, head, size)
    return None


def _first_text_byte(fp: BinaryIO, head: bytes, size: int) -> bytes:
    """The first byte of the text after a BOM and JSON's blanks (b"" when there is none),
    read past ``head`` when ``head`` is all blank (``JSON.parse`` skips any number of them:
    a module behind 4 KiB of spaces is a module)."""
    text = head[3:] if head.startswith(b"\xef\xbb\xbf") else head
    first = text.lstrip(b" \t\r\n")[:1]
    at = len(head)
    fp.seek(at)
    while not first and at < min(size, MAX_JSON_BYTES):
        chunk = fp.read(_CHUNK)
        if not chunk:
            break
        at += len(chunk)
        first = chunk.lstrip(b" \t\r\n")[:1]
    return first


def _detect_json(fp: BinaryIO, head: bytes, size: int) -> str | None:
    """The export a JSON object text is: its top-level keys in the first 1 MiB, else a
    final ``"type"`` in the last 512 bytes, else -- when the peek did not see the whole
    top-level object (more keys, or a text past 1 MiB) -- the whole text parsed and
    classified as :func:`_read_json` does (RisuAI imports a module whatever the order or
    number of its keys: one must not pass for "not a Risu file" by its layout)."""
    if len(head) < HEAD:  # (the whole file, read already)
        peek = head
    else:  # (a buffer the file's size, not the peek's bound, for a small file)
        fp.seek(0)
        peek = fp.read(min(JSON_PEEK, size + HEAD))
    keys, whole = jsonscan.top_level_scan(peek.decode("utf-8", errors="replace"), PEEK_KEYS)
    fmt = exports.classify(keys)
    if fmt is None and size > JSON_PEEK:
        fp.seek(max(0, size - 512))
        tail = fp.read(512).decode("utf-8", errors="replace")
        fmt = _classify_tail(tail)
    if fmt is None and not whole and size <= MAX_JSON_BYTES:
        fp.seek(0)
        try:
            obj = loads_object(read_to_bound(fp, size, MAX_JSON_BYTES), where="JSON",
                               what="JSON export")
        except FormatError:  # (not JSON, or past a bound: no export to tell)
            return None
        fmt = exports.classify_object(obj)
    return fmt


def _detect_zip(fp: BinaryIO, head: bytes) -> tuple[bool, str | None]:
    """(whether ``head`` starts a ZIP or a JPEG, the format: ``.charx``, CharX-JPEG by its
    central directory naming the card or module, or None)."""
    kinds = (((charx.ZIP_MAGIC, b"PK\x05\x06"), "charx"), ((charx.JPEG_MAGIC,), "charx-jpeg"))
    for magics, fmt in kinds:
        if head.startswith(magics):
            fp.seek(0)
            names = charx.zip_names(fp)
            found = names is not None and (charx.CARD in names or charx.MODULE in names)
            return True, fmt if found else None
    return False, None


def _classify_tail(tail: str) -> str | None:
    """``..., "type": "risuModule"\\n}`` at the very end: RisuAI's export puts ``type`` last."""
    t = tail.rstrip()
    if not t.endswith("}"):
        return None
    t = t[:-1].rstrip()
    for value, fmt in (
        ('"risuModule"', "json-module"),
        ('"risu"', "json-lorebook"),
        ('"regex"', "json-regex"),
    ):
        if t.endswith(value):
            before = t[: -len(value)].rstrip()
            if before.endswith(":") and before[:-1].rstrip().endswith('"type"'):
                return fmt
    return None


def detect(path: str | os.PathLike[str]) -> str | None:
    """The format of ``path`` judged by content, or None if it is not a supported Risu file.

    Reads the first bytes, plus a bounded peek for JSON (1 MiB + the last 512
    bytes; the whole text, parsed under the reader's bounds, when that peek did not see
    the whole top-level object and named no export) and the ZIP central directory.
    Raises :class:`FormatError` only when the path cannot be read at all (missing, a
    directory, unreadable).
    """
    fp, size = _open(path)
    with fp:
        try:
            fmt = _detect_open(fp, size)
            if fmt is None and size and png.named_png(Path(path).name):  # RisuAI reads it as
                fmt = "png-card" if png.looks_like_card(fp, size) else None  # a PNG by name
            return fmt
        except OSError as exc:
            raise FormatError(Code.UNREADABLE,
                              f"read failed: {exc}", path=os.fspath(path)) from None


class _HashingFile:
    """Read everything through a SHA-256 (used for the whole-file formats)."""

    @staticmethod
    def read_all(fp: BinaryIO, size: int, limit: int, what: str) -> tuple[bytes, str]:
        if size > limit:
            raise FormatError(Code.TOO_LARGE,
                              f"{what} of {size} bytes exceeds the {limit} byte bound")
        fp.seek(0)
        data = read_to_bound(fp, size, limit)
        return data, hashlib.sha256(data).hexdigest()


def _stream_sha256(fp: BinaryIO, size: int) -> str:
    fp.seek(0)
    return sha256_stream(cast(Any, fp), _CHUNK, size=size)


def read_path(
    path: str | os.PathLike[str], *, with_assets: bool = False, fmt: str | None = None,
    found: FoundFile | None = None,
) -> list[Module]:
    """Read any supported file into modules (see docs/formats.md for every rule).

    ``.risum`` and JSON exports give one module; a ``.charx`` gives its embedded
    ``module.risum`` (or ``[]`` for a card without one); a preset gives one
    module with ``component_type == "preset"``.  Every fatal problem raises
    :class:`FormatError` carrying the path, a stable code and a location.

    ``fmt``: the format :func:`detect` already found for this file (a folder walk
    detects every file first), so it is not detected a second time; the reader of
    that format checks every byte as always (a file changed in between is refused by
    it, never read as something else).  Anything not in :data:`FORMATS`: detected here.
    ``found``: the (device, inode) of the file the walk found at ``path``: a symbolic
    link, or another file, put there since is refused, never read.
    """
    p = os.fspath(path)
    try:
        fp, size = _open(p, found)
        with fp:
            return _read_open(fp, size, p, with_assets, fmt if fmt in FORMATS else None)
    except FormatError as exc:
        raise exc.with_path(p) from None
    except OSError as exc:
        raise FormatError(Code.UNREADABLE, f"read failed: {exc}", path=p) from None
    except MemoryError:
        raise FormatError(Code.TOO_LARGE, "not enough memory to read this file", path=p) from None


def _read_open(
    fp: BinaryIO, size: int, p: str, with_assets: bool, known: str | None
) -> list[Module]:
    if size == 0:
        raise FormatError(Code.EMPTY_FILE, "the file is empty")
    fmt = known
    suffix = Path(p).suffix.lower()
    if fmt is None:
        # A ``.json`` file that holds a JSON object is read as JSON whatever the peek would
        # say: the peek can only name an export that _read_json then classifies from the
        # parsed object, or fall back to this same extension, so it is skipped (it cost a
        # second decode and scan of up to 1 MiB: issue 11).  Other names are detected in full.
        as_json = _BY_EXTENSION.get(suffix) == "json"
        fmt = _detect_open(fp, size, defer_json=as_json)
        fp.seek(0)
    if fmt is None:
        guess = _BY_EXTENSION.get(suffix) or ("png-card" if png.named_png(Path(p).name)
                                              else None)
        if guess is None:
            raise FormatError(
                Code.UNKNOWN_FORMAT,
                "not a supported Risu file (.risum, .charx, CharX-JPEG, PNG card, .risup, "
                ".risupreset or a module/lorebook/regex JSON export)",
            )
        fmt = guess
    if fmt == "risum":
        return [_read_risum(fp, size, p, with_assets)]
    if fmt in ("charx", "charx-jpeg"):
        return _read_charx(fp, size, p, fmt, with_assets)
    if fmt == "png-card":
        return _read_png(fp, size, p)
    if fmt in ("risup", "risupreset"):
        blob, digest = _HashingFile.read_all(fp, size, risup.MAX_FILE_BYTES, "preset file")
        box = [blob]  # handed over: no reference stays here while the preset is decoded
        del blob
        preset, notes = risup.read_preset(box, rpacked=fmt == "risup")
        return [
            Module(
                data=preset,
                component_type="preset",
                source=SourceInfo(path=p, format=fmt, size=size, sha256=digest),
                anomalies=notes,
            )
        ]
    return [_read_json(fp, size, p, fmt)]


def _read_risum(fp: BinaryIO, size: int, p: str, with_assets: bool) -> Module:
    h = hashlib.sha256()
    got = read_risum_stream(fp, size, hasher=h, with_assets=with_assets)
    anomalies = got.anomalies + _missing_fields(got.module, "/module")
    return Module(
        data=got.module,
        source=SourceInfo(path=p, format="risum", size=size, sha256=h.hexdigest()),
        assets=got.assets,
        anomalies=anomalies,
    )


def _missing_fields(module: dict[str, object], prefix: str) -> list[Anomaly]:
    out = []
    for key in ("name", "id"):
        if not isinstance(module.get(key), str) or not module.get(key):
            out.append(Anomaly(f"missing-{key}", f"{prefix}/{key}", f"module has no {key} string"))
    return out


def _read_charx(fp: BinaryIO, size: int, p: str, fmt: str, with_assets: bool) -> list[Module]:
    got = charx.read_charx(fp, with_assets=with_assets)
    digest = _stream_sha256(fp, size)
    out: list[Module] = []
    view = card.card_module_data(got.card_data or {}, got.module.module if got.module else None)
    # the card's own triggers, regex, CBS ...; or a card whose module RisuAI does not load
    if card.has_active_content(view) or got.module_dropped:
        # (the card's warnings go with its module; a card without one carries them itself)
        out.append(Module(data=view, component_type="character", card=got.card,
                          source=SourceInfo(path=p, format=fmt, size=size, sha256=digest,
                                            member=charx.CARD),
                          anomalies=[] if got.module else list(got.anomalies)))
    if got.module is None:
        return out
    data = got.module.module
    anomalies = list(got.anomalies)
    name = data.get("name")
    if not isinstance(name, str) or not name:
        data["name"] = f"{got.card.get('name') or 'Character'} Module"
        anomalies.append(
            Anomaly(
                "module-name-defaulted",
                f"{charx.MODULE}: /module/name",
                f"embedded module has no name; named {data['name']!r} as RisuAI does",
            )
        )
    if not isinstance(data.get("id"), str) or not data.get("id"):
        anomalies.append(
            Anomaly("missing-id", f"{charx.MODULE}: /module/id", "module has no id string")
        )
    assets: list[AssetInfo] = got.module.assets
    return [
        *out,
        Module(
            data=data,
            component_type="module",
            source=SourceInfo(path=p, format=fmt, size=size, sha256=digest, member=charx.MODULE),
            assets=assets,
            anomalies=anomalies,
            card=got.card,
        )
    ]


def _read_png(fp: BinaryIO, size: int, p: str) -> list[Module]:
    """A PNG card's own active content as a ``character`` component (``[]`` when it has
    none, as a ``.charx`` card without a module)."""
    got = png.read_png_card(fp, size)
    view = png.card_view(got.card)
    if not card.has_active_content(view):
        return []
    return [Module(data=view, component_type="character", card=got.facts,
                   source=SourceInfo(path=p, format="png-card", size=size,
                                     sha256=_stream_sha256(fp, size), member=got.key),
                   anomalies=got.anomalies)]


def _read_json(fp: BinaryIO, size: int, p: str, fmt: str) -> Module:
    raw, digest = _HashingFile.read_all(fp, size, MAX_JSON_BYTES, "JSON file")
    obj = loads_object(raw, where="JSON", what="JSON export")
    actual = exports.classify_object(obj)
    if actual is None:
        raise FormatError(
            Code.UNSUPPORTED_EXPORT,
            'JSON object is not a Risu export: expected "type" risuModule / risu / regex, '
            'or an "entries" world book',
            where="/type",
        )
    data, ctype = exports.normalise(obj, actual)
    anomalies = _missing_fields(data, "") if actual == "json-module" else []
    return Module(
        data=data,
        component_type=ctype,
        source=SourceInfo(path=p, format=actual, size=size, sha256=digest),
        anomalies=anomalies,
    )
