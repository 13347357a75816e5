"""The replay page as a reader meets it (issue 24): "none" where nothing failed, a marker and
a finding (R9) for the requests that send a tool result without its call, a chart as wide as
the page.  (tests/test_replay_browser.py lays the page out in Chromium.)"""

from __future__ import annotations

import re
from pathlib import Path

from risutools.replay.fixture import load_fixture
from risutools.replay.render_html import render_html
from risutools.replay.render_markdown import render_markdown
from risutools.replay.run import build_report, replay_cutter
from risutools.settings.replay import load_replay_config

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "replay"


def _report(name: str) -> dict:  # type: ignore[type-arg]
    fx = load_fixture(FIX / name)
    cfg = load_replay_config(None, fx.config)
    return build_report(replay_cutter(fx, cfg), fx, cfg, None)


def _summary_cell(page: str, key: str) -> str:
    m = re.search(rf"<tr><td>{key}</td><td>([^<]*)</td></tr>", page)
    assert m, key
    return m.group(1)


def test_nothing_failed_reads_none() -> None:
    report = _report("anchor-edit.yaml")
    assert report["summary"]["failed_invariants"] == []
    page = render_html(report)
    assert _summary_cell(page, "failed_invariants") == "none"
    assert _summary_cell(page, "warned_invariants") == "none"
    assert "| failed_invariants | none |" in render_markdown(report)


def test_a_result_sent_without_its_call_is_marked_and_found() -> None:
    report = _report("protected-tools.yaml")
    s = report["summary"]
    assert (s["verdict"], s["failed_invariants"], s["warned_invariants"]) == ("passed", [],
                                                                             ["R9"])
    assert s["requests_with_orphaned_tool_results"] == 1
    page = render_html(report)
    # the marker: one circle in the "orphaned" lane, at request 2, with its tooltip
    markers = re.findall(r'<circle class="marker orphan" data-kind="orphan"[^>]*>'
                         r"<title>([^<]*)</title>", page)
    assert markers == ["request 2: 1 tool result(s) sent without the assistant message that "
                       "called them (R9)"]
    assert ">orphaned</text>" in page
    assert "result without its call (R9): 1" in page  # the legend, with its count
    # the finding: R9's row, a warning, not a failure
    row = re.search(r'<tr id="inv-R9" class="([^"]*)"><td>R9</td><td>([^<]*)</td>', page)
    assert row and row.groups() == ("warned-row", "warning (1 of 2)")
    assert _summary_cell(page, "warned_invariants") == "R9"
    md = render_markdown(report)
    assert "| R9 | warning (1 of 2) |" in md and "**Verdict: passed**" in md


def test_the_command_line_says_the_warning(tmp_path: Path) -> None:
    from harness import SEED, run_cli

    p = run_cli("replay", "run", str(SEED), "-x", str(FIX / "protected-tools.yaml"), "-o",
                str(tmp_path / "r.json"))
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("context-cutter: 2 request(s), verdict passed (failed "
                               "invariants: none; warnings: R9); report ")


def test_a_run_without_tool_calls_leaves_r9_not_checked() -> None:
    report = _report("anchor-edit.yaml")
    [r9] = [i for i in report["invariants"] if i["id"] == "R9"]
    assert (r9["verdict"], r9["requests_checked"]) == ("not-checked", 0)
    assert "R9" in report["summary"]["not_checked_invariants"]
    assert 'class="marker orphan"' not in render_html(report)


def test_the_chart_is_as_wide_as_the_page() -> None:
    page = render_html(_report("anchor-edit.yaml"))
    svg = re.search(r'<svg id="replay-chart"[^>]*>', page)
    assert svg and 'width="100%"' in svg.group(0) and "height=" not in svg.group(0)
    assert re.search(r'viewBox="0 0 \d+ \d+"', svg.group(0))
    assert "#replay-chart{display:block;width:100%;height:auto}" in page
