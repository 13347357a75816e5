"""A review asks every component's gates (its board): the approval records the log's lines
name are read once a run (``transitions.used_records``, made once a log), not once a
component: a review of a catalog whose log names N records reads O(N) of them, not
O(N x components) (2,000 components, 4,000 records: 8 million reads before)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from harness import FIXTURES, run_cli

from risutools.contract import records, transitions
from risutools.contract.transitions import read_log, used_records

N = 24


def _sources(folder: Path) -> None:
    folder.mkdir()
    template = json.loads((FIXTURES / "modules" / "186123400_mood-tracker.json")
                          .read_text("utf-8"))
    for i in range(N):
        m = dict(template, type="risuModule", name=f"{template['name']} {i}",
                 id=f"00000000-0000-4000-8000-{i:012d}")
        (folder / f"{400000 + i}_tracker-{i}.json").write_text(json.dumps(m), "utf-8")


@pytest.fixture(scope="module")
def pending(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """N components, each moved to pending_human_review with its approval record."""
    tmp = tmp_path_factory.mktemp("scale")
    _sources(tmp / "src")
    cat = tmp / "cat"
    assert run_cli("ingest", tmp / "src", "-o", cat, "-j", "1").returncode == 0
    for doc in sorted(cat.glob("*.json")):
        for args in (("approve", doc, "--action", "request_review", "--reviewer", "kim"),
                     ("promote", doc, "--to", "pending_human_review")):
            r = run_cli(*args, "--catalog", cat)
            assert r.returncode == 0, r.stderr
    return cat


def test_used_records_are_made_once_a_log(pending: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    log = read_log(pending)
    calls: list[int] = []
    real = transitions._line_key
    monkeypatch.setattr(transitions, "_line_key",
                        lambda root, rec: calls.append(1) or real(root, rec))
    first = used_records(log)
    assert len(calls) == N and len(first.keys) == 2 * N  # (each by name and by identity)
    assert used_records(log) is first and len(calls) == N


def test_a_review_reads_each_record_a_bounded_number_of_times(
        pending: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real = records._load_approval
    monkeypatch.setattr(records, "_load_approval",
                        lambda path, found=None: calls.append(1) or real(path, found))
    r = run_cli("review", pending, "-f", "json", "-j", "1")
    assert r.returncode in (0, 1), r.stderr
    board = json.loads(r.stdout)
    assert len(board["approvals"]) == N
    assert len(calls) <= N  # (once a review: it was 4 N, and N * N before that)


def test_a_record_is_parsed_once_and_each_caller_gets_its_own(
        monkeypatch: pytest.MonkeyPatch) -> None:
    parsed: list[bytes] = []
    real = records.load_bytes
    monkeypatch.setattr(records, "load_bytes",
                        lambda data, *a, **k: parsed.append(data) or real(data, *a, **k))
    monkeypatch.setattr(records, "_parsed", {})
    monkeypatch.setattr(records, "_parsed_size", 0)
    data = b"reviewer: kim\naction: approve\nnote: 'first'\n"
    one, _ = records.parse_record(data, "a.yaml")
    assert one is not None
    one["note"] = "changed by a caller"
    two, _ = records.parse_record(data, "a.yaml")
    assert two == {"reviewer": "kim", "action": "approve", "note": "first"}
    assert parsed == [data]
    # a failure is the same answer each time, and the name is part of the key
    bad = b"- not\n- a mapping\n"
    assert records.parse_record(bad, "b.yaml") == (None, "not a mapping")
    assert records.parse_record(bad, "b.yaml") == (None, "not a mapping")
    records.parse_record(data, "c.json")  # (another name: read as JSON, parsed)
    assert parsed == [data, bad, data]
    # a record larger than any real one is parsed each time (never kept)
    big = b"note: '" + b"x" * (records._PARSED_RECORD + 1) + b"'\n"
    records.parse_record(big, "d.yaml")
    records.parse_record(big, "d.yaml")
    assert parsed[-2:] == [big, big]


def test_a_record_is_parsed_once_whatever_name_it_is_read_under(monkeypatch) -> None:
    """The log's checks read a record by its file name, the approvals list by its path in
    the catalog: the same bytes of the same syntax are parsed once, and each name gets the
    answer the parser gives it (its message too, for a record that is none)."""
    from risutools.contract import records

    calls: list[str] = []
    real = records._parse_record

    def counted(data: bytes, name: str):  # type: ignore[no-untyped-def]
        calls.append(name)
        return real(data, name)

    monkeypatch.setattr(records, "_parse_record", counted)
    monkeypatch.setattr(records, "_parsed", {})
    record = b"component_id: module.risu.1.x\naction: approve\nreviewer: kim\n"
    broken = b"component_id: [1\n"
    for data in (record, broken):
        first = records.parse_record(data, "x--approve.yaml")
        again = records.parse_record(data, "approvals/x--approve.yaml")
        assert first == again == real(data, "other.yaml")
    assert records.parse_record(record, "x.json") == real(record, "x.json")  # (JSON)
    assert calls == ["x--approve.yaml", "x--approve.yaml", "x.json"]
