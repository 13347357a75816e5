"""Renderers: text, json, github annotations, SARIF 2.1.0, JUnit XML."""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from dataclasses import asdict
from pathlib import Path

from risutools.contract.validate import DocumentInfo, Result, validate_paths
from risutools.findings import Finding
from risutools.printable import json_text
from risutools.report.github import annotation, escape_data, escape_property, render_github
from risutools.report.json_out import render_json, result_dict
from risutools.report.junit import render_junit
from risutools.report.sarif import render_sarif
from risutools.report.text import render_text

FX = Path(__file__).resolve().parents[1] / "fixtures" / "contract"


def mixed() -> Result:
    return validate_paths([FX / "bad" / "rules.json", FX / "bad" / "broken-line.ndjson",
                           FX / "good" / "bom.json"])


def test_github_escaping() -> None:
    assert escape_data("100% done\r\nnext") == "100%25 done%0D%0Anext"
    assert escape_property("a:b,c%d\n") == "a%3Ab%2Cc%25d%0A"
    f = Finding("MC201", "error", "bad: 50%, see\nthis", file="dir,x/a:b.json", line=7,
                pointer="/projection/prompt_sha256")
    assert annotation(f) == ("::error file=dir%2Cx/a%3Ab.json,line=7,title=MC201::"
                             "bad: 50%25, see\\nthis (at /projection/prompt_sha256)")
    w = Finding("MC401", "warning", "unknown", file="a.json")
    assert annotation(w) == "::warning file=a.json,title=MC401::unknown"


def test_github_render_has_one_line_per_finding() -> None:
    r = mixed()
    out = render_github(r).splitlines()
    assert len(out) == len(r.findings) + 1
    assert all(x.startswith(("::error ", "::warning ")) for x in out[:-1])


def test_sarif_structure() -> None:
    r = mixed()
    s = json.loads(render_sarif(r))
    assert s["version"] == "2.1.0" and s["$schema"].endswith("sarif-2.1.0.json")
    [run] = s["runs"]
    rules = run["tool"]["driver"]["rules"]
    ids = [x["id"] for x in rules]
    assert ids == sorted(ids) and "MC500" in ids and "MC000" in ids
    for rule in rules:
        assert rule["shortDescription"]["text"] and rule["help"]["text"]
        assert rule["defaultConfiguration"]["level"] in ("error", "warning")
    assert len(run["results"]) == len(r.findings)
    for res in run["results"]:
        assert ids[res["ruleIndex"]] == res["ruleId"]
        assert res["level"] in ("error", "warning", "note")
        assert res["message"]["text"]
        loc = res["locations"][0]["physicalLocation"]
        uri = loc["artifactLocation"]["uri"]
        assert not uri.startswith("/") and "://" not in uri
        if "region" in loc:
            assert loc["region"]["startLine"] >= 1
    broken = next(x for x in run["results"] if x["ruleId"] == "MC000")
    assert broken["locations"][0]["physicalLocation"]["region"]["startLine"] == 2


def test_sarif_uri_escapes_spaces() -> None:
    r = Result(file_findings=[Finding("MC000", "error", "x", file="my dir/a b.json", line=1)])
    s = json.loads(render_sarif(r))
    uri = s["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == "my%20dir/a%20b.json"


def test_junit_is_valid_xml_one_suite_per_file() -> None:
    r = mixed()
    root = ET.fromstring(render_junit(r).encode())
    suites = root.findall("testsuite")
    assert len(suites) == 3
    by = {s.get("name", "").rsplit("/", 1)[-1]: s for s in suites}
    nd = by["broken-line.ndjson"]
    cases = nd.findall("testcase")
    assert len(cases) == 4  # load error + 3 documents
    assert nd.get("errors") == "1" and nd.get("failures") == "0"
    rules = by["rules.json"].find("testcase")
    assert rules is not None and rules.find("failure") is not None
    assert rules.find("system-out") is not None  # the warnings
    assert by["bom.json"].get("failures") == "0"
    assert root.get("tests") == "6"


def test_junit_control_characters_are_escaped() -> None:
    d = DocumentInfo("a.json", 1, "m\x01", "1.0.0", None,
                     [Finding("MC100", "error", "bad \x07 value", file="a.json", line=1)])
    root = ET.fromstring(render_junit(Result(documents=[d])).encode())
    assert root.find("testsuite/testcase/failure") is not None


def test_junit_groups_documents_and_load_findings_by_file_whatever_their_order() -> None:
    """Documents of a file met apart, a file with only a load finding, a finding with no
    file: each file one suite, its documents in the order met, sorted by name."""
    def doc(file: str, cid: str, line: int = 1) -> DocumentInfo:
        return DocumentInfo(file, line, cid, "1.0.0", None, [])
    r = Result(documents=[doc("b.ndjson", "b1", 1), doc("a.json", "a1"),
                          doc("b.ndjson", "b2", 2), doc("c.json", "c1")],
               file_findings=[Finding("MC000", "error", "broken", file="b.ndjson", line=3),
                              Finding("MC000", "error", "unreadable", file="z.json"),
                              Finding("MC000", "error", "nowhere")])
    root = ET.fromstring(render_junit(r).encode())
    suites = [(s.get("name"), [c.get("name") for c in s.findall("testcase")],
               s.get("tests"), s.get("errors")) for s in root.findall("testsuite")]
    assert suites == [("", ["load"], "1", "1"), ("a.json", ["a1@1.0.0"], "1", "0"),
                      ("b.ndjson", ["load", "b1@1.0.0 (line 1)", "b2@1.0.0 (line 2)"], "3", "1"),
                      ("c.json", ["c1@1.0.0"], "1", "0"), ("z.json", ["load"], "1", "1")]
    assert (root.get("tests"), root.get("errors")) == ("7", "3")


def test_json_report_is_json_dumps_with_its_unprintables_escaped() -> None:
    """The report written by orjson where it can is ``json.dumps(..., indent=2)``'s text,
    unprintables escaped, for every kind of value a result holds: a file name of
    undecodable bytes (lone surrogates: orjson refuses it), controls, line separators."""
    odd = os.fsdecode(b"dir/bad-\xff.json")
    r = mixed()
    r.file_findings.append(Finding("MC001", "error", "cannot read \u2028 \x07 it", file=odd,
                                   code="not-found"))
    r.documents.append(DocumentInfo(odd, 3, "m\x1b", "1.0.0", None,
                                    [Finding("MC500", "warning", "키 \u200b", file=odd, line=3,
                                             pointer="/a~1b")]))
    for result in (mixed(), r, Result()):
        reference = json_text(json.dumps(result_dict(result), ensure_ascii=False,
                                         sort_keys=True, indent=2)) + "\n"
        assert render_json(result) == reference


def test_a_findings_dict_is_its_set_fields_in_order() -> None:
    for f in (Finding("MC100", "error", "m"), Finding("RA1", "info", "", "a", 0, "", "ev", ""),
              Finding("MC001", "error", "x", file="f", line=2, pointer="/p", code="c")):
        assert f.to_dict() == {k: v for k, v in asdict(f).items() if v not in (None, "")}
        assert list(f.to_dict()) == [k for k in asdict(f) if k in f.to_dict()]


def test_json_report_is_stable_and_complete() -> None:
    a, b = render_json(mixed()), render_json(mixed())
    assert a == b
    d = json.loads(a)
    assert d["summary"]["errors"] == sum(1 for f in d["findings"] if f["severity"] == "error")
    assert {x["rule"] for x in d["findings"]} >= {"MC000", "MC201", "MC500"}
    assert len(d["documents"]) == 5


def test_text_groups_by_file_and_colours_only_when_asked() -> None:
    r = mixed()
    plain = render_text(r)
    assert "\x1b[" not in plain
    assert "\x1b[31m" in render_text(r, color=True)
    lines = plain.splitlines()
    heads = [ln for ln in lines if ln and not ln.startswith(" ")]
    assert heads[0].endswith("broken-line.ndjson") and heads[1].endswith("rules.json")
    assert lines[-1].startswith("failed:")


def test_sarif_absolute_path_is_a_file_uri_without_base() -> None:
    r = Result(file_findings=[Finding("MC000", "error", "x; y", file="/tmp/cat/a b.json", line=3)])
    res = json.loads(render_sarif(r))["runs"][0]["results"][0]
    art = res["locations"][0]["physicalLocation"]["artifactLocation"]
    assert art == {"uri": "file:///tmp/cat/a%20b.json"}


def test_sarif_stdin_has_no_location() -> None:
    r = Result(file_findings=[Finding("MC000", "error", "x; y", file="-")])
    res = json.loads(render_sarif(r))["runs"][0]["results"][0]
    assert "locations" not in res


def test_sarif_fingerprints_stable_unique_and_line_independent() -> None:
    def result(line: int) -> Result:
        fs = [Finding("MC303", "error", "same; fix", file="a.json", line=line,
                      pointer="/provenance/publishable"),
              Finding("MC303", "error", "same; fix", file="a.json", line=line,
                      pointer="/provenance/publishable"),
              Finding("MC303", "error", "same; fix", file="b.json", line=line,
                      pointer="/provenance/publishable")]
        return Result(documents=[DocumentInfo("a.json", 1, "m", "1.0.0", None, fs[:2]),
                                 DocumentInfo("b.json", 1, "m", "1.0.0", None, fs[2:])])

    def prints(r: Result) -> list[str]:
        run = json.loads(render_sarif(r))["runs"][0]
        return [x["partialFingerprints"]["risutoolsFinding/v1"] for x in run["results"]]

    a = prints(result(5))
    assert len(set(a)) == 3  # identical findings are told apart by a counter
    assert prints(result(9)) == a  # a shifted line keeps the alert
    assert a[0].endswith(":1") and a[1].endswith(":2")
