"""The README's command table runs as shown (issue 24): every row, its placeholders given
values from the fixtures, once with only what it requires and once with every optional part
it shows (the first of each ``a|b`` choice); each must run (exit 0 or 1, never 2), and every
command of the command line has a row."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from harness import FIXTURES, ROOT, SEED, SOURCES, run_cli

from risutools import cli

ROWS = [re.split(r"(?<!\\)\|", line)[1].strip()  # the first cell (``\|`` is no border)
        for line in (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
        if line.startswith("| `risutools ")]
CUTTER = "module.risu.174678332.context-cutter"
MODULE = str(SOURCES / "174678332_context-cutter.risum")

#: a placeholder's value for one command, by the option before it ("" for a positional one)
BY_COMMAND: dict[tuple[str, str, str], str] = {
    ("hash", "", "FILE..."): str(SEED), ("review", "--select/--ignore", "IDS"): "MC2",
}
#: a placeholder's value, by the option before it ("" for a positional one)
VALUES: dict[tuple[str, str], str] = {
    ("", "FILE..."): MODULE, ("", "FILE"): MODULE, ("-o", "DIR"): "{tmp}/out",
    ("", "DIR_OR_JSON"): str(FIXTURES / "modules" / "174678332_context-cutter.json"),
    ("-o", "OUT.risum"): "{tmp}/out.risum", ("-f", "FORMAT"): "text", ("", "IDS"): "RA1",
    ("--select/--ignore", "IDS"): "RA1", ("--post-id", "N"): "174678332",
    ("--notes", "N.yaml"): str(FIXTURES / "notes" / f"{CUTTER}.yaml"),
    ("-o", "OUT"): "{tmp}/projected.json", ("--select", "IDS"): "RA1",
    ("--ignore", "IDS"): "RA8", ("--config", "FILE"): "{tmp}/settings.yaml",
    ("", "SRC"): str(SOURCES), ("-o", "CATALOG"): "{tmp}/ingested", ("-j", "N"): "1",
    ("", "PATH..."): "{cat}", ("--sources", "DIR"): str(SOURCES), ("", "ID"): "MC201",
    ("", "CATALOG"): "{cat}", ("", "COMPONENT"): CUTTER, ("--action", "A"): "request_review",
    ("--reviewer", "NAME"): "kim", ("--sign", "KEY"): "{tmp}/key",
    ("--to", "STATUS"): "pending_human_review", ("--queue", "DIR"): "{tmp}/queue",
    ("--status", "S"): "candidate", ("", "DOC"): "{cat}/seed-000-context-cutter.json",
    ("-x/--fixture", "F"): str(FIXTURES / "replay" / "anchor-edit.yaml"),
    ("--config", "C"): "{tmp}/replay.yaml", ("-o", "R.json"): "{tmp}/report.json",
    ("--seed", "N"): "1", ("--messages", "M"): "20", ("-o", "F"): "{tmp}/synth.yaml",
    ("--base", "HASH"): "sha256:" + "0" * 64,  # (not the document's: refused, exit 1)
    ("--catalog", "DIR"): "{cat}",
    # (the catalog's own empty log: an empty signers file, and a base log it extends)
    ("--allowed-signers", "FILE"): "{cat}/transitions.ndjson",
    ("--base-log", "FILE"): "{cat}/transitions.ndjson",
}


def _forms(row: str) -> list[str]:
    """The row's command lines: each ``a`` of ``a`, `b`` and of ``risutools a|b ...``."""
    lines = [c.replace("\\|", "|") for c in re.findall(r"`([^`]+)`", row)]
    lines = [c if c.startswith("risutools ") else "risutools " + c for c in lines]
    out = []
    for c in lines:
        m = re.match(r"risutools ([a-z]+)\|([a-z]+) (.*)", c)
        out += [f"risutools {m.group(1)} {m.group(3)}", f"risutools {m.group(2)} {m.group(3)}"] \
            if m else [c]
    return out


def _concrete(form: str, *, optional: bool) -> list[str]:
    """Tokens of ``form`` with values: optional parts kept (their first choice) or dropped."""
    if optional:
        while "[" in form:
            form = re.sub(r"\[([^\[\]]*)\]", lambda m: m.group(1).split(" | ")[0], form)
    else:
        while "[" in form:
            form = re.sub(r"\s*\[[^\[\]]*\]", "", form)
    tokens, out, before = form.split()[1:], [], ""
    command = tokens[0]
    for tok in tokens:
        if "|" in tok and not tok.startswith("-"):
            tok = tok.split("|")[0]  # a choice: the first
        if re.fullmatch(r"[A-Z][A-Z_.]*(\.\.\.)?|[A-Z]\.[a-z]+|[A-Z]+\.risum|OUT", tok) \
                or tok in ("N.yaml", "R.json", "OUT.risum"):
            key = (before if before.startswith("-") else "", tok)
            assert key in VALUES, f"no value for {key} in `{form}`"
            tok = BY_COMMAND.get((command, *key), VALUES[key])
        out.append("-x" if tok == "-x/--fixture" else
                   "--select" if tok == "--select/--ignore" else tok)
        before = tok if tok.startswith("-") else ""
        if tok in ("-x", "--select") and before == tok:
            before = {"-x": "-x/--fixture", "--select": "--select/--ignore"}[tok]
    return out


FORMS = list(dict.fromkeys(  # a form without optional parts once
    (f, opt) for row in ROWS for f in _forms(row) for opt in (False, "[" in f)))


def test_the_table_has_a_row_for_every_command() -> None:
    shown = {" ".join(f.split()[1:3]) if f.split()[1] in ("replay", "notes") else f.split()[1]
             for row in ROWS for f in _forms(row)}
    assert set(cli.COMMANDS) | {"activate", "deactivate", "publish"} == shown


@pytest.mark.parametrize(("form", "optional"), FORMS,
                         ids=[f"{f[10:60]}{' [all]' if o else ''}" for f, o in FORMS])
def test_every_row_runs_as_shown(form: str, optional: bool, tmp_path: Path) -> None:
    cat = tmp_path / "cat"
    shutil.copytree(SEED.parent, cat)
    (cat / "transitions.ndjson").touch()
    (tmp_path / "settings.yaml").write_text("rules: {RA102: 'off'}\n", encoding="utf-8")
    (tmp_path / "replay.yaml").write_text("max_context: 120\n", encoding="utf-8")
    argv = [t.format(tmp=tmp_path, cat=cat) for t in _concrete(form, optional=optional)]
    if "--sign" in argv:
        keygen = shutil.which("ssh-keygen")
        if keygen is None:
            pytest.skip("ssh-keygen is not installed")
        import subprocess

        subprocess.run([keygen, "-q", "-t", "ed25519", "-N", "", "-f", str(tmp_path / "key")],
                       check=True)
    p = run_cli(*argv, cwd=cat)  # the catalog is found above the working folder
    assert p.returncode in (0, 1), (argv, p.returncode, p.stderr[-500:])
    assert "Traceback" not in p.stderr and "internal error" not in p.stderr
