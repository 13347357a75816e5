"""A YAML document changed where its values stand: what a status change rewrites of a YAML
component document, every other byte kept (comments, key order, indentation, quoting,
number spellings, line ends), as :func:`risutools.jsonlines.patch_values` keeps a JSON one.

Before, a YAML document a command changed (``promote``, ``activate``, ``publish``, ``replay
run --update``) was written whole by ``yaml.safe_dump``: its comments, its order of keys as
written, its indentation and quoting were gone for a one-word change (fourth fuzzing pass).

:func:`patch_yaml_values` finds each changed scalar by the parser's own marks (PyYAML's
pure-Python parser: its marks count characters of the text), and writes the new value in
its place, in the old value's quoting where the new value can be spelled so; items
appended to a list are written after its last item (a block list: as block entries at its
``-`` column; a flow list, ``[a, b]`` or ``[]``: as JSON, which is YAML's flow style).  It
answers None (the caller writes the document whole, as before) when the change is not of
scalars and appended items (a key added or removed, a list shortened), when a value to
change is not a plain or quoted scalar (a block scalar, an alias; a tag or an anchor before
a scalar is kept, the value after it rewritten), past :data:`MAX_PATCHED` values, or when
the text it made does not read back as exactly the new document: the check that makes
every answer safe.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from risutools.errors import RisuError
from risutools.jsonlines import MAX_PATCHED, changes_of, same_json

#: a string written plain in the old value's place when the old was plain: a word that no
#: YAML 1.1 resolver takes for anything but a string (checked again by reading back)
_PLAIN = re.compile(r"[A-Za-z][A-Za-z0-9_-]*(?:[.:/][A-Za-z0-9_-]+)*")
_NOT_STRINGS = frozenset(
    ["y", "n", "yes", "no", "on", "off", "true", "false", "null", "none", "~"])


def _spelled(value: Any, style: str | None) -> str | None:
    """``value`` as a YAML scalar in a value's place (None: not a scalar we spell)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return json.dumps(value)
    if not isinstance(value, str):
        return None
    if style is None and _PLAIN.fullmatch(value) and value.lower() not in _NOT_STRINGS:
        return value
    if style == "'" and value.isprintable() and "\n" not in value:
        return "'" + value.replace("'", "''") + "'"
    # (JSON's double-quoted string is YAML's; every character past printable ASCII escaped
    # when one is not printable: a raw U+2028 would be a line break to YAML 1.1)
    return json.dumps(value, ensure_ascii=not value.isprintable())


def scalar_text_start(text: str, start: int, end: int) -> int:
    """Where a scalar's own text starts in ``text[start:end]`` (a node's span, from the
    parser's marks), past its properties: a tag (``!!str``), an anchor (``&a``), each one's
    whitespace and a comment after them.  A change rewrites the value and keeps what the
    user wrote before it (every caller's read-back check guards the result)."""
    i = start
    while i < end and text[i] in "!&":
        while i < end and text[i] not in " \t\r\n":
            i += 1
        while i < end and text[i] in " \t\r\n#":
            if text[i] == "#":  # (a comment runs to its line's end)
                while i < end and text[i] not in "\r\n":
                    i += 1
            else:
                i += 1
    return i


class _Found:
    """What the parser's marks say of the places a patch writes to."""

    def __init__(self) -> None:
        self.scalars: dict[tuple[Any, ...], tuple[int, int, str | None]] = {}
        #: a block sequence that grows: (the column of its "-", the end of its last scalar)
        self.sequences: dict[tuple[Any, ...], list[int]] = {}


class _Refused(Exception):
    """A place a patch writes to that is not a plain or quoted scalar, or a block list."""


class _Walk:
    """The parser's events, followed: the path of each node, and what :class:`_Found`
    records of the places asked for."""

    def __init__(self, text: str, wanted: dict[tuple[Any, ...], Any],
                 grown: set[tuple[Any, ...]]) -> None:
        self.text, self.wanted, self.grown = text, wanted, grown
        self.found = _Found()
        self.path: list[Any] = []
        # each open container: [is a mapping, its next event a key, the next index, its
        # growth record or None]
        self.stack: list[list[Any]] = []

    def end(self, ev: Any) -> None:
        self.stack.pop()
        if ev.end_mark is not None:  # (a flow list's last item may be a mapping or a list)
            for open_ in self.stack:
                if open_[3] is not None and open_[3][2]:
                    open_[3][1] = ev.end_mark.index
        if self.path:
            self.path.pop()
        if self.stack and self.stack[-1][0]:  # (a mapping's value ended: a key comes next)
            self.stack[-1][1] = True

    def key(self, ev: Any, scalar: Any) -> bool:
        """Take ``ev`` as a mapping's key when one is due (True)."""
        top = self.stack[-1] if self.stack else None
        if top is None or not top[0] or not top[1]:
            return False
        if not isinstance(ev, scalar) or ev.tag is not None or ev.anchor:
            raise _Refused  # (a key that is no plain string: not patched here)
        self.path.append(ev.value)
        top[1] = False
        return True

    def node(self, ev: Any, yaml: Any) -> None:
        top = self.stack[-1] if self.stack else None
        if top is not None and not top[0]:  # a sequence's element
            self.path.append(top[2])
            top[2] += 1
        here = tuple(self.path)
        if isinstance(ev, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            self.open(ev, here, yaml)
            return
        if isinstance(ev, yaml.ScalarEvent) and ev.end_mark is not None:
            for open_ in self.stack:  # (the last scalar of every growing list it is in)
                if open_[3] is not None:
                    open_[3][1] = ev.end_mark.index
        if here in self.wanted:
            start, end = ev.start_mark, ev.end_mark
            if not isinstance(ev, yaml.ScalarEvent) or ev.style not in (None, "'", '"') or \
                    start is None or end is None:
                raise _Refused
            # (a tag or an anchor kept: the value after it rewritten)
            self.found.scalars[here] = (
                scalar_text_start(self.text, start.index, end.index), end.index, ev.style)
        if self.path:
            self.path.pop()
        if top is not None and top[0]:
            top[1] = True

    def open(self, ev: Any, here: tuple[Any, ...], yaml: Any) -> None:
        if here in self.wanted:
            raise _Refused
        growth = None
        if here in self.grown:
            if not isinstance(ev, yaml.SequenceStartEvent) or ev.anchor or \
                    ev.tag is not None or ev.start_mark is None:
                raise _Refused
            # (a block list: its "-" column, the end of its last scalar; a flow list: the
            # end of its last item, or its "[" when it has none)
            growth = self.found.sequences[here] = [
                ev.start_mark.column, -1, bool(ev.flow_style), ev.start_mark.index]
        self.stack.append([isinstance(ev, yaml.MappingStartEvent), True, 0, growth])


def _spans(text: str, wanted: dict[tuple[Any, ...], Any],
           grown: set[tuple[Any, ...]]) -> _Found | None:
    """Where each scalar of ``wanted`` stands (start, end, quoting), and each list of
    ``grown`` (its items' column, the end of its last item's last scalar); None when one of
    them is not a plain or quoted scalar or a block list, or the text is not one document
    of mappings and lists PyYAML's pure-Python parser reads."""
    import yaml  # (here, not at import: PyYAML is bound where YAML is read)

    walk = _Walk(text, wanted, grown)
    documents = 0
    try:
        for ev in yaml.parse(text, Loader=yaml.SafeLoader):
            if isinstance(ev, yaml.DocumentStartEvent):
                documents += 1
                if documents > 1:
                    return None
            elif isinstance(ev, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                walk.end(ev)
            elif not isinstance(ev, (yaml.StreamStartEvent, yaml.StreamEndEvent,
                                     yaml.DocumentEndEvent)) and not walk.key(ev,
                                                                             yaml.ScalarEvent):
                walk.node(ev, yaml)
    except _Refused:
        return None
    found = walk.found
    if len(found.scalars) != len(wanted) or len(found.sequences) != len(grown) or \
            any(last < 0 and not flow for _, last, flow, _ in found.sequences.values()):
        return None
    return found


def _flow_item(item: Any) -> str:
    """``item`` in a flow list (JSON; every character past ASCII escaped when one is not
    printable: a raw U+2028 would be a line break to YAML 1.1)."""
    text = json.dumps(item, ensure_ascii=False)
    return text if text.isprintable() else json.dumps(item)


def _items(items: list[Any], column: int, newline: str) -> str | None:
    """``items`` as block-sequence entries whose ``-`` stands at ``column``."""
    import yaml

    try:
        text = yaml.safe_dump(items, allow_unicode=True, sort_keys=False,
                              default_flow_style=False)
    except yaml.YAMLError:
        return None
    pad = " " * column
    return "".join(pad + line + newline for line in text.splitlines())


def patch_yaml_values(text: str, old: Any, new: Any,
                      read_back: Callable[[str], Any]) -> str | None:
    """``text`` (the YAML of ``old``) with only the scalars that differ in ``new`` rewritten
    where they stand, and the items appended to a list written after its last one (a
    replay's report added to ``source_refs``); None when that cannot be done (see the
    module's text).  ``read_back`` reads a YAML text as the catalog reads it (raising on
    anything it refuses)."""
    import yaml

    scalars: dict[tuple[Any, ...], Any] = {}
    appended: dict[tuple[Any, ...], list[Any]] = {}
    if not changes_of(old, new, (), scalars, appended) or not (scalars or appended) or \
            len(scalars) + len(appended) > MAX_PATCHED:
        return None
    try:
        found = _spans(text, scalars, set(appended))
    except (yaml.YAMLError, RecursionError, IndexError):
        return None
    if found is None:
        return None
    newline = "\r\n" if "\r\n" in text else "\n"
    edits: list[tuple[int, int, str]] = []
    for path, (start, end, style) in found.scalars.items():
        written = _spelled(scalars[path], style)
        if written is None:
            return None
        edits.append((start, end, written))
    for path, (column, last, flow, opened) in found.sequences.items():
        if flow:  # (after its last item, or inside its "[": JSON is YAML's flow style)
            spelled = list(map(_flow_item, appended[path]))
            edits.append((last, last, ", " + ", ".join(spelled)) if last >= 0 else
                         (opened + 1, opened + 1, ", ".join(spelled)))
            continue
        at = text.find("\n", last)
        items = _items(appended[path], column, newline)
        if items is None:
            return None
        if at < 0:  # (the last line has no line end)
            edits.append((len(text), len(text), newline + items.removesuffix(newline)))
        else:
            edits.append((at + 1, at + 1, items))
    out = text
    for start, end, written in sorted(edits, key=lambda e: -e[0]):
        out = out[:start] + written + out[end:]
    try:
        back = read_back(out)
    except (RisuError, ValueError, RecursionError):  # (refused: the document written whole)
        return None
    return out if same_json(back, new) else None
