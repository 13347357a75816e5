"""File names as text: every name risutools prints is valid, printable UTF-8.

On POSIX a file name is bytes; Python hands names that are not UTF-8 (a Korean name from a
CP949 ZIP, ``b'\\xc7\\xd1\\xb1\\xdb.json'``) over as ``str`` with *surrogate escapes*
(U+DC80-U+DCFF), which cannot be encoded to UTF-8: printed as is they crash a writer or
make a JSON/SARIF report invalid.  A name may also hold a newline or an escape sequence
that would break a one-line message or a GitHub workflow command.

:func:`show_name` is the one escaping, used wherever a path becomes text (findings, reports,
error lines).  It is reversible (:func:`name_bytes` gives back the exact bytes):

- ``\\`` is written ``\\\\``;
- a byte that is not UTF-8, or an ASCII control character, is written ``\\xNN``
  (its byte value); in a name that is not UTF-8 every non-ASCII byte is (a run of it that
  happens to decode as UTF-8 would show letters its author never wrote);
- any other control, format or line/paragraph separator character (``Cc``, ``Cf``, ``Zl``,
  ``Zp``: U+0085, U+200E, U+2028, bidi overrides...) and every noncharacter (U+FFFE ...) is
  written ``\\uNNNN``;
- everything else (Korean, spaces, emoji) is kept as is.

:func:`name_uri` gives the percent-encoded URI path of a shown name (the name's bytes, so
``%C7%D1%B1%DB.json`` for the CP949 name), for SARIF.  :func:`safe_line` is the last net
for a whole output line (not reversible: backslashes are kept as they are).
"""

from __future__ import annotations

import fnmatch
import functools
import os
import re
import unicodedata
from collections.abc import Collection
from pathlib import Path
from urllib.parse import quote

_ESCAPED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})


def _escape_char(ch: str) -> str:
    o = ord(ch)
    if 0xDC80 <= o <= 0xDCFF:  # a surrogate-escaped byte
        return f"\\x{o - 0xDC00:02x}"
    if o < 0x80:
        return f"\\x{o:02x}"
    if o > 0xFFFF:
        return f"\\U{o:08x}"
    return f"\\u{o:04x}"


def real_path(path: str | os.PathLike[str]) -> Path:
    """``Path(path).resolve()`` that never raises: a symbolic link loop is left as it is
    (``os.path.realpath``'s non-strict answer), for the read or write that follows to refuse
    in its one line (ELOOP), where Python 3.10-3.12's ``Path.resolve`` raised RuntimeError
    ("Symlink loop"), which reached the user as an internal error (``pack``, third fuzzing
    pass).  Every path a user or a catalog gives is resolved through it."""
    return Path(os.path.realpath(path))


def search_start(start: str | os.PathLike[str]) -> Path:
    """Where a search upwards (for a catalog's root, a configuration file) starts: the
    folder the path is written in, absolute, its links not followed (``..`` taken as
    written).  A document named ``cat/components/x.json`` belongs to the catalog ``cat``
    even when ``components`` is a link elsewhere (the command then refuses the document as
    outside the catalog: its real path is checked against the root's); searched from the
    link's target, the catalog was wherever the link led (third fuzzing pass: ``replay run
    --update`` rewrote documents and wrote replays/ there, with no evidence line in the
    catalog's log)."""
    return Path(os.path.abspath(start))


def noncharacter(ch: str) -> bool:
    """Whether ``ch`` is one of Unicode's 66 noncharacters (U+FDD0..U+FDEF and the last two
    code points of every plane, U+FFFE and U+FFFF among them): never text, refused by
    XML 1.0 (U+FFFE, U+FFFF) and shown as nothing or a box; the same set in every Unicode
    version, so escaping them keeps every output the same on every Python."""
    o = ord(ch)
    return 0xFDD0 <= o <= 0xFDEF or o & 0xFFFE == 0xFFFE


def _needs_escape(ch: str) -> bool:
    return unicodedata.category(ch) in _ESCAPED_CATEGORIES or noncharacter(ch)


def show_name(name: str | bytes | os.PathLike[str]) -> str:
    """``name`` (a path as str with surrogate escapes, or bytes) as printable UTF-8 text."""
    if isinstance(name, bytes):
        name = os.fsdecode(name)
    s = os.fspath(name)
    if s.isprintable() and "\\" not in s:
        return s  # the common case: nothing to escape
    if any(0xDC80 <= ord(ch) <= 0xDCFF for ch in s):
        # not UTF-8 (a CP949 name): every non-ASCII byte as \xNN, since a run that happens
        # to decode as UTF-8 would show letters the name's author never wrote
        raw = s.encode("utf-8", "surrogateescape")
        return "".join("\\\\" if b == 0x5C else chr(b) if 0x20 <= b < 0x7F else f"\\x{b:02x}"
                       for b in raw)
    out = []
    for ch in s:
        if ch == "\\":
            out.append("\\\\")
        elif _needs_escape(ch):
            out.append(_escape_char(ch))
        else:
            out.append(ch)
    return "".join(out)


_UNESCAPE = re.compile(r"\\(\\|x[0-9a-f]{2}|u[0-9a-f]{4}|U[0-9a-f]{8})")


def name_bytes(shown: str) -> bytes:
    """The bytes of the name :func:`show_name` showed (its inverse)."""
    out = bytearray()
    pos = 0
    for m in _UNESCAPE.finditer(shown):
        out += shown[pos:m.start()].encode("utf-8", "surrogateescape")
        tok = m.group(1)
        if tok == "\\":
            out += b"\\"
        elif tok[0] == "x":
            out.append(int(tok[1:], 16))
        else:
            out += chr(int(tok[1:], 16)).encode("utf-8", "surrogatepass")
        pos = m.end()
    out += shown[pos:].encode("utf-8", "surrogateescape")
    return bytes(out)


def name_uri(shown: str) -> str:
    """A shown (relative or absolute, ``/``-separated) name as a percent-encoded URI path."""
    return quote(name_bytes(shown), safe="/")


#: the start of a CI runner's older workflow command, ``##[name ...]data``, which GitHub's
#: runner takes from anywhere in a line (``::name::`` only at a line's start): never shown as
#: it is, its ``[`` escaped in each output's own way (:func:`safe_line`, and
#: :mod:`risutools.printable`'s ``display``, ``no_commands`` and ``json_text``)
RUNNER_COMMAND = "##["


def safe_line(text: str) -> str:
    """One output line with surrogate escapes and control characters written as ``\\xNN`` /
    ``\\uNNNN`` (so it stays one printable, encodable line), and the ``[`` of a ``##[``
    (:data:`RUNNER_COMMAND`) as ``\\x5b``."""
    if not text.isprintable():
        text = "".join(_escape_char(ch) if _needs_escape(ch) else ch for ch in text)
    return text if RUNNER_COMMAND not in text else text.replace(RUNNER_COMMAND, "##\\x5b")


# --------------------------------------------------------------------------- ids as names

#: the longest component_id that names a file as it is (NAME_MAX is 255 bytes; a record's
#: name adds the action and the hash after it)
ID_NAME_MAX = 150
_PLAIN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*\Z")
_ID_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def plain_id(component_id: object) -> bool:
    """Whether a component_id may name a file as it is: ASCII letters, digits, ``.``, ``_``
    and ``-``, starting with a letter or digit, no ``..``, at most :data:`ID_NAME_MAX`
    characters.  Every id the contract's pattern allows is plain; an id with a path
    separator, ``..``, a control character or a leading dot is not.  The one test, asked
    wherever an id becomes a path (``notes/<id>.yaml``, approval records, packets, replay
    reports)."""
    return (isinstance(component_id, str) and len(component_id) <= ID_NAME_MAX
            and _PLAIN_ID.match(component_id) is not None and ".." not in component_id)


def id_file_stem(component_id: str) -> str:
    """The start of a new file's name for a component: the id itself when it is
    :func:`plain_id`, else the id with every run of other characters as ``_`` (a leading
    dot and ``..`` included), cut to :data:`ID_NAME_MAX`: never a separator, never a
    hidden name, never ``..``."""
    if plain_id(component_id):
        return component_id
    stem = _ID_UNSAFE.sub("_", component_id).replace("..", "_")[:ID_NAME_MAX]
    return "_" + stem[1:] if stem.startswith(".") or not stem else stem


def fits_wildcard(pattern: str, name: str) -> bool:
    """Whether ``name`` fits ``pattern``, where each ``*`` stands for any text and the
    literal parts must appear in order (plain string tests, linear in the name: no regular
    expression is built from either)."""
    parts = pattern.split("*")
    if len(parts) == 1:
        return name == pattern
    if not name.startswith(parts[0]) or not name.endswith(parts[-1]) \
            or len(name) < len(parts[0]) + len(parts[-1]):
        return False
    pos = len(parts[0])
    for part in parts[1:-1]:
        at = name.find(part, pos, len(name) - len(parts[-1]))
        if at < 0:
            return False
        pos = at + len(part)
    return True


def fits_any(pattern: str, names: Collection[str]) -> bool:
    """Whether any of ``names`` fits ``pattern`` (:func:`fits_wildcard`): a pattern without
    ``*`` fits its own name alone, so it is looked up (in C), not compared name by name."""
    if "*" not in pattern:
        return pattern in names
    return any(fits_wildcard(pattern, n) for n in names)


@functools.lru_cache(maxsize=8)
def _globs(patterns: tuple[str, ...]) -> re.Pattern[str]:
    """``exclude:`` globs as one expression: each ``fnmatch`` pattern once, in C (a name
    is not matched pattern by pattern, each compiled again once ``fnmatch``'s cache of
    32,768 is outgrown: 20,000 globs over 200 files took 16 s)."""
    return re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in patterns))


def excluded(patterns: tuple[str, ...], rel: str, name: str) -> bool:
    """Whether a folder walk leaves out the file at ``rel`` (relative to the folder walked,
    ``/``-separated) named ``name``: an ``exclude:`` glob (``fnmatch``'s) fits the relative
    path or the name."""
    if not patterns:
        return False
    rx = _globs(tuple(patterns))
    return rx.match(rel) is not None or rx.match(name) is not None


class WholeFolder(str):
    """A folder every file of which a command may read (a source store: any file in it may
    be looked up and hashed), as a command names what it reads: an output inside it is one
    of its inputs, whatever the file is."""

    __slots__ = ()
