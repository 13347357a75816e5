"""Asset type sniffing from the first bytes (never decodes or renders anything)."""

from __future__ import annotations

#: a single asset above this many bytes is reported as oversized (16 MiB)
OVERSIZED_ASSET_BYTES = 16 * 1024 * 1024

# declared extension -> the sniffed type it should have
EXT_TYPES: dict[str, str] = {
    "png": "png", "apng": "png", "jpg": "jpeg", "jpeg": "jpeg", "jfif": "jpeg",
    "webp": "webp", "gif": "gif", "mp3": "mp3", "ogg": "ogg", "oga": "ogg", "opus": "ogg",
    "wav": "wav", "mp4": "mp4", "m4a": "mp4", "mov": "mp4", "avif": "avif",
    "webm": "webm", "html": "html", "htm": "html",
}


def sniff(head: bytes) -> str | None:
    """The type the bytes announce, or None when unknown."""
    if not head:
        return None
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "png"
    if head.startswith(b"\xff\xd8\xff"):
        return "jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "gif"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "webp"
    if head[:4] == b"RIFF" and head[8:12] == b"WAVE":
        return "wav"
    if head.startswith(b"OggS"):
        return "ogg"
    if head.startswith(b"ID3") or (len(head) > 1 and head[0] == 0xFF and head[1] & 0xE0 == 0xE0):
        return "mp3"
    if head[4:8] == b"ftyp":
        brand = head[8:12]
        if brand in (b"avif", b"avis"):
            return "avif"
        return "mp4"
    if head.startswith(b"\x1a\x45\xdf\xa3"):
        return "webm"
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    if text.startswith((b"<!doctype html", b"<html", b"<script", b"<head", b"<body", b"<div",
                        b"<iframe", b"<svg", b"<?xml")):
        return "html" if not text.startswith((b"<svg", b"<?xml")) else "svg"
    return None


def declared_type(ext: str, name: str = "") -> str | None:
    e = (ext or "").lower().lstrip(".")
    if not e and "." in name:
        e = name.rsplit(".", 1)[1].lower()
    return EXT_TYPES.get(e)


def compatible(declared: str, sniffed: str) -> bool:
    if declared == sniffed:
        return True
    # RisuAI converts images it stores to WebP and keeps the declared extension
    if sniffed == "webp" and declared in RASTER_IMAGES:
        return True
    # audio containers and MP4 brands overlap in practice
    return {declared, sniffed} <= {"mp4", "avif"} and declared == "mp4"


#: declared image types whose bytes may be RisuAI's WebP conversion
RASTER_IMAGES = frozenset({"png", "jpeg", "gif", "avif"})
