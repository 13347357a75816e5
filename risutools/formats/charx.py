"""``.charx`` character cards (a ZIP) and CharX-JPEG (a JPEG with the ZIP appended).

Only the members needed are read: ``card.json`` and ``module.risum`` (plus card
assets when explicitly asked for by ``unpack``).  Every member is inflated in a
bounded, streamed way: a member that inflates past ``MAX_MEMBER_BYTES`` (50 MiB,
like RisuAI's own skip limit) or past ``MAX_RATIO`` times its compressed size
(once over 1 MiB) is refused, so a zip bomb costs little time and memory.
Member names are never used as paths here; unsafe names are reported.  Before
``zipfile`` parses the central directory, its declared size and entry count are
checked (``MAX_CD_BYTES``, ``MAX_MEMBERS``) so a many-member archive costs little.
A ``card.json`` or ``module.risum`` present twice is refused: RisuAI keeps the last
copy, and a reviewer must never be shown a different module from the one it loads.
"""

from __future__ import annotations

import struct
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from risutools.errors import FormatError
from risutools.formats.jsonsafe import loads_object
from risutools.formats.model import Anomaly
from risutools.formats.risum import RisumContents, read_risum_bytes

MAX_MEMBER_BYTES = 50 * 1024 * 1024
MAX_RATIO = 200
RATIO_FLOOR = 1024 * 1024
MAX_MEMBERS = 65535
#: largest central directory accepted (bounds the entries zipfile would build)
MAX_CD_BYTES = 4 * 1024 * 1024
#: bound on all card assets ``unpack`` inflates together (also <= 1 MiB + 200x the file)
MAX_TOTAL_BYTES = 1024 * 1024 * 1024
CARD = "card.json"
MODULE = "module.risum"
JPEG_MAGIC = b"\xff\xd8\xff"
ZIP_MAGIC = b"PK\x03\x04"


@dataclass
class CharxContents:
    card: dict[str, Any]
    module: RisumContents | None
    anomalies: list[Anomaly] = field(default_factory=list)
    card_data: dict[str, Any] | None = None  # card.json as read (its active content)


def _shown(name: str, limit: int = 80) -> str:
    """A member name for a message: repr (one line), long names cut."""
    return repr(name if len(name) <= limit else name[:limit] + "...")


def check_directory(fp: BinaryIO) -> None:
    """Refuse a central directory that declares too many entries or too many bytes.

    Reads only the end-of-central-directory record (and its ZIP64 twin); an
    archive without one is left to ``zipfile`` to report.
    """
    size = fp.seek(0, 2)
    tail_len = min(size, 22 + 65535)
    fp.seek(size - tail_len)
    tail = fp.read(tail_len)
    at = tail.rfind(b"PK\x05\x06")
    if at < 0 or at + 22 > len(tail):
        return
    entries, cd_size = struct.unpack_from("<xxxxxxxxxxHI", tail, at)
    rec = at - 20 - 56  # ZIP64 record, located just before its locator
    zip64 = tail[at - 20 : at - 16] == b"PK\x06\x07" and tail[rec : rec + 4] == b"PK\x06\x06"
    if rec >= 0 and zip64:
        entries, cd_size = struct.unpack_from("<QQ", tail, rec + 32)
    if entries > MAX_MEMBERS:
        raise FormatError("zip-invalid", f"declares {entries} members; the bound is {MAX_MEMBERS}")
    if cd_size > MAX_CD_BYTES:
        raise FormatError(
            "zip-invalid",
            f"central directory of {cd_size} bytes exceeds the {MAX_CD_BYTES} byte bound",
        )


def open_zip(fp: BinaryIO) -> zipfile.ZipFile:
    """Open a ZIP (prepended bytes such as a JPEG are skipped via the central directory)."""
    try:
        check_directory(fp)
        fp.seek(0)
        zf = zipfile.ZipFile(fp)
    except FormatError:
        raise
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError) as exc:
        raise FormatError("zip-invalid", f"not a readable ZIP archive: {exc}") from None
    except Exception as exc:  # zipfile raises assorted errors on hostile directories
        raise FormatError("zip-invalid", f"not a readable ZIP archive: {exc!r}") from None
    if len(zf.infolist()) > MAX_MEMBERS:
        raise FormatError("zip-invalid", f"more than {MAX_MEMBERS} members")
    return zf


def is_unsafe_name(name: str) -> bool:
    """True for member names that would escape a target directory if used as paths."""
    n = name.replace("\\", "/")
    if n.startswith("/") or (len(n) > 1 and n[1] == ":"):
        return True
    return any(part == ".." for part in n.split("/"))


def read_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, limit: int = MAX_MEMBER_BYTES) -> bytes:
    """Inflate one member with the size and ratio bounds described in the module docstring."""
    where = f"member {_shown(info.filename)}"
    if info.file_size > limit:
        raise FormatError(
            "zip-member-too-large",
            f"declares {info.file_size} bytes inflated; the bound is {limit}",
            where=where,
        )
    parts: list[bytes] = []
    total = 0
    try:
        with zf.open(info) as member:
            while True:
                chunk = member.read(64 * 1024)
                if not chunk:
                    break
                total += len(chunk)
                if total > limit:
                    raise FormatError(
                        "zip-member-too-large",
                        f"inflates past the {limit} byte bound",
                        where=where,
                    )
                if total > RATIO_FLOOR and total > MAX_RATIO * max(info.compress_size, 1):
                    raise FormatError(
                        "zip-bomb",
                        f"inflates more than {MAX_RATIO}x its compressed size "
                        f"({info.compress_size} bytes); refused",
                        where=where,
                    )
                parts.append(chunk)
    except FormatError:
        raise
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError) as exc:
        raise FormatError("zip-invalid", f"cannot inflate: {exc}", where=where) from None
    except (NotImplementedError, RuntimeError) as exc:  # unknown method, encrypted
        raise FormatError("zip-invalid", f"cannot inflate: {exc}", where=where) from None
    return b"".join(parts)


def _member(zf: zipfile.ZipFile, name: str) -> zipfile.ZipInfo | None:
    """The one member called ``name``; two of them is ambiguous and refused."""
    found = [info for info in zf.infolist() if info.filename == name]
    if len(found) > 1:
        raise FormatError(
            "zip-duplicate-member",
            f"{len(found)} members are named {name!r}; RisuAI would load the last one, "
            "so which one to review is ambiguous",
            where="zip",
        )
    return found[0] if found else None


def embedded_member(uri: str) -> str | None:
    """``embeded://assets/x.png`` (RisuAI's spelling) or ``embedded://...`` -> member name."""
    for scheme in ("embeded://", "embedded://", "__asset:"):
        if uri.startswith(scheme):
            return uri[len(scheme) :]
    return None


def read_charx(fp: BinaryIO, *, with_assets: bool = False) -> CharxContents:
    """Read ``card.json`` facts and the embedded ``module.risum`` (if any)."""
    zf = open_zip(fp)
    anomalies: list[Anomaly] = []
    with zf:
        infos = zf.infolist()
        unsafe = sorted(i.filename for i in infos if is_unsafe_name(i.filename))
        if unsafe:
            shown = ", ".join(_shown(n) for n in unsafe[:5])
            anomalies.append(
                Anomaly(
                    "zip-unsafe-member-name",
                    "zip",
                    f"{len(unsafe)} member name(s) would escape a folder ({shown}); "
                    "they are never written under their own name",
                )
            )
        card_info = _member(zf, CARD)
        if card_info is None:
            raise FormatError(
                "zip-no-card", "ZIP has no card.json: not a character card", where="zip"
            )
        card_obj = loads_object(read_member(zf, card_info), where=CARD, what="card.json")
        card = _card_facts(card_obj, zf, anomalies)
        module: RisumContents | None = None
        mod_info = _member(zf, MODULE)
        if mod_info is not None:
            module = read_risum_bytes(
                read_member(zf, mod_info), with_assets=with_assets, where=f"{MODULE}: "
            )
            anomalies.extend(module.anomalies)
            module.anomalies = []
    return CharxContents(card=card, module=module, anomalies=anomalies, card_data=card_obj)


def _card_facts(
    card: dict[str, Any], zf: zipfile.ZipFile, anomalies: list[Anomaly]
) -> dict[str, Any]:
    spec = card.get("spec")
    if spec != "chara_card_v3":
        anomalies.append(
            Anomaly("card-spec", CARD, f'card.json spec is {spec!r}, expected "chara_card_v3"')
        )
    data = card.get("data")
    data = data if isinstance(data, dict) else {}
    name = data.get("name")
    sizes = {i.filename: i.file_size for i in zf.infolist()}
    assets: list[dict[str, Any]] = []
    raw_assets = data.get("assets")
    if isinstance(raw_assets, list):
        for a in raw_assets:
            if not isinstance(a, dict):
                continue
            uri = a.get("uri") if isinstance(a.get("uri"), str) else ""
            member = embedded_member(uri) if uri else None
            assets.append(
                {
                    "type": a.get("type") if isinstance(a.get("type"), str) else "",
                    "name": a.get("name") if isinstance(a.get("name"), str) else "",
                    "ext": a.get("ext") if isinstance(a.get("ext"), str) else "",
                    "member": member,
                    "size": sizes.get(member) if member else None,
                }
            )
    return {
        "spec": spec if isinstance(spec, str) else None,
        "spec_version": card.get("spec_version")
        if isinstance(card.get("spec_version"), str)
        else None,
        "name": name if isinstance(name, str) else "",
        "assets": assets,
        "members": len(sizes),
    }


def iter_card_assets(fp: BinaryIO) -> Iterator[tuple[str, bytes | None, str]]:
    """Yield (member name, bytes or None if refused, reason) for members under ``assets/``.

    Besides the per-member bounds, all members together inflate to at most
    ``min(MAX_TOTAL_BYTES, RATIO_FLOOR + MAX_RATIO * file size)``; members past
    that budget are refused (``zip-total-too-large``), so memory stays bounded.
    """
    size = fp.seek(0, 2)
    total_bound = min(MAX_TOTAL_BYTES, RATIO_FLOOR + MAX_RATIO * size)
    over = f"zip-total-too-large: card assets together inflate past {total_bound} bytes"
    budget = total_bound
    zf = open_zip(fp)
    with zf:
        for info in zf.infolist():
            if info.is_dir():
                continue
            name = info.filename.replace("\\", "/")
            if not (name.startswith("assets/") or is_unsafe_name(name)):
                continue
            limit = min(MAX_MEMBER_BYTES, budget)
            try:
                data = read_member(zf, info, limit=limit)
            except FormatError as exc:
                total = exc.code == "zip-member-too-large" and limit < MAX_MEMBER_BYTES
                yield info.filename, None, over if total else f"{exc.code}: {exc.why}"
                continue
            budget -= len(data)
            yield info.filename, data, ""


def zip_names(fp: BinaryIO) -> list[str] | None:
    """Member names of a ZIP (None if it is not one); reads only the central directory."""
    try:
        check_directory(fp)
        fp.seek(0)
        zf = zipfile.ZipFile(fp)
    except Exception:  # detection only: anything unreadable is simply "not a ZIP"
        return None
    with zf:
        return [i.filename for i in zf.infolist()[:MAX_MEMBERS]]
