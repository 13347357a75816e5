"""Where a component comes from and what it is: its source facts and its identity.

* :func:`source_facts` names the source (file digest, ``source_version``, format, kind,
  the card file a ``.charx`` member came from) for ``provenance`` and ``idea_layers``.
* :func:`content_identity` is the SHA-256 of a component's own content, the same whichever
  container carried it: a module's own ``id`` and content (a JSON export and a ``.risum``
  give one identity), a card's own content (a ``chara_card_v3`` JSON export and the
  ``card.json`` of a ``.charx`` give one identity).  Without a post id it makes the source
  key, so ingest keeps one component for both containers.
* :func:`without_container` drops what only names the container from a document, so two
  documents of one component in two containers compare equal.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from typing import Any

from risutools.canonical import canonical, plain_canonical, plain_levels
from risutools.formats.card import CREATOR_NOTES
from risutools.formats.model import Module

_POST_ID_IN_NAME = re.compile(r"^([0-9]{1,20})[_-]")

#: fields of a module that differ between its containers (JSON export vs ``.risum``)
_CONTAINER_FIELDS = ("type", "assets")


def post_id_from_name(name: str) -> str | None:
    """The post id a catalog file name carries: leading digits before ``_`` or ``-``.

    ``174678332_context-cutter.risum`` -> ``"174678332"``; otherwise None.
    """
    m = _POST_ID_IN_NAME.match(os.path.basename(name))
    return m.group(1) if m else None


def content_identity(module: Module) -> str | None:
    """SHA-256 hex of a component's own content, the same whichever container carried it.

    A module: its own ``id`` and its content less the container's fields (``type``,
    ``assets``); None for a module without an ``id``.  A card (component type
    ``character``): everything the reader takes from the card -- name, greetings,
    description and prompt fields, character book, trigger script, custom scripts,
    ``lowLevelAccess``, background HTML -- not its images or its container.  None for
    presets (their file is their identity)."""
    if module.component_type == "character":  # (the creator's notes, shown, never run:
        # not the card's identity, so notes added or edited keep the component's id)
        return _sha256_of({"card": {k: v for k, v in module.data.items()
                                    if k != CREATOR_NOTES}})
    if module.component_type != "module" or not module.id:
        return None
    content = {k: v for k, v in module.data.items() if k not in _CONTAINER_FIELDS}
    return _sha256_of({"id": module.id, "content": content})


#: the former name (modules were the first components given a content identity)
module_identity = content_identity


def _sha256_of(value: Any) -> str:
    """SHA-256 hex of the canonical form of :func:`jsonable` of ``value``.  A plain value
    (only dicts with string keys, lists, strings, integers, booleans and None) whose
    strings are valid UTF-8 is its own :func:`jsonable` copy, so its canonical bytes are
    taken without the copy (orjson refuses a lone surrogate, which :func:`jsonable`
    would replace: that value, and any other, goes through the copy)."""
    if plain_levels(value) is not None:
        fast = plain_canonical(value)
        if fast is not None:
            return hashlib.sha256(fast).hexdigest()
    return hashlib.sha256(canonical(jsonable(value))).hexdigest()


@dataclass(frozen=True)
class SourceFacts:
    """What a document says about its source."""

    sha256: str  # hex of the file (or of the canonical module JSON without a file)
    version: str  # source_refs[0].source_version
    format: str  # idea_layers.evidence.source_format
    kind: str  # provenance.source_kind
    card_file: str | None  # the .charx (or CharX-JPEG) file name, for a member of a card file


def source_facts(module: Module) -> SourceFacts:
    src = module.source
    if src is None:
        digest = _sha256_of(module.data)
        return SourceFacts(digest, "module.risum", "module.risum", "risu_attachment", None)
    fmt = (src.format or "").lower()
    base = os.path.basename(src.path.replace("\\", "/")) or "source"
    sha = src.sha256.lower()
    if fmt.startswith("charx"):
        member = src.member or "module.risum"
        kind = "card.json" if member == "card.json" else "module.risum"
        return SourceFacts(sha, f"{base}!{member}", kind, "risu_attachment", base)
    if fmt == "png-card":  # (the card JSON of a text chunk: ``<card>.png!ccv3``)
        return SourceFacts(sha, f"{base}!{src.member or 'ccv3'}", "card.json",
                           "risu_attachment", base)
    if fmt == "json-card":
        return SourceFacts(sha, "card.json", "card.json", "risu_json_export", None)
    if fmt.startswith("json"):
        return SourceFacts(sha, "module.json", "module.json", "risu_json_export", None)
    if fmt in ("risup", "risupreset"):
        return SourceFacts(sha, f"preset.{fmt}", f"preset.{fmt}", "risu_attachment", None)
    if fmt == "risum" or not fmt:
        return SourceFacts(sha, "module.risum", "module.risum", "risu_attachment", None)
    return SourceFacts(sha, fmt, fmt, "risu_attachment", None)


def without_container(doc: dict[str, Any]) -> dict[str, Any]:
    """A projected document less what only names the container it was read from (the
    source reference, the source kind, the evidence's source format and the lineage's
    reverse translation): two documents equal here are the same component carried by two
    containers (a JSON export and a ``.risum``; a card JSON export and a ``.charx``),
    which ingest keeps once.  ``doc`` is not changed (the parts on the way are copied,
    the rest shared)."""
    out = dict(doc)
    prov = out.get("provenance")
    if isinstance(prov, dict):
        out["provenance"] = {k: v for k, v in prov.items()
                             if k not in ("source_refs", "source_kind")}
    payload = out.get("payload")
    layers = payload.get("idea_layers") if isinstance(payload, dict) else None
    if isinstance(payload, dict) and isinstance(layers, dict):
        layers = dict(layers)
        for name, field in (("evidence", "source_format"), ("lineage", "reverse_translation")):
            if isinstance(layers.get(name), dict):
                layers[name] = {k: v for k, v in layers[name].items() if k != field}
        out["payload"] = {**payload, "idea_layers": layers}
    return out


def jsonable(value: Any) -> Any:
    """A JSON-safe copy (for hashing module data that was built in code)."""
    if isinstance(value, dict):  # a key is text too: a lone surrogate in one is replaced
        return {jsonable(str(k)): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if (isinstance(value, float) and value != value) or value in (float("inf"), float("-inf")):
        return str(value)
    if isinstance(value, (str, int, float, bool)) or value is None:
        if isinstance(value, str):
            return value.encode("utf-8", "replace").decode("utf-8")
        return value
    if isinstance(value, bytes):
        return value.hex()
    return repr(value)
