"""A character card's own active content, read as a component of type ``character``.

RisuAI imports a V3 card's ``data.extensions.risuai`` (``triggerscript``,
``customScripts``, ``lowLevelAccess``, ``backgroundHTML``), its ``character_book`` and
evaluates CBS in its greetings and description, whether or not the card also carries a
``module.risum``.  :func:`card_module_data` maps those fields onto the module shape the
analyser reads (``trigger``, ``regex``, ``lorebook``, ``lowLevelAccess``,
``backgroundEmbedding``) and keeps the CBS-bearing text fields under ``cardFields``.
Nothing is rewritten: every value is the card's own object.

A ``.charx`` that carries a ``module.risum``: RisuAI's import (``characterCards.ts``,
``importCharacterProcess``) replaces the card's ``triggerscript`` and ``customScripts`` with
the module's ``trigger`` and ``regex``, and its lorebook with the module's ``lorebook`` when
the module has one; so those parts of ``card.json`` never run, and the module component
states them once.  The card keeps what is its own (greetings, description, background HTML,
``lowLevelAccess``).
"""

from __future__ import annotations

from typing import Any

from risutools.formats.model import REPLACED_BY_MODULE
from risutools.jsontypes import js_truthy

CARD_SPECS = ("chara_card_v3", "chara_card_v2")
#: card text fields RisuAI evaluates CBS in (greetings, description and prompt fields)
CBS_FIELDS = ("description", "personality", "scenario", "first_mes", "mes_example",
              "system_prompt", "post_history_instructions", "alternate_greetings",
              "group_only_greetings")
#: the card field RisuAI shows as HTML without evaluating its CBS: the creator's notes
#: (``CreatorQuote.svelte`` above the chat and the character's page: ``ParseMarkdown`` with
#: no character, so Markdown and HTML, no CBS), kept as ``creatorNotes`` (never part of
#: the card's content identity: :func:`risutools.projection.identity.content_identity`)
NOTES_FIELD = "creator_notes"
CREATOR_NOTES = "creatorNotes"




def _dict(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def card_module_data(card: dict[str, Any],
                     carried: dict[str, Any] | None = None) -> dict[str, Any]:
    """The module-shaped view of a card (``{"spec": ..., "data": {...}}``); ``carried`` is the
    module of the ``module.risum`` the card comes with, whose trigger, regex and lorebook
    replace the card's on import (left out of the view, so they are stated once)."""
    data = _dict(card.get("data"))
    risu = _dict(_dict(data.get("extensions")).get("risuai"))
    out: dict[str, Any] = {"name": data.get("name") if isinstance(data.get("name"), str)
                           else ""}
    book = _dict(data.get("character_book"))
    entries = book.get("entries")
    if isinstance(entries, list):
        out["lorebook"] = [_entry(e) if isinstance(e, dict) else e for e in entries]
    for key, target in (("triggerscript", "trigger"), ("customScripts", "regex")):
        if key in risu:
            out[target] = risu[key]
    if carried is not None:
        replaced = [key for key in ("trigger", "regex") if out.pop(key, None) is not None]
        if isinstance(carried.get("lorebook"), list) and out.pop("lorebook", None) is not None:
            replaced.append("lorebook")
        if replaced:
            out[REPLACED_BY_MODULE] = replaced
    if js_truthy(risu.get("lowLevelAccess")):  # (as RisuAI tests it: any truthy value)
        out["lowLevelAccess"] = risu["lowLevelAccess"]
    if isinstance(risu.get("backgroundHTML"), str):
        out["backgroundEmbedding"] = risu["backgroundHTML"]
    fields = {k: data[k] for k in CBS_FIELDS if isinstance(data.get(k), (str, list))}
    if fields:
        out["cardFields"] = fields
    if isinstance(data.get(NOTES_FIELD), str):
        out[CREATOR_NOTES] = data[NOTES_FIELD]
    return out


def _entry(e: dict[str, Any]) -> dict[str, Any]:
    """A V2/V3 character-book entry with the names the module lorebook uses.  An entry
    whose ``use_regex`` RisuAI keeps (``convertCharbook``: only when the first key starts
    with ``/``) has its keys run as patterns: ``useRegex`` and ``secondkey`` say so."""
    comment = e.get("name") if e.get("name") is not None else e.get("comment")  # RisuAI:
    # book.name ?? book.comment (the name a loader's getLoreBooks(id, name) finds)
    keys = e.get("keys")
    out = {
        "comment": comment if isinstance(comment, str) else "",
        "content": e.get("content"),
        "key": ", ".join(k for k in keys if isinstance(k, str)) if isinstance(keys, list)
        else "",
        "alwaysActive": e.get("constant") if e.get("constant") is not None else False,
    }
    first = keys[0] if isinstance(keys, list) and keys else None
    if js_truthy(e.get("use_regex")) and isinstance(first, str) and first.startswith("/"):
        second = e.get("secondary_keys")
        out["useRegex"] = e["use_regex"]
        out["secondkey"] = ", ".join(k for k in second if isinstance(k, str)) \
            if isinstance(second, list) else ""
    return out


def has_active_content(view: dict[str, Any]) -> bool:
    """True when the card itself runs something or is evaluated by RisuAI: triggers,
    regex scripts, lowLevelAccess, background HTML, or CBS in its text or lorebook."""
    if view.get("trigger") or view.get("regex") or js_truthy(view.get("lowLevelAccess")):
        return True
    if isinstance(view.get("backgroundEmbedding"), str) and view["backgroundEmbedding"].strip():
        return True
    for v in _dict(view.get("cardFields")).values():
        texts = v if isinstance(v, list) else [v]
        if any(isinstance(s, str) and "{{" in s for s in texts):
            return True
    return any(isinstance(e, dict) and isinstance(e.get("content"), str)
               and "{{" in e["content"] for e in view.get("lorebook") or [])
