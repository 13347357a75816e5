"""``risutools rule [ID]``: what a check checks, why, how to fix a finding, and an example;
no id: every check.  An id, a prefix (``MC2``: its checks) or a gate's name (``digests``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from risutools.checks.examples import example_text
from risutools.checks.registry import Check, matches, split_codes
from risutools.commands.checks import every_check
from risutools.errors import Code, ConfigError
from risutools.printable import quoted


@dataclass(frozen=True)
class Options:
    rule_id: str | None = None


@dataclass
class RuleResult:
    """One check's page (``page``, with its example), or a list of checks."""

    kind: ClassVar[str] = "rule"
    page: Check | None = None
    example: str | None = None
    listed: list[Check] = field(default_factory=list)

    def exit_code(self) -> int:
        return 0


def run(opts: Options) -> RuleResult:
    """The page of the id (or title) asked for, the list of a prefix's checks, or every
    check; anything else is a ConfigError (one line, exit 2)."""
    checks = every_check()
    if opts.rule_id is None:
        return RuleResult(listed=list(checks.values()))
    codes = split_codes([opts.rule_id])
    if len(codes) == 1 and codes[0] in checks:
        return RuleResult(checks[codes[0]], example_text(codes[0]))
    if len(codes) == 1 and any(matches(cid, codes[0]) for cid in checks):
        return RuleResult(listed=[c for c in checks.values() if matches(c.id, codes[0])])
    want = opts.rule_id.strip().lower()
    named = [c for c in checks.values() if c.title == want]
    if len(named) == 1:
        return RuleResult(named[0], example_text(named[0].id))
    if named:
        return RuleResult(listed=named)
    raise ConfigError(Code.UNKNOWN_RULE, f"no check named {quoted(opts.rule_id)} "
                      "(`risutools rule` lists them)", where="rule")
