"""The line of a JSON pointer in a parsed document's text, and small JSON helpers.

Used lazily: only for files that have findings (to give each finding the line of its
field): a walk from the text's start that stops at the pointer (:func:`pointer_line`,
:func:`pointer_line_bytes`, :class:`PointerLines` for many).  The full scan of a text (what
``json.loads`` refuses without saying where: duplicate keys, NaN/Infinity) is
:func:`risutools.jsonplaces.scan`.  Nothing here builds values; every walk is linear in
the text and never recursive, so it is safe on any input.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from risutools.errors import UsageError
from risutools.jsonplaces import Place, escape_pointer_token, pointer_at, pointer_of, scan

# --------------------------------------------------------------------------- one pointer

_SPACE = re.compile(r"[ \t\r\n]*")
#: characters a match of the walk's patterns takes in one go at most, a group each: the
#: engine keeps state for each repetition of a group while it matches, so an unbounded
#: repetition over a long array or a string of escapes would hold memory in proportion
#: (340 MB for 800,000 strings); the walk matches again from where a window stopped
WINDOW = 256
# a string's body from after its opening quote, up to WINDOW escapes (the run of other
# characters between two escapes is one class repetition: no state kept per character)
_STRING_BODY = re.compile(r'[^"\\]*(?:\\.[^"\\]*){0,' + str(WINDOW) + "}", re.DOTALL)
_BARE = re.compile(r"[^ \t\r\n,\]}:]+")
# where an object's first key opens (after its "{"), or the next one (after a value); None
# at the object's end
_FIRST_KEY = re.compile(r'[ \t\r\n]*"')
_NEXT_KEY = re.compile(r'[ \t\r\n]*,[ \t\r\n]*"')
# inside a container: past up to WINDOW strings and runs of everything else (strings of a
# few escapes: a string of more is left to _string_end), up to a bracket
_TO_BRACKET = re.compile(r'(?:[^"\[\]{}]+|"[^"\\]*(?:\\.[^"\\]*){0,16}"){0,' + str(WINDOW) + "}")

# what can stand between two strings outside them: whitespace, punctuation, the bare
# literals' characters (numbers, true, false, null)
_STRUCTURAL = frozenset(" \t\r\n,:[]{}0123456789.eE+-truefalsn")
_AFTER_KEY = re.compile(r"[ \t\r\n]*:[ \t\r\n]*")
_UNKNOWN: Any = object()


class _Malformed(ValueError):
    """The text is not the JSON the walk expects (never for a parsed document's text)."""


def _end(rx: re.Pattern[str], text: str, pos: int) -> int:
    m = rx.match(text, pos)
    if m is None:
        raise _Malformed(pos)
    return m.end()


def pointer_line(text: str, pointer: str, first_line: int = 1, doc: Any = _UNKNOWN
                 ) -> int | None:
    """The line :func:`scan` gives ``pointer`` (or its nearest parent found) in the JSON
    ``text`` of one parsed document: an object member's key line, an array element's
    value line, the root's first token.  A linear walk that stops at the pointer: the
    values before it are skipped by regular expressions (strings, brackets), never
    decoded.  Meant for text a strict JSON parser accepted (no duplicate keys, no control
    character inside a string): on other text it answers as :func:`scan` (which it then
    runs).  None when ``text`` holds no value.

    ``doc``: the value parsed from ``text``, when the caller has it.  A member that is in
    it is then looked up by its key alone when the text allows no doubt (see
    :func:`_unique_key`) instead of walking past the members before it."""
    try:
        pos = _end(_SPACE, text, 0)
        if pos >= len(text):
            return None
        at = pos
        plain = doc is not _UNKNOWN and "\\" not in text
        for token in pointer.split("/")[1:] if pointer else ():
            opener = text[pos]
            found = None
            if opener == "{":
                want = token.replace("~1", "/").replace("~0", "~")
                if (plain and isinstance(doc, dict) and want in doc
                        and escape_pointer_token(want) == token):
                    found = _unique_key(text, pos, want)
                    doc = doc[want]
                else:
                    doc = _UNKNOWN
                    plain = False
                if found is None:
                    found = _member(text, pos, token)
            elif opener == "[":
                found = _element(text, pos, token)
                if plain and found is not None and isinstance(doc, list):
                    doc = doc[int(token)]
                else:
                    plain = False
            if found is None:
                break
            at, pos = found
    except (_Malformed, IndexError, ValueError):
        lines = scan(text, first_line).lines
        while pointer not in lines and pointer:
            pointer = pointer.rsplit("/", 1)[0]
        return lines.get(pointer)
    return first_line + text.count("\n", 0, at)


_SPACE_BYTES = re.compile(rb"[ \t\r\n]*")
_AFTER_KEY_BYTES = re.compile(rb"[ \t\r\n]*:[ \t\r\n]*")
#: the bytes a JSON text's whitespace is made of (and b"", a text's end: ``find`` finds it
#: in any bytes; ``find``, not ``in``, which raises and clears a TypeError within each time)
_SPACES_OR_END = b" \t\r\n"
# an array element that is a string without an escape or a bare scalar, and the comma
# after it (whitespace around both); never an object or an array, which open with a
# bracket neither alternative takes
_SCALAR_ELEMENT_BYTES = re.compile(rb'[ \t\r\n]*(?:"[^"]*"|[^ \t\r\n,\]"\[{]+)[ \t\r\n]*,')


def pointer_line_bytes(data: bytes, pointer: str, doc: Any, first_line: int = 1
                       ) -> int | None:
    """:func:`pointer_line` over the UTF-8 bytes of a parsed JSON document (``data``: no
    byte-order mark), with its value ``doc``: the same line.  Members are found by their
    key alone (:func:`_unique_key`'s reasoning holds for the bytes: a quoted key starts
    with an ASCII quote, which no byte of another character's UTF-8 form is, so it is found
    at the same places; and a line ends at the same newlines), which a byte search does
    several times faster than one in a wide string; an array element is found over the
    bytes when every element before it is a string or another scalar
    (:func:`_element_bytes`); anything else (an element after a container, a backslash in
    the text, a key found more than once) is left to :func:`pointer_line` over the decoded
    text."""
    if data[:1] == b"{":  # (most documents: no space before the value)
        at = pos = 0
    else:
        start = _SPACE_BYTES.match(data)
        at = pos = start.end() if start is not None else len(data)
    cur = doc
    plain = pos < len(data) and data.find(b"\\") < 0  # (find: no TypeError raised within)
    for token in pointer.split("/")[1:] if plain and pointer else ():
        if isinstance(cur, list):
            element = _element_bytes(data, pos, token, cur)
            if element is None:
                plain = False
                break
            at = pos = element
            cur = cur[int(token)]
            continue
        # (a token without "~" is its key itself, escaped as itself: it holds no "/")
        want = token.replace("~1", "/").replace("~0", "~") if "~" in token else token
        if (data[pos:pos + 1] != b"{" or not isinstance(cur, dict) or want not in cur
                or ("~" in token and escape_pointer_token(want) != token) or '"' in want
                or _STRUCTURAL.issuperset(want)):
            plain = False
            break
        quoted = f'"{want}"'.encode()
        after = _key_once(data, quoted, pos)
        if after is None:
            plain = False
            break
        at, pos = after
        cur = cur[want]
    if plain:
        return first_line + data.count(b"\n", 0, at)
    return pointer_line(data.decode("utf-8"), pointer, first_line, doc=doc)


def _key_once(data: bytes, quoted: bytes, pos: int) -> tuple[int, int] | None:
    """Where the key ``quoted`` starts and where its value does (past its colon and the
    spaces around it) when the key is found once from ``pos`` on, else None: none other
    starts after it, overlapping or not (a second ``find`` stops where a count scans on to
    the end).  The usual spelling, ``": "`` then the value, is read without the pattern."""
    found = data.find(quoted, pos)
    if found < 0 or data.find(quoted, found + 1) >= 0:
        return None
    end = found + len(quoted)
    if data[end:end + 2] == b": " and _SPACES_OR_END.find(data[end + 2:end + 3]) < 0:
        return found, end + 2
    after = _AFTER_KEY_BYTES.match(data, end)
    return None if after is None else (found, after.end())


#: lookups a :class:`PointerLines` answers one by one (:func:`pointer_line_bytes`,
#: :func:`pointer_line`: a walk from the document's start, no memory kept) before it keeps
#: what it walked: most documents with findings have a few
FEW_LOOKUPS = 8
#: characters a :class:`PointerLines` counts the newlines of at once (its line table)
LINE_BLOCK = 4096


class PointerLines:
    """The lines of many pointers of one parsed JSON document, as :func:`pointer_line`
    gives each, in time linear in the document and the pointers' depth together.

    One lookup walks from the document's start to its pointer and counts the newlines
    before it: each costs the text before the pointer, so a document with ``k`` findings
    of ``n`` bytes would cost ``k x n`` (an array of 16,000 unknown capabilities: 30 s).
    The first :data:`FEW_LOOKUPS` are asked that way (:func:`pointer_line_bytes` over
    ``data``, else :func:`pointer_line` over ``text``); from the next on, the text is
    decoded once and what a walk meets is kept: each object's members (key -> where its
    key and its value start) read once when a pointer first goes through it, each array's
    element starts as far as a pointer went into it (walked on from there), and the count
    of newlines before every :data:`LINE_BLOCK`-character block (made once).  A lookup
    then costs its depth and at most one block's count; the memory kept is the members
    and elements walked past (at most the document's values, a few words each) and one
    number a block.  The same walk as :func:`pointer_line` (an object member's key line,
    an array element's value line, the nearest parent found), so the same lines
    (tests/test_pointer_lines.py compares them on every pointer of generated documents)."""

    __slots__ = (
        "_arrays",
        "_asked",
        "_blocks",
        "_data",
        "_doc",
        "_first",
        "_objects",
        "_text",
    )

    def __init__(self, doc: Any, *, data: bytes | None = None, text: str | None = None,
                 first_line: int = 1) -> None:
        if (data is None) == (text is None):
            raise ValueError("PointerLines takes the document's bytes or its text")
        self._data, self._text, self._doc, self._first = data, text, doc, first_line
        self._asked = 0
        self._objects: dict[int, dict[str, tuple[int, int]]] = {}
        self._arrays: dict[int, tuple[list[int], list[bool]]] = {}
        self._blocks: list[int] | None = None

    def line(self, pointer: str) -> int | None:
        """The line of the value at ``pointer`` or of its nearest parent found; None when
        the text holds no value."""
        self._asked += 1
        if self._asked <= FEW_LOOKUPS:
            if self._data is not None:
                return pointer_line_bytes(self._data, pointer, self._doc, self._first)
            assert self._text is not None
            return pointer_line(self._text, pointer, self._first, doc=self._doc)
        if self._text is None:
            assert self._data is not None
            self._text, self._data = self._data.decode("utf-8"), None
        try:
            at = self._walk(self._text, pointer)
        except (_Malformed, IndexError, ValueError):  # (not for a parsed document's text)
            return pointer_line(self._text, pointer, self._first, doc=self._doc)
        return None if at is None else self._first + self._newlines_before(at)

    def _walk(self, text: str, pointer: str) -> int | None:
        """Where :func:`pointer_line` stops for ``pointer`` (the start it counts lines
        to), from what is kept."""
        pos = _end(_SPACE, text, 0)
        if pos >= len(text):
            return None
        at = pos
        for token in pointer.split("/")[1:] if pointer else ():
            opener = text[pos]
            if opener == "{":
                found = self._member(text, pos, token)
            elif opener == "[":
                found = self._element(text, pos, token)
            else:
                found = None
            if found is None:
                break
            at, pos = found
        return at

    def _member(self, text: str, pos: int, token: str) -> tuple[int, int] | None:
        """:func:`_member`, the object's members read once."""
        want = _wanted_key(token)
        if want is None:
            return None
        members = self._objects.get(pos)
        if members is None:
            members = self._objects[pos] = {}
            for key, start, value in _keys(text, pos):
                members.setdefault(key, (start, value))  # (the first, as _member)
        return members.get(want)

    def _element(self, text: str, pos: int, token: str) -> tuple[int, int] | None:
        """:func:`_element`, the array walked on from the last element a lookup met."""
        if not token.isdigit() or str(int(token)) != token:
            return None
        want = int(token)
        known = self._arrays.get(pos)
        if known is None:
            first = _end(_SPACE, text, pos + 1)
            empty = text[first] == "]"
            known = self._arrays[pos] = ([] if empty else [first], [empty])
        starts, ended = known
        while len(starts) <= want and not ended[0]:
            after = _end(_SPACE, text, _skip(text, starts[-1]))
            if text[after] != ",":
                ended[0] = True
                break
            starts.append(_end(_SPACE, text, after + 1))
        if want >= len(starts):
            return None
        return starts[want], starts[want]

    def _newlines_before(self, at: int) -> int:
        text = self._text
        assert text is not None
        blocks = self._blocks
        if blocks is None:
            blocks, total = [0], 0
            for start in range(0, len(text), LINE_BLOCK):
                total += text.count("\n", start, start + LINE_BLOCK)
                blocks.append(total)
            self._blocks = blocks
        b = at // LINE_BLOCK
        return blocks[b] + text.count("\n", b * LINE_BLOCK, at)


def _element_bytes(data: bytes, pos: int, token: str, items: list[Any]) -> int | None:
    """Where element ``token`` of the array at ``pos`` starts (what :func:`_element` gives
    over the text), when ``data`` holds no backslash, ``token`` is an index of ``items``
    (the array's value) written as :func:`_element` reads one, and every element before it
    is a string or another scalar; else None.  Without a backslash a string is written
    ``"..."`` with no quote inside, and a scalar is a bare token: each is skipped, with the
    comma after it, by one match of :data:`_SCALAR_ELEMENT_BYTES` (an object or an array
    is not: then None)."""
    if (data[pos:pos + 1] != b"[" or not token.isascii() or not token.isdigit()
            or str(int(token)) != token):
        return None
    want = int(token)
    if want >= len(items):
        return None
    pos += 1
    for _ in range(want):
        m = _SCALAR_ELEMENT_BYTES.match(data, pos)
        if m is None:
            return None
        pos = m.end()
    start = _SPACE_BYTES.match(data, pos)
    return start.end() if start is not None else None


def _unique_key(text: str, pos: int, key: str) -> tuple[int, int] | None:
    """(key start, value start) of the member ``key`` of the object at ``pos``, found by
    its quoted text alone, when that text is there once from ``pos`` on; else None.

    The caller knows the member is in the object and that ``text`` holds no backslash:
    so no string is written with an escape, the member's key is the quoted ``key`` as it
    is, and a quote inside a string cannot be (it would be escaped).  The quoted key can
    then be found elsewhere only as a string equal to it (counted: then it is not there
    once) or across tokens, from a closing quote to an opening one; what lies between
    two strings outside them is whitespace, punctuation and bare literals, so a key with
    a character none of those has cannot be found that way."""
    if '"' in key or _STRUCTURAL.issuperset(key):
        return None
    quoted = f'"{key}"'
    if text.count(quoted, pos) != 1:
        return None
    start = text.find(quoted, pos)
    return start, _end(_AFTER_KEY, text, start + len(quoted))


def _member(text: str, pos: int, token: str) -> tuple[int, int] | None:
    """(key start, value start) of the member of the object at ``pos`` whose escaped key is
    ``token``, or None."""
    want = _wanted_key(token)
    if want is None:
        return None
    for key, start, value in _keys(text, pos):
        if key == want:
            return start, value
    return None


def _wanted_key(token: str) -> str | None:
    """The object key a pointer's ``token`` names, or None when no key escapes to it."""
    want = token.replace("~1", "/").replace("~0", "~")
    return want if escape_pointer_token(want) == token else None


def _keys(text: str, pos: int) -> Iterator[tuple[str, int, int]]:
    """(key, where its quote opens, where its value starts) of each member of the object
    at ``pos``, in order (a key written with an escape decoded)."""
    m = _FIRST_KEY.match(text, pos + 1)
    while m is not None:
        quote = m.end() - 1
        end = _string_end(text, quote)
        value = _end(_AFTER_KEY, text, end)
        raw = text[quote + 1:end - 1]
        yield (raw if "\\" not in raw else json.loads(f'"{raw}"')), quote, value
        m = _NEXT_KEY.match(text, _skip(text, value))


def _string_end(text: str, pos: int) -> int:
    """The index after the string literal whose quote opens at ``pos``, matched a
    :data:`WINDOW` of escapes at a time."""
    i = pos + 1
    while True:
        end = _end(_STRING_BODY, text, i)
        if text[end:end + 1] == '"':
            return end + 1
        if end == i:  # neither its closing quote nor an escape: the string does not end
            raise _Malformed(pos)
        i = end


def _to_bracket(text: str, pos: int) -> int:
    """The index of the next bracket from ``pos`` inside a container (or the text's end),
    past strings and everything else a :data:`WINDOW` at a time."""
    while True:
        end = _end(_TO_BRACKET, text, pos)
        if text[end:end + 1] == '"':  # a string of many escapes, or one that does not end
            end = _string_end(text, end)
        elif end == pos or end >= len(text) or text[end] in "[]{}":
            return end
        pos = end


def _element(text: str, pos: int, token: str) -> tuple[int, int] | None:
    """(value start, value start) of element ``token`` of the array at ``pos``, or None."""
    if not token.isdigit() or str(int(token)) != token:
        return None
    want = int(token)
    pos = _end(_SPACE, text, pos + 1)
    if text[pos] == "]":
        return None
    for _ in range(want):
        pos = _end(_SPACE, text, _skip(text, pos))
        if text[pos] != ",":
            return None
        pos = _end(_SPACE, text, pos + 1)
    return pos, pos


def _skip(text: str, pos: int) -> int:
    """The index after the value that starts at ``pos``."""
    c = text[pos]
    if c == '"':
        return _string_end(text, pos)
    if c not in "{[":
        return _end(_BARE, text, pos)
    depth = 0
    while True:  # one step a bracket: the strings between are skipped in C
        c = text[pos]
        if c in "{[":
            depth += 1
        elif c in "}]":
            depth -= 1
        else:  # a string that does not end
            raise _Malformed(pos)
        pos += 1
        if depth == 0:
            return pos
        pos = _to_bracket(text, pos)


def unpaired_surrogate(value: Any) -> tuple[str, str] | None:
    """The first text in ``value`` (a JSON value built in code or parsed), in document
    order, that holds an unpaired surrogate (``"\\ud800"``: not Unicode, so it has no
    UTF-8 bytes and no canonical form or digest): ``(JSON pointer, why)`` as one line;
    None when there is none.  A key's pointer is its object's (a pointer holding the
    surrogate could not be printed).  Iterative: any depth."""
    stack: list[tuple[Any, Place]] = [(value, None)]  # (places: a pointer made for one)
    while stack:
        v, place = stack.pop()
        if isinstance(v, str):
            bad = surrogate_in(v)
            if bad is not None:
                return pointer_at(place), f"string holds an unpaired surrogate {bad} (not " \
                    "valid Unicode); fix the text"
        elif isinstance(v, dict):
            children = []
            for k, x in v.items():
                bad = surrogate_in(k) if isinstance(k, str) else None
                if bad is not None:
                    return pointer_at(place), f"a key holds an unpaired surrogate {bad} (not " \
                        "valid Unicode); fix the key"
                children.append((x, (place, str(k))))
            stack.extend(reversed(children))
        elif isinstance(v, (list, tuple)):
            stack.extend((x, (place, i)) for i, x in reversed(list(enumerate(v))))
    return None


def surrogate_in(s: str) -> str | None:
    """``U+D800`` for the first unpaired surrogate in ``s``, else None."""
    try:
        s.encode("utf-8")
    except UnicodeEncodeError as exc:
        return f"U+{ord(s[exc.start]):04X}"
    return None


def require_text(value: str, where: str) -> str:
    """``value``, or a UsageError (one line naming the option ``where``) when it holds
    an unpaired surrogate: bytes that are not UTF-8 reach Python that way (a command-line
    value), and no record can hold, hash or sign such text."""
    bad = surrogate_in(value)
    if bad is not None:
        raise UsageError(where, f"not UTF-8 text (it holds bytes that are not UTF-8, "
                         f"read as the unpaired surrogate {bad}); write it in UTF-8")
    return value


#: at most this many values are patched in place (more: the file is written whole)
MAX_PATCHED = 64


def patch_values(text: str, old: Any, new: Any) -> str | None:
    """``text`` (the JSON of ``old``) with only the values that differ in ``new`` rewritten
    where they stand, and the items appended to an array written after its last one in the
    array's own layout (a replay's report added to ``source_refs``): every other byte --
    indentation (tabs or spaces), line ends, key order, escapes, the spelling of numbers --
    kept as the user wrote it, so a status change is a one-line diff.  None when ``new``
    differs otherwise in its shape (a key added or removed, a list shortened, a value of
    another kind of container), past :data:`MAX_PATCHED` changes, or when
    the patched text does not read back as exactly ``new`` (checked by parsing it): the
    caller then writes the document whole."""
    scalars: dict[tuple[Any, ...], Any] = {}
    appended: dict[tuple[Any, ...], list[Any]] = {}
    ascii_only = text.isascii()
    try:
        if not changes_of(old, new, (), scalars, appended) or \
                len(scalars) + len(appended) > MAX_PATCHED:
            return None
        edits = []
        for path, value in scalars.items():
            span = _value_span(text, pointer_of(path))
            if span is None:
                return None
            edits.append((span, json.dumps(value, ensure_ascii=ascii_only)))
        for path, items in appended.items():
            n = len(_old_at(old, path))
            edit = _appended(text, path, n, items, ascii_only) if n else \
                _filled(text, path, items, ascii_only)
            if edit is None:
                return None
            edits.append(edit)
        out = text
        for (start, end), written in sorted(edits, reverse=True):
            out = out[:start] + written + out[end:]
        back = json.loads(out)
    except (_Malformed, IndexError, ValueError, RecursionError):
        return None
    return out if same_json(back, new) else None


def _old_at(value: Any, path: tuple[Any, ...]) -> Any:
    """The value at ``path`` (keys and indexes) in ``value``."""
    for t in path:
        value = value[t]
    return value


def _appended(text: str, path: tuple[Any, ...], n: int, items: list[Any], ascii_only: bool
              ) -> tuple[tuple[int, int], str] | None:
    """The insertion of ``items`` after the ``n``-th (last) element of the array at
    ``path``: each after the separator that stands before the last element (a comma, then
    its line end and indentation as written), laid out with the file's own indentation."""
    last = _value_span(text, pointer_of((*path, n - 1)))
    if last is None:
        return None
    before = _value_span(text, pointer_of((*path, n - 2))) if n > 1 else None
    if before is not None:
        gap = text[before[1]:last[0]]  # ", \n\t\t" as written between two elements
        sep = gap.replace(",", "", 1) if gap.count(",") == 1 else None
    else:
        opener = text.rfind("[", 0, last[0])
        sep = text[opener + 1:last[0]] if opener >= 0 else None
    if sep is None or sep.strip():
        return None
    line_start = sep.rfind("\n") + 1
    pad = sep[line_start:]  # the element's own indentation on its line
    unit = "\t" if "\t" in pad else (" " * max(1, detect_indent(text, 2)))
    newline = "\r\n" if "\r\n" in sep else "\n"
    written = "".join(
        "," + sep + json.dumps(item, ensure_ascii=ascii_only,
                               indent=unit if "\n" in sep else None).replace("\n",
                                                                             newline + pad)
        for item in items)
    return (last[1], last[1]), written


def _filled(text: str, path: tuple[Any, ...], items: list[Any], ascii_only: bool
            ) -> tuple[tuple[int, int], str] | None:
    """The empty array at ``path`` (``[]``, ``[ ]``, ``[\n]``) written with ``items``: on
    one line when the whole file is (its separators: ``", "`` when the file has one, else
    none), else an item a line, indented one step past the line the ``[`` stands on (the
    file's step: a tab, or its first indented line's spaces), the ``]`` back on that
    line's indentation."""
    span = _value_span(text, pointer_of(path))
    if span is None or text[span[0]] != "[":
        return None
    newline = "\r\n" if "\r\n" in text else "\n"
    if "\n" not in text.strip():
        seps = (", ", ": ") if ", " in text or ": " in text else (",", ":")
        return span, json.dumps(items, ensure_ascii=ascii_only, separators=seps)
    line = text[text.rfind("\n", 0, span[0]) + 1:span[0]]
    pad = line[:len(line) - len(line.lstrip(" \t"))]
    first = next((ln for ln in text.splitlines()[1:] if ln[:1] in (" ", "\t")), "")
    unit = "\t" if first.startswith("\t") else " " * max(1, detect_indent(text, 2))
    inner = newline + pad + unit
    written = ("," + inner).join(
        json.dumps(item, ensure_ascii=ascii_only, indent=unit).replace("\n", inner)
        for item in items)
    return span, "[" + inner + written + newline + pad + "]"


def detect_indent(text: str, default: int = 1) -> int:
    """The indentation of a JSON text: that of its first indented line (``default`` when
    none is)."""
    for line in text.splitlines()[1:]:
        stripped = line.lstrip(" ")
        if stripped and stripped != line:
            return len(line) - len(stripped)
    return default


def changes_of(old: Any, new: Any, path: tuple[Any, ...], scalars: dict[tuple[Any, ...], Any],
               appended: dict[tuple[Any, ...], list[Any]]) -> bool:
    """The scalars of ``new`` that differ from ``old``'s (by path), and the items appended
    to an array whose old items are the same (by the array's path), into the two mappings;
    False for any other change of shape (a key added or removed, a list shortened, a value
    of another kind)."""
    if isinstance(old, dict) and isinstance(new, dict):
        if old.keys() != new.keys():
            return False
        return all(changes_of(old[k], new[k], (*path, k), scalars, appended) for k in old)
    if isinstance(old, list) and isinstance(new, list):
        if len(new) < len(old):
            return False
        if len(new) > len(old):
            appended[path] = new[len(old):]
        return all(changes_of(a, b, (*path, i), scalars, appended)
                   for i, (a, b) in enumerate(zip(old, new[:len(old)], strict=True)))
    if isinstance(old, (dict, list)) or isinstance(new, (dict, list)):
        return False
    if type(old) is not type(new) or old != new:
        scalars[path] = new
    return True


def _value_span(text: str, pointer: str) -> tuple[int, int] | None:
    """(start, end) of the value at ``pointer`` in the JSON ``text``, or None."""
    pos = _end(_SPACE, text, 0)
    for token in pointer.split("/")[1:]:
        opener = text[pos]
        found = _member(text, pos, token) if opener == "{" else \
            _element(text, pos, token) if opener == "[" else None
        if found is None:
            return None
        pos = found[1]
    return pos, _skip(text, pos)


def same_json(a: Any, b: Any) -> bool:
    """Equal as JSON values (``True`` is not ``1``, ``1`` is not ``1.0``)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)
