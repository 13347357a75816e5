"""GitHub Actions workflow commands: ``::error file=...,line=...,title=MC201::message``.

Escaping follows the runner's rules: in the message ``%``, ``\\r``, ``\\n`` become
``%25``, ``%0D``, ``%0A``; in property values ``:`` and ``,`` also become
``%3A`` and ``%2C``, so no value can start a workflow command of its own.  Before that
every other control or format character (ESC, a bidi override ...) from a catalog value is
shown escaped (:func:`risutools.printable.text_value`), so none paints or reorders the log;
a message is one line, its line breaks shown as ``\\n`` as in the text report.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import TYPE_CHECKING

from risutools.printable import text_value
from risutools.report._common import summary_line, text_pieces

if TYPE_CHECKING:
    from risutools.contract.validate import Result
    from risutools.findings import Finding


def _visible(s: str) -> str:
    """``s`` with every control and format character but CR and LF shown escaped (those
    two are the runner's to escape), and a ``##[`` as :func:`text_value` shows it."""
    if s.isprintable():
        return text_value(s)
    return "\r".join("\n".join(text_value(part) for part in line.split("\n"))
                     for line in s.split("\r"))


def escape_data(s: str) -> str:
    return _visible(s).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(s: str) -> str:
    return escape_data(s).replace(":", "%3A").replace(",", "%2C")


def annotation(f: Finding) -> str:
    level = {"error": "error", "warning": "warning"}.get(f.severity, "notice")
    props = []
    if f.file:
        props.append(f"file={escape_property(f.file)}")
    if f.line:
        props.append(f"line={f.line}")
    props.append(f"title={escape_property(f.rule)}")
    where = f.pointer or f.evidence  # the analyser's findings carry evidence instead
    msg = f.message + (f" (at {where})" if where else "")
    # (a message is one line, as in every text report: a line break a value carries is
    # shown as \n, never one the runner makes of %0A, which would forge a line of it)
    return f"::{level} {','.join(props)}::{escape_data(text_value(msg))}"


def render_github(result: Result) -> str:
    return "".join(github_pieces(result))


def github_pieces(result: Result) -> Iterator[str]:
    """The annotations in pieces, written as they are made, then the summary line."""
    lines = (annotation(f) for f in result.findings)
    return text_pieces(itertools.chain(lines, (summary_line(result),)))
