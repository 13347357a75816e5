"""Places in a JSON value and the full scan of a JSON text (what :mod:`risutools.jsonlines`
walks to a pointer, and the loaders read when ``json`` refuses a text).

A place is written as a JSON pointer only when one is needed (:data:`Place`,
:func:`pointer_at`); the scan keeps its lines as a tree of the text's keys
(:class:`Lines`): both stay linear in the text whatever its keys and its nesting.
"""

from __future__ import annotations

import io
import math
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any


def escape_pointer_token(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def pointer_of(path: Iterable[Any]) -> str:
    """The JSON pointer of a path given whole (its keys and indexes, in order)."""
    return "".join("/" + escape_pointer_token(str(t)) for t in path)


#: a place in a JSON value whose pointer is not written yet: ``(its container's place, its
#: key or index)``, None for the root.  A walk that hands each value its place makes one
#: tuple a value, sharing its container's; one that wrote each value's pointer made a string
#: as long as every key above it, a value: quadratic under a long key (a key of 100,000
#: characters over 20,000 values: 2 GB).  :func:`pointer_at` writes one when it is needed.
Place = tuple["Place", str | int] | None


def pointer_at(place: Place, limit: int | None = None) -> str:
    """The JSON pointer of ``place``; with ``limit``, that of its nearest place (itself or a
    container above it) whose pointer is at most ``limit`` characters (the root's, ``""``,
    when even the first step is longer): a place under a key of a million characters is
    shown by the pointer of what holds that key."""
    tokens: list[str | int] = []
    while place is not None:
        place, token = place
        tokens.append(token)
    parts: list[str] = []
    size = 0
    for token in reversed(tokens):
        text = str(token)
        if limit is not None and size + 1 + len(text) > limit:
            break  # (escaped, it is no shorter: not escaped to be dropped)
        part = "/" + escape_pointer_token(text)
        size += len(part)
        if limit is not None and size > limit:
            break
        parts.append(part)
    return "".join(parts)


#: how many containers open a scan records the values of: deeper than any document a reader
#: accepts (``values.MAX_DEPTH``, ``formats.jsonsafe.MAX_DEPTH``); below it a scan keeps one
#: byte a level (whether it is an object), so that its memory stays linear in the text
SCAN_DEPTH = 256


class Lines(Mapping[str, int]):
    """The lines :func:`scan` found, by pointer: a tree of the text's keys and indexes (each
    key held once), read a pointer at a time; a pointer string is made only when one is
    asked for (iteration)."""

    __slots__ = ("_root",)

    def __init__(self) -> None:
        #: a node: [its line, its members by key or index (as text), or None]
        self._root: list[Any] | None = None

    def _node(self, pointer: str) -> list[Any] | None:
        node = self._root
        if node is None or (pointer and not pointer.startswith("/")):
            return None
        if not pointer:
            return node
        for token in pointer[1:].split("/"):
            key = token.replace("~1", "/").replace("~0", "~") if "~" in token else token
            if "~" in token and escape_pointer_token(key) != token:
                return None  # (not how a pointer writes a key: no key of the text)
            members = node[1]
            node = members.get(key) if members is not None else None
            if node is None:
                return None
        return node

    def __getitem__(self, pointer: str) -> int:
        node = self._node(pointer) if isinstance(pointer, str) else None
        if node is None:
            raise KeyError(pointer)
        line: int = node[0]
        return line

    def __iter__(self) -> Iterator[str]:
        if self._root is None:
            return
        stack: list[tuple[str, list[Any]]] = [("", self._root)]
        while stack:
            ptr, node = stack.pop()
            yield ptr
            if node[1] is not None:
                stack.extend((f"{ptr}/{escape_pointer_token(k)}", child)
                             for k, child in reversed(node[1].items()))

    def __len__(self) -> int:
        return sum(1 for _ in self)


@dataclass
class ScanResult:
    lines: Lines = field(default_factory=Lines)  # pointer -> 1-based line
    duplicate: tuple[str, int] | None = None  # (pointer of the repeated key, its line)
    nonfinite: tuple[str, int, str] | None = None  # (pointer, line, token)
    #: the text nests deeper than :data:`SCAN_DEPTH`: what is below that is not recorded
    #: (no line, no repeated key, no NaN found there)
    deeper: bool = False


_WS = frozenset(" \t\r\n")


def scan(text: str, first_line: int = 1) -> ScanResult:
    """Scan JSON ``text``; record each value's line by its pointer (:class:`Lines`), the first
    repeated key and the first NaN, Infinity or overflowing number, to :data:`SCAN_DEPTH`
    levels.  Linear in the text in time and memory whatever its shape: no pointer is
    written but those of the repeated key and the number (a long key above many values
    made one string a value: 2 GB for 160 KB of text)."""
    res = ScanResult()
    # stack entries: [is an object, its node in res.lines, next index, keys seen, its token]
    stack: list[list[Any]] = []
    deep = bytearray()  # the levels past SCAN_DEPTH: 1 an object, 0 an array
    i = 0
    n = len(text)
    line = first_line
    expect_key = False
    current_key: str | None = None
    while i < n:
        c = text[i]
        if c in _WS:
            if c == "\n":
                line += 1
            i += 1
        elif c == '"':
            start = i
            i, line = _string_end(text, i, line)
            if deep:
                expect_key = expect_key and not deep[-1]
            elif expect_key and stack and stack[-1][0]:  # (a key: the one string decoded)
                current_key = _join_surrogates(_read_string(text, start, i))
                _key(res, stack, current_key, line)
                expect_key = False
            else:
                _value(res, stack, current_key, line)
        elif c in "{[]},:":
            expect_key = _punctuation(c, res, stack, deep, current_key, line, expect_key)
            i += 1
        else:
            i = _bare_token(text, i, res, stack, None if deep else current_key, line, deep)
    return res


def _token(stack: list[list[Any]], current_key: str | None) -> str | int:
    """The key or index of the value that starts now in the container on top of ``stack``."""
    top = stack[-1]
    return str(current_key) if top[0] else int(top[2])


def _pointer(stack: list[list[Any]], token: str | int | None) -> str:
    """The pointer of the member ``token`` of the container on top of ``stack`` (the root's:
    ``""``, when ``stack`` is empty)."""
    if not stack:
        return ""
    return "".join("/" + escape_pointer_token(str(e[4])) for e in stack[1:]) + \
        "/" + escape_pointer_token(str(token))


def _value(res: ScanResult, stack: list[list[Any]], current_key: str | None,
           line: int) -> list[Any]:
    """The node of the value that starts now (its line recorded if it is the first there)."""
    if not stack:
        if res.lines._root is None:
            res.lines._root = [line, None]
        return res.lines._root
    top = stack[-1]
    token = str(current_key) if top[0] else str(top[2])
    members = top[1][1]
    if members is None:
        members = top[1][1] = {}
    node: list[Any] | None = members.get(token)
    if node is None:
        node = members[token] = [line, None]
    return node


def _key(res: ScanResult, stack: list[list[Any]], key: str, line: int) -> None:
    """An object's key: its line, and the first key repeated in its object."""
    seen = stack[-1][3]
    assert isinstance(seen, set)
    if key in seen and res.duplicate is None:
        res.duplicate = (_pointer(stack, key), line)
    seen.add(key)
    _value(res, stack, key, line)


def _punctuation(c: str, res: ScanResult, stack: list[list[Any]], deep: bytearray,
                 current_key: str | None, line: int, expect_key: bool) -> bool:
    """Open or close a container, or move past ``,``/``:``; whether a key comes next."""
    if c in "{[":
        if deep or len(stack) >= SCAN_DEPTH:
            deep.append(c == "{")
            res.deeper = True
        else:
            token = _token(stack, current_key) if stack else None
            node = _value(res, stack, current_key, line)
            stack.append([True, node, 0, set(), token] if c == "{"
                         else [False, node, 0, None, token])
        return True if c == "{" else expect_key
    if c in "}]":
        if deep:
            deep.pop()
        elif stack:
            stack.pop()
        return False
    if c == ",":
        if deep:
            return True if deep[-1] else expect_key
        if stack:
            if stack[-1][0]:
                return True
            stack[-1][2] += 1
    return expect_key


def int_digits_bound() -> int:
    """The most digits Python's ``int`` reads from text (``json`` refuses a longer integer
    with a ``ValueError``); 0: no bound (Python before 3.11, or the bound lifted)."""
    get = getattr(sys, "get_int_max_str_digits", None)
    return int(get()) if get is not None else 0


#: Python's default bound on an integer's digits (``sys.int_info.default_max_str_digits``),
#: the bound YAML's other integer forms are held to where Python has none (3.10)
DEFAULT_INT_DIGITS = 4300


def int_digits_limit() -> int:
    """The most decimal digits an integer read from YAML may have, in any of its forms
    (decimal, hexadecimal, octal, binary, sexagesimal): Python's bound, else its default."""
    return int_digits_bound() or DEFAULT_INT_DIGITS


def bounded_int(text: str) -> int:
    """``int`` of a JSON integer token, refused past :data:`DEFAULT_INT_DIGITS` digits with
    the words Python 3.11+ refuses one with (:func:`int_too_long` knows them): where Python
    bounds no integer (3.10), ``json`` would read any length, in time quadratic in it."""
    if len(text.lstrip("-")) > DEFAULT_INT_DIGITS:
        raise ValueError(f"Exceeds the limit ({DEFAULT_INT_DIGITS} digits) for integer "
                         "string conversion")
    return int(text)


#: ``parse_int`` for every ``json`` reading of untrusted text: :func:`bounded_int` where
#: Python bounds no integer's digits (3.10), else None (Python's own ``int``, as bounded)
PARSE_INT: Callable[[str], int] | None = None if int_digits_bound() else bounded_int


def int_too_long_words() -> str:
    """The reader's words for an integer past :func:`int_digits_limit`."""
    return (f"an integer of more than {int_digits_limit()} digits is out of a JSON number's "
            "range (it reads as Infinity)")


def int_too_long(exc: BaseException) -> str | None:
    """The reader's words for Python's refusal of an integer past its digit bound (its own
    text names a setting of Python, not the input); None for any other ``ValueError``."""
    if "integer string conversion" not in str(exc):
        return None
    return int_too_long_words()


def _overflows(token: str) -> bool:
    """Whether a number token reads as an infinity: one with a fraction or an exponent
    past a float's range, or an integer longer than Python reads (thousands of digits:
    JavaScript reads it as Infinity too)."""
    if "." not in token and "e" not in token and "E" not in token:
        if len(token) <= 640:  # (Python's smallest digit bound: no lookup per integer)
            return False
        bound = int_digits_bound()
        return bool(bound) and len(token.lstrip("+-")) > bound
    try:
        return math.isinf(float(token))
    except ValueError:
        return False


def _bare_token(text: str, i: int, res: ScanResult, stack: list[list[Any]],
                current_key: str | None, line: int, deep: bytearray) -> int:
    """A number, true/false/null or NaN/Infinity at ``i``: its line (none past
    :data:`SCAN_DEPTH`); the index after it."""
    n = len(text)
    j = i
    while j < n and text[j] not in _WS and text[j] not in ",]}:":
        j += 1
    if not deep:
        _value(res, stack, current_key, line)
        token = text[i:j]
        if res.nonfinite is None and (token.lstrip("+-") in ("NaN", "Infinity")
                                      or _overflows(token)):
            res.nonfinite = (_pointer(stack, _token(stack, current_key) if stack else None),
                             line, token)
    return max(j, i + 1)


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f"}


#: a run of a string literal's characters up to its next quote, backslash or line break
_PLAIN_RUN = re.compile(r'[^"\\\n]*')


def _string_end(text: str, i: int, line: int) -> tuple[int, int]:
    """The string literal opening at ``text[i]``: the index after its closing quote, and the
    line it ends on (lenient: an escape is a backslash and the character after it, ``\\u``
    and four more).  Nothing is built: runs of plain characters are passed in one match
    each, a step an escape (a value of 11 million escapes held 1.2 GB when each one was
    decoded into a list; only a key is decoded, :func:`_read_string`)."""
    n = len(text)
    j = i + 1
    run = _PLAIN_RUN.match
    while True:
        m = run(text, j)
        j = m.end() if m is not None else j
        if j >= n:
            return j + 1, line
        c = text[j]
        if c == '"':
            return j + 1, line
        if c == "\n":
            line += 1
            j += 1
        elif j + 1 < n:  # a backslash
            j += 6 if text[j + 1] == "u" and j + 5 < n else 2
        else:
            j += 1


def _read_string(text: str, i: int, end: int) -> str:
    """The value of the string literal opening at ``text[i]`` whose end :func:`_string_end`
    found (``end``: the index after its closing quote, or past the text); lenient: a bad
    escape is kept as ``?``; written as it is decoded (no object kept a character)."""
    stop = min(end - 1, len(text))
    body = text[i + 1:stop]
    if "\\" not in body:
        return body
    out = io.StringIO()
    j = i + 1
    while j < stop:
        k = text.find("\\", j, stop)
        if k < 0:
            out.write(text[j:stop])
            break
        out.write(text[j:k])
        j = k
        if j + 1 >= len(text):  # (a backslash that ends the text: itself)
            out.write("\\")
            break
        esc = text[j + 1]
        if esc == "u" and j + 5 < len(text):
            try:
                out.write(chr(int(text[j + 2:j + 6], 16)))
            except ValueError:
                out.write("?")
            j += 6
        else:
            out.write(_ESCAPES.get(esc, esc))
            j += 2
    return out.getvalue()


def _join_surrogates(s: str) -> str:
    try:
        return s.encode("utf-16", "surrogatepass").decode("utf-16")
    except UnicodeDecodeError:
        return s
