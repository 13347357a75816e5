"""Which files of a folder may hold a string, from their bytes alone: a command that looks
for one component (``promote ID``, ``approve ID``) or for the few that share its
capabilities (the conflict gates) parses only the files that may hold what it looks for;
every file is still listed and read as a folder walk reads it (:func:`load_where`).

A string is looked for this way only when it is *plain* (:func:`plain`): printable ASCII
without a space, a quote (``"`` or ``'``), a slash or a backslash.  Every loader decodes a
file as UTF-8 (a byte-order mark dropped, UTF-16 refused: :func:`risutools.values.decode`),
and a plain string can be spelled in a file, as a string value, only as itself or with a
backslash (tests/test_sieve.py tries each spelling):

- JSON (a ``.json`` file, an NDJSON line): a string token is ``"``, its characters, ``"``;
  a character of a plain string is written as itself or as a ``\\uXXXX`` escape (it has no
  other: ``\\" \\\\ \\/ \\b \\f \\n \\r \\t`` are the characters a plain string lacks).  So
  the token is in the bytes, quotes included, or the bytes hold ``\\u``.
- YAML: a scalar's characters are its own but for a double-quoted escape (a backslash),
  ``''`` in single quotes (a quote), and line folding (a line break, with the spaces
  around it, becomes a space or a line break: characters a plain string lacks, so a plain
  string never spans a line); a block scalar only removes indentation and keeps or folds
  line breaks; tags, comments and anchors add no character (aliases and merge keys are
  refused: :mod:`risutools.yamlsafe`).  So the string is in the bytes, or a backslash is.

Anything else (a string that is not plain) is not sieved: every file is parsed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from risutools.contract.loaders import Keep, LoadOutcome, list_folder, load_documents, load_file

#: a plain string (:func:`plain`): printable ASCII but space, ``"``, ``'``, ``/``, ``\\``
_PLAIN = re.compile(r"[!#-&(-.0-\[\]-~]+\Z")


def plain(text: str) -> bool:
    """Whether ``text`` is a string a file's bytes tell about (module docstring)."""
    return _PLAIN.match(text) is not None


@dataclass(frozen=True)
class Needles:
    """Plain strings (:func:`plain`) as they are looked for in a file's bytes."""

    tokens: tuple[bytes, ...]  # each as a JSON string token: b'"text"'
    texts: tuple[bytes, ...]  # each as itself: b'text'

    def may_hold(self, data: bytes, fmt: str) -> bool:
        """Whether the bytes of a file (or an NDJSON line) of format ``fmt`` (``json``,
        ``ndjson``, ``yaml``) may hold one of the strings as a string value (False: they
        cannot; never for no string)."""
        if not self.texts:
            return False
        if b"\\" in data and (fmt == "yaml" or b"\\u" in data):
            return True  # (an escape: whatever it spells)
        found = self.texts if fmt == "yaml" else self.tokens
        return any(n in data for n in found)


def needles(texts: Iterable[str]) -> Needles | None:
    """The strings ``texts`` to look for (each once), or None when one is not plain (every
    file would have to be parsed)."""
    seen = list(dict.fromkeys(texts))
    if not all(map(plain, seen)):
        return None
    raw = [t.encode("ascii") for t in seen]
    return Needles(tuple(b'"' + r + b'"' for r in raw), tuple(raw))


#: a JSON member ``"component_id": "..."`` (its value's token a group, escapes and all)
_ID_MEMBER = re.compile(rb'"component_id"[ \t\r\n]*:[ \t\r\n]*("(?:[^"\\]|\\.)*")')


@dataclass(frozen=True)
class IdNeedles:
    """Component ids looked for as a document's ``component_id`` (many of them at once:
    one search of a file's members, where :class:`Needles` searches the file once a
    string: a catalog's live components, hundreds, made that 6x slower)."""

    ids: frozenset[bytes]

    def may_hold(self, data: bytes, fmt: str) -> bool:
        """Whether the bytes may hold a document whose ``component_id`` is one of the ids:
        a ``\\u`` escape anywhere (it may spell the member's name), or YAML with an
        escape or one of the ids written, as :class:`Needles` says; else one of the
        ``component_id`` members' values (each decoded)."""
        if not self.ids:
            return False
        if fmt == "yaml":
            return b"\\" in data or any(i in data for i in self.ids)
        if b"\\u" in data:
            return True
        return any(_id_of(m.group(1)) in self.ids for m in _ID_MEMBER.finditer(data))


def _id_of(token: bytes) -> bytes:
    """A JSON string token's value, as UTF-8 (its escapes decoded)."""
    if b"\\" not in token:
        return token[1:-1]
    try:
        value = json.loads(token)
    except ValueError:
        return b""
    return value.encode("utf-8", "surrogatepass") if isinstance(value, str) else b""


def id_needles(ids: Iterable[str]) -> IdNeedles | None:
    """:class:`IdNeedles` of ``ids``, or None when one is not plain (parse every file)."""
    seen = list(dict.fromkeys(ids))
    if not all(map(plain, seen)):
        return None
    return IdNeedles(frozenset(t.encode("ascii") for t in seen))


def load_where(root: Path, keep: Keep, exclude: Iterable[str] = ()) -> LoadOutcome:
    """:func:`~risutools.contract.loaders.load_documents` of the folder ``root`` with only
    the bytes ``keep`` keeps parsed: the same documents, in the same order, where a
    file (or an NDJSON line) is kept; the listing's problems, and the problems of every
    file that cannot be read, as it gives them (a file that is not kept is not parsed, so
    its parse problems are not found).  A ``root`` that is not a folder is loaded whole
    (what it holds, every document: the caller picks what it looks for)."""
    if not root.is_dir():
        return load_documents(root, exclude=exclude)
    out, files = list_folder(root, exclude)
    for f in files:
        out.extend(load_file(f, from_folder=True, keep=keep))
    return out
