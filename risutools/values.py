"""JSON and YAML values read from untrusted text, with every guard of the catalog loader.

Duplicate keys, NaN/Infinity, YAML aliases and tags that are not JSON, nesting past
:data:`MAX_DEPTH` levels, unpaired surrogates, UTF-16 and bytes that are not UTF-8 are
refused, each with the line (and JSON pointer) where it was found.  A refusal is a
:class:`Problem` (what, line, pointer): the contract's loader turns it into an ``MC000``
finding, the other readers (configuration, replay fixtures, component files, notes) into a
:class:`~risutools.errors.DocumentError` ``bad-document`` (:func:`parse_value`).

Two JSON paths give byte-identical answers: orjson when it cannot differ from ``json``
(:func:`fast_json`, which also hands back the canonical bytes), else ``json`` with a hook
that refuses duplicate keys.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from risutools.canonical import (
    plain_canonical,
    plain_compact,
    plain_levels,
    plain_levels_many,
    plain_levels_texts,
    sha256_prefixed,
)
from risutools.errors import Code, DocumentError
from risutools.jsonlines import unpaired_surrogate
from risutools.jsonplaces import PARSE_INT, scan
from risutools.jsontypes import finite_float
from risutools.yamlsafe import (
    CONTAINER_COST,
    MAX_YAML_COST,
    SCALAR_COST,
    TOO_MANY,
    YamlDocument,
    YamlRefused,
    load_yaml_documents,
)

try:
    import orjson
except ImportError:  # pragma: no cover - a dependency; without it the exact path alone
    orjson = None  # type: ignore[assignment]

#: largest document accepted (a JSON/YAML file, an NDJSON line)
MAX_DOCUMENT_BYTES = 8 * 1024 * 1024
#: deepest nesting accepted in a document (a JSON/YAML file or an NDJSON line)
MAX_DEPTH = 64

TOO_DEEP = f"nested deeper than {MAX_DEPTH} levels; flatten the document"
EMPTY = "empty file: no document in it; write a document or remove the file"
NOTHING = "no document in the file (only comments or null); write a document"


@dataclass(frozen=True)
class Problem:
    """Why a text cannot be read as a value, and where (1-based line, JSON pointer)."""

    message: str
    line: int | None = None
    pointer: str = ""


# --------------------------------------------------------------------------- decoding


def decode(data: bytes, base_offset: int = 0, line: int | None = None
           ) -> tuple[str | None, Problem | None]:
    """UTF-8 text of ``data`` (a UTF-8 byte-order mark dropped), or the problem: UTF-16,
    or the offset of the first byte that is not UTF-8 (``base_offset`` added)."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return None, Problem("file is UTF-16 encoded (has a UTF-16 byte order mark); "
                             "save it as UTF-8", line)
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
        base_offset += 3
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        off = base_offset + exc.start
        return None, Problem(
            f"not UTF-8: byte 0x{data[exc.start]:02x} at byte offset {off} "
            f"({exc.reason}); save the file as UTF-8", line)


# --------------------------------------------------------------------------- YAML


def load_yaml(text: str, *, lines: bool = True) -> tuple[list[YamlDocument], Problem | None]:
    """The YAML documents of ``text`` (those holding only ``null`` left out), read until
    the first problem; a text with neither a document nor a problem gives :data:`NOTHING`.
    ``lines=False``: without their line maps (:func:`load_yaml_documents`)."""
    import yaml

    docs: list[YamlDocument] = []
    problem: Problem | None = None
    try:
        docs.extend(d for d in load_yaml_documents(text, max_depth=MAX_DEPTH, lines=lines)
                    if d.value is not None)
    except YamlRefused as exc:
        problem = Problem(exc.why, exc.line, exc.pointer)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        what = " ".join(x for x in (exc.context, exc.problem) if x) or "YAML syntax error"
        problem = Problem(f"not valid YAML: {what}; fix the syntax there", line)
    except yaml.reader.ReaderError as exc:  # (a character YAML never takes: no mark, its
        # position in the text, printed as one line, never PyYAML's own)
        at = exc.position if isinstance(exc.position, int) else -1
        problem = Problem(f"not valid YAML: the character {_shown_char(exc.character)} is "
                          "not allowed in YAML (a control character); remove it",
                          text.count("\n", 0, at) + 1 if at >= 0 else None)
    except yaml.YAMLError as exc:
        problem = Problem(f"not valid YAML: {exc}")
    except RecursionError:
        problem = Problem(TOO_DEEP)
    except ValueError as exc:  # e.g. an integer with too many digits
        problem = Problem(f"value cannot be read: {exc}")
    if not docs and problem is None:
        problem = Problem(NOTHING)
    return docs, problem


def _shown_char(ch: object) -> str:
    """A character as a code point (``U+0001``), whatever PyYAML gives (a str or an int)."""
    if isinstance(ch, str) and len(ch) == 1:
        return f"U+{ord(ch):04X}"
    if isinstance(ch, int):
        return f"0x{ch:02X}"
    return "(unknown)"


# --------------------------------------------------------------------------- JSON


class _DuplicateKey(Exception):
    pass


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    d = dict(pairs)
    if len(d) != len(pairs):
        raise _DuplicateKey()
    return d


def _nonfinite(token: str) -> Any:
    raise ValueError(f"{token} is not JSON")


_DECODER = json.JSONDecoder(object_pairs_hook=_pairs, parse_constant=_nonfinite,
                            parse_float=finite_float, parse_int=PARSE_INT)

def fast_json(data: bytes) -> tuple[Any, bytes] | None:
    """(value, canonical bytes) of UTF-8 JSON ``data`` parsed by orjson, or None when the
    exact path (``json`` with the duplicate-key hook) must decide.  Every guard holds:

    - orjson refuses (None) what ``json`` refuses or takes differently: invalid JSON or
      UTF-8, a byte-order mark, NaN/Infinity, unpaired surrogates, numbers out of range,
      nesting past 1,024 levels;
    - numbers: a value holding a float is left to ``json`` (:func:`plain_levels` None), so
      every value is exactly the one ``json`` gives: orjson reads a number token with a
      fraction or an exponent as a float, and an integer past 64 bits too (as ``json``
      reads every integer exactly, it reads the others exactly);
    - duplicate keys: the canonical form (orjson, keys sorted; see ``canonical``) holds one
      ``:`` per key kept plus the ``:`` of every string, and the text one per key written
      plus the same ``:`` of every string, as long as no ``\\u003a`` escape spells one:
      the two counts are equal exactly when no key was repeated (``"a"`` and ``"\\u0061"``
      included: they are one key once decoded);
    - nesting past ``MAX_DEPTH`` levels: the container levels :func:`plain_levels` counts.
    """
    value = _parsed(data)
    if value is _REFUSED:
        return None
    levels = plain_levels(value)  # (one walk over the levels: the numbers and the depth)
    if levels is None or levels > MAX_DEPTH:
        return None
    canon = _unrepeated(value, data, sort=True)
    return None if canon is None else (value, canon)


#: a byte order mark: where a text begins with one, the exact path names it (``json``
#: says "Expecting value")
_MARK = "\ufeff"
#: what :func:`_parsed` gives for a text the fast path does not take (None is a JSON value)
_REFUSED: Any = object()


def _parsed(data: bytes) -> Any:
    """orjson's value of ``data``, or :data:`_REFUSED` when the fast path does not take it:
    no orjson, a ``:`` that may be spelled as an escape (:func:`_spells_a_colon`), or a text
    orjson refuses (the exact path then says why)."""
    if orjson is None or _spells_a_colon(data):
        return _REFUSED
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return _REFUSED


def _spells_a_colon(data: bytes) -> bool:
    """Whether ``data`` may spell a ``:`` as a ``\\u003a``-style escape, which the
    duplicate-key guard's count would miss (the escape needs a backslash: looked for
    only when there is one, a faster search).  ``find``, not ``in``: ``bytes in bytes``
    first tries the needle as an integer, raising and clearing a TypeError each time (a
    few thousand instructions a document)."""
    return data.find(b"\\") >= 0 and data.find(b"\\u003") >= 0


def _unrepeated(value: Any, data: bytes, *, sort: bool) -> bytes | None:
    """The duplicate-key guard: ``value``'s compact bytes (its canonical form, keys sorted,
    when ``sort``; else keys as written) when they hold as many ``:`` as the text ``data``
    it was parsed from (no key repeated), else None (repeated, or not for orjson)."""
    canon = plain_canonical(value) if sort else plain_compact(value)
    if canon is None or canon.count(b":") != data.count(b":"):
        return None
    return canon


def fast_json_texts(data: bytes, keys: tuple[str, ...], *, sort: bool = True
                    ) -> tuple[Any, bytes, list[str] | None] | None:
    """:func:`fast_json`, with the strings below the value's members ``keys`` that its
    guard's level walk met (see :func:`~risutools.canonical.plain_levels_texts`; None when
    the value is not an object).  ``sort=False``: the bytes given are the value's compact
    form with its keys as written (orjson without sorting: the same ``:`` count, so the
    same guard, but not the canonical form: for a caller that hashes nothing)."""
    value = _parsed(data)
    if value is _REFUSED:
        return None
    found = plain_levels_texts(value, keys)  # (one walk over the levels: numbers, depth)
    if found is None or found[0] > MAX_DEPTH:
        return None
    canon = _unrepeated(value, data, sort=sort)
    return None if canon is None else (value, canon, found[1])


def fast_json_texts_many(datas: list[bytes], keys: tuple[str, ...], *, sort: bool = True
                         ) -> tuple[list[tuple[Any, bytes] | None], list[str]]:
    """:func:`fast_json_texts` of each of ``datas``, its guard's level walk made once over
    them all (:func:`~risutools.canonical.plain_levels_many`) when none of them holds a
    float or nests too deep (else one at a time, each text still parsed once): for each
    text, (its value, its bytes) or None where :func:`fast_json_texts` gives None; and
    the strings below the members ``keys`` of the values taken, all together (whose each
    is, is not kept)."""
    values = [_parsed(d) for d in datas]
    taken = [v for v in values if v is not _REFUSED]
    found = plain_levels_many(taken, keys)
    if found is not None and found[0] - 1 <= MAX_DEPTH:  # (the list's own level less)
        texts = found[1]
    else:  # one of them refused: each walked alone, as fast_json_texts walks it
        texts = []
        for i, v in enumerate(values):
            one = None if v is _REFUSED else plain_levels_texts(v, keys)
            if one is None or one[0] > MAX_DEPTH:
                values[i] = _REFUSED
            elif one[1] is not None:
                texts += one[1]
    out: list[tuple[Any, bytes] | None] = []
    for v, d in zip(values, datas, strict=True):
        canon = None if v is _REFUSED else _unrepeated(v, d, sort=sort)
        out.append(None if canon is None else (v, canon))
    return out, texts


def fast_json_many(texts: list[bytes]) -> list[Any] | None:
    """The values :func:`fast_json` gives for each of ``texts``, when it gives one for every
    one of them; else None (then ask :func:`fast_json` one text at a time).  Each text is
    parsed on its own (:func:`loads_many`); the guards run once over them all
    (:func:`fast_json_many_of`)."""
    values = loads_many(texts)
    return None if values is None else fast_json_many_of(values, texts)


def loads_many(texts: list[bytes]) -> list[Any] | None:
    """orjson's value of each of ``texts`` (each parsed on its own), or None when orjson is
    missing or refuses one of them.  No guard has run: the values are :func:`fast_json`'s
    only once :func:`fast_json_many_of` has taken them, or once the caller has checked
    their shape itself and :func:`colons_written` their keys."""
    if orjson is None:
        return None
    try:
        return list(map(orjson.loads, texts))
    except orjson.JSONDecodeError:
        return None


def fast_json_many_of(values: list[Any], texts: list[bytes]) -> list[Any] | None:
    """:func:`fast_json_many` of ``texts`` whose values :func:`loads_many` gave: ``values``
    when :func:`fast_json` gives each of them, else None.  The guards run once over them
    all:

    - numbers and nesting: :func:`plain_levels` of the list of values is one more than the
      deepest value's, and None when any value holds a float;
    - duplicate keys: a text's ``:`` count is never below its canonical form's (every key
      kept and every string of the value is written in the text, each ``:`` as itself when
      no ``\\u003a`` escape spells one), so the totals are equal exactly when each text's
      count equals its canonical form's (:func:`colons_written`).  The form is counted as
      orjson writes it with the keys as they are (:func:`plain_compact`: the same ``:``
      as the canonical form, whose sorting is not needed to count them; refused alike).
    """
    levels = plain_levels(values)
    if levels is None or levels - 1 > MAX_DEPTH:
        return None
    compact = plain_compact(values)
    if compact is None:
        return None
    return values if colons_written(texts, compact.count(b":")) else None


def colons_written(texts: list[bytes], colons: int) -> bool:
    """The duplicate-key guard of :func:`fast_json` over ``texts`` whose values hold
    ``colons`` ``:`` in their canonical form (one a key kept, plus every ``:`` of their
    strings, keys included): whether the texts hold as many, and no ``\\u003a``-style
    escape that could spell one the count would miss.  A text holds one ``:`` a key
    written (a repeated key is written twice, kept once) plus the same ``:`` of the
    strings, so the counts are equal exactly when no key of any of them is repeated
    (``"a"`` and ``"\\u0061"`` included: one key once decoded).  A caller that knows
    its values' shape may count ``colons`` itself (the keys it met, the strings' ``:``)
    rather than writing the canonical form."""
    written = b"\n".join(texts)
    return colons_written_in(written, 0, len(written), colons)


def colons_written_in(data: bytes, start: int, end: int, colons: int) -> bool:
    """:func:`colons_written` of the texts ``data[start:end]`` holds, each ended by a line
    break (which holds no ``:`` and no ``\\``): counted where they are, not joined."""
    if data.find(b"\\", start, end) >= 0 and data.find(b"\\u003", start, end) >= 0:
        return False  # (find, not in: see _spells_a_colon)
    return data.count(b":", start, end) == colons


def parse_json_text(text: str, *, line: int | None) -> tuple[Any, Problem | None]:
    """Parse one JSON document; returns (value, None) or (None, the problem)."""
    doc, problem, _ = parse_json_hashed(text, line=line)
    return doc, problem


def parse_json_hashed(text: str, *, line: int | None
                      ) -> tuple[Any, Problem | None, str | None]:
    """:func:`parse_json_text`, with the canonical document hash when the fast path
    computed it on the way (else None)."""
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:  # an unpaired surrogate: the exact path says where
        data = None
    fast = fast_json(data) if data is not None else None
    if fast is not None:
        return fast[0], None, sha256_prefixed(fast[1])
    doc, problem = parse_json_exact(text, line=line)
    return doc, problem, None


def parse_json_exact(text: str, *, line: int | None) -> tuple[Any, Problem | None]:
    """``json`` with the duplicate-key hook: the reference path every fast path answers as.
    ``line`` is the text's first line in its file (an NDJSON line), None for a whole file."""
    first = line or 1
    try:
        doc = _DECODER.decode(text)
    except _DuplicateKey:
        res = scan(text, first)
        if res.duplicate is None and res.deeper:  # (repeated below what a scan records)
            return None, Problem(TOO_DEEP, first)
        ptr, ln = res.duplicate if res.duplicate else ("", first)
        key = ptr.rsplit("/", 1)[-1].replace("~1", "/").replace("~0", "~")
        return None, Problem(f"duplicate key {key!r}: a key may appear once per object; "
                             "remove or rename one of them", ln, ptr)
    except json.JSONDecodeError as exc:
        ln = first + exc.lineno - 1
        where = f"column {exc.colno}" if line is not None else f"line {ln} column {exc.colno}"
        if exc.pos == 0 and text.startswith(_MARK):  # (what "Expecting value" meant here)
            return None, Problem(f"not valid JSON: a byte order mark (U+FEFF) at {where} "
                                 "(an editor's re-encoding); remove it", ln)
        return None, Problem(f"not valid JSON: {exc.msg.removesuffix(' at')} at {where}; fix "
                             "the syntax there", ln)
    except RecursionError:
        return None, Problem(TOO_DEEP, first)
    except ValueError as exc:
        res = scan(text, first)
        if res.nonfinite is None and res.deeper:  # (below what a scan records)
            return None, Problem(TOO_DEEP, first)
        if res.nonfinite is not None:
            ptr, ln, tok = res.nonfinite
            if tok.lstrip("+-") not in ("NaN", "Infinity"):
                return None, Problem(f"{tok[:40]} is out of a JSON number's range (it reads as "
                                     "Infinity, which is refused); write a number or null",
                                     ln, ptr)
            return None, Problem(f"{tok} is not a JSON number (NaN/Infinity are refused); "
                                 "write a number or null", ln, ptr)
        return None, Problem(f"value cannot be read: {exc}", first)
    problem = check_value(doc, first, text)
    if problem is not None:
        return None, problem
    return doc, None


def check_value(doc: Any, line: int, text: str | None) -> Problem | None:
    """Depth bound and unpaired surrogates (only searched when the text has a \\ud escape)."""
    look_for_surrogates = text is None or "\\ud" in text or "\\uD" in text
    if (not look_for_surrogates and text is not None
            and text.count("{") + text.count("[") < MAX_DEPTH):
        return None  # fewer brackets than the bound: it cannot nest deeper
    stack: list[tuple[Any, int]] = [(doc, 0)]
    while stack:
        v, depth = stack.pop()
        if isinstance(v, dict):
            if depth >= MAX_DEPTH:
                return Problem(TOO_DEEP, line)
            if look_for_surrogates:
                stack.extend((k, depth + 1) for k in v)
            stack.extend((x, depth + 1) for x in v.values())
        elif isinstance(v, list):
            if depth >= MAX_DEPTH:
                return Problem(TOO_DEEP, line)
            stack.extend((x, depth + 1) for x in v)
        elif look_for_surrogates and isinstance(v, str):
            try:
                v.encode("utf-8")
            except UnicodeEncodeError:  # the first one in document order, with its pointer
                ptr, why = unpaired_surrogate(doc) or ("", "")
                at = scan(text, line).lines.get(ptr, line) if text is not None else line
                return Problem(why, at, ptr)
    return None


# --------------------------------------------------------------------------- one value


#: a JSON string once its escaped quotes and backslashes are neutral characters: a quote,
#: non-quotes, a quote (no backtracking state)
_JSON_STRING = re.compile(r'"[^"]*"')


def _json_cost(text: str) -> int:
    """YAML's estimate of the values' memory (:data:`~risutools.yamlsafe.MAX_YAML_COST`)
    from a JSON text's punctuation: each ``{``/``[`` a container, each ``,``/``:`` one more
    scalar at most (an over-estimate where strings hold them)."""
    containers = text.count("{") + text.count("[")
    return (containers * CONTAINER_COST
            + (text.count(",") + text.count(":") + 1) * SCALAR_COST)


def json_values_fit(text: str) -> bool:
    """Whether the values of a JSON text stay within the bound YAML's are held to (a
    64 MiB fixture of ``{}`` turns built 8 GB of objects): counted on the punctuation with
    the strings in (an upper bound: what passes at once), else with them taken out."""
    if _json_cost(text) <= MAX_YAML_COST:
        return True
    plain = text.replace("\\\\", "__").replace('\\"', "__")
    return _json_cost(_JSON_STRING.sub('""', plain)) <= MAX_YAML_COST


def parse_value(text: str, name: str, fmt: str) -> Any:
    """One JSON (``fmt="json"``) or YAML value, with every guard of the catalog loader:
    duplicate keys, NaN/Infinity, YAML aliases and non-JSON tags, nesting depth.

    Used for the other files risutools reads as data (replay fixtures, configurations,
    component files, notes).  A YAML file holding no document gives ``None``; several
    documents are refused, and so is blank JSON (as an empty file).  Raises
    :class:`DocumentError` (code ``bad-document``) with the line and the reason.
    """
    if fmt == "json":
        if not text.strip():
            raise DocumentError(Code.BAD_DOCUMENT, EMPTY, path=name)
        if not json_values_fit(text):
            raise DocumentError(Code.BAD_DOCUMENT, TOO_MANY, path=name)
        value, problem = parse_json_text(text, line=None)
        if problem is None:
            return value
    else:
        docs, problem = load_yaml(text, lines=False)  # the value alone: no line map
        if problem is None and len(docs) > 1:
            raise DocumentError(Code.BAD_DOCUMENT, "several YAML documents in one file; keep "
                                "one", where=f"line {docs[1].line}", path=name)
        if docs and problem is None:
            return docs[0].value
        if problem is not None and problem.message == NOTHING:
            return None
    assert problem is not None
    raise DocumentError(Code.BAD_DOCUMENT, problem.message,
                        where=f"line {problem.line}" if problem.line else "", path=name)


def decode_text(data: bytes, name: str) -> str:
    """The UTF-8 text of a data file, with the catalog loader's rules: a UTF-8 byte-order
    mark is dropped, UTF-16 and undecodable bytes are refused with the byte offset.
    Raises :class:`DocumentError` (code ``bad-document``)."""
    text, err = decode(data)
    if text is None:
        raise DocumentError(Code.BAD_DOCUMENT, err.message if err else "cannot decode",
                            path=name)
    return text


def parse_value_bytes(data: bytes, name: str, fmt: str) -> Any:
    """:func:`parse_value` over a file's bytes, decoded by :func:`decode_text`; JSON that
    the fast path (:func:`fast_json`) takes is read from the bytes themselves (the same
    value: its contract)."""
    if fmt == "json":
        fast = fast_json(data)
        if fast is not None:
            return fast[0]
    return parse_value(decode_text(data, name), name, fmt)
