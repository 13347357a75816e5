"""The house holds (docs/architecture.md), measured from the code's own imports, including
those inside functions:

- every module sits on a floor and imports only from floors below it (a package may import
  its own modules; the engines analysis, contract and replay do not import each other);
- no import circle;
- no risutools import inside a function, but the command line's one deferred import of the
  command it runs;
- no private name imported from another package;
- no file over 800 lines, no function over 60 lines, no cyclomatic complexity over 20;
- ``import risutools.cli`` loads no engine (start-up stays small).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest
from harness import PACKAGE, ROOT

MAX_FILE_LINES = 800
MAX_FUNCTION_LINES = 60
MAX_COMPLEXITY = 20

#: floor -> what lives there (a package folder, or a module of the ground)
FLOORS: dict[int, tuple[str, ...]] = {
    0: ("errors", "findings", "pathnames", "printable", "jsontypes", "canonical",
        "jsonlines", "jsonplaces", "resources", "safeio", "locking", "fsio", "yamlsafe",
        "yamlpatch", "targets",
        "values", "checks", "collector", "rowspool", "lastwords", "stdstreams", "workers",
        "datatables", "datatables_snapshot", "settings", "__init__"),
    1: ("formats",),
    2: ("analysis", "contract", "replay"),
    3: ("projection",),
    4: ("catalog",),
    5: ("commands",),
    6: ("report",),
    7: ("cli",),
    8: ("__main__",),
}
ENGINES = FLOORS[2]


def room(module: str) -> str:
    """``risutools.catalog.review`` -> ``catalog``; ``risutools.errors`` -> ``errors``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


FLOOR_OF = {name: floor for floor, names in FLOORS.items() for name in names}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def resolve(target: str, name: str | None = None) -> str | None:
    """The module an import names (``from risutools.x import y``: ``risutools.x.y`` when y is
    a module, else ``risutools.x``)."""
    if name is not None and f"{target}.{name}" in MODULES:
        return f"{target}.{name}"
    while target and target not in MODULES:
        target = target.rpartition(".")[0]
    return target or None


class Imports(ast.NodeVisitor):
    """Every risutools import of a module: (line, target module, imported name, whether it
    sits inside a function, whether only for type checking)."""

    def __init__(self) -> None:
        self.found: list[tuple[int, str, str, bool, bool]] = []
        self._function = 0
        self._typing = 0

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._function += 1
        self.generic_visit(node)
        self._function -= 1

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_If(self, node: ast.If) -> None:
        typing = isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"
        self._typing += typing
        self.generic_visit(node)
        self._typing -= typing

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.module and node.module.startswith("risutools") and not node.level:
            for alias in node.names:
                target = resolve(node.module, alias.name)
                if target is not None:
                    self.found.append((node.lineno, target, alias.name, self._function > 0,
                                       self._typing > 0))

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.name.startswith("risutools"):
                target = resolve(alias.name)
                if target is not None:
                    self.found.append((node.lineno, target, "", self._function > 0,
                                       self._typing > 0))


def imports() -> dict[str, list[tuple[int, str, str, bool, bool]]]:
    out = {}
    for name, path in MODULES.items():
        v = Imports()
        v.visit(ast.parse(path.read_text(encoding="utf-8")))
        out[name] = v.found
    return out


IMPORTS = imports()


def test_every_module_is_on_a_floor() -> None:
    assert sorted({room(m) for m in MODULES} - set(FLOOR_OF)) == []


def test_no_import_runs_up_a_floor_or_across_the_engines() -> None:
    wrong = []
    for m, found in IMPORTS.items():
        here, floor = room(m), FLOOR_OF[room(m)]
        for line, target, _, _, _ in found:
            there = room(target)
            if there == here:
                continue
            if FLOOR_OF[there] > floor or (FLOOR_OF[there] == floor and floor != 0):
                wrong.append(f"{m}:{line} -> {target}")
    assert wrong == []


def _circles(edges: dict[str, set[str]]) -> list[list[str]]:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def strong(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            strong(v)
    return out


def test_no_import_circle() -> None:
    edges: dict[str, set[str]] = defaultdict(set)
    for m, found in IMPORTS.items():
        edges[m].update(t for _, t, _, _, _ in found if t != m)
    assert _circles(edges) == []


def test_the_circle_finder_sees_a_circle() -> None:
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_hides_in_a_function() -> None:
    hidden = [f"{m}:{line} -> {t}" for m, found in IMPORTS.items()
              for line, t, _, inside, _ in found if inside]
    assert hidden == []
    dynamic = sorted({name for name, path in MODULES.items()
                      for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                      if isinstance(node, ast.Call) and _dynamic_import_of_ours(node)})
    assert dynamic == ["risutools.cli"]  # the one deferred import: the command that runs


def _dynamic_import_of_ours(call: ast.Call) -> bool:
    """``importlib.import_module(x)`` / ``__import__(x)`` of a risutools module, or of a name
    not written as a literal (a standard-library fallback such as ``tomllib`` is not ours)."""
    f = call.func
    name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
    if name not in ("import_module", "__import__") or not call.args:
        return False
    first = call.args[0]
    return not (isinstance(first, ast.Constant) and isinstance(first.value, str)
                and not first.value.startswith("risutools"))


def test_no_private_name_crosses_a_package() -> None:
    crossing = [f"{m}:{line} imports {name} from {t}" for m, found in IMPORTS.items()
                for line, t, name, _, _ in found
                if name.startswith("_") and not name.startswith("__") and room(t) != room(m)]
    assert crossing == []


def _functions(tree: ast.AST) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    return [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


def test_no_file_or_function_is_too_long() -> None:
    long_files, long_functions = [], []
    for name, path in MODULES.items():
        text = path.read_text(encoding="utf-8")
        if name.endswith(".datatables_snapshot") or name.endswith("checks.ids"):
            continue  # generated data tables
        if text.count("\n") > MAX_FILE_LINES:
            long_files.append(f"{name}: {text.count(chr(10))} lines")
        for fn in _functions(ast.parse(text)):
            length = (fn.end_lineno or fn.lineno) - fn.lineno + 1
            if length > MAX_FUNCTION_LINES:
                long_functions.append(f"{name}:{fn.lineno} {fn.name}: {length} lines")
    assert long_files == [] and long_functions == [], "split these along their seams"


def test_no_function_is_too_complex() -> None:
    radon = pytest.importorskip("radon.complexity")
    complex_blocks = []
    for name, path in MODULES.items():
        for block in radon.cc_visit(path.read_text(encoding="utf-8")):
            if block.complexity > MAX_COMPLEXITY:
                complex_blocks.append(f"{name}:{block.lineno} {block.name}: {block.complexity}")
    assert complex_blocks == []


def test_the_measures_see_what_they_measure() -> None:
    body = "".join(f"    x{i} = {i}\n" for i in range(MAX_FUNCTION_LINES))
    [fn] = _functions(ast.parse(f"def f() -> None:\n{body}"))
    assert (fn.end_lineno or 0) - fn.lineno + 1 == MAX_FUNCTION_LINES + 1
    v = Imports()
    v.visit(ast.parse("def f():\n    from risutools.errors import Code\n"
                      "if TYPE_CHECKING:\n    from risutools.catalog import review\n"))
    assert [(t, inside, typing) for _, t, _, inside, typing in v.found] == [
        ("risutools.errors", True, False), ("risutools.catalog.review", False, True)]
    radon = pytest.importorskip("radon.complexity")
    branches = "".join(f"    if x == {i}:\n        return {i}\n" for i in range(MAX_COMPLEXITY))
    [block] = radon.cc_visit(f"def g(x):\n{branches}    return -1\n")
    assert block.complexity == MAX_COMPLEXITY + 1


def test_the_command_line_starts_without_an_engine() -> None:
    """``import risutools.cli`` (every ``-h``, and the start of every command) loads the
    command line, the reporters and the ground: no engine, no command, no YAML parser."""
    code = ("import sys, risutools.cli; print(sorted(m for m in sys.modules if "
            "m.startswith(('risutools.', 'yaml', 'jsonschema', 'msgpack'))))")
    loaded = ast.literal_eval(subprocess.run([sys.executable, "-c", code], capture_output=True,
                                             text=True, check=True, cwd=ROOT).stdout.strip())
    heavy = [m for m in loaded if not m.startswith("risutools.")
             or room(m) in ("formats", "analysis", "replay", "projection", "catalog", "commands")
             or (room(m) == "contract" and m not in ("risutools.contract",
                                                     "risutools.contract.result",
                                                     "risutools.contract.checks_load"))]
    assert heavy == []


@pytest.mark.parametrize("command", ["validate", "verify", "ingest", "replay_synth"])
def test_a_command_that_replays_nothing_starts_without_the_replay_engine(command: str) -> None:
    """What a command that never replays loads of ``risutools.replay``: the names of a
    report's files (``replay/reportpaths.py``, what asks whether ``-o`` lands on one) and the
    fixture reader where the command writes fixtures, never the cutter, the checkers, the
    rows or the renderings (they were 28 modules, a tenth of a one-file ``validate``'s
    start-up, loaded through ``commands/outputs.py``)."""
    code = (f"import sys, risutools.cli, risutools.commands.{command}; print(sorted(m for m "
            "in sys.modules if m.startswith('risutools.replay.')))")
    loaded = ast.literal_eval(subprocess.run([sys.executable, "-c", code], capture_output=True,
                                             text=True, check=True, cwd=ROOT).stdout.strip())
    engine = {"risutools.replay.run", "risutools.replay.cutter", "risutools.replay.checker",
              "risutools.replay.mirror", "risutools.replay.spool", "risutools.replay.api",
              "risutools.replay.render_html", "risutools.replay.render_markdown"}
    assert "risutools.replay.reportpaths" in loaded
    assert engine.isdisjoint(loaded), sorted(engine & set(loaded))


def test_every_command_names_a_module_of_the_command_layer() -> None:
    from risutools import cli

    for name, module in cli.COMMANDS.items():
        path = ROOT / (module.replace(".", "/") + ".py")
        tree = ast.parse(path.read_text(encoding="utf-8"))
        defined = {n.name for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
        assert module.startswith("risutools.commands.") and {"Options", "run"} <= defined, name


@pytest.mark.parametrize("command", ["validate", "verify", "analyze", "review"])
def test_a_command_lists_every_check_of_its_families(command: str) -> None:
    """A command asks the registry for its families' checks after importing only its own
    engines: every check of those families must be among them (the SARIF rule list)."""
    code = (f"from risutools.commands import {command}; "
            f"from risutools.checks.registry import for_command; "
            f"print(sorted(for_command({command!r})))")
    listed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True, cwd=ROOT).stdout.strip()
    from risutools.commands.checks import for_command

    assert ast.literal_eval(listed) == sorted(for_command(command))
