"""A packet queue of a real-sized catalog: the relations each packet names (shared sources,
id collisions, approvals, interaction reasons) found from groups made once, and the files
written as ``json.dumps`` writes them."""

from __future__ import annotations

import json
from typing import Any

import pytest

from risutools.catalog.packet import packet_json
from risutools.catalog.packet_markdown import render_packet_markdown
from risutools.printable import json_text

HOSTILE: list[Any] = [
    "plain", "\x1b[31mred\x1b[0m", "\u202eevil", "\ud800 lone", "줄\u2028바꿈", 10**20,
    -(2**63), 1e16, 0.1, 1.5e-7, float(2**53), [], {}, [[]], {"": {"": []}}, None, True,
]


def _packet(value: Any) -> dict[str, Any]:
    doc = {"component_id": "module.risu.1.x", "value": value, "list": [value, {"k": value}]}
    return {"packet": "review-packet-v1", "task": {"id": "task-1", "instruction": "review",
                                                   "action": None, "to_status": None},
            "actor": "kim", "lane": "light", "base_sha256": "sha256:" + "a" * 64,
            "component": {"component_id": "module.risu.1.x", "component_version": "1.0.0",
                          "file": "x.json", "line": None},
            "document": doc, "permission_facts": {"capabilities": {}, "policy": {},
                                                  "findings": [], "risk": None},
            "needs_full_context": []}


@pytest.mark.parametrize("value", HOSTILE)
def test_a_packet_is_written_as_json_dumps_writes_it(value: Any) -> None:
    p = _packet(value)
    want = json_text(json.dumps(p, ensure_ascii=False, indent=1, sort_keys=True)) + "\n"
    assert packet_json(p) == want.encode()
    block = json_text(json.dumps(p["document"], ensure_ascii=False, indent=1, sort_keys=True))
    assert f"```json\n{block}\n```" in render_packet_markdown(p)


def test_a_queue_finds_each_relation_once_a_catalog(tmp_path, monkeypatch) -> None:
    """Shared sources and id collisions in a queue's packets are those a packet made alone
    finds, and the catalog is read for them once (not once a packet)."""
    import shutil

    from harness import FIXTURES, run_cli

    from risutools.catalog import packet as packet_mod

    cat = tmp_path / "cat"
    assert run_cli("ingest", FIXTURES / "sources", "-o", cat, "-j", "1").returncode == 0
    docs = sorted(cat.glob("*.json"))
    for i, d in enumerate(docs[:4]):
        doc = json.loads(d.read_text("utf-8"))
        if i % 2 == 0:  # another component from the same source
            doc["component_id"] += "-twin"
        else:  # the same component_id in another file (another version: its own task)
            doc["component_version"] = "9.9.9"
        (cat / f"zz-{i}.json").write_text(json.dumps(doc, ensure_ascii=False), "utf-8")
    asked: list[str] = []
    real = packet_mod._first_source

    def counted(e):  # type: ignore[no-untyped-def]
        asked.append(e.component_id)
        return real(e)

    monkeypatch.setattr(packet_mod, "_first_source", counted)
    out = tmp_path / "q"
    r = run_cli("packet", "--lane", "light", "--queue", out, "--status", "candidate",
                "--catalog", cat)
    assert r.returncode == 0, r.stderr
    packets = [json.loads(p.read_text("utf-8")) for p in sorted(out.glob("*--light--*.json"))]
    n = len(list(cat.glob("*.json")))
    assert len(packets) == n
    assert len(asked) <= 2 * n  # the groups once, each packet's own source once
    reasons = {(p["component"]["file"], x["reason"]) for p in packets
               for x in p["needs_full_context"]}
    assert sum(1 for _, why in reasons if why == "shared-source") == 4
    assert sum(1 for _, why in reasons if why == "id-collision") == 4
    # each the same as the packet of that one component, made alone
    for p in packets:
        alone = tmp_path / "alone"
        shutil.rmtree(alone, ignore_errors=True)
        assert run_cli("packet", cat / p["component"]["file"], "--lane", "light", "-o", alone,
                       "--catalog", cat).returncode == 0
        (mine,) = alone.glob("*.json")
        assert json.loads(mine.read_text("utf-8"))["needs_full_context"] == \
            p["needs_full_context"]


def test_a_queue_syncs_its_folder_once(tmp_path, monkeypatch) -> None:
    """Each packet's file is synced before it is named (atomic, as always); the folder's
    names once, at the queue's end (and by the hand-off record's own write), not twice a
    packet."""
    from harness import FIXTURES, run_cli

    from risutools import fsio
    from risutools.catalog import packet as packet_mod

    cat = tmp_path / "cat"
    assert run_cli("ingest", FIXTURES / "sources", "-o", cat, "-j", "1").returncode == 0
    synced: list[str] = []
    real = fsio.fsync_directory

    def counted(d):  # type: ignore[no-untyped-def]
        synced.append(str(d))
        real(d)

    monkeypatch.setattr(fsio, "fsync_directory", counted)
    monkeypatch.setattr(packet_mod, "fsync_directory", counted)
    out = tmp_path / "q"
    r = run_cli("packet", "--lane", "light", "--queue", out, "--status", "candidate",
                "--catalog", cat)
    assert r.returncode == 0, r.stderr
    packets = list(out.glob("*--light--*.json"))
    assert len(packets) >= 5
    assert len([d for d in synced if d == str(out)]) <= 2, synced


def test_a_folder_sync_never_waits_on_a_fifo(tmp_path) -> None:
    import os
    import threading

    from risutools.fsio import fsync_directory

    fifo = tmp_path / "not-a-folder"
    os.mkfifo(fifo)
    t = threading.Thread(target=fsync_directory, args=(fifo,), daemon=True)
    t.start()
    t.join(5)
    assert not t.is_alive()
