"""A replay report's Markdown shows the component's and the fixture's text, never markup:
a component id, a fixture name or file, a configuration value carrying a backtick, a line
break, a heading, a link, raw HTML or a table cell stay inside their span or cell."""

from __future__ import annotations

import re
from pathlib import Path

from harness import FIXTURES, SEED

from risutools.replay.api import run_component
from risutools.replay.render_html import render_html
from risutools.replay.render_markdown import render_markdown

H = "x`\n# Heading\n<img src=x onerror=alert(1)> [link](javascript:alert(2)) | cell |"


def test_a_hostile_id_fixture_and_config_value_are_text(tmp_path: Path) -> None:
    out = run_component(SEED, FIXTURES / "replay" / "anchor-edit.yaml",
                        output=tmp_path / "r.json")
    report = out.report
    assert report is not None
    report["component"]["component_id"] = H
    report["fixture"]["name"] = H
    report["fixture"]["file"] = H
    report["simulation"] = H
    report["config"]["tokenizer_profile"] = H
    md = render_markdown(report)
    prose = re.sub(r"`[^`\n]*`", "`code`", md)  # (a code span shows its text as text)
    assert not re.search(r"(?m)^\s{0,3}#+\s*Heading", md)
    assert "<img" not in prose and not re.search(r"(?<!\\)\[link(?<!\\)\]\(", prose)
    assert md.count("\n# ") == 0 and md.startswith("# Replay of `")
    for line in md.split("\n"):
        if line.startswith("| tokenizer_profile"):
            assert len(re.findall(r"(?<!\\)\|", line)) == 3, line


def test_the_html_page_shows_every_control_escaped(tmp_path: Path) -> None:
    """The HTML page of the same report: a value's ESC, C1, bidi override or line separator
    reaches the page escaped (as the review's page writes them), never raw."""
    out = run_component(SEED, FIXTURES / "replay" / "anchor-edit.yaml",
                        output=tmp_path / "r.json")
    report = out.report
    assert report is not None
    evil = "x\x1b]0;t\x07\x9b2J\u202e\u2028<script>alert(1)</script>"
    report["component"]["component_id"] = evil
    report["fixture"]["file"] = evil
    report["config"]["tokenizer_profile"] = evil
    page = render_html(report)
    assert not [c for c in page if c != "\n" and (c < " " or "\x7f" <= c <= "\x9f"
                                                   or c in "\u202e\u2028")]
    assert "<script>" not in page and "\\x1b]0;t\\x07" in page
