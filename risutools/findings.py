"""The finding: one thing a rule or the analyser says about a document or module.

Shared by the contract rules (MC100-MC600), the static-analysis findings and
the renderers in ``risutools.report``.  Findings sort deterministically.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, fields
from functools import lru_cache
from typing import Any, Literal

Severity = Literal["error", "warning", "info"]
SEVERITY_RANK: dict[str, int] = {"error": 0, "warning": 1, "info": 2}

#: at most this many findings of one rule are listed for one document; the rest are
#: counted in one more finding of that rule, at the document's line, which says how many
#: (a document of 800,000 unknown capabilities: 1,000 MC401 warnings listed and one that
#: says 799,000 more; ``contract.validate``).  So what one document adds to a run's memory
#: and output is bounded whatever it holds (docs/contract.md, Bounds), as the analyser
#: bounds a module's findings; the severity, and so the exit code, is the rule's.
MAX_LISTED = 1000
#: the longest pointer a finding shows: a longer one (a key of thousands of characters on
#: its way) is shown as that of its nearest container within it, the line too, so that a
#: rule's findings under one long key are not each a copy of it (:func:`shown_pointer`)
MAX_POINTER_SHOWN = 1024


@dataclass(frozen=True, slots=True)
class Finding:
    rule: str  # stable check id (risutools.checks), e.g. MC201, RA110, RV204
    severity: Severity
    message: str  # one sentence: what is wrong and what would fix it
    file: str | None = None  # the file the finding is in
    line: int | None = None  # 1-based line (NDJSON line, YAML line) when known
    pointer: str = ""  # JSON pointer inside the document ("" = the whole document)
    evidence: str = ""  # analysis: where in the module, e.g. "trigger[2].effect[0] line 41"
    #: the error code of a path that could not be read (MC001: ``not-found``, ``not-a-file``
    #: ...), as the one line on standard error says it; "" for every other finding
    code: str = ""

    def sort_key(self) -> tuple[Any, ...]:
        return (
            self.file or "",
            self.line or 0,
            in_number_order(self.pointer),
            SEVERITY_RANK.get(self.severity, 9),
            self.rule,
            in_number_order(self.evidence),
            self.message,
        )

    def to_dict(self) -> dict[str, Any]:
        """The fields that are set (not None, not ""), in their order (every field is a
        string, an integer or None: nothing to copy)."""
        return {k: v for k in _FIELDS if (v := getattr(self, k)) is not None and v != ""}


_DIGITS = re.compile(r"(\d+)")


@lru_cache(maxsize=4096)
def shown_pointer(pointer: str) -> str:
    """``pointer``, or when it is longer than :data:`MAX_POINTER_SHOWN` characters that of
    its nearest container within them (``""``, the document, at worst)."""
    if len(pointer) <= MAX_POINTER_SHOWN:
        return pointer
    cut = pointer.rfind("/", 0, MAX_POINTER_SHOWN + 1)
    return pointer[:cut] if cut > 0 else ""


def in_number_order(place: str) -> tuple[str | tuple[int, str], ...]:
    """A place (a JSON pointer, an analysis finding's evidence) as it sorts: each run of
    digits by its value, so ``/modules/2`` comes before ``/modules/10`` and ``trigger[2]``
    before ``trigger[10]`` (as text they would not).  A run sorts as its length, then its
    digits (the order of the numbers when they have no leading zeros, with no number made
    however many digits it has); text and runs alternate from text, so two keys compare
    part by part, text with text and run with run."""
    if not place:  # (a contract finding's evidence: what the split would give)
        return (place,)
    parts = _DIGITS.split(place)
    if len(parts) == 1:
        return (place,)
    return tuple((len(p), p) if i % 2 else p for i, p in enumerate(parts))


#: the names of a finding's fields, in order
_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(Finding))


def sorted_findings(findings: list[Finding]) -> list[Finding]:
    return sorted(findings, key=Finding.sort_key)


def not_listed_message(rule: str, more: int) -> str:
    """The message of the finding that counts ``more`` findings of ``rule`` past
    :data:`MAX_LISTED` in one document."""
    return (f"{more:,} more {rule} findings in this document are not listed (at most "
            f"{MAX_LISTED:,} of one rule are)")


def listed(findings: list[Finding], file: str | None, line: int | None) -> list[Finding]:
    """One document's ``findings`` with at most :data:`MAX_LISTED` of each rule (the first
    ones, in order) and, for a rule with more, one more finding of it (the severity of its
    first finding past the bound, at ``line``, no pointer) that counts the rest."""
    counts = Counter(f.rule for f in findings)
    if all(n <= MAX_LISTED for n in counts.values()):
        return findings
    out: list[Finding] = []
    seen: dict[str, int] = {}
    for f in findings:
        seen[f.rule] = k = seen.get(f.rule, 0) + 1
        if k <= MAX_LISTED:
            out.append(f)
        elif k == MAX_LISTED + 1:
            out.append(Finding(f.rule, f.severity,
                               not_listed_message(f.rule, counts[f.rule] - MAX_LISTED),
                               file=file, line=line))
    return out
