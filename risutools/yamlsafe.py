"""YAML to plain JSON values, refusing everything JSON cannot hold.

The YAML parser only produces events (libyaml's C parser when PyYAML was built with it,
PyYAML's pure-Python parser otherwise: ``HAVE_LIBYAML``; PyYAML is imported when YAML is
first read); this module composes those
events into JSON values itself, in one pass with an explicit stack (no recursion, no
node tree, no arbitrary Python objects):
- aliases (``*name``) and merge keys (``<<``) are refused: no alias bombs, no
  shared structure;
- only the JSON-compatible tags are accepted (str, int, float, bool, null, seq,
  map); ``!!binary``, ``!!set``, ``!!omap``, ``!!python/...``, custom ``!tags``
  are refused with their line;
- YAML 1.1 timestamps (``2024-01-01``) stay the string they were written as;
- ``.nan``/``.inf`` are refused (JSON has no NaN), and so is a number past a JSON
  number's range in any of YAML 1.1's forms (hexadecimal, binary, octal, sexagesimal:
  bounded by their text before they are built, see :func:`_long_number`);
- mapping keys must be strings (``yes:``/``1:`` are refused: quote them) and may
  not repeat;
- nesting deeper than ``max_depth`` is refused, with its line, however deep the text.

Refusals come in the order a reader of the whole document would meet them: a problem
with the document's *syntax* (a parse error, an alias, a repeated anchor) anywhere in a
document wins over a problem with its *values* (a tag, a key, the depth) — the values of
the rest of the document are then no longer built, only its events read to its end. Only
the bounds are refused at once, the rest unread: the values' memory, and a nesting so deep
that the parser stops looking ahead (1,000 levels for libyaml, ``max_depth + 64`` flow
levels for PyYAML's parser).

Each value's line is recorded by its JSON pointer, except where it is the line of its
parent (a flow sequence on one line records one pointer, not one per item): looking a
pointer up by walking to its nearest recorded parent gives every value's own line.
Syntax errors carry the parser's own wording (libyaml and PyYAML word a few differently)
and line.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from risutools.jsonplaces import (
    escape_pointer_token,
    int_digits_limit,
    int_too_long,
    int_too_long_words,
)

if TYPE_CHECKING:
    import yaml

# PyYAML and the classes this module uses of it, bound by :func:`_load_yaml` when YAML is
# first read (importing PyYAML costs every command's start-up ~30 ms, and most runs read
# no YAML at all)
_yaml: Any = None
AliasEvent: Any = None
DocumentEndEvent: Any = None
DocumentStartEvent: Any = None
MappingEndEvent: Any = None
MappingStartEvent: Any = None
ScalarEvent: Any = None
SequenceEndEvent: Any = None
SequenceStartEvent: Any = None
StreamEndEvent: Any = None
MappingNode: Any = None
ScalarNode: Any = None
SequenceNode: Any = None
ComposerError: Any = None
_MarkedYAMLError: Any = None
_PureLoader: Any = None
_HAVE_LIBYAML = False
_C_LOADERS: tuple[type, ...] = ()
_CLOSING: tuple[type, ...] = ()

_STR = "tag:yaml.org,2002:str"
_INT = "tag:yaml.org,2002:int"
_NULL = "tag:yaml.org,2002:null"
_BOOL = "tag:yaml.org,2002:bool"
_FLOAT = "tag:yaml.org,2002:float"
_SCALARS = {_NULL, _BOOL, _INT, _FLOAT, _STR}
_TIMESTAMP = "tag:yaml.org,2002:timestamp"
_DECIMAL = re.compile(r"[-+]?(?:0|[1-9][0-9]{0,17})\Z")


class _EveryChar(frozenset):  # type: ignore[type-arg]
    def __contains__(self, _: object) -> bool:
        return True


_EVERY_CHAR = _EveryChar()
_SEQ = "tag:yaml.org,2002:seq"
_MAP = "tag:yaml.org,2002:map"
_MERGE = "tag:yaml.org,2002:merge"

def __getattr__(name: str) -> Any:
    """``HAVE_LIBYAML``: libyaml's C parser is used (PyYAML built with it); else PyYAML's
    pure-Python parser (PyYAML imported to tell)."""
    if name == "HAVE_LIBYAML":
        _load_yaml()
        return _HAVE_LIBYAML
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class YamlRefused(Exception):
    def __init__(self, why: str, line: int | None, pointer: str = "") -> None:
        super().__init__(why)
        self.why = why
        self.line = line
        self.pointer = pointer


class _Bound(YamlRefused):
    """A bound (the parser's nesting bound, the values' memory) passed: refused at once,
    the rest is not read."""


#: bound on the estimated memory of the values of one YAML file (all its documents): each
#: scalar counts ``SCALAR_COST`` bytes, each sequence or mapping ``CONTAINER_COST``, each
#: value on another line than its parent ``LINE_COST`` more (its entry in the line map)
MAX_YAML_COST = 160 * 1024 * 1024
SCALAR_COST = 64
CONTAINER_COST = 256
LINE_COST = 160


@dataclass
class YamlDocument:
    value: Any
    line: int  # 1-based line where the document starts
    lines: dict[str, int]


def _load_yaml() -> None:
    """Import PyYAML and bind what this module uses of it (once)."""
    global _yaml, AliasEvent, DocumentEndEvent, DocumentStartEvent, MappingEndEvent
    global MappingStartEvent, ScalarEvent, SequenceEndEvent, SequenceStartEvent
    global StreamEndEvent, MappingNode, ScalarNode, SequenceNode, ComposerError
    global _MarkedYAMLError, _PureLoader, _HAVE_LIBYAML, _C_LOADERS, _CLOSING
    if _yaml is not None:
        return
    import yaml as y
    from yaml import composer, events, nodes, scanner

    class PureLoader(y.SafeLoader):
        """PyYAML's pure-Python loader, its flow nesting bounded like libyaml's (whose
        bound is 1,000), but at ``max_depth + 64`` levels: past ``max_depth + 1`` flow
        levels a node is deeper than ``max_depth``, and PyYAML's scanner spends time in
        the square of the depth getting there.  (The margin lets the composer meet the
        depth first, with its pointer, whenever the scanner does not look that far
        ahead.)"""

        flow_limit = 1000

        def fetch_flow_collection_start(self, TokenClass: Any) -> None:
            if self.flow_level >= self.flow_limit:
                raise scanner.ScannerError("while increasing flow level", None,
                                           "exceeded maximum nesting depth", self.get_mark())
            super().fetch_flow_collection_start(TokenClass)

    AliasEvent, DocumentEndEvent = events.AliasEvent, events.DocumentEndEvent
    DocumentStartEvent, MappingEndEvent = events.DocumentStartEvent, events.MappingEndEvent
    MappingStartEvent, ScalarEvent = events.MappingStartEvent, events.ScalarEvent
    SequenceEndEvent, SequenceStartEvent = events.SequenceEndEvent, events.SequenceStartEvent
    StreamEndEvent = events.StreamEndEvent
    MappingNode, ScalarNode, SequenceNode = nodes.MappingNode, nodes.ScalarNode, nodes.SequenceNode
    ComposerError, _MarkedYAMLError = composer.ComposerError, y.MarkedYAMLError
    _PureLoader = PureLoader
    _HAVE_LIBYAML = bool(getattr(y, "__with_libyaml__", False)) and hasattr(y, "CSafeLoader")
    _C_LOADERS = (y.CSafeLoader,) if _HAVE_LIBYAML else ()
    _CLOSING = (SequenceEndEvent, MappingEndEvent)
    _yaml = y


def _loader(text: str, use_libyaml: bool | None, max_depth: int = 64) -> Any:
    _load_yaml()
    c = _HAVE_LIBYAML if use_libyaml is None else use_libyaml
    if c:
        return _yaml.CSafeLoader(text)
    loader = _PureLoader(text)
    loader.flow_limit = min(max_depth + 64, 1000)
    return loader


def load_yaml_documents(text: str, *, max_depth: int, use_libyaml: bool | None = None,
                        lines: bool = True) -> Iterator[YamlDocument]:
    """Yield each document of a YAML stream (YamlRefused / yaml.YAMLError on bad input).

    ``use_libyaml``: None uses libyaml when present; False forces the pure-Python parser
    (True requires libyaml).  ``lines=False``: the line map is not kept (each document's
    ``lines`` holds the root's line only) for a caller that wants the values alone; the
    refusals, their lines and pointers, and the memory bound's count are the same."""
    loader = _loader(text, use_libyaml, max_depth)
    budget = [0]
    try:
        loader.get_event()  # StreamStartEvent
        while not loader.check_event(StreamEndEvent):
            start = loader.get_event()
            assert isinstance(start, DocumentStartEvent)
            doc = _Composer(loader, max_depth, budget, pure=not isinstance(loader, _C_LOADERS),
                            lines=lines)
            value, line = doc.compose()
            yield YamlDocument(value, line, doc.lines)
    finally:
        loader.dispose()


class _Frame:
    """An open sequence or mapping: its value, pointer, depth, line, the pending key."""

    __slots__ = ("depth", "key", "key_lines", "line", "pointer", "value")

    def __init__(self, value: Any, pointer: str, depth: int, line: int) -> None:
        self.value = value
        self.pointer = pointer
        self.depth = depth
        self.line = line
        self.key: str | None = None  # mapping: the key whose value comes next
        self.key_lines: dict[str, int] = {}


#: the values of one file past :data:`MAX_YAML_COST` (YAML's, and the JSON data files'
#: :func:`risutools.values.parse_value` reads: one bound, one line)
TOO_MANY = ("too many values: more than the memory bound allows "
            f"({MAX_YAML_COST >> 20} MiB estimated for the values of one file); split the file")


def _too_many(ev: Any, stack: list[_Frame]) -> _Bound:
    return _Bound(TOO_MANY, ev.start_mark.line + 1, stack[-1].pointer if stack else "")


def _resolving(loader: Any) -> tuple[bool, frozenset[str] | _EveryChar, bool]:
    """What the composer asks of the loader's resolvers, found once for the same resolver
    tables (their objects and sizes: a table an application changes is asked again):
    whether no path resolver was added (PyYAML has none), the first characters a plain
    scalar needs to resolve to anything but a string, and whether a plain decimal integer
    resolves to int (and constructs as ``int()``: PyYAML's own resolvers)."""
    resolvers, paths = loader.yaml_implicit_resolvers, loader.yaml_path_resolvers
    key = (type(loader), id(resolvers), sum(map(len, resolvers.values())), id(paths),
           len(paths))
    got = _RESOLVING.get(key)
    if got is None:
        simple = not paths
        first = frozenset(resolvers) if None not in resolvers else _EVERY_CHAR
        ints = simple and all(loader.resolve(ScalarNode, v, (True, False)) == _INT
                              for v in ("7", "-12", "+3", "0"))
        got = _RESOLVING[key] = (simple, first, ints)
    return got


#: :func:`_resolving`'s answers (a few: one a loader class and its tables)
_RESOLVING: dict[tuple[Any, ...], tuple[bool, frozenset[str] | _EveryChar, bool]] = {}


class _Composer:
    """Composes one document's events (after its DocumentStartEvent) into a JSON value."""

    def __init__(self, loader: Any, max_depth: int, budget: list[int], *, pure: bool,
                 lines: bool = True) -> None:
        self.loader = loader
        self.keep_lines = lines  # False: the line map is not kept (the values alone)
        self.budget = budget  # [estimated bytes] of the file's values so far
        self.max_depth = max_depth
        self.pure = pure  # only the pure-Python parser lets "\ud800" escapes through
        self.lines: dict[str, int] = {}
        self.anchors: dict[str, Any] = {}  # anchor -> start mark
        self.resolved: dict[str, str] = {}  # plain scalar -> its implicit tag
        self.constructed: dict[tuple[str, str], Any] = {}  # (tag, text) -> bool/int/float
        self.simple, self.first_chars, self.fast_ints = _resolving(loader)

    def compose(self) -> tuple[Any, int]:
        """(value, start line) of the document; consumes its DocumentEndEvent."""
        stack: list[_Frame] = []
        root: Any = None
        root_line = 1
        deferred: BaseException | None = None
        get = self.loader.get_event
        budget = self.budget
        while True:
            try:
                ev: Any = get()
            except _MarkedYAMLError as exc:
                bound = self._too_deep(exc, stack)
                if bound is None:
                    raise
                raise bound from None
            cls = type(ev)
            if cls in _CLOSING:
                if deferred is None:
                    stack.pop()
                continue
            if cls is DocumentEndEvent:
                if deferred is not None:
                    raise deferred
                return root, root_line
            if cls is AliasEvent:
                raise YamlRefused(
                    f"YAML alias *{ev.anchor} is not allowed; write the value out "
                    "instead",
                    ev.start_mark.line + 1,
                )
            if ev.anchor is not None:
                self._anchor(ev)
            if deferred is not None:
                continue  # only looking for syntax problems until the document ends
            budget[0] += SCALAR_COST if cls is ScalarEvent else CONTAINER_COST
            if budget[0] > MAX_YAML_COST:
                raise _too_many(ev, stack)
            try:
                if not stack:
                    root_line = ev.start_mark.line + 1
                    root = self._node(ev, None, stack)
                else:
                    top = stack[-1]
                    if type(top.value) is dict and top.key is None:
                        self._key(ev, top)
                    else:
                        self._node(ev, top, stack)
            except _Bound:
                raise
            except YamlRefused as exc:
                deferred = exc
            except (ValueError, KeyError, TypeError, AttributeError, IndexError,
                    OverflowError) as exc:  # !!int x, !!bool maybe, !!int _, ...
                deferred = self._unreadable(exc, ev, stack)

    def _too_deep(self, exc: yaml.MarkedYAMLError, stack: list[_Frame]) -> _Bound | None:
        """libyaml stops at 1,000 levels, looking ahead of the events: that is past
        ``max_depth`` too, and refused as such (where it was met); None: another error."""
        if "maximum nesting depth" not in str(exc.problem) or self.max_depth >= 1000:
            return None
        mark = exc.problem_mark or exc.context_mark
        return _Bound(f"nested deeper than {self.max_depth} levels; flatten the document",
                      mark.line + 1 if mark is not None else None,
                      stack[-1].pointer if stack else "")

    def _unreadable(self, exc: Exception, ev: Any, stack: list[_Frame]) -> YamlRefused:
        """A scalar its tag's constructor refused (``!!int x``, ``!!bool maybe``, an
        integer of more digits than Python reads): refused with its line and pointer, in
        the reader's words."""
        if not stack:
            pointer = ""
        elif type(stack[-1].value) is dict and stack[-1].key is None:
            pointer = stack[-1].pointer  # (a key)
        else:
            pointer = self._pointer(stack[-1])
        too_long = int_too_long(exc) if isinstance(exc, ValueError) else None
        if isinstance(exc, OverflowError):  # (arithmetic past a range: bounded before)
            too_long = f"{_shown(ev)} is out of a JSON number's range (it reads as Infinity)"
        why = (f"{too_long}; write a number or a string" if too_long is not None else
               f"{_shown(ev)} cannot be read as its tag says ({_said(exc)}); remove the tag "
               "or write a value of its type")
        return YamlRefused(why, ev.start_mark.line + 1, pointer)

    def _anchor(self, ev: Any) -> None:
        """Remember an anchor (no alias may use it); a second one of the same name is
        PyYAML's composer error."""
        anchor = ev.anchor
        if anchor in self.anchors:
            raise ComposerError(
                f"found duplicate anchor {anchor!r}; first occurrence",
                self.anchors[anchor], "second occurrence", ev.start_mark)
        self.anchors[anchor] = ev.start_mark

    def _tag(self, ev: Any) -> str:
        """The node's tag, resolved as PyYAML's composer does (``Resolver.resolve``, with
        its outcome for short plain scalars remembered)."""
        tag = ev.tag
        if tag is not None and tag != "!":
            return str(tag)
        cls = type(ev)
        if not self.simple:  # an application added path resolvers: ask the resolver
            kind = {ScalarEvent: ScalarNode, SequenceStartEvent: SequenceNode}.get(cls, MappingNode)
            return str(self.loader.resolve(kind, getattr(ev, "value", None), ev.implicit))
        if cls is SequenceStartEvent:
            return _SEQ
        if cls is MappingStartEvent:
            return _MAP
        if not ev.implicit[0]:
            return _STR
        value = ev.value
        if value and value[0] not in self.first_chars:
            return _STR  # no implicit resolver starts with this character
        got = self.resolved.get(value)
        if got is None:
            got = str(self.loader.resolve(ScalarNode, value, ev.implicit))
            if len(value) <= 64 and len(self.resolved) < 4096:
                self.resolved[value] = got
        return got

    def _key(self, ev: Any, top: _Frame) -> None:
        kline = ev.start_mark.line + 1
        tag = self._tag(ev)
        if tag == _MERGE:
            raise YamlRefused("YAML merge key << is not allowed; write the keys out instead",
                              kline, top.pointer)
        if not isinstance(ev, ScalarEvent) or tag != _STR:
            shown = ev.value if isinstance(ev, ScalarEvent) else "(collection)"
            raise YamlRefused(f"mapping key {shown!r} is not a string; quote it", kline,
                              top.pointer)
        key = str(ev.value)
        if self.pure:  # a key too ("\ud800" escapes pass PyYAML's parser)
            _check_surrogates(key, kline, top.pointer)
        if key in top.value:
            raise YamlRefused(
                f"duplicate key {key!r} (first at line {top.key_lines[key]}); remove or rename "
                "one of them", kline, f"{top.pointer}/{escape_pointer_token(key)}")
        top.key_lines[key] = kline
        top.key = key

    @staticmethod
    def _pointer_size(parent: _Frame) -> int:
        """The length of :meth:`_pointer`'s answer, without writing it."""
        pv = parent.value
        if type(pv) is dict:
            key = parent.key or ""
            return len(parent.pointer) + 1 + len(key) + key.count("~") + key.count("/")
        return len(parent.pointer) + 1 + len(str(len(pv)))

    @staticmethod
    def _pointer(parent: _Frame) -> str:
        """The pointer of the node that comes next in ``parent``."""
        pv = parent.value
        if type(pv) is dict:
            return f"{parent.pointer}/{escape_pointer_token(parent.key or '')}"
        return f"{parent.pointer}/{len(pv)}"

    def _node(self, ev: Any, parent: _Frame | None, stack: list[_Frame]) -> Any:
        line = ev.start_mark.line + 1
        cls = type(ev)
        pointer: str | None
        if parent is None:
            pointer, depth = "", 0
            self.lines[""] = line
        else:
            depth = parent.depth + 1
            pointer = None
            if line != parent.line:
                if self.keep_lines:
                    pointer = self._pointer(parent)
                    self.lines[pointer] = line
                # counted either way, its pointer's characters too: the same bound, and a
                # long key over many lines (each a pointer that long) is within it
                self.budget[0] += LINE_COST + self._pointer_size(parent)
        if depth > self.max_depth:  # a value problem: deferred, like a tag or a key
            raise YamlRefused(f"nested deeper than {self.max_depth} levels; flatten the document",
                              line, pointer if pointer is not None else self._pointer(parent))  # type: ignore[arg-type]
        value: Any
        if (cls is ScalarEvent and self.fast_ints and ev.tag is None and ev.implicit[0]
                and _DECIMAL.match(ev.value)):
            value = int(ev.value)
        elif cls is ScalarEvent:
            value = self._scalar(ev, self._tag(ev), line, parent)
        else:
            tag = self._tag(ev)
            if pointer is None:
                pointer = self._pointer(parent)  # type: ignore[arg-type]
                if parent is not None and line == parent.line:  # (else counted above)
                    self.budget[0] += len(pointer)
            if cls is SequenceStartEvent:
                if tag != _SEQ:
                    raise YamlRefused(f"YAML tag {tag} builds a non-JSON value; remove the tag "
                                      "(plain JSON values only)", line, pointer)
                value = []
            else:
                if tag != _MAP:
                    raise YamlRefused(f"YAML tag {tag} builds a non-JSON value; remove the tag "
                                      "(plain JSON values only)", line, pointer)
                value = {}
            stack.append(_Frame(value, pointer, depth, line))
        if parent is not None:
            pv = parent.value
            if type(pv) is dict:
                pv[parent.key] = value
                parent.key = None
            else:
                pv.append(value)
        return value

    def _scalar(self, ev: Any, tag: str, line: int, parent: _Frame | None) -> Any:
        if tag == _STR:
            value: Any = ev.value
            if self.pure:
                try:
                    value.encode("utf-8")
                except UnicodeEncodeError:
                    _check_surrogates(value, line, self._pointer(parent) if parent else "")
            return value
        if tag == _NULL:
            return None
        if tag == _TIMESTAMP:
            return str(ev.value)
        if tag not in _SCALARS:
            raise YamlRefused(f"YAML tag {tag} builds a non-JSON value; remove the tag "
                              "(plain JSON values only)", line,
                              self._pointer(parent) if parent else "")
        if len(ev.value) > _SHORT_NUMBER and tag != _BOOL:
            try:
                value = _long_number(tag, ev.value)
            except _OutOfRange as exc:
                raise YamlRefused(exc.why, line, self._pointer(parent) if parent else "") from None
            if value is not None:
                return value
        memo = (tag, ev.value)
        if memo in self.constructed:
            return self.constructed[memo]
        node = ScalarNode(tag, ev.value, ev.start_mark, ev.end_mark, style=ev.style)
        value = self.loader.yaml_constructors[tag](self.loader, node)
        if isinstance(value, float) and not math.isfinite(value):
            raise YamlRefused(_not_finite(ev.value), line, self._pointer(parent) if parent else "")
        if len(ev.value) <= 64 and len(self.constructed) < 4096:
            self.constructed[memo] = value
        return value


def _said(exc: Exception) -> str:
    """What a constructor's exception says, on one line and at most 120 characters."""
    if isinstance(exc, KeyError):  # (a table lookup: !!bool maybe)
        return "not one of its values"
    text = " ".join(str(exc).split())
    return text if len(text) <= 120 else text[:117] + "..."


def _shown(ev: Any) -> str:
    v = getattr(ev, "value", None)
    return repr(v if isinstance(v, str) and len(v) <= 50 else "(value)")


def _check_surrogates(s: str, line: int, pointer: str) -> None:
    try:
        s.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise YamlRefused(
            f"string holds an unpaired surrogate U+{ord(s[exc.start]):04X} (not valid "
            "Unicode); fix the text",
            line, pointer,
        ) from None


# --------------------------------------------------------------------------- numbers
#
# PyYAML reads a decimal integer with Python's ``int`` (which refuses more digits than
# :func:`~risutools.jsonplaces.int_digits_bound`), but builds its other number forms by
# arithmetic: hexadecimal (``0x``), binary (``0b``), octal (``0``, ``0o`` under ``!!int``)
# and sexagesimal (``1:30:00``) integers, sexagesimal floats (``1:30.5``), underscores and
# a sign allowed in each.  A long number's text is bounded here before anything is built,
# by its size: an integer of more decimal digits than :func:`int_digits_limit`, and a float
# past a double's range, are refused as a decimal integer past the bound and ``1.0e+400``
# are (so a huge form costs nothing: its digits are counted, not read).

#: a number's text at most this long is within every bound (64 hexadecimal digits, 32
#: sexagesimal parts) and is built by PyYAML's constructor as it is
_SHORT_NUMBER = 64
#: a sexagesimal float's parts, past its leading zero parts: more than 174 overflow a
#: double's range from their leading part (60 ** 174 > 1.8e308: PyYAML's own sum raises
#: OverflowError), and more than 357 overflow it from any leading part but 0 (60 ** 356 *
#: 5e-324, the least double, is past it); between the two the sum is taken exactly
_FLOAT_PARTS, _FLOAT_PARTS_MAX = 174, 357
_DECIMAL_PART = re.compile(r"\s*[-+]?[0-9]+\s*\Z")
_LOG10_60 = math.log10(60)
#: the texts ``int(text, base)`` reads as they are written (another is read, or refused, by
#: ``int`` itself: its size bounded after)
_BASE_DIGITS = {2: re.compile(r"\s*[01]+\s*\Z"), 8: re.compile(r"\s*0[oO]?[0-7]*\s*\Z"),
                16: re.compile(r"\s*[0-9a-fA-F]+\s*\Z")}
_LOG2_10 = math.log2(10)


class _OutOfRange(Exception):
    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


def _not_finite(text: str) -> str:
    shown = text if len(text) <= 40 else f"{text[:24]}... ({len(text)} characters)"
    return f"{shown} is not a JSON number (NaN/Infinity); write a number or null"


def _signed(text: str, lower: bool = False) -> tuple[int, str]:
    """PyYAML's reading of a number's sign: (+1 or -1, the text after it)."""
    v = text.replace("_", "")
    if lower:
        v = v.lower()
    sign = -1 if v[:1] == "-" else 1
    return sign, v[1:] if v[:1] in ("+", "-") else v


def _long_number(tag: str, text: str) -> Any:
    """The value of a long ``!!int``/``!!float`` text as PyYAML's constructor builds it
    (the same arithmetic), or None for the constructor to build (a decimal float: its
    ``float`` reads any length, to an infinity at worst).  Raises :class:`_OutOfRange`
    past the bounds, and ValueError where the constructor would."""
    if tag == _INT:
        sign, v = _signed(text)
        return None if not v else sign * _long_int(v)
    if tag == _FLOAT:
        sign, v = _signed(text, lower=True)
        if ":" not in v:
            return None
        value = sign * _sexagesimal_float(v)
        if not math.isfinite(value):
            raise _OutOfRange(_not_finite(text))
        return value
    return None


def _long_int(v: str) -> int:
    """An unsigned ``!!int`` text's value (PyYAML's ``construct_yaml_int``), its size
    bounded first by the digits it has."""
    limit = int_digits_limit()
    if v.startswith("0b"):
        return _based_int(v[2:], 2, limit)
    if v.startswith("0x"):
        return _based_int(v[2:], 16, limit)
    if v[0] == "0":
        body = v[1:].lstrip("0")
        return _based_int(v, 8, limit, len(body[1:] if body[:1] in "oO" else body))
    if ":" in v:
        return _sexagesimal_int(v.split(":"), limit)
    if len(v.strip().lstrip("0")) > limit:
        raise _OutOfRange(f"{int_too_long_words()}; write a number or a string")
    return int(v)


def _too_big(value: int, limit: int) -> None:
    """Refuse an integer of more than ``limit`` decimal digits."""
    if value.bit_length() > limit * _LOG2_10 - 1 and abs(value) >= _ten_to(limit):
        raise _OutOfRange(f"{int_too_long_words()}; write a number or a string")


def _ten_to(n: int) -> int:
    got = _POWERS.get(n)
    if got is None:
        got = _POWERS[n] = 10 ** n
    return got


_POWERS: dict[int, int] = {}


def _based_int(digits: str, base: int, limit: int, significant: int | None = None) -> int:
    """``int(digits, base)`` (a power of two: read in linear time), refused unread when
    its significant digits are more than ``limit`` decimal digits can hold."""
    if significant is None:
        significant = len(digits.strip().lstrip("0"))
    if (significant - 1) * math.log2(base) > limit * _LOG2_10 + 1 and \
            _BASE_DIGITS[base].match(digits):
        raise _OutOfRange(f"{int_too_long_words()}; write a number or a string")
    value = int(digits, base)
    _too_big(value, limit)
    return value


def _sexagesimal_int(parts: list[str], limit: int) -> int:
    """Σ part × 60^place (each part read by ``int``); its leading zero parts add nothing,
    and more parts, or a part of more digits, than ``limit`` digits can hold are refused
    before the sum."""
    digits = []
    for part in parts:
        if len(part) > limit and _DECIMAL_PART.match(part) and \
                len(part.strip().lstrip("+-").lstrip("0")) > limit:
            raise _OutOfRange(f"{int_too_long_words()}; write a number or a string")
        digits.append(int(part))
    start = 0
    while start < len(digits) - 1 and digits[start] == 0:
        start += 1
    if (len(digits) - start - 1) * _LOG10_60 > limit + 1:
        raise _OutOfRange(f"{int_too_long_words()}; write a number or a string")
    value, base = 0, 1
    for digit in reversed(digits[start:]):
        value += digit * base
        base *= 60
    _too_big(value, limit)
    return value


def _sexagesimal_float(v: str) -> float:
    """Σ part × 60^place (each part read by ``float``) as PyYAML sums it; its leading zero
    parts add nothing, a sum past a double's range is an infinity (never OverflowError)."""
    digits = [float(part) for part in v.split(":")]
    start = 0
    while start < len(digits) - 1 and digits[start] == 0.0:
        start += 1
    digits = digits[start:]
    if not all(map(math.isfinite, digits)):
        return math.inf  # (an infinity or NaN among them: refused as the sum would be)
    if len(digits) > _FLOAT_PARTS_MAX:
        return math.inf
    if len(digits) > _FLOAT_PARTS:
        exact = sum((Fraction(d) * 60 ** i for i, d in enumerate(reversed(digits))),
                    Fraction(0))
        return float(exact) if abs(exact) <= sys.float_info.max else math.inf
    value, base = 0.0, 1
    for digit in reversed(digits):
        value += digit * base
        base *= 60
    return value
