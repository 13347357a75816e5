"""The walk's reading of text RisuAI evaluates: CBS tags and HTML (part of
:func:`risutools.analysis.walk.walk`).

CBS gives state keys (``{{getvar::k}}``, ``{{#when::toggle::k}}``, ``$k`` in a calculation)
and buttons (``{{button::label::fn}}``); HTML gives buttons (``risu-trigger``,
``risu-btn``), URL hosts and the scan the RA3xx checks read.
"""

from __future__ import annotations

import re

from risutools.analysis.cbs import NESTED, CbsTag, scan_cbs, strip_cbs
from risutools.analysis.htmlscan import HtmlScan, decode_refs, scan_html
from risutools.analysis.regexcheck import (
    BacktrackRisk,
    Budget,
    RegexParseError,
    RegexTooLarge,
    backtracking_risks,
    steps_allowed,
)
from risutools.analysis.regexflags import flags_error
from risutools.analysis.regexrefused import quantifier_error
from risutools.analysis.regexunicode import unicode_mode_error
from risutools.analysis.seen import Seen

CBS_STATE: dict[str, tuple[str, str]] = {
    "getvar": ("chat", "read"), "setvar": ("chat", "write"), "addvar": ("chat", "write"),
    "setdefaultvar": ("chat", "write"), "getglobalvar": ("global", "read"),
}
#: the writes that read the variable first (cbs.ts: ``addvar`` adds to its value,
#: ``setdefaultvar`` writes only when it is empty)
CBS_READ_FIRST = frozenset({"addvar", "setdefaultvar"})
#: CBS calculations (``{{? expr}}``, ``{{calc::expr}}``): ``$name`` reads a chat variable
CBS_CALC = frozenset({"?", "calc"})
#: a card's greetings: RisuAI runs their setvar only in group chats (a 1:1 chat parses the
#: first message without ``runVar``: index.svelte.ts ``sendChat``; a group chat pushes it
#: into the chat, where ``runCurrentChatFunction`` parses it with ``runVar``: group.ts)
GREETINGS = frozenset({"first_mes", "alternate_greetings", "group_only_greetings"})
_CALC_VAR = re.compile(r"\$([A-Za-z0-9_]{1,200})")
_CBS_IN_VALUE = re.compile(r"\{\{[^{}]{0,100}\}\}")


#: ``{{#when}}`` operators that read a variable: operator -> (scope, the name follows it
#: (True) or comes before it (False)); a global is read as ``toggle_<name>``
WHEN_READS = {"var": ("chat", True), "toggle": ("global", True), "vis": ("chat", False),
              "visnot": ("chat", False), "tis": ("global", False),
              "tisnot": ("global", False)}


def var_use(s: Seen, name: str, mode: str, where: str) -> None:
    """A chat variable named by ``name`` (a trigger effect's field, run through CBS by
    RisuAI): a key, or a computed key (``*`` for each CBS tag) when it holds CBS."""
    s.cap("chat_state_kv", where)
    if "{{" in name:
        pattern = strip_cbs(name, "*")[0].strip()
        s.computed_use("chat", pattern[:200] or "*", mode, where)
    else:
        s.state_use("chat", name, mode, where)


def check_pattern(pattern: str, letters: str, budget: Budget | None = None
                  ) -> tuple[list[BacktrackRisk], tuple[str, int] | None, bool]:
    """The backtracking check of one pattern (parsed as data, never compiled): its risks,
    or (why, offset) when it does not parse (or RegExp refuses it: in its u or v mode,
    :mod:`.regexunicode`; a quantifier, :mod:`.regexrefused`), with True when that is
    because it is past a bound of the check (too long, nested too deeply, too many steps:
    RA205, not RA202)
    (``budget``: its steps, else its own allowance: :func:`steps_allowed`)."""
    try:
        risks = backtracking_risks(pattern, letters, budget)
    except RegexTooLarge as exc:
        return [], (exc.why, exc.offset), True
    except RegexParseError as exc:
        return [], (exc.why, exc.offset), False
    except RecursionError:
        return [], ("groups nested too deeply", -1), True
    refused = unicode_mode_error(pattern, letters)  # (RegExp refuses it: it never runs)
    if refused is not None:
        why, at = refused
        return [], (why if at < 0 else f"with the u or v flag, RegExp refuses {why}", at), False
    refused = quantifier_error(pattern, "v" in letters)
    if refused is not None:
        return [], (f"RegExp refuses {refused[0]}", refused[1]), False
    return risks, None, False


def read_pattern(s: Seen, where: str, pattern: str, letters: str,
                 risks_only: bool = False, verbatim: bool = False) -> None:
    """A pattern RisuAI compiles and runs on chat text (a regex script's ``in``, a
    lorebook key with ``useRegex``, a trigger's regex): RA201/RA202 (``risks_only``: a
    pattern that may not be run, RA201 only; ``verbatim``: ``letters`` are given to
    ``RegExp`` as written, so flags it refuses are RA202, :func:`.regexflags.flags_error`:
    RisuAI never runs the pattern)."""
    at = s.tick()
    refused = flags_error(letters) if verbatim else None
    if refused is not None:
        if len(s.patterns) < MAX_PATTERN_RECORDS:
            s.patterns.append((at, where, [], (refused, -1), False))
        return
    got = s.pattern_memo.get((pattern, letters))
    if got is None:
        if len(s.pattern_memo) >= MAX_PATTERNS_CHECKED:
            _unchecked(s, at, where, f"more than {MAX_PATTERNS_CHECKED:,} distinct patterns "
                       "in one module")
            return
        got = _checked_within(s, at, where, pattern, letters)
        if got is None:
            return
        s.pattern_memo[(pattern, letters)] = got
    risks, parse_error, too_deep = got
    if risks_only and not risks:
        return
    if (risks or parse_error or too_deep) and len(s.patterns) < MAX_PATTERN_RECORDS:
        s.patterns.append((at, where, risks, parse_error, too_deep))


def _checked_within(s: Seen, at: int, where: str, pattern: str, letters: str
                    ) -> tuple[list[BacktrackRisk], tuple[str, int] | None, bool] | None:
    """:func:`check_pattern` within what is left of the module's steps
    (:data:`MODULE_PATTERN_STEPS`), charged what it took; None when nothing is left or the
    pattern used it up (not checked: one RA202 says so for the module)."""
    left = MODULE_PATTERN_STEPS - s.pattern_steps
    if left > 0:
        own = steps_allowed(len(pattern))
        budget = Budget(min(own, left))
        got = check_pattern(pattern, letters, budget)
        s.pattern_steps += budget.used
        if not (own > left and budget.left < 0):  # (else the module's steps ran out)
            return got
    _unchecked(s, at, where, f"the module's patterns took more than "
               f"{MODULE_PATTERN_STEPS:,} steps to check")
    return None


def _unchecked(s: Seen, at: int, where: str, why: str) -> None:
    """A pattern not checked (a module bound past): counted, and the first one of the
    module recorded with ``why`` (one RA202 says it; -1: no offset)."""
    s.patterns_unchecked += 1
    if s.patterns_unchecked == 1:
        s.patterns.append((at, where, [], (
            f"{why}: this one and those after it were not checked", -1), True))


#: distinct (pattern, flags) checked per module, each within its own step budget (the same
#: pattern again is answered from the first check); past them a pattern is not checked, and
#: one RA202 says so
MAX_PATTERNS_CHECKED = 20_000
#: steps the checks of one module's patterns take together at most (each pattern's own
#: allowance, :func:`~risutools.analysis.regexcheck.steps_allowed`, within it): about a
#: second (87 ns a step); the real corpus's largest took 4,128; 8,000 patterns of 800
#: characters built to be slow took 37 s before it.  Past it a pattern is not checked, and
#: one RA202 says so
MODULE_PATTERN_STEPS = 12_000_000
#: patterns kept per module with a risk or a failure (each an RA201/RA202 line)
MAX_PATTERN_RECORDS = 2_000


def read_cbs(s: Seen, text: str, where: str, greeting: bool = False) -> None:
    """The CBS tags of ``text``: state keys, calculations and buttons (in a card's
    ``greeting``, a write is a group-chat write: see GREETINGS)."""
    scan = scan_cbs(text)
    s.counts["cbs_tags"] = s.counts.get("cbs_tags", 0) + len(scan.tags)
    for t in scan.tags:
        _cbs_tag(s, t, where, greeting)


def read_cbs_reads(s: Seen, text: str | None, ev: str) -> None:
    """The variables read by CBS a script has RisuAI evaluate and give back (Lua
    ``cbs(text)``: scriptings.ts runs ``risuChatParser`` without ``runVar``): ``getvar``,
    ``getglobalvar``, ``#when`` and ``$name`` in a calculation, at ``ev``; its ``setvar``,
    ``addvar`` and ``setdefaultvar`` neither read nor write without ``runVar`` (cbs.ts), and
    a ``button`` is text given back to the script (its buttons are the script's strings')."""
    if not text or "{{" not in text:
        return
    for t in scan_cbs(text).tags:
        if t.name != "button" and not (t.name in CBS_STATE and CBS_STATE[t.name][1] == "write"):
            _cbs_tag(s, t, "", ev=ev)


def _cbs_tag(s: Seen, t: CbsTag, where: str, greeting: bool = False,
             ev: str | None = None) -> None:
    ev = ev or f"{where} line {t.line}"
    if t.name in CBS_STATE:
        scope, mode = CBS_STATE[t.name]
        key = t.literal_arg(0)
        s.cap("chat_state_kv" if scope == "chat" else "global_state_kv", ev)
        if key and greeting and mode == "write":
            s.fact(s.group_writes, key, ev)
        elif key:
            if t.name in CBS_READ_FIRST:
                s.state_use(scope, key, "read", ev)
            s.state_use(scope, key, mode, ev)
        elif t.args and not (greeting and mode == "write"):
            # a key computed by a nested tag (``{{setvar::{{getvar::k}}::1}}``)
            pattern = t.args[0].replace(NESTED, "*").strip()
            s.computed_use(scope, pattern[:200] or "*", mode, ev)
    elif t.name.startswith("#when"):
        _when_reads(s, t, ev)
    elif t.name in CBS_CALC:
        # RisuAI's calcString reads ``$name`` as the chat variable ``name``
        for m in _CALC_VAR.finditer(" ".join(t.args)[:10_000]):
            s.cap("chat_state_kv", ev)
            s.state_use("chat", m.group(1), "read", ev)
    elif t.name == "button":
        fn = button_trigger(t.literal_arg(1))
        s.hook("hook.manual", ev)
        if fn:
            s.fact(s.buttons, fn, ev)
            s.named_buttons.append((fn, ev))


def button_trigger(arg: str | None) -> str | None:
    """The trigger a ``{{button::label::arg}}`` names: cbs.ts puts ``arg`` unescaped in
    ``risu-trigger="..."``, so the name is what the attribute's value holds (up to a
    quote, character references decoded), what RisuAI's ``getAttribute`` gives."""
    if not arg or ('"' not in arg and "&" not in arg):
        return arg
    return decode_refs(arg.partition('"')[0])


def _when_reads(s: Seen, t: CbsTag, ev: str) -> None:
    """The variables a ``{{#when::...}}`` condition reads (parser.svelte.ts): ``var::k``
    the chat variable k, ``toggle::k`` the global ``toggle_k``; ``k::vis::v`` and
    ``k::visnot::v`` the chat variable k, ``k::tis::v`` and ``k::tisnot::v`` the global
    ``toggle_k`` (a toggle read: declared by this module or required from another)."""
    args = [a.strip().lower() for a in t.args]
    for j, op in enumerate(args):
        if op not in WHEN_READS:
            continue
        scope, after = WHEN_READS[op]
        k = j + 1 if after else j - 1
        if k < 0 or k >= len(args):
            continue
        key = t.literal_arg(k)
        s.cap("chat_state_kv" if scope == "chat" else "global_state_kv", ev)
        prefix = "" if scope == "chat" else "toggle_"
        if key:
            s.state_use(scope, prefix + key, "read", ev)
        else:
            pattern = t.args[k].replace(NESTED, "*").strip()
            s.computed_use(scope, (prefix + pattern)[:200] or "*", "read", ev)


def read_html(s: Seen, text: str, where: str, *, chat: bool = True,
              visualize: bool = False) -> None:
    """HTML RisuAI shows: script in it (``<script>``, handlers, ``javascript:`` URLs:
    RA301-RA303; documents embedded, redirects, base URLs and form actions: RA304), remote
    addresses built from chat data (RA305), its buttons and URL hosts.  ``chat``: shown in
    the chat (RisuAI's display map applied: ``ParseMarkdown``'s Markdown); the background
    is shown without it (its ``'back'`` mode renders no Markdown).  ``visualize``: a chat
    message as written (a greeting), its CBS evaluated for display (Chat.svelte:
    ``{{file}}`` shows the file's name, not its text)."""
    scan = scan_html(text, groups=where.startswith("regex[") and where.endswith(".out"),
                     unescape=chat, visualize=visualize)
    if scan.flagged():
        s.script_html.append((s.tick(), where, scan))
    read_risu_buttons(s, scan, where)
    for fn, line in scan.risu_triggers:
        ev = f"{where} line {line}"
        s.hook("hook.manual", ev)
        s.fact(s.buttons, fn, ev)
        s.named_buttons.append((fn, ev))
    for host, line in scan.url_hosts:
        s.fact(s.urls, host, f"{where} line {line}")


def read_risu_buttons(s: Seen, scan: HtmlScan, where: str) -> None:
    """``risu-btn="value"`` attributes (read by the tag reader: the name in any case, the
    value quoted or not, never text inside another attribute's value): a button RisuAI
    hands to the Lua global ``onButtonClick(id, value)`` of whichever enabled module
    defines it (an entry point of this module only when its own Lua defines it: see
    ``walk.button_entry``)."""
    for value, line in scan.risu_btns:
        ev = f"{where} line {line}"
        s.hook("hook.manual", ev)
        s.risu_btn_seen.append(ev)
        shown = _CBS_IN_VALUE.sub("*", value).strip()
        if shown:
            s.fact(s.buttons, shown[:80], ev)
