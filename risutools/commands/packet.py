"""``risutools packet``: a review packet (JSON + Markdown) for one component, light or full
lane, or a bounded hand-off queue of light packets for every component of a status."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from risutools.catalog.approvals import now_iso
from risutools.catalog.catalog import Catalog
from risutools.catalog.packet import LANES, build_packet, write_packet, write_queue
from risutools.commands.catalogs import configure, open_for
from risutools.errors import UsageError, check_choice
from risutools.jsonlines import require_text
from risutools.printable import require_plain_text
from risutools.safeio import enters
from risutools.settings import lifecycle
from risutools.targets import check_target


@dataclass(frozen=True)
class Options:
    component: str | None
    lane: str
    out: str = "packets"
    actor: str = ""
    instruction: str | None = None
    escalates: str | None = None
    queue: str | None = None
    status: str | None = None
    limit: int = 1000
    catalog: str | None = None
    config_file: str | None = None

    def __post_init__(self) -> None:
        for value, option in ((self.actor, "--actor"), (self.instruction, "--instruction"),
                              (self.escalates, "--escalates")):
            if value is not None:
                require_text(value, option)  # text a packet and its hand-off record can hold
                require_plain_text(value, option)  # (one line, no control character)
        check_target(self.queue if self.queue is not None else self.out, folder=True)
        check_choice(self.lane, LANES, "--lane")
        if self.queue is not None:
            if self.component is not None:
                raise UsageError("--queue", "takes no COMPONENT (it selects by --status)")
            if self.lane != "light":
                raise UsageError("--queue", "hands off light packets only (--lane light)")
            if not self.status:
                raise UsageError("--queue", "needs --status (e.g. candidate)")
            check_choice(self.status, lifecycle.STATES, "--status")
            if self.limit < 1:
                raise UsageError("--limit", "must be at least 1")
            return
        if self.component is None:
            raise UsageError("", "name a COMPONENT (or use --queue DIR --status S)")
        if self.escalates is not None and self.lane != "full":
            raise UsageError("--escalates", "names the light task a full packet escalates; "
                             "use --lane full")


@dataclass
class Packets:
    """The packet written (its files), or the queue's hand-off record."""

    kind: ClassVar[str] = "packet"
    lane: str
    packet: dict[str, Any] | None = None
    files: tuple[Path, Path] | None = None
    queue: str | None = None
    status: str | None = None
    handoff: Path | None = None
    record: dict[str, Any] | None = None

    def exit_code(self) -> int:
        return 0


def run(opts: Options) -> Packets:
    if opts.queue is not None:
        assert opts.status is not None  # (the options say so)
        cat = Catalog.open(opts.catalog, configure=configure(opts.config_file))
        _stays_in(cat, Path(opts.queue))
        path, rec = write_queue(cat, Path(opts.queue), opts.status, actor=opts.actor,
                                limit=opts.limit, when=now_iso())
        return Packets(opts.lane, queue=opts.queue, status=opts.status, handoff=path,
                       record=rec)
    assert opts.component is not None
    # (the packet's relations read every document: read once, the component among them)
    cat, entry = open_for(opts.component, opts.catalog, configure(opts.config_file), whole=True)
    _stays_in(cat, Path(opts.out))
    p = build_packet(cat, entry, opts.lane, actor=opts.actor, instruction=opts.instruction,
                     escalates=opts.escalates)
    return Packets(opts.lane, packet=p, files=write_packet(p, Path(opts.out)))


def _stays_in(cat: Catalog, out: Path) -> None:
    """A folder named through the catalog (the default ``packets`` run from the catalog's
    own folder; :func:`~risutools.safeio.enters`) must stay inside it once its links are
    followed, and be no link itself: a pull request can make ``packets`` a link to elsewhere
    (``outside-catalog``) or to a folder of the catalog (``packets -> .`` wrote each packet's
    JSON among the documents: ``not-a-directory``), exit 2, nothing written.  A folder the
    user names outside the catalog is theirs, written as named."""
    if enters(cat.root, out):
        cat.own_folder(out, "the packets' folder")
