"""Hostile documents within the 8 MiB bound, through ``risutools validate`` and ``review``
in a child process under a memory cap: each run finishes with its verdict (exit 1, no
traceback), lists at most ``MAX_LISTED`` findings of a rule for a document plus one that
counts the rest, and peaks under 300 MB.  Before: 800,000 unknown capabilities took 800 MB
(and 30 s at 16,000 once their lines were looked up one walk each); 3 million integers
among the capabilities, 8.3 GB and 47 s in the compiled schema validator; a string of 3
million escapes, about 350 MB in the line walk's regular expression.  No timings are asserted
(bench/RESULTS.md has them)."""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import ROOT, run_capped

from risutools.findings import MAX_LISTED
from risutools.values import MAX_DOCUMENT_BYTES

# address space of the child (RLIMIT_AS): a hard stop for a runaway (the compiled schema
# validator's 8 GB, say); the bound asserted is the peak resident size.  The parsers reserve
# address space they never touch (orjson, for an 8 MiB text: a review's reaches 1.2 GB for
# 245 MB resident), and a C extension may crash rather than raise when it cannot have it
CAP = 2048 * 1024 * 1024
PEAK_GOAL_MIB = 300

def _run(tmp: Path, *args: str) -> tuple[int, str, str, int]:
    return run_capped(list(args), CAP, cwd=tmp)


def _seed() -> dict[str, Any]:
    value = json.loads((ROOT / "fixtures" / "documents" / "seed-000-context-cutter.json")
                       .read_text("utf-8"))
    assert isinstance(value, dict)
    return value


def _unknown_capabilities(doc: dict[str, Any]) -> None:
    doc["capabilities"]["requires"] = [f"u{i}" for i in range(700_000)]


def _integer_capabilities(doc: dict[str, Any]) -> None:
    doc["capabilities"]["requires"] = [0] * 3_000_000


def _string_of_escapes(doc: dict[str, Any]) -> None:
    doc["payload"]["x-note"] = "\n" * 3_000_000
    doc["projection"]["flagship"] = "yes"


def _repeated_capabilities(doc: dict[str, Any]) -> None:
    doc["capabilities"]["requires"] = ["hook.edit_request"] * 350_000


def _many_members(doc: dict[str, Any]) -> None:
    doc["payload"]["x-table"] = {f"k{i}": [i, {"v": "x"}] for i in range(150_000)}
    doc["projection"]["flagship"] = "yes"


#: name -> (how the seed document is changed, the findings of each rule expected, the
#: exit code: 0 when they are warnings only)
CASES: dict[str, tuple[Callable[[dict[str, Any]], None], dict[str, int], int]] = {
    "unknown-capabilities": (_unknown_capabilities, {"MC401": MAX_LISTED + 1}, 0),
    "integer-capabilities": (_integer_capabilities, {"MC100": MAX_LISTED}, 1),
    "string-of-escapes": (_string_of_escapes, {"MC100": 1}, 1),
    "repeated-capabilities": (_repeated_capabilities, {"MC400": MAX_LISTED + 1}, 1),
    "many-members": (_many_members, {"MC100": 1}, 1),
}


def _write(case: str, tmp: Path) -> Path:
    change = CASES[case][0]
    doc = _seed()
    change(doc)
    folder = tmp / "catalog"
    folder.mkdir(exist_ok=True)
    path = folder / f"{case}.json"
    path.write_text(json.dumps(doc, ensure_ascii=False, separators=(",", ":")), "utf-8")
    assert 2_000_000 < path.stat().st_size <= MAX_DOCUMENT_BYTES, path.stat().st_size
    return path


@pytest.mark.parametrize("case", sorted(CASES))
def test_hostile_document_is_validated_under_the_memory_cap(case: str, tmp_path: Path
                                                            ) -> None:
    path = _write(case, tmp_path)
    code, out, err, peak = _run(tmp_path, "validate", "-f", "json", str(path))
    assert "Traceback" not in err and "internal error" not in err, err[-2000:]
    _, expected, exit_code = CASES[case]
    assert code == exit_code, err[-2000:]
    report = json.loads(out)
    by_rule = Counter(f["rule"] for f in report["findings"])
    assert by_rule == expected
    assert max(by_rule.values()) <= MAX_LISTED + 1
    more = [f for f in report["findings"] if " more " in f["message"]]
    if case == "unknown-capabilities":
        assert [m["message"].split(" more ")[0] for m in more] == [f"{700_000 - MAX_LISTED:,}"]
    if case == "integer-capabilities":
        assert [m.get("pointer", "") for m in more] == [""]
        assert "more errors than the first 999" in more[0]["message"]
    print(f"{case}: peak {peak} MiB")
    assert 0 < peak < PEAK_GOAL_MIB, f"peak {peak} MiB"


def test_hostile_documents_are_reviewed_under_the_memory_cap(tmp_path: Path) -> None:
    """The review of a catalog of all of them together: one report, every document in it,
    within the same peak."""
    for case in CASES:
        _write(case, tmp_path)
    code, _out, err, peak = _run(tmp_path, "review", "catalog", "-f", "json", "-o",
                                 "review.json", "-j", "1")
    assert "Traceback" not in err and "internal error" not in err, err[-2000:]
    assert code == 1, err[-2000:]
    report = json.loads((tmp_path / "review.json").read_text("utf-8"))
    text = json.dumps(report)
    for case in CASES:
        assert f"{case}.json" in text
    print(f"review: peak {peak} MiB")
    assert 0 < peak < PEAK_GOAL_MIB, f"peak {peak} MiB"


def _empty_lists(doc: dict[str, Any], n: int) -> None:
    doc["capabilities"]["x-lists"] = [[] for _ in range(n)]  # (3 bytes of text, 64 of value)


@pytest.mark.parametrize("command", ["validate", "review"])
def test_a_batch_of_costly_documents_costs_little_more_than_its_largest(
        command: str, tmp_path: Path) -> None:
    """Documents are read a batch at a time (``loaders.BATCH_BYTES`` of files; a file that
    would take a batch past it starts the next, so a large one is parsed alone): small files
    whose values take twenty times their text, more than a batch's worth of them, then one
    such file at the 8 MiB bound.  The run peaks within 48 MiB of the large file read alone
    (with 4 MiB batches that took the large file into the last batch of small ones: +119 MiB
    for validate)."""
    from risutools.contract.loaders import BATCH_BYTES

    many, alone = tmp_path / "many", tmp_path / "alone"
    (many / "catalog").mkdir(parents=True)
    (alone / "catalog").mkdir(parents=True)
    small = 32_000
    for i in range(BATCH_BYTES // (3 * small) + 2):
        doc = _seed()
        _empty_lists(doc, small)
        (many / "catalog" / f"a{i:03d}.json").write_text(
            json.dumps(doc, separators=(",", ":")), "utf-8")
    doc = _seed()
    _empty_lists(doc, 2_700_000)
    text = json.dumps(doc, separators=(",", ":"))
    assert 7_000_000 < len(text) <= MAX_DOCUMENT_BYTES
    for root in (many, alone):
        (root / "catalog" / "b.json").write_text(text, "utf-8")
    args = ["validate", "-f", "json", "catalog"] if command == "validate" else \
        ["review", "catalog", "-f", "json", "-o", "review.json", "-j", "1"]
    peaks = []
    for root in (alone, many):
        code, _out, err, peak = _run(root, *args)
        assert "Traceback" not in err and "internal error" not in err, err[-2000:]
        assert code in (0, 1), err[-2000:]
        peaks.append(peak)
    print(f"{command}: peak {peaks[1]} MiB, the large file alone {peaks[0]} MiB")
    assert 0 < peaks[1] < peaks[0] + 48, peaks


def test_verify_lists_at_most_max_listed_findings_of_a_rule(tmp_path: Path) -> None:
    """1,500 source references whose digest is not the source file's: 1,000 MC202 errors
    listed, one more that counts the other 500, and the digest summary still counts all
    1,500 (the verifications are each reference's)."""
    from harness import SEED, SOURCES, run_cli

    doc = json.loads(SEED.read_text("utf-8"))
    ref = dict(doc["provenance"]["source_refs"][0], sha256="sha256:" + "1" * 64)
    doc["provenance"]["source_refs"] = [ref] * 1500
    path = tmp_path / "refs.json"
    path.write_text(json.dumps(doc, indent=1), "utf-8")
    done = run_cli("verify", path, "--sources", SOURCES, "-f", "json")
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    mc202 = [f for f in report["findings"] if f["rule"] == "MC202"]
    assert len(mc202) == MAX_LISTED + 1
    more = [f for f in mc202 if f.get("pointer", "") == ""]
    assert [f["message"].split(" more ")[0] for f in more] == ["500"]
    assert sum(v["status"] == "mismatch" for v in report["verifications"]) == 1500


def test_listed_keeps_the_first_of_each_rule_and_counts_the_rest() -> None:
    from risutools.findings import Finding, listed

    found = [Finding("A", "error", f"a{i}", "f", i, f"/a/{i}") for i in range(MAX_LISTED + 3)]
    found += [Finding("B", "warning", f"b{i}", "f", i, f"/b/{i}") for i in range(5)]
    out = listed(found, "f", 1)
    assert out[:MAX_LISTED] == found[:MAX_LISTED] and out[MAX_LISTED + 1:] == found[-5:]
    extra = out[MAX_LISTED]
    assert (extra.rule, extra.severity, extra.line, extra.pointer) == ("A", "error", 1, "")
    assert extra.message.startswith("3 more A findings in this document are not listed")
    assert listed(found[-5:], "f", 1) == found[-5:]


def test_the_schema_of_a_large_document_is_read_lazily_and_answers_as_the_reference() -> None:
    """A document of more than ``FAST_VALUES`` values that the schema refuses: with a few
    errors, the lazy path lists exactly the reference's errors (and the compiled path's:
    the same list); with more than ``MAX_LISTED``, it lists 999 of the reference's and one
    more issue, at the document, that says there are more; a document under the threshold
    has every error listed (mutation-checked: the lazy path taken always, or never, fails
    it)."""
    from harness import SEED

    from risutools.contract import schema

    doc = json.loads(SEED.read_text("utf-8"))
    doc["capabilities"]["requires"] = [f"hook.known_not_{i}" for i in range(25_000)]
    doc["projection"]["flagship"] = "yes"
    doc["capabilities"]["requires"][7] = 7
    doc["capabilities"]["provides"].append(["a list"])
    assert schema._values_past(doc, schema.FAST_VALUES)
    reference = sorted(set(schema._reference_issues(doc)))
    assert 3 <= len(reference) < MAX_LISTED
    assert schema.schema_issues(doc) == reference == sorted(set(schema._fast_issues(doc) or []))
    doc["capabilities"]["requires"] = [0] * 25_000
    many = set(schema._reference_issues(doc))
    got = schema.schema_issues(doc)
    assert len(many) > MAX_LISTED and len(got) == MAX_LISTED
    assert got[0][0] == "" and "more errors than the first 999" in got[0][1]
    assert set(got[1:]) <= many
    small = json.loads(SEED.read_text("utf-8"))
    small["capabilities"]["requires"] = [0] * 1_500  # (under FAST_VALUES: every error)
    assert len(schema.schema_issues(small)) == 1_500
