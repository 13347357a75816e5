"""The code reads one step at a time: no function in ``risutools/`` is longer than
:data:`MAX_FUNCTION_LINES` (issue 9, item 7).  A function that grows past it is split
along its seams (one section, check or step per function), not exempted here."""

from __future__ import annotations

import ast

from harness import PACKAGE

MAX_FUNCTION_LINES = 100


def long_functions(source: str, limit: int) -> list[tuple[str, int, int]]:
    """(name, first line, length) of every function or method over ``limit`` lines,
    decorators not counted, nested functions counted in their parent too."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            if length > limit:
                out.append((node.name, node.lineno, length))
    return out


def test_no_function_is_longer_than_a_screenful() -> None:
    files = sorted(PACKAGE.rglob("*.py"))
    assert len(files) > 50  # the package was found
    found = [f"{p.relative_to(PACKAGE.parent)}:{line}: {name} is {n} lines"
             for p in files for name, line, n in long_functions(p.read_text("utf-8"),
                                                                 MAX_FUNCTION_LINES)]
    assert found == [], "split these along their seams:\n" + "\n".join(found)


def test_the_measure_sees_a_long_function() -> None:
    body = "".join(f"    x{i} = {i}\n" for i in range(MAX_FUNCTION_LINES))
    src = f"class C:\n    @staticmethod\n    def f() -> None:\n{body.replace('    ', '        ')}"
    assert long_functions(src, MAX_FUNCTION_LINES) == [("f", 3, MAX_FUNCTION_LINES + 1)]
    assert long_functions("def g() -> None:\n    pass\n", MAX_FUNCTION_LINES) == []
