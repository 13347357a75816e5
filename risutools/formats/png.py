"""PNG character cards, read as RisuAI's ``importCharacterProcess`` reads them.

RisuAI (``src/ts/pngChunk.ts`` ``readGenerator``, ``src/ts/characterCards.ts``) skips the
8-byte signature and walks the chunks (big-endian length, type, data, CRC) up to ``IEND``
without comparing a CRC.  A ``tEXt`` chunk's key is its bytes before the first NUL among its
first 70 (decoded as UTF-8 by ``TextDecoder``, which drops a leading BOM), its value the
rest.  The value keyed ``ccv3`` is read when it is not empty, else the one keyed ``chara``;
it is base64 of the card JSON.  ``chara-ext-asset_*`` chunks are the card's assets.

Here the same walk is bounded (:data:`MAX_CHUNKS`; a chunk running past the file, a card
text past :data:`MAX_CARD_TEXT`, a card key twice, text that is not base64: one line each)
and only the card text chunks are read: assets are counted by name and size, never decoded.
"""

from __future__ import annotations

import base64
import binascii
import zlib
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from risutools.errors import Code, FormatError
from risutools.formats.card import CARD_SPECS, card_module_data
from risutools.formats.charx import MAX_MEMBER_BYTES, embedded_member
from risutools.formats.jsonsafe import loads_object
from risutools.formats.model import Anomaly
from risutools.jsontypes import js_truthy

SIGNATURE = b"\x89PNG\r\n\x1a\n"
#: the card text keys, in RisuAI's order of preference
CARD_KEYS = ("ccv3", "chara")
ASSET_PREFIX = "chara-ext-asset_"
#: most chunks walked (a PNG past it is refused: a card could hide behind them)
MAX_CHUNKS = 65536
#: largest card JSON (as a ``.charx``'s ``card.json``) and its base64 text
MAX_CARD_JSON = MAX_MEMBER_BYTES
MAX_CARD_TEXT = 4 * ((MAX_CARD_JSON + 2) // 3)
_KEY_SPAN = 70  # RisuAI looks for the key's NUL among a tEXt chunk's first 70 bytes
_B64 = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True)
class TextChunk:
    offset: int  # of the chunk's length field
    key: str
    value_at: int  # absolute offset of the value (after the key's NUL)
    value_len: int


@dataclass
class Walk:
    cards: list[TextChunk] = field(default_factory=list)
    assets: dict[str, int] = field(default_factory=dict)  # asset index -> base64 bytes
    problem: FormatError | None = None
    chunks: int = 0


def _bad(why: str, at: int) -> FormatError:
    return FormatError(Code.PNG_INVALID, why, where=f"offset {at}")


def _text_key(head: bytes) -> tuple[str, int]:
    """(key, length of its bytes) of a ``tEXt`` chunk starting ``head``: ("", -1) when no NUL
    is among its first 70 bytes (RisuAI's key is then empty)."""
    nul = head.find(b"\x00", 0, _KEY_SPAN)
    if nul < 0:
        return "", -1
    return head[:nul].decode("utf-8-sig", errors="replace"), nul


def walk(fp: BinaryIO, size: int) -> Walk:
    """The chunks RisuAI meets, from offset 8 to ``IEND`` (or the end of the file); a
    structural problem is kept in ``problem`` (the walk stops there, as RisuAI's does)."""
    out = Walk()
    pos = len(SIGNATURE)
    while pos + 8 <= size:  # (fewer bytes left: RisuAI reads no length, its walk ends)
        if out.chunks >= MAX_CHUNKS:
            out.problem = _bad(f"more than {MAX_CHUNKS} chunks; the bound is {MAX_CHUNKS}", pos)
            break
        out.chunks += 1
        fp.seek(pos)
        head = fp.read(8)
        if len(head) < 8:
            break
        length, ctype = int.from_bytes(head[:4], "big"), head[4:8]
        if ctype == b"IEND":
            break
        if ctype == b"tEXt":
            _note_text(out, fp.read(min(length, _KEY_SPAN)), pos, length)
        if pos + 12 + length > size:
            out.problem = _bad(
                f"chunk {ctype.decode('latin-1')!r} at offset {pos} declares {length} bytes "
                f"of data: it runs past the end of the file ({size} bytes)", pos)
            break
        pos += 12 + length
    return out


def _note_text(out: Walk, head: bytes, pos: int, length: int) -> None:
    key, n = _text_key(head)
    if key in CARD_KEYS:
        out.cards.append(TextChunk(pos, key, pos + 8 + n + 1, length - n - 1))
    elif key.startswith(ASSET_PREFIX):  # (RisuAI's name: both prefixes cut, first match)
        name = key.replace(ASSET_PREFIX + ":", "", 1).replace(ASSET_PREFIX, "", 1)
        out.assets[name] = length - n - 1


def has_signature(head: bytes) -> bool:
    return head.startswith(SIGNATURE)


def named_png(name: str) -> bool:
    """Whether RisuAI's import reads a file so named as a PNG card (``characterCards.ts``:
    ``f.name.endsWith('png')``, never looking at its signature)."""
    return name.endswith("png") or name.lower().endswith(".png")


def looks_like_card(fp: BinaryIO, size: int) -> bool:
    """Detection: a file whose walk meets a card text chunk, or one that cannot be walked
    to its end (past the chunk bound): the reader then says why in one line.  (A PNG, or a
    file :func:`named_png` whatever its signature.)"""
    w = walk(fp, size)
    return bool(w.cards) or (w.problem is not None and w.chunks >= MAX_CHUNKS)


@dataclass
class PngCard:
    card: dict[str, Any]  # the card JSON as read
    facts: dict[str, Any]
    key: str  # the chunk it was read from
    anomalies: list[Anomaly] = field(default_factory=list)


def read_png_card(fp: BinaryIO, size: int) -> PngCard:
    """The card JSON RisuAI imports from this PNG, under the module docstring's bounds."""
    fp.seek(0)
    signed = has_signature(fp.read(len(SIGNATURE)))
    w = walk(fp, size)
    if not signed and not w.cards:
        raise _bad("not a PNG: no PNG signature", 0)
    if w.problem is not None:
        raise w.problem
    chosen: tuple[TextChunk, bytes] | None = None
    for key in CARD_KEYS:
        found = [c for c in w.cards if c.key == key]
        if len(found) > 1:
            raise _bad(f"{len(found)} tEXt chunks are keyed {key!r} (offsets "
                       f"{', '.join(str(c.offset) for c in found[:5])}): which one RisuAI "
                       "reads depends on their sizes, so which to review is ambiguous",
                       found[1].offset)
        if found and chosen is None:
            value = _value(fp, found[0])
            if value:  # (RisuAI: an empty ccv3 text falls back on chara)
                chosen = found[0], value
    if chosen is None:
        raise FormatError(Code.PNG_NO_CARD, "not a card: no ccv3/chara text chunk",
                          where="png")
    chunk, value = chosen
    where = f"{chunk.key} chunk at offset {chunk.offset}"
    raw = _unbase64(value, chunk, where)
    card = loads_object(raw, where=where, what=f"{chunk.key} card JSON")
    anomalies = _crc_note(fp, chunk, where)
    if not signed:
        anomalies.append(Anomaly(
            "png-signature", "offset 0", "no PNG signature: RisuAI reads a file named *.png "
            "as a PNG card whatever its first 8 bytes"))
    spec = card.get("spec")
    if spec not in CARD_SPECS:
        anomalies.append(Anomaly(
            "card-spec", where, f"card spec is {spec!r}, expected \"chara_card_v3\" or "
            "\"chara_card_v2\" (RisuAI imports it as an old Tavern card)"))
    return PngCard(card, _facts(card, w), chunk.key, anomalies)


def _crc_note(fp: BinaryIO, c: TextChunk, where: str) -> list[Anomaly]:
    """A warning when the card chunk's CRC does not match its bytes: RisuAI's walk never
    compares it (``readGenerator`` without ``checkCrc``), so the text is read as it reads it."""
    fp.seek(c.offset + 4)
    body = fp.read(c.value_at + c.value_len - c.offset - 4)
    stored = int.from_bytes(fp.read(4), "big")
    crc = zlib.crc32(body)
    if crc == stored:
        return []
    return [Anomaly("png-crc-mismatch", where,
                    f"CRC-32 is 0x{crc:08x}, the chunk says 0x{stored:08x} (RisuAI's reader "
                    "does not check it: the card is read as it reads it)")]


def _value(fp: BinaryIO, c: TextChunk) -> bytes:
    if c.value_len > MAX_CARD_TEXT:
        raise FormatError(Code.TOO_LARGE, f"the {c.key} text of {c.value_len} bytes exceeds "
                          f"the {MAX_CARD_TEXT} byte bound", where=f"offset {c.offset}")
    fp.seek(c.value_at)
    value = fp.read(c.value_len)
    return value[3:] if value.startswith(_BOM) else value  # (TextDecoder drops a BOM)


def _unbase64(value: bytes, c: TextChunk, where: str) -> bytes:
    """The base64 text decoded; anything but the alphabet and final padding is refused with
    the offset of its first byte in the file (RisuAI's decoder drops such bytes silently)."""
    if value.startswith(b"rcc||"):
        raise FormatError(Code.PNG_ENCRYPTED, "an encrypted card (rcc||...): RisuAI decrypts "
                          "it on import; its content cannot be read for review", where=where)
    body = value.rstrip(b"=")
    junk = set(body.translate(None, _B64))
    if junk or len(value) - len(body) > 2:
        at = min((body.find(bytes([b])) for b in junk), default=len(body))
        raise _bad(f"the {c.key} text is not base64: byte {value[at:at + 1]!r} at offset "
                   f"{c.value_at + at}", c.value_at + at)
    if len(body) % 4 == 1:
        raise _bad(f"the {c.key} text is not base64: {len(body)} characters end inside a "
                   "byte", c.value_at + len(body))
    try:
        return base64.b64decode(body + b"=" * (-len(body) % 4), validate=True)
    except binascii.Error as exc:
        raise _bad(f"the {c.key} text is not base64: {exc}", c.value_at) from None


def _dict(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def _facts(card: dict[str, Any], w: Walk) -> dict[str, Any]:
    """The card facts ``inspect`` shows (as a ``.charx``'s): its assets name the
    ``chara-ext-asset_`` chunks (``__asset:N``) with their base64 sizes."""
    data = _fields(card)
    assets = []
    listed = data.get("assets")
    for a in listed if isinstance(listed, list) else []:
        if isinstance(a, dict):
            uri = a.get("uri") if isinstance(a.get("uri"), str) else ""
            member = embedded_member(uri) if uri else None
            assets.append({k: a.get(k) if isinstance(a.get(k), str) else ""
                           for k in ("type", "name", "ext")}
                          | {"member": member, "size": w.assets.get(member) if member else None})
    spec, version, name = card.get("spec"), card.get("spec_version"), data.get("name")
    risu = _dict(_dict(data.get("extensions")).get("risuai"))
    return {
        "spec": spec if isinstance(spec, str) else None,
        "spec_version": version if isinstance(version, str) else None,
        "name": name if isinstance(name, str) else "",
        "assets": assets,
        "members": len(w.assets),
        "low_level_access": js_truthy(risu.get("lowLevelAccess")),
    }


def _fields(card: dict[str, Any]) -> dict[str, Any]:
    """Where the card's fields are: ``data`` for a V2/V3 card (and an old Tavern card of
    ``spec_version`` "2.0"), else the top level (RisuAI's ``convertOffSpecCards``)."""
    if card.get("spec") in CARD_SPECS or card.get("spec_version") == "2.0":
        return _dict(card.get("data"))
    return card


def card_view(card: dict[str, Any]) -> dict[str, Any]:
    """The module-shaped view of the card (:func:`card_module_data`).  A card of another
    spec is an old Tavern card to RisuAI (``convertOffSpecCards``): its fields are read at
    the top level (in ``data`` for ``spec_version`` "2.0"), and it brings no triggers,
    regex scripts, ``lowLevelAccess`` or background HTML."""
    if card.get("spec") in CARD_SPECS:
        return card_module_data(card)
    view = card_module_data({"data": _fields(card)})
    for key in ("trigger", "regex", "lowLevelAccess", "backgroundEmbedding"):
        view.pop(key, None)
    return view
