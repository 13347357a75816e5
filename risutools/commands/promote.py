"""``risutools promote``, ``activate`` and ``deactivate``: every gate of a review-status
transition or a runtime switch with its verdict; when every gate passes (and not
``--dry-run``), the document and the transition log, locked and compare-and-swap."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import ClassVar

from risutools.catalog.gates import reads_catalog
from risutools.catalog.graph import LIVE_WORDS
from risutools.catalog.promote import Plan, execute, plan
from risutools.commands.catalogs import configure, open_for
from risutools.errors import WriteConflict, check_choice
from risutools.jsonlines import require_text
from risutools.pathnames import show_name
from risutools.printable import require_plain_text
from risutools.settings import lifecycle


@dataclass(frozen=True)
class Options:
    component: str
    to: str
    kind: str = "status"  # status (promote) | runtime (activate, deactivate) | publish
    dry_run: bool = False
    as_json: bool = False
    actor: str = ""  # activate/deactivate --by
    catalog: str | None = None
    sources: str | None = None
    config_file: str | None = None

    def __post_init__(self) -> None:
        if self.kind == "status":  # (activate/deactivate name their target themselves)
            check_choice(self.to, lifecycle.TARGETS, "--to")
        require_text(self.actor, "--by")  # text the transition log can hold
        require_plain_text(self.actor, "--by")  # (one line, no control character)


@dataclass
class Switched:
    """The plan (every gate's verdict), what was written, or the write that lost its
    compare-and-swap."""

    kind: ClassVar[str] = "switch"
    plan: Plan
    dry_run: bool
    as_json: bool
    done: str = ""  # "wrote ... and transitions.ndjson line N"
    conflict: WriteConflict | None = None

    def exit_code(self) -> int:
        return 0 if self.plan.ok and self.conflict is None else 1


def run(opts: Options) -> Switched:
    # (a step whose gates read the live components: read with the component, in one go)
    also = LIVE_WORDS if reads_catalog(opts.to) else ()
    cat, entry = open_for(opts.component, opts.catalog,
                          configure(opts.config_file, sources=opts.sources), also)
    p = plan(cat, entry, opts.to, kind=opts.kind)
    out = Switched(p, opts.dry_run, opts.as_json)
    if p.ok and not opts.dry_run:
        try:
            # $USER as printable text (bytes that are not UTF-8 escaped: a record holds text)
            line = execute(cat, p, actor=opts.actor or show_name(os.environ.get("USER", "")))
        except WriteConflict as exc:
            out.conflict = exc
            return out
        out.done = (f"wrote {entry.where()} ({p.to}, {p.after_sha256[:19]}…) and "
                    f"transitions.ndjson line {line}")
    return out
