"""``project(module) -> dict``: the matrix-component-v1 document of a module.

Mechanical fields come from :func:`risutools.analysis.analyze`; narrative
fields may come from curator notes (:mod:`risutools.projection.notes`), merged
deterministically (notes win; lists in notes replace generated lists; objects
of sentences merge key by key).  The document never carries code or regex
patterns, and its review status is always ``candidate``.

The steps, one function each: check the arguments; name the component
(:func:`_name_component`: source facts, source key, slug, version, title); build the
sections (:func:`_provenance`, :func:`_payload`, :func:`_projection`, their sentences
from :mod:`~risutools.projection.sentences`); merge the notes
(:mod:`~risutools.projection.merge`); make every string valid UTF-8; write the prompt
and its digest.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from risutools.analysis import Analysis, analyze
from risutools.canonical import prefixed
from risutools.contract.rules import prompt_digest
from risutools.errors import UsageError
from risutools.formats.model import Module
from risutools.printable import scrub
from risutools.projection import naming, sentences
from risutools.projection.guard import CopyGuard
from risutools.projection.identity import (
    SourceFacts,
    content_identity,
    module_identity,
    post_id_from_name,
    source_facts,
    without_container,
)
from risutools.projection.merge import merge_notes, prompt
from risutools.projection.notes import Notes
from risutools.projection.text import TYPE_WORDS, check_lang, t
from risutools.settings.catalog import NOTES_SOURCE_VERSION

__all__ = ["COMPONENT_VERSION", "CONTRACT", "ORIGIN", "module_identity", "post_id_from_name",
           "project", "slugify", "without_container"]

CONTRACT = "matrix-component-v1"
COMPONENT_VERSION = "1.0.0"
ORIGIN = "risu"
_POST_ID = re.compile(r"[0-9]{1,20}\Z")
_ENCODER = json.JSONEncoder(ensure_ascii=False, check_circular=False)
try:
    import orjson
except ImportError:  # pragma: no cover - orjson is a dependency; json alone decides too
    orjson = None  # type: ignore[assignment]
#: orjson takes only what ``json`` takes too: no dataclass, datetime or subclass of a
#: JSON type (each raises, and ``json`` decides)
_ORJSON_STRICT = (orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME
                  | orjson.OPT_PASSTHROUGH_SUBCLASS) if orjson is not None else 0


def slugify(name: str) -> str:
    """ASCII, lowercase, kebab-case; Hangul romanized, emoji and version numbers dropped;
    "" when nothing is left (see :mod:`risutools.projection.naming`)."""
    return naming.slugify(name)


@dataclass(frozen=True)
class _Component:
    """Who the document is about: everything the sections need besides the analysis."""

    module: Module
    lang: str
    guard: CopyGuard
    ctype: str  # component_type
    source: SourceFacts
    key: str  # the source key: post id, else "h" + 12 hex of the identity
    slug: str
    version: str
    title: str
    type_word: str  # the component type in ``lang``

    @property
    def embedded(self) -> bool:
        """Controlled by a character: a card's own content, or a module in a card file."""
        return self.source.card_file is not None or self.ctype == "character"


def project(module: Module, *, post_id: str | None = None, notes: Notes | None = None,
            lang: str = "en", analysis: Analysis | None = None) -> dict[str, Any]:
    """The matrix-component-v1 document for ``module`` (deterministic; never executes code).

    ``post_id`` (digits) overrides the one found in the source file name; without
    either the source key is ``h`` + 12 hex of the component's content identity (of the
    source's SHA-256 when it has none).  ``lang`` is ``en`` or ``ko``.  Raises
    ConfigError for a bad ``post_id`` or ``lang``.
    """
    post_id = _checked_arguments(lang, post_id)
    a = analysis if analysis is not None else analyze(module)
    c = _name_component(module, post_id, notes, lang)
    doc: dict[str, Any] = {
        "contract": CONTRACT,
        "component_id": f"{c.ctype}.{ORIGIN}.{c.key}.{c.slug}",
        "component_version": c.version,
        "component_type": c.ctype,
        "provenance": _provenance(c),
        "capabilities": {"provides": a.provides_names(), "requires": a.requires_names(),
                         "conflicts": []},
        "payload": _payload(c, a),
        "projection": _projection(c, a),
    }
    generated_prompt = True
    if notes is not None:
        generated_prompt = "prompt" not in (notes.data.get("projection") or {})
        merge_notes(doc, notes)
        doc["provenance"]["source_refs"].append({
            "source_id": f"risu:{c.key}", "source_version": NOTES_SOURCE_VERSION,
            "sha256": prefixed(notes.sha256)})
    doc = _valid_utf8(doc)
    proj = doc["projection"]
    if generated_prompt:
        proj["prompt"] = prompt(lang, doc)
    digest = prompt_digest(proj["prompt"])
    assert digest is not None  # every string is valid UTF-8 now
    proj["prompt_sha256"] = digest
    return doc


def _checked_arguments(lang: str, post_id: str | None) -> str | None:
    """The post id, stripped; ConfigError for a bad language or post id."""
    check_lang(lang)
    if post_id is not None:
        post_id = str(post_id).strip()
        if not _POST_ID.match(post_id):
            given = (f"{len(post_id)} digits" if post_id.isascii() and post_id.isdigit()
                     else repr(post_id[:40]))
            raise UsageError("--post-id", f"post id must be 1 to 20 digits (0-9), not {given}")
    return post_id


def _name_component(module: Module, post_id: str | None, notes: Notes | None,
                    lang: str) -> _Component:
    """Source facts, source key, slug, version and title.  The module's name is used
    only when it may be copied (not code, not a pattern)."""
    guard = CopyGuard(module)
    ctype = str(module.component_type or "module")
    src = source_facts(module)
    if post_id is None and module.source is not None:
        post_id = post_id_from_name(src.card_file or module.source.path)
    identity = content_identity(module) or src.sha256  # the same in every container
    key = post_id if post_id else "h" + identity[:12]
    slug, version = naming.slug_and_version(module.name) if guard.allow(module.name) \
        else ("", None)
    if notes is not None and notes.slug:
        slug = notes.slug
    type_word = TYPE_WORDS[lang].get(ctype, ctype)
    title = sentences.copied(guard, module.name, 160) \
        or t(lang, "untitled", type=type_word, key=key)
    return _Component(module, lang, guard, ctype, src, key, slug or "m" + identity[:8],
                      version or COMPONENT_VERSION, title, type_word)


def _provenance(c: _Component) -> dict[str, Any]:
    return {
        "review_status": "candidate",
        "runtime_status": "inactive",
        "availability_verdict": "untested",
        "source_refs": [{
            "source_id": f"risu:{c.key}",
            "source_version": c.source.version,
            "sha256": prefixed(c.source.sha256),
        }],
        "source_kind": c.source.kind,
        "static_analysis_only": True,
        "active_code_policy": "static_preserve_no_execute",
        "fixture_kind": "parsed_risu_projection",
        "publishable": False,
    }


def _payload(c: _Component, a: Analysis) -> dict[str, Any]:
    lang, guard = c.lang, c.guard
    return {
        "namespace": f"risu.{c.ctype}",
        "controller": "character" if c.embedded else "user",
        "triggers": sentences.triggers(lang, a),
        "state_effects": sentences.state_effects(lang, a, guard),
        "activation_rules": sentences.activation_rules(lang, a, guard),
        "invariants": [],
        "boundaries": [t(lang, "boundary_code"), t(lang, "boundary_human"),
                       t(lang, "boundary_candidate")],
        "idea_layers": {
            "evidence": {
                "source_post": c.key,
                "source_format": c.source.format,
                "lead_id": f"risu.static.{c.ctype}.{c.key}",
                "analysis_mode": "static_projection_read",
                "code_executed": False,
            },
            "swappable_parts": sentences.swappable_parts(lang, a, guard),
            "lineage": {
                "promotion_status": "candidate",
                "origin": "risu_static_ingest",
                "reverse_translation": f"{c.source.format} -> {CONTRACT}({c.ctype})",
            },
        },
    }


def _projection(c: _Component, a: Analysis) -> dict[str, Any]:
    return {
        "title": c.title,
        "prompt": "",
        "prompt_sha256": "",
        "summary": sentences.summary(c.lang, a, c.type_word),
        "tags": sentences.tags(a, c.module, c.embedded),
        "flagship": False,
        "core": False,
        "content_labels": [f"risu-{c.ctype}", "static-analysis"],
        "harness_compatibility": "display_only",
        "replay_status": "not_run",
    }


def _valid_utf8(doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` when every string in it is valid UTF-8 (one C-speed encoding decides),
    else a copy with lone surrogates replaced (:func:`~risutools.printable.scrub`).

    orjson decides first (it refuses a string, key or value, that is not valid UTF-8; the
    pass-through options make it refuse dataclasses, datetimes and subclasses, which
    ``json`` would not encode as it does); whatever it refuses -- a lone surrogate, an
    integer past 64 bits, nesting past its limit -- is decided again by ``json``'s encoder,
    as before.  (orjson also encodes Enum and UUID members, which ``json`` refuses; a
    document never holds one: it is built from text, numbers, lists and dicts.)"""
    if orjson is not None:
        try:
            orjson.dumps(doc, option=_ORJSON_STRICT)
        except TypeError:  # orjson.JSONEncodeError is a TypeError
            pass
        else:
            return doc
    try:
        _ENCODER.encode(doc).encode("utf-8")
    except UnicodeEncodeError:
        cleaned: dict[str, Any] = scrub(doc)
        return cleaned
    return doc
