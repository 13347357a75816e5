"""The results of ``validate`` / ``verify`` (and ``analyze``, whose result extends
:class:`Result`), apart from the code that fills them: a light module, so that a command
that only renders a result does not import the contract loaders and rules (MC001, the
unreadable path that makes a run exit 2, comes from the light
:mod:`risutools.contract.checks_load`).
:mod:`risutools.contract.validate` re-exports these names."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field, fields
from operator import attrgetter
from pathlib import Path
from typing import Any

from risutools.checks.registry import Check
from risutools.contract.checks_load import mc001
from risutools.findings import Finding, sorted_findings

#: a document's findings (:attr:`DocumentInfo.findings`)
_FINDINGS = attrgetter("findings")
#: a finding's severity
_SEVERITY = attrgetter("severity")


@dataclass(slots=True)
class DocumentInfo:
    """One validated document, with its own findings."""

    file: str
    line: int | None
    component_id: str | None
    component_version: str | None
    sha256: str | None  # canonical document hash (None if it cannot be computed)
    findings: list[Finding] = field(default_factory=list)
    #: the real file (``file`` is its display name, escaped: never opened); None for stdin;
    #: the text of the path named when it was that path's own (``loaders.given_path``)
    path: str | Path | None = None
    #: a candidate (``provenance.review_status``): the one status ``validate --fix`` edits
    candidate: bool = False


@dataclass(frozen=True)
class ReplayEvidence:
    """What a verified replay report says it replayed, to be replayed again (gate G6): the
    simulation, the configuration it ran with (as the report writes it), its fixture (name
    and digest) and where a file of that digest was found (None: not at hand), and what it
    concluded (its verdict, and each invariant's, by id)."""

    simulation: str
    config: dict[str, Any]
    fixture_name: str
    fixture_sha256: str
    fixture_path: str | None  # (text: what a review's worker sends back is plain values)
    verdict: str
    verdicts: tuple[tuple[str, str], ...]


def verdicts_of(invariants: list[dict[str, Any]]) -> tuple[tuple[str, str], ...]:
    """Each invariant's verdict by id, in id order (a report's ``invariants`` list)."""
    return tuple(sorted((str(i.get("id")), str(i.get("verdict"))) for i in invariants))


@dataclass(slots=True)
class Verification:
    """One digest reference checked by ``verify`` (MC202/MC203)."""

    file: str
    line: int | None
    component_id: str | None
    pointer: str
    source: str  # "risu:174678332 module.risum"
    status: str  # "verified" | "mismatch" | "not_at_hand"
    #: where it was found / why not (:attr:`detail`); None: no source store was given (the
    #: same words for every reference of the run, made when shown: a review of a catalog
    #: holds one verification a document)
    note: str | None
    #: a verified replay report's own verdict (``passed``, ``failed``, ``not-checked``);
    #: None for every other reference
    verdict: str | None = None
    #: a verified replay report's evidence, to replay it again (None for any other)
    evidence: ReplayEvidence | None = None

    def plain(self) -> tuple[Any, ...]:
        """Its fields as plain values, in order (its evidence a tuple too): what a review's
        worker sends back (marshal takes no dataclass)."""
        ev = self.evidence
        return (self.file, self.line, self.component_id, self.pointer, self.source,
                self.status, self.note, self.verdict,
                None if ev is None else tuple(getattr(ev, f.name) for f in fields(ev)))

    @classmethod
    def of_plain(cls, v: tuple[Any, ...]) -> Verification:
        """:meth:`plain` read back, the pointer kept once (``sys.intern``)."""
        return cls(v[0], v[1], v[2], sys.intern(v[3]), v[4], v[5], v[6], v[7],
                   None if v[8] is None else ReplayEvidence(*v[8]))

    @property
    def detail(self) -> str:
        """Where it was found, or why not."""
        return self.note if self.note is not None else f"{self.source}: {NO_STORE}"

    @property
    def unchecked(self) -> bool:
        """Left unchecked because no source store was given."""
        return self.note is None


@dataclass
class Result:
    """What ``validate_paths`` / ``verify_paths`` found; renderers read this."""

    command: str = "validate"
    documents: list[DocumentInfo] = field(default_factory=list)
    file_findings: list[Finding] = field(default_factory=list)  # MC000/MC001, catalog files
    files: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    #: a folder's links to a file it read already (``link -> file``), read once, as that file
    same: list[str] = field(default_factory=list)
    verifications: list[Verification] = field(default_factory=list)
    strict: bool = False  # warnings fail the run (``--strict``); renderers say so
    #: the checks the command reports, by id (the SARIF rule list; statistics' titles)
    checks: dict[str, Check] = field(default_factory=dict)

    #: the last :attr:`findings` and what it was made of (see there)
    _sorted: tuple[tuple[Any, ...], list[Finding]] | None = field(
        default=None, init=False, repr=False, compare=False)

    @property
    def findings(self) -> list[Finding]:
        """Every finding, sorted (a new list each time).  Made again only when the lists it
        is made of changed: findings are frozen and never replaced in place, so the lists'
        identities and lengths say it (the renderers of one run ask five times or more)."""
        lists = [*map(_FINDINGS, self.documents)]  # (the maps below run in C)
        made_of = (id(self.file_findings), len(self.file_findings), id(self.documents),
                   len(self.documents), *map(id, lists), *map(len, lists))
        if self._sorted is None or self._sorted[0] != made_of:
            out = list(self.file_findings)
            for d in self.documents:
                out.extend(d.findings)
            self._sorted = (made_of, sorted_findings(out))
        return list(self._sorted[1])

    def counts(self) -> dict[str, int]:
        severities = [*map(_SEVERITY, self.findings)]  # (the loops below run in C)
        return {
            "errors": severities.count("error"),
            "warnings": severities.count("warning"),
            "documents": len(self.documents),
            "files": len(self.files),
            "documents_with_errors": sum(
                "error" in map(_SEVERITY, d.findings) for d in self.documents),
        }

    def fails(self, finding: Finding) -> bool:
        """Whether ``finding`` fails the run (what exit 1 means): an error, or a warning
        with :attr:`strict` (the JUnit report counts these as failures)."""
        return finding.severity == "error" or (self.strict and finding.severity == "warning")

    def could_not_run(self) -> bool:
        return any(x.rule == mc001.id for x in self.file_findings)

    def exit_code(self, strict: bool | None = None) -> int:
        """0 no errors; 1 error findings (or warnings with ``strict``, default
        :attr:`strict`); 2 could not run."""
        if self.could_not_run():
            return 2
        f = self.findings
        if any(x.severity == "error" for x in f):
            return 1
        if (self.strict if strict is None else strict) and any(
                x.severity == "warning" for x in f):
            return 1
        return 0

    def unreadable(self) -> list[Finding]:
        """The paths that could not be read at all (MC001), in order."""
        return sorted_findings([x for x in self.file_findings if x.rule == mc001.id])

    def verdict(self) -> tuple[str, str]:
        """``("ok" | "failed", why)``: the word the summary line starts with, and what
        failed the run when the counts alone do not say it ("" otherwise)."""
        code = self.exit_code()
        if code == 0:
            return "ok", ""
        unread = len(self.unreadable())
        if code == 2:
            return "failed", f"; could not read {unread} file{'s' if unread != 1 else ''}"
        if not any(x.severity == "error" for x in self.findings):
            return "failed", "; --strict: warnings fail the run"
        return "failed", ""


NO_STORE = "no source store given (--sources or `sources:` in the config)"


def not_checked(result: Result) -> list[Verification]:
    """The source references left unchecked because no source store was given."""
    return [v for v in result.verifications if v.unchecked]


def no_store_note(result: Result) -> str | None:
    """One line for the whole run when sources were not checked (no store), else None."""
    away = not_checked(result)
    if not away:
        return None
    docs = len({(v.file, v.line) for v in away})
    return (f"sources not checked: {NO_STORE}; {len(away)} source digest(s) in {docs} "
            "document(s) not verified")
