"""Parsing ``customModuleToggle``: the module's user-facing switches, read as RisuAI's
``parseToggleSyntax`` reads them.

One toggle per line (a line ends at ``\\n`` only): the line is cut at every ``=`` into
key, label, kind and options, nothing trimmed.  A line declares a toggle when its key and
its label are both non-empty: a checkbox without a kind, ``select`` (the options: the
fourth piece cut at ``,``, blanks kept: RisuAI stores a choice's index), ``text`` and
``textarea``; any other kind is shown by RisuAI as a checkbox (noted as an unknown type).
Kinds are matched exactly (``Select`` or ``select\\r`` is another kind), and a key keeps
its spaces: ``mode =Mode`` declares ``toggle_mode `` (the near miss of a read
``toggle_mode`` is the analysis' RA704).  Structure lines: ``key=Group=group`` opens a
group, ``=groupEnd`` closes it, ``divider`` and ``caption`` (with a label) decorate; the
lines the spec names ``==Group==`` / ``==groupEnd`` declare nothing in RisuAI (their key is
empty) and name the group of the toggles below them here.  The module reads a toggle's
value as the global variable ``toggle_<key>``.  Never raises.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

#: at most this many toggles are kept (RisuAI shows each as a control; real modules
#: declare tens); later toggle lines are counted in ``ToggleParse.over_limit``
MAX_TOGGLES = 10_000
#: at most this many duplicate, malformed and unknown-type lines are listed (each)
MAX_NOTED = 5_000
#: the kinds of a ``key=x=kind`` line that open or close a group or decorate (a ``caption``
#: only with a label: without one RisuAI reads the line as nothing)
_STRUCTURE = {"group", "groupEnd", "divider"}
#: the toggle type of each kind RisuAI knows (anything else: a checkbox, noted as unknown)
_TYPE_OF = {"": "checkbox", "select": "select", "text": "text", "textarea": "text"}


@dataclass(frozen=True)
class Toggle:
    """One toggle a module declares (a line of customModuleToggle)."""

    key: str
    label: str
    type: str  # checkbox | select | text
    options: tuple[str, ...] = ()
    group: str | None = None
    line: int = 0

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"key": self.key, "label": self.label, "type": self.type,
                             "line": self.line}
        if self.options:
            d["options"] = list(self.options)
        if self.group is not None:
            d["group"] = self.group
        return d


@dataclass
class ToggleParse:
    """The toggles of a declaration text and its problems."""

    toggles: list[Toggle] = field(default_factory=list)
    duplicates: list[tuple[str, int]] = field(default_factory=list)  # (key, line)
    malformed: list[int] = field(default_factory=list)  # lines
    unknown_types: list[tuple[str, int]] = field(default_factory=list)
    over_limit: int = 0  # toggle lines past MAX_TOGGLES (not read)


def iter_lines(text: str) -> Iterator[tuple[int, str]]:
    """The numbered lines of a toggle text as RisuAI cuts them (``parseToggleSyntax``:
    ``template.split('\\n')``): at ``\\n`` only, so a ``\\r``, U+0085 or U+2028 inside a
    line stays in it (a key ``a\\u2028b`` is one key, as RisuAI declares it), without the
    list of every line."""
    n = len(text)
    pos = 0
    lineno = 0
    find = text.find
    while pos < n:
        j = find("\n", pos)
        if j < 0:
            j = n
        lineno += 1
        yield lineno, text[pos:j]
        pos = j + 1


def parse_toggles(text: str) -> ToggleParse:
    """The toggles a ``customModuleToggle`` text declares, with its problems (never raises)."""
    out = ToggleParse()
    if not isinstance(text, str) or not text.strip():
        return out
    group: str | None = None
    seen: set[str] = set()
    for lineno, raw in iter_lines(text):
        if not raw.strip():
            continue
        if raw.startswith("=="):
            group = _header_group(raw, group)
            continue
        key, label, kind, opts = _pieces(raw)
        if kind in _STRUCTURE or (kind == "caption" and label):
            group = _structure_group(kind, label or key, group)
            continue
        if not key or not label:
            _note(out.malformed, lineno)
            continue
        ttype = _TYPE_OF.get(kind)
        if ttype is None:
            _note(out.unknown_types, (kind[:40], lineno))
            ttype = "checkbox"
        if key in seen:
            _note(out.duplicates, (key, lineno))
            continue
        if len(out.toggles) >= MAX_TOGGLES:
            out.over_limit += 1
            continue
        seen.add(key)
        options = tuple(opts.split(",")) if ttype == "select" and opts is not None else ()
        out.toggles.append(Toggle(key, label.strip() or label, ttype, options, group, lineno))
    return out


def _pieces(line: str) -> tuple[str, str, str, str | None]:
    """(key, label, kind, options) as RisuAI cuts a line (``const [key, value, type,
    option] = line.split('=')``: what lies past a fourth ``=`` is dropped); a missing label
    or kind is "", missing options None."""
    pieces = line.split("=", 4)
    n = len(pieces)
    return (pieces[0], pieces[1] if n > 1 else "", pieces[2] if n > 2 else "",
            pieces[3] if n > 3 else None)


def _note(noted: list[Any], what: Any) -> None:
    """List one problem line, up to ``MAX_NOTED`` of each kind."""
    if len(noted) < MAX_NOTED:
        noted.append(what)


def _header_group(line: str, group: str | None) -> str | None:
    """The open group after a ``==...`` line: ``==Group==``, ``==group=G``, ``==groupEnd``."""
    words = [w.strip() for w in line.split("=") if w.strip()]
    head = words[0].lower() if words else ""
    if head in ("groupend", "endgroup"):
        return None
    if head == "group":
        return words[1] if len(words) > 1 else ""
    return words[0] if words else group


def _structure_group(kind: str, name: str, group: str | None) -> str | None:
    """The open group after a ``key=x=group`` / ``groupEnd`` / decoration line."""
    if kind == "group":
        return name
    if kind == "groupEnd":
        return None
    return group  # divider, caption: decoration
