"""A replay report is read back before MC203 verifies it, and gate G6 reads its verdict
(a fifth fuzzing pass: a line of text, a report cut short, and a report that says
``failed`` with its ``report_sha256`` worked out again were each "verified" by digest, and
G6 passed on them: it read only the document's ``replay_status``).

Each shape below is refused by :func:`read_report` with its reason, and a report the
writer wrote is read back whole, its verdict returned.  End to end: ``verify`` and
``promote --dry-run`` on a catalog whose report was made by ``replay run --update``.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from harness import FIXTURES, run_cli
from replay_cases import fail_report

from risutools.canonical import canonical, indented, self_hash
from risutools.contract import reportcheck
from risutools.contract.reportcheck import read_report

REPORT = FIXTURES / "contract" / "verify" / "replays" / "long-chat.report.json"
COMPONENT = "module.risu.300.verified"
SIM = "context-cutter"  # (the simulation the fixture's report replays, its document selects)


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _read(tmp_path: Path, data: bytes, component: str | None = COMPONENT
          ) -> reportcheck.ReportRead:
    path = tmp_path / "r.json"
    path.write_bytes(data)
    return read_report(path, _digest(data), component, "anchor-edit", simulation=SIM)


def _rewritten(change: Any) -> bytes:
    """The fixture's report changed by ``change`` and written as the writer writes it,
    its report_sha256 worked out again (a forger's best)."""
    rep = json.loads(REPORT.read_bytes())
    change(rep)
    rep["report_sha256"] = self_hash(rep)
    return indented(rep)


def test_a_report_the_writer_wrote_is_read_back(tmp_path: Path) -> None:
    got = _read(tmp_path, REPORT.read_bytes())
    assert got == reportcheck.ReportRead(None, "passed")


def test_a_failed_report_is_read_with_its_verdict(tmp_path: Path) -> None:
    assert _read(tmp_path, _rewritten(fail_report)) == reportcheck.ReportRead(None, "failed")


def _drop_alert(rep: dict[str, Any]) -> None:
    rep["alerts"] = rep["alerts"][:-1]


def _extra_field(rep: dict[str, Any]) -> None:
    rep["requests"][0]["x"] = 1


def _other_component(rep: dict[str, Any]) -> None:
    rep["component_id"] = "module.risu.999.other"


def _unknown_verdict(rep: dict[str, Any]) -> None:
    rep["summary"]["verdict"] = "fine"


@pytest.mark.parametrize("change, why", [
    (_drop_alert, "its summary counts 1 alerts, the report holds 0"),
    (_extra_field, "not a replay-report-v1: /requests/0"),
    (_other_component, "the report is for 'module.risu.999.other'"),
    (_unknown_verdict, "not a replay-report-v1: /summary/verdict"),
])
def test_a_forged_report_is_refused(tmp_path: Path, change: Any, why: str) -> None:
    got = _read(tmp_path, _rewritten(change))
    assert got.verdict is None and got.problem is not None and why in got.problem, got


def _edited_verdict(data: bytes) -> bytes:
    return data.replace(b'"verdict": "passed"', b'"verdict": "failed"')


def _compact(data: bytes) -> bytes:
    return json.dumps(json.loads(data), ensure_ascii=False, sort_keys=True).encode()


def _two_space(data: bytes) -> bytes:
    return (json.dumps(json.loads(data), ensure_ascii=False, sort_keys=True, indent=2)
            + "\n").encode()


def _trailing(data: bytes) -> bytes:
    return data + b" "


def _trailing_comma(data: bytes) -> bytes:
    i = data.index(b"\n  }\n ],")
    return data[:i] + b"\n  },\n ]," + data[i + len(b"\n  }\n ],"):]


def _duplicate_key(data: bytes) -> bytes:
    return data.replace(b'   "level": "CRITICAL",', b'   "level": "WARNING",\n'
                        b'   "level": "CRITICAL",', 1)


def _out_of_order(data: bytes) -> bytes:
    text = json.loads(data)
    head = {k: text[k] for k in ("tool", "alerts")}
    rest = indented({k: v for k, v in text.items() if k not in head})
    moved = indented(head)
    return moved[:-3] + b",\n" + rest[2:]


@pytest.mark.parametrize("shape, why", [
    (lambda d: b"this is not a replay report\n", "line 1 is not '{'"),
    (lambda d: b"", "line 1 is not '{'"),
    (_edited_verdict, "does not match its content"),
    (_compact, "line 1 is not '{'"),
    (_two_space, "not a replay report as"),
    (_trailing, "more after the report's end"),
    (_trailing_comma, "not a replay report as"),
    (_duplicate_key, "not written as the writer writes it"),
    (_out_of_order, "out of order"),
    (lambda d: b"RISUM\x00\x01\x02 a module's bytes", "line 1 is not '{'"),
    (lambda d: d.replace(b"\n", b"\r\n"), "line 1 is not '{'"),
    (lambda d: b"\xef\xbb\xbf" + d, "line 1 is not '{'"),
])
def test_a_file_not_written_by_the_writer_is_refused(tmp_path: Path, shape: Any,
                                                     why: str) -> None:
    got = _read(tmp_path, shape(REPORT.read_bytes()))
    assert got.verdict is None and got.problem is not None and why in got.problem, got


def test_every_cut_of_a_report_is_refused(tmp_path: Path) -> None:
    data = REPORT.read_bytes()
    for cut in range(0, len(data), 3):
        got = _read(tmp_path, data[:cut])
        assert got.problem is not None and got.verdict is None, (cut, got)


def test_the_digest_of_the_bytes_read_is_the_one_asked_for(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_bytes(REPORT.read_bytes())
    got = read_report(path, _digest(b"other bytes"), COMPONENT, simulation=SIM)
    assert got.problem is not None and "changed while it was read" in got.problem


def test_bounds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = REPORT.read_bytes()
    long_line = b"{\n" + b' "a": "' + b"x" * (reportcheck.MAX_LINE + 10) + b'"\n}\n'
    got = _read(tmp_path, long_line)
    assert got.problem is not None and "longer than" in got.problem
    monkeypatch.setattr(reportcheck, "MAX_ITEM_BYTES", 64)
    got = _read(tmp_path, data)
    assert got.problem is not None and "larger than 64 bytes" in got.problem
    monkeypatch.setattr(reportcheck, "MAX_REPORT_BYTES", 100)
    got = _read(tmp_path, data)
    assert got.problem is not None and got.problem.startswith("not read:")


def test_a_fifo_or_a_folder_is_not_read(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    assert read_report(fifo, _digest(b""), None, simulation=SIM).problem is not None
    assert read_report(tmp_path, _digest(b""), None, simulation=SIM).problem is not None


def test_the_hash_streamed_is_the_canonical_hash(tmp_path: Path) -> None:
    """The hash worked out an item at a time is canonical()'s of the report held whole
    (with long lists of more than one batch)."""
    rep = json.loads(REPORT.read_bytes())
    rep["requests"] = rep["requests"] * 700  # (more than two batches of 512)
    rep["summary"]["requests"] = len(rep["requests"])
    rep["report_sha256"] = self_hash(rep)
    want = "sha256:" + hashlib.sha256(canonical(
        {k: v for k, v in rep.items() if k != "report_sha256"})).hexdigest()
    assert rep["report_sha256"] == want
    assert _read(tmp_path, indented(rep)) == reportcheck.ReportRead(None, "passed")


# ---- end to end: verify and the promotion gate on a catalog ------------------------------


def _catalog(tmp_path: Path) -> tuple[Path, Path, Path]:
    cat = tmp_path / "cat"
    cat.mkdir()
    subprocess.run(["git", "init", "-q", str(cat)], check=True)
    seed = FIXTURES / "documents" / "seed-000-context-cutter.json"
    doc = cat / "cutter.json"
    shutil.copy(seed, doc)
    done = run_cli("replay", "run", doc, "-x", FIXTURES / "replay" / "anchor-edit.yaml",
                   "--update", cwd=cat)
    assert done.returncode == 0, done.stdout + done.stderr
    [report] = (cat / "replays").glob("*.json")
    return cat, doc, report


def _gate_line(cat: Path) -> str:
    cid = json.loads((cat / "cutter.json").read_text("utf-8"))["component_id"]
    done = run_cli("promote", cid, "--to", "approved", "--dry-run", "--catalog", cat, cwd=cat)
    return next(ln for ln in done.stdout.splitlines() + done.stderr.splitlines()
                if " replay " in f" {ln} ")


def test_verify_and_the_gate_read_the_report(tmp_path: Path) -> None:
    cat, doc, report = _catalog(tmp_path)
    assert run_cli("verify", doc, cwd=cat).returncode == 0
    assert "report verified" in _gate_line(cat)

    rep = json.loads(report.read_bytes())
    fail_report(rep)  # (its invariants too: a summary alone is refused)
    rep["report_sha256"] = self_hash(rep)
    forged = indented(rep)
    report.write_bytes(forged)
    text = doc.read_text("utf-8")
    old = json.loads(text)["provenance"]["source_refs"][-1]["sha256"]
    doc.write_text(text.replace(old, "sha256:" + _digest(forged)), "utf-8")
    # a failed report is a report, but the document saying passed over it contradicts it
    r = run_cli("verify", doc, cwd=cat)
    assert r.returncode == 1 and "replay_status is 'passed' but the report" in r.stdout
    line = _gate_line(cat)
    assert "FAIL" in line and "says 'failed'" in line, line

    junk = b"this is not a replay report\n"
    report.write_bytes(junk)
    doc.write_text(text.replace(old, "sha256:" + _digest(junk)), "utf-8")
    done = run_cli("verify", doc, cwd=cat)
    assert done.returncode == 1 and "MC203" in done.stdout, done.stdout
    line = _gate_line(cat)
    assert "FAIL" in line and "not a replay report" in line, line
