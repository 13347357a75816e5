"""The ``catalog:`` section of the configuration: approvals and their signatures."""

from __future__ import annotations

import errno
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from risutools.errors import Code, ConfigError
from risutools.pathnames import real_path

#: the folder of a catalog where ``ingest`` writes each component's facts summary
#: (``facts/<component_id>.json``, written by the projection, read by the review)
FACTS_DIR = "facts"
#: the format a replay report names (its ``report``; the ``source_version`` of the
#: ``source_refs`` entry that records one)
REPLAY_REPORT = "replay-report-v1"
#: the folder of a catalog (beside a document) that holds its replay reports
REPLAYS_DIR = "replays"
#: the catalog's transition log (append-only NDJSON, one line a recorded step)
LOG_NAME = "transitions.ndjson"
#: the folder of what `ingest` keeps between its runs (its cache: the catalog's own)
CACHE_DIR = ".risutools-cache"
#: the format name a facts summary carries (``"facts": "component-facts-v1"``)
FACTS_FORMAT = "component-facts-v1"
#: the ``source_version`` of the ``source_refs`` entry that records a component's curator
#: notes file (its digest; never the first entry, which is the Risu attachment: MC102)
NOTES_SOURCE_VERSION = "notes.yaml"
#: the largest curator notes file read (bytes): ingest, the projection and packets
MAX_NOTES_BYTES = 4 * 1024 * 1024


#: the most worker processes ``ingest`` and ``review`` start, whatever ``-j`` asks (each is
#: also at most one a file: ingest's, or one a chunk of documents: review's)
MAX_JOBS = 256


def default_jobs() -> int:
    """The processes ``ingest`` and ``review`` run on when ``-j`` is not given: the cores
    this process may run on (its CPU affinity, which ``taskset`` and a container's cpuset
    narrow), or every core of the machine where the system does not say; at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # (no affinity on this system)
        return max(1, os.cpu_count() or 1)


def config_path(value: str, base: Path, key: str, where: str | None) -> Path:
    """A path a configuration names (``sources``, ``catalog.allowed_signers``), resolved
    against its file's folder; one the system cannot resolve (a NUL byte in it, a symbolic
    link loop, a name past the system's bound) is ``config-bad-value`` naming the key."""
    try:
        path = real_path(base / value)  # (an absolute path stays one)
        try:
            os.stat(path)  # (a loop is left in place by real_path: said here, as before)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise
        return path
    except (OSError, RuntimeError, ValueError) as exc:
        raise ConfigError(Code.CONFIG_BAD_VALUE, f"{key.rsplit('.', 1)[-1]}: cannot resolve "
                          f"the path: {exc}", where=key, path=where) from None


@dataclass
class CatalogSettings:
    """The ``catalog:`` section of the configuration (approvals and signatures)."""

    allowed_signers: Path | None = None
    require_signatures: bool = False
    namespace: str = "risutools-approval"


def catalog_settings(raw: Mapping[str, Any], source_file: Path | None) -> CatalogSettings:
    """The ``catalog:`` section (``raw``, a mapping) of the configuration file
    ``source_file``, validated: paths resolved against the file's folder."""
    where = str(source_file) if source_file else None
    allowed = {"allowed_signers", "require_signatures"}
    unknown = sorted(k for k in raw if k not in allowed)
    if unknown:
        raise ConfigError(Code.CONFIG_UNKNOWN_KEY, f"catalog: unknown key(s) "
                          f"{', '.join(map(repr, unknown))}; allowed: {', '.join(sorted(allowed))}",
                          where="catalog", path=where)
    out = CatalogSettings()
    signers = raw.get("allowed_signers")
    if signers is not None:
        if not isinstance(signers, str) or not signers:
            raise ConfigError(Code.CONFIG_BAD_VALUE, "allowed_signers must be a file path",
                              where="catalog.allowed_signers", path=where)
        base = source_file.parent if source_file else Path(".")
        out.allowed_signers = config_path(signers, base, "catalog.allowed_signers", where)
    req = raw.get("require_signatures", False)
    if not isinstance(req, bool):
        raise ConfigError(Code.CONFIG_BAD_VALUE, "require_signatures must be true or false",
                          where="catalog.require_signatures", path=where)
    out.require_signatures = req
    if req and out.allowed_signers is None:
        raise ConfigError(Code.CONFIG_BAD_VALUE, "require_signatures: true needs allowed_signers "
                          "(a file in git's allowed_signers format)", where="catalog", path=where)
    return out
