"""The skip path of the Lua call scanner (:mod:`risutools.analysis.lua`): one regex that
passes over a run of tokens that cannot change what the scanner records."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

from risutools.analysis.lualex import NAME, OP, STR, Skipper

# -- passing over what the scanner does not need -------------------------------------------

def alternation(words: Iterable[str]) -> str:
    """A regex matching exactly the words (a trie, so each name is tried once per letter)."""
    trie: dict[str, Any] = {}
    for w in words:
        node = trie
        for ch in w:
            node = node.setdefault(ch, {})
        node[""] = {}

    def emit(node: dict[str, Any]) -> str:
        alts = [re.escape(ch) + emit(sub) for ch, sub in sorted(node.items()) if ch]
        if not alts:
            return ""
        body = alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"
        return f"(?:{body})?" if "" in node else body

    return emit(trie)


def _string_body(quote: str, without: str, p: str) -> str:
    """The body of a short string the skip path passes over: no quote, backslash, line
    break or ``:``, and none of the words of ``without`` (when given; words separated by a
    space).  Runs of other characters are one repetition of a class (a group repeated per
    character kept a backtracking mark per character: 152 MB for a string of 1,000,000),
    the group repeated only per first character of a word not starting it (never, for a
    one-character word); ``p``: ``+`` (possessive, 3.11+) or nothing."""
    if not without:
        return rf"[^{quote}\\\n\r:]*"
    tails: dict[str, list[str]] = {}
    for w in without.split():
        tails.setdefault(w[0], []).append(w[1:])
    firsts = "".join(map(re.escape, tails))
    plain = rf"[^{quote}\\\n\r:{firsts}]*{p}"
    alts = "|".join(rf"{re.escape(c)}(?!{'|'.join(map(re.escape, ts))})"
                    for c, ts in tails.items() if "" not in ts)
    if not alts:
        return plain
    return rf"{plain}(?:(?:{alts}){plain})*{p}"


#: Python 3.11+ has possessive quantifiers (no backtracking state, whatever the length of a
#: run).  Python 3.10 reads the same pattern greedily -- the same matches, since no token
#: starts with whitespace or "--" and nothing follows the repetition -- with the run cut
#: at ``SKIP_RUN_310`` tokens, so the state ``re`` keeps for a greedy repetition stays
#: bounded; the scanner reads the next token itself and skips again after it.
POSSESSIVE = sys.version_info >= (3, 11)
#: the names after a name the skip path looks at for a list being assigned (``a, b =``)
LIST_LOOKAHEAD = 16
SKIP_RUN_310 = 4096


def _unlisted_name(ws: str, name: str, sig: str) -> str:
    """A name (not one of ``sig``) that is not the first of more names being assigned
    (``a, b = ...``: the scanner reads the rest of the list itself and gives each name its
    own value): one after ``=``, ``(``, ``{`` or ``,``, where no list starts
    (``{k = x, b = y}``), or one not followed by names and ``=``; at most
    ``LIST_LOOKAHEAD`` names are looked at (a longer list is stopped at a later name).  The
    look for a list comes after the name (it fails at once where no ``,`` follows), so a
    name is read once, not twice; ``sig`` is written once (a shorter pattern to compile)."""
    tail = (rf"{ws}*,{ws}*{name}(?:{ws}*,{ws}*{name}){{0,{LIST_LOOKAHEAD - 1}}}"
            rf"{ws}*=(?!=)")
    return rf"(?!{sig})(?:(?:(?<=[=({{,])|(?<=[=({{,][ \t])){name}|{name}(?!{tail}))"


def _comma(ws: str, name: str) -> str:
    """A ``,`` passed over: not one after ``]`` or ``>`` before more names being assigned
    (``t[k], b = x, "y"``, ``local a <close>, b = x, "y"``: the scanner reads the list
    from there, each target given its own value; at most ``LIST_LOOKAHEAD`` names)."""
    return (rf"(?<![\]>]),|,(?!{ws}*{name}(?:{ws}*,{ws}*{name}){{0,{LIST_LOOKAHEAD - 1}}}"
            rf"{ws}*=(?!=))")


def _plain_value(sig: str, ws: str, name: str) -> str:
    """After "name =": a value that makes neither a constant nor a function definition
    (nor a name the scanner watches: ``x = request`` makes an alias it follows); a value
    the folder may make a constant of (``string.``/``table.``, a name then ``..``, a ``(``
    before a string, a ``(`` or a name: ``luafold.foldable_start``) is read by the
    scanner; any other ``(`` (``(1 + n) * c``, ``(-x)``) is passed over."""
    return (rf"(?:(?!{sig}|(?:string|table){ws}*\.|{name}{ws}*\.\.)[A-Za-z_]"
            rf"|\((?!{ws}*[\"'\[(A-Za-z_])"
            rf"|[0-9{{#~]|-(?!-)|\.[0-9])")


@lru_cache(maxsize=8)
def skip_pattern(keep: frozenset[str], possessive: bool = POSSESSIVE,
                 strings_without: str = "", every_call: bool = False) -> re.Pattern[str]:
    """A run of whole tokens that :func:`scan_lua` (recording only calls to ``keep``) reads
    without effect when nothing is pending: whitespace, line comments, numbers, operators,
    short strings that cannot hold a URL (no ``:``, no escape), and
    names that are not in ``keep`` (nor ``_ENV``, ``_G``, ``function``), not assigned a
    string, a function or a name of ``keep`` (an alias), not before a ``<const>``/``<close>``
    attribute, not ``local`` before a named function, and not followed by more names being
    assigned (``a, b =``: the scanner reads the list; after a ``,`` it reads the next
    token itself), nor a ``,`` after ``]`` or ``>`` before more names being assigned
    (``t[k], b =``, ``local a <close>, b =``).  ``.``/``:`` are passed over only before such
    a name, so the scanner always reads the qualifier and the base of a call it records
    (the last token passed over is given back as group ``last``).
    Anything else (long strings and comments, strings with ``:`` or escapes, characters the
    lexer reports) stops the run.

    Linear: each unit is a bounded-lookahead match and the repetition is possessive (no
    backtracking state is kept, whatever the length of the run); ``possessive=False`` (the
    default on Python 3.10, see :data:`POSSESSIVE`) gives the greedy form, each run at most
    :data:`SKIP_RUN_310` tokens (and comment lines between two).  ``strings_without``:
    words (spaced, each first character its own) a short string passed over must not hold
    (a reader looking for them).  ``every_call``: a name that may be called (followed by
    ``(``, a string, ``{`` or a long string) is never passed over, so a scanner recording
    every call sees each."""
    p = "+" if possessive else ""  # after * : possessive, or greedy
    run = "*+" if possessive else f"{{0,{SKIP_RUN_310}}}"
    ws = r"[ \t\r\n\f\v]"
    w = r"[A-Za-z0-9_]"
    sig = "(?:" + alternation(keep | {"_ENV", "_G", "function"}) + f")(?!{w})"
    name = rf"[A-Za-z_][A-Za-z0-9_]*(?!{w})"  # a whole name (never a prefix of one)
    plain_value = _plain_value(sig, ws, name)
    # ``local x <const> =`` (Lua 5.4): the name before an attribute is read by the scanner
    # (a ``<`` after a name passed over is no attribute's)
    lt = rf"<(?!{ws}*(?:const|close){ws}*>)"
    # what may follow a name passed over (anything else, even a character the lexer
    # skips, stops the run): the name is then neither assigned a string or a function,
    # nor "local" before a named function
    punct = rf"[+*/%^\#&~|>)}}\];,] | \[(?!=*\[) | {lt}" if every_call \
        else rf"""[+*/%^\#&~|>(){{}}\[\];,"'] | {lt}"""
    after_name = rf"""{ws}*(?: {punct} | -(?!-) | == | [.:][.:]?
                              | =(?!=){ws}*{plain_value} | function{ws}*\(
                              | (?!function(?!{w}))[A-Za-z0-9_] | \Z )"""
    unlisted = _unlisted_name(ws, name, sig)
    comma = _comma(ws, name)
    # a token, after whitespace and line comments; the last one matched is group "last"
    # (a run of whitespace is one possessive repetition of a character class, and a name
    # is tried against the host table only when it starts like a name: faster in the
    # regex engine than an alternation per character, and the same matches, since no
    # token starts with whitespace or "--")
    unit = rf"""{ws}*{p}(?:--(?!\[=*\[)[^\r\n]*(?=[\r\n]){ws}*{p}){run}(?P<last>
        (?=[A-Za-z_]){unlisted}(?={after_name})
      | [.:](?![.:])(?={ws}*(?!{sig})[A-Za-z_])
      | "{_string_body('"', strings_without, p)}" | '{_string_body("'", strings_without, p)}'
      | 0[xX][0-9a-fA-F]*(?:\.[0-9a-fA-F]*)?(?:[pP][+-]?[0-9]+)?
      | (?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?
      | \.\.\.? | == | ~= | <= | >= | << | >> | // | ::
      | -(?!-) | \[(?!=*\[) | =(?!=) | [+*/%^\#&~|<>(){{}}\];] | {comma}
    )"""
    return re.compile(rf"(?:{unit}){run}", re.VERBOSE)


@lru_cache(maxsize=4)
def block_pattern(words: frozenset[str], possessive: bool = POSSESSIVE,
                  strings_without: str | None = None) -> re.Pattern[str]:
    """A run of whole tokens none of which is one of ``words`` or ``function``, for the
    readers that follow blocks only (the function table, a function's extent, the top
    level): whitespace, line comments, names, numbers, operators and short strings without
    an escape or a line break, each matched as the lexer matches it (its alternatives in
    the lexer's order); a long string or comment, a string with an escape, a character the
    lexer reports or one of ``words`` stops the run.  Far fewer tests per token than
    :func:`skip_pattern`, which stops at what the call scanner records.  Linear: each unit
    a bounded match, the repetition possessive (greedy and cut at :data:`SKIP_RUN_310`
    tokens on Python 3.10); the last token passed over is group ``last``.
    ``strings_without``: a string holding ``:`` or that word stops the run too (the reader
    of buttons looks for strings that name one)."""
    p = "+" if possessive else ""
    run = "*+" if possessive else f"{{0,{SKIP_RUN_310}}}"
    ws = r"[ \t\r\n\f\v]"
    stop = "(?:" + alternation(words | {"function"}) + ")(?![A-Za-z0-9_])"
    if strings_without is None:
        dq, sq = rf"[^\"\\\n\r]*{p}", rf"[^'\\\n\r]*{p}"
    else:
        dq, sq = _string_body('"', strings_without, p), _string_body("'", strings_without, p)
    unit = rf"""{ws}*{p}(?P<last>
        (?!{stop})[A-Za-z_][A-Za-z0-9_]*{p}(?![A-Za-z0-9_])
      | --(?!\[=*\[)[^\r\n]*{p}
      | "{dq}" | '{sq}'
      | 0[xX][0-9a-fA-F]*(?:\.[0-9a-fA-F]*)?(?:[pP][+-]?[0-9]+)?
      | (?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?
      | \.\.\.? | == | ~= | <= | >= | << | >> | // | ::
      | -(?!-) | \[(?!=*\[) | [+*/%^\#&~|<>=(){{}}\];:,.]
    )"""
    return re.compile(rf"(?:{unit}){run}", re.VERBOSE)


#: what makes a ``(`` or a constant's name after ``name =`` a value ``luafold.fold_value``
#: may fold: the same tests the skip path makes (:func:`_plain_value`), so a value is read
#: alike with and without it
_PAREN_FOLDS = re.compile(r"[ \t\r\n\f\v]*[\"'\[(A-Za-z_]")
_CONCAT_NEXT = re.compile(r"[ \t\r\n\f\v]*\.\.")


def foldable_start(kind: int, value: str | None, constants: Mapping[str, object],
                   text: str, end: int) -> bool:
    """Whether a value starting with this token (ending at ``end`` of ``text``) may be one
    ``luafold.fold_value`` folds: a string, ``(`` before a string, a ``(`` or a name,
    ``string.``/``table.``, a name in ``constants`` before ``..``."""
    if kind == STR:
        return True
    if kind == OP and value == "(":
        return _PAREN_FOLDS.match(text, end) is not None
    return kind == NAME and (value in ("string", "table") or (
        value in constants and _CONCAT_NEXT.match(text, end) is not None))


def scan_skipper(keep: frozenset[str] | None, skip: bool, to_calls: bool) -> Skipper | None:
    """The skip path of a scan (:func:`~risutools.analysis.lua.scan_lua`): past the names
    not kept, or between calls."""
    if keep is not None and skip:
        return Skipper(skip_pattern(keep, POSSESSIVE))
    return Skipper(skip_pattern(frozenset(), POSSESSIVE, "", True)) if to_calls else None
