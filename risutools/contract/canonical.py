"""Canonical JSON form and the document hash (the "base hash").

``canonical(doc)``: UTF-8 JSON, keys sorted, separators ``,``/``:``, non-ASCII
characters as themselves, NaN/Infinity refused.  ``doc_sha256(doc)`` =
``"sha256:" + sha256(canonical(doc))``.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

_ENCODER = json.JSONEncoder(
    ensure_ascii=False, allow_nan=False, sort_keys=True, separators=(",", ":")
)


def canonical(doc: Any) -> bytes:
    """The canonical UTF-8 bytes of a JSON value (ValueError on NaN/Infinity)."""
    return _ENCODER.encode(doc).encode("utf-8")


def sha256_prefixed(data: bytes) -> str:
    """``sha256:<64 hex>`` of ``data``: the one spelling of a digest in every document,
    report and record."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def self_hash(doc: dict[str, Any], key: str = "report_sha256") -> str:
    """The digest a document records of itself under ``key``: the canonical hash of the
    document without that key (replay reports; checked by ``verify``)."""
    return doc_sha256({k: v for k, v in doc.items() if k != key})


def doc_sha256(doc: Any) -> str:
    """``sha256:<hex>`` of the canonical form."""
    return sha256_prefixed(canonical(doc))
