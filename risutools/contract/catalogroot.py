"""Where a catalog's root is, found upwards from a path (:func:`find_catalog_root`, MC305's
rule; :func:`find_root`, a command's): what tells a catalog folder from any other."""

from __future__ import annotations

import os
from pathlib import Path

from risutools.pathnames import search_start
from risutools.settings.catalog import FACTS_DIR, LOG_NAME, REPLAYS_DIR

#: what marks a catalog folder (``facts/``: what ``ingest`` writes next to the documents)
MARKERS = (LOG_NAME, "approvals", ".risutools.yaml", ".risutools.yml", "notes", REPLAYS_DIR,
           FACTS_DIR)


def find_catalog_root(start: Path, stop: Path | None = None) -> Path | None:
    """The nearest folder from ``start`` upwards holding transitions.ndjson or approvals/."""
    d = search_start(start)
    if d.is_file():
        d = d.parent
    while True:
        if os.path.lexists(d / LOG_NAME) or (d / "approvals").is_dir():
            return d
        if (d / ".git").exists() or d.parent == d or (stop is not None and d == stop):
            return None
        d = d.parent


def find_root(start: Path) -> Path | None:
    """The catalog root above ``start``: MC305's rule first, then the other markers."""
    root = find_catalog_root(start)
    if root is not None:
        return root
    d = search_start(start)
    if d.is_file():
        d = d.parent
    while True:
        if any((d / m).exists() for m in MARKERS):
            return d
        if (d / ".git").exists() or d.parent == d:
            return None
        d = d.parent
