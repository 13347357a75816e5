"""Compare the analyser's facts with facts written by hand (bench/real_corpus_facts.yaml).

Used by ``bench/real_corpus.py``; kept apart so that tests can drive it with synthetic facts
(tests/test_real_corpus_bench.py), never with the corpus.

The facts file never holds a module's own strings: state keys, toggle keys and button values
are stored as ``digest(name)`` (a salted SHA-256 prefix, see ``digest``); RisuAI's own
vocabulary (hook ids, API names, entry point names, RA ids, lorebook indices) is in clear.
The analyser's names are digested the same way before they are compared.

Scoring, per component and fact type: expected E, found F, uncertain U (a fact the hand
reading could not settle: neither rewarded nor punished).  TP = |E & F|, FN = |E - F|,
FP = |F - E - U|.  A fact type listed under ``unscored`` for a component was not written down
by hand there and is left out of the figures; one listed under ``partial`` was written down
only in part (recall is measured against what is listed; false finds count only when listed
under ``absent``: names the reading showed are not facts, e.g. a local variable taken for a key).
Findings are scored over (component, RA id) pairs the same way; the false-alarm rate counts
reported findings (instances) whose RA id was not expected for that component.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

SALT = "risutools-facts:"
DIGEST_CHARS = 12

#: fact types compared, in the order of the table
FACT_TYPES = ("hooks", "entry_points", "buttons", "chat_read", "chat_write", "global_read",
              "toggles_declared", "privileged", "dynamic_code", "lorebook_code",
              "low_level_access")
#: fact types whose values are the module's own strings: stored and compared as digests
DIGESTED = frozenset({"buttons", "chat_read", "chat_write", "global_read", "toggles_declared"})
FINDINGS = "findings"


def normalize(fact_type: str, name: str) -> str:
    """The form a name is compared in.  A chat key read through getState/setState is the
    chat variable ``__<name>`` in RisuAI; both spellings compare equal."""
    if fact_type in ("chat_read", "chat_write") and name.startswith("__"):
        return name[2:]
    return name


def digest(name: str) -> str:
    return hashlib.sha256((SALT + name).encode("utf-8")).hexdigest()[:DIGEST_CHARS]


def encode(fact_type: str, name: Any) -> str:
    """A found or hand-written name in the form stored in the facts file."""
    text = normalize(fact_type, str(name))
    return digest(text) if fact_type in DIGESTED else text


@dataclass
class ComponentFacts:
    path: str
    member: str | None
    sha256: str  # a prefix of the file's SHA-256 (SOURCES.md gives 16 hex digits)
    facts: dict[str, set[str]] = field(default_factory=dict)
    uncertain: dict[str, set[str]] = field(default_factory=dict)
    unscored: set[str] = field(default_factory=set)
    partial: set[str] = field(default_factory=set)
    absent: dict[str, set[str]] = field(default_factory=dict)  # known non-facts

    @property
    def key(self) -> tuple[str, str | None]:
        return (self.path, self.member)


def _names(value: Any, where: str) -> set[str]:
    if value is None:
        return set()
    if not isinstance(value, list):
        raise ValueError(f"{where}: must be a list")
    return {str(v) for v in value}


def parse_facts(data: Mapping[str, Any]) -> list[ComponentFacts]:
    """Read the facts document (already loaded from YAML); values are used as stored."""
    if not isinstance(data, Mapping) or not isinstance(data.get("components", []), list):
        raise ValueError("facts: a mapping with a list 'components' is expected")
    if data.get("salt", SALT) != SALT:
        raise ValueError(f"facts salt {data.get('salt')!r} is not {SALT!r}")
    out: list[ComponentFacts] = []
    for i, c in enumerate(data.get("components") or []):
        where = f"components[{i}]"
        if not isinstance(c, Mapping) or "path" not in c:
            raise ValueError(f"{where}: a mapping with a 'path' is expected")
        cf = ComponentFacts(path=str(c["path"]), member=c.get("member"),
                            sha256=str(c.get("sha256", "")).lower())
        facts = c.get("facts") or {}
        for t in (*FACT_TYPES, FINDINGS):
            cf.facts[t] = _names(facts.get(t), f"{where}.facts.{t}")
        for kind in ("uncertain", "absent"):
            for t, v in (c.get(kind) or {}).items():
                if t not in (*FACT_TYPES, FINDINGS):
                    raise ValueError(f"{where}.{kind}: unknown fact type {t!r}")
                getattr(cf, kind)[t] = _names(v, f"{where}.{kind}.{t}")
        for kind in ("unscored", "partial"):
            for t in c.get(kind) or []:
                if t not in (*FACT_TYPES, FINDINGS):
                    raise ValueError(f"{where}.{kind}: unknown fact type {t!r}")
                getattr(cf, kind).add(t)
        out.append(cf)
    return out


def load_facts(path: Path) -> list[ComponentFacts]:
    """Read the facts file; a bad file is a ValueError naming it (never a traceback)."""
    try:
        with path.open(encoding="utf-8") as fh:
            return parse_facts(yaml.safe_load(fh) or {})
    except (OSError, UnicodeDecodeError, yaml.YAMLError, ValueError) as exc:
        raise ValueError(f"{path}: {exc}") from None


def found_facts(analysis: Any) -> dict[str, set[str]]:
    """The analyser's facts of one component, encoded like the facts file."""
    a = analysis
    raw: dict[str, Iterable[Any]] = {
        "hooks": (f.name for f in a.hooks),
        "entry_points": (f.name for f in a.entry_points),
        "buttons": (f.name for f in a.button_callbacks),
        "chat_read": (s.key for s in a.state if s.scope == "chat" and s.read_count),
        "chat_write": (s.key for s in a.state if s.scope == "chat" and s.write_count),
        "global_read": (s.key for s in a.state if s.scope == "global" and s.read_count),
        "toggles_declared": (t.key for t in a.toggles),
        "privileged": (f.name for f in a.privileged),
        "dynamic_code": (f.name for f in a.dynamic_code),
        "lorebook_code": (str(i) for i in a.lorebook_code),
        "low_level_access": ["yes"] if (a.low_level_access or a.low_level_triggers) else [],
    }
    out = {t: {encode(t, n) for n in names} for t, names in raw.items()}
    out[FINDINGS] = {f.rule for f in a.findings}
    return out


@dataclass
class Score:
    tp: int = 0
    fp: int = 0
    fn: int = 0

    def add(self, other: Score) -> None:
        self.tp += other.tp
        self.fp += other.fp
        self.fn += other.fn

    @property
    def precision(self) -> float | None:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else None

    @property
    def recall(self) -> float | None:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else None


@dataclass
class Diff:
    score: Score
    missed: list[str]  # expected, not found
    false: list[str]  # found, neither expected nor uncertain


def compare_sets(expected: set[str], found: set[str], uncertain: set[str],
                 partial: bool = False, absent: frozenset[str] | set[str] = frozenset()) -> Diff:
    """``partial``: only the ``absent`` names found count as false finds."""
    missed = sorted(expected - found)
    false = sorted((found & absent) - expected) if partial else sorted(
        found - expected - uncertain)
    return Diff(Score(tp=len(expected & found), fp=len(false), fn=len(missed)), missed, false)


@dataclass
class ComponentResult:
    key: tuple[str, str | None]
    diffs: dict[str, Diff]  # fact type (and "findings") -> diff; unscored types absent
    findings_reported: int = 0  # finding instances reported
    findings_false: int = 0  # of which: RA id not expected, not uncertain
    uncertain_listed: int = 0  # uncertain facts written down (scored types)
    uncertain_found: int = 0  # of which the analyser reports


def compare_component(cf: ComponentFacts, found: Mapping[str, set[str]],
                      finding_rules: Iterable[str] = ()) -> ComponentResult:
    """Compare one component; ``finding_rules`` lists the rule of every reported finding
    (instances, for the false-alarm rate)."""
    diffs: dict[str, Diff] = {}
    listed = reported = 0
    for t in (*FACT_TYPES, FINDINGS):
        if t in cf.unscored:
            continue
        unsure = cf.uncertain.get(t, set())
        listed += len(unsure)
        reported += len(unsure & set(found.get(t, set())))
        diffs[t] = compare_sets(cf.facts.get(t, set()), set(found.get(t, set())),
                                cf.uncertain.get(t, set()), partial=t in cf.partial,
                                absent=cf.absent.get(t, set()))
    rules = list(finding_rules)
    ok = cf.facts.get(FINDINGS, set()) | cf.uncertain.get(FINDINGS, set())
    return ComponentResult(cf.key, diffs, len(rules), sum(1 for r in rules if r not in ok),
                           listed, reported)


def totals(results: Iterable[ComponentResult]) -> dict[str, Score]:
    out = {t: Score() for t in (*FACT_TYPES, FINDINGS)}
    for r in results:
        for t, d in r.diffs.items():
            out[t].add(d.score)
    return out


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}"


def table(results: list[ComponentResult]) -> list[str]:
    """The per-fact-type table (Markdown), a total over the facts, and the findings lines."""
    tot = totals(results)
    lines = ["| fact type | TP | FP | FN | precision | recall |",
             "| --- | ---: | ---: | ---: | ---: | ---: |"]
    all_facts = Score()
    for t in FACT_TYPES:
        s = tot[t]
        all_facts.add(s)
        lines.append(f"| {t} | {s.tp} | {s.fp} | {s.fn} | {_fmt(s.precision)} | "
                     f"{_fmt(s.recall)} |")
    lines.append(f"| **all facts** | {all_facts.tp} | {all_facts.fp} | {all_facts.fn} | "
                 f"{_fmt(all_facts.precision)} | {_fmt(all_facts.recall)} |")
    s = tot[FINDINGS]
    lines.append(f"| findings (component, RA id) | {s.tp} | {s.fp} | {s.fn} | "
                 f"{_fmt(s.precision)} | {_fmt(s.recall)} |")
    reported = sum(r.findings_reported for r in results)
    false = sum(r.findings_false for r in results)
    rate = (f"1 in {reported / false:.1f}" if false else "none") if reported else "no findings"
    lines.append("")
    lines.append(f"uncertain (not scored): {sum(r.uncertain_found for r in results)} of "
                 f"{sum(r.uncertain_listed for r in results)} reported by the analyser")
    lines.append(f"false alarms: {false} of {reported} findings reported ({rate})")
    return lines


def disagreements(result: ComponentResult) -> list[str]:
    """One line per fact type where the analyser and the hand facts disagree."""
    out = []
    for t, d in result.diffs.items():
        if d.missed or d.false:
            parts = []
            if d.missed:
                parts.append("missed " + ", ".join(d.missed))
            if d.false:
                parts.append("false " + ", ".join(d.false))
            out.append(f"{t}: " + "; ".join(parts))
    return out
