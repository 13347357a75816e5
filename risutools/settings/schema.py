"""The configuration's schema, as data: ``schemas/settings-v1.schema.json`` (the file and
its ``catalog:`` section) and ``schemas/replay-config-v1.schema.json`` (the ``replay:``
section, also a replay's ``--config`` file and a fixture's ``config``).

The loader (:mod:`risutools.settings.config`) and the section views
(:mod:`risutools.settings.catalog`, :mod:`risutools.settings.replay`) take every key, default,
bound and choice from here; ``docs/configuration.md`` lists the same keys, and the schemas are
real JSON Schemas an editor can check a ``.risutools.yaml`` with.  Non-standard keywords
(``x-...``) carry what JSON Schema has no word for: the commands that read a key
(``x-read-by``), whether it is a section (``x-section``), the tokens per character of each
tokenizer profile (``x-tokens-per-char``).
"""

from __future__ import annotations

from typing import Any

from risutools.resources import load_schema

SETTINGS_SCHEMA: dict[str, Any] = load_schema("settings-v1.schema.json")
REPLAY_SCHEMA: dict[str, Any] = load_schema("replay-config-v1.schema.json")

_PROPS: dict[str, Any] = SETTINGS_SCHEMA["properties"]
_RULES: dict[str, Any] = _PROPS["rules"]

#: largest configuration file read (bytes)
MAX_CONFIG_BYTES: int = SETTINGS_SCHEMA["x-max-bytes"]
#: every key a configuration may hold -> the commands that read it (any other key is
#: ``config-unknown-key``)
KEYS: dict[str, str] = {k: v["x-read-by"] for k, v in _PROPS.items()}
#: the keys that are sections (mappings with a view of their own)
SECTIONS: tuple[str, ...] = tuple(k for k, v in _PROPS.items() if v.get("x-section"))
#: what ``rules:`` may set a check to
SEVERITY_CHOICES: tuple[str, ...] = tuple(_RULES["x-severities"])
#: scopes whose checks ``rules:`` may re-grade or turn off (unreadable input, replay
#: invariants and promotion gates are verdicts, not findings: they cannot be changed)
CONFIGURABLE_SCOPES: tuple[str, ...] = tuple(_RULES["x-configurable-scopes"])
#: the most ``exclude:`` globs a configuration may list (every file of a folder walk is
#: matched against them all)
MAX_EXCLUDE: int = _PROPS["exclude"]["maxItems"]
#: a capability name; always used with ``fullmatch``
CAPABILITY_PATTERN: str = _PROPS["capabilities"]["oneOf"][0]["items"]["pattern"]
#: the ``catalog:`` section's keys
CATALOG_KEYS: tuple[str, ...] = tuple(SETTINGS_SCHEMA["$defs"]["catalog"]["properties"])


def replay_property(key: str) -> dict[str, Any]:
    """The schema of one ``replay:`` key."""
    prop: dict[str, Any] = REPLAY_SCHEMA["properties"][key]
    return prop


def bounds(prop: dict[str, Any]) -> tuple[Any, Any, bool]:
    """(lowest, highest, whether the lowest is excluded) of a numeric key's schema."""
    if "exclusiveMinimum" in prop:
        return prop["exclusiveMinimum"], prop["maximum"], True
    return prop["minimum"], prop["maximum"], False
