"""A small constant folder for Lua string expressions (names built from constants).

``_G["req" .. "uest"]``, ``_ENV[("tseuqer"):reverse()]``, ``rawget(_G, string.char(114,
101, ...))`` reach a host function by a name the script computes from literals only.
:func:`fold_index` and :func:`fold_argument` read such an expression from the source (never
running it) and give the string it makes, or None when it is anything else.  What is
folded: string literals, integer literals, names of the ``constants`` given (a name assigned
one literal), parentheses, concatenation ``..``, and the string functions
``string.char``/``("").char`` of integers, ``reverse``, ``rep`` (a small count), ``lower``,
``upper``, ``sub`` (literal bounds), ``format`` (``%s``, ``%d``, ``%%`` only), as
``string.f(s, ...)`` or ``s:f(...)``, and ``table.concat`` of a literal table (``{...}``,
with a literal separator).

Lua's strings are bytes: the folder works on them as Lua does (``reverse``, ``sub`` and
``char`` by the byte, ``lower``/``upper`` of ASCII letters only), each value a ``str`` of
one character a byte (Latin-1), and gives its result as the text RisuAI's JavaScript side
reads (the bytes as UTF-8, U+FFFD for a byte that is not).

Bounded: at most ``MAX_FOLD_STEPS`` values made per expression, ``MAX_FOLD_CHARS``
characters in any of them, ``MAX_FOLD_TOKENS`` tokens read from at most ``MAX_FOLD_SPAN``
characters of the source; a reader folds at most ``MAX_FOLDS`` expressions per script.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from risutools.analysis.luaargs import HOLE, LIT, REF, plain_pattern
from risutools.analysis.lualex import KEYWORDS, NAME, NUM, OP, STR, iter_tokens, lua_string_raw

#: values made (literals, operators, calls) per expression, at most
MAX_FOLD_STEPS = 64
#: characters of any value made, at most (a longer one is not folded)
MAX_FOLD_CHARS = 256
#: tokens read per expression, at most
MAX_FOLD_TOKENS = 256
#: characters of source read per expression, at most (a token past them is not read)
MAX_FOLD_SPAN = 4096
#: tokens read of a list assignment's values (``a, b = v1, v2``), at most: a call's long
#: arguments before a literal are not walked through
MAX_LIST_TOKENS = 48
#: expressions folded per script (per scan), at most
MAX_FOLDS = 256
#: ``rep`` counts above this are not folded
_MAX_REP = MAX_FOLD_CHARS

_Value = str | int | list[str]
_STRING_FUNCS = frozenset({"char", "reverse", "rep", "lower", "upper", "sub", "format"})


class _Fail(Exception):
    """The expression is not one the folder makes a string of."""


class _Reader:
    """The tokens of an expression, read one at a time (bounded), and the steps made."""

    def __init__(self, text: str, start: int, constants: Mapping[str, str]) -> None:
        self.base = start
        self.text = text[start:start + MAX_FOLD_SPAN]
        self.errors: list[tuple[int, str]] = []
        self.tokens: Iterator[tuple[int, int, int, str | None, int, int]] = iter_tokens(
            self.text, self.errors)
        self.left = MAX_FOLD_TOKENS
        self.steps = MAX_FOLD_STEPS
        self.constants = constants
        self.tok: tuple[int, str | None, int] = (0, None, 0)  # kind, value, end offset
        self.start = 0  # the offset of the token's start (in ``self.text``)
        self.built = False  # a template was built (``..``, a format: :func:`template_of`)
        self.folds = MAX_OPERAND_FOLDS  # operands of a template folded (:func:`_sub_fold`)
        self.limits = (MAX_TEMPLATE_PARTS, MAX_FOLD_CHARS)  # a template's parts, characters
        self.advance()

    def advance(self) -> None:
        """Read the next token (kind 0 at the end or past the bounds)."""
        self.left -= 1
        tok = next(self.tokens, None) if self.left >= 0 else None
        if tok is None or self.errors:
            self.tok = (0, None, len(self.text))
            return
        kind, self.start, e, value, b0, b1 = tok
        if kind == STR:
            value = _bytes_of(value if value is not None
                              else lua_string_raw(self.text, b0, b1))
        self.tok = (kind, value, e)

    def step(self) -> None:
        self.steps -= 1
        if self.steps < 0:
            raise _Fail

    def at(self, value: str) -> bool:
        return self.tok[0] == OP and self.tok[1] == value

    def expect(self, value: str) -> None:
        if not self.at(value):
            raise _Fail
        self.advance()

    def name(self) -> str:
        kind, value, _e = self.tok
        if kind != NAME or value is None:
            raise _Fail
        self.advance()
        return value


def _bytes_of(raw: str) -> str:
    """A string's value (text, or :func:`lua_string_raw`'s form) as its bytes, one
    character a byte (never raises: a lone surrogate of the source's own text is written
    as UTF-8 writes one)."""
    if raw.isascii():
        return raw
    try:
        return raw.encode("utf-8", "surrogateescape").decode("latin-1")
    except UnicodeEncodeError:
        return raw.encode("utf-8", "surrogatepass").decode("latin-1")


def _from_bytes(s: str) -> str:
    """Bytes (one character a byte) as the text RisuAI reads: UTF-8, U+FFFD for a byte
    that is not."""
    return s if s.isascii() else s.encode("latin-1").decode("utf-8", "replace")


def _as_text(v: _Value) -> str:
    """A folded value as the text RisuAI reads (:func:`_from_bytes`)."""
    return _from_bytes(_text(v))


def _text(v: _Value) -> str:
    """A value as a string operand (an integer is written in decimal, as Lua does)."""
    if isinstance(v, list):
        raise _Fail
    s = str(v)
    if len(s) > MAX_FOLD_CHARS:
        raise _Fail
    return s


def _int(v: _Value) -> int:
    if isinstance(v, int):
        return v
    if isinstance(v, str) and v.strip().lstrip("-").isdigit() and len(v) < 12:
        return int(v)
    raise _Fail


def _expr(r: _Reader) -> _Value:
    """``a .. b .. c`` (each operand a :func:`_postfix`)."""
    left = _postfix(r)
    if not r.at(".."):
        return left
    parts = [_text(left)]
    size = len(parts[0])
    while r.at(".."):
        r.advance()
        r.step()
        part = _text(_postfix(r))
        size += len(part)
        if size > MAX_FOLD_CHARS:
            raise _Fail
        parts.append(part)
    return "".join(parts)


def _postfix(r: _Reader) -> _Value:
    """A primary, then ``:f(...)`` / ``.f(...)`` calls of string functions on it."""
    v = _primary(r)
    while r.at(":") or r.at("."):
        method = r.at(":")
        r.advance()
        fname = r.name()
        args = _args(r)
        if not isinstance(v, str):
            raise _Fail
        v = _string_call(r, fname, [v, *args] if method else args)
    return v


def _primary(r: _Reader) -> _Value:
    """A literal, a constant, ``( expr )``, ``-n``, ``{...}``, ``string.f(...)``,
    ``table.concat(...)``."""
    r.step()
    kind, value, _e = r.tok
    if kind == STR and value is not None:
        r.advance()
        return value
    if kind == NUM and value is not None:
        r.advance()
        return _number(value)
    if r.at("-"):
        r.advance()
        return -_int(_primary(r))
    if r.at("("):
        r.advance()
        v = _expr(r)
        r.expect(")")
        return v
    if r.at("{"):
        return _table(r)
    name = r.name()
    if name in ("string", "table") and r.at("."):
        r.advance()
        fname = r.name()
        args = _args(r)
        if name == "table":
            return _table_concat(fname, args)
        return _string_call(r, fname, args)
    const = r.constants.get(name)
    if const is None:
        raise _Fail
    return _bytes_of(const)


def _number(text: str) -> int:
    try:
        return int(text, 16) if text[:2].lower() == "0x" else int(text)
    except ValueError:
        raise _Fail from None


def _args(r: _Reader) -> list[_Value]:
    """``(a, b)``, ``"x"`` or ``{...}`` after a function's name."""
    kind, value, _e = r.tok
    if kind == STR and value is not None:
        r.advance()
        return [value]
    if r.at("{"):
        return [_table(r)]
    r.expect("(")
    out: list[_Value] = []
    while not r.at(")"):
        out.append(_expr(r))
        if not r.at(")"):
            r.expect(",")
    r.advance()
    return out


def _table(r: _Reader) -> list[str]:
    """A literal table of strings ``{"a", "b"}`` (a list only: no keys)."""
    r.expect("{")
    out: list[str] = []
    size = 0
    while not r.at("}"):
        item = _text(_expr(r))
        size += len(item)
        if size > MAX_FOLD_CHARS:
            raise _Fail
        out.append(item)
        if not r.at("}"):
            if not (r.at(",") or r.at(";")):
                raise _Fail
            r.advance()
    r.advance()
    return out


def _table_concat(fname: str, args: list[_Value]) -> str:
    if fname != "concat" or not args or not isinstance(args[0], list) or len(args) > 2:
        raise _Fail
    sep = _text(args[1]) if len(args) > 1 else ""
    out = sep.join(args[0])
    if len(out) > MAX_FOLD_CHARS:
        raise _Fail
    return out


def _string_call(r: _Reader, fname: str, args: list[_Value]) -> str:
    """``string.f(args)`` for the functions the folder knows."""
    r.step()
    if fname not in _STRING_FUNCS or (fname != "char" and not args):
        raise _Fail
    if fname == "char":
        codes = [_int(a) for a in args]
        if len(codes) > MAX_FOLD_CHARS or any(not 0 <= c < 256 for c in codes):
            raise _Fail
        return "".join(map(chr, codes))
    s = _text(args[0])
    if fname == "reverse":
        return s[::-1]
    if fname in ("lower", "upper"):  # ASCII letters only, as Lua's C locale
        b = s.encode("latin-1")
        return (b.lower() if fname == "lower" else b.upper()).decode("latin-1")
    if fname == "rep":
        return _rep(s, args)
    if fname == "sub":
        return _sub(s, args)
    return _format(s, args[1:])


def _rep(s: str, args: list[_Value]) -> str:
    n = _int(args[1]) if len(args) > 1 else 0
    sep = _text(args[2]) if len(args) > 2 else ""
    if n <= 0:
        return ""
    if n > _MAX_REP or len(s) * n + len(sep) * (n - 1) > MAX_FOLD_CHARS:
        raise _Fail
    return sep.join([s] * n)


def _sub(s: str, args: list[_Value]) -> str:
    """``s:sub(i, j)`` with Lua's bounds (1-based, negative from the end)."""
    n = len(s)
    i = _int(args[1]) if len(args) > 1 else 1
    j = _int(args[2]) if len(args) > 2 else -1
    if i < 0:
        i = max(n + i + 1, 1)
    elif i == 0:
        i = 1
    if j < 0:
        j = n + j + 1
    elif j > n:
        j = n
    return s[i - 1:j] if i <= j else ""


def _format(fmt: str, args: list[_Value]) -> str:
    """``string.format`` with ``%s``, ``%d`` and ``%%`` only."""
    out: list[str] = []
    k = i = 0
    while i < len(fmt):
        c = fmt[i]
        if c != "%":
            out.append(c)
            i += 1
            continue
        d = fmt[i + 1:i + 2]
        if d == "%":
            out.append("%")
        elif d in ("s", "d") and k < len(args):
            out.append(_text(args[k]) if d == "s" else str(_int(args[k])))
            k += 1
        else:
            raise _Fail
        i += 2
    got = "".join(out)
    if len(got) > MAX_FOLD_CHARS:
        raise _Fail
    return got


def fold_index(text: str, bracket: int, constants: Mapping[str, str]
               ) -> tuple[str, int] | None:
    """``[ expr ]`` at ``bracket`` (the offset of ``[``): the string ``expr`` makes and the
    offset right after ``]``; None when it is not folded."""
    r = _Reader(text, bracket, constants)
    try:
        r.expect("[")
        v = _expr(r)
        if not r.at("]") or r.errors:
            return None
        return _as_text(v), r.base + r.tok[2]
    except _Fail:
        return None


def fold_value(text: str, at: int, constants: Mapping[str, str]) -> str | None:
    """The string the expression whose first token is at ``at`` makes when it is a whole
    value (``n = "req" .. "uest"``: what follows it ends a value, :func:`_ends_value`);
    None when it is not folded."""
    r = _Reader(text, at, constants)
    try:
        v = _expr(r)
        ok = isinstance(v, str) and _ends_value(r) and not r.errors  # (not ``n = (3)``)
        return _as_text(v) if ok else None
    except _Fail:
        return None


def fold_argument(text: str, name_at: int, index: int, constants: Mapping[str, str]
                  ) -> str | None:
    """The argument ``index`` (from 0) of the call ``name(...)`` whose name is at
    ``name_at``, folded; None when it is not (the arguments before it are passed over)."""
    r = _Reader(text, name_at, constants)
    try:
        _to_argument(r, index)
        v = _expr(r)
        if not (r.at(",") or r.at(")")) or r.errors:
            return None
        return _as_text(v)
    except _Fail:
        return None


def template_argument(text: str, name_at: int, index: int, constants: Mapping[str, str]
                      ) -> tuple[_Part, ...] | None:
    """The argument ``index`` of the call ``name(...)`` whose name is at ``name_at`` as a
    template (:func:`template_of`: ``setChatVar(id, string.format("hp_%s", i), v)``)."""
    r = _Reader(text, name_at, constants)
    try:
        _to_argument(r, index)
        parts = _template(r)
        if not (r.at(",") or r.at(")")) or r.errors or not r.built \
                or not any(k == LIT for k, _t in parts):
            return None
        return tuple(parts)
    except _Fail:
        return None


def _to_argument(r: _Reader, index: int) -> None:
    """Read ``name(`` and the arguments before argument ``index``."""
    r.name()
    r.expect("(")
    for _ in range(index):
        _skip_argument(r)
        r.expect(",")


def _skip_argument(r: _Reader) -> None:
    """Pass over one argument (up to a ``,`` or ``)`` outside brackets)."""
    depth = 0
    while r.tok[0]:
        if depth == 0 and (r.at(",") or r.at(")")):
            return
        if r.tok[0] == OP and r.tok[1] in ("(", "{", "["):
            depth += 1
        elif r.tok[0] == OP and r.tok[1] in (")", "}", "]"):
            depth -= 1
        r.advance()
    raise _Fail


#: the keywords that end an expression list where an operand could end it too
_LIST_ENDS = frozenset({"end", "local", "return", "if", "for", "while", "do", "then", "else",
                        "elseif", "until", "repeat", "goto", "break", "function"})


def list_values(text: str, eq: int, count: int) -> list[tuple[str | None, int]]:
    """The values a list assignment ``a, b, c = v1, v2, v3`` (its ``=`` at ``eq``) gives
    its ``count`` targets, in order: for each, the string when the value is one string
    literal (else None: an expression, a call; a call last spreads to the targets after it,
    unknown; a target without a value gets nil), and the offset of the value's first token
    (-1 when there is none).  Values past the bounds of the reader (``MAX_LIST_TOKENS``
    tokens, ``MAX_FOLD_SPAN`` characters) or after a ``function`` (whose body the reader
    does not follow) are (None, -1)."""
    out: list[tuple[str | None, int]] = []
    r = _Reader(text, eq, {})
    r.left = MAX_LIST_TOKENS  # (a value past them is not read: None)
    try:
        r.expect("=")
        more = True
        while more and len(out) < count and r.tok[0]:
            kind, value, _e = r.tok
            at = r.base + r.start
            literal = _from_bytes(value) if kind == STR and value is not None else None
            if literal is not None:
                r.advance()
                if not _ends_value(r):
                    literal = None
            out.append((literal, at))
            more = _skip_value(r, literal is not None)
    except _Fail:
        pass
    return out + [(None, -1)] * (count - len(out))


def assigned_literals(text: str, eq: int, count: int) -> list[str | None]:
    """The literals of :func:`list_values` (None for a value that is none)."""
    return [v for v, _at in list_values(text, eq, count)]


def _ends_value(r: _Reader) -> bool:
    """Whether the token read ends the value before it (an operand): ``,``, the end of the
    statement (a name, a keyword, ``;``, a closing bracket, the end)."""
    kind, value, _e = r.tok
    if kind == OP:
        return value in (",", ";", ")", "]", "}", "=")
    return kind in (0, NUM) or (kind == NAME and value not in ("and", "or"))


def _skip_value(r: _Reader, after_operand: bool) -> bool:
    """Pass over the rest of one value of an expression list: True at the ``,`` before
    the next value (passed over), False where the list ends."""
    depth = 0
    while r.tok[0]:
        kind, value, _e = r.tok
        if depth == 0:
            if kind == OP and value == ",":
                r.advance()
                return True
            if kind == OP and value in (";", ")", "]", "}", "="):
                return False
            if kind == NAME and value in _LIST_ENDS:
                if value == "function" and not after_operand:
                    raise _Fail  # (a body of statements: its end is not followed)
                return False
            if after_operand and kind in (NAME, NUM) and value not in ("and", "or"):
                return False
        if kind == OP and value in ("(", "{", "["):
            depth += 1
            after_operand = False
        elif kind == OP and value in (")", "}", "]"):
            depth -= 1
            after_operand = True
        else:
            after_operand = kind != OP and value not in ("and", "or", "not")
        r.advance()
    return False


#: parts of a template (:func:`template_of`), at most, and operands of one folded by a
#: reader of their own (``("hp"):upper()``)
MAX_TEMPLATE_PARTS = 16
MAX_OPERAND_FOLDS = 8
_Part = tuple[int, str]


def template_of(text: str, at: int, constants: Mapping[str, str]
                ) -> tuple[_Part, ...] | None:
    """The string the expression at ``at`` builds, as a template (the parts of
    :mod:`luaargs`: ``LIT`` text, ``REF`` a name, ``HOLE`` anything else), when it is a
    concatenation ``..`` of string literals, integers, names (a name of ``constants`` is
    its literal) and other operands (a call, a field: a hole), or ``string.format`` /
    ``("..."):format`` of those (``%s`` is its argument, any other conversion a hole), or
    ``gsub`` of a literal by a plain pattern (:func:`_gsub_template`), with at least one
    literal part; None when it is anything else (an arithmetic or a logical expression, one
    literal alone, a name alone).  Bounded as :func:`fold_index`."""
    got = template_span(text, at, constants)
    return got[0] if got is not None else None


def template_span(text: str, at: int, constants: Mapping[str, str],
                  limits: tuple[int, int] = (MAX_TEMPLATE_PARTS, MAX_FOLD_CHARS)
                  ) -> tuple[tuple[_Part, ...], int] | None:
    """:func:`template_of` and the offset where the expression ends (the next token's, or
    the end of what was read); ``limits``: its parts and characters, at most."""
    r = _Reader(text, at, constants)
    r.limits = limits
    try:
        parts = _template(r)
        if r.errors or not _ends_value(r):
            return None
    except _Fail:
        return None
    if not r.built or not any(k == LIT for k, _t in parts):
        return None  # (one literal or one name: a constant, an alias)
    return tuple(parts), r.base + (r.start if r.tok[0] else len(r.text))


def _template(r: _Reader) -> list[_Part]:
    parts = _operand(r)
    while r.at(".."):
        r.advance()
        r.built = True
        parts = _joined(parts, _operand(r), r.limits)
    return parts


def _joined(parts: list[_Part], more: list[_Part], limits: tuple[int, int]
            ) -> list[_Part]:
    """Two templates one after the other (literals side by side made one)."""
    out = list(parts)
    for kind, text in more:
        if out and kind == LIT and out[-1][0] == LIT:
            out[-1] = (LIT, out[-1][1] + text)
        else:
            out.append((kind, text))
    if len(out) > limits[0] or sum(len(t) for _k, t in out) > limits[1]:
        raise _Fail
    return out


def _operand(r: _Reader) -> list[_Part]:
    """One operand of a concatenation: a literal, a name, ``( ... )``, a format call, or
    a hole (a call, a field, an index)."""
    r.step()
    kind, value, _e = r.tok
    if kind == STR and value is not None:
        r.advance()
        return [(LIT, _from_bytes(value))]
    if (r.at("(") or (kind == NAME and value in ("string", "table"))) and r.folds > 0:
        folded = _sub_fold(r)  # ``("hp"):upper()``, ``table.concat({"h", "p"})``
        if folded is not None:
            return [(LIT, folded)]
    if kind == NUM and value is not None:
        r.advance()
        return [(LIT, str(_number(value)))] if not _skip_postfix(r) else [(HOLE, "")]
    if r.at("("):
        r.advance()
        inner = _template(r)
        r.expect(")")
        if r.at(":"):
            return _method(r, inner)
        return [(HOLE, "")] if _skip_postfix(r) else inner
    return _name_operand(r)


def _name_operand(r: _Reader) -> list[_Part]:
    """An operand that starts with a name: a format or gsub call, a constant (and a method
    of it: ``K:format(i)``), a name, or a hole (a call, a field, an index)."""
    name = r.name()
    if name in KEYWORDS:
        raise _Fail
    if name == "string" and r.at("."):
        r.advance()
        fname = r.name()
        if fname in ("format", "gsub") and r.at("("):
            args = _format_args(r)
            if not args:
                return [(HOLE, "")]
            if fname == "gsub":
                return _gsub_template(args[0], args[1:], r.limits)
            return _format_template(args[0], args[1:], r.limits)
        _skip_postfix(r)
        return [(HOLE, "")]
    if name == "table" and r.at("."):
        r.advance()
        if r.name() == "concat" and r.at("("):
            return _concat_template(r)
        _skip_postfix(r)
        return [(HOLE, "")]
    const = r.constants.get(name)
    if const is not None and r.at(":"):
        return _method(r, [(LIT, _from_bytes(_bytes_of(const)))])
    if _skip_postfix(r):
        return [(HOLE, "")]
    return [(LIT, _from_bytes(_bytes_of(const)))] if const is not None else [(REF, name)]


def _sub_fold(r: _Reader) -> str | None:
    """The operand at the reader's token folded to one string (:func:`_postfix`: string
    functions of literals and constants), read by a reader of its own; the reader is then
    moved past it.  None (the reader not moved) when it does not fold."""
    r.folds -= 1
    sub = _Reader(r.text, r.start, r.constants)
    try:
        v = _postfix(sub)
    except _Fail:
        return None
    if sub.errors or isinstance(v, list) or (not sub.tok[0] and sub.left < 0):
        return None
    end = sub.base + (sub.start if sub.tok[0] else len(sub.text))
    while r.tok[0] and r.start < end:
        r.advance()
    r.built = True
    return _as_text(v)


def _method(r: _Reader, inner: list[_Part]) -> list[_Part]:
    """``(s):f(...)``: a format or a gsub of a literal, else a hole."""
    r.advance()
    fname = r.name()
    if fname in ("format", "gsub") and r.at("(") and len(inner) == 1 and inner[0][0] == LIT:
        args = _format_args(r)
        if fname == "gsub":
            return _gsub_template(inner, args, r.limits)
        return _format_template(inner, args, r.limits)
    _skip_postfix(r)
    return [(HOLE, "")]


def _concat_template(r: _Reader) -> list[_Part]:
    """``table.concat({a, b, ...}, sep)`` as a template: its items (each a template) with
    the separator (a literal) between them; a hole when the table is not a list written
    there or the separator not a literal."""
    r.expect("(")
    if not r.at("{"):
        _skip_argument(r)
        r.expect(")")
        _skip_postfix(r)
        return [(HOLE, "")]
    r.advance()
    r.built = True
    items: list[list[_Part]] = []
    while not r.at("}"):
        items.append(_template(r))
        if len(items) > r.limits[0]:
            raise _Fail
        if not (r.at(",") or r.at(";") or r.at("}")):
            raise _Fail  # (``k = v``, ``[k] = v``: not a list)
        if not r.at("}"):
            r.advance()
    r.advance()
    sep: list[_Part] = [(LIT, "")]
    if r.at(","):
        r.advance()
        sep = _template(r)
    r.expect(")")
    out: list[_Part] = []
    for i, item in enumerate(items):
        out = _joined(_joined(out, sep if i else [], r.limits), item, r.limits)
    return out if len(sep) == 1 and sep[0][0] == LIT else [(HOLE, "")]


def _format_args(r: _Reader) -> list[list[_Part]]:
    """The arguments of a format call, each a template (or a hole: an expression the
    template reader does not take)."""
    r.expect("(")
    r.built = True
    out: list[list[_Part]] = []
    while not r.at(")"):
        kind, value, _e = r.tok
        tolerable = kind in (STR, NUM) or r.at("(") or (kind == NAME and value not in KEYWORDS)
        arg = _template(r) if tolerable else [(HOLE, "")]
        if not (r.at(",") or r.at(")")):
            _skip_argument(r)
            arg = [(HOLE, "")]
        out.append(arg)
        if len(out) > MAX_TEMPLATE_PARTS:
            raise _Fail
        if r.at(","):
            r.advance()
    r.advance()
    return out


def _format_template(fmt: list[_Part], args: list[list[_Part]], limits: tuple[int, int]
                     ) -> list[_Part]:
    """``string.format(fmt, ...)`` as a template: ``%s`` its argument, ``%%`` a ``%``,
    any other conversion a hole (a format string that is not one literal: a hole)."""
    if len(fmt) != 1 or fmt[0][0] != LIT:
        return [(HOLE, "")]
    text, k, i = fmt[0][1], 0, 0
    out: list[_Part] = []
    lit: list[str] = []
    while i < len(text):
        c = text[i]
        if c != "%" or text[i + 1:i + 2] == "%":
            lit.append(c)
            i += 2 if c == "%" else 1
            continue
        j = i + 1
        while j < len(text) and text[j] in "-+ #0123456789.":
            j += 1
        conv = text[j:j + 1]
        if not conv.isalpha():
            raise _Fail
        arg = args[k] if k < len(args) else [(HOLE, "")]
        got = arg if conv == "s" and j == i + 1 else [(HOLE, "")]
        out = _joined(_joined(out, [(LIT, "".join(lit))] if lit else [], limits), got, limits)
        lit, k, i = [], k + 1, j + 1
    return _joined(out, [(LIT, "".join(lit))] if lit else [], limits)


def _gsub_template(subject: list[_Part], args: list[list[_Part]], limits: tuple[int, int]
                   ) -> list[_Part]:
    """``s:gsub(pattern, repl)`` as a template: a literal ``s`` and a plain pattern
    (:func:`~risutools.analysis.luaargs.plain_pattern`), each match replaced by ``repl``
    (a literal without ``%``, or any other value: then a hole); a hole otherwise (a pattern
    with classes, a count)."""
    if len(subject) != 1 or subject[0][0] != LIT or len(args) != 2:
        return [(HOLE, "")]
    pat, repl = args
    plain = plain_pattern(pat[0][1]) if len(pat) == 1 and pat[0][0] == LIT else None
    if plain is None:
        return [(HOLE, "")]
    if len(repl) != 1 or repl[0][0] != LIT or "%" in repl[0][1]:
        repl = [(HOLE, "")]
    pieces = subject[0][1].split(plain)
    out = [(LIT, pieces[0])] if pieces[0] else []
    for piece in pieces[1:]:
        out = _joined(_joined(out, repl, limits), [(LIT, piece)] if piece else [], limits)
    return out or [(LIT, "")]


def _skip_postfix(r: _Reader) -> bool:
    """Pass over what follows an operand (``.f``, ``[k]``, ``(...)``, ``:m(...)``, a
    string or a table argument): whether anything did."""
    moved = False
    while True:
        if r.at(".") or r.at(":"):
            r.advance()
            r.name()
        elif r.at("[") or r.at("(") or r.at("{"):
            _skip_balanced(r)
        elif r.tok[0] == STR:
            r.advance()
        else:
            return moved
        moved = True


def _skip_balanced(r: _Reader) -> None:
    """Pass over a bracketed run (``(...)``, ``[...]``, ``{...}``) from its opening."""
    depth = 0
    while r.tok[0]:
        if r.tok[0] == OP and r.tok[1] in ("(", "{", "["):
            depth += 1
        elif r.tok[0] == OP and r.tok[1] in (")", "}", "]"):
            depth -= 1
            if depth == 0:
                r.advance()
                return
        r.advance()
    raise _Fail
