"""What ``risutools packet`` does (the CLI function only parses options)."""

from __future__ import annotations

from pathlib import Path

from risutools.catalog.approvals import now_iso
from risutools.catalog.catalog import Catalog
from risutools.catalog.packet import build_packet, write_packet, write_queue
from risutools.errors import ConfigError


def run_packet(component: str | None, lane: str, out: str, actor: str,
               instruction: str | None, escalates: str | None, queue: str | None,
               status: str | None, limit: int, catalog: str | None) -> int:
    if queue is not None:
        if component is not None:
            raise ConfigError("usage", "--queue takes no COMPONENT (it selects by --status)")
        if lane != "light":
            raise ConfigError("usage", "--queue hands off light packets only (--lane light)")
        if not status:
            raise ConfigError("usage", "--queue needs --status (e.g. candidate)")
        if limit < 1:
            raise ConfigError("usage", "--limit must be at least 1")
        cat = Catalog.open(catalog)
        path, rec = write_queue(cat, Path(queue), status, actor=actor, limit=limit,
                                when=now_iso())
        print(f"queued {rec['queued']} light packet(s) of {rec['matched']} {status} "
              f"component(s) in {queue}; hand-off record {path}"
              + (f" ({rec['left_out']} left out by --limit)" if rec["left_out"] else ""))
        return 0
    if component is None:
        raise ConfigError("usage", "name a COMPONENT (or use --queue DIR --status S)")
    if escalates is not None and lane != "full":
        raise ConfigError("usage", "--escalates names the light task a full packet escalates; "
                          "use --lane full")
    from risutools.catalog.approve import open_for

    cat, entry = open_for(component, catalog)
    p = build_packet(cat, entry, lane, actor=actor, instruction=instruction,
                     escalates=escalates)
    jpath, mpath = write_packet(p, Path(out))
    extra = ""
    if p["needs_full_context"]:
        why = ", ".join(sorted({r["reason"] for r in p["needs_full_context"]}))
        extra = f"; needs_full_context ({why})"
    print(f"wrote {jpath} and {mpath} (task {p['task']['id']}, {lane} lane{extra})")
    return 0
