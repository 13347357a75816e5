"""The reporter table: for every kind of result that is written in a chosen format, its
reporters by name (:data:`REPORTERS`); a command's ``--format/-f`` choices come from it
(:func:`formats`).

``findings`` (``validate``, ``verify``) and ``analysis`` (``analyze``, whose ``text`` and
``json`` show the analyser's facts as well) have the findings formats; ``review`` has its
own text, JSON, Markdown and HTML beside its findings in the other findings formats.  A
reporter is ``render(result, color) -> text``; ``color`` is honoured by the formats for
people (text, concise) and ignored by the formats for machines.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from risutools.report.analysis import render_analysis_json, render_analysis_text
from risutools.report.concise import concise_pieces, render_concise
from risutools.report.github import github_pieces, render_github
from risutools.report.json_out import render_json
from risutools.report.junit import junit_pieces, render_junit
from risutools.report.review_html import render_review_html, review_html_pieces
from risutools.report.review_text import (
    render_review_json,
    render_review_markdown,
    render_review_text,
    review_json_pieces,
    review_markdown_pieces,
    review_text_pieces,
)
from risutools.report.sarif import render_sarif, sarif_pieces
from risutools.report.text import render_text

if TYPE_CHECKING:
    from risutools.commands.analyze import AnalyzeResult
    from risutools.contract.result import Result


@dataclass(frozen=True)
class Reporter:
    name: str
    help: str  # one line, for the docs and `--help`
    render: Callable[[Any, bool], str]  # (result, color) -> text
    #: (result, color) -> the text in pieces, written as they come (a report too long to
    #: hold whole); None: the text is rendered whole
    pieces: Callable[[Any, bool], Iterable[str | bytes]] | None = None
    #: whether it shows each document's canonical hash (``validate`` rendering in another
    #: findings format does not compute them)
    shows_hashes: bool = False


def _analyses(result: Result) -> object | None:
    return getattr(result, "analyses", None)


def _text(result: Result, color: bool) -> str:
    if _analyses(result) is not None:
        analysed = cast("AnalyzeResult", result)
        return render_analysis_text(analysed.path, analysed.analyses, color=color)

    return render_text(result, color=color)


def _concise(result: Result, color: bool) -> str:
    return render_concise(result, color)


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


#: the findings formats, by name (``validate``, ``verify``, ``analyze``)
REPORTER_BY_NAME: dict[str, Reporter] = {r.name: r for r in (
    Reporter("text", "for people: findings grouped per file (analyze: facts too)", _text),
    Reporter("concise", "one `file:line:col: ID message` line per finding", _concise,
             lambda result, color: concise_pieces(result, color)),
    Reporter("json", "one JSON object, keys sorted (analyze: the facts)", _json,
             shows_hashes=True),
    Reporter("github", "GitHub Actions annotations (`::error file=...`)", _github,
             lambda result, color: github_pieces(result)),
    Reporter("sarif", "SARIF 2.1.0 for code scanning", _sarif,
             lambda result, color: sarif_pieces(result)),
    Reporter("junit", "JUnit XML, one test case per document or module", _junit,
             lambda result, color: junit_pieces(result)),
)}


def _review_findings(r: Reporter) -> Reporter:
    """A findings format of the review: its findings (``Review.result``) rendered so."""
    pieces = r.pieces
    return Reporter(r.name, r.help, lambda review, color: r.render(review.result, color),
                    None if pieces is None else
                    lambda review, color: pieces(review.result, color))


#: the review's formats: its own (text, JSON, Markdown, HTML) in the places of the findings
#: formats of those names, its findings in the others
REVIEW_REPORTERS: dict[str, Reporter] = {
    **{name: _review_findings(r) for name, r in REPORTER_BY_NAME.items()},
    "text": Reporter("text", "for people: counts, findings, the promotion board",
                     render_review_text, review_text_pieces),
    "json": Reporter("json", "the whole review as one JSON object",
                     lambda review, color: render_review_json(review),
                     lambda review, color: review_json_pieces(review)),
    "html": Reporter("html", "a self-contained page for people",
                     lambda review, color: render_review_html(review),
                     lambda review, color: review_html_pieces(review)),
    "markdown": Reporter("markdown", "the review as Markdown",
                         lambda review, color: render_review_markdown(review),
                         lambda review, color: review_markdown_pieces(review)),
}

#: every kind of result written in a chosen format, and its reporters
REPORTERS: dict[str, dict[str, Reporter]] = {
    "findings": REPORTER_BY_NAME,
    "analysis": REPORTER_BY_NAME,
    "review": REVIEW_REPORTERS,
}


def formats(kind: str) -> tuple[str, ...]:
    """The ``--format/-f`` choices of a result kind, in table order."""
    return tuple(REPORTERS[kind])


def shows_hashes(name: str, kind: str = "findings") -> bool:
    """Whether format ``name`` (of ``kind``) shows each document's canonical hash."""
    return REPORTERS[kind][name].shows_hashes


#: the findings formats' ``--format/-f`` choices, in table order
FORMATS: tuple[str, ...] = formats("findings")
FORMAT_HELP = " | ".join(FORMATS)


def render(name: str, result: Any, *, color: bool = False, kind: str = "findings") -> str:
    """Render ``result`` (of ``kind``) in format ``name`` (one of :func:`formats`)."""
    return REPORTERS[kind][name].render(result, color)


def render_pieces(name: str, result: Any, *, color: bool = False,
                  kind: str = "findings") -> str | Iterable[str | bytes]:
    """:func:`render`, in pieces where the format writes them as they come."""
    reporter = REPORTERS[kind][name]
    if reporter.pieces is not None:
        return reporter.pieces(result, color)
    return reporter.render(result, color)
