"""The error-code catalog (risutools.errors.CODES): every code raised is in it, each code is
used, and docs/errors.md's table is generated from it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from harness import ROOT

from risutools.commands.docs import ERRORS_PAGE, errors_table, render_errors_page
from risutools.errors import CODES, Code, ConfigError, RisuError

#: the constructors whose first argument is a code
RAISERS = {"RisuError", "FormatError", "DocumentError", "ConfigError", "ReplayError",
           "WriteConflict", "FileRefused"}


def raised_codes(source: str) -> tuple[set[str], list[int]]:
    """The codes a source raises (``Code.X`` symbols, by their names) and the lines where a
    constructor is given anything else as its code (a string literal, say)."""
    out, bad = set(), []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Call) and node.args):
            continue
        f = node.func
        name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
        if name not in RAISERS:
            continue
        first = node.args[0]
        if (isinstance(first, ast.Attribute) and isinstance(first.value, ast.Name)
                and first.value.id == "Code"):
            out.add(first.attr)
        elif isinstance(first, ast.Constant):
            bad.append(node.lineno)
    return out, bad


SYMBOLS = {name for name in vars(Code) if name.isupper()}


def test_every_code_raised_is_a_symbol_of_the_catalog() -> None:
    unknown, literal = {}, {}
    for path in sorted((ROOT / "risutools").rglob("*.py")):
        names, bad = raised_codes(path.read_text(encoding="utf-8"))
        rel = path.relative_to(ROOT).as_posix()
        if names - SYMBOLS:
            unknown[rel] = sorted(names - SYMBOLS)
        if bad and path.name != "errors.py":
            literal[rel] = bad
    assert unknown == {}
    assert literal == {}, "raise with Code.X, never a string literal"


def test_the_symbols_are_the_catalog() -> None:
    assert sorted(getattr(Code, n) for n in SYMBOLS) == sorted(CODES)
    assert all(getattr(Code, n) == n.lower().replace("_", "-") for n in SYMBOLS)


def test_every_catalog_code_is_raised_somewhere_in_the_code() -> None:
    text = "".join(p.read_text(encoding="utf-8") for p in (ROOT / "risutools").rglob("*.py")
                   if p.name != "errors.py")
    if "UsageError(" in text:  # (UsageError raises the usage code itself)
        text += "Code.USAGE"
    assert [n for n in sorted(SYMBOLS) if f"Code.{n}" not in text] == []


def test_the_scanner_sees_a_code() -> None:
    src = 'raise ConfigError(Code.NO_SUCH, "x")\nx = errors.FormatError("other", "y")\n'
    assert raised_codes(src) == ({"NO_SUCH"}, [2])


def test_the_docs_table_is_generated() -> None:
    page = (ROOT / ERRORS_PAGE).read_text(encoding="utf-8")
    assert render_errors_page(page) == page, "run `python -m risutools.commands.docs`"
    assert errors_table().count("\n| `") == len(CODES)
    with pytest.raises(ValueError, match="markers"):
        render_errors_page("no markers")


def test_one_line_and_with_path() -> None:
    e = ConfigError("config-bad-value", "max_context: must be an integer", where="config")
    assert e.one_line() == "config: config-bad-value: max_context: must be an integer"
    assert e.with_path("c.yaml").one_line().startswith("c.yaml: config: ")
    assert isinstance(e, RisuError) and e.with_path("other").path == "c.yaml"


def test_a_missing_path_is_not_found_in_every_reader(tmp_path: Path) -> None:
    from risutools.formats.reader import read_path
    from risutools.projection.notes import load_notes
    from risutools.replay.component import load_component
    from risutools.replay.fixture import load_fixture
    from risutools.settings.config import load_settings_file
    from risutools.settings.replay import read_replay_layer

    gone = tmp_path / "gone.yaml"
    for reader in (load_settings_file, read_replay_layer, load_fixture, load_component,
                   load_notes, read_path):
        with pytest.raises(RisuError) as ei:
            reader(gone)
        assert ei.value.code == "not-found", reader


def _every_error_class() -> list[type[RisuError]]:
    import risutools.cli  # (every command's module: every subclass defined)
    import risutools.settings.replay  # noqa: F401

    seen: list[type[RisuError]] = []
    todo: list[type[RisuError]] = [RisuError]
    while todo:
        cls = todo.pop()
        seen.append(cls)
        todo.extend(cls.__subclasses__())
    return seen


def test_every_error_travels_between_processes_whole() -> None:
    """A worker's error reaches the collecting process as it was raised (class, code, why,
    where, path and any field of its own), whatever its class's ``__init__`` asks."""
    import pickle

    classes = _every_error_class()
    assert {c.__name__ for c in classes} >= RAISERS | {"UsageError", "_Clash"}
    for cls in classes:
        err = cls.__new__(cls)
        Exception.__init__(err, "why it failed")
        err.__dict__.update(code=Code.NOT_A_FILE, why="why it failed", where="/a/0",
                            path="a.json", keys=frozenset({"k"}))
        back = pickle.loads(pickle.dumps(err))
        assert type(back) is cls and back.__dict__ == err.__dict__
        assert back.one_line() == err.one_line() == "a.json: /a/0: not-a-file: why it failed"
        assert back.args == ("why it failed",)
