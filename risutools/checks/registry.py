"""The registry: every check the toolkit reports, declared once, with its code.

A :class:`Check` has an id (``MC201``, ``RA101``, ``R3``), a default severity, a
scope (where it runs), a short title, and three sentences of documentation:
what it checks (``summary``), why it matters (``why``) and how to fix a finding
(``fix``).  A check is declared where its code lives, on the floor of the engine that runs
it (the contract's rules, the analyser, the replay, the catalog's gates and review): the
engine imports its checks, so :func:`registered_checks` holds those of every engine
imported so far.  This module imports none of them (it is the ground floor): what must
know every id without importing every engine -- the configuration's ``rules:``,
``--select``/``--ignore`` -- reads :data:`risutools.checks.ids.SCOPE_OF`, an index of
every id and its scope generated from the checks themselves
(``python -m risutools.commands.docs``; a test fails when it is stale).
``risutools.commands.checks`` imports every engine's checks (``risutools rule``, the docs'
tables, the SARIF rule list).  Cases (firing and quiet) are data files in
``risutools/checks/cases/<ID>.yaml``, run by one generic test
(``tests/test_checks_cases.py``).
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from risutools.checks.ids import GUARDS, NEEDS, SCOPE_OF
from risutools.errors import Code, ConfigError, UsageError
from risutools.findings import Severity
from risutools.printable import quoted

#: family -> the docs page whose table lists it (``python -m risutools.commands.docs``)
DOC_PAGES = {"MC": "docs/contract.md", "RA": "docs/analysis.md", "R": "docs/replay.md",
             "M": "docs/replay.md", "G": "docs/catalog.md", "RV": "docs/catalog.md"}
#: command -> the families it reports (the SARIF rule list of its reports)
FAMILIES_BY_COMMAND = {"validate": ("MC",), "verify": ("MC",), "analyze": ("RA",),
                       "review": ("MC", "RV")}
#: command -> the families it reports and the scopes of the checks it runs: what its
#: ``--select`` and ``--ignore`` may name (``validate`` lists verify's digest checks in its
#: SARIF rules but never runs them; ``verify`` adds the document checks it runs itself)
REPORTS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "validate": (("MC",), ("load", "document", "catalog")),
    "verify": (("MC",), ("load", "verify")),
    "analyze": (("RA",), ("module",)), "ingest": (("RA",), ("module",)),
    "project": (("RA",), ("module",)),
    "review": (("MC", "RV"), ("load", "document", "catalog", "verify")),
}
#: where a check runs: ``load`` (reading a file), ``document`` (one document),
#: ``catalog`` (documents together), ``verify`` (files at hand), ``module`` (the
#: static analyser), ``replay`` (a reference simulation), ``promotion`` (gates)
SCOPES = ("load", "document", "catalog", "verify", "module", "replay", "promotion")
SEVERITIES: tuple[Severity, ...] = ("error", "warning", "info")
ID_RE = re.compile(r"[A-Z]{1,3}[0-9]{1,3}")
@dataclass(frozen=True, eq=False)
class Check:
    """One check: its id, default severity, scope and documentation (and code, if any)."""

    id: str
    severity: Severity
    scope: str
    title: str  # short kebab-case name (SARIF ``name``)
    summary: str  # what it checks (one sentence)
    why: str  # why it matters (one or two sentences)
    fix: str  # how to fix a finding (one sentence)
    run: Callable[..., Any] | None = None  # the check itself, when it is one function
    #: ``fixer(doc)`` yields ``(pointer, new string value)``: the exact fix of a finding
    #: (``validate --fix``, ``risutools.contract.fix``); None: not fixable
    fixer: Callable[[Any], Iterator[tuple[str, str]]] | None = None
    #: the statuses a promotion gate guards (``promote --to`` / ``activate`` targets)
    targets: tuple[str, ...] = ()
    #: the short line a report prints beside the check's verdict (replay invariants)
    report_text: str = ""
    #: it guards the lifecycle (a status, runtime state or publishing the log and its
    #: approvals back): a configuration, which a pull request edits too, cannot grade it
    guards: bool = False
    #: the checks whose findings it relies on (MC201 reads only digests MC200 passed): a
    #: filter that keeps it keeps them (:meth:`RuleFilter.keep`), so it never passes blind
    needs: tuple[str, ...] = ()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.run is None:
            raise TypeError(f"check {self.id} has no function of its own")
        return self.run(*args, **kwargs)

    def __str__(self) -> str:
        return self.id

    @property
    def fixable(self) -> bool:
        """Whether ``validate --fix`` can fix its findings exactly."""
        return self.fixer is not None

    @property
    def family(self) -> str:
        """The id's letters (``MC``, ``RA``, ``R``)."""
        return self.id.rstrip("0123456789")


REGISTRY: dict[str, Check] = {}
#: :func:`registered_checks`'s sorted view, kept while the registry is unchanged (a
#: declaration drops it; its size guards against a test that edits ``REGISTRY`` directly)
_SORTED: tuple[int, dict[str, Check]] | None = None


def _register(c: Check) -> Check:
    if not ID_RE.fullmatch(c.id):
        raise ValueError(f"bad check id {c.id!r}")
    if c.id in REGISTRY:
        raise ValueError(f"check {c.id} declared twice")
    if c.severity not in SEVERITIES or c.scope not in SCOPES:
        raise ValueError(f"check {c.id}: bad severity {c.severity!r} or scope {c.scope!r}")
    for part, text in (("summary", c.summary), ("why", c.why), ("fix", c.fix)):
        if not text.strip() or "\n\n" in text:
            raise ValueError(f"check {c.id}: {part} must be one paragraph")
    global _SORTED
    REGISTRY[c.id] = c
    _SORTED = None
    return c


def split_doc(doc: str) -> tuple[str, str, str]:
    """A check's docstring -> (summary, why, fix).

    The first paragraph is the summary; the paragraphs starting ``Why:`` and
    ``Fix:`` give the rest (lines joined with single spaces)."""
    paras = [" ".join(p.split()) for p in inspect.cleandoc(doc).split("\n\n") if p.strip()]
    summary = paras[0] if paras else ""
    why = next((p[4:].strip() for p in paras if p.startswith("Why:")), "")
    fix = next((p[4:].strip() for p in paras if p.startswith("Fix:")), "")
    return summary, why, fix


def check(id: str, severity: Severity, scope: str, title: str, *,
          fixer: Callable[[Any], Iterator[tuple[str, str]]] | None = None,
          targets: tuple[str, ...] = (),
          report_text: str = "", guards: bool = False,
          needs: tuple[str, ...] = ()) -> Callable[[Callable[..., Any]], Check]:
    """Decorator: the function is the check; its docstring is its documentation.
    ``fixer`` (optional) makes it fixable (see :attr:`Check.fixer`); ``targets``: the
    statuses a gate guards (see :attr:`Check.targets`); ``report_text`` (optional) is the
    line a report prints beside its verdict (:attr:`Check.report_text`); ``guards``: it
    guards the lifecycle (:attr:`Check.guards`); ``needs``: the checks it relies on
    (:attr:`Check.needs`)."""

    def wrap(fn: Callable[..., Any]) -> Check:
        summary, why, fix = split_doc(fn.__doc__ or "")
        return _register(Check(id, severity, scope, title, summary, why, fix, fn, fixer,
                               targets, report_text, guards, needs))

    return wrap


def registered_checks() -> dict[str, Check]:
    """Every check registered so far (those of the engines imported), sorted by id (family
    first, then number): a new dict each call (the sort is done once while the registry
    stays the same)."""
    global _SORTED
    if _SORTED is None or _SORTED[0] != len(REGISTRY):
        _SORTED = (len(REGISTRY), {c.id: c for c in sorted(REGISTRY.values(), key=sort_key)})
    return dict(_SORTED[1])


def known_ids() -> dict[str, str]:
    """Every check id of the toolkit -> its scope, sorted by id, whichever engines are
    imported (the generated index :data:`risutools.checks.ids.SCOPE_OF`)."""
    return SCOPE_OF


def guard_ids() -> frozenset[str]:
    """The ids of the checks that guard the lifecycle (:attr:`Check.guards`; the generated
    index :data:`risutools.checks.ids.GUARDS`): no configuration grades them."""
    return GUARDS


def needed_by() -> dict[str, tuple[str, ...]]:
    """Each check another needs -> the checks that need it (the generated index
    :data:`risutools.checks.ids.NEEDS` turned round)."""
    out: dict[str, tuple[str, ...]] = {}
    for cid, needs in NEEDS.items():
        for need in needs:
            out[need] = (*out.get(need, ()), cid)
    return out


def sort_key(c: Check | str) -> tuple[str, int]:
    cid = c if isinstance(c, str) else c.id
    fam = cid.rstrip("0123456789")
    return (fam, int(cid[len(fam):] or 0))


def for_command(command: str) -> dict[str, Check]:
    """The registered checks a command reports, by id (the families of
    :data:`FAMILIES_BY_COMMAND`; complete once the command's engines are imported)."""
    fams = FAMILIES_BY_COMMAND.get(command, ())
    return {c.id: c for c in registered_checks().values() if c.family in fams}


def get(id: str) -> Check | None:
    """A registered check by id (None when it is not, or its engine is not imported)."""
    return REGISTRY.get(id.strip().upper())


def by_title(title: str) -> list[Check]:
    """The registered checks named ``title`` (a gate is named by its title: ``digests``)."""
    want = title.strip().lower()
    return [c for c in registered_checks().values() if c.title == want]


def of_family(family: str) -> dict[str, Check]:
    """The registered checks of one family (``MC``, ``RA`` ...), by id."""
    return {k: c for k, c in registered_checks().items() if c.family == family}


def split_codes(values: Iterable[str]) -> tuple[str, ...]:
    """``["MC2,RA1", "MC305"]`` -> ``("MC2", "RA1", "MC305")`` (upper-cased, blanks dropped)."""
    out: list[str] = []
    for v in values:
        out.extend(p.strip().upper() for p in v.split(",") if p.strip())
    return tuple(out)


def matches(cid: str, prefix: str) -> bool:
    """``MC2`` matches MC200-MC299; ``R1`` matches R1 only (an id is never a prefix of a
    longer number in another family: ``R1`` does not match ``RA1``)."""
    if not cid.startswith(prefix):
        return False
    fam = cid.rstrip("0123456789")
    return len(prefix) >= len(fam) and prefix[:len(fam)] == fam


class RuleFilter:
    """``--select`` / ``--ignore``: ids or ruff-style prefixes (``MC2`` = MC200-MC299),
    repeated or comma-separated (``--select MC2,RA1``).

    Checks of scope ``load`` (unreadable input: MC000, MC001) are never filtered out, and
    a check another kept check needs (:attr:`Check.needs`: MC200 for MC201-MC203, MC100
    for MC600) is kept with it: what the kept check cannot read is said, never passed.
    A code that matches no check is a ConfigError (exit 2)."""

    def __init__(self, select: Iterable[str] = (), ignore: Iterable[str] = ()) -> None:
        self.select = split_codes(select)
        self.ignore = split_codes(ignore)
        known = known_ids()
        for s in self.select + self.ignore:
            if not any(matches(c, s) for c in known):
                raise ConfigError(Code.UNKNOWN_RULE, f"no rule matches {quoted(s)} "
                                  "(see `risutools rule` for the list)")
        self._always = frozenset(cid for cid, scope in known.items() if scope == "load")
        self._needed_by = needed_by()

    @property
    def keeps_all(self) -> bool:
        """Nothing selected, nothing ignored: every check kept."""
        return not self.select and not self.ignore

    def keep(self, rule: str | Check) -> bool:
        """Whether ``rule``'s findings are reported (and the rule run): it is selected and
        not ignored, or it is not ignored and a rule that is needs it (``--ignore`` of a
        check a kept check needs is refused before a command runs: check_selection)."""
        rid = str(rule)
        if self.chosen(rid):
            return True
        return not self.ignored(rid) and any(self.chosen(x)
                                             for x in self._needed_by.get(rid, ()))

    def ignored(self, rid: str) -> bool:
        """Whether ``--ignore`` names ``rid`` (or a prefix of it)."""
        return any(matches(rid, s) for s in self.ignore)

    def chosen(self, rid: str) -> bool:
        """Whether ``--select``/``--ignore`` keep ``rid`` itself (what it needs aside)."""
        if rid in self._always:
            return True
        if self.select and not any(matches(rid, s) for s in self.select):
            return False
        return not self.ignored(rid)


def reported_ids(command: str, also: Iterable[str | Check] = ()) -> list[str]:
    """Every check id ``command`` can report (:data:`REPORTS`, and the checks ``also``
    names), in id order."""
    families, scopes = REPORTS[command]
    extra = {str(c) for c in also}
    return [cid for cid, scope in known_ids().items()
            if cid in extra or (cid.rstrip("0123456789") in families and scope in scopes)]


def describe_ids(ids: Iterable[str]) -> str:
    """Ids as their families and runs in index order: ``MC checks (MC000-MC201,
    MC300-MC600)``; a run names every known id between its ends."""
    every = {cid: i for i, cid in enumerate(known_ids())}
    runs: dict[str, list[list[str]]] = {}
    last = -2
    for cid in ids:
        fam = cid.rstrip("0123456789")
        spans = runs.setdefault(fam, [])
        if spans and every[cid] == last + 1:
            spans[-1][1:] = [cid]
        else:
            spans.append([cid])
        last = every[cid]
    return " and ".join(f"{fam} checks ({', '.join('-'.join(s) for s in spans)})"
                        for fam, spans in runs.items())


def check_selection(command: str, select: Iterable[str] = (), ignore: Iterable[str] = (),
                    also: Iterable[str | Check] = ()) -> None:
    """``--select``/``--ignore`` of ``command``, checked before it runs: a code that names no
    check ``command`` reports, or a selection that keeps none of them, is a UsageError
    (exit 2) naming what it reports (a code that names no check at all: ``unknown-rule``);
    so is an empty id, and an ``--ignore`` of a check a kept check needs (:attr:`Check.needs`).
    Nothing is ever silently selected away.  ``also``: checks the command runs besides
    those of its scopes."""
    for option, values in (("--select", select), ("--ignore", ignore)):
        _no_empty_code(option, values)
    ids = reported_ids(command, also)
    known = known_ids()
    chosen = {"--select": split_codes(select), "--ignore": split_codes(ignore)}
    what = describe_ids(ids)
    for option, codes in chosen.items():
        for code in codes:
            if any(matches(c, code) for c in known) and not any(matches(c, code) for c in ids):
                raise UsageError(option, f"{command} never reports {code}: it reports {what}")
            if option == "--ignore":  # (a --select of them alone: below)
                _not_only_verdicts(option, code, [c for c in ids if matches(c, code)], known)
    flt = RuleFilter(*chosen.values())
    if (chosen["--select"] or chosen["--ignore"]) and not any(
            flt.keep(c) for c in ids if known[c] != "load"):
        option = "--select" if chosen["--select"] else "--ignore"
        for code in chosen["--select"]:
            _not_only_verdicts(option, code, [c for c in ids if matches(c, code)], known)
        raise UsageError(option, f"nothing is left of what {command} reports: {what}")
    _no_needed_ignored(flt, ids)


def _not_only_verdicts(option: str, code: str, hit: list[str], known: Mapping[str, str]
                       ) -> None:
    """A code that names only checks every run reports (scope ``load``: MC000, MC001, a
    file that cannot be read) is a UsageError where it would do nothing: ``--ignore MC000``
    ignored nothing in silence, and ``--select MC000`` alone said nothing was left of what
    validate reports, MC000 among it (with other checks it only repeats what runs)."""
    if hit and all(known[c] == "load" for c in hit):
        raise UsageError(option, f"{code} ({', '.join(hit)}: a file that cannot be read) is "
                         "reported by every run, whatever --select and --ignore say; name "
                         "the checks of the documents read")


def _no_empty_code(option: str, values: Iterable[str]) -> None:
    """An empty id (``--select ''``, ``--select ,``, ``MC201,,MC202``) is a UsageError: it
    is never read as no selection."""
    for v in (values,) if isinstance(values, str) else values:
        if any(not p.strip() for p in str(v).split(",")):
            raise UsageError(option, f"{quoted(str(v))} holds an empty rule id; name a check "
                             "id or prefix (see `risutools rule`)")


def _no_needed_ignored(flt: RuleFilter, ids: Iterable[str]) -> None:
    """``--ignore`` of a check a kept check needs (MC200 while MC201 runs) is a UsageError:
    the kept check would pass what it cannot read (the filter keeps it anyway)."""
    run = list(ids)
    for cid in run:
        users = [x for x in needed_by().get(cid, ()) if x in run and flt.chosen(x)]
        if users and flt.ignored(cid):
            raise UsageError("--ignore", f"{cid} cannot be ignored while {', '.join(users)} "
                             f"run: they check only what {cid} passed; ignore them too, or "
                             f"keep {cid}")
