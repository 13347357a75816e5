"""Lorebook decorators: the ``@@name args`` lines at the head of a lorebook entry's text,
read as RisuAI reads them (nothing is run).

RisuAI parses an entry's ``content`` with CCardLib's ``decorator.parse`` before it places
the entry in the prompt (lorebook.svelte.ts ``loadLoreBookV3Prompt``): the text is
trimmed and read line by line (each line trimmed); every line that starts with ``@@`` is a
decorator, and the first line that does not ends them (the rest is the entry's text, and
only that is run through CBS).  A decorator is ``@@name`` followed, after the first space,
by arguments separated by commas (each trimmed, empty ones dropped).  ``@@@name`` is a
fallback: it is applied only when the decorator before it was refused (its handler
returned ``false``: an unknown name, a bad argument); ``@@@end`` is read as ``@@end``.
Names are matched as written (``@@Inject_At`` is unknown).

What the decorators do that a reviewer must see:

* ``@@inject_at <part>``: the entry's text is added to a part of the prompt instead of the
  lorebook's place (``main``, ``globalNote``, ``description``, ``persona``, ``authornote``
  ... : index.svelte.ts ``positionParser``); with ``@@inject_replace <text>`` it replaces
  the first ``<text>`` of that part, with ``@@inject_prepend`` it goes before it.
* ``@@inject_lore <entry name>``: the same, into another lorebook entry's text (any
  enabled component's entry of that name).
* ``@@activate`` / ``@@dont_activate``: the entry is always / never placed.
* ``@@additional_keys``, ``@@exclude_keys``, ``@@exclude_keys_all``: more keys, searched
  like the entry's own (as ``/regex/flags`` when the entry has ``useRegex``).
"""

from __future__ import annotations

import re

#: every decorator RisuAI's lorebook reader knows (lorebook.svelte.ts, its switch)
KNOWN = frozenset({
    "end", "activate_only_after", "activate_only_every", "keep_activate_after_match",
    "dont_activate_after_match", "depth", "reverse_depth", "instruct_depth",
    "reverse_instruct_depth", "instruct_scan_depth", "role", "scan_depth", "is_greeting",
    "position", "inject_lore", "inject_at", "inject_replace", "inject_prepend",
    "ignore_on_max_context", "additional_keys", "exclude_keys", "exclude_keys_all",
    "match_full_word", "match_partial_word", "is_user_icon", "activate", "dont_activate",
    "disable_ui_prompt", "probability", "priority", "unrecursive", "recursive",
    "no_recursive_search"})
#: decorators RisuAI always refuses (so a ``@@@`` fallback after them applies)
_ALWAYS_REFUSED = frozenset({
    "keep_activate_after_match", "dont_activate_after_match", "instruct_depth",
    "reverse_instruct_depth", "instruct_scan_depth", "is_user_icon"})
#: decorators refused when their first argument is not a number (``parseInt``)
_NUMERIC = frozenset({"activate_only_after", "activate_only_every", "depth", "reverse_depth",
                      "is_greeting"})
#: decorators whose arguments are keys searched like the entry's own
KEY_DECORATORS = frozenset({"additional_keys", "exclude_keys", "exclude_keys_all"})
_POSITIONS = frozenset({"after_desc", "before_desc", "personality", "scenario"})
_INT = re.compile(r"[+-]?\d")
#: a name shown as written only when it is a plain word (else ``(unreadable)``)
_WORD = re.compile(r"[A-Za-z0-9_]{1,40}")
#: at most this many decorator lines are read per module (past them, the entries' heads are
#: not read as decorators; the count of lines passed over is kept)
MAX_DECORATORS = 10_000


class Decorator:
    """One decorator RisuAI applies: its name, arguments and line in the entry's text.
    (These three are plain classes: a NamedTuple costs a quarter of a millisecond of every
    command's start-up to make.)"""

    __slots__ = ("args", "line", "name")

    def __init__(self, name: str, args: list[str], line: int) -> None:
        self.name = name
        self.args = args
        self.line = line


class Injection:
    """Where an entry's text goes instead of the lorebook's place (``inject`` in
    lorebook.svelte.ts): ``append``/``prepend``/``replace``, the part of the prompt (or, with
    ``lore``, the entry name), the text replaced, and the line of the last decorator."""

    __slots__ = ("line", "location", "lore", "operation", "param")

    def __init__(self, operation: str, location: str, param: str, lore: bool,
                 line: int) -> None:
        self.operation = operation
        self.location = location
        self.param = param
        self.lore = lore
        self.line = line


class Head:
    """An entry's decorators: those applied, the unknown (or refused) names, how many lines
    the head takes, where the entry's text goes, and where that text starts (RisuAI
    evaluates the text after the decorators)."""

    __slots__ = ("applied", "body_at", "head_lines", "injection", "unknown")

    def __init__(self, applied: list[Decorator], unknown: list[tuple[str, int]],
                 head_lines: int, injection: Injection | None, body_at: int) -> None:
        self.applied = applied
        self.unknown = unknown
        self.head_lines = head_lines
        self.injection = injection
        self.body_at = body_at


def show_name(name: str) -> str:
    """A decorator's name as a fact shows it (a plain word, else ``(unreadable)``)."""
    return name if _WORD.fullmatch(name) else "(unreadable)"


def refused(name: str, args: list[str]) -> bool:
    """Whether RisuAI's handler refuses the decorator (returns ``false``): then a ``@@@``
    fallback after it applies."""
    first = args[0] if args else ""
    if name not in KNOWN or name in _ALWAYS_REFUSED:
        return True
    if name in _NUMERIC:
        return _INT.match(first) is None
    if name == "role":
        return first not in ("user", "assistant", "system")
    if name == "position":
        return not (first.startswith("pt_") or first in _POSITIONS)
    if name == "disable_ui_prompt":
        return first not in ("post_history_instructions", "system_prompt")
    return False


def read_head(content: str, budget: int) -> tuple[Head, int]:
    """The decorators at the head of ``content`` (at most ``budget`` lines read; the budget
    left is returned).  Linear: each line is found with ``str.find`` and read once, and the
    reading stops at the first line that is not a decorator."""
    applied: list[Decorator] = []
    unknown: list[tuple[str, int]] = []
    start = len(content) - len(content.lstrip())
    line = content.count("\n", 0, start) + 1
    fallback = False
    inject: list[str] | None = None  # [operation, location, param, lore, line]
    pos, n, head = start, len(content), 0
    while pos < n and budget > 0:
        end = content.find("\n", pos)
        end = n if end < 0 else end
        text = content[pos:end].strip()
        if not text.startswith("@@"):
            break
        budget -= 1
        head = line
        if text == "@@@end":
            text = "@@end"
        if not (text.startswith("@@@") and not fallback):
            fallback, inject = _one(text, line, applied, unknown, inject)
        pos, line = end + 1, line + 1
    injection = None if inject is None else Injection(
        inject[0], inject[1], inject[2], inject[3] == "lore", int(inject[4]))
    return Head(applied, unknown, head, injection, min(pos, n) if head else 0), budget


def _one(text: str, line: int, applied: list[Decorator], unknown: list[tuple[str, int]],
         inject: list[str] | None) -> tuple[bool, list[str] | None]:
    """One decorator line: recorded; whether RisuAI refuses it, and the injection so far."""
    space = text.find(" ")
    space = len(text) if space < 0 else space
    name = text[3 if text.startswith("@@@") else 2:space]
    if not name:
        return False, inject
    args = [a.strip() for a in text[space:].split(",") if a.strip()]
    if refused(name, args):
        if name not in KNOWN:
            unknown.append((name, line))
        return True, inject
    applied.append(Decorator(name, args, line))
    if name.startswith("inject_"):
        inject = _inject(name, " ".join(args), inject, line)
    return False, inject


def _inject(name: str, arg: str, inject: list[str] | None, line: int) -> list[str]:
    """RisuAI's ``inject`` record after one ``inject_*`` decorator (the first one sets the
    operation: ``inject ??= {...}``)."""
    if inject is None:
        op = {"inject_replace": "replace", "inject_prepend": "prepend"}.get(name, "append")
        inject = [op, "", "", "lore" if name == "inject_lore" else "", ""]
    if name in ("inject_at", "inject_lore"):
        inject[1] = arg
        inject[3] = "lore" if name == "inject_lore" else ""
    else:
        inject[0] = "replace" if name == "inject_replace" else "prepend"
        inject[2] = arg
    inject[4] = str(line)
    return inject
