"""The findings formats written line by line, or result by result, as they are made
(concise, GitHub, SARIF, JUnit): the same text as the whole rendering they replaced (kept here as
the reference expressions), on generated findings with every awkward character, and a
SARIF log of many results rendered in a fraction of the memory of the whole log (a
review of 50,000 documents: 1.1 GB before, bench/RESULTS.md round 33)."""

from __future__ import annotations

import json
import random
import xml.etree.ElementTree as ET

import pytest
from harness import traced_peak

from risutools.contract.result import DocumentInfo, Result
from risutools.findings import Finding
from risutools.printable import json_text, no_commands
from risutools.report import junit, sarif
from risutools.report._common import PIECE_CHARS, summary_line
from risutools.report.concise import concise_line, concise_pieces, render_concise
from risutools.report.github import annotation, github_pieces, render_github
from risutools.report.reporters import REPORTERS

#: what a message, a file name or a pointer may hold that a format must escape
_AWKWARD = ["[x](https://h)", "{0} {{u}}", "a\nb", "c\r\nd", "::error x", "50%, a:b",
            "\u2028", "\x1b[31m", "\ud800", "한국어", "\\[", "", "x" * 600]


def _text(rng: random.Random, awkward: list[str] = _AWKWARD) -> str:
    return "".join(rng.choice(awkward) for _ in range(rng.randint(0, 3)))


#: a file's shown name is escaped already (``show_name``): no lone surrogate in it
_NAMED = [a for a in _AWKWARD if a != "\ud800"]


def _result(rng: random.Random, n: int, command: str = "validate") -> Result:
    rules = ["MC100", "MC401", "MC600", "MC000", "RA110", "ZZ999"]
    r = Result(command)
    for d in range(max(1, n // 3)):
        file = rng.choice([f"cat/{_text(rng, _NAMED)}{d}.json", "-", f"/abs/{d}.ndjson", ""])
        line = rng.choice([None, 1, d + 2])
        info = DocumentInfo(file, line, rng.choice([None, f"m.{d}", _text(rng)]), "1.0.0",
                            None)
        info.findings = [Finding(rng.choice(rules), rng.choice(["error", "warning", "info"]),
                                 _text(rng) or "m", file=file or None, line=line,
                                 pointer=rng.choice(["", "/payload", _text(rng)]),
                                 evidence=rng.choice(["", "trigger[2] line 4"]))
                         for _ in range(rng.randint(0, 4))]
        r.documents.append(info)
        r.files.append(file)
    r.file_findings = [Finding("MC001", "error", _text(rng) or "gone", file=f"x{i}.json",
                               code="not-found") for i in range(rng.randint(0, 3))]
    return r


@pytest.mark.parametrize("seed", range(16))
def test_the_pieces_are_the_whole_renderings(seed: int) -> None:
    rng = random.Random(seed)
    r = _result(rng, rng.choice([0, 1, 7, 60, 400]), rng.choice(["validate", "analyze"]))
    lines = [concise_line(f) for f in r.findings] + [summary_line(r)]
    assert "".join(concise_pieces(r)) == no_commands("\n".join(lines) + "\n") \
        == render_concise(r)
    lines = [annotation(f) for f in r.findings] + [summary_line(r)]
    assert "".join(github_pieces(r)) == "\n".join(lines) + "\n" == render_github(r)
    whole = json_text(json.dumps(sarif.sarif_dict(r), ensure_ascii=False, sort_keys=True,
                                 indent=2)) + "\n"
    assert "".join(sarif.sarif_pieces(r)) == whole == sarif.render_sarif(r)
    assert len(json.loads(whole)["runs"][0]["results"]) == len(r.findings)


def _reference_junit(result: Result) -> str:
    """The JUnit XML as the whole tree wrote it (the code before it was written a suite at
    a time: every suite made into one tree, then indented and written; each file's
    documents and load findings picked out here by a scan of their own)."""
    root = ET.Element("testsuites", {"name": f"risutools {result.command}"})
    total = failures = errors = 0
    named = {d.file for d in result.documents} | {f.file or "" for f in result.file_findings}
    for file in sorted(named):
        docs = [d for d in result.documents if d.file == file]
        loads = [f for f in result.file_findings if (f.file or "") == file]
        n, s_fail, s_err = junit._suite(root, file, docs, loads, result)
        total += n
        failures += s_fail
        errors += s_err
    root.set("tests", str(total))
    root.set("failures", str(failures))
    root.set("errors", str(errors))
    ET.indent(root)
    body = ET.tostring(root, encoding="unicode")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + body + "\n"


@pytest.mark.parametrize("seed", range(16))
def test_the_junit_suites_one_at_a_time_are_the_whole_tree(seed: int) -> None:
    rng = random.Random(seed)
    r = _result(rng, rng.choice([0, 1, 7, 60, 400]), rng.choice(["validate", "review"]))
    r.strict = bool(seed % 2)
    if seed % 4 == 0:  # (several documents in one file: an NDJSON catalog)
        for d in r.documents:
            d.file = "cat.ndjson"
    if seed % 5 == 0:
        r.documents = []
    got = list(junit.junit_pieces(r))
    assert "".join(got) == _reference_junit(r) == junit.render_junit(r)
    ET.fromstring("".join(got).split("\n", 1)[1])  # (well-formed)


def test_many_results_come_in_several_pieces_of_about_a_mib() -> None:
    r = _result(random.Random(99), 9000)
    pieces = list(sarif.sarif_pieces(r))
    assert len(pieces) > 3
    assert all(len(p) < 2 * PIECE_CHARS for p in pieces)
    assert "".join(pieces) == json_text(json.dumps(sarif.sarif_dict(r), ensure_ascii=False,
                                                   sort_keys=True, indent=2)) + "\n"


@pytest.mark.parametrize("kind", ["findings", "review"])
@pytest.mark.parametrize("fmt", ["concise", "github", "sarif", "junit"])
def test_the_formats_are_written_in_pieces(kind: str, fmt: str) -> None:
    """Every command's findings formats, the review's included, hand the writer pieces."""
    assert REPORTERS[kind][fmt].pieces is not None


def test_a_sarif_log_of_many_results_is_rendered_a_piece_at_a_time(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """What it holds is a piece (64 KiB here, 1 MiB as shipped) and a few words a finding
    (its fingerprint's count, its document's id), not the log."""
    monkeypatch.setattr(sarif, "_PIECE", 1 << 16)
    r = _result(random.Random(5), 12000)
    assert r.findings  # (sorted once, as the command has them: not counted below)

    def whole() -> None:
        json.dumps(sarif.sarif_dict(r), ensure_ascii=False, sort_keys=True, indent=2)

    def pieces() -> None:
        for _ in sarif.sarif_pieces(r):
            pass

    held, peak = traced_peak(whole), traced_peak(pieces)
    assert held > 20_000_000, held
    assert peak < held / 4, (peak, held)
