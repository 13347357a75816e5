"""``risutools notes init COMPONENT``: a curator notes file to start from, with every field
a curator may fill (``capabilities.requires`` among them), written to
``notes/<component_id>.yaml`` of the component's catalog through the one write path (under
the catalog lock, a new file: never over an existing one).  A component that already has a
notes file (by its id, a slug alias, ``for:`` or the digest it records: the lookup every
command uses) is refused with one line, nothing written."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import ClassVar

from risutools.catalog.writes import catalog_lock, write_new_file
from risutools.commands.catalogs import configure, open_for
from risutools.contract.notesfind import document_keys, find_notes
from risutools.errors import Code, ConfigError, WriteConflict
from risutools.projection.notes_scaffold import scaffold


@dataclass(frozen=True)
class Options:
    component: str
    catalog: str | None = None
    config_file: str | None = None


@dataclass
class NotesWritten:
    kind: ClassVar[str] = "notes"
    line: str  # what was written, one line

    def exit_code(self) -> int:
        return 0


def run(opts: Options) -> NotesWritten:
    cat, entry = open_for(opts.component, opts.catalog, configure(opts.config_file))
    cid = entry.component_id
    target = cat.note_path(cid)
    if target is None:
        raise ConfigError(Code.BAD_COMPONENT_ID, f"{cid!r} is not a plain name; a notes "
                          "file is named after its component", path=opts.component)
    with catalog_lock(cat):
        if os.path.lexists(cat.notes_dir):
            cat.own_folder(cat.notes_dir, "notes/")
        found = find_notes(cat.notes_dir, cid, **document_keys(entry.doc))
        if found is not None or os.path.lexists(target):
            have = cat.rel(found if found is not None else target)
            raise ConfigError(Code.TARGET_EXISTS, f"{cid} already has a notes file; edit it "
                              "(nothing written)", path=have)
        try:
            write_new_file(target, scaffold(entry.doc).encode("utf-8"))
        except WriteConflict:
            raise ConfigError(Code.TARGET_EXISTS, f"{cid} already has a notes file; edit it "
                              "(nothing written)", path=cat.rel(target)) from None
    return NotesWritten(f"wrote {cat.rel(target)}: the notes of {cid} (uncomment a field and "
                        "fill it; `risutools ingest` applies them)")
