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
* ``json-external-lorebook`` — ``{"entries": {...}}`` (a SillyTavern, NovelAI or Agnai
  world book; any ``type`` but ``risuModule``, and ``risu`` with ``data``): ``entries`` is
  kept untouched and a ``lorebook`` list is added with each entry mapped as RisuAI's
  ``convertExternalLorebook`` maps it.
"""

from __future__ import annotations

from typing import Any

from risutools.errors import Code, FormatError
from risutools.formats.card import CARD_SPECS, card_module_data
from risutools.formats.model import ComponentType
from risutools.jsontypes import js_truthy, json_type_name

EXPORT_FORMATS = ("json-module", "json-lorebook", "json-external-lorebook", "json-regex",
                  "json-card", "json-preset")


def classify(keys: dict[str, str | None]) -> str | None:
    """Export format from the top-level keys (and string values) of a JSON object, in the
    order RisuAI's ``importModule`` tries them (``src/ts/process/modules.ts``): a module, a
    lorebook with ``data``, then any object with ``entries`` (whatever its ``type``), then
    regex scripts with ``data``.  (Only keys are known here: whether ``data`` or
    ``entries`` is empty is for :func:`classify_object` to judge.)"""
    kind = keys.get("type")
    if kind == "risuModule":
        return "json-module"
    if kind == "risu" and "data" in keys:
        return "json-lorebook"
    if "entries" in keys:
        return "json-external-lorebook"
    if kind in ("risu", "regex"):  # (without "data": the reader says what is missing)
        return "json-lorebook" if kind == "risu" else "json-regex"
    if keys.get("spec") in CARD_SPECS:
        return "json-card"
    if kind is None and "promptTemplate" in keys and "mainPrompt" in keys:
        return "json-preset"
    return None


def classify_object(obj: dict[str, Any]) -> str | None:
    """The export format of a parsed object: :func:`classify`'s order, with JavaScript's
    truthiness for ``data`` and ``entries`` as RisuAI tests them (``type: "risu"`` with a
    null ``data`` and an ``entries`` object is a world book to RisuAI)."""
    kind = obj.get("type")
    data, entries = obj.get("data"), obj.get("entries")
    if kind == "risu" and js_truthy(data):
        return "json-lorebook"
    if kind != "risuModule" and js_truthy(entries):  # (not an object or a list: normalise
        return "json-external-lorebook"  # says so, at /entries)
    keys: dict[str, str | None] = {k: (v if isinstance(v, str) else None)
                                   for k, v in obj.items() if k != "entries"}
    return classify(keys)


def module_object(obj: dict[str, Any]) -> dict[str, Any]:
    """The module a ``json-module`` object (or a module object) holds: the inner object of
    the ``{"module": {...}, "type": "risuModule"}`` wrapper (the decoded main block of a
    ``.risum``: ``type`` risuModule, a ``module`` object, and no ``name`` or ``id`` of its
    own), else the object itself.  The one rule: every reader and ``pack`` use it, so
    ``pack`` never packs a module other than the one ``inspect`` shows."""
    inner = obj.get("module")
    if (obj.get("type") == "risuModule" and isinstance(inner, dict)
            and "name" not in obj and "id" not in obj):
        return inner
    return obj


def normalise(obj: dict[str, Any], fmt: str) -> tuple[dict[str, Any], ComponentType]:
    """Return (module data, component type) for an export of format ``fmt``."""
    if fmt == "json-card":
        return card_module_data(obj), "character"
    if fmt == "json-preset":  # a preset saved as JSON: read as the decoded .risup would be
        return obj, "preset"
    if fmt == "json-module":
        return module_object(obj), "module"
    if fmt in ("json-lorebook", "json-regex"):
        target = "lorebook" if fmt == "json-lorebook" else "regex"
        items = obj.get("data")
        if not isinstance(items, list):
            raise FormatError(
                Code.BAD_FIELD,
                f'a {fmt} export needs a "data" list, found {json_type_name(items)}',
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
            values = _js_order(entries)
        elif isinstance(entries, list):
            values = entries
        else:
            raise FormatError(
                Code.BAD_FIELD,
                f'"entries" must be an object or a list, found {json_type_name(entries)}',
                where="/entries")
        data = dict(obj)
        if "lorebook" in data:
            data["original_lorebook"] = data["lorebook"]
        data["lorebook"] = [_external_entry(v) for v in values]
        return data, "lorebook"
    raise FormatError(Code.UNKNOWN_FORMAT, f"not a supported JSON export ({fmt})")


def _js_text(value: Any) -> str:
    """``String(value)`` of a JSON value as ``Array.prototype.join`` writes it (null: "")."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    if isinstance(value, list):
        return ",".join(_js_text(v) for v in value)
    if isinstance(value, dict):
        return "[object Object]"
    return str(value)


def _joined(value: Any) -> str:
    """``value.join(', ')`` of a key list (a string, which RisuAI cannot join, kept as is)."""
    if isinstance(value, list):
        return ", ".join(_js_text(x) for x in value)
    return value if isinstance(value, str) else ""


def _first(e: dict[str, Any], names: tuple[str, ...], *, nullish: bool) -> Any:
    """The first of ``e``'s ``names`` that is set: not null (``??``) when ``nullish``, else
    truthy (``||``); None when none is."""
    for name in names:
        v = e.get(name)
        if (v is not None) if nullish else js_truthy(v):
            return v
    return None


def _js_order(entries: dict[str, Any]) -> list[Any]:
    """The values of ``entries`` in ``for ... in`` order: array-index keys ("0", "7", "10")
    first, ascending, then the other keys in the order written."""
    index = {k for k in entries if k.isascii() and k.isdigit() and (k == "0" or k[0] != "0")
             and len(k) <= 10 and int(k) < 2**32 - 1}
    rest = [k for k in entries if k not in index]
    return [entries[k] for k in sorted(index, key=int) + rest]


def _external_entry(value: Any) -> dict[str, Any]:
    """One external (SillyTavern, NovelAI, Agnai) world-book entry as RisuAI's
    ``convertExternalLorebook`` (``src/ts/process/lorebook.svelte.ts``) maps it: ``key``,
    ``keys`` or ``keywords`` joined; ``order ?? priority ?? contextConfig.budgetPriority ??
    0``; ``comment || name || displayName``; ``content || entry || text``; ``constant ??
    forceActivation``; ``secondary_keys`` joined; ``selective``.  A value that is no object
    has none of these fields."""
    e = value if isinstance(value, dict) else {}
    context = e.get("contextConfig")
    budget = context.get("budgetPriority") if isinstance(context, dict) else None
    order = _first(e, ("order", "priority"), nullish=True)
    active = _first(e, ("constant", "forceActivation"), nullish=True)
    return {
        "key": _joined(_first(e, ("key", "keys", "keywords"), nullish=False)),
        "insertorder": order if order is not None else budget if budget is not None else 0,
        "comment": _first(e, ("comment", "name", "displayName"), nullish=False) or "",
        "content": _first(e, ("content", "entry", "text"), nullish=False) or "",
        "mode": "normal",
        "alwaysActive": active if active is not None else False,
        "secondkey": _joined(e.get("secondary_keys") if js_truthy(e.get("secondary_keys"))
                             else None),
        "selective": e.get("selective") if e.get("selective") is not None else False,
    }
