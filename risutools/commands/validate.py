"""``risutools validate``: the schema and the rules MC000-MC600 on documents, folders,
NDJSON catalogs or standard input; ``--fix`` first rewrites, in place, what a rule fixes
exactly, then validates what is left."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from risutools.catalog.approvals import chain_check
from risutools.checks.registry import check_selection, for_command
from risutools.commands.catalogs import TrustRoot, pinned_file
from risutools.commands.outputs import implicit_inputs
from risutools.commands.outputs import reads_file as reads_file  # (cli asks it)
from risutools.commands.settle import raced, readers_locks
from risutools.contract.fix import FixOutcome, fix_result, fixable_checks
from risutools.contract.loaders import STDIN_NAME
from risutools.contract.result import Result
from risutools.contract.validate import validate_paths
from risutools.contract.verify import mc202, mc203
from risutools.settings.config import resolve_settings

#: verify's digest checks: of the contract's family, so every validate report lists them
#: (its SARIF rule list), though only verify runs them
LISTED = (mc202, mc203)


@dataclass(frozen=True)
class Options:
    """What ``validate`` was asked (the command line's values, checked)."""

    paths: tuple[str, ...]
    config_file: str | None = None
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    promotion: bool = False
    strict: bool = False
    skip_non_documents: bool = False
    fix: bool = False
    allowed_signers: str | None = None  # the trust root CI pins (signatures then required)
    allow_config_signers_outside: bool = False
    base_log: str | None = None  # the base branch's transitions.ndjson (MC306: append-only)
    #: whether the report shows each document's canonical hash (the JSON report does):
    #: without it, the hashes are not computed
    hashes: bool = True

    def __post_init__(self) -> None:
        check_selection("validate", self.select, self.ignore)


@dataclass
class Validation:
    """The findings, and what ``--fix`` did (None without it)."""

    kind: ClassVar[str] = "findings"
    result: Result
    fixed: FixOutcome | None = None
    note: str | None = None  # verify's one line when no source was checked
    #: findings ``validate --fix`` would fix (ruff's "N fixable with `--fix`"); 0 for verify
    fixable: int = 0
    #: what the command read that its command line need not name (never a report's target),
    #: found when asked (a report named that is already a file: ``implicit_inputs``)
    reads: Callable[[], tuple[str, ...]] | None = None

    def exit_code(self) -> int:
        return self.result.exit_code()


def run(opts: Options) -> Validation:
    trust = TrustRoot(opts.allowed_signers, opts.allow_config_signers_outside)
    base_log = pinned_file(opts.base_log, "--base-log")
    cfg = trust.pin(resolve_settings(opts.config_file, opts.paths, select=opts.select,
                                     ignore=opts.ignore, exclude=opts.exclude,
                                     promotion=opts.promotion))
    # MC305 asks the approvals' own decision whether each recorded step's record counts
    counts = chain_check(cfg.catalog)
    flt = cfg.rule_filter()

    def check() -> Result:
        return validate_paths(opts.paths, cfg, rule_filter=flt,
                              skip_non_documents=opts.skip_non_documents, counts=counts,
                              hashes=opts.hashes, base_log=base_log)

    started = time.time_ns()
    result = check()
    fixed = None
    if opts.fix:
        fixed = fix_result(result)
        if fixed.files:  # report what is left, as the files are now
            result.documents.clear()  # (the first pass's documents are not needed any more)
            started = time.time_ns()
            result = check()
    racing = raced(result, started)
    if racing:  # (MC305 a writer's two steps may have made: again, no writer half way)
        result.documents.clear()
        with readers_locks(racing):
            result = check()
    result.strict = opts.strict
    result.checks = for_command("validate")
    # (after --fix, what is left is what it could not fix, each said why: not "fixable")
    return Validation(result, fixed, fixable=0 if opts.fix else fixable_count(result),
                      reads=lambda: implicit_inputs(named_paths(opts.paths), cfg))


def named_paths(paths: tuple[str, ...]) -> list[str]:
    """The paths given that are files or folders (standard input, ``-``, is none)."""
    return [p for p in paths if p != "-"]


def fixable_count(result: Result) -> int:
    """The findings ``--fix`` fixes: of a fixable check, in a candidate document (the one
    status it edits) read from a file (standard input cannot be written back)."""
    fixable = fixable_checks()
    return sum(1 for d in result.documents if d.candidate and d.file != STDIN_NAME
               for f in d.findings if f.rule in fixable)
