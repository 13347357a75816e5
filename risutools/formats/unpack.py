"""``unpack`` a container into a folder and ``pack`` such a folder back into a ``.risum``.

Folder layout written by :func:`unpack`::

    module.json      the module object (pretty JSON, key order as read)
    manifest.json    source facts + one entry per asset (file, size, sha256)
    assets/          module assets, sanitised unique names
    card.json        (.charx only) the card's own card.json
    card-assets/     (.charx only) the card's asset members, sanitised unique names

Nothing is ever written outside the folder (every target is resolved and
checked, symlinks included) and existing files are refused unless ``force``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
import sys
import unicodedata
from collections.abc import Iterator
from itertools import chain
from pathlib import Path
from typing import Any, NamedTuple

from risutools.errors import Code, FormatError, UsageError
from risutools.formats import charx, rpack
from risutools.formats.exports import module_object
from risutools.formats.files import open_regular, read_to_bound
from risutools.formats.jsonsafe import loads_object
from risutools.formats.reader import MAX_JSON_BYTES, detect, read_path
from risutools.formats.risum import (
    MAX_ASSETS,
    MAX_FRAME_BYTES,
    RISUM_END,
    asset_head,
    read_risum_bytes,
    risum_head,
)
from risutools.fsio import TMP_MARK, atomic_write, write_many
from risutools.pathnames import real_path, show_name
from risutools.printable import json_text
from risutools.safeio import is_regular, sha256_regular
from risutools.targets import check_target, make_folder, os_error_line

MANIFEST = "manifest.json"
MANIFEST_KIND = "risutools-unpack-1"
#: Windows device names (any extension, any case): COM and LPT with 0-9 and the
#: superscripts 1-3, which Windows reads as digits too ("Naming Files, Paths, and Namespaces")
_RESERVED = {
    "con", "prn", "aux", "nul",
    *(f"{port}{n}" for port in ("com", "lpt") for n in ("0123456789" "\u00b9\u00b2\u00b3")),
}  # fmt: skip
_SNIFF = (
    (b"\x89PNG\r\n\x1a\n", "png"),
    (b"\xff\xd8\xff", "jpg"),
    (b"GIF8", "gif"),
    (b"ID3", "mp3"),
    (b"OggS", "ogg"),
    (b"fLaC", "flac"),
)


def sniff_ext(head: bytes) -> str:
    """File extension from the first bytes of an asset ('bin' when unknown)."""
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "webp"
    if head[:4] == b"RIFF" and head[8:12] == b"WAVE":
        return "wav"
    if head[4:8] == b"ftyp":
        return "mp4"
    for magic, ext in _SNIFF:
        if head.startswith(magic):
            return ext
    return "bin"


#: bytes a file name ``unpack`` writes may take: NAME_MAX (255) less what the writer's temp
#: file adds to it first (``"." + name + TMP_MARK + "<pid>-<8 hex>"``, a pid of 7 digits)
NAME_BYTES = 255 - len(f".{TMP_MARK}4194304-01234567")
#: bytes of a sanitised name: room left for a ``_`` prefix, a ``-N`` suffix and an extension
SANITISED_BYTES = NAME_BYTES - 24


def _cut_utf8(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` bytes of UTF-8, on a character boundary."""
    raw = text.encode("utf-8", "surrogatepass")
    return text if len(raw) <= limit else raw[:limit].decode("utf-8", "ignore")


def _capped(name: str, max_len: int) -> str:
    """``name`` within ``max_len`` characters and :data:`SANITISED_BYTES` bytes, its
    extension (up to 10 characters after the last dot) kept when the rest is cut."""
    if len(name) <= max_len and len(name.encode("utf-8", "surrogatepass")) <= SANITISED_BYTES:
        return name
    stem, dot, ext = name.rpartition(".")
    if not dot or not stem or len(ext) > 10:
        stem, ext = name, ""
    keep = len(ext) + 1 if ext else 0
    stem = _cut_utf8(stem[:max_len - keep], SANITISED_BYTES - len(ext.encode()) - keep)
    return f"{stem}.{ext}" if ext else stem


def sanitise(name: str, *, fallback: str = "asset", max_len: int = 80) -> str:
    """A safe single path component: letters/digits (any script), ``-``, ``_``, ``.``.

    Directory parts are dropped (only the last component of ``a/../b`` is kept),
    leading dots are removed, Windows device names are prefixed; at most ``max_len``
    characters and :data:`SANITISED_BYTES` bytes of UTF-8 (a file name is bounded in bytes:
    70 four-byte letters made a name no file system takes).
    """
    base = name.replace("\\", "/").split("/")[-1]
    base = unicodedata.normalize("NFC", base)
    chars = [c if (c.isalnum() or c in "-_. ") else "_" for c in base]
    clean = "".join(chars).strip(" .")
    clean = _capped(clean.replace(" ", "_"), max_len).strip("._")
    if not clean:
        clean = fallback
    if clean.split(".")[0].lower() in _RESERVED:
        clean = "_" + clean
    return clean


def _ext(ext: str, head: bytes) -> str:
    e = "".join(c for c in ext.lower() if c.isascii() and c.isalnum())[:10]
    return e or sniff_ext(head)


class _Names:
    """Unique, case-insensitively distinct file names within one folder."""

    def __init__(self) -> None:
        self.used: set[str] = set()
        #: the next suffix to try for each name asked for (case folded): N assets of one
        #: name take -2 ... -N once each, not a search from -2 every time (20,000 assets
        #: named "x": 41 s, a fifth fuzzing pass)
        self.next: dict[tuple[str, str], int] = {}

    def take(self, stem: str, ext: str) -> str:
        """A name for ``stem.ext`` not taken yet (``stem-N.ext``), at most :data:`NAME_BYTES`
        bytes of UTF-8 whatever ``stem`` and ``ext`` are: the stem is cut to leave room."""
        ext = _cut_utf8(ext, 16)
        stem = _cut_utf8(stem, NAME_BYTES - len(ext.encode("utf-8", "surrogatepass")) - 9)
        candidate = f"{stem}.{ext}" if ext else stem
        key = (stem.lower(), ext.lower())
        n = self.next.get(key, 2)
        while candidate.lower() in self.used:
            candidate = f"{stem}-{n}.{ext}" if ext else f"{stem}-{n}"
            n += 1
        self.next[key] = n
        self.used.add(candidate.lower())
        return candidate


def _inside(root: Path, rel: str, verb: str = "write") -> Path:
    """``root / rel`` resolved; refuses anything that ends up outside ``root``, and a name
    no file can have (a manifest's ``"\\ud800"``: ``os`` raises ``ValueError`` for it)."""
    try:
        target = real_path(root / rel)
    except ValueError:
        raise FormatError(Code.OUTSIDE_TARGET, f"refusing {rel!r}: no file can have that name "
                          "(an unpaired surrogate or a NUL character)", where=rel) from None
    if target != root and root not in target.parents:
        raise FormatError(
            Code.OUTSIDE_TARGET,
            f"refusing to {verb} {rel!r}: it resolves outside the "
            + ("output folder" if verb == "write" else "folder packed"),
            where=rel,
        )
    return target


def _json_bytes(value: Any) -> bytes:
    """``value`` as UTF-8 JSON (2-space indent) that ``pack`` and every JSON reader take
    back: a lone surrogate (a module's ``"\\ud800"``, a file name's undecodable byte) and
    every control or format character written as a ``\\uXXXX`` escape, never as bytes that
    are not UTF-8 (:func:`~risutools.printable.json_text`)."""
    return (json_text(json.dumps(value, ensure_ascii=False, indent=2, allow_nan=False))
            + "\n").encode("utf-8")


def _out_folder(out_dir: str | os.PathLike[str]) -> Path:
    """The output folder, made if need be, resolved."""
    root_given = Path(out_dir)
    if root_given.exists() and not root_given.is_dir():
        raise FormatError(Code.NOT_A_DIRECTORY,
                          "output exists and is not a folder", path=str(out_dir))
    try:  # (a link that leads nowhere, a loop: one line, as every command's output folder)
        make_folder(root_given)
    except OSError as exc:
        raise os_error_line(exc, out_dir) from None
    return real_path(root_given)


def unpack(path: str | os.PathLike[str], out_dir: str | os.PathLike[str], *,
           force: bool = False) -> dict[str, Any]:  # fmt: skip
    """Unpack ``path`` into ``out_dir``; returns the manifest written."""
    src = os.fspath(path)
    modules = read_path(src, with_assets=True)
    root = _out_folder(out_dir)
    files: dict[str, bytes] = {}
    manifest: dict[str, Any] = {"manifest": MANIFEST_KIND}
    # (a card holds its own component, when it has active content, and its embedded
    # module: the module is what module.json holds and pack takes back; the card is card.json)
    module = next((m for m in modules if m.component_type != "character"),
                  modules[0] if modules else None)
    source = module.source if module else None
    if source is None:  # a card without a module: describe the file itself

        manifest["source"] = {
            "file": os.path.basename(src),
            "format": detect(src),
            "size": os.path.getsize(src),
            "sha256": sha256_regular(src, sys.maxsize),
            "member": None,
        }
    else:
        manifest["source"] = {
            "file": os.path.basename(source.path),
            "format": source.format,
            "size": source.size,
            "sha256": source.sha256,
            "member": source.member,
        }
    manifest["component_type"] = module.component_type if module else None
    manifest["module"] = "module.json" if module else None
    entries: list[dict[str, Any]] = []
    if module is not None:
        files["module.json"] = _json_bytes(module.data)
        names = _Names()
        for a in module.assets:
            entry: dict[str, Any] = {"index": a.index, "name": a.name, "path": a.path, "ext": a.ext}
            if a.data is None:
                entry.update(file=None, size=None, sha256=None)
            else:
                fname = names.take(sanitise(a.name, fallback=f"asset-{a.index}"),
                                   _ext(a.ext, a.head))  # fmt: skip
                rel = f"assets/{fname}"
                files[rel] = a.data
                entry.update(file=rel, size=len(a.data), sha256=hashlib.sha256(a.data).hexdigest())
            entries.append(entry)
        manifest["anomalies"] = [
            {"code": x.code, "where": x.where, "message": x.message} for x in module.anomalies
        ]
    manifest["assets"] = entries
    if manifest["source"]["format"] in ("charx", "charx-jpeg"):
        manifest["card"] = "card.json"
        manifest["card_assets"] = _card_files(src, files)
    _write_all(root, files, manifest, force, src)
    return manifest


def _card_files(src: str, files: dict[str, bytes]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    names = _Names()
    fp, _ = open_regular(src)
    with fp:
        zf = charx.open_zip(fp)
        with zf:
            info = next((i for i in zf.infolist() if i.filename == charx.CARD), None)
            if info is not None:
                # (a CRC-32 RisuAI does not compare: read_path noted it already)
                files["card.json"] = charx.read_member(zf, info, notes=[], fflate=True)
        fp.seek(0)
        for member, data, reason in charx.iter_card_assets(fp):
            if data is None:
                out.append({"member": member, "file": None, "skipped": reason})
                continue
            stem, _, ext = sanitise(member).rpartition(".")
            if not stem:
                stem, ext = ext, ""
            fname = names.take(stem, _ext(ext, data[:16]))
            rel = f"card-assets/{fname}"
            files[rel] = data
            out.append(
                {"member": member, "file": rel, "size": len(data),
                 "sha256": hashlib.sha256(data).hexdigest(),
                 **({"warning": reason} if reason else {})}
            )  # fmt: skip
    return out


def _write_all(root: Path, files: dict[str, bytes], manifest: dict[str, Any], force: bool,
               src: str) -> None:
    """Write the files and the manifest into ``root`` (none over the file unpacked:
    ``--force`` replaces what an earlier unpack left, never the input)."""
    plan = {rel: _inside(root, rel) for rel in [*sorted(files), MANIFEST]}
    for target in plan.values():  # a file where a folder of the output goes: not-a-directory
        check_target(target, folder=False)
    for rel, target in plan.items():
        with contextlib.suppress(OSError):
            if os.path.samefile(target, src):
                raise UsageError("--output", f"{rel} would be written over the file being "
                                 f"unpacked ({show_name(src)}); unpack into another folder")
    if not force:
        existing = [rel for rel, target in plan.items() if target.exists()]
        if existing:
            raise FormatError(
                Code.TARGET_EXISTS,
                f"{len(existing)} file(s) already exist (e.g. {existing[0]}); use --force "
                "to overwrite",
                path=str(root),
            )
    try:
        write_many([(plan[rel], files[rel]) for rel in sorted(files)], expect_absent=not force)
        atomic_write(plan[MANIFEST], _json_bytes(manifest), expect_absent=not force)
    except (NotADirectoryError, IsADirectoryError) as exc:  # (what is in the way, named)
        raise os_error_line(exc, root) from None
    except OSError as exc:  # (a name too long names the file it would have had, not its temp)
        name = exc.filename2 if exc.filename2 is not None else exc.filename
        raise FormatError(Code.UNWRITABLE, f"cannot write {show_name(os.fspath(name))}: "
                          f"{exc.strerror or exc}", path=str(root)) from None


# -- pack ----------------------------------------------------------------------


def _read_regular(path: Path, what: str, limit: int | None = None) -> bytes:
    """The bytes of ``path`` if it is a regular file (never a device, FIFO or folder)."""
    fp, size = open_regular(path)
    with fp:
        if limit is not None and size > limit:
            raise FormatError(
                Code.TOO_LARGE, f"{what} of {size} bytes exceeds the {limit} byte bound",
                path=str(path),
            )  # fmt: skip
        try:
            return fp.read(size) if limit is None else read_to_bound(fp, size, limit)
        except OSError as exc:
            raise FormatError(
                Code.UNREADABLE, f"cannot read {what}: {exc.strerror}", path=str(path)
            ) from None


def _load_json(path: Path, what: str) -> dict[str, Any]:
    raw = _read_regular(path, what, MAX_JSON_BYTES)
    if not raw.strip():
        raise FormatError(Code.EMPTY_FILE, "the file is empty", path=str(path))
    try:  # the path names the file: no second copy of its name as the place
        return loads_object(raw, where="", what=what)
    except FormatError as exc:
        raise exc.with_path(str(path)) from None


def _module_of(obj: dict[str, Any], where: str) -> dict[str, Any]:
    """The module of a module JSON: the one every reader takes (:func:`module_object`),
    when it is a module with a ``name``."""
    module = module_object(obj)
    if module is not obj or (obj.get("type") in (None, "risuModule")
                             and isinstance(obj.get("name"), str)):
        return module
    raise FormatError(
        Code.PACK_INVALID_INPUT,
        'expected a module object (with "name"), a {"type": "risuModule", ...} export or '
        'the {"module": {...}, "type": "risuModule"} wrapper (one with a "name" or "id" '
        "of its own is read as the module itself, by every command)",
        where=where,
    )


class AssetFile(NamedTuple):
    """An asset file a manifest lists (checked to be inside the folder), read when packed."""

    path: Path
    what: str  # "asset N", for its errors


def pack_inputs(src: str | os.PathLike[str]) -> tuple[dict[str, Any], list[AssetFile]]:
    """The module and the asset files described by an unpacked folder, manifest or module
    JSON (the files are read as they are packed: :func:`asset_pieces`)."""
    p = Path(src)
    folder = p.is_dir()  # (a name too long raises here: the command's one line says so)
    if not folder and not os.path.lexists(p):
        raise FormatError(Code.NOT_FOUND, "no such folder or file", path=str(src))
    if not folder and (p.name != MANIFEST or not is_regular(p)):
        # (a module JSON; or what is no regular file -- a FIFO, a device, a link to nothing
        # or a loop -- opened as every command opens a file, which names what it is)
        return _module_file(p), []
    root = real_path(p if folder else p.parent)
    if not os.path.lexists(root / MANIFEST):
        return _bare_folder(root, src), []
    # (read only inside the folder, and only as a regular file: a link out of it is refused
    # as module.json's is, a FIFO or a device as every file is)
    manifest_path = _inside(root, MANIFEST, "read")
    manifest = _load_json(manifest_path, "manifest.json")
    rel_module = _manifest_module(manifest, manifest_path, root)
    # module.json is the module object exactly as read (unknown fields and all, for
    # lorebook/regex exports too): it is packed verbatim, never re-interpreted.
    module = _load_json(_inside(root, rel_module), "module.json")
    assets = _manifest_assets(manifest, manifest_path, root)
    _check_mapped(module, manifest, manifest_path)
    return module, assets


def _module_file(p: Path) -> dict[str, Any]:
    """The module of a module JSON file given alone (it can carry no asset)."""
    module = _module_of(_load_json(p, "module JSON"), p.name)
    assets = module.get("assets")
    if isinstance(assets, list) and assets:
        raise FormatError(
            Code.PACK_ASSETS_MISSING,
            f"the module lists {len(assets)} asset(s) but a JSON file carries none; "
            "pack the folder written by `risutools unpack` instead",
            path=str(p),
        )
    return module


def _bare_folder(root: Path, src: str | os.PathLike[str]) -> dict[str, Any]:
    """The module of a folder without manifest.json: its module.json (and no asset)."""
    if not os.path.lexists(root / "module.json"):  # (one that is no file: named when read)
        raise FormatError(
            Code.PACK_INVALID_INPUT,
            "the folder has neither manifest.json nor module.json (pack a folder written "
            "by `risutools unpack`, or a module JSON file)",
            path=str(src),
        )
    module = _module_of(_load_json(_inside(root, "module.json", "read"), "module.json"),
                        "module.json")
    if isinstance(module.get("assets"), list) and module["assets"]:
        raise FormatError(
            Code.PACK_ASSETS_MISSING,
            "module lists assets but the folder has no manifest.json mapping them to files",
            path=str(root),
        )
    return module


def _manifest_module(manifest: dict[str, Any], manifest_path: Path, root: Path) -> str:
    """The module file a manifest names, once the manifest is one ``pack`` can read."""
    if manifest.get("manifest") != MANIFEST_KIND:
        raise FormatError(
            Code.PACK_INVALID_INPUT, f"manifest.json is not a {MANIFEST_KIND} manifest",
            path=str(manifest_path), where="/manifest",
        )  # fmt: skip
    if manifest.get("component_type") not in ("module", "lorebook"):
        raise FormatError(
            Code.PACK_INVALID_INPUT,
            f"cannot pack a {manifest.get('component_type')!r} into a .risum",
            path=str(manifest_path), where="/component_type",
        )
    rel_module = manifest.get("module")
    if not isinstance(rel_module, str):
        raise FormatError(Code.PACK_INVALID_INPUT, 'manifest names no "module" file (a file '
                          "name, as unpack writes it)", path=str(manifest_path), where="/module")
    return rel_module


def _manifest_assets(manifest: dict[str, Any], manifest_path: Path, root: Path
                     ) -> list[AssetFile]:
    """Each asset file the manifest lists, in frame order (no gap before a file), checked to
    be inside the folder (read when packed)."""
    blobs: list[AssetFile] = []
    entries = manifest.get("assets", [])
    if not isinstance(entries, list):
        raise FormatError(Code.PACK_INVALID_INPUT, "assets is not a list",
                          path=str(manifest_path), where="/assets")
    gap: int | None = None
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise FormatError(Code.PACK_INVALID_INPUT, f"asset {i} is not a mapping",
                              path=str(manifest_path), where=f"/assets/{i}")
        rel = entry.get("file")
        if rel is None:
            gap = i if gap is None else gap
            continue
        if not isinstance(rel, str):
            raise FormatError(Code.PACK_INVALID_INPUT, f"asset {i}: file is not a string",
                              path=str(manifest_path), where=f"/assets/{i}/file")  # fmt: skip
        if gap is not None:
            raise FormatError(
                Code.PACK_ASSET_MISSING,
                f"asset {gap} has no file but asset {i} does: frames would be out of step",
                path=str(manifest_path), where=f"/assets/{gap}/file",
            )
        if len(blobs) == MAX_ASSETS:  # (the reader's bound on frames: checked before writing)
            raise FormatError(
                Code.TOO_LARGE,
                f"the manifest lists more than {MAX_ASSETS} asset files; a .risum holds at "
                f"most {MAX_ASSETS} asset frames (its reader refuses more)",
                path=str(manifest_path), where=f"/assets/{i}/file",
            )
        blobs.append(AssetFile(_inside(root, rel), f"asset {i}"))
    return blobs


def _check_mapped(module: dict[str, Any], manifest: dict[str, Any], manifest_path: Path
                  ) -> None:
    """Every asset the module lists has its manifest entry (``unpack`` writes one each, with
    ``file: null`` for an asset without data): a manifest without them, or with fewer,
    would drop the assets silently, as a folder without a manifest is refused for."""
    listed, entries = module.get("assets"), manifest.get("assets", [])
    if isinstance(listed, list) and len(listed) > len(entries):
        raise FormatError(
            Code.PACK_ASSETS_MISSING,
            f"module.json lists {len(listed)} asset(s) but manifest.json has "
            f"{len(entries) or 'no'} asset entr{'y' if len(entries) == 1 else 'ies'}: "
            "the assets not listed would be dropped (list each with its file, as unpack does)",
            path=str(manifest_path), where="/assets",
        )


#: bytes of an asset file read, encoded and written at a time by ``pack``
PACK_CHUNK = 1 << 20


def asset_pieces(asset: AssetFile) -> Iterator[bytes]:
    """The frame of one asset file, a :data:`PACK_CHUNK` at a time: the file opened as a
    regular file (never a device or FIFO), its size taken once, and exactly that many bytes
    read (one that shrinks or grows while packed is refused): memory stays at a chunk
    whatever the asset's size (a 3 GB asset was read whole: MemoryError)."""
    fp, size = open_regular(asset.path)
    with fp:
        yield asset_head(size, asset.what)
        left = size
        try:
            while left:
                chunk = fp.read(min(left, PACK_CHUNK))
                if not chunk:
                    break
                left -= len(chunk)
                yield rpack.encode(chunk)
            changed = bool(left) or bool(fp.read(1))
        except OSError as exc:
            raise FormatError(Code.UNREADABLE, f"cannot read {asset.what}: {exc.strerror}",
                              path=str(asset.path)) from None
    if changed:
        raise FormatError(Code.UNREADABLE, f"{asset.what} changed size while it was packed",
                          path=str(asset.path))


def _check_sizes(assets: list[AssetFile]) -> None:
    """Each asset file within the bytes a frame can hold, before anything is written (a
    file past it would be refused as its frame is reached, after the ones before it were
    streamed; one that grows past it meanwhile is refused then, by :func:`asset_head`)."""
    for asset in assets:
        try:
            st = os.stat(asset.path)
        except OSError:  # (reported when it is read, as every file's error is)
            continue
        if stat.S_ISREG(st.st_mode) and st.st_size > MAX_FRAME_BYTES:
            asset_head(st.st_size, asset.what)


def pack(src: str | os.PathLike[str], out: str | os.PathLike[str], *, force: bool = False) -> int:
    """Write ``out`` (.risum) from ``src``; returns the number of bytes written."""
    module, assets = pack_inputs(src)
    _check_sizes(assets)
    head = risum_head(module)
    try:  # (a module within the bounds as JSON may pass them once wrapped and indented:
        read_risum_bytes(head + RISUM_END)  # a .risum its own reader, and every reader,
    except FormatError as exc:  # refuses; asset frames are read past, whatever their size)
        raise FormatError(exc.code, f"the .risum would be refused when read: {exc.why}",
                          where=exc.where, path=os.fspath(src)) from None
    if os.path.isdir(out):
        raise FormatError(Code.NOT_A_FILE, "is a folder; -o names the .risum file to write "
                          "(e.g. -o DIR/name.risum)", path=os.fspath(out))
    if not force and os.path.lexists(out):
        raise FormatError(Code.TARGET_EXISTS, "the file already exists; use --force to overwrite",
                          path=os.fspath(out))
    written = [0]

    def pieces() -> Iterator[bytes]:  # (one asset's chunk in memory at a time)
        for piece in chain((head,), chain.from_iterable(map(asset_pieces, assets)),
                           (RISUM_END,)):
            written[0] += len(piece)
            yield piece

    try:
        atomic_write(out, pieces(), expect_absent=not force)
    except (NotADirectoryError, IsADirectoryError) as exc:  # (what is in the way, named)
        raise os_error_line(exc, out) from None
    except (FileExistsError, PermissionError) as exc:
        raise FormatError(
            Code.UNWRITABLE, f"cannot write {exc.filename}: {exc.strerror}", path=os.fspath(out)
        ) from None
    return written[0]
