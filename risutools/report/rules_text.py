"""``risutools rule [ID]``: one check's page, or the list of all checks (from the registry)."""

from __future__ import annotations

import textwrap
from collections.abc import Iterable

from risutools.checks.registry import Check, by_title, matches, split_codes
from risutools.commands.checks import every_check
from risutools.errors import Code, ConfigError


def _wrap(label: str, text: str) -> list[str]:
    return textwrap.wrap(f"{label}{text}", 88, subsequent_indent="  ",
                         break_long_words=False, break_on_hyphens=False)


def page(c: Check) -> str:
    from risutools.checks.examples import example_text

    lines = [f"{c.id} {c.title} ({c.severity}, scope: {c.scope})", ""]
    lines += [*_wrap("", c.summary), ""]
    lines += [*_wrap("Why: ", c.why), ""]
    lines += _wrap("Fix: ", c.fix)
    if c.fixable:
        lines += _wrap("", "Fixable: `risutools validate --fix` applies the exact fix (candidates "
                       "only; review state is never written).")
    example = example_text(c.id)
    if example:
        lines += ["", "Example (fires):"]
        lines += ["  " + ln for ln in example.splitlines()]
    return "\n".join(lines) + "\n"


def render_rule_list(prefix: str | None) -> str:
    """One line per check: id, severity, scope, ``[*]`` when ``validate --fix`` fixes it,
    title, summary (cut to one line)."""
    return _lines(c for c in every_check().values() if not prefix or matches(c.id, prefix))


def _lines(checks: Iterable[Check]) -> str:
    out = []
    for c in checks:
        summary = c.summary if len(c.summary) <= 60 else c.summary[:59] + "…"
        mark = "[*]" if c.fixable else "   "
        out.append(f"{c.id:<6} {c.severity:<7} {c.scope:<9} {mark} {c.title:<28} {summary}")
    return "\n".join(out) + "\n"


def render_rule_page(rule_id: str) -> str:
    """The page of ``rule_id`` (an id, or a title such as a gate's name ``digests``); a
    prefix (``MC2``) lists its checks; anything else is a ConfigError (one line, exit 2)."""
    codes = split_codes([rule_id])
    checks = every_check()
    if len(codes) == 1 and codes[0] in checks:
        return page(checks[codes[0]])
    if len(codes) == 1 and any(matches(cid, codes[0]) for cid in checks):
        return render_rule_list(codes[0])
    named = by_title(rule_id)
    if len(named) == 1:
        return page(named[0])
    if named:
        return _lines(named)
    raise ConfigError(Code.UNKNOWN_RULE, f"no check named {rule_id!r} "
                      "(`risutools rule` lists them)", where="rule")
