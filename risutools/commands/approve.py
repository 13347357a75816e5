"""``risutools approve``: a human approval record naming the document's current base hash,
optionally SSH-signed; a record is a new file, never overwritten.  With ``--packet`` or
``--base`` it is bound to what the reviewer read, and refused when the document moved on
(:mod:`risutools.catalog.binding`)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

from risutools.catalog.approvals import build_record, dump_record, record_path, sign
from risutools.catalog.binding import binding, read_packet, require_base
from risutools.catalog.writes import catalog_lock, write_new_file
from risutools.commands.catalogs import configure, open_for
from risutools.contract.transitions import record_used
from risutools.errors import Code, ConfigError, UsageError, WriteConflict, check_choice
from risutools.jsonlines import require_text
from risutools.settings import lifecycle

BASE_RE = re.compile(r"sha256:[0-9a-f]{64}")


@dataclass(frozen=True)
class Options:
    component: str
    action: str
    reviewer: str
    note: str = ""
    sign: str | None = None
    catalog: str | None = None
    config_file: str | None = None
    packet: str | None = None  # the review packet the reviewer read (its base hash binds)
    base: str | None = None  # or the base hash read (``risutools hash -q``)

    def __post_init__(self) -> None:
        check_choice(self.action, lifecycle.ACTIONS, "--action")
        if not self.reviewer.strip():
            raise UsageError("--reviewer", "must name the person approving")
        require_text(self.reviewer, "--reviewer")  # text a record can hold, hash and sign
        require_text(self.note, "--note")
        if self.packet is not None and self.base is not None:
            raise UsageError("--base", "give --packet or --base, not both")
        if self.base is not None and not BASE_RE.fullmatch(self.base):
            raise UsageError("--base", "a base hash is sha256: and 64 lowercase hex digits "
                             "(`risutools hash -q DOC`)")


@dataclass
class Approved:
    kind: ClassVar[str] = "approve"
    line: str  # what was written, one line

    def exit_code(self) -> int:
        return 0


def run(opts: Options) -> Approved:
    cat, entry = open_for(opts.component, opts.catalog, configure(opts.config_file))
    record = build_record(entry, opts.action, opts.reviewer, opts.note)
    to = lifecycle.TARGET_OF.get(opts.action) or (
        f"runtime {lifecycle.SWITCH_TO[opts.action]}" if opts.action in lifecycle.SWITCH_TO
        else f"{lifecycle.PUBLISHED}: true")
    published = entry.get("provenance", "publishable") is True
    if opts.action not in lifecycle.open_actions(entry.review_status, entry.runtime_status,
                                                 published):
        rt = f", {entry.runtime_status}" if opts.action in lifecycle.SWITCH_TO else ""
        raise ConfigError(Code.ACTION_NOT_NEXT, f"{entry.component_id} is "
                          f"{entry.review_status or '(no status)'}{rt}; "
                          f"{opts.action!r} leads to {to}, which is not its next step",
                          path=opts.component)
    packet = read_packet(opts.packet, entry) if opts.packet is not None else None
    read = packet["base_sha256"] if packet is not None else opts.base
    if read is not None:
        require_base(cat, entry, read, packet)
    record["read"] = binding(opts.packet, packet, opts.base)
    if opts.sign is not None:
        record["signature"] = sign(record, opts.sign, cat.settings.namespace)
    with catalog_lock(cat):
        if read is not None:  # (the document may have moved while the record was signed)
            now = open_for(opts.component, opts.catalog, configure(opts.config_file))[1]
            require_base(cat, now, read, packet)
        if record_used(cat.log(), record):
            raise WriteConflict(Code.RECORD_USED, "a transition line already used a record "
                                "with exactly these fields (the same second: is "
                                "SOURCE_DATE_EPOCH set?); it would approve nothing: approve "
                                "again with a --note, or a second later; nothing written",
                                path=opts.component)
        path = record_path(cat, record)
        write_new_file(path, dump_record(record))
    signed = "signed" if opts.sign else "unsigned"
    bound = {"packet": f"packet task {record['read'].get('task_id')}, "
                       f"{record['read'].get('lane')} lane",
             "base": "the base read"}.get(record["read"]["how"], "without a packet")
    return Approved(f"wrote {cat.rel(path)} ({signed}): {opts.action} of "
                    f"{entry.component_id} {entry.version} at base {entry.base_sha256} "
                    f"(-> {to}); read: {bound}")
