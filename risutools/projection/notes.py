"""Curator notes (``notes.yaml``, format notes-v1): narrative merged over a generated document.

A notes file is validated twice: by hand-written checks here (so every error
names the offending field, e.g. ``payload.triggers[2]``) and by
``schemas/notes-v1.schema.json`` (the same rules, for other tools).  Errors
raise :class:`~risutools.errors.ConfigError` with code ``notes-invalid``.
The file's SHA-256 is recorded in the generated document, so a changed note
is a changed component.
"""

from __future__ import annotations

import copy
import hashlib
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from risutools.canonical import canonical
from risutools.contract.activecode import find_active_code
from risutools.errors import Code, ConfigError, DocumentError
from risutools.jsonlines import unpaired_surrogate
from risutools.jsontypes import json_type_name
from risutools.pathnames import show_name
from risutools.resources import load_schema
from risutools.safeio import FileRefused, read_regular
from risutools.settings.catalog import MAX_NOTES_BYTES
from risutools.values import parse_value_bytes

SCHEMA_NAME = "notes-v1.schema.json"
_SLUG = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*\Z")
_CAP = re.compile(r"[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*\Z")
_LEAD = re.compile(r"[a-z0-9][a-z0-9._-]*\Z")
_ORIGIN = re.compile(r"[a-z][a-z0-9_]*\Z")
_RISUAI_ID = re.compile(r".{1,200}\Z", re.S)
_DIGEST = re.compile(r"sha256:[0-9a-f]{64}\Z")

# field spec: "sentence" | "sentences" | "map" | "bool" | "caps" | "tags" | ("enum", ...) |
# ("re", pattern, what) | dict (nested object)
_IDEA: dict[str, Any] = {
    "evidence": {"lead_id": ("re", _LEAD, "a lowercase id such as risu.deep.module.123")},
    "situation": {k: "sentence" for k in (
        "concrete_scene", "emotion_evoked", "why_memorable", "transferable_lesson")},
    "core": {k: "sentence" for k in (
        "core_idea", "behavioral_cause", "invariant_conflict", "core_drive", "core_dilemma")},
    "swappable_parts": "map",
    "lineage": {"origin": ("re", _ORIGIN, "a snake_case word such as risu_deep_dive_lead")},
}
_SPEC: dict[str, Any] = {
    "notes": ("enum", "notes-v1"),
    "slug": ("re", _SLUG, "lowercase kebab-case (a-z, 0-9, single dashes)"),
    "for": {"risuai_id": ("re", _RISUAI_ID, "the module's RisuAI id (1-200 characters)"),
            "source_sha256": ("re", _DIGEST, "sha256: and 64 lowercase hex digits")},
    "capabilities": {"provides": "caps", "requires": "caps", "conflicts": "caps"},
    "payload": {
        "controller": ("enum", "user", "character", "system"),
        "triggers": "sentences",
        "state_effects": "map",
        "activation_rules": "sentences",
        "invariants": "sentences",
        "boundaries": "sentences",
        "idea_layers": _IDEA,
    },
    "idea_layers": _IDEA,
    "projection": {
        "title": "sentence", "prompt": "sentence", "summary": "sentence", "tags": "tags",
        "flagship": "bool", "core": "bool", "content_labels": "sentences",
        "harness_compatibility": ("enum", "display_only", "replay", "runtime"),
    },
}


@dataclass(frozen=True)
class Notes:
    """Validated notes: ``data`` (the YAML mapping) and ``sha256`` (hex of the file bytes)."""

    data: dict[str, Any]
    sha256: str
    path: str = ""

    @classmethod
    def from_dict(cls, data: Any, *, path: str = "") -> Notes:
        """Validate a mapping given in code; its digest is that of its canonical JSON."""
        validate_notes(data, path=path)

        digest = hashlib.sha256(canonical(data)).hexdigest()
        return cls(copy.deepcopy(data), digest, path)

    @property
    def slug(self) -> str | None:
        s = self.data.get("slug")
        return s if isinstance(s, str) else None

    def idea_layers(self) -> dict[str, Any]:
        """``idea_layers`` from either place (top level or under ``payload``)."""
        top = self.data.get("idea_layers")
        if isinstance(top, dict):
            return top
        payload = self.data.get("payload")
        if isinstance(payload, dict) and isinstance(payload.get("idea_layers"), dict):
            inner: dict[str, Any] = payload["idea_layers"]
            return inner
        return {}


def _fail(path: str, field: str, why: str) -> ConfigError:
    return ConfigError(Code.NOTES_INVALID, f"field {field!r}: {why}", where=field or "(top)",
                       path=path or None)


def _kind(v: Any) -> str:
    return json_type_name(v, "a mapping")


def _check(value: Any, spec: Any, field: str, path: str) -> None:
    """Raise (naming ``field``) unless ``value`` is what its ``spec`` (see ``_SPEC``) asks."""
    if isinstance(spec, dict):
        _check_fields(value, spec, field, path)
        return
    checker = _CHECKERS.get(spec[0] if isinstance(spec, tuple) else spec)
    if checker is None:  # pragma: no cover
        raise AssertionError(f"bad notes spec at {field}")
    checker(value, spec, field, path)


def _check_fields(value: Any, spec: dict[str, Any], field: str, path: str) -> None:
    """A nested object: a mapping of text keys, each a known field, checked in key order."""
    if not isinstance(value, dict):
        raise _fail(path, field, f"must be a mapping, not {_kind(value)}")
    for key in value:
        if not isinstance(key, str):
            raise _fail(path, field, f"has a non-text key {key!r}")
    for key in sorted(value):
        sub = f"{field}.{key}" if field else key
        if key not in spec:
            known = ", ".join(sorted(spec))
            raise _fail(path, sub, f"unknown field (allowed here: {known})")
        _check(value[key], spec[key], sub, path)


def _check_sentence(value: Any, spec: str, field: str, path: str) -> None:
    if not isinstance(value, str):
        raise _fail(path, field, f"must be text, not {_kind(value)}")
    if not value.strip():
        raise _fail(path, field, "must not be empty")
    _no_code(value, field, path)


def _check_list(value: Any, spec: str, field: str, path: str) -> None:
    """``sentences`` (each a sentence), ``tags`` (kebab-case) or ``caps`` (capability names):
    a list of text; tags and capabilities are listed once each."""
    if not isinstance(value, list):
        raise _fail(path, field, f"must be a list, not {_kind(value)}")
    seen: set[str] = set()
    for i, item in enumerate(value):
        sub = f"{field}[{i}]"
        if not isinstance(item, str):
            raise _fail(path, sub, f"must be text, not {_kind(item)}")
        if spec == "sentences" and not item.strip():
            raise _fail(path, sub, "must not be empty")
        if spec == "sentences":
            _no_code(item, sub, path)
        if spec == "tags" and not _SLUG.match(item):
            raise _fail(path, sub, f"{item!r} is not a lowercase kebab-case tag")
        if spec == "caps" and not _CAP.match(item):
            raise _fail(path, sub,
                        f"{item!r} is not a capability name (e.g. context.token_budget)")
        if spec != "sentences" and item in seen:
            raise _fail(path, sub, f"{item!r} is listed twice")
        seen.add(item)


def _check_map(value: Any, spec: str, field: str, path: str) -> None:
    """A mapping of name -> sentence."""
    if not isinstance(value, dict):
        raise _fail(path, field, f"must be a mapping of name -> sentence, not {_kind(value)}")
    for key in value:
        if not isinstance(key, str) or not key.strip():
            raise _fail(path, field, f"has a key that is not text: {key!r}")
    for key in sorted(value):
        _check_sentence(value[key], "sentence", f"{field}.{key}", path)


def _check_bool(value: Any, spec: str, field: str, path: str) -> None:
    if not isinstance(value, bool):
        raise _fail(path, field, f"must be true or false, not {_kind(value)}")


def _check_enum(value: Any, spec: tuple[str, ...], field: str, path: str) -> None:
    """``("enum", choice, ...)``: one of the choices."""
    if value not in spec[1:]:
        allowed = ", ".join(spec[1:])
        raise _fail(path, field, f"must be one of {allowed}, not {value!r}"[:300])


def _check_pattern(value: Any, spec: tuple[str, re.Pattern[str], str], field: str,
                   path: str) -> None:
    """``("re", pattern, what)``: text the pattern matches (``what`` says what it must be)."""
    if not isinstance(value, str):
        raise _fail(path, field, f"must be text, not {_kind(value)}")
    if not spec[1].match(value):
        raise _fail(path, field, f"{value[:80]!r} must be {spec[2]}")


# field spec (its name, or a tuple's first item) -> its check
_CHECKERS: dict[str, Callable[[Any, Any, str, str], None]] = {
    "sentence": _check_sentence,
    "sentences": _check_list,
    "tags": _check_list,
    "caps": _check_list,
    "map": _check_map,
    "bool": _check_bool,
    "enum": _check_enum,
    "re": _check_pattern,
}


def _no_code(text: str, field: str, path: str) -> None:
    """Notes describe; a sentence that reads as code or a pattern would fail MC500."""
    why = find_active_code(text)
    if why is not None:
        raise _fail(path, field, f"reads as code or a regex pattern ({why}); describe it "
                    "in words instead (the document must carry no code, rule MC500)")


def validate_notes(data: Any, *, path: str = "") -> None:
    """Raise ConfigError (naming the field) unless ``data`` is valid notes-v1."""
    if not isinstance(data, dict):
        raise _fail(path, "", f"a notes file must be a mapping, not {_kind(data)}")

    bad = unpaired_surrogate(data)  # (a mapping built in code: the loaders refuse it in a file)
    if bad is not None:
        raise ConfigError(Code.NOTES_INVALID, bad[1], where=bad[0] or "(top)", path=path or None)
    _check(data, _SPEC, "", path)
    payload = data.get("payload")
    if isinstance(payload, dict) and "idea_layers" in payload and "idea_layers" in data:
        raise _fail(path, "idea_layers",
                    "given twice (top level and under payload); keep one")
    caps = data.get("capabilities")
    if isinstance(caps, dict):
        both = sorted(set(caps.get("provides") or []) & set(caps.get("conflicts") or []))
        if both:
            raise _fail(path, "capabilities.conflicts",
                        f"{both[0]!r} is also in capabilities.provides")
    _schema_check(data, path)


def _schema_check(data: dict[str, Any], path: str) -> None:
    try:
        import jsonschema
    except ImportError:  # pragma: no cover - jsonschema is a dependency
        return
    validator = jsonschema.Draft202012Validator(load_schema(SCHEMA_NAME))
    errors = sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))
    if errors:
        err = errors[0]
        field = ".".join(str(p) for p in err.absolute_path)
        raise _fail(path, field, f"does not match the notes schema: {err.message}"[:300])



def load_notes(path: str | Path) -> Notes:
    """Read, validate and digest a notes file (ConfigError on any problem)."""
    p = Path(path)
    shown = show_name(os.fspath(path))
    try:  # a regular file only (never a device or FIFO), never more than the bound read
        raw = read_regular(p, MAX_NOTES_BYTES)
    except FileRefused as exc:
        if exc.code == Code.TOO_LARGE:
            raise ConfigError(Code.NOTES_INVALID, f"notes {exc.why}", path=shown) from None
        raise ConfigError(exc.code, f"cannot read the notes file: {exc.why}",
                          path=shown) from None
    try:
        data = parse_value_bytes(raw, shown, "yaml")
    except DocumentError as exc:
        raise ConfigError(Code.NOTES_INVALID, exc.why, where=exc.where, path=shown) from None
    if data is None:
        data = {}
    validate_notes(data, path=shown)
    return Notes(data, hashlib.sha256(raw).hexdigest(), shown)
