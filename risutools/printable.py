"""Text from untrusted files made safe to show: one line, nothing that moves the cursor,
reorders the line or breaks the encoding (module names and strings, catalog values in every
report)."""

from __future__ import annotations

import html
import re
import unicodedata
from typing import Any

from risutools.errors import UsageError
from risutools.pathnames import RUNNER_COMMAND, noncharacter


def scrub(value: Any) -> Any:
    """A copy of a JSON-like value whose strings are valid UTF-8 (lone surrogates -> "?")."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
            return value
        except UnicodeEncodeError:
            return value.encode("utf-8", "replace").decode("utf-8")
    if isinstance(value, dict):
        return {scrub(k): scrub(v) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub(v) for v in value]
    return value


#: character categories escaped when module text is shown: controls (line breaks, ESC),
#: format characters (bidi overrides and isolates, zero-width joiners), line and paragraph
#: separators, surrogates and unassigned code points; spaces of every script print as is
_SPOOFING = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs", "Cn"})


def display(text: str) -> str:
    """``text`` safe to print on one line: the characters that could break or reorder the
    output (controls, bidi and other format characters) escaped as ``\\uXXXX``, and the
    ``[`` of a ``##[`` (:data:`RUNNER_COMMAND`) as ``\\x5b``; every other character,
    ideographic space (U+3000) included, kept as it is."""
    if text.isprintable():
        return text if RUNNER_COMMAND not in text else text.replace(RUNNER_COMMAND, "##\\x5b")
    out: list[str] = []
    for ch in text:
        if ch == " " or unicodedata.category(ch) not in _SPOOFING:
            out.append(ch)
        elif 0xDC80 <= ord(ch) <= 0xDCFF:  # (a byte of a name that is not UTF-8, as Python
            out.append(f"\\x{ord(ch) - 0xDC00:02x}")  # reads argv: shown as a file name is)
        else:
            out.append(ch.encode("unicode_escape").decode("ascii"))
    return "".join(out).replace(RUNNER_COMMAND, "##\\x5b")


def quoted(text: str) -> str:
    """``text`` in single quotes for a message, shown as :func:`display` shows it."""
    return "'" + display(text) + "'"


# --------------------------------------------------------------------------- one escaping
# per output kind, for every value that comes from a catalog or a module (ids, names,
# reviewer names, log fields, notes, messages that quote them).  GitHub workflow commands
# are escaped by ``report/github.py`` over :func:`text_value`.


def text_value(value: Any) -> str:
    """A value for a text report or a terminal: one line, no escape sequence (ESC, OSC,
    CSI), no line break (no forged row, no ``::error::`` line in a CI log), no bidi
    reordering: :func:`display` of its text."""
    return display(value if isinstance(value, str) else str(value))


def html_value(value: Any) -> str:
    """A value inside an HTML page (text or an attribute in double quotes):
    :func:`text_value` (no control character reaches the page or a terminal showing it),
    then HTML-escaped (``& < > " '``): no tag, no attribute, no entity from the value."""
    return html.escape(text_value(value), quote=True)


def no_commands(text: str) -> str:
    """``text`` (a report of lines) with no line a CI runner takes for a workflow command: a
    line whose text starts with ``::`` after its indent (GitHub's runner trims the indent
    before it looks; a file named ``::stop-commands::x.json``, a toggle key ``::error x``
    opening a line) gets that first colon written ``\\x3a``.  The formats made of workflow
    commands (``-f github``) are not passed through it; no value can start a line in the
    others (JSON, XML and HTML write a line break inside a value escaped).  A ``##[``
    anywhere (:data:`RUNNER_COMMAND`) gets its ``[`` written ``\\x5b``."""
    if RUNNER_COMMAND in text:
        text = text.replace(RUNNER_COMMAND, "##\\x5b")
    if "::" not in text:
        return text
    lines = text.split("\n")
    for i, line in enumerate(lines):
        rest = line.lstrip()
        if rest.startswith("::"):
            lines[i] = line[:len(line) - len(rest)] + "\\x3a" + rest[1:]
    return "\n".join(lines)


_MD_ENTITIES = {"&": "&amp;", "<": "&lt;"}
#: backslashed: ``\`` and the marks of emphasis (``*``, ``_``, ``~``), links (``[``,
#: ``]``), cells (``|``) and headings (``#``); and ``:`` and ``@``, with which GitHub makes
#: a link of bare text (``https://h``, ``user@h``: GFM's autolinks), a mention that notifies
#: someone (``@org/team``) or an emoji (``:x:``): an escaped one is only the character
_MD_BACKSLASHED = frozenset("\\*_[]|#~:@")
_MD_BLOCK_START = re.compile(r"[-+=>]|\d+[.)]")
#: ``www.`` starts a link of bare text too (GFM): its dot escaped
_MD_WWW = re.compile(r"(?i)(?<![A-Za-z0-9])(www)\.")


def markdown_value(value: Any) -> str:
    """A value inside a line of Markdown (a table cell, a list item, a heading's text):
    :func:`text_value`, then no raw HTML or entity (``<`` and ``&`` as entities), no link
    or image (``[ ]`` escaped), no link GitHub makes of bare text, mention or emoji (``:``,
    ``@`` and the dot of ``www.`` escaped), no emphasis (``*``, ``_``, ``~``), no heading,
    list, quote or rule started by the value (``#``, a leading ``-``, ``+``, ``=``, ``>`` or
    ``1.`` escaped), no table cell ended (``|``), no code span (a backtick becomes ``'``)."""
    s = text_value(value).replace("`", "'")
    if not any(c in _MD_ENTITIES or c in _MD_BACKSLASHED for c in s):
        out = s
    else:
        out = "".join(_MD_ENTITIES.get(c) or ("\\" + c if c in _MD_BACKSLASHED else c)
                      for c in s)
    if "." in out:
        out = _MD_WWW.sub(r"\1\\.", out)
    m = _MD_BLOCK_START.match(out)
    if m is not None:
        end = m.end() - 1
        out = out[:end] + "\\" + out[end:]
    return out


def markdown_code(value: Any, *, cell: bool = False) -> str:
    """A value shown as a Markdown code span: one line (:func:`text_value`), and no
    backtick to close the span (it becomes ``'``).  ``cell``: the span is in a table's
    cell, where a ``|`` ends the cell even inside a code span (GFM): it is written ``\\|``,
    which a table shows as ``|``."""
    code = text_value(value).replace("`", "'")
    return "`" + (code.replace("|", "\\|") if cell else code) + "`"


_JSON_ESCAPED = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})
_json_class: re.Pattern[str] | None = None


def _json_unsafe() -> re.Pattern[str]:
    """The characters :func:`json_text` looks at: those of the Basic Multilingual Plane it
    escapes, as ranges of one class (``re`` tests such a class with one table lookup a
    character), and every character above that plane (few in any text; each is escaped
    or kept by its category in :func:`_json_escape`, whatever the Unicode version)."""
    global _json_class
    if _json_class is None:
        # (the noncharacters of the first plane: U+FDD0..U+FDEF, U+FFFE, U+FFFF)
        codes = sorted({o for o in range(0x10000) if o != 0x0A
                        and unicodedata.category(chr(o)) in _JSON_ESCAPED}
                       | {*range(0xFDD0, 0xFDF0), 0xFFFE, 0xFFFF})
        _json_class = re.compile(_class(codes) + "|[\U00010000-\U0010FFFF]")
    return _json_class


def _class(codes: list[int]) -> str:
    """A regex class of the sorted code points ``codes``, written as ranges."""
    parts: list[str] = []
    start = prev = codes[0]
    for o in [*codes[1:], -1]:
        if o == prev + 1:
            prev = o
            continue
        parts.append(re.escape(chr(start)) if start == prev
                     else f"{re.escape(chr(start))}-{re.escape(chr(prev))}")
        start = prev = o
    return "[" + "".join(parts) + "]"


def _json_escape(m: re.Match[str]) -> str:
    ch = m.group()
    o = ord(ch)
    if o > 0xFFFF:
        if unicodedata.category(ch) not in _JSON_ESCAPED and not noncharacter(ch):
            return ch
        o -= 0x10000
        return f"\\u{0xD800 + (o >> 10):04x}\\u{0xDC00 + (o & 0x3FF):04x}"
    return f"\\u{o:04x}"


def json_text(text: str) -> str:
    """JSON text (``json.dumps(..., ensure_ascii=False)``) with every control, format, line
    or paragraph separator character, noncharacter (U+FFFE ...: XML refuses them, a viewer
    shows nothing) and lone surrogate written as a ``\\uXXXX`` escape: the same JSON
    values, and nothing that moves a terminal's cursor or reorders a line when the JSON is
    shown.  The layout's own line breaks stay.

    A text ``str.isprintable`` passes is returned as is, after one C pass: every character
    this escapes is one it finds unprintable (its categories ``Cc``, ``Cf``, ``Cs``, ``Zl``
    and ``Zp`` are among those, and every noncharacter is ``Cn``), read from this Python's
    own Unicode tables as :func:`_json_unsafe`'s are.  A ``##[`` (:data:`RUNNER_COMMAND`,
    only ever inside a string) gets its ``[`` written ``\\u005b``: the same value, and no
    workflow command in a CI log that shows the JSON."""
    if RUNNER_COMMAND in text:
        text = text.replace(RUNNER_COMMAND, "##\\u005b")
    if text.isprintable():
        return text
    return _json_unsafe().sub(_json_escape, text)


#: :data:`RUNNER_COMMAND` as UTF-8 (what :func:`json_bytes` looks for)
_RUNNER_BYTES = RUNNER_COMMAND.encode()
#: the printable ASCII characters' bytes (what :func:`json_bytes_text` takes out first)
_PRINTABLE_ASCII = bytes(range(0x20, 0x7F))


def json_bytes_text(data: bytes) -> str:
    """:func:`json_text` of the UTF-8 text ``data`` (decoded strictly)."""
    kept = json_bytes(data)
    return kept.decode("utf-8") if isinstance(kept, bytes) else kept


def json_bytes(data: bytes) -> bytes | str:
    """``data`` itself when :func:`json_text` leaves its text as it is, else that text
    escaped; ``data``: valid UTF-8 (as orjson writes any text).  Whether the text is
    printable is asked of what is left of it once its printable ASCII bytes are taken out
    (one C pass; every character of two bytes or more stays whole, as no byte of one is
    ASCII): the text holds exactly those characters besides printable ones."""
    rest = data.translate(None, _PRINTABLE_ASCII)
    if (not rest or rest.decode("utf-8").isprintable()) and _RUNNER_BYTES not in data:
        return data
    return json_text(data.decode("utf-8"))


def plain_text_problem(value: str) -> str | None:
    """Why ``value`` is not one line of plain text (its first control character: a line
    break, ESC ..., or format character: a bidi override ...), or None."""
    for ch in value:
        if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp", "Cs"):
            return f"holds the control character {_escaped(ch)}"
    return None


def require_plain_text(value: str, option: str) -> str:
    """``value``, or a ``usage`` error naming ``option`` when it is not one line of plain
    text (:func:`plain_text_problem`): text a record keeps and a person later reads as one
    line (``approve --reviewer/--note``)."""
    why = plain_text_problem(value)
    if why is not None:
        raise UsageError(option, f"{why}; a record holds one line of plain text")
    return value


def _escaped(ch: str) -> str:
    return ch.encode("unicode_escape").decode("ascii") if ord(ch) < 0xD800 or \
        ord(ch) > 0xDFFF else f"\\u{ord(ch):04x}"
