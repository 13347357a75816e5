"""Which files of a folder are component documents: by name (JSON, YAML, NDJSON), outside
the catalog's own folders and files, never through a link to a folder, and never a link
leading out of the folder (:func:`document_files`)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from risutools.contract.catalogroot import find_root
from risutools.pathnames import excluded, search_start
from risutools.safeio import FileRefused, check_inside
from risutools.settings.catalog import FACTS_DIR, LOG_NAME, REPLAYS_DIR

JSON_EXTS = (".json",)
YAML_EXTS = (".yaml", ".yml")
NDJSON_EXTS = (".ndjson", ".jsonl")
DOC_EXTS = JSON_EXTS + YAML_EXTS + NDJSON_EXTS

# Catalog folders and files that hold other things than component documents.
#: a catalog's own folders (what its commands write: records, facts, notes, replay reports)
CATALOG_DIRS = frozenset({"approvals", FACTS_DIR, "notes", REPLAYS_DIR})
SKIP_DIRS = CATALOG_DIRS | {"node_modules", "__pycache__"}
SKIP_FILES = frozenset({LOG_NAME, "pyproject.toml"})


def passed_over(name: str) -> bool:
    """Whether a folder walk passes over the file ``name`` by its name alone: a hidden
    file, one of the catalog's own (:data:`SKIP_FILES`), or a name no document has."""
    return name.startswith(".") or name in SKIP_FILES or not name.lower().endswith(DOC_EXTS)


def named_passed_over(path: str | Path) -> bool:
    """Whether a folder walk would pass over the file ``path`` named on the command line
    (``validate --skip-non-documents``, for hooks and ``git diff --name-only``): by its name
    (:func:`passed_over`), or by a folder it is in, hidden or one of :data:`SKIP_DIRS`
    (``approvals/``, ``facts/`` ...) -- below the root of the catalog it is in, found as
    every command finds it (:func:`~risutools.contract.catalogroot.find_root`): a catalog
    whose own folder is named ``facts`` (``validate facts/doc.json`` from above it) is no
    catalog's ``facts/``, whatever the path's spelling.  A path in no catalog: its folders
    as named, below the working directory for an absolute path inside it (none for one
    outside it)."""
    p = Path(path)
    if passed_over(p.name):
        return True
    try:
        here = search_start(p)
        root = find_root(here)
    except (OSError, ValueError):  # (no working directory, a name the system refuses)
        root = None
    if root is not None:
        try:
            return _in_skipped_folder(here.relative_to(root))
        except ValueError:  # (not below it as written: judged as named)
            pass
    if p.is_absolute():
        try:
            p = p.relative_to(Path.cwd())
        except (OSError, ValueError):  # (outside it, or no working directory)
            return False
    return _in_skipped_folder(p)


def _in_skipped_folder(rel: Path) -> bool:
    """Whether a folder of the relative path ``rel`` is one a walk never enters."""
    return any(part in SKIP_DIRS or (part.startswith(".") and part != "..")
               for part in rel.parts[:-1])


def document_files(root: Path, exclude: tuple[str, ...], errors: list[OSError],
                   outside: list[tuple[Path, FileRefused]],
                   links: set[Path] | None = None) -> Iterator[Path]:
    """The document files below ``root`` (``os.walk``'s, top-down): a link to a folder is
    never entered (no cycles, no /dev); a link to a file is yielded when it resolves inside
    ``root`` (read, or refused, by load_file like any other file; added to ``links``), else
    put in ``outside`` with its refusal.  The listing's own entry types (``d_type``) tell
    a link: no stat a file."""
    stack = [os.fspath(root)]
    while stack:
        top = stack.pop()
        try:
            with os.scandir(top) as it:
                entries = list(it)
        except OSError as exc:
            errors.append(exc)
            continue
        folder = Path(top)  # (one object a folder: each file's path made from it)
        below: list[str] = []
        for entry in entries:
            name = entry.name
            if _is_dir(entry):
                sub = os.path.join(top, name)
                if not name.startswith(".") and not _is_link(entry) and \
                        (name not in SKIP_DIRS or _catalog_of_its_own(sub)):
                    below.append(sub)
                continue
            if passed_over(name):
                continue
            f = folder / name
            if exclude and excluded(exclude, f.relative_to(root).as_posix(), name):
                continue
            if _is_link(entry):
                try:
                    check_inside(root, f, "the folder")
                except FileRefused as exc:
                    outside.append((f, exc))
                    continue
                if links is not None:
                    links.add(f)
            yield f
        stack.extend(sorted(below, reverse=True))


def _catalog_of_its_own(folder: str) -> bool:
    """Whether ``folder``, named as a catalog's own (``facts``, ``approvals``, ...), is a
    catalog's root itself (:func:`~risutools.contract.catalogroot.find_root` finds it for
    its files, as :func:`named_passed_over` judges them): then its documents are read."""
    if os.path.basename(folder) not in CATALOG_DIRS:
        return False
    here = search_start(folder)
    return find_root(here) == here


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def _is_link(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_symlink()
    except OSError:
        return False


def once_each(root: Path, found: list[Path], links: set[Path]
              ) -> tuple[list[Path], list[tuple[Path, Path]]]:
    """``found`` (the files of the folder ``root``, in order) without the links among them
    (``links``) that lead to a file the walk reads already -- one of ``found`` that is no
    link, or the target of a link before it: one file is one file, however many names it
    has (``cat/link.json -> cat/doc.json`` is no MC104 duplicate of ``doc.json``) -- and
    those links, each with the file it leads to.  A file that is no link is known by
    the folder's real path and its own relative path (a walk never enters a linked
    folder); a link by its real path: one ``realpath`` a link, none a file."""
    if not links:
        return found, []
    real_root = os.path.realpath(root)
    known: dict[str, Path] = {os.path.join(real_root, os.fspath(f.relative_to(root))): f
                              for f in found if f not in links}
    kept: list[Path] = []
    same: list[tuple[Path, Path]] = []
    for f in found:
        if f in links:
            target = os.path.realpath(f)
            if target in known:
                same.append((f, known[target]))
                continue
            known[target] = f
        kept.append(f)
    return kept, same
