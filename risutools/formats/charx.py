"""``.charx`` character cards (a ZIP) and CharX-JPEG (a JPEG with the ZIP appended).

Only the members needed are read: ``card.json`` and ``module.risum`` (plus card
assets when explicitly asked for by ``unpack``).  Every member is inflated in a
bounded, streamed way: a member that inflates past ``MAX_MEMBER_BYTES`` (50 MiB,
like RisuAI's own skip limit) or past ``MAX_RATIO`` times its compressed size
(once over 1 MiB) is refused, so a zip bomb costs little time and memory.
Member names are never used as paths here; unsafe names are reported.
"""

from __future__ import annotations

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
CARD = "card.json"
MODULE = "module.risum"
JPEG_MAGIC = b"\xff\xd8\xff"
ZIP_MAGIC = b"PK\x03\x04"


@dataclass
class CharxContents:
    card: dict[str, Any]
    module: RisumContents | None
    anomalies: list[Anomaly] = field(default_factory=list)


def open_zip(fp: BinaryIO) -> zipfile.ZipFile:
    """Open a ZIP (prepended bytes such as a JPEG are skipped via the central directory)."""
    try:
        zf = zipfile.ZipFile(fp)
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
    where = f"member {info.filename!r}"
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
    for info in zf.infolist():
        if info.filename == name:
            return info
    return None


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
            shown = ", ".join(repr(n) for n in unsafe[:5])
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
    return CharxContents(card=card, module=module, anomalies=anomalies)


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
    """Yield (member name, bytes or None if refused, reason) for members under ``assets/``."""
    zf = open_zip(fp)
    with zf:
        for info in zf.infolist():
            if info.is_dir():
                continue
            name = info.filename.replace("\\", "/")
            if not (name.startswith("assets/") or is_unsafe_name(name)):
                continue
            try:
                yield info.filename, read_member(zf, info), ""
            except FormatError as exc:
                yield info.filename, None, f"{exc.code}: {exc.why}"


def zip_names(fp: BinaryIO) -> list[str] | None:
    """Member names of a ZIP (None if it is not one); reads only the central directory."""
    try:
        zf = zipfile.ZipFile(fp)
    except Exception:  # detection only: anything unreadable is simply "not a ZIP"
        return None
    with zf:
        return [i.filename for i in zf.infolist()[:MAX_MEMBERS]]
