"""CBS tags whose text is known from the module alone, put in their place: what a browser
sees of a text once RisuAI has evaluated them (cbs.ts).

``http{{u::3a}}//h`` is ``http://h``; ``{{dec}}`` is U+E9BE (a ``:`` once a chat message
is shown: :data:`~risutools.analysis.cbs.DISPLAY_UNESCAPE`); ``{{br}}`` a line break;
``{{file::name::BASE64}}`` (outside a chat message's display) and ``{{xordecrypt::...}}``
the text they decode; ``{{button::label::fn}}`` (``{{risu}}``, ``{{ruby}}``,
``{{comment}}``, ``{{file}}`` in a chat message's display, ``{{codeblock::lang::code}}``:
every tag of cbs.ts that builds markup from its arguments) the markup it builds, its
arguments in place, unescaped as RisuAI puts them (``{{codeblock}}``'s code escaped, its
language not).  A tag is folded only when its arguments are literal
(a nested tag folded first counts as literal); any other tag is kept as written, so the
readers still see chat data in it (``{{lastmessage}}``).  A decoder whose argument is not
literal gives a text no reader knows: it becomes :data:`~risutools.analysis.cbs.NESTED`,
which an address reader takes as an unknown address
(:func:`~risutools.analysis.urlleaks.dynamic_urls`).

Nothing is evaluated but these pure functions of literal text.  Linear and bounded: one
pass over the braces (as :func:`~risutools.analysis.cbs.scan_cbs`, at most
``MAX_DEPTH`` deep, each piece of text moved up at most that many times), at most
``MAX_FOLD_TAGS`` tags a text (the rest of it as written), and the text the tags give is at
most ``MAX_FOLDED`` characters a text (past it a tag is kept as written).
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass

from risutools.analysis.cbs import DISPLAY_UNESCAPE, NESTED, PURE_BLOCKS, tag_of

#: nesting read at most (deeper ``{{`` are text, as in :func:`~risutools.analysis.cbs.scan_cbs`)
MAX_DEPTH = 64
#: characters the folded tags of one text give at most (decoded text included)
MAX_FOLDED = 2_000_000
#: tags read at most per text (as :func:`~risutools.analysis.cbs.scan_cbs`): from the tag
#: past it on (from the outermost tag then open), the text is left as written, unfolded
#: (each tag kept costs a few hundred bytes: 1,000,000 ``{{a}}`` took 589 MB)
MAX_FOLD_TAGS = 50_000
#: the longest numeric argument read (``{{u::...}}``, ``{{unicodedecode::...}}``)
MAX_NUMBER_TEXT = 1_000

_BRACES = re.compile(r"\{\{|\}\}")
#: JavaScript's white space and line terminators (``Number(" 58 ")``, ``parseInt``)
_JS_SPACE = " \t\n\v\f\r\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007" \
    "\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_HEX = re.compile(r"[0-9A-Fa-f]+")
#: (each run of digits read one way only: ``[0-9]+\.?[0-9]*`` split a run every way, and a
#: failing match of n digits took n**2 steps)
_JS_NUMBER = re.compile(r"[+-]?(?:Infinity|(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)")
_JS_RADIX = re.compile(r"0(?:[xX]([0-9A-Fa-f]+)|[oO]([0-7]+)|[bB]([01]+))")
_BASE64_OUT = re.compile(r"[^A-Za-z0-9+/\-_]+")
_SURROGATE = re.compile("[\ud800-\udfff]")
_XOR_FF = bytes(255 - i for i in range(256))


@dataclass(frozen=True)
class Folded:
    """A text with its known tags folded, and where each piece of it comes from."""

    text: str
    starts: list[int]  # where each piece starts in ``text``
    origins: list[int]  # ... and in the source text
    produced: list[bool]  # True: a tag's output (each of its offsets is the tag's)

    def origin(self, offset: int) -> int:
        """The source offset of an offset of :attr:`text` (a tag's output: the tag's)."""
        k = bisect_right(self.starts, offset) - 1
        if k < 0:
            return 0
        return self.origins[k] + (0 if self.produced[k] else offset - self.starts[k])


# -- the tags ------------------------------------------------------------------------------

def _js_parse_int16(text: str) -> float:
    """JavaScript's ``parseInt(text, 16)`` (NaN: ``math.nan``)."""
    t = text.lstrip(_JS_SPACE)
    sign = -1 if t[:1] == "-" else 1
    t = t[1:] if t[:1] in "+-" else t
    if t[:2] in ("0x", "0X"):
        t = t[2:]
    m = _HEX.match(t)
    if m is None:
        return math.nan
    return sign * _as_float(m.group(), 16)


def _as_float(digits: str, base: int) -> float:
    """The number ``digits`` write in ``base``, as JavaScript's doubles hold it (past the
    largest one: infinity, never an integer of more than about 1,024 bits made)."""
    digits = digits.lstrip("0") or "0"
    if (len(digits) - 1) * (base - 1).bit_length() >= 1_024:  # (at least 2**1024)
        return math.inf
    try:
        return float(int(digits, base))
    except OverflowError:  # (2**1024 - 1 rounds past the largest double)
        return math.inf


def _js_number(text: str) -> float:
    """JavaScript's ``Number(text)`` of a text (NaN: ``math.nan``)."""
    t = text.strip(_JS_SPACE)
    if not t:
        return 0.0
    radix = _JS_RADIX.fullmatch(t)
    if radix is not None:
        hexa, octal, binary = radix.groups()
        return _as_float(hexa or octal or binary, 16 if hexa else 8 if octal else 2)
    return float(t) if _JS_NUMBER.fullmatch(t) else math.nan


def _char(code: float) -> str:
    """``String.fromCharCode(code)`` (ToUint16; a lone surrogate is shown as U+FFFD)."""
    unit = 0 if not math.isfinite(code) else math.trunc(code) % 65536
    return "\ufffd" if 0xD800 <= unit <= 0xDFFF else chr(unit)


def _number_arg(args: tuple[str, ...]) -> str | None:
    arg = args[0] if args else ""
    return arg if len(arg) <= MAX_NUMBER_TEXT else None


def _u(args: tuple[str, ...], _: bool) -> str | None:
    arg = _number_arg(args)
    return None if arg is None else _char(_js_parse_int16(arg))


def _unicodedecode(args: tuple[str, ...], _: bool) -> str | None:
    arg = _number_arg(args)
    return None if arg is None else _char(_js_number(arg))


def _fromhex(args: tuple[str, ...], _: bool) -> str | None:
    """``Number.parseInt(a, 16).toString()`` (an integer JavaScript writes exactly)."""
    arg = _number_arg(args)
    if arg is None:
        return None
    value = _js_parse_int16(arg)
    if math.isnan(value):
        return "NaN"
    return str(int(value)) if abs(value) < 2 ** 53 else None


def _node_base64(text: str) -> bytes:
    """Node's ``Buffer.from(text, 'base64')``: up to the first ``=``, characters outside
    the alphabets (standard and URL-safe) passed over, a lone last character dropped."""
    t = _BASE64_OUT.sub("", text.partition("=")[0]).replace("-", "+").replace("_", "/")
    t = t[: len(t) - 1] if len(t) % 4 == 1 else t
    try:
        return base64.b64decode(t + "=" * (-len(t) % 4))
    except (binascii.Error, ValueError):  # (cannot happen: the alphabet only)
        return b""


def _file(args: tuple[str, ...], visualize: bool) -> str | None:
    if visualize:  # a chat message parsed for display: the file's name in a box
        name = args[0] if args else "undefined"
        return f'<br><div class="risu-file">{name}</div><br>'
    if len(args) < 2:  # (Buffer.from(undefined) throws: the tag stays)
        return None
    return _node_base64(args[1]).decode("utf-8", "replace")


def _xordecrypt(args: tuple[str, ...], _: bool) -> str | None:
    if not args:  # (Buffer.from(undefined) throws: the tag stays)
        return None
    return _node_base64(args[0]).translate(_XOR_FF).decode("utf-8-sig", "replace")


def _crypt(args: tuple[str, ...], _: bool) -> str | None:
    """Each UTF-16 code unit shifted by the second argument (32768 when it is missing or
    not a number) modulo 65536."""
    if not args:  # (undefined.length throws: the tag stays)
        return None
    text = args[0]
    shift = _js_number(args[1]) if len(args) > 1 and args[1] \
        and len(args[1]) <= MAX_NUMBER_TEXT else math.nan
    shift = 32768.0 if math.isnan(shift) else shift
    table = {ord(c): _shifted(c, shift) for c in set(text)}
    out = text.translate(table)
    if _SURROGATE.search(out) is None:
        return out
    return out.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def _shifted(c: str, shift: float) -> str:
    code = ord(c)
    units = [code] if code < 0x10000 else [0xD800 + ((code - 0x10000) >> 10),
                                            0xDC00 + ((code - 0x10000) & 0x3FF)]
    return "".join(chr(0 if not math.isfinite(u + shift) else math.trunc(u + shift) % 65536)
                   for u in units)


def _button(args: tuple[str, ...], _: bool) -> str:
    label = args[0] if args else "undefined"
    fn = args[1] if len(args) > 1 else "undefined"
    return f'<button class="button-default" risu-trigger="{fn}">{label}</button>'


def _risu(args: tuple[str, ...], _: bool) -> str:
    size = args[0] if args and args[0] else "45"
    return f'<img src="/logo2.png" style="height:{size}px;width:{size}px" />'


def _ruby(args: tuple[str, ...], _: bool) -> str:
    base = args[0] if args else "undefined"
    over = args[1] if len(args) > 1 else "undefined"
    return f"<ruby>{base}<rp> (</rp><rt>{over}</rt><rp>) </rp></ruby>"


def _comment(args: tuple[str, ...], visualize: bool) -> str:
    if not visualize:
        return ""
    return f'<div class="risu-comment">{args[0] if args else "undefined"}</div>'


#: what ``{{codeblock}}`` escapes in its code (not ``&``)
_CODE_ESCAPES = str.maketrans({'"': "&quot;", "'": "&#39;", "<": "&lt;", ">": "&gt;"})


def _codeblock(args: tuple[str, ...], _: bool) -> str | None:
    """The code (the last argument) escaped; a language (the first, when there are two or
    more) put into the ``lang`` attribute unescaped, as RisuAI puts it."""
    if not args:  # (undefined.replace throws: the tag stays)
        return None
    code = args[-1].translate(_CODE_ESCAPES)
    if len(args) > 1:
        return f'<pre-hljs-placeholder lang="{args[0]}">{code}</pre-hljs-placeholder>'
    return f"<pre><code>{code}</code></pre>"


def _fixed(text: str) -> Callable[[tuple[str, ...], bool], str | None]:
    return lambda args, _: text


def _cbr(args: tuple[str, ...], _: bool) -> str | None:
    return None if args else "\\n"  # (with an argument it repeats its own text: kept)


_FOLD: dict[str, Callable[[tuple[str, ...], bool], str | None]] = {
    "br": _fixed("\n"), "newline": _fixed("\n"), "cbr": _cbr, "cnl": _cbr, "cnewline": _cbr,
    "blank": _fixed(""), "none": _fixed(""),
    "u": _u, "unicodedecodefromhex": _u, "ue": _u, "unicodeencodefromhex": _u,
    "unicodedecode": _unicodedecode, "fromhex": _fromhex,
    "file": _file, "xordecrypt": _xordecrypt, "xordecode": _xordecrypt, "xord": _xordecrypt,
    "crypt": _crypt, "crypto": _crypt, "caesar": _crypt, "encrypt": _crypt, "decrypt": _crypt,
    "button": _button, "risu": _risu, "ruby": _ruby, "furigana": _ruby, "comment": _comment,
    "codeblock": _codeblock,
    "hiddenkey": _fixed(""),
}
#: the display escapes (cbs.ts): a private-use character each, shown per DISPLAY_UNESCAPE
#: (``{{:}}`` is none: RisuAI's matcher reads its name as empty)
_ESCAPES = {"\ue9b8": ("decbo", "displayescapedcurlybracketopen"),
            "\ue9b9": ("decbc", "displayescapedcurlybracketclose"),
            "\ue9b8\ue9b8": ("bo", "ddecbo", "doubledisplayescapedcurlybracketopen"),
            "\ue9b9\ue9b9": ("bc", "ddecbc", "doubledisplayescapedcurlybracketclose"),
            "\ue9ba": ("displayescapedbracketopen", "debo", "("),
            "\ue9bb": ("displayescapedbracketclose", "debc", ")"),
            "\ue9bc": ("displayescapedanglebracketopen", "deabo", "<"),
            "\ue9bd": ("displayescapedanglebracketclose", "deabc", ">"),
            "\ue9be": ("displayescapedcolon", "dec"),
            "\ue9bf": ("displayescapedsemicolon", ";")}
for _text, _names in _ESCAPES.items():
    for _name in _names:
        _FOLD[_name] = _fixed(_text)
#: tags whose output is fixed: folded whatever their arguments hold
_FIXED = frozenset({"br", "newline", "blank", "none", "hiddenkey"}
                   | {n for v in _ESCAPES.values() for n in v})
#: tags that decode a text: one whose argument is not literal gives an unknown text
DECODERS = frozenset({"file", "xordecrypt", "xordecode", "xord", "crypt", "crypto", "caesar",
                      "encrypt", "decrypt"})


# -- the pass ------------------------------------------------------------------------------

#: a piece of the folded text: its text, its source offset, and whether a tag gave it
_Piece = tuple[str, int, bool]


@dataclass
class _Frame:
    start: int  # offset of its "{{"
    pieces: list[_Piece]
    literal: bool = True  # every tag nested in it was folded


class _Folder:
    """One fold of one text (:func:`fold_cbs`)."""

    def __init__(self, text: str, visualize: bool, unescape: bool) -> None:
        self.text = text
        self.visualize = visualize
        self.unescape = unescape
        self.left = MAX_FOLDED
        self.pure = 0  # blocks open inside a pure block (0: outside one)

    def close(self, frame: _Frame, end: int, top: bool) -> tuple[list[_Piece], bool]:
        """The pieces a tag ending at ``end`` leaves, and whether it was folded."""
        body = "".join(p[0] for p in frame.pieces)
        tag = tag_of(body)
        if self.in_pure(body, tag.name, top):
            return self.as_written(frame, end), False
        fold = _FOLD.get(tag.name)
        if fold is not None and (frame.literal or tag.name in _FIXED) \
                and 2 * len(body) + 100 <= self.left:
            got = fold(tag.args, self.visualize)
            if got is not None:
                self.left -= len(got)
                if self.unescape:
                    got = got.translate(DISPLAY_UNESCAPE)
                return ([(got, frame.start, True)] if got else []), True
        if tag.name in DECODERS and not frame.literal and not (
                tag.name == "file" and self.visualize):
            return [(NESTED, frame.start, True)], False
        return self.as_written(frame, end), False

    def in_pure(self, body: str, name: str, top: bool) -> bool:
        """Whether a tag is inside a pure block or opens one (RisuAI evaluates nothing in
        it; the blocks nested in it counted, as :func:`~risutools.analysis.cbs.scan_cbs`
        counts them)."""
        if self.pure:
            if top and name.startswith(("#", ":")):
                self.pure += 1
            elif top and name.startswith("/") and not name.startswith("//"):
                self.pure -= 1
            return True
        if top and body in PURE_BLOCKS:
            self.pure = 1
            return True
        return False

    def as_written(self, frame: _Frame, end: int) -> list[_Piece]:
        return [("{{", frame.start, False), *frame.pieces, ("}}", end - 2, False)]


def fold_cbs(text: str, visualize: bool = False, unescape: bool = False) -> Folded:
    """``text`` with its known tags folded (see the module's text).  ``visualize``: a chat
    message parsed for display (``{{file}}`` shows its name); ``unescape``: shown in the
    chat, what the tags give read through RisuAI's display map."""
    folder = _Folder(text, visualize, unescape)
    done: list[_Piece] = []
    stack: list[_Frame] = []
    keep = 0  # where the text not yet in a piece starts
    tags = 0
    for m in _BRACES.finditer(text):
        pieces = stack[-1].pieces if stack else done
        if m.group() == "{{":
            if len(stack) >= MAX_DEPTH:
                continue  # (text, in the next piece)
            tags += 1
            if tags > MAX_FOLD_TAGS:  # the rest as written, from the outermost tag open
                keep = stack[0].start if stack else keep
                stack.clear()
                break
            if keep < m.start():
                pieces.append((text[keep:m.start()], keep, False))
            stack.append(_Frame(m.start(), []))
            keep = m.end()
        elif stack:
            frame = stack.pop()
            if keep < m.start():
                frame.pieces.append((text[keep:m.start()], keep, False))
            keep = m.end()
            left, folded = folder.close(frame, m.end(), not stack)
            if stack:
                stack[-1].pieces.extend(left)
                stack[-1].literal = stack[-1].literal and folded
            else:
                done.extend(left)
    for frame in stack:  # never closed: text
        done.append(("{{", frame.start, False))
        done.extend(frame.pieces)
    if keep < len(text):
        done.append((text[keep:], keep, False))
    return _assembled(done)


def _assembled(pieces: list[_Piece]) -> Folded:
    starts: list[int] = []
    origins: list[int] = []
    produced: list[bool] = []
    size = 0
    for piece, origin, made in pieces:
        starts.append(size)
        origins.append(origin)
        produced.append(made)
        size += len(piece)
    return Folded("".join(p[0] for p in pieces), starts, origins, produced)
