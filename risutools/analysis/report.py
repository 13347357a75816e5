"""Run the analyser on a file (``analyze_path``) and decide the exit code.

The renderers (text with the facts, JSON, and every findings format) live in
``risutools.report``; :class:`AnalyzeResult` is what they read.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from risutools.analysis.analyzer import analyze
from risutools.analysis.model import Analysis
from risutools.canonical import prefixed
from risutools.checks.registry import RuleFilter
from risutools.contract.result import DocumentInfo, Result
from risutools.errors import Code, ConfigError
from risutools.findings import SEVERITY_RANK, sorted_findings
from risutools.formats.model import Module

FAIL_ON = ("error", "warning", "never")


@dataclass
class AnalyzeResult(Result):
    """The analyses of one file, shaped as a findings result (``command == "analyze"``).

    Each module is one entry of ``documents`` (``component_id`` is the module's name),
    its findings with ``file`` set to ``path``."""

    path: str = ""
    analyses: list[tuple[Module, Analysis]] = field(default_factory=list)


def analyze_path(path: str) -> list[tuple[Module, Analysis]]:
    """Read ``path`` (any supported container) and analyse every module in it."""
    from risutools.formats import read_path

    return [(m, analyze(m)) for m in read_path(path, with_assets=False)]


def analyze_result(path: str, rule_filter: RuleFilter | None = None) -> AnalyzeResult:
    """``analyze_path`` as a result the reporters in ``risutools.report`` render
    (findings the filter drops are left out of every view)."""
    analyses = analyze_path(path)
    if rule_filter is not None:
        keep = rule_filter.keep
        analyses = [(m, replace(a, findings=[f for f in a.findings if keep(f.rule)]))
                    for m, a in analyses]
    modules = [
        DocumentInfo(path, None, a.name, None,
                     prefixed(m.source.sha256) if m.source is not None else None,
                     sorted_findings([replace(f, file=path) for f in a.findings]))
        for m, a in analyses
    ]
    return AnalyzeResult(command="analyze", documents=modules, files=[path], path=path,
                         analyses=analyses)


def check_fail_on(fail_on: str) -> None:
    """A ConfigError (exit 2) unless ``fail_on`` is one of :data:`FAIL_ON`."""
    if fail_on not in FAIL_ON:
        raise ConfigError(Code.BAD_OPTION, f"must be one of {', '.join(FAIL_ON)}, not {fail_on!r}",
                          where="--fail-on")


def exit_code(analyses: list[Analysis], fail_on: str) -> int:
    """1 when a finding at or above ``fail_on`` severity exists, else 0."""
    check_fail_on(fail_on)
    if fail_on == "never":
        return 0
    limit = SEVERITY_RANK[fail_on]
    for a in analyses:
        if any(SEVERITY_RANK.get(f.severity, 9) <= limit for f in a.findings):
            return 1
    return 0
