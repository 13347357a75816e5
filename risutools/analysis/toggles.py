"""Parsing ``customModuleToggle``: the module's user-facing switches.

One toggle per line: ``key=Label`` (a checkbox), ``key=Label=select=A,B,C``,
``key=Label=text`` (also ``textarea``).  Structure lines: ``==Group==`` or
``key=Group=group`` open a group, ``==groupEnd`` or ``key=x=groupEnd`` close
it; ``divider`` and ``caption`` lines are decoration.  The module reads a
toggle's value as the global variable ``toggle_<key>``.  Never raises.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

_DECORATION = {"divider", "caption", "separator"}
_TEXT_TYPES = {"text", "textarea", "input", "number"}


@dataclass(frozen=True)
class Toggle:
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
    toggles: list[Toggle] = field(default_factory=list)
    duplicates: list[tuple[str, int]] = field(default_factory=list)  # (key, line)
    malformed: list[int] = field(default_factory=list)  # lines
    unknown_types: list[tuple[str, int]] = field(default_factory=list)


def parse_toggles(text: str) -> ToggleParse:
    out = ToggleParse()
    if not isinstance(text, str) or not text.strip():
        return out
    group: str | None = None
    seen: set[str] = set()
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("=="):
            words = [w.strip() for w in line.split("=") if w.strip()]
            head = words[0].lower() if words else ""
            if head in ("groupend", "endgroup"):
                group = None
            elif head == "group":
                group = words[1] if len(words) > 1 else ""
            elif words:
                group = words[0]
            continue
        if "=" not in line:
            out.malformed.append(lineno)
            continue
        parts = line.split("=", 3)
        key = parts[0].strip()
        label = parts[1].strip() if len(parts) > 1 else ""
        kind = parts[2].strip() if len(parts) > 2 else ""
        kind_l = kind.lower()
        if kind_l == "group":
            group = label or key
            continue
        if kind_l in ("groupend", "endgroup"):
            group = None
            continue
        if kind_l in _DECORATION:
            continue
        if not key:
            out.malformed.append(lineno)
            continue
        options: tuple[str, ...] = ()
        if kind_l == "":
            ttype = "checkbox"
        elif kind_l == "select":
            ttype = "select"
            opts = parts[3] if len(parts) > 3 else ""
            options = tuple(o.strip() for o in opts.split(",") if o.strip())
        elif kind_l in _TEXT_TYPES:
            ttype = "text"
        else:
            out.unknown_types.append((kind[:40], lineno))
            ttype = "text"
        if key in seen:
            out.duplicates.append((key, lineno))
            continue
        seen.add(key)
        out.toggles.append(Toggle(key, label or key, ttype, options, group, lineno))
    return out
