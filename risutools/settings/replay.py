"""Replay configuration: the cutter's swappable parts and the monitor's thresholds.

This is the schema of the ``replay:`` section of the one configuration object
(:mod:`risutools.settings.config`, which validates the section with :func:`build_config`
when the file is loaded) and the replay's own layering over it: defaults < the catalog
configuration's ``replay:`` < the fixture's ``config`` < ``replay run --config FILE``.

A configuration is a mapping with exactly the keys in :data:`DEFAULTS` (missing
keys take the default; unknown keys, wrong types and absurd values raise
:class:`~risutools.errors.ConfigError` naming the key).

Tokenizer profiles are tokens-per-character ratios, not tokenizers.  The
defaults sit between typical English text (about 0.25 tokens per character)
and Korean text (0.7-1.0 tokens per character) because the catalog's
conversations are mixed; they are recorded in every report.  A profile may
also be given as a number (the ratio itself).  Ratios are used as exact
decimals (``0.3`` means 3/10), so ``ceil(len * ratio)`` never suffers from
binary floating-point rounding.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from risutools.errors import Code, ConfigError, DocumentError
from risutools.jsontypes import is_number
from risutools.safeio import read_or_raise
from risutools.settings.schema import MAX_CONFIG_BYTES, REPLAY_SCHEMA, bounds, replay_property
from risutools.values import parse_value_bytes

#: tokens per character for each named profile (documented in docs/replay.md)
PROFILES: dict[str, str] = dict(replay_property("tokenizer_profile")["x-tokens-per-char"])
#: the roles a message may have (those ``protected_roles`` may name)
KNOWN_ROLES: tuple[str, ...] = tuple(replay_property("protected_roles")["items"]["enum"])
#: every key and its default
DEFAULTS: dict[str, Any] = {k: v["default"] for k, v in REPLAY_SCHEMA["properties"].items()}


@dataclass(frozen=True)
class ReplayConfig:
    enabled: bool
    tokenizer_profile: str | float | int
    max_context: int
    preserve_latest: int
    trim_percent: float | int
    protected_roles: tuple[str, ...]
    message_overhead: int
    warning_pct: float | int
    critical_pct: float | int
    debounce: int
    stale_s: float | int

    @property
    def ratio(self) -> Fraction:
        """Tokens per character as an exact fraction."""
        if isinstance(self.tokenizer_profile, str):
            return Fraction(PROFILES[self.tokenizer_profile])
        return Fraction(str(self.tokenizer_profile))

    @property
    def target(self) -> int:
        """``floor(max_context * (1 - trim_percent / 100))``, computed exactly."""
        keep = Fraction(100) - Fraction(str(self.trim_percent))
        return math.floor(Fraction(self.max_context) * keep / 100)

    def to_dict(self) -> dict[str, Any]:
        return {
            "enabled": self.enabled,
            "tokenizer_profile": self.tokenizer_profile,
            "tokens_per_char": _decimal_text(self.ratio),
            "max_context": self.max_context,
            "preserve_latest": self.preserve_latest,
            "trim_percent": self.trim_percent,
            "target_after_trim": self.target,
            "protected_roles": list(self.protected_roles),
            "message_overhead": self.message_overhead,
            "warning_pct": self.warning_pct,
            "critical_pct": self.critical_pct,
            "debounce": self.debounce,
            "stale_s": self.stale_s,
            "profiles": dict(sorted(PROFILES.items())),
        }


def _decimal_text(f: Fraction) -> str:
    # Ratios come from decimal text, so the denominator divides a power of ten.
    for digits in range(1, 20):
        scaled = f * 10**digits
        if scaled.denominator == 1:
            whole, frac = divmod(int(scaled), 10**digits)
            return f"{whole}.{frac:0{digits}d}".rstrip("0").rstrip(".")
    return str(float(f))


def _bad(key: str, why: str, got: Any) -> ConfigError:
    return ConfigError(Code.CONFIG_BAD_VALUE, f"{key}: {why}, got {got!r}", where="config")


def _int(key: str, v: Any, prop: dict[str, Any]) -> int:
    lo, hi, _ = bounds(prop)
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        raise _bad(key, f"must be an integer between {lo} and {hi}", v)
    return v


def _num(key: str, v: Any, prop: dict[str, Any]) -> float | int:
    lo, hi, lo_open = bounds(prop)
    if not is_number(v):
        raise _bad(key, f"must be a number between {lo} and {hi}", v)
    if v > hi or v < lo or (lo_open and v == lo):
        rng = f"greater than {lo} and at most {hi}" if lo_open else f"between {lo} and {hi}"
        raise _bad(key, f"must be a number {rng}", v)
    return v


def _merged(*layers: dict[str, Any] | None) -> dict[str, Any]:
    """``layers`` over :data:`DEFAULTS` (later wins), each a mapping of known keys."""
    merged: dict[str, Any] = dict(DEFAULTS)
    for layer in layers:
        if layer is None:
            continue
        if not isinstance(layer, dict):
            raise ConfigError(Code.CONFIG_NOT_MAPPING, "a configuration must be a mapping",
                              where="config")
        for key in sorted(layer):
            if key not in DEFAULTS:
                known = ", ".join(sorted(DEFAULTS))
                raise ConfigError(
                    Code.CONFIG_UNKNOWN_KEY,
                    f"{key}: unknown configuration key (known: {known})",
                    where="config",
                )
            merged[key] = layer[key]
    return merged


def build_config(*layers: dict[str, Any] | None) -> ReplayConfig:
    """Merge ``layers`` over :data:`DEFAULTS` (later wins) and validate."""
    return _validate(_merged(*layers))


def check_layer(layer: dict[str, Any] | None) -> None:
    """One layer's keys and each of its values alone: what a layer is refused for wherever
    it sits (the catalog's ``replay:`` section, a fixture's ``config``, a ``--config``
    file).  A rule between two keys (``critical_pct`` at most ``warning_pct``) is the merged
    configuration's (:func:`build_config`): one layer may set one key and a layer above it
    the other (a fixture's ``warning_pct: 20`` over a catalog's ``critical_pct: 10`` was
    refused against the default ``critical_pct``, 25)."""
    _validate(_merged(layer), between=False)


class _Clash(ConfigError):
    """Two keys that break a rule between them (``x-at-most``), named in ``keys``."""

    def __init__(self, key: str, other: str, why: str, got: Any) -> None:
        bad = _bad(key, why, got)
        super().__init__(bad.code, bad.why, where=bad.where)
        self.keys = frozenset((key, other))


def _profile(v: Any) -> str | float | int:
    if isinstance(v, str):
        if v not in PROFILES:
            raise _bad("tokenizer_profile", f"must be one of {', '.join(PROFILES)} or a number", v)
        return v
    return _num("tokenizer_profile", v, replay_property("tokenizer_profile")["oneOf"][1])


def _roles(roles: Any) -> tuple[str, ...]:
    if not isinstance(roles, list) or not all(isinstance(r, str) for r in roles):
        raise _bad("protected_roles", "must be a list of role names", roles)
    for r in roles:
        if r not in KNOWN_ROLES:
            raise _bad("protected_roles", f"unknown role (accepted: {', '.join(KNOWN_ROLES)})", r)
    if len(set(roles)) != len(roles):
        raise _bad("protected_roles", "lists a role twice", roles)
    return tuple(roles)


def _value(key: str, v: Any) -> Any:
    """One key's value, checked against its schema (keys in the schema's order)."""
    prop = replay_property(key)
    if key == "tokenizer_profile":
        return _profile(v)
    if key == "protected_roles":
        return _roles(v)
    if prop.get("type") == "boolean":
        if not isinstance(v, bool):
            raise _bad(key, "must be true or false", v)
        return v
    return _int(key, v, prop) if prop.get("type") == "integer" else _num(key, v, prop)


def _validate(c: dict[str, Any], *, between: bool = True) -> ReplayConfig:
    """Each value checked against its schema, then (``between``) the rules between keys."""
    out = {key: _value(key, c[key]) for key in REPLAY_SCHEMA["properties"]}
    for key, prop in REPLAY_SCHEMA["properties"].items():
        other = prop.get("x-at-most")
        if between and other is not None and out[key] > out[other]:
            raise _Clash(key, other, f"must not exceed {other} ({out[other]})", out[key])
    return ReplayConfig(**out)


def read_replay_layer(path: str | Path) -> dict[str, Any]:
    """Read a JSON or YAML configuration mapping (not yet validated)."""
    p = Path(path)
    raw = read_or_raise(p, MAX_CONFIG_BYTES, ConfigError)
    try:
        data = parse_value_bytes(raw, str(p), "json" if p.suffix.lower() == ".json" else "yaml")
    except DocumentError as exc:  # (a file that cannot be parsed, as the settings file's)
        raise ConfigError(Code.CONFIG_INVALID, exc.why, where=exc.where, path=str(p)) from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(Code.CONFIG_NOT_MAPPING, "the configuration must be a mapping",
                          path=str(p))
    return data


def load_replay_config(path: str | Path | None, *base: dict[str, Any] | None,
                       paths: Sequence[str | None] = ()) -> ReplayConfig:
    """Defaults, then ``base`` layers (e.g. the fixture's own ``config``), then the file.
    ``paths``: the files the ``base`` layers come from, in their order (None: unknown); a
    rule between two keys broken by the merged layers is reported against the last file that
    sets either."""
    layer = read_replay_layer(path) if path is not None else None
    layers = [*base, layer]
    names = [*paths[:len(base)], *[None] * (len(base) - len(paths)), str(path) if path else None]
    try:
        check_layer(layer)
        return build_config(*layers)
    except _Clash as exc:
        named = [n for lay, n in zip(layers, names, strict=True)
                 if n and lay and exc.keys & lay.keys()]
        if named or path is not None:
            exc.with_path(named[-1] if named else str(path))
        raise
    except ConfigError as exc:
        if path is not None:
            exc.with_path(str(path))
        raise
