"""``risutools approve``: a human approval record naming the document's current base hash,
optionally SSH-signed; a record is a new file, never overwritten."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from risutools.catalog.approvals import build_record, dump_record, record_path, sign
from risutools.catalog.writes import catalog_lock, write_new_file
from risutools.commands.catalogs import configure, open_for
from risutools.errors import Code, ConfigError, UsageError, check_choice
from risutools.jsonlines import require_text
from risutools.settings import lifecycle


@dataclass(frozen=True)
class Options:
    component: str
    action: str
    reviewer: str
    note: str = ""
    sign: str | None = None
    catalog: str | None = None
    config_file: str | None = None

    def __post_init__(self) -> None:
        check_choice(self.action, lifecycle.ACTIONS, "--action")
        if not self.reviewer.strip():
            raise UsageError("--reviewer", "must name the person approving")
        require_text(self.reviewer, "--reviewer")  # text a record can hold, hash and sign
        require_text(self.note, "--note")


@dataclass
class Approved:
    kind: ClassVar[str] = "approve"
    line: str  # what was written, one line

    def exit_code(self) -> int:
        return 0


def run(opts: Options) -> Approved:
    cat, entry = open_for(opts.component, opts.catalog, configure(opts.config_file))
    record = build_record(entry, opts.action, opts.reviewer, opts.note)
    to = lifecycle.TARGET_OF[opts.action]
    if lifecycle.action_for(entry.review_status, to) != opts.action:
        raise ConfigError(Code.ACTION_NOT_NEXT, f"{entry.component_id} is "
                          f"{entry.review_status or '(no status)'}; {opts.action!r} leads to "
                          f"{to}, which is not its next step", path=opts.component)
    if opts.sign is not None:
        record["signature"] = sign(record, opts.sign, cat.settings.namespace)
    with catalog_lock(cat):
        path = record_path(cat, record)
        write_new_file(path, dump_record(record))
    signed = "signed" if opts.sign else "unsigned"
    return Approved(f"wrote {cat.rel(path)} ({signed}): {opts.action} of {entry.component_id} "
                    f"{entry.version} at base {entry.base_sha256} (-> {to})")
