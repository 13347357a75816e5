"""RA2xx: regex scripts: patterns that risk catastrophic backtracking or could not be
checked (:mod:`risutools.analysis.regexcheck` parses them as data), unknown script types
and flag letters."""

from __future__ import annotations

from collections.abc import Iterator

from risutools.analysis.seen import Hit, Seen, reads
from risutools.checks.registry import check
from risutools.printable import quoted

_SHAPES = {
    "nested-quantifier": "nested unbounded quantifiers that can split the same text in many "
                         "ways",
    "overlapping-alternation": "a repeated alternation whose branches can match the same text",
    "ambiguous-repetition": "a repetition whose optional parts can split the same text in "
                            "many ways",
}


@check("RA201", "warning", "module", "regex-backtracking")
@reads("patterns")
def ra201(seen: Seen) -> Iterator[Hit]:
    """A regex pattern risks catastrophic backtracking.

    Why: On a long message such a pattern can freeze the client for seconds or longer.

    Fix: Remove nested or overlapping quantifiers (e.g. `(a+)+`, `(.*)*`).
    """
    for at, where, risks, _parse_error, _too_deep in seen.patterns:
        for risk in risks:
            what = _SHAPES.get(risk.shape, _SHAPES["overlapping-alternation"])
            yield Hit(at, f"the pattern risks catastrophic backtracking ({what}); RisuAI runs "
                      "it on every message", where)


@check("RA202", "info", "module", "regex-unparsed")
@reads("patterns")
def ra202(seen: Seen) -> Iterator[Hit]:
    """A regex pattern could not be parsed (not checked).

    Why: An unparsed pattern was not checked for backtracking risks.

    Fix: Check the pattern by hand, or simplify it.
    """
    for at, where, _risks, parse_error, past_bound in seen.patterns:
        if parse_error is not None and not past_bound:
            why, offset = parse_error
            at_offset = f" at offset {offset}" if offset >= 0 else ""  # (-1: its flags)
            yield Hit(at, f"the pattern could not be parsed ({why}{at_offset}); it was "
                      "not checked for backtracking", where)


@check("RA205", "warning", "module", "regex-unchecked")
@reads("patterns")
def ra205(seen: Seen) -> Iterator[Hit]:
    """A regex pattern was past a bound of the backtracking check (too long, nested too
    deeply, too many steps, or the module's patterns past theirs) and was not checked.

    Why: Such a pattern may be valid and dangerous; an author must not be able to hide a
    catastrophic pattern by padding it past the checker's bounds.

    Fix: Shorten or simplify the pattern (fewer nested groups), or check it by hand.
    """
    for at, where, _risks, parse_error, past_bound in seen.patterns:
        if past_bound:
            why = parse_error[0] if parse_error is not None else "past a bound"
            yield Hit(at, f"the pattern was not checked for backtracking ({why})", where)


@check("RA203", "info", "module", "regex-type-unknown")
@reads("regex_types")
def ra203(seen: Seen) -> Iterator[Hit]:
    """Unknown regex script type.

    Why: The hook the script runs on cannot be known, so its capability is not inferred.

    Fix: Use one of editinput, editoutput, editprocess, editdisplay, edittrans.
    """
    for at, script, rtype in seen.regex_types:
        yield Hit(at, f"regex script type {quoted(str(rtype)[:40])} is not one RisuAI "
                  "documents", f"regex[{script}].type")


@check("RA204", "info", "module", "regex-flags-unknown")
@reads("regex_flags")
def ra204(seen: Seen) -> Iterator[Hit]:
    """Unknown letters in a regex `flag` field (`<...>` directives are accepted).

    Why: RisuAI may ignore or reject the unknown flags, so the script may not behave as
    intended.

    Fix: Use only the flag letters RisuAI knows (g, i, m, s, u, y and `<...>` directives).
    """
    for at, script, unknown in seen.regex_flags:
        yield Hit(at, f"regex flag field has unknown letters {quoted(''.join(unknown)[:20])}",
                  f"regex[{script}].flag")
