"""The reporter table: every findings format, by name (``REPORTER_BY_NAME``).

Every command that reports findings (``validate``, ``verify``, ``analyze``) renders
through :func:`render` and takes its ``--format/-f`` choices from :data:`FORMATS`;
``review`` renders its findings through it too, beside its own text, JSON, Markdown
and HTML.  A reporter reads a :class:`~risutools.contract.validate.Result`
(``analyze`` hands in an ``AnalyzeResult``, a Result with the analyses attached);
``text`` and ``json`` of ``analyze`` show the analyser's facts as well.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from risutools.report.analysis import render_analysis_json, render_analysis_text
from risutools.report.concise import render_concise
from risutools.report.github import render_github
from risutools.report.json_out import render_json
from risutools.report.junit import render_junit
from risutools.report.sarif import render_sarif
from risutools.report.text import render_text

if TYPE_CHECKING:
    from risutools.commands.analyze import AnalyzeResult
    from risutools.contract.result import Result


@dataclass(frozen=True)
class Reporter:
    name: str
    help: str  # one line, for the docs and `--help`
    render: Callable[[Result, bool], str]  # (result, color) -> text


def _analyses(result: Result) -> object | None:
    return getattr(result, "analyses", None)


def _text(result: Result, color: bool) -> str:
    if _analyses(result) is not None:
        analysed = cast("AnalyzeResult", result)
        return render_analysis_text(analysed.path, analysed.analyses)

    return render_text(result, color=color)


def _concise(result: Result, color: bool) -> str:
    return render_concise(result)


def _json(result: Result, color: bool) -> str:
    if _analyses(result) is not None:
        analysed = cast("AnalyzeResult", result)
        return render_analysis_json(analysed.path, analysed.analyses)

    return render_json(result)


def _github(result: Result, color: bool) -> str:
    return render_github(result)


def _sarif(result: Result, color: bool) -> str:
    return render_sarif(result)


def _junit(result: Result, color: bool) -> str:
    return render_junit(result)


REPORTER_BY_NAME: dict[str, Reporter] = {r.name: r for r in (
    Reporter("text", "for people: findings grouped per file (analyze: facts too)", _text),
    Reporter("concise", "one `file:line:col: ID message` line per finding", _concise),
    Reporter("json", "one JSON object, keys sorted (analyze: the facts)", _json),
    Reporter("github", "GitHub Actions annotations (`::error file=...`)", _github),
    Reporter("sarif", "SARIF 2.1.0 for code scanning", _sarif),
    Reporter("junit", "JUnit XML, one test case per document or module", _junit),
)}
#: the ``--format/-f`` choices, in table order
FORMATS: tuple[str, ...] = tuple(REPORTER_BY_NAME)
FORMAT_HELP = " | ".join(FORMATS)


def render(name: str, result: Result, *, color: bool = False) -> str:
    """Render ``result`` in format ``name`` (one of :data:`FORMATS`)."""
    return REPORTER_BY_NAME[name].render(result, color)
