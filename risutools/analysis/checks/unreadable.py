"""RA6xx: code the analysis could not read as code: Lua that does not lex to its end (or
has more records than the scanner keeps), a code field that is not text, binary junk."""

from __future__ import annotations

from collections.abc import Iterator

from risutools.analysis.seen import Hit, Seen, reads
from risutools.checks.registry import check


@check("RA601", "warning", "module", "code-unreadable")
@reads("unlexed")
def ra601(seen: Seen) -> Iterator[Hit]:
    """Code could not be read completely (a warning for unterminated long strings/comments, else
    info; info also when a script has more records than the scanner keeps, see docs/analysis.md
    Bounds).

    Why: Facts after the unreadable part may be missing.

    Fix: Fix the syntax so that the code lexes to its end.
    """
    for at, where, errors in seen.unlexed:
        first_line, first_msg = errors[0]
        serious = any("unterminated long" in msg for _, msg in errors)
        yield Hit(at, f"the code could not be read completely ({first_msg}; {len(errors)} "
                  "problem(s)); the analysis covers what was read", f"{where} line {first_line}",
                  severity=None if serious else "info")


@check("RA602", "warning", "module", "code-not-text")
@reads("code_not_text")
def ra602(seen: Seen) -> Iterator[Hit]:
    """A code field is not text (number, object ...).

    Why: The field cannot hold code as RisuAI expects, so it is read as empty.

    Fix: Store the code as a string.
    """
    for at, where, pointer, got in seen.code_not_text:
        yield Hit(at, f"the code field is {got}, not text; it was not read", where, pointer)


@check("RA603", "info", "module", "code-binary")
@reads("binary_code")
def ra603(seen: Seen) -> Iterator[Hit]:
    """Code holds NUL or unpaired surrogates (binary junk).

    Why: Binary junk in code usually means a broken export.

    Fix: Re-export the module, or remove the junk.
    """
    for at, where in seen.binary_code:
        yield Hit(at, "the code holds NUL or unpaired surrogate characters (binary junk?)",
                  where)
