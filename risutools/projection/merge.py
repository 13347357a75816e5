"""Curator notes merged over a generated document, and the prompt built from it.

Notes win; lists in notes replace generated lists; ``state_effects``,
``swappable_parts``, ``situation`` and ``core`` merge key by key; ``evidence`` and
``lineage`` are updated.  The prompt is regenerated from the merged document unless the
notes give one.
"""

from __future__ import annotations

import copy
from typing import Any

from risutools.projection.notes import Notes
from risutools.projection.text import t

_PAYLOAD_KEYS = ("controller", "triggers", "activation_rules", "invariants", "boundaries")
_PROJECTION_KEYS = ("title", "prompt", "summary", "tags", "flagship", "core", "content_labels",
                    "harness_compatibility")
#: the key order of the seed document inside idea_layers
_LAYER_ORDER = ("evidence", "situation", "core", "swappable_parts", "lineage")


def merge_notes(doc: dict[str, Any], notes: Notes) -> None:
    """Merge ``notes`` into ``doc`` in place (the notes' values are copied)."""
    data = copy.deepcopy(notes.data)
    caps = data.get("capabilities") or {}
    for key in ("provides", "requires", "conflicts"):
        if key in caps:
            doc["capabilities"][key] = list(caps[key])
    payload = data.get("payload") or {}
    for key in _PAYLOAD_KEYS:
        if key in payload:
            doc["payload"][key] = payload[key]
    if "state_effects" in payload:
        doc["payload"]["state_effects"] = {**doc["payload"]["state_effects"],
                                           **payload["state_effects"]}
    _merge_layers(doc["payload"], notes.idea_layers())  # sentences and names: strings
    proj = data.get("projection") or {}
    for key in _PROJECTION_KEYS:
        if key in proj:
            doc["projection"][key] = proj[key]


def _merge_layers(payload: dict[str, Any], layers: dict[str, Any]) -> None:
    target = payload["idea_layers"]
    for key in ("evidence", "lineage"):
        if key in layers:
            target[key].update(layers[key])
    for key in ("situation", "core", "swappable_parts"):
        if key in layers:
            target[key] = {**(target.get(key) or {}), **layers[key]}
    payload["idea_layers"] = {k: target[k] for k in _LAYER_ORDER if k in target}


def prompt(lang: str, doc: dict[str, Any]) -> str:
    """A descriptive prompt built from the (merged) document's own sentences."""
    payload = doc["payload"]
    proj = doc["projection"]
    parts = [t(lang, "prompt_intro", title=proj["title"], summary=proj["summary"])]
    parts.extend(payload["triggers"])
    parts.extend(payload["activation_rules"])
    parts.extend(payload.get("invariants") or [])
    parts.append(t(lang, "prompt_outro"))
    return " ".join(p.strip() for p in parts if p.strip())
