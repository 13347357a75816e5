"""JUnit XML: one ``<testsuite>`` per file, one ``<testcase>`` per document.

A document with findings that fail the run (what exit 1 means: errors; warnings too with
``--strict``, or at ``analyze --fail-on warning``) is a ``<failure>`` (those findings in the
body); other findings go to ``<system-out>``; a file that could not be loaded is an
``<error>`` testcase named ``load``.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterator
from typing import TYPE_CHECKING

from risutools.printable import text_value

if TYPE_CHECKING:
    from risutools.contract.result import DocumentInfo, Result
    from risutools.findings import Finding


def _x(s: str) -> str:
    """One line of text XML 1.0 can hold and a person can read in a CI page: every
    control, format character and lone surrogate shown escaped
    (:func:`risutools.printable.text_value`), so no value adds a line or reorders one."""
    return text_value(s)


def _line(f: Finding) -> str:
    where = f"line {f.line} " if f.line else ""
    at = f.pointer or f.evidence  # the analyser's findings carry evidence instead
    ptr = f"{at} " if at else ""
    return _x(f"{f.rule} {f.severity} {where}{ptr}{f.message}")


def _load_case(suite: ET.Element, file: str, loads: list[Finding]) -> int:
    """The ``load`` test case of a file that could not be read or parsed (1 error)."""
    case = ET.SubElement(suite, "testcase", {"classname": _x(file), "name": "load"})
    err = ET.SubElement(case, "error", {"type": loads[0].rule, "message": _x(loads[0].message)})
    err.text = "\n".join(_line(f) for f in loads)
    return 1


def _document_case(suite: ET.Element, file: str, d: DocumentInfo, several: bool,
                   result: Result) -> int:
    """One document's test case: a failure with every finding that fails the run, the
    others on system-out; returns the failures (0 or 1)."""
    name = f"{d.component_id or '(no component_id)'}"
    if d.component_version:
        name += f"@{d.component_version}"
    if d.line and several:
        name += f" (line {d.line})"
    case = ET.SubElement(suite, "testcase", {"classname": _x(file), "name": _x(name)})
    errs = [f for f in d.findings if result.fails(f)]
    warns = [f for f in d.findings if not result.fails(f)]
    if errs:
        n = sum(1 for f in errs if f.severity == "error")
        counted = ", ".join(f"{k} {what}(s)" for k, what in ((n, "error"), (len(errs) - n,
                                                                           "warning")) if k)
        fail = ET.SubElement(case, "failure", {
            "type": errs[0].rule,
            "message": _x(f"{counted}: {errs[0].rule} {errs[0].message}")})
        fail.text = "\n".join(_line(f) for f in errs)
    if warns:
        out = ET.SubElement(case, "system-out")
        out.text = "\n".join(_line(f) for f in warns)
    return 1 if errs else 0


def _suite(root: ET.Element, file: str, docs: list[DocumentInfo], loads: list[Finding],
           result: Result) -> tuple[int, int, int]:
    """One file's test suite (its documents and load findings); returns (tests, failures,
    errors)."""
    suite = ET.SubElement(root, "testsuite", {"name": _x(file)})
    s_err = _load_case(suite, file, loads) if loads else 0
    s_fail = sum(_document_case(suite, file, d, len(docs) > 1, result) for d in docs)
    n = len(docs) + (1 if loads else 0)
    suite.set("tests", str(n))
    suite.set("failures", str(s_fail))
    suite.set("errors", str(s_err))
    return n, s_fail, s_err


def render_junit(result: Result) -> str:
    """One ``<testsuite>`` per file, one ``<testcase>`` per document (a ``load`` case with
    ``<error>`` for a file that could not be read): :func:`junit_pieces` joined."""
    return "".join(junit_pieces(result))


#: characters of test suites gathered into one piece
_PIECE = 1 << 20


def junit_pieces(result: Result) -> Iterator[str]:
    """The XML in pieces, written as they are made: ``ET.indent`` and ``ET.tostring`` of
    the whole ``<testsuites>`` tree, a ``<testsuite>`` at a time (each made, indented at
    its level, written and let go; the totals the root carries counted first, without
    making any).  Documents and findings are grouped by file in one pass each (linear in
    the result, whatever the number of files)."""
    docs: dict[str, list[DocumentInfo]] = {}
    loads: dict[str, list[Finding]] = {}
    for d in result.documents:
        docs.setdefault(d.file, []).append(d)
    for f in result.file_findings:
        loads.setdefault(f.file or "", []).append(f)
    files = sorted(docs.keys() | loads.keys())
    root = ET.Element("testsuites", {"name": f"risutools {result.command}"})
    total = sum(len(docs.get(f, [])) + (1 if f in loads else 0) for f in files)
    failures = sum(1 for ds in docs.values() for d in ds
                   if any(result.fails(x) for x in d.findings))
    root.set("tests", str(total))
    root.set("failures", str(failures))
    root.set("errors", str(sum(1 for f in files if f in loads)))
    head = '<?xml version="1.0" encoding="UTF-8"?>\n'
    if not files:
        ET.indent(root)
        yield head + ET.tostring(root, encoding="unicode") + "\n"
        return
    ET.SubElement(root, "_")  # (the root's start tag, as the whole tree writes it)
    start = ET.tostring(root, encoding="unicode")
    batch = [head, start[:start.index("<_")], "\n  "]
    size = 0
    for k, file in enumerate(files):
        holder = ET.Element("testsuites")
        _suite(holder, file, docs.get(file, []), loads.get(file, []), result)
        suite = holder[0]
        ET.indent(suite, level=1)
        suite.tail = "\n  " if k < len(files) - 1 else "\n"
        text = ET.tostring(suite, encoding="unicode")
        batch.append(text)
        size += len(text)
        if size >= _PIECE:
            yield "".join(batch)
            batch, size = [], 0
    yield "".join([*batch, "</testsuites>\n"])
