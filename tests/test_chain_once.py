"""A review reads the catalog's log once and asks each chain once: MC305 and the board's
history gate put the same question to :func:`~risutools.contract.transitions.check_chain`,
which answers it once when the log carries a memo (``CatalogLog.chain_memo``, set by the
review only), and each record file a line names is read once a log (``Places.record``,
read again when its status changes).  Whatever the catalog holds -- a chain whole, a record
edited, removed or used twice, a status or a payload edited by hand, a line out of order --
the review says the same with the memo as without it, and so does every chain asked
directly; a record changed on disk is read again."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from harness import approve, run_cli, switch
from test_catalog_support import CUTTER, MOOD, doc_path, fresh_catalog, load, log_lines

from risutools.catalog.approvals import chain_check
from risutools.catalog.catalog import Catalog
from risutools.contract import records, transitions
from risutools.contract.records import Places
from risutools.contract.transitions import CatalogLog, check_chain, read_log
from risutools.settings.catalog import CatalogSettings
from risutools.settings.lifecycle import PAST_START, base_names


def _step(cat: Path, cid: str, action: str, to: str, kind: str = "status") -> None:
    approve(cid, action, "kim", "", None, str(cat))
    assert switch(cid, to, kind, False, False, str(cat)) == 0


@pytest.fixture(scope="module")
def moved(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The cutter promoted and switched active (a runtime line), the mood tracker pending review."""
    cat = fresh_catalog(tmp_path_factory, tmp_path_factory.mktemp("chain"))
    for action, to in (("request_review", "pending_human_review"), ("approve", "approved"),
                       ("promote", "promoted")):
        _step(cat, CUTTER, action, to)
    _step(cat, CUTTER, "activate", "active", "runtime")
    _step(cat, MOOD, "request_review", "pending_human_review")
    return cat


def _records(cat: Path) -> list[Path]:
    return sorted((cat / "approvals").rglob("*.yaml"))


def _edit_record(cat: Path) -> None:
    p = _records(cat)[0]
    p.write_bytes(p.read_bytes() + b"# edited\n")


def _remove_record(cat: Path) -> None:
    _records(cat)[1].unlink()


def _status_by_hand(cat: Path) -> None:
    p = doc_path(cat, MOOD)
    doc = load(p)
    doc["provenance"]["review_status"] = "approved"
    p.write_text(json.dumps(doc, ensure_ascii=False, indent=2) + "\n", "utf-8")


def _payload_by_hand(cat: Path) -> None:
    p = doc_path(cat, CUTTER)
    doc = load(p)
    doc["payload"]["idea_layers"]["core"] = "changed after its last line"
    p.write_text(json.dumps(doc, ensure_ascii=False, indent=2) + "\n", "utf-8")


def _record_reused(cat: Path) -> None:
    lines = log_lines(cat)
    last = next(x for x in reversed(lines) if x["component_id"] == MOOD)
    again = dict(last, from_status="pending_human_review", to_status="approved",
                 before_sha256=last["after_sha256"])
    with open(cat / "transitions.ndjson", "a", encoding="utf-8") as f:
        f.write(json.dumps(again) + "\n")


def _line_out_of_order(cat: Path) -> None:
    raw = (cat / "transitions.ndjson").read_text("utf-8").splitlines(keepends=True)
    raw[0], raw[1] = raw[1], raw[0]
    (cat / "transitions.ndjson").write_text("".join(raw), "utf-8")


def _fifo_record(cat: Path) -> None:
    p = _records(cat)[2]
    p.unlink()
    os.mkfifo(p)


CHANGES: dict[str, Callable[[Path], None]] = {
    "whole": lambda cat: None,
    "record edited": _edit_record,
    "record removed": _remove_record,
    "status by hand": _status_by_hand,
    "payload by hand": _payload_by_hand,
    "record used twice": _record_reused,
    "lines out of order": _line_out_of_order,
    "record a FIFO": _fifo_record,
}


class _NoMemo(CatalogLog):
    """A log that keeps no chain memo, whoever sets one."""

    @property  # type: ignore[override]
    def chain_memo(self) -> None:
        return None

    @chain_memo.setter
    def chain_memo(self, _value: Any) -> None:
        pass


def _review(cat: Path) -> tuple[int, dict[str, Any]]:
    r = run_cli("review", cat, "-f", "json", "-j", "1")
    assert r.returncode in (0, 1), r.stderr
    return r.returncode, json.loads(r.stdout)


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_a_review_says_the_same_with_the_memo_as_without(
        change: str, moved: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if change == "record a FIFO" and not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs here")
    cat = tmp_path / "cat"
    shutil.copytree(moved, cat)
    CHANGES[change](cat)
    asked: list[tuple[Any, ...]] = []
    real = transitions._chain
    monkeypatch.setattr(transitions, "_chain",  # (what was asked: all but the log, the doc)
                        lambda *a: asked.append((*a[1:4], a[5])) or real(*a))
    with_memo = _review(cat)
    once = list(asked)
    monkeypatch.setattr(transitions, "CatalogLog", _NoMemo)
    asked.clear()
    without = _review(cat)
    assert with_memo == without
    # with the memo each question is answered once; without, MC305's are asked again by
    # the history gate of each document on the board
    assert once and len(once) == len(set(once))
    assert set(asked) == set(once) and len(asked) >= len(once)
    if change == "whole":
        assert with_memo[0] == 0 and len(asked) > len(once)


def test_every_chain_is_the_same_asked_through_the_memo(moved: Path) -> None:
    cat = Catalog.open(moved)
    plain, memo = read_log(moved), read_log(moved)
    memo.chain_memo = {}
    past = [e for e in cat.entries() if e.review_status in PAST_START]
    assert {e.component_id for e in past} == {CUTTER, MOOD}
    for e in past:
        assert e.names == base_names(e.doc)  # (what MC305 and the history gate pass)
        for unrecorded_ok in (False, True):
            for counts in (None, chain_check(cat.settings)):
                want = list(check_chain(plain, e.component_id, e.review_status,
                                        e.base_sha256, e.doc, unrecorded_ok=unrecorded_ok,
                                        counts=counts))
                for names in (None, e.names):
                    got = list(check_chain(memo, e.component_id, e.review_status,
                                           e.base_sha256, e.doc, unrecorded_ok=unrecorded_ok,
                                           counts=counts, names=names))
                    assert got == want
        # another status, another hash: another question, answered anew
        assert list(check_chain(memo, e.component_id, "retired", e.base_sha256, e.doc))
    # two checks of the same settings are one question; of other settings, another
    assert chain_check(cat.settings) == chain_check(cat.settings)
    assert chain_check(cat.settings) != chain_check(CatalogSettings())


def test_a_record_changed_on_disk_is_read_again(moved: Path, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    reads: list[str] = []
    real = records._load_approval
    monkeypatch.setattr(records, "_load_approval",
                        lambda path, found=None: reads.append(os.fspath(path))
                        or real(path, found))
    root = tmp_path / "cat"
    shutil.copytree(moved, root)
    places = Places(root)
    name = _records(root)[0].relative_to(root).as_posix()
    first = places.record(name)
    assert first is not None and first.doc is not None and first.key is not None
    assert places.record(name) is first and len(reads) == 1  # (its status unchanged)
    p = root / name
    p.write_bytes(p.read_bytes().replace(b"kim", b"lee"))  # (same size: its times moved)
    os.utime(p, ns=(1, 1))
    second = places.record(name)
    assert second is not None and second.doc is not None and len(reads) == 2
    assert second.doc["reviewer"] == "lee" and second.said != first.said
    assert second.key != first.key
    p.unlink()
    os.symlink(root / _records(root)[1].relative_to(root), p)  # (a link: read each time)
    assert places.record(name) is not places.record(name) and len(reads) == 4
    p.unlink()
    assert places.record(name) is None  # (gone: missing, as before)
