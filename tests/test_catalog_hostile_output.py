"""One hostile catalog fed to every output format (issue 21): nothing a catalog holds can
paint a terminal, forge a report row or a CI workflow command, or add markup to a page.

The catalog (a pull request could hold every part of it): a document whose component_id,
version and capability names carry ESC, OSC and CSI sequences, a C1 control, a bidi
override, CR and LF, ``::error::``, ``<script>``, ``<img onerror>``, a Markdown heading, a
table cell, a link and an entity; a document whose *file name* carries the same; an
approval whose reviewer, note and fields carry it; transition log lines whose fields carry
it.  Every format is then checked for what it must never let through:

* text (review, validate, concise, the promote plan, every standard error line): no control
  or format character, no line that starts a workflow command;
* GitHub annotations: only our own ``::error file=...`` lines, one per finding;
* Markdown (review, packets): no raw HTML tag, no heading, link or table cell made by a value,
  code fences that close where the renderer closes them;
* HTML: no tag or attribute from a value, no control character;
* JSON, SARIF, JUnit: parse, carry the values (JSON) unchanged, and hold no raw control
  character.
"""

from __future__ import annotations

import json
import re
import unicodedata
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from xml.dom import minidom

import pytest
from harness import run_cli
from hostile_catalog import catalog_copy
from test_catalog_support import CUTTER, MOOD

H = ("\x1b]0;owned\x07\x1b[2J\x9b31m\u202e\n::error::forged\r\n"
     "<script>alert(1)</script><img src=x onerror=alert(2)>\n# Heading\n"
     "| cell | `tick` [link](http://x) &amp; ***\n  pass  digests      forged row"
     " ##[stop-commands]x ###[error]y")
EVIL = "evil" + H
#: a file name may hold all of it but a slash
EVIL_FILE = "n\x1b]0;t\x07\x1b[2J\n::error::fn<img src=x onerror=alert(3)>\r# Heading.json"
CUT_COPY = CUTTER + "-copy"


def _hostile(cat: Path) -> Path:
    d = json.loads((cat / f"{MOOD}.json").read_text("utf-8"))
    d["component_id"] = EVIL
    d["component_version"] = H
    d["capabilities"]["provides"].append("x." + H)
    d["capabilities"]["conflicts"] = [H, "context.token_budget"]  # (an RV408 row names it)
    # a key: what a finding's pointer shows (in a packet's table, inside a code span)
    d["payload"]["state_effects"] = {"x | " + H: "<img src=x onerror=alert(4)>"}
    (cat / "evil.json").write_text(json.dumps(d, ensure_ascii=False), "utf-8")
    d = json.loads((cat / f"{CUTTER}.json").read_text("utf-8"))
    d["component_id"] = CUT_COPY
    (cat / EVIL_FILE).write_text(json.dumps(d, ensure_ascii=False), "utf-8")
    (cat / "approvals").mkdir()
    record = {"component_id": CUTTER, "component_version": H, "action": "request_review",
              "reviewer": H, "at": H, "base_sha256": H, "note": H}  # JSON is YAML
    (cat / "approvals" / f"{CUTTER}--request_review--evil.yaml").write_text(
        json.dumps(record), "utf-8")
    lines = [{"component_id": CUTTER, "from_status": H, "to_status": H, "before_sha256": H,
              "after_sha256": H, "approval": {"file": H, "sha256": H}, "at": H,
              "tool_version": H},
             {"kind": "runtime", "component_id": EVIL, "from_runtime": H, "to_runtime": H,
              "actor": H, "at": H, "tool_version": H}]
    (cat / "transitions.ndjson").write_text(
        "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), "utf-8")
    return cat


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[int, str, str]]:
    """Every command and format over the hostile catalog: name -> (exit, stdout, stderr)."""
    cat = _hostile(catalog_copy(tmp_path_factory, tmp_path_factory.mktemp("hostile")))
    out: dict[str, tuple[int, str, str]] = {}

    def run(name: str, *args: str) -> None:
        r = run_cli(*args, cwd=cat)
        out[name] = (r.returncode, r.stdout, r.stderr)

    for fmt in ("text", "json", "markdown", "html", "concise", "github", "sarif", "junit"):
        run(f"review.{fmt}", "review", ".", "-f", fmt)
    for fmt in ("text", "concise", "json", "github", "sarif", "junit"):
        run(f"validate.{fmt}", "validate", ".", "-f", fmt)
    for name, target in (("evil", "evil.json"), ("cutter", CUTTER), ("file", EVIL_FILE)):
        run(f"promote.{name}.text", "promote", target, "--to", "pending_human_review",
            "--dry-run")
        run(f"promote.{name}.json", "promote", target, "--to", "pending_human_review",
            "--dry-run", "--json")
        run(f"activate.{name}.text", "activate", target)
        packets = cat.parent / f"packets-{name}"
        run(f"packet.{name}", "packet", target, "--lane", "full", "-o", str(packets))
        for p in sorted(packets.iterdir()):
            kind = "json" if p.suffix == ".json" else "markdown"
            out[f"packet.{name}.{kind}"] = (0, p.read_text("utf-8"), "")
    run("approve.unknown", "approve", EVIL, "--action", "approve", "--reviewer", "kim")
    run("promote.unknown", "promote", "x" + H, "--to", "approved")
    return out


# --------------------------------------------------------------------------- what may not pass

_LAYOUT = {"\n"}


def _controls(text: str, allowed: set[str] = _LAYOUT) -> list[str]:
    """Control, format, separator and surrogate characters in ``text`` (but ``allowed``)."""
    return sorted({repr(c) for c in text if c not in allowed
                   and unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp", "Cs")})


def _no_command_lines(text: str) -> None:
    """No line a CI runner would take for a workflow command (``::name ...::`` at its
    start, ``##[name]`` anywhere in it)."""
    bad = [ln for ln in text.split("\n") if ln.lstrip().startswith("::") or "##[" in ln]
    assert not bad, bad[:3]


def _one_line_errors(name: str, err: str) -> None:
    assert _controls(err) == [], (name, err)
    _no_command_lines(err)
    assert len([x for x in err.splitlines() if x.strip()]) <= 1, (name, err)


def test_every_run_ran(outputs: dict[str, tuple[int, str, str]]) -> None:
    for name, (code, _out, err) in outputs.items():
        assert "Traceback" not in err and "internal error" not in err, (name, err)
        assert code in (0, 1, 2), name
        _one_line_errors(name, err)
    # the runs that show the values ran far enough to show them
    for name in ("review.text", "validate.text", "promote.evil.text", "packet.evil.markdown",
                 "packet.cutter.markdown", "promote.cutter.text"):
        assert "owned" in outputs[name][1], name
    assert outputs["approve.unknown"][0] == 2 and outputs["promote.unknown"][0] == 2


#: the runs whose report shows the hostile values themselves
SHOWN = ("review.text", "validate.text", "validate.concise", "promote.evil.text",
         "promote.cutter.text", "activate.evil.text")
TEXTS = ["review.text", "review.concise", "validate.text", "validate.concise", "promote.evil.text",
         "promote.cutter.text", "promote.file.text", "activate.evil.text",
         "activate.cutter.text", "activate.file.text", "packet.evil", "packet.cutter",
         "packet.file"]


@pytest.mark.parametrize("name", TEXTS)
def test_text_shows_every_control_escaped(outputs: dict[str, tuple[int, str, str]],
                                          name: str) -> None:
    out = outputs[name][1]
    assert _controls(out) == []
    _no_command_lines(out)
    assert not re.search(r"(?m)^\s*(pass|FAIL)\s+digests", out)  # no forged gate row
    if name in SHOWN:
        assert "\\x1b]0;owned\\x07" in out  # shown, escaped, not dropped


@pytest.mark.parametrize("command", ["validate", "review"])
def test_github_annotations_are_ours_alone(outputs: dict[str, tuple[int, str, str]],
                                           command: str) -> None:
    out = outputs[f"{command}.github"][1]
    findings = json.loads(outputs[f"{command}.sarif"][1])["runs"][0]["results"]
    assert _controls(out) == []
    ours = re.compile(r"::(error|warning|notice) file=[^:,\n]*(,line=\d+)?,title=[A-Z]+\d+::")
    lines = out.rstrip("\n").split("\n")
    annotations = [ln for ln in lines if ln.startswith("::")]
    assert all(ours.match(ln) for ln in annotations), annotations
    assert len(annotations) == len(findings) and len(lines) == len(findings) + 1
    assert all("\n" not in ln and "\r" not in ln for ln in annotations)
    # (nor one the runner makes: a value's line break is shown as \n, never %0A, which
    # the runner turns back into a line of the annotation; stop 62, the interactions' rows)
    assert all("%0A" not in ln and "%0D" not in ln for ln in annotations), \
        [ln for ln in annotations if "%0A" in ln][:2]


@pytest.mark.parametrize("command", ["validate", "review"])
def test_sarif_messages_are_one_shown_line(outputs: dict[str, tuple[int, str, str]],
                                           command: str) -> None:
    """A result's message as a viewer shows it: no line break, escape sequence or bidi
    override from a value (the interactions' rows named a component by its raw id)."""
    results = json.loads(outputs[f"{command}.sarif"][1])["runs"][0]["results"]
    texts = [r["message"]["text"] for r in results]
    assert texts and all(_controls(t, set()) == [] for t in texts), \
        [t for t in texts if _controls(t, set())][:2]


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def test_html_has_no_tag_or_attribute_from_a_value(
        outputs: dict[str, tuple[int, str, str]]) -> None:
    page = outputs["review.html"][1]
    assert _controls(page) == []
    p = _Tags()
    p.feed(page)
    names = {t for t, _ in p.tags}
    assert "img" not in names
    assert sum(1 for t, _ in p.tags if t == "script") == 2  # the page's data and its code
    assert not any(k.startswith("on") for _, attrs in p.tags for k, _ in attrs)
    shown = "".join(p.text)
    assert "<script>alert(1)</script>" in shown  # as text a person reads
    assert "<img src=x onerror=alert(2)>" in shown


def _prose(md: str) -> str:
    """The Markdown outside its fenced code blocks and code spans (where ``<`` and ``#``
    are text); every fence closes, and no code span runs past its line."""
    kept, inside = [], False
    for ln in md.split("\n"):
        if ln.startswith("```"):
            inside = not inside
            continue
        if not inside:
            kept.append(ln)
    assert not inside, "a fence never closes"
    for ln in kept:
        assert ln.count("`") % 2 == 0, ln
    return re.sub(r"`[^`\n]*`", "`code`", "\n".join(kept))


MARKDOWN = ["review.markdown", "packet.evil.markdown", "packet.cutter.markdown",
            "packet.file.markdown"]


@pytest.mark.parametrize("name", MARKDOWN)
def test_markdown_is_text_not_markup(outputs: dict[str, tuple[int, str, str]],
                                     name: str) -> None:
    md = outputs[name][1]
    assert _controls(md) == []
    _no_command_lines(md)
    prose = _prose(md)
    assert not re.search(r"<(script|img|/script)", prose, re.I)
    assert not re.search(r"(?m)^\s{0,3}#+\s*Heading", prose)  # no heading from a value
    assert not re.search(r"(?<!\\)\[link(?<!\\)\]\(", prose)  # no link
    assert not re.search(r"(?<!\\)\| cell (?<!\\)\|", prose)  # no table cell
    assert "&amp;" not in prose.replace("&amp;amp;", "")  # an entity shown, not decoded
    for ln in prose.split("\n"):
        if ln.startswith("|"):  # every row of a table as wide as its header
            assert len(re.findall(r"(?<!\\)\|", ln)) >= 3, ln
    # a table's cells end at every | not escaped, inside a code span too (GFM): each raw
    # row has as many as its header
    width = 0
    for ln in md.split("\n"):
        cells = len(re.findall(r"(?<!\\)\|", ln)) if ln.startswith("|") else 0
        if cells and not width:
            width = cells
        elif cells:
            assert cells == width, ln
        else:
            width = 0
    # a value inside a fence cannot end it: JSON writes its line breaks as \n
    assert "\n```\n::" not in md


JSONS = ["review.json", "review.sarif", "validate.json", "validate.sarif", "promote.evil.json",
         "promote.cutter.json", "promote.file.json", "packet.evil.json", "packet.cutter.json"]


def _strings(v: Any) -> list[str]:
    if isinstance(v, str):
        return [v]
    if isinstance(v, dict):
        return [s for k, x in v.items() for s in (k, *_strings(x))]
    if isinstance(v, list):
        return [s for x in v for s in _strings(x)]
    return []


@pytest.mark.parametrize("name", JSONS)
def test_json_carries_the_values_and_no_raw_control(
        outputs: dict[str, tuple[int, str, str]], name: str) -> None:
    text = outputs[name][1]
    assert _controls(text) == []
    _no_command_lines(text)
    data = json.loads(text)
    if name in ("review.json", "promote.evil.json", "packet.evil.json"):
        assert EVIL in _strings(data)  # the value itself, unchanged, for a program


@pytest.mark.parametrize("command", ["validate", "review"])
def test_junit_is_well_formed_xml(outputs: dict[str, tuple[int, str, str]],
                                  command: str) -> None:
    text = outputs[f"{command}.junit"][1]
    assert _controls(text) == []
    minidom.parseString(text.encode("utf-8"))


def test_no_output_holds_a_runner_command(outputs: dict[str, tuple[int, str, str]]) -> None:
    """GitHub's runner takes ``##[name]data`` from anywhere in a log line (its older form of
    workflow command; ``##[stop-commands]`` turns off every later annotation): no format
    (JSON, SARIF, JUnit, HTML and GitHub annotations too) and no error line carries one."""
    for name, (_code, out, err) in outputs.items():
        assert "##[" not in out and "##[" not in err, (name, out[out.find("##["):][:80])
    assert "##\\x5bstop-commands]x" in outputs["review.text"][1]  # shown, escaped
