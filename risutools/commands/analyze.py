"""``risutools analyze``: static facts and findings about the modules in Risu files (nothing
is executed); the findings graded by the settings (``rules:``, ``--select``/``--ignore``).

:class:`AnalyzeResult` is one file's analyses shaped as a findings result, which every
findings reporter renders (``text`` and ``json`` show the analyser's facts too).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import ClassVar

from risutools.analysis.analyzer import analyze
from risutools.analysis.model import Analysis
from risutools.canonical import prefixed
from risutools.checks.registry import RuleFilter, check_selection, for_command
from risutools.contract.readonce import ReadOnce
from risutools.contract.result import DocumentInfo, Result
from risutools.errors import Code, RisuError, UsageError
from risutools.findings import SEVERITY_RANK, Finding, sorted_findings
from risutools.formats.model import Module
from risutools.formats.reader import read_path
from risutools.pathnames import show_name
from risutools.settings.config import Settings, resolve_settings

FAIL_ON = ("error", "warning", "never")


@dataclass
class AnalyzeResult(Result):
    """The analyses of one file, shaped as a findings result (``command == "analyze"``).

    Each module is one entry of ``documents`` (``component_id`` is the module's name),
    its findings with ``file`` set to ``path``."""

    path: str = ""
    analyses: list[tuple[Module, Analysis]] = field(default_factory=list)
    fail_on: str = "warning"

    def fails(self, finding: Finding) -> bool:
        """A finding at or above ``--fail-on`` fails the run (exit 1)."""
        return self.fail_on != "never" and (
            SEVERITY_RANK.get(finding.severity, 9) <= SEVERITY_RANK[self.fail_on])


def analyze_path(path: str) -> list[tuple[Module, Analysis]]:
    """Read ``path`` (any supported container) and analyse every module in it."""
    return [(m, analyze(m)) for m in read_path(path, with_assets=False)]


def analyze_result(path: str, rule_filter: RuleFilter | None = None) -> AnalyzeResult:
    """``analyze_path`` as a result the reporters in ``risutools.report`` render
    (findings the filter drops are left out of every view)."""
    analyses = analyze_path(path)
    if rule_filter is not None:
        keep = rule_filter.keep
        analyses = [(m, replace(a, findings=[f for f in a.findings if keep(f.rule)]))
                    for m, a in analyses]
    shown = show_name(path)  # (a finding's file, as every findings reporter takes it)
    modules = [
        DocumentInfo(shown, None, a.name, None,
                     prefixed(m.source.sha256) if m.source is not None else None,
                     sorted_findings([replace(f, file=shown) for f in a.findings]))
        for m, a in analyses
    ]
    return AnalyzeResult(command="analyze", documents=modules, files=[path], path=path,
                         analyses=analyses)


def check_fail_on(fail_on: str) -> None:
    """A ConfigError (exit 2) unless ``fail_on`` is one of :data:`FAIL_ON`."""
    if fail_on not in FAIL_ON:
        raise UsageError("--fail-on", f"must be one of {', '.join(FAIL_ON)}, not {fail_on!r}")


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


def graded(result: AnalyzeResult, cfg: Settings) -> AnalyzeResult:
    """An analysis result as the settings report it (``--select``/``--ignore``, and
    ``rules:`` severities and ``off``), applied once, after the analysis."""
    result.analyses = [(m, replace(a, findings=cfg.apply(a.findings)))
                       for m, a in result.analyses]
    for d in result.documents:
        d.findings = sorted_findings(cfg.apply(d.findings))
    return result


@dataclass(frozen=True)
class Options:
    """What ``analyze`` was asked (the command line's values, checked)."""

    files: tuple[str, ...]
    fail_on: str = "warning"
    config_file: str | None = None
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        check_fail_on(self.fail_on)
        check_selection("analyze", self.select, self.ignore)


@dataclass
class Analyzed:
    """Every file's result, all of them merged (what the findings formats render), and
    the files that could not be read."""

    kind: ClassVar[str] = "analysis"
    results: list[AnalyzeResult]
    merged: AnalyzeResult
    refused: list[RisuError]
    fail_on: str
    given: int  # how many files were named (several: JSON is an array of per-file objects)

    def exit_code(self) -> int:
        """2 when a file could not be read; else 1 when a finding reaches ``--fail-on``."""
        if self.refused:
            return 2
        return exit_code([a for _, a in self.merged.analyses], self.fail_on)


def run(opts: Options) -> Analyzed:
    cfg = resolve_settings(opts.config_file, opts.files, select=opts.select, ignore=opts.ignore)
    results: list[AnalyzeResult] = []
    refused: list[RisuError] = []
    once = ReadOnce()  # (a file named twice is analysed and reported once, where named first)
    for file in opts.files:
        if not once.first(file):
            continue
        try:
            results.append(graded(analyze_result(file), cfg))
        except RisuError as exc:
            refused.append(exc.with_path(file) if exc.path is None else exc)
        except MemoryError:  # (one file past memory: said, and the others go on)
            refused.append(RisuError(Code.TOO_LARGE, "not enough memory to read and analyse "
                                     "this file", path=file))
    merged = AnalyzeResult(command="analyze", path=", ".join(r.path for r in results),
                           fail_on=opts.fail_on)
    merged.checks = for_command("analyze")
    for r in results:
        r.checks = merged.checks
    for r in results:
        merged.documents.extend(r.documents)
        merged.files.extend(r.files)
        merged.analyses.extend(r.analyses)
    return Analyzed(results, merged, refused, opts.fail_on, len(opts.files))
