"""What ``approve``, ``promote``, ``activate``, ``deactivate`` and ``packet`` do (the CLI
functions only parse options and call these)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path

from risutools.catalog.approvals import (
    build_record,
    dump_record,
    now_iso,
    record_path,
    sign,
)
from risutools.catalog.catalog import Catalog, Entry, find_root
from risutools.catalog.promote import Plan, execute, plan
from risutools.catalog.writes import catalog_lock, write_new_file
from risutools.errors import Code, ConfigError, WriteConflict
from risutools.jsonlines import require_text
from risutools.pathnames import show_name
from risutools.settings import lifecycle
from risutools.settings.config import Settings

#: how a command gets its settings once the catalog root is known (the CLI's layered
#: settings: defaults < the configuration file < the command line)
Configure = Callable[[Path], Settings]


def open_for(component: str, catalog: str | None, configure: Configure | None = None
             ) -> tuple[Catalog, Entry]:
    """The catalog (``--catalog``, else the one above the document, else above the current
    folder) and the component in it."""
    if catalog is None and Path(component).is_file():
        root = find_root(Path(component).resolve().parent)
        cat = Catalog.open(root if root is not None else Path(component).resolve().parent,
                           configure=configure)
    else:
        cat = Catalog.open(catalog, configure=configure)
    return cat, cat.resolve(component)


def approve(component: str, action: str, reviewer: str, note: str, key: str | None,
            catalog: str | None, configure: Configure | None = None) -> str:
    cat, entry = open_for(component, catalog, configure)
    record = build_record(entry, action, reviewer, note)
    if lifecycle.action_for(entry.review_status, lifecycle.TARGET_OF[action]) != action:
        raise ConfigError(Code.ACTION_NOT_NEXT, f"{entry.component_id} is "
                          f"{entry.review_status or '(no status)'}; {action!r} leads to "
                          f"{lifecycle.TARGET_OF[action]}, which is not its next step",
                          path=component)
    if key is not None:
        record["signature"] = sign(record, key, cat.settings.namespace)
    with catalog_lock(cat):
        path = record_path(cat, record)
        write_new_file(path, dump_record(record))
    signed = "signed" if key else "unsigned"
    return (f"wrote {cat.rel(path)} ({signed}): {action} of {entry.component_id} "
            f"{entry.version} at base {entry.base_sha256} (-> {lifecycle.TARGET_OF[action]})")


def render_plan(p: Plan, dry_run: bool) -> str:
    e = p.entry
    head = (f"{'runtime' if p.kind == 'runtime' else 'promote'} {e.component_id} "
            f"({e.where()}): {p.from_state or '(none)'} -> {p.to}  base {e.base_sha256[:19]}…")
    rows = [head]
    width = max((len(v.gate) for v in p.verdicts), default=4)
    for v in p.verdicts:
        mark = {"pass": "pass", "fail": "FAIL", "n/a": "n/a "}[v.verdict]
        rows.append(f"  {mark}  {v.gate.ljust(width)}  {v.reason}")
    rows.extend(f"  note: {n}" for n in p.notes)
    failed = [v.gate for v in p.verdicts if v.failed]
    if failed:
        rows.append(f"refused: {len(failed)} gate(s) failed ({', '.join(failed)})")
    elif dry_run:
        rows.append("dry run: every gate passes; nothing written")
    return "\n".join(rows)


def switch(component: str, to: str, kind: str, dry_run: bool, as_json: bool,
           catalog: str | None, actor: str = "", configure: Configure | None = None) -> int:
    """promote / activate / deactivate: 0 done (or dry run clean), 1 refused."""
    require_text(actor, "--by")  # text the transition log can hold
    cat, entry = open_for(component, catalog, configure)
    p = plan(cat, entry, to, kind=kind)
    out = render_plan(p, dry_run)
    code = 0 if p.ok else 1
    done = ""
    if p.ok and not dry_run:
        try:
            # $USER as printable text (bytes that are not UTF-8 escaped: a record holds text)
            line = execute(cat, p, actor=actor or show_name(os.environ.get("USER", "")))
        except WriteConflict as exc:
            if as_json:
                print(json.dumps({**p.to_dict(), "ok": False, "error": exc.one_line()},
                                 ensure_ascii=False, indent=1))
            else:
                print(out)
            print(f"risutools: {exc.one_line()}", file=sys.stderr)
            return 1
        done = (f"wrote {entry.where()} ({p.to}, {p.after_sha256[:19]}…) and "
                f"transitions.ndjson line {line}")
    if as_json:
        d = p.to_dict()
        d["written"] = bool(done)
        print(json.dumps(d, ensure_ascii=False, indent=1, sort_keys=True))
    else:
        print(out)
        if done:
            print(done)
    return code


def run_packet(component: str | None, lane: str, out: str, actor: str,
               instruction: str | None, escalates: str | None, queue: str | None,
               status: str | None, limit: int, catalog: str | None,
               configure: Configure | None = None) -> int:
    from risutools.catalog.packet import build_packet, write_packet, write_queue

    for value, option in ((actor, "--actor"), (instruction, "--instruction"),
                          (escalates, "--escalates")):
        if value is not None:
            require_text(value, option)  # text a packet and its hand-off record can hold
    if queue is not None:
        if component is not None:
            raise ConfigError(Code.USAGE, "--queue takes no COMPONENT (it selects by --status)")
        if lane != "light":
            raise ConfigError(Code.USAGE, "--queue hands off light packets only (--lane light)")
        if not status:
            raise ConfigError(Code.USAGE, "--queue needs --status (e.g. candidate)")
        if limit < 1:
            raise ConfigError(Code.USAGE, "--limit must be at least 1")
        cat = Catalog.open(catalog, configure=configure)
        path, rec = write_queue(cat, Path(queue), status, actor=actor, limit=limit,
                                when=now_iso())
        print(f"queued {rec['queued']} light packet(s) of {rec['matched']} {status} "
              f"component(s) in {queue}; hand-off record {path}"
              + (f" ({rec['left_out']} left out by --limit)" if rec["left_out"] else ""))
        return 0
    if component is None:
        raise ConfigError(Code.USAGE, "name a COMPONENT (or use --queue DIR --status S)")
    if escalates is not None and lane != "full":
        raise ConfigError(Code.USAGE, "--escalates names the light task a full packet escalates; "
                          "use --lane full")
    cat, entry = open_for(component, catalog, configure)
    p = build_packet(cat, entry, lane, actor=actor, instruction=instruction,
                     escalates=escalates)
    jpath, mpath = write_packet(p, Path(out))
    extra = ""
    if p["needs_full_context"]:
        why = ", ".join(sorted({r["reason"] for r in p["needs_full_context"]}))
        extra = f"; needs_full_context ({why})"
    print(f"wrote {jpath} and {mpath} (task {p['task']['id']}, {lane} lane{extra})")
    return 0
