"""The one configuration object every command reads: :class:`Settings`.

Three layers, a later one winning: the defaults (an empty :class:`Settings`), the
configuration file (``.risutools.yaml`` or ``[tool.risutools]`` in ``pyproject.toml``:
:func:`load_settings` / :func:`load_settings_file`), and the command line
(:meth:`Settings.with_options`: ``--select``, ``--ignore``, ``--exclude``, ``--sources``,
``--promotion``).  The CLI builds it in one helper (``risutools.cli._settings``) before
anything runs and hands it to the library.  It lives here, beside the contract rules, because
they are its main readers and every reader already imports it from here.

Keys (:data:`KEYS`, each with the commands that read it; anything else is a
:class:`ConfigError` ``config-unknown-key`` naming it)::

    capabilities: [my.capability, ...]      # or a mapping name -> description
    rules: {MC401: error, RA1: off}          # error | warning | off, per check id or prefix
    sources: risu-store                      # source store folder (relative to the file;
                                             # must stay inside the repository, see below)
    exclude: ["drafts/*", "*.example.json"]  # folder-walk globs (file name or relative path)
    catalog: {allowed_signers: ..., require_signatures: ...}   # risutools.catalog.catalog
    replay: {max_context: ..., ...}          # risutools.settings.replay

The two sections (:data:`SECTIONS`) are validated here, at load time, by their reader's own
validation (a typo in ``replay:`` fails ``validate`` too) and kept in
``Settings.sections``.  ``rules:`` keys are expanded, at load time, to every
configurable check they match (the longest key wins), so :attr:`Settings.severities`
maps check ids; replay invariants, gates and unreadable input cannot be configured.

YAML 1.1 reads ``off``, ``no``, ``yes``, ``on`` as booleans: in ``rules:`` a boolean false
(``MC105: off``) means ``off``; a boolean true is refused with the fix (write a severity).

A configuration travels with the catalog, so a pull request can change it: it may
not point reads outside the repository.  ``sources:`` must resolve (symbolic links
followed) inside the *configuration root* -- the nearest folder holding ``.git``
above the configuration file, else the file's own folder.  A store elsewhere is
named on the command line (``verify --sources DIR``), or the user trusts the
configuration with ``verify --allow-config-sources-outside``; otherwise
:meth:`Settings.source_store` raises ``config-sources-outside``.  The file
itself is read through :func:`risutools.safeio.read_regular` (regular files only,
at most ``MAX_CONFIG_BYTES``).
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from risutools.checks.ids import NEEDS
from risutools.checks.registry import RuleFilter, guard_ids, known_ids, matches, split_codes
from risutools.errors import Code, ConfigError
from risutools.pathnames import excluded, real_path, search_start, show_name
from risutools.safeio import FileRefused, is_regular, read_or_raise, read_regular
from risutools.settings.catalog import CatalogSettings, catalog_settings, config_path
from risutools.settings.replay import check_layer
from risutools.settings.schema import (
    CAPABILITY_PATTERN,
    CONFIGURABLE_SCOPES,
    KEYS,
    MAX_CONFIG_BYTES,
    MAX_EXCLUDE,
    SECTIONS,
    SEVERITY_CHOICES,
)
from risutools.settings.tomlfile import names_section, toml_document, tool_section
from risutools.values import EMPTY, Problem, decode, load_yaml
from risutools.yamlsafe import YamlDocument

if TYPE_CHECKING:
    from risutools.findings import Finding

CONFIG_NAMES = (".risutools.yaml", ".risutools.yml")
CAPABILITY_RE = re.compile(CAPABILITY_PATTERN[1:-1])


@dataclass(frozen=True)
class Settings:
    """What a catalog configures about validation (defaults: nothing)."""

    extra_capabilities: frozenset[str] = frozenset()
    severities: Mapping[str, str] = field(default_factory=dict)  # rule -> error|warning|off
    sources: Path | None = None
    exclude: tuple[str, ...] = ()
    promotion_gate: bool = False  # MC600 as an error (the approve/promote gate)
    source_file: Path | None = None
    sections: Mapping[str, Any] = field(default_factory=dict)
    root: Path | None = None  # the folder paths in this configuration must stay inside
    sources_text: str | None = None  # ``sources:`` as written
    select: tuple[str, ...] = ()  # --select (command line only)
    ignore: tuple[str, ...] = ()  # --ignore (command line only)
    signers_pinned: bool = False  # --allowed-signers FILE (command line only): the trust root

    @functools.cached_property
    def catalog(self) -> CatalogSettings:
        """The ``catalog:`` section, as its typed view."""
        return catalog_settings(self.sections.get("catalog", {}), self.source_file)

    @property
    def replay(self) -> Mapping[str, Any] | None:
        """The ``replay:`` section as written (the replay layers it over its defaults and
        under a fixture's and a file's own keys), or None."""
        return self.sections.get("replay")

    def with_signers(self, allowed_signers: str | None) -> Settings:
        """``--allowed-signers FILE`` (the trust root CI pins, e.g. from the base branch):
        that file, and signatures required, whatever the configuration says."""
        if allowed_signers is None:
            return self
        section = {**self.sections.get("catalog", {}),
                   "allowed_signers": str(real_path(allowed_signers)),
                   "require_signatures": True}
        return replace(self, sections={**self.sections, "catalog": section},
                       signers_pinned=True)

    def trusted_signers(self, *, allow_outside: bool = False) -> CatalogSettings:
        """The ``catalog:`` section, refusing (:class:`ConfigError`
        ``config-signers-outside``) an ``allowed_signers`` that the configuration names
        outside its repository (:func:`config_root`; a pull request could point it at keys
        of its own), unless ``allow_outside`` or the file was pinned on the command line."""
        cat = self.catalog
        signers = cat.allowed_signers
        if signers is None or allow_outside or self.signers_pinned or self.source_file is None:
            return cat
        root = config_root(self.source_file)  # (--sources clears ``root``, not this)
        if _inside(signers, root):
            return cat
        raise ConfigError(
            Code.CONFIG_SIGNERS_OUTSIDE,
            f"`allowed_signers` resolves to {show_name(str(signers))}, outside "
            f"{show_name(str(root))}; a configuration may only name a trust root inside "
            "its repository: pass --allowed-signers FILE, or --allow-config-signers-outside "
            "to trust this configuration", where="catalog.allowed_signers",
            path=show_name(str(self.source_file)) if self.source_file else None)

    def with_promotion_gate(self) -> Settings:
        return replace(self, promotion_gate=True)

    def with_options(self, *, select: Iterable[str] = (), ignore: Iterable[str] = (),
                     sources: str | None = None, exclude: Iterable[str] = (),
                     promotion: bool = False) -> Settings:
        """The command-line layer over this one (an option not given changes nothing):

        - ``--select``/``--ignore`` (ids or prefixes) filter what is reported; a check
          ``--select`` names is reported even when ``rules:`` turns it ``off`` (the
          command line wins), at its default severity;
        - ``--sources DIR`` replaces ``sources:`` (the user's word: not bound to the root);
        - ``--exclude GLOB`` (repeated) replaces ``exclude:``;
        - ``--promotion``: MC600 is an error (the approve/promote gate).

        An id or prefix that matches no check is :class:`ConfigError` ``unknown-rule``."""
        sel, ign = split_codes(select), split_codes(ignore)
        RuleFilter(sel, ign)  # validates every code (unknown-rule)
        sev = {k: v for k, v in self.severities.items()
               if not (v == "off" and any(matches(k, s) for s in sel))}
        out = replace(self, severities=sev, select=sel, ignore=ign,
                      promotion_gate=self.promotion_gate or promotion)
        if sources is not None:
            out = replace(out, sources=Path(sources), sources_text=sources, root=None)
        ex = tuple(exclude)
        if ex:
            out = replace(out, exclude=ex)
        return out

    def rule_filter(self) -> RuleFilter:
        """``--select``/``--ignore`` of the command line as a filter."""
        return RuleFilter(self.select, self.ignore)

    def apply(self, findings: Iterable[Finding]) -> list[Finding]:
        """Findings as this configuration reports them: those ``--select``/``--ignore``
        drop and those ``rules:`` turns ``off`` left out, the rest at their configured
        severity (for passes that do not grade their own findings: ``analyze``, ``ingest``;
        the contract's rules read :attr:`severities` themselves)."""
        return list(self.applied(findings))

    def applied(self, findings: Iterable[Finding]) -> Iterator[Finding]:
        """:meth:`apply`, one finding at a time."""
        keep = self.rule_filter().keep
        for f in findings:
            level = self.severities.get(f.rule)
            if level == "off" or not keep(f.rule):
                continue
            yield (f if level is None or level == f.severity
                   else replace(f, severity=level))  # type: ignore[arg-type]

    def is_excluded(self, rel: str) -> bool:
        """Whether a folder walk skips ``rel`` (a path relative to the walked folder):
        an ``exclude:`` glob matches the relative path or the file name."""
        return excluded(self.exclude, rel, rel.rsplit("/", 1)[-1])

    def source_store(self, *, allow_outside: bool = False) -> Path | None:
        """The configured source store; :class:`ConfigError` ``config-sources-outside`` when
        it resolves outside :attr:`root` and ``allow_outside`` (the user's word on the
        command line) is not given."""
        if self.sources is None or allow_outside or self.root is None:
            return self.sources
        if _inside(self.sources, self.root):
            return self.sources

        raise ConfigError(
            Code.CONFIG_SOURCES_OUTSIDE,
            f"`sources: {show_name(self.sources_text or '')}` resolves to "
            f"{show_name(str(self.sources))}, outside {show_name(str(self.root))}; a "
            "configuration may only name a source store inside its repository: pass "
            "--sources DIR (or, to verify, --allow-config-sources-outside to trust this "
            "configuration)",
            where="sources",
            path=show_name(str(self.source_file)) if self.source_file else None,
        )


def _inside(path: Path, root: Path) -> bool:
    try:
        real_path(path).relative_to(real_path(root))
    except (ValueError, OSError, RuntimeError):
        return False
    return True


def config_root(config_file: Path) -> Path:
    """The folder a configuration's paths must stay inside: the nearest folder holding
    ``.git`` at or above the file's folder, else the file's own folder (resolved)."""
    start = real_path(config_file).parent
    d = start
    while True:
        if (d / ".git").exists():
            return d
        if d.parent == d:
            return start
        d = d.parent


def _parse(raw: Any, origin: Path) -> Settings:
    where = show_name(str(origin))
    if raw is None:
        return Settings(source_file=origin, root=config_root(origin))
    if not isinstance(raw, dict):
        raise ConfigError(Code.CONFIG_NOT_MAPPING,
                          "the configuration must be a mapping", path=where)
    allowed = tuple(KEYS)
    unknown = sorted(k for k in raw if k not in allowed)
    if unknown:
        raise ConfigError(
            Code.CONFIG_UNKNOWN_KEY,
            f"unknown key(s) {', '.join(map(repr, unknown))}; allowed: {', '.join(allowed)}",
            path=where,
        )
    caps = _capabilities(raw.get("capabilities", []), where)
    sev = _severities(raw.get("rules", {}), where)
    sources = raw.get("sources")
    src_path = _sources_path(sources, origin, where)
    exclude = raw.get("exclude", [])
    if not isinstance(exclude, list) or not all(isinstance(x, str) for x in exclude):
        raise ConfigError(Code.CONFIG_BAD_VALUE, "exclude must be a list of glob patterns",
                          where="exclude", path=where)
    if len(exclude) > MAX_EXCLUDE:
        raise ConfigError(Code.CONFIG_BAD_VALUE, f"exclude lists {len(exclude)} globs, more "
                          f"than {MAX_EXCLUDE}; match folders (drafts/*) rather than files",
                          where="exclude", path=where)
    sections = _sections(raw, where)
    cfg = Settings(frozenset(caps), sev, src_path, tuple(exclude), False, origin,
                   sections, config_root(origin), sources if isinstance(sources, str) else None)
    _check_sections(cfg)
    return cfg


def _capabilities(raw_caps: Any, where: str) -> set[str]:
    """``capabilities:`` -> the names (a list of names, or a mapping name -> description)."""
    names = list(raw_caps) if isinstance(raw_caps, (list, dict)) else None
    if names is None:
        raise ConfigError(Code.CONFIG_BAD_VALUE, "capabilities must be a list of names "
                          "(or a mapping name -> description)", where="capabilities", path=where)
    caps: set[str] = set()
    for name in names:
        if not isinstance(name, str) or not CAPABILITY_RE.fullmatch(name):
            raise ConfigError(Code.CONFIG_BAD_VALUE, f"capability name {name!r} does not match "
                              f"{CAPABILITY_PATTERN}", where="capabilities", path=where)
        caps.add(name)
    return caps


def _sources_path(sources: Any, origin: Path, where: str) -> Path | None:
    """``sources:`` resolved against the configuration file's folder (None when not set)."""
    if sources is None:
        return None
    if not isinstance(sources, str) or not sources:
        raise ConfigError(Code.CONFIG_BAD_VALUE, "sources must be a folder path",
                          where="sources", path=where)
    return config_path(sources, origin.parent, "sources", where)


def _sections(raw: dict[str, Any], where: str) -> dict[str, Any]:
    """The sections given (:data:`SECTIONS`), each a mapping (checked by its reader later)."""
    sections = {}
    for name in SECTIONS:
        if name in raw:
            if not isinstance(raw[name], dict):
                raise ConfigError(Code.CONFIG_NOT_MAPPING, f"{name} must be a mapping",
                                  where=name, path=where)
            sections[name] = raw[name]
    return sections


def _configurable(cid: str, scope: str) -> bool:
    """Whether a configuration's ``rules:`` may grade the check ``cid``: not a verdict
    (unreadable input, a replay invariant, a gate) nor a check guarding the lifecycle
    (:attr:`Check.guards <risutools.checks.registry.Check.guards>`: a pull request edits
    the configuration too)."""
    return scope in CONFIGURABLE_SCOPES and cid not in guard_ids()


def _severities(raw_rules: Any, where: str) -> dict[str, str]:
    """``rules:`` -> check id -> error | warning | off, for every configurable check a key
    names: an id, or a ruff-style prefix (``RA1`` = RA100-RA199, ``MC`` = every MC rule);
    the longest key that matches a check wins (``{RA: off, RA601: warning}``)."""
    if not isinstance(raw_rules, dict):
        raise ConfigError(Code.CONFIG_BAD_VALUE, "rules must be a mapping RULE: error|warning|off",
                          where="rules", path=where)
    checks = known_ids()
    levels: dict[str, str] = {}
    for rule, level in raw_rules.items():
        if level is False:  # YAML 1.1 reads a bare `off` (or `no`, `false`) as false: off
            level = "off"
        elif level is True:
            raise ConfigError(Code.CONFIG_BAD_VALUE, f"rule {rule}: an unquoted on/yes/true reads "
                              "as a boolean, not a severity; write error or warning",
                              where="rules", path=where)
        key = str(rule).strip().upper()
        if key in levels:  # (the file's parser refuses `MC401` twice; not `mc401`, `MC401 `)
            first = next(k for k in raw_rules if str(k).strip().upper() == key)
            raise ConfigError(Code.CONFIG_BAD_VALUE, f"rule {rule!r} names the same checks as "
                              f"{first!r} (ids are read in capitals, without spaces); keep "
                              "one of them", where="rules", path=where)
        hit = [(cid, scope) for cid, scope in checks.items() if matches(cid, key)]
        if not hit:
            raise ConfigError(Code.UNKNOWN_RULE, f"unknown rule {rule!r} (no check id starts "
                              "with it; see `risutools rule`)", where="rules", path=where)
        if level not in SEVERITY_CHOICES:
            raise ConfigError(Code.CONFIG_BAD_VALUE, f"rule {rule}: {level!r} is not one of "
                              f"{', '.join(SEVERITY_CHOICES)}", where="rules", path=where)
        if not any(_configurable(cid, scope) for cid, scope in hit):
            raise ConfigError(Code.CONFIG_BAD_VALUE, f"rule {rule} ({hit[0][0]}: unreadable "
                              "input, a replay invariant, a promotion gate or a check that "
                              "guards the lifecycle) cannot be changed", where="rules",
                              path=where)
        levels[key] = level
    sev: dict[str, str] = {}
    for cid, scope in checks.items():
        if not _configurable(cid, scope):
            continue
        keys = [k for k in levels if matches(cid, k)]
        if keys:
            sev[cid] = levels[max(keys, key=len)]
    _needed_on(sev, where)
    return sev


def _needed_on(sev: dict[str, str], where: str) -> None:
    """A check another needs (:data:`~risutools.checks.ids.NEEDS`) turned off while that one
    is on: ``config-bad-value`` (as ``--ignore`` of it is refused: never blind)."""
    for cid, needed in NEEDS.items():
        off = [n for n in needed if sev.get(n) == "off"]
        if off and sev.get(cid) != "off":
            raise ConfigError(Code.CONFIG_BAD_VALUE, f"{off[0]} cannot be off while "
                              f"{cid} is on ({cid} needs it: what it cannot read, {off[0]} "
                              f"says); turn {cid} off too, or leave {off[0]} on",
                              where="rules", path=where)


def _check_sections(cfg: Settings) -> None:
    """Each section checked by its reader's own validation, here at the boundary: a typo in
    ``catalog:`` or ``replay:`` is refused by every command, not only the one that reads it."""
    catalog_settings(cfg.sections.get("catalog", {}), cfg.source_file)
    if "replay" in cfg.sections:
        try:
            check_layer(cfg.sections["replay"])  # (the rules between keys: when merged)
        except ConfigError as exc:
            exc.where = "replay"
            raise exc.with_path(show_name(str(cfg.source_file))) from None


def load_settings_file(path: str | Path) -> Settings:
    """Read one configuration file (``.risutools.yaml`` or ``pyproject.toml``)."""
    p = Path(path)
    data = read_or_raise(p, MAX_CONFIG_BYTES, ConfigError)
    if p.name == "pyproject.toml" or p.suffix == ".toml":
        return _parse(_toml_section(data, p), p)
    text, problem = decode(data)
    docs: list[YamlDocument] = []
    if text is not None and problem is None:
        docs, problem = load_yaml(text) if text.strip() else ([], Problem(EMPTY))
        if problem is None and len(docs) > 1:  # (the second would never be read)
            problem = Problem("several YAML documents in one file; keep one", docs[1].line)
    if problem is not None or text is None:
        f = problem or Problem("cannot decode")
        raise ConfigError(Code.CONFIG_INVALID, f.message,
                          where=f"line {f.line}" if f.line else "", path=str(p))
    return _parse(docs[0].value if docs else None, p)


def _toml_section(data: bytes, p: Path) -> Any:
    return tool_section(toml_document(data, p), p)


def _found_inside(found: Path) -> Path:
    """A configuration file found by the search upwards, when it stays inside its folder's
    repository once its links are followed (the nearest folder above it holding ``.git``,
    else its own folder, as :func:`config_root` bounds the paths it names); else
    ``outside-catalog``: a ``.risutools.yaml`` linked to a file elsewhere was read by every
    catalog command, and its values quoted in their errors.  A file named on the command
    line (``--config``) is the user's word and is read wherever it is."""
    folder = found.parent
    root = next((d for d in (folder, *folder.parents) if (d / ".git").exists()), folder)
    if os.path.lexists(found) and not _inside(found, root):
        raise ConfigError(Code.OUTSIDE_CATALOG, "the configuration file found here leads "
                          f"outside {show_name(str(root))} (a symbolic link); name it with "
                          "--config FILE to use it", path=show_name(str(found)))
    return found


def find_settings_file(start_dir: str | Path) -> Path | None:
    """The nearest ``.risutools.yaml`` (or pyproject.toml with ``[tool.risutools]``)
    in ``start_dir`` or its parents; the search stops at a folder holding ``.git``.  Either
    one a link that leads out of its repository is ``outside-catalog`` (:func:`_found_inside`),
    a pyproject.toml too (to a regular file: any other is no configuration), before it is
    read."""
    d = search_start(start_dir)
    if d.is_file():
        d = d.parent

    while True:
        for name in CONFIG_NAMES:
            if (d / name).exists() or (d / name).is_symlink():
                # (load_settings_file refuses it if it is not a regular file)
                return _found_inside(d / name)
        py = d / "pyproject.toml"
        if is_regular(py):
            if os.path.islink(py):  # (never read where it leads unless that stays inside)
                _found_inside(py)
            try:
                has = names_section(read_regular(py, MAX_CONFIG_BYTES))
            except FileRefused:
                has = True  # let load_settings_file say what is wrong with it
            if has:
                return py
        if (d / ".git").exists() or d.parent == d:
            return None
        d = d.parent


def load_settings(start_dir: str | Path = ".") -> Settings:
    """Find and read the catalog configuration above ``start_dir`` (defaults when none)."""
    found = find_settings_file(start_dir)
    return load_settings_file(found) if found is not None else Settings()


def resolve_settings(config_file: str | None, start: str | Path | Iterable[str], *,
                     select: Iterable[str] = (), ignore: Iterable[str] = (),
                     sources: str | None = None, exclude: Iterable[str] = (),
                     promotion: bool = False) -> Settings:
    """The settings a command runs with, in three layers: the defaults, under the
    configuration file (``config_file``, else the nearest ``.risutools.yaml`` /
    ``pyproject.toml [tool.risutools]`` above ``start``: a folder, a file's folder, or the
    first path of a list that is not ``-``), under the command line's options."""
    if config_file:
        cfg = load_settings_file(config_file)
    else:
        if not isinstance(start, (str, Path)):
            start = next((p for p in start if p != "-"), ".")
        sp = Path(str(start))
        cfg = load_settings(sp if sp.is_dir() else (sp.parent if str(sp.parent) else Path(".")))
    return cfg.with_options(select=select, ignore=ignore, sources=sources, exclude=exclude,
                            promotion=promotion)
