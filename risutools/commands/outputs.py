"""What a command's output may not name: a file the command reads.  Inside a folder it reads,
that is a file its walk would read (a component document, a Risu file by its content) or a
file of the catalog's own (its configuration, ``transitions.ndjson``, what ``notes/``,
``approvals/``, ``replays/`` and ``facts/`` hold, the ingest cache); besides the folders and
files its command line names, a command reads what it finds for itself: the catalog each
path (or the current folder) belongs to, its configuration file, and the ``allowed_signers``
file and source store that configuration names (:func:`implicit_inputs`).  The command
modules that read folders give :func:`reads_file` to the command line, and their results
carry their implicit inputs (``reads``), both asked by
:func:`risutools.report.output.refuse_output_on_input`: ``review cat -o cat/doc.json`` had
replaced a document with the report, ``cd cat && review -o doc.json`` and ``review cat -o
cat/.risutools.yaml`` still did."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from risutools.catalog.catalog import MARKERS, find_root
from risutools.contract.loaders import load_file, not_a_component
from risutools.errors import RisuError
from risutools.formats.reader import detect
from risutools.pathnames import WholeFolder
from risutools.replay.reportpaths import report_paths
from risutools.settings.catalog import CACHE_DIR, REPLAY_REPORT, REPLAYS_DIR
from risutools.settings.config import Settings

#: the names of a catalog's own files and folders: a file so named, or inside a folder so
#: named, is one a command may read (never replaced by a report)
OWN_NAMES = frozenset((*MARKERS, CACHE_DIR))


def reads_file(path: str) -> bool:
    """Whether a command reading the folder that holds ``path`` may read it: a file of the
    catalog's own (:data:`OWN_NAMES`), a Risu file, or a component document (a report an
    earlier run left is none of these); bounded as every read."""
    return _read_as(path)[0]


def _read_as(path: str) -> tuple[bool, Any]:
    """:func:`reads_file`'s answer, and the file's one document when it was read as one
    (None otherwise): what :func:`report_replaces` asks too, the file read once."""
    p = Path(path)
    if p.name in OWN_NAMES or any(part in OWN_NAMES for part in p.parent.parts):
        return True, None
    try:
        if detect(path) is not None:
            return True, None
    except RisuError:  # (not readable: not read by the command either)
        return False, None
    out = load_file(path, from_folder=True)
    if not out.documents:
        return False, None
    doc = out.documents[0].doc
    return not_a_component(doc) is None, doc if len(out.documents) == 1 else None


def report_replaces(path: str) -> bool:
    """:func:`reads_file` for a command that writes replay reports: a file in a catalog's
    ``replays/``, or a replay report anywhere, is a report an earlier run left (written
    again), anything else as :func:`reads_file` says."""
    if Path(path).parent.name == REPLAYS_DIR:
        return False
    read, doc = _read_as(path)
    return read and not (isinstance(doc, dict) and doc.get("report") == REPLAY_REPORT)


def implicit_inputs(paths: Iterable[str | Path | None], cfg: Settings | None
                    ) -> tuple[str, ...]:
    """What a command reads that its command line need not name: the catalog above each of
    ``paths`` (None: the current folder), and the configuration file, the
    ``allowed_signers`` file and the source store of ``cfg``."""
    folders = dict.fromkeys(os.path.dirname(os.path.abspath(p)) if p is not None and
                            not os.path.isdir(p) else os.fspath(p or ".") for p in paths)
    found: list[Path | None] = [find_root(Path(f)) for f in folders]  # (once a folder)
    if cfg is not None:
        found += [cfg.source_file, cfg.catalog.allowed_signers]
    got = [str(p) for p in found if p is not None]
    if cfg is not None and cfg.sources is not None:  # (any file of it may be hashed)
        got.append(WholeFolder(cfg.sources))
    return tuple(dict.fromkeys(got))


def report_renderings(params: dict[str, Any]) -> tuple[str, ...]:
    """What a replay command writes besides the report ``-o`` names: its ``.md`` and
    ``.html`` renderings next to it (a command's ``writes``: asked, as ``-o`` is, never to
    be a file the command reads)."""
    out = params.get("output")
    if not isinstance(out, str) or not out or Path(out).suffix.lower() in (".md", ".html"):
        return ()  # (none named, or refused as it is)
    return tuple(str(p) for p in report_paths(out)[1:])
