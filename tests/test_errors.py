"""The error-code catalog (risutools.errors.CODES): every code raised is in it, each code is
used, and docs/errors.md's table is generated from it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from harness import ROOT

from risutools.checks.docs import ERRORS_PAGE, errors_table, render_errors_page
from risutools.errors import CODES, ConfigError, RisuError

#: the constructors whose first argument is a code
RAISERS = {"RisuError", "FormatError", "DocumentError", "ConfigError", "ReplayError",
           "WriteConflict", "FileRefused"}


def raised_codes(source: str) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Call) and node.args):
            continue
        f = node.func
        name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
        first = node.args[0]
        if name in RAISERS and isinstance(first, ast.Constant) and isinstance(first.value, str):
            out.add(first.value)
    return out


def test_every_code_raised_is_in_the_catalog() -> None:
    unknown = {}
    for path in sorted((ROOT / "risutools").rglob("*.py")):
        extra = raised_codes(path.read_text(encoding="utf-8")) - set(CODES)
        if extra:
            unknown[path.relative_to(ROOT).as_posix()] = sorted(extra)
    assert unknown == {}


def test_every_catalog_code_is_spelled_somewhere_in_the_code() -> None:
    text = "".join(p.read_text(encoding="utf-8") for p in (ROOT / "risutools").rglob("*.py")
                   if p.name != "errors.py")
    assert [c for c in CODES if f'"{c}"' not in text] == []


def test_the_scanner_sees_a_code() -> None:
    src = 'raise ConfigError("no-such-code", "x")\nx = errors.FormatError("other", "y")\n'
    assert raised_codes(src) == {"no-such-code", "other"}


def test_the_docs_table_is_generated() -> None:
    page = (ROOT / ERRORS_PAGE).read_text(encoding="utf-8")
    assert render_errors_page(page) == page, "run `python -m risutools.checks.docs`"
    assert errors_table().count("\n| `") == len(CODES)
    with pytest.raises(ValueError, match="markers"):
        render_errors_page("no markers")


def test_one_line_and_with_path() -> None:
    e = ConfigError("config-bad-value", "max_context: must be an integer", where="config")
    assert e.one_line() == "config: config-bad-value: max_context: must be an integer"
    assert e.with_path("c.yaml").one_line().startswith("c.yaml: config: ")
    assert isinstance(e, RisuError) and e.with_path("other").path == "c.yaml"


def test_a_missing_path_is_not_found_in_every_reader(tmp_path: Path) -> None:
    from risutools.contract.config import load_config_file
    from risutools.formats.reader import read_path
    from risutools.projection.notes import load_notes
    from risutools.replay.component import load_component
    from risutools.replay.config import read_replay_layer
    from risutools.replay.fixture import load_fixture

    gone = tmp_path / "gone.yaml"
    for reader in (load_config_file, read_replay_layer, load_fixture, load_component,
                   load_notes, read_path):
        with pytest.raises(RisuError) as ei:
            reader(gone)
        assert ei.value.code == "not-found", reader
