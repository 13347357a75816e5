"""Parsers that read nesting by recursion (``tomllib``, ``json``) are fed untrusted text in a
few places; a text nested thousands deep made them raise ``RecursionError``, which the CLI
reported as an internal error ("please report it", exit 2) instead of saying what is wrong
with the file.  Found by fuzzing a ``pyproject.toml`` of 1 KB; the same class in two more
places: the format sniff of a JSON text read from standard input, and the log lines a
``promote`` re-reads before it writes.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from harness import SEED, run_cli

from risutools.catalog.promote import _new_lines_for

DEEP = 3_000


def test_a_deep_pyproject_is_a_configuration_error(tmp_path: Path) -> None:
    shutil.copy(SEED, tmp_path / "doc.json")
    (tmp_path / "pyproject.toml").write_text(
        "[tool.risutools]\nrules = " + "[" * DEEP + "]" * DEEP + "\n", "utf-8")
    r = run_cli("validate", "doc.json", cwd=tmp_path)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "internal error" not in r.stderr and "Traceback" not in r.stderr
    assert "pyproject.toml: config-invalid: not valid TOML here: nested deeper" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_deep_json_on_standard_input_is_a_finding(tmp_path: Path) -> None:
    text = '{"a": ' + "[" * DEEP + "]" * DEEP + '}\n{"b": 1}\n'
    r = run_cli("validate", "-f", "concise", "-", cwd=tmp_path, stdin=text)
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert "internal error" not in r.stderr and "Traceback" not in r.stderr
    assert "-:1:1: MC000 nested deeper than 64 levels; flatten the document" in r.stdout


def test_a_deep_log_line_naming_the_component_is_counted_as_new() -> None:
    cid = "module.risu.1.x"
    line = ('{"component_id": "' + cid + '", "x": ' + "[" * DEEP + "]" * DEEP + "}").encode()
    assert _new_lines_for(b"old\n" + line + b"\n", cid, 4) == "has 1 new line(s) for it"
