"""Module JSON exports: the four shapes RisuAI imports, normalised to a module object.

Normalisation (documented in docs/formats.md):

* ``json-module`` — ``{"type": "risuModule", "name": ..., ...}``: kept as is
  (``type`` included).  The wrapped form ``{"module": {...}, "type": "risuModule"}``
  (the decoded main block of a ``.risum``) yields the inner object.
* ``json-lorebook`` — ``{"type": "risu", "data": [...]}``: ``data`` is renamed
  ``lorebook``; every other field is kept.
* ``json-regex`` — ``{"type": "regex", "data": [...]}``: ``data`` is renamed ``regex``.
* ``json-card`` — a character card export (``"spec": "chara_card_v3"`` or
  ``"chara_card_v2"``): the card's own active content as a ``character`` component
  (see :mod:`risutools.formats.card`).
* ``json-preset`` — a preset saved as JSON (``promptTemplate`` and ``mainPrompt`` at the
  top level, no ``type``): kept as is, component type ``preset``.
* ``json-external-lorebook`` — ``{"entries": {...}}`` (e.g. a SillyTavern world
  book): ``entries`` is kept untouched and a ``lorebook`` list is added with each
  entry mapped to RisuAI's lorebook fields.
"""

from __future__ import annotations

from typing import Any

from risutools.errors import Code, FormatError
from risutools.formats.card import CARD_SPECS, card_module_data
from risutools.formats.model import ComponentType

EXPORT_FORMATS = ("json-module", "json-lorebook", "json-external-lorebook", "json-regex",
                  "json-card", "json-preset")


def classify(keys: dict[str, str | None]) -> str | None:
    """Export format from the top-level keys (and string values) of a JSON object."""
    kind = keys.get("type")
    if kind == "risuModule":
        return "json-module"
    if kind == "risu":
        return "json-lorebook"
    if kind == "regex":
        return "json-regex"
    if "entries" in keys and kind is None:
        return "json-external-lorebook"
    if keys.get("spec") in CARD_SPECS:
        return "json-card"
    if kind is None and "promptTemplate" in keys and "mainPrompt" in keys:
        return "json-preset"
    return None


def classify_object(obj: dict[str, Any]) -> str | None:
    keys: dict[str, str | None] = {k: (v if isinstance(v, str) else None) for k, v in obj.items()}
    fmt = classify(keys)
    if fmt == "json-external-lorebook" and not isinstance(obj.get("entries"), (dict, list)):
        return None
    return fmt


def normalise(obj: dict[str, Any], fmt: str) -> tuple[dict[str, Any], ComponentType]:
    """Return (module data, component type) for an export of format ``fmt``."""
    if fmt == "json-card":
        return card_module_data(obj), "character"
    if fmt == "json-preset":  # a preset saved as JSON: read as the decoded .risup would be
        return obj, "preset"
    if fmt == "json-module":
        inner = obj.get("module")
        if isinstance(inner, dict) and "name" not in obj and "id" not in obj:
            return inner, "module"
        return obj, "module"
    if fmt in ("json-lorebook", "json-regex"):
        target = "lorebook" if fmt == "json-lorebook" else "regex"
        items = obj.get("data")
        if not isinstance(items, list):
            raise FormatError(
                Code.BAD_FIELD,
                f'a {fmt} export needs a "data" list, found {type(items).__name__}',
                where="/data",
            )
        data = {k: v for k, v in obj.items() if k != "data"}
        if target in data:  # never drop a field: keep a clashing original under another name
            data[f"original_{target}"] = data[target]
        data[target] = items
        return data, ("lorebook" if fmt == "json-lorebook" else "module")
    if fmt == "json-external-lorebook":
        entries = obj.get("entries")
        if isinstance(entries, dict):
            values = list(entries.values())
        elif isinstance(entries, list):
            values = entries
        else:
            raise FormatError(
                Code.BAD_FIELD, '"entries" must be an object or a list', where="/entries"
            )
        data = dict(obj)
        if "lorebook" in data:
            data["original_lorebook"] = data["lorebook"]
        data["lorebook"] = [_external_entry(v) for v in values if isinstance(v, dict)]
        return data, "lorebook"
    raise FormatError(Code.UNKNOWN_FORMAT, f"not a supported JSON export ({fmt})")


def _keys(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(str(x) for x in value if isinstance(x, (str, int, float)))
    return value if isinstance(value, str) else ""


def _external_entry(e: dict[str, Any]) -> dict[str, Any]:
    """Map one external (SillyTavern-style) world-book entry to RisuAI lorebook fields."""
    order = e.get("order", e.get("insertion_order", 100))
    second = e.get("keysecondary", e.get("secondary_keys", []))
    return {
        "key": _keys(e.get("key", e.get("keys", []))),
        "secondkey": _keys(second),
        "comment": e.get("comment", "") if isinstance(e.get("comment"), str) else "",
        "content": e.get("content", "") if isinstance(e.get("content"), str) else "",
        "mode": "normal",
        "insertorder": order if isinstance(order, int) and not isinstance(order, bool) else 100,
        "alwaysActive": e.get("constant") is True,
        "selective": e.get("selective") is True,
    }
