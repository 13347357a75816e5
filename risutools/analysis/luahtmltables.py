"""HTML a Lua script builds in a named table and joins later: ``local t = {"<img src=x ",
"onerror=f()>"}``, ``t[#t + 1] = "..."``, ``t[2] = "..."`` or ``table.insert(t, "...")``,
then ``table.concat(t)``; or in a string it joins to (``h = h .. "<img src=x "``, then
``h = h .. "onerror=f()>"``): what :mod:`.luahtml` reads of a concatenation written in one
place, read of the pieces of each table ``table.concat`` joins and of each string so grown.

Nothing is run: the pieces are the ones written before the ``table.concat`` in the order
they are written (a table constructor assigned to the name starts them again; a loop's
pieces are read once), each read as the template reader reads an item of a table written
in the call (:func:`~risutools.analysis.luafold.template_span`: a literal, a constant, a
concatenation, a format; anything else a hole).  Bounded: at most :data:`MAX_TABLES`
joins a script, :data:`MAX_PIECES` pieces a table (of :data:`MAX_PLACES` places), each
read over at most :data:`MAX_PIECE_SOURCE` characters, the text at most the chain limits
of :mod:`.luahtml`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping

from risutools.analysis.luafold import template_span
from risutools.analysis.lualex import KEYWORDS, NAME, NUM, OP, STR, iter_tokens

#: joins of a named table (``table.concat(t)``) read per script, at most
MAX_TABLES = 16
#: pieces of one table read, at most (past it the text read so far)
MAX_PIECES = 64
#: places a table's pieces are written read, at most (a constructor included)
MAX_PLACES = 4 * MAX_PIECES
#: characters of one piece's source read, at most (a longer piece is a hole)
MAX_PIECE_SOURCE = 2_048
_MAX_PIECE_TOKENS = 256
#: ``table.concat(name)`` or ``table.concat(name, sep)``
_CONCAT = re.compile(
    r"(?<![\w.:])table[ \t]*\.[ \t]*concat[ \t]*\([ \t]*([A-Za-z_]\w*)[ \t]*([,)])")
_OPEN, _CLOSE = frozenset("({["), frozenset(")}]")
#: the tokens a value ends with (a name, a number or a value after them starts a statement)
_VALUE_END = frozenset(")}]")
#: keywords that go on with an expression
_IN_EXPRESSION = frozenset({"and", "or", "not", "nil", "true", "false", "function"})
_Part = tuple[int, str]


def _places(name: str) -> re.Pattern[str]:
    """Where a piece of table ``name`` is written: ``name = {`` (the table made again),
    ``name[#name + 1] =``, ``name[n] =`` (group ``i``: the n-th piece, or one more),
    ``table.insert(name,``."""
    n = re.escape(name)
    return re.compile(
        rf"(?<![\w.:])(?:(?P<new>{n}[ \t]*=[ \t]*(?=\{{))"
        rf"|{n}[ \t]*\[[ \t]*(?:#[ \t]*{n}[ \t]*\+[ \t]*1|(?P<i>\d{{1,4}}))[ \t]*\][ \t]*=(?!=)"
        rf"|(?P<ins>table[ \t]*\.[ \t]*insert[ \t]*\([ \t]*{n}[ \t]*,))")


def joined_tables(code: str, consts: Mapping[str, str], limits: tuple[int, int]
                  ) -> Iterator[tuple[int, list[_Part]]]:
    """(offset of the ``table.concat``, the parts of the text it makes) of each join of a
    named table whose pieces are read (see the module): the pieces written in one table
    ``table.concat({p1, p2, ...}, sep)`` read by the template reader; the first
    :data:`MAX_TABLES` joins."""
    for count, m in enumerate(_CONCAT.finditer(code)):
        if count >= MAX_TABLES:
            return
        sep = ""
        if m.group(2) == ",":
            end = _extent(code, m.end())
            if end is None:
                continue
            sep = ", " + code[m.end():end]
        items = _pieces(code, m.group(1), m.start())
        if items:
            got = template_span("table.concat({" + ", ".join(items) + "}" + sep + ")", 0,
                                consts, limits)
            if got is not None:
                yield m.start(), list(got[0])


#: ``name = name ..``: a string built up by joining to it (``h = h .. "<img src=x "``);
#: each match starts at its ``=`` (a pattern starting with a name is tried at every letter
#: of a script: 1.4x the real corpus's whole analysis), the name before it checked apart
_GROWN_AT = re.compile(r"=[ \t]*([A-Za-z_]\w*)[ \t]*\.\.(?!\.)")
_NAME_BEFORE = re.compile(r"(?<![\w.:])([A-Za-z_]\w*)[ \t]*\Z")


def _grown(code: str) -> Iterator[tuple[str, int]]:
    """(name, offset of the statement) of each ``name = name ..`` in ``code``."""
    for m in _GROWN_AT.finditer(code):
        if m.start() and code[m.start() - 1] in "=~<>":  # (``==``, ``~=``, ``<=``, ``>=``)
            continue
        before = _NAME_BEFORE.search(code, max(0, m.start() - 80), m.start())
        if before is not None and before.group(1) == m.group(1):
            yield m.group(1), before.start()


def grows_strings(code: str) -> bool:
    """Whether ``code`` builds a string up by joining to it (``h = h .. v``)."""
    return next(_grown(code), None) is not None


def grown_strings(code: str, consts: Mapping[str, str], limits: tuple[int, int]
                  ) -> Iterator[tuple[int, list[_Part]]]:
    """(offset of the last ``name = name .. v``, the parts of the text it makes) of each
    string built up by joining to it: its value where it is set whole (``local h = ""``,
    ``h = "<b>"``), then each value joined in the order written (as the pieces of a named
    table are; the first :data:`MAX_TABLES` names)."""
    names: dict[str, int] = {}
    for name, at in _grown(code):
        if name in names or len(names) < MAX_TABLES:
            names[name] = at
    for name, last in names.items():
        n = re.escape(name)
        places = re.compile(rf"(?<![\w.:])(?:local[ \t]+)?{n}[ \t]*=(?!=)[ \t]*"
                            rf"(?P<grow>{n}[ \t]*\.\.(?!\.))?")
        pieces: list[str] = []
        for count, m in enumerate(places.finditer(code)):
            if count >= MAX_PLACES or m.start() > last:
                break
            end = _extent(code, m.end())
            src = code[m.end():end].strip() if end is not None else "nil"
            if m.group("grow") is None:
                pieces = [src or "nil"]
            elif len(pieces) < MAX_PIECES:
                pieces.append(src or "nil")
        got = template_span("table.concat({" + ", ".join(pieces) + "})", 0, consts, limits)
        if got is not None:
            yield last, list(got[0])


def _pieces(code: str, name: str, before: int) -> list[str]:
    """The sources of the pieces of table ``name`` written before ``before``, in order (a
    constructor's items as written in it)."""
    pieces: list[str] = []
    for count, m in enumerate(_places(name).finditer(code, 0, before)):
        if count >= MAX_PLACES:
            break
        at = m.end()
        if m.group("new") is not None:
            pieces = _items(code, at + 1)
            continue
        end = _extent(code, at)
        if end is not None and m.group("ins") is not None and code.startswith(",", end):
            at = end + 1  # (``table.insert(t, pos, value)``)
            end = _extent(code, at)
        src = code[at:end].strip() if end is not None else "nil"
        if m.group("i") is not None and 0 < int(m.group("i")) <= len(pieces):
            pieces[int(m.group("i")) - 1] = src or "nil"  # (``t[2] =``: that piece)
        elif len(pieces) < MAX_PIECES:
            pieces.append(src or "nil")
    return pieces


def _items(code: str, at: int) -> list[str]:
    """The sources of the items of the table constructor whose body starts at ``at``
    (``nil`` for one not read), the first :data:`MAX_PIECES`."""
    items: list[str] = []
    while len(items) < MAX_PIECES:
        end = _extent(code, at)
        if end is None:
            return [*items, "nil"]
        if code[at:end].strip():
            items.append(code[at:end].strip())
        if not code.startswith((",", ";"), end):
            break
        at = end + 1
    return items


def _extent(code: str, at: int) -> int | None:
    """Where the expression whose first token is at ``at`` ends (the offset of the token
    that ends it: ``,``, ``;``, a closing bracket, a keyword, or a statement after it);
    None past :data:`MAX_PIECE_SOURCE` characters or :data:`_MAX_PIECE_TOKENS` tokens."""
    depth, prev = 0, (0, "")
    for count, (kind, s, e, value, _b0, _b1) in enumerate(iter_tokens(code, [], start=at)):
        if count >= _MAX_PIECE_TOKENS or e - at > MAX_PIECE_SOURCE:
            return None
        if depth == 0 and _ends(kind, value, prev):
            return s
        if kind == OP and value in _OPEN:
            depth += 1
        elif kind == OP and value in _CLOSE:
            depth -= 1
        prev = (kind, value or "")
    return len(code) if depth == 0 else None


def _ends(kind: int, value: str | None, prev: tuple[int, str]) -> bool:
    """Whether a token at depth 0 ends the expression before it."""
    if kind == OP:
        return value in (",", ";") or value in _CLOSE
    if kind == NAME and value in KEYWORDS:
        return value not in _IN_EXPRESSION
    after_value = prev[0] in (NAME, NUM, STR) or (prev[0] == OP and prev[1] in _VALUE_END)
    return after_value and kind in (NAME, NUM)
