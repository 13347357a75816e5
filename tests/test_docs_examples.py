"""Docs that match the code (issue 13, item 5).

* Every fenced shell example of README.md and docs/*.md that runs ``risutools`` is run
  (in-process, through the console entry point, in a scratch folder holding a copy of
  ``fixtures/``, a catalog, and stand-ins for the folders the examples name; optional
  ``[...]`` parts are dropped, lines with placeholders such as FILE are not runnable): it
  must run (exit 0 or 1), or exit with the code the example shows after ``echo $?`` or in
  a ``# exit N`` comment, and the output lines a ``console`` block shows must appear.
* Every error code raised in ``risutools/`` is listed in the docs' error tables
  (docs/formats.md, docs/errors.md), and every listed code is raised somewhere.
* The documented configuration example loads.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
from pathlib import Path

import pytest

from risutools import cli
from risutools.errors import Code

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(sh|console|bash)\n(.*?)^```", re.M | re.S)
#: what the examples name, in the scratch folder the test runs them in
STAND_INS = {"~/risu-downloads": "fixtures/sources", " src ": " fixtures/sources ",
             "/mnt/risu-store": "fixtures/sources", "build/demo-catalog": "catalog",
             "/tmp/": "build/"}
PLACEHOLDER = re.compile(r"^[A-Z_]+(\.\.\.)?$|\||^\$\(")


def _concrete(cmd: str) -> str | None:
    """The example as a runnable command line: optional ``[...]`` parts dropped, shell
    redirections dropped, stand-ins for the user's folders; None when it keeps a
    placeholder (FILE, a|b choices, $(...))."""
    for old, new in STAND_INS.items():
        cmd = cmd.replace(old, new)
    while re.search(r"\[[^\[\]]*\]", cmd):
        cmd = re.sub(r"\s*\[[^\[\]]*\]", "", cmd)
    cmd = re.sub(r"\s*>\s*\S+", "", cmd)
    if any(PLACEHOLDER.search(tok) for tok in cmd.split()):
        return None
    return cmd.strip()


def _examples() -> list[tuple[str, str, int | None, list[str]]]:
    """(page, command line, expected exit code or None, output lines shown)."""
    out = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for m in FENCE.finditer(text):
            kind, body = m.group(1), m.group(2)
            lines = body.replace("\\\n", " ").splitlines()
            for i, line in enumerate(lines):
                cmd = line.strip()
                if kind == "console":
                    if not cmd.startswith("$ "):
                        continue
                    cmd = cmd[2:]
                cmd, _, comment = cmd.partition(" #")
                cmd = cmd.strip()
                said = re.match(r"\s*exit (\d)\b", comment)  # "# exit 1: ..." is checked too
                cmd = re.sub(r"^(\.venv/bin/|python -m )", "", cmd)
                if not cmd.startswith("risutools "):
                    continue
                want: int | None = int(said.group(1)) if said else None
                if cmd.endswith("; echo $?"):
                    cmd = cmd[: -len("; echo $?")]
                shown: list[str] = []
                if kind == "console":
                    for nxt in lines[i + 1:]:
                        if nxt.startswith("$ "):
                            break
                        shown.append(nxt)
                    if shown and shown[-1].strip().isdigit() and "echo $?" in line:
                        want = int(shown.pop().strip())
                concrete = _concrete(cmd)
                if concrete is not None:
                    out.append((page.name, concrete, want, shown))
    return out


EXAMPLES = _examples()


def test_examples_are_found() -> None:
    cmds = " ".join(c for _, c, _, _ in EXAMPLES)
    for sub in ("validate", "validate --fix", "verify", "hash", "rule", "inspect", "analyze",
                "project", "ingest", "replay run", "replay monitor", "replay synth", "unpack",
                "pack"):
        assert f"risutools {sub}" in cmds


@pytest.mark.parametrize(("page", "cmd", "want", "shown"), EXAMPLES,
                         ids=[f"{p}: {c[:60]}" for p, c, _, _ in EXAMPLES])
def test_documented_example_runs(page: str, cmd: str, want: int | None, shown: list[str],
                                 tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    # a scratch folder: a copy of the fixtures (replay writes next to its document), a
    # catalog, and the files the examples name
    shutil.copytree(ROOT / "fixtures", tmp_path / "fixtures")
    (tmp_path / "build").mkdir()
    shutil.copytree(ROOT / "fixtures" / "documents", tmp_path / "catalog")
    shutil.copy(ROOT / "fixtures" / "contract" / "good" / "components.ndjson",
                tmp_path / "catalog" / "components.ndjson")
    for name in ("x.json", "notes-ready.json"):
        shutil.copy(ROOT / "fixtures" / "documents" / "seed-000-context-cutter.json",
                    tmp_path / name)
    if "pack build/icons" in cmd:  # the pack example follows the unpack example
        monkeypatch.chdir(tmp_path)
        _main(monkeypatch,
              "risutools unpack fixtures/sources/183120336_asset-pack.risum -o build/icons")
        capsys.readouterr()
    monkeypatch.chdir(tmp_path)
    code = _main(monkeypatch, cmd)
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    if want is not None:
        assert code == want, f"{page}: `{cmd}` exited {code}, the docs say {want}\n{err}"
    else:
        assert code in (0, 1), f"{page}: `{cmd}` could not run (exit {code}): {err}"
    got = (out + err).splitlines()
    for line in shown:
        if line.strip():
            assert line.rstrip() in [g.rstrip() for g in got], f"{page}: `{cmd}`: {line!r}"


def _main(monkeypatch: pytest.MonkeyPatch, cmd: str) -> int:
    import glob

    argv = [x for a in shlex.split(cmd) for x in (sorted(glob.glob(a)) if "*" in a else [a])]
    monkeypatch.setattr("sys.argv", argv)
    with pytest.raises(SystemExit) as exc:
        cli.main()
    return exc.value.code if isinstance(exc.value.code, int) else 0


# --------------------------------------------------------------------------- error codes

RAISED = re.compile(
    r"\b(?:FormatError|DocumentError|ConfigError|ReplayError|RisuError|WriteConflict)\(\s*"
    r"Code\.([A-Z][A-Z0-9_]*)\b", re.S)
TABLE_ROW = re.compile(r"^\| `([a-z][a-z0-9-]*)`(?:, `([a-z][a-z0-9-]*)`)? \|", re.M)


def _code_literals() -> set[str]:
    found: set[str] = set()
    for p in (ROOT / "risutools").rglob("*.py"):
        found |= set(re.findall(r"\"([a-z][a-z0-9-]*)\"", p.read_text("utf-8")))
    return found


def _documented() -> set[str]:
    codes: set[str] = set()
    for name, heading in (("formats.md", "## Error codes"), ("formats.md", "## Warnings"),
                          ("errors.md", "# Error codes")):
        text = (ROOT / "docs" / name).read_text(encoding="utf-8")
        section = text.split(heading, 1)[1].split("\n## ", 1)[0]
        for a, b in TABLE_ROW.findall(section):
            codes |= {a, b} - {""}
    return codes


def test_every_raised_error_code_is_documented() -> None:
    raised: set[str] = set()
    for p in (ROOT / "risutools").rglob("*.py"):
        raised |= {getattr(Code, n) for n in RAISED.findall(p.read_text(encoding="utf-8"))}
    assert raised, "the scanner found no codes"
    assert sorted(raised - _documented()) == []


def test_every_documented_error_code_exists() -> None:
    literals = _code_literals() | {"missing-name", "missing-id"}  # (built as f"missing-{k}")
    assert sorted(_documented() - literals) == []


def test_the_configuration_example_loads(tmp_path: Path) -> None:
    from risutools.settings.config import load_settings_file

    text = (ROOT / "docs" / "contract.md").read_text(encoding="utf-8")
    block = text.split("## Configuration", 1)[1].split("```yaml\n", 1)[1].split("```", 1)[0]
    cfg_file = tmp_path / ".risutools.yaml"
    (tmp_path / "risu-store").mkdir()
    cfg_file.write_text(block.replace("../risu-store", "risu-store"), encoding="utf-8")
    cfg = load_settings_file(str(cfg_file))
    assert cfg.severities == {"MC401": "error", "MC105": "off"}


# --------------------------------------------------------------------------- documented defaults


def _params(path: str) -> dict[str, object]:
    import typer.main

    cmd: object = typer.main.get_command(cli.app)
    for part in path.split():
        cmd = cmd.commands[part]  # type: ignore[attr-defined]
    return {p.name: p.default for p in cmd.params}  # type: ignore[attr-defined]


@pytest.mark.parametrize(("messages", "turns"), [(11, 5), (10, 4), (2, 1)])
def test_synth_turns_default_is_the_documented_one(messages: int, turns: int, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    text = (ROOT / "docs" / "replay.md").read_text(encoding="utf-8")
    assert "--turns: default (messages - 1) / 2, rounded down, at least 1" in text
    out = tmp_path / "f.json"
    assert _main(monkeypatch, f"risutools replay synth --seed 1 --messages {messages} "
                 f"-o {out}") == 0
    assert len(json.loads(out.read_text(encoding="utf-8"))["turns"]) == turns


def test_analyze_fail_on_default_is_the_documented_one() -> None:
    text = (ROOT / "docs" / "analysis.md").read_text(encoding="utf-8")
    assert _params("analyze")["fail_on"] == "warning" and "(default `warning`" in text


def test_replay_run_on_an_invalid_document_exits_2_as_documented(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    text = (ROOT / "docs" / "replay.md").read_text(encoding="utf-8")
    assert "`2` could not run\n(unreadable or invalid component" in text
    doc = tmp_path / "c.json"
    doc.write_text('{"component_id": "x", "capabilities": {"provides": []}}', encoding="utf-8")
    code = _main(monkeypatch, f"risutools replay run {doc} -x "
                 f"{ROOT / 'fixtures' / 'replay' / 'toggle.yaml'}")
    err = capsys.readouterr().err
    assert code == 2 and "invalid-document" in err and err.count("\n") == 1
