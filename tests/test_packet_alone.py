"""A packet made alone (``risutools packet ID``) parses only the approval records whose
bytes may hold its component id, and of the records the log names only those whose bytes
may hold one of their base hashes (``load_approvals(holding=)``, ``used_among``): it is
the packet made from every record and every used record, whatever the records' names and
spellings -- a record named for another component, the id or the hash written with
escapes in JSON or YAML, a copy of a used record under another name, a stale record, a
FIFO, a record that is no mapping."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from harness import approve, switch
from test_catalog_support import CUTTER, MOOD, fresh_catalog

from risutools.catalog import approvals as approvals_mod
from risutools.catalog.approvals import load_approvals
from risutools.catalog.catalog import Catalog
from risutools.catalog.packet import LANES, build_packet
from risutools.contract import records
from risutools.contract.transitions import read_log, used_among, used_records


def _step(cat: Path, cid: str, action: str, to: str) -> None:
    approve(cid, action, "kim", "", None, str(cat))
    assert switch(cid, to, "status", False, False, str(cat)) == 0


def _escaped_json(text: str) -> str:
    """``text`` as a JSON string token, every ``-`` and ``:`` written as a \\u escape."""
    return '"' + text.replace("-", "\\u002d").replace(":", "\\u003a") + '"'


@pytest.fixture(scope="module")
def crafted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cat = fresh_catalog(tmp_path_factory, tmp_path_factory.mktemp("alone"))
    _step(cat, CUTTER, "request_review", "pending_human_review")
    _step(cat, MOOD, "request_review", "pending_human_review")
    a = cat / "approvals"
    used = sorted(a.glob(f"{CUTTER}--request_review--*.yaml"))[0]
    rec = approvals_mod.parse_record(used.read_bytes(), used.name)[0]
    assert rec is not None
    # a copy of a used record under another name (used by its identity)
    (a / "copy-of-used.yaml").write_bytes(used.read_bytes())
    # the same record as JSON, its id and base hash written with escapes
    esc = {k: v for k, v in rec.items() if k not in ("component_id", "base_sha256")}
    (a / "escaped.json").write_text(
        "{" + f'"component_id": {_escaped_json(CUTTER)}, '
        f'"base_sha256": {_escaped_json(rec["base_sha256"])}, '
        + json.dumps(esc)[1:], "utf-8")
    # a stale approve, named for the mood tracker, its id a double-quoted YAML escape
    stale = dict(rec, action="approve", base_sha256="sha256:" + "ab" * 32,
                 component_id="@")
    text = "".join(f"{k}: {json.dumps(v)}\n" for k, v in stale.items())
    text = text.replace('component_id: "@"',
                        'component_id: "' + CUTTER.replace("-", "\\x2d") + '"')
    (a / f"{MOOD}--approve--{'0' * 12}.yaml").write_text(text, "utf-8")
    # a stale approve of the cutter, plainly named
    (a / f"{CUTTER}--approve--{'1' * 12}.yaml").write_text(
        "".join(f"{k}: {json.dumps(v)}\n" for k, v in dict(stale, component_id=CUTTER)
                .items()), "utf-8")
    (a / "not-a-mapping.yaml").write_text(f"- {CUTTER}\n", "utf-8")
    if hasattr(os, "mkfifo"):
        os.mkfifo(a / "fifo.yaml")
    return cat


def test_a_packet_alone_is_the_packet_of_every_record(crafted: Path, tmp_path: Path) -> None:
    cat = Catalog.open(crafted)
    every = load_approvals(cat)
    log = read_log(crafted)
    all_used = used_records(log)
    entries = sorted(cat.entries(), key=lambda e: e.component_id)
    assert {CUTTER, MOOD} <= {e.component_id for e in entries}
    for e in entries:
        mine = load_approvals(cat, holding=e.component_id)
        assert {a.file for a in mine} <= {a.file for a in every}
        want_mine = [a for a in every if a.field("component_id") == e.component_id]
        assert [a.file for a in want_mine] == \
            [a.file for a in mine if a.field("component_id") == e.component_id]
        for lane in LANES:
            alone = build_packet(cat, e, lane, log=read_log(crafted))
            whole = build_packet(cat, e, lane, approvals=every, log=log, used=all_used)
            assert alone == whole, (e.component_id, lane)
    # the crafted records are what the cutter's packets read
    cutter = [a.file for a in every if a.field("component_id") == CUTTER]
    assert {"approvals/escaped.json", "approvals/copy-of-used.yaml",
            f"approvals/{MOOD}--approve--{'0' * 12}.yaml"} <= set(cutter)


def test_the_used_records_among_some_answer_as_all_do(crafted: Path) -> None:
    cat = Catalog.open(crafted)
    every = [a for a in load_approvals(cat) if a.record is not None]
    whole = used_records(read_log(crafted))
    for a in every:
        part = used_among(read_log(crafted), [a.record])
        assert (a.file.removeprefix("approvals/") in part) == \
            (a.file.removeprefix("approvals/") in whole)
        key = records.record_key(a.record)
        assert (key in part) == (key in whole), a.file
    assert any(records.record_key(a.record) in whole for a in every)  # (some are used)
    assert any(records.record_key(a.record) not in whole for a in every)  # (some are not)


def test_a_packet_alone_parses_only_its_components_records(
        crafted: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "cat"
    shutil.copytree(crafted, root, symlinks=True, ignore=shutil.ignore_patterns("fifo.yaml"))
    for i in range(40):  # (records of other components: read, never parsed)
        (root / "approvals" / f"module.risu.9{i}.other--approve--{i:012d}.yaml").write_text(
            f"component_id: module.risu.9{i}.other\naction: approve\n", "utf-8")
    parsed: list[str] = []
    real = records._parse_record
    monkeypatch.setattr(records, "_parse_record",
                        lambda data, name: parsed.append(name) or real(data, name))
    monkeypatch.setattr(records, "_parsed", {})
    cat = Catalog.open(root)
    entry = next(e for e in cat.entries() if e.component_id == MOOD)
    build_packet(cat, entry, "light")
    assert parsed and not [n for n in parsed if ".other--" in n]
    # (the cutter's plain records: neither its id nor a base hash of the mood tracker's)
    assert not [n for n in parsed if n.endswith("copy-of-used.yaml")]
    assert [n for n in parsed if n.endswith("escaped.json")]  # (an escape may spell it)
