"""A document as the catalog stores it: its text (:func:`render`: the JSON file, or the
canonical NDJSON line), where its file goes (:func:`under` a folder, :func:`safe_name`), and
what a stored document says of its review (:func:`review_status`)."""

from __future__ import annotations

import re
from json.encoder import encode_basestring as _encode_str  # json's own escaper (C)
from typing import Any

from risutools.canonical import canonical, document_json
from risutools.printable import json_bytes_text, json_text


def render(doc: dict[str, Any], ndjson: bool) -> str:
    """A document as the catalog stores it: a canonical NDJSON line, or the JSON file text
    (UTF-8, one-space indent, the seed's style: exactly ``canonical.document_json``); in
    both, what :func:`~risutools.printable.json_text` escapes is escaped."""
    if ndjson:  # (escaped as the JSON file is: the same value, the same hash)
        return json_bytes_text(canonical(doc))
    try:
        return json_text(_json_value(doc, "")) + "\n"
    except (TypeError, ValueError, RecursionError):
        return document_json(doc)  # what the fast path does not take: the same text, or its error


def _json_value(value: Any, indent: str) -> str:
    """``json.dumps(value, ensure_ascii=False, indent=1, allow_nan=False)`` for the plain
    JSON types (dict with str keys, list, str, int, bool, None; floats are left to
    ``json``): the same string escaper (``json.encoder.encode_basestring``) and number
    text, without the encoder's generator per value.  Anything else raises TypeError.
    (A string inside a container is escaped in place, not by a call of its own: most
    values of a document are strings.)"""
    kind = type(value)
    if kind is str:
        return _encode_str(value)
    if kind is dict:
        if not value:
            return "{}"
        inner = indent + " "
        items = []
        for k, v in value.items():
            if type(k) is not str:
                raise TypeError("a key that is not a string")  # json coerces it: left to json
            items.append(_encode_str(k) + ": "
                         + (_encode_str(v) if type(v) is str else _json_value(v, inner)))
        return "{\n" + inner + (",\n" + inner).join(items) + "\n" + indent + "}"
    if kind is list:
        if not value:
            return "[]"
        inner = indent + " "
        return "[\n" + inner + (",\n" + inner).join(
            [_encode_str(v) if type(v) is str else _json_value(v, inner) for v in value]
        ) + "\n" + indent + "]"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if value is None:
        return "null"
    if kind is int:
        return int.__repr__(value)
    raise TypeError(f"not a plain JSON value: {kind.__name__}")


def under(folder: str) -> str:
    """What a relative path is joined to so that ``under(folder) + rel`` is
    ``str(Path(folder) / rel)`` (``folder`` as a ``Path`` spells it)."""
    if folder == ".":
        return ""
    return folder if folder.endswith("/") else folder + "/"


_UNSAFE = re.compile(r"[^a-z0-9._-]")  # every character but these becomes "_"


def safe_name(component_id: str) -> str:
    name = _UNSAFE.sub("_", component_id.lower())
    return name.strip(".") or "component"


def review_status(doc: Any) -> str | None:
    """The document's ``provenance.review_status`` when it is a string, else None."""
    prov = doc.get("provenance") if isinstance(doc, dict) else None
    status = prov.get("review_status") if isinstance(prov, dict) else None
    return status if isinstance(status, str) else None
