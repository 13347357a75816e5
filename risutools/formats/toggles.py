"""Parsing ``customModuleToggle``: the module's user-facing switches.

One toggle per line (a line ends at ``\\n`` only, as RisuAI's ``parseToggleSyntax`` cuts
it): ``key=Label`` (a checkbox), ``key=Label=select=A,B,C``,
``key=Label=text`` (also ``textarea``).  Structure lines: ``==Group==`` or
``key=Group=group`` open a group, ``==groupEnd`` or ``key=x=groupEnd`` close
it; ``divider`` and ``caption`` lines are decoration.  The module reads a
toggle's value as the global variable ``toggle_<key>``.  Never raises.
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
_DECORATION = {"divider", "caption", "separator"}
_TEXT_TYPES = {"text", "textarea", "input", "number"}
_GROUP_END = ("groupend", "endgroup")
#: the kinds of a ``key=x=kind`` line that open or close a group or decorate
_STRUCTURE = {"group", *_GROUP_END, *_DECORATION}
#: the toggle type of each known kind (anything else: an unknown type, read as text)
_TYPE_OF = {"": "checkbox", "select": "select", **dict.fromkeys(_TEXT_TYPES, "text")}


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
        line = raw.strip()
        if not line:
            continue
        if line.startswith("=="):
            group = _header_group(line, group)
            continue
        if "=" not in line:
            if len(out.malformed) < MAX_NOTED:
                out.malformed.append(lineno)
            continue
        parts = line.split("=", 3)
        key = parts[0].strip()
        label = parts[1].strip()
        kind = parts[2].strip() if len(parts) > 2 else ""
        kind_l = kind.lower()
        if kind_l in _STRUCTURE:
            group = _structure_group(kind_l, label or key, group)
            continue
        if not key:
            _note(out.malformed, lineno)
            continue
        ttype = _TYPE_OF.get(kind_l)
        if ttype is None:
            if len(out.unknown_types) < MAX_NOTED:
                out.unknown_types.append((kind[:40], lineno))
            ttype = "text"
        if key in seen:
            _note(out.duplicates, (key, lineno))
            continue
        if len(out.toggles) >= MAX_TOGGLES:
            out.over_limit += 1
            continue
        seen.add(key)
        options = _options(parts) if ttype == "select" else ()
        out.toggles.append(Toggle(key, label or key, ttype, options, group, lineno))
    return out


def _note(noted: list[Any], what: Any) -> None:
    """List one problem line, up to ``MAX_NOTED`` of each kind."""
    if len(noted) < MAX_NOTED:
        noted.append(what)


def _header_group(line: str, group: str | None) -> str | None:
    """The open group after a ``==...`` line: ``==Group==``, ``==group=G``, ``==groupEnd``."""
    words = [w.strip() for w in line.split("=") if w.strip()]
    head = words[0].lower() if words else ""
    if head in _GROUP_END:
        return None
    if head == "group":
        return words[1] if len(words) > 1 else ""
    return words[0] if words else group


def _structure_group(kind: str, name: str, group: str | None) -> str | None:
    """The open group after a ``key=x=group`` / ``groupEnd`` / decoration line."""
    if kind == "group":
        return name
    if kind in _GROUP_END:
        return None
    return group  # divider, caption: decoration


def _options(parts: list[str]) -> tuple[str, ...]:
    """The choices of ``key=Label=select=A,B,C`` (blank ones dropped)."""
    opts = parts[3] if len(parts) > 3 else ""
    return tuple(o.strip() for o in opts.split(",") if o.strip())
