"""Catalog configuration: ``.risutools.yaml`` or ``[tool.risutools]`` in ``pyproject.toml``.

Keys (anything else is a :class:`ConfigError`)::

    capabilities: [my.capability, ...]      # or a mapping name -> description
    rules: {MC401: error, MC600: off}        # error | warning | off
    sources: ../risu-store                   # source store folder (relative to the file)
    exclude: ["drafts/*", "*.example.json"]  # folder-walk globs (file name or relative path)

Sections other parts of risutools own (``ingest``, ``replay``, ``review``,
``promote``, ``catalog``, ``analysis``, ``projection``) are accepted as
mappings and kept, unread, in ``ContractConfig.sections``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from risutools.errors import ConfigError

CONFIG_NAMES = (".risutools.yaml", ".risutools.yml")
CONTRACT_KEYS = ("capabilities", "rules", "sources", "exclude")
OTHER_SECTIONS = ("analysis", "catalog", "ingest", "projection", "promote", "replay", "review")
SEVERITY_CHOICES = ("error", "warning", "off")
# The spec's pattern; always used with ``fullmatch`` (``$`` alone would accept a trailing "\n").
CAPABILITY_PATTERN = r"^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$"
CAPABILITY_RE = re.compile(r"[a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*)*")


@dataclass(frozen=True)
class ContractConfig:
    """What a catalog configures about validation (defaults: nothing)."""

    extra_capabilities: frozenset[str] = frozenset()
    severities: Mapping[str, str] = field(default_factory=dict)  # rule -> error|warning|off
    sources: Path | None = None
    exclude: tuple[str, ...] = ()
    promotion_gate: bool = False  # MC600 as an error (the approve/promote gate)
    source_file: Path | None = None
    sections: Mapping[str, Any] = field(default_factory=dict)

    def with_promotion_gate(self) -> ContractConfig:
        return replace(self, promotion_gate=True)


def _parse(raw: Any, origin: Path) -> ContractConfig:
    from risutools.contract.rules import RULES

    where = str(origin)
    if raw is None:
        return ContractConfig(source_file=origin)
    if not isinstance(raw, dict):
        raise ConfigError("config-not-mapping", "the configuration must be a mapping", path=where)
    allowed = CONTRACT_KEYS + OTHER_SECTIONS
    unknown = sorted(k for k in raw if k not in allowed)
    if unknown:
        raise ConfigError(
            "config-unknown-key",
            f"unknown key(s) {', '.join(map(repr, unknown))}; allowed: {', '.join(allowed)}",
            path=where,
        )
    caps: set[str] = set()
    raw_caps = raw.get("capabilities", [])
    names = list(raw_caps) if isinstance(raw_caps, (list, dict)) else None
    if names is None:
        raise ConfigError("config-bad-value", "capabilities must be a list of names "
                          "(or a mapping name -> description)", where="capabilities", path=where)
    for name in names:
        if not isinstance(name, str) or not CAPABILITY_RE.fullmatch(name):
            raise ConfigError("config-bad-value", f"capability name {name!r} does not match "
                              f"{CAPABILITY_PATTERN}", where="capabilities", path=where)
        caps.add(name)
    sev: dict[str, str] = {}
    raw_rules = raw.get("rules", {})
    if not isinstance(raw_rules, dict):
        raise ConfigError("config-bad-value", "rules must be a mapping RULE: error|warning|off",
                          where="rules", path=where)
    for rule, level in raw_rules.items():
        if level is False:  # YAML 1.1 reads a bare `off` as false: `MC105: off` means off
            level = "off"
        if rule not in RULES:
            raise ConfigError("config-unknown-rule", f"unknown rule {rule!r}",
                              where="rules", path=where)
        if level not in SEVERITY_CHOICES:
            raise ConfigError("config-bad-value", f"rule {rule}: {level!r} is not one of "
                              f"{', '.join(SEVERITY_CHOICES)}", where="rules", path=where)
        if RULES[rule].scope == "load":
            raise ConfigError("config-bad-value", f"rule {rule} (unreadable input) cannot be "
                              "changed", where="rules", path=where)
        sev[rule] = level
    sources = raw.get("sources")
    src_path: Path | None = None
    if sources is not None:
        if not isinstance(sources, str) or not sources:
            raise ConfigError("config-bad-value", "sources must be a folder path",
                              where="sources", path=where)
        src_path = (origin.parent / sources).resolve() if not Path(sources).is_absolute() \
            else Path(sources)
    exclude = raw.get("exclude", [])
    if not isinstance(exclude, list) or not all(isinstance(x, str) for x in exclude):
        raise ConfigError("config-bad-value", "exclude must be a list of glob patterns",
                          where="exclude", path=where)
    sections = {}
    for name in OTHER_SECTIONS:
        if name in raw:
            if not isinstance(raw[name], dict):
                raise ConfigError("config-bad-value", f"{name} must be a mapping",
                                  where=name, path=where)
            sections[name] = raw[name]
    return ContractConfig(frozenset(caps), sev, src_path, tuple(exclude), False, origin,
                          sections)


def load_config_file(path: str | Path) -> ContractConfig:
    """Read one configuration file (``.risutools.yaml`` or ``pyproject.toml``)."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise ConfigError("config-unreadable", f"cannot read: {exc.strerror or exc}",
                          path=str(p)) from None
    if p.name == "pyproject.toml" or p.suffix == ".toml":
        return _parse(_toml_section(data, p), p)
    from risutools.contract.loaders import load_bytes

    out = load_bytes(data, str(p), fmt="yaml")
    if out.problems:
        f = out.problems[0]
        raise ConfigError("config-invalid", f.message,
                          where=f"line {f.line}" if f.line else "", path=str(p))
    raw = out.documents[0].doc if out.documents else None
    return _parse(raw, p)


def _toml_section(data: bytes, p: Path) -> Any:
    import importlib

    try:
        tomllib: Any = importlib.import_module("tomllib")
    except ModuleNotFoundError:  # Python 3.10
        try:
            tomllib = importlib.import_module("tomli")
        except ModuleNotFoundError:
            raise ConfigError("config-toml", "reading pyproject.toml needs Python 3.11+ or "
                              "the tomli package; or use .risutools.yaml", path=str(p)) from None
    try:
        doc = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError("config-invalid", f"not valid TOML: {exc}", path=str(p)) from None
    return doc.get("tool", {}).get("risutools")


def find_config(start_dir: str | Path) -> Path | None:
    """The nearest ``.risutools.yaml`` (or pyproject.toml with ``[tool.risutools]``)
    in ``start_dir`` or its parents; the search stops at a folder holding ``.git``."""
    d = Path(start_dir).resolve()
    if d.is_file():
        d = d.parent
    while True:
        for name in CONFIG_NAMES:
            if (d / name).is_file():
                return d / name
        py = d / "pyproject.toml"
        if py.is_file():
            try:
                has = b"[tool.risutools" in py.read_bytes()
            except OSError:
                has = False
            if has:
                return py
        if (d / ".git").exists() or d.parent == d:
            return None
        d = d.parent


def load_config(start_dir: str | Path = ".") -> ContractConfig:
    """Find and read the catalog configuration above ``start_dir`` (defaults when none)."""
    found = find_config(start_dir)
    return load_config_file(found) if found is not None else ContractConfig()
