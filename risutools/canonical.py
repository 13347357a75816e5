"""Canonical JSON form and the document hash (the "base hash").

``canonical(doc)``: UTF-8 JSON, keys sorted, separators ``,``/``:``, non-ASCII
characters as themselves, NaN/Infinity refused.  ``doc_sha256(doc)`` =
``"sha256:" + sha256(canonical(doc))``.

Two writers give these bytes: ``json``'s encoder (the definition) and, for a value made
only of objects, arrays, strings, integers, booleans, null and floats that ``repr`` writes
without an exponent, orjson (compiled, ~4x faster), whose output for such values is byte
for byte the same (tests/test_indented_json.py compares them).  Other floats (whose
spelling differs: ``1e-05`` vs ``0.00001``), integers past 64 bits, unpaired surrogates and
anything that is not a plain JSON value always go to ``json``.  :func:`indented` writes the
replay report's indented form the same way.
"""

from __future__ import annotations

import gc
import hashlib
import json
from collections.abc import Iterable
from itertools import chain, compress, repeat
from operator import is_
from typing import Any

from risutools.printable import json_text

try:
    import orjson
except ImportError:  # pragma: no cover - orjson is a dependency; json alone is exact too
    orjson = None  # type: ignore[assignment]

_ENCODER = json.JSONEncoder(
    ensure_ascii=False, allow_nan=False, sort_keys=True, separators=(",", ":")
)

#: the types of a plain JSON value without floats (exact types: no subclasses)
_PLAIN = frozenset({dict, list, str, int, bool, type(None)})
#: levels walked before giving up (a cycle, or nesting no document reaches)
_MAX_LEVELS = 256


def plain_levels(value: Any) -> int | None:
    """The number of nested container levels of ``value`` (0 for a scalar) when it holds
    only dicts, lists, strings, integers, booleans and None (exact types, string keys), or
    None when it holds anything else (a float, another type) or nests past 256 levels.

    One C call lists a whole level's values (``gc.get_referents``: a dict whose keys are
    all ``str`` gives its values only; any other key shows up, and is not plain), and the
    next call is handed that whole level: it skips the scalars (strings, integers,
    booleans and None are not containers the collector knows), so no Python loop sorts
    the containers out."""
    t = type(value)
    if t not in _PLAIN:
        return None
    level: list[Any] = [value] if t is dict or t is list else []
    depth = 0
    while level:
        depth += 1
        if depth > _MAX_LEVELS:
            return None
        level = gc.get_referents(*level)
        types = set(map(type, level))
        if not _PLAIN.issuperset(types):
            return None
        if dict not in types and list not in types:
            break
    return depth


def plain_levels_texts(value: Any, keys: tuple[str, ...]
                       ) -> tuple[int, list[str] | None] | None:
    """:func:`plain_levels` of ``value``, and the strings below its members ``keys`` (when
    ``value`` is a dict; else None for them): every string of the list of those members'
    values (a missing member is None) and every key of their dicts, at any depth, a level at
    a time in the order the level walk meets them (the keys of a dict whose table holds them
    apart from its values maybe twice: ``gc.get_referents`` lists them too). One walk: the
    members ``keys`` are walked as one list, the others as another, and a dict's levels are
    one more than its deepest value's, so the deeper of the two lists' :func:`plain_levels`
    is the dict's (each list adds the one level the dict itself is); the dict's own keys are
    checked as :func:`plain_levels` checks them (their types: plain, when it lists them)."""
    if type(value) is not dict or not _PLAIN.issuperset(set(map(type, value))):
        levels = plain_levels(value)
        return None if levels is None else (levels, None)
    texts: list[str] = []
    inside = _walk_levels([value.get(k) for k in keys], texts)
    if inside is None:
        return None
    rest = _walk_levels([v for k, v in value.items() if k not in keys], None)
    return None if rest is None else (max(inside, rest), texts)


def plain_levels_many(values: list[Any], keys: tuple[str, ...]
                      ) -> tuple[int, list[str]] | None:
    """:func:`plain_levels_texts` of many values, each level of them all a few C calls (not
    a few a value): the levels of the list of them (one more than the deepest value's; 0
    for no value), and the strings below the members ``keys`` of those that are dicts, all
    together (whose each is, is not kept); None when one of them is not plain (a float,
    another type) or nests past 256 levels.

    As :func:`plain_levels_texts` walks one dict, the dicts' members ``keys`` are walked as
    one list (their strings kept) and their other members as another, each value once; the
    values that are no dict are walked as a third."""
    dicts = [v for v in values if type(v) is dict]
    if not _PLAIN.issuperset(set(map(type, chain.from_iterable(dicts)))):
        return None  # (a key that is no string: as the walk of the dict itself would say)
    others = [v for v in values if type(v) is not dict] if len(dicts) < len(values) else []
    levels = _walk_levels(others, None) if others else 0
    if levels is None:
        return None
    texts: list[str] = []
    if dicts:
        inside = _walk_levels([v.get(k) for v in dicts for k in keys], texts)
        rest = _walk_levels([x for v in dicts for k, x in v.items() if k not in keys], None)
        if inside is None or rest is None:
            return None
        levels = max(levels, 1 + inside, 1 + rest)  # (the dicts' own level, then theirs)
    return None if levels > _MAX_LEVELS else (levels, texts)


def _walk_levels(level: list[Any], texts: list[str] | None) -> int | None:
    """:func:`plain_levels` of the list ``level`` (its own level counted), the strings met
    added to ``texts`` (when not None)."""
    for depth in range(1, _MAX_LEVELS + 1):
        if texts is None:  # (the types alone: no list of them, which only texts reads)
            types = set(map(type, level))
            if not _PLAIN.issuperset(types):
                return None
            if dict not in types and list not in types:
                return depth
            level = gc.get_referents(*level)
            continue
        kinds = [*map(type, level)]
        types = set(kinds)
        if not _PLAIN.issuperset(types):
            return None
        if str in types:
            texts += compress(level, map(is_, kinds, repeat(str)))
        if dict in types:  # (a key can hold code as a value can)
            keys = [*chain.from_iterable(compress(level, map(is_, kinds, repeat(dict))))]
            texts += compress(keys, map(is_, map(type, keys), repeat(str)))
        elif dict not in types and list not in types:
            return depth
        level = gc.get_referents(*level)
    return None


def plain_canonical(value: Any) -> bytes | None:
    """:func:`canonical` of a value already known to be plain (:func:`plain_levels` not
    None), by orjson; None when orjson is missing or refuses it (an integer past 64 bits,
    an unpaired surrogate, nesting past its limit)."""
    if orjson is None:
        return None
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        return None


def plain_compact(value: Any) -> bytes | None:
    """:func:`plain_canonical` with the keys as they are (not sorted): the same bytes but
    for the order of each object's members."""
    if orjson is None:
        return None
    try:
        return orjson.dumps(value)
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        return None


#: the types of a JSON value :func:`indented` hands orjson (floats checked one by one)
_INDENTABLE = _PLAIN | {float}


def _spelled_alike(value: Any) -> bool:
    """Whether orjson spells every float of ``value`` as ``json`` does and takes every
    other value as ``json`` would (:func:`alike_levels` is not None)."""
    return alike_levels(value) is not None


def alike_levels(value: Any) -> int | None:
    """The number of container levels of ``value`` when orjson spells every float of it as
    ``json`` does and takes every other value as ``json`` would: only the types of
    :data:`_INDENTABLE` (exact types, string keys: ``gc.get_referents`` shows another key),
    no float that is not finite (orjson writes ``null``) or that ``repr`` writes with an
    exponent (below 1e-4, from 1e16 on: orjson writes ``0.00001`` for ``1e-05``), at most
    256 levels; None otherwise."""
    level: list[Any] = [value]
    for depth in range(_MAX_LEVELS):
        types = set(map(type, level))  # (the loops over a level's values run in C)
        if not _INDENTABLE.issuperset(types):
            return None
        if float in types and not floats_alike(level, map(type, level)):
            return None
        if dict not in types and list not in types:
            return depth
        level = gc.get_referents(*level)  # a scalar has none (it is not a GC container)
    return None


def floats_alike(values: list[Any], types: Iterable[type]) -> bool:
    """Whether every float among ``values`` (exact type: ``types`` are theirs) is one orjson
    spells as ``json`` does: finite, and written by ``repr`` without an exponent (from 1e-4
    to below 1e16, or zero)."""
    for x in compress(values, map(is_, types, repeat(float))):
        if not (1e-4 <= abs(x) < 1e16 or x == 0.0):
            return False  # (NaN and the infinities fail the test too)
    return True


def indented(value: Any, indent: int = 1) -> bytes:
    """``json.dumps(value, ensure_ascii=False, indent=indent, sort_keys=True) + "\n"`` as
    UTF-8 (``indent`` 1 or 2), written by orjson (``OPT_INDENT_2``; for 1, two spaces a level
    halved) when its bytes are those (:func:`alike_levels`), else by ``json``: a report of
    100,000 rows in C."""
    fast = _orjson_indented(value, indent)
    if fast is not None:
        return fast
    return (json.dumps(value, ensure_ascii=False, indent=indent, sort_keys=True)
            + "\n").encode()


def indented_text(value: Any, indent: int = 1) -> str:
    """:func:`indented` as text: ``json.dumps(value, ensure_ascii=False, indent=indent,
    sort_keys=True) + "\n"`` itself, an unpaired surrogate kept as ``json`` keeps it (a
    file name of undecodable bytes holds some; orjson refuses them, ``json`` writes them)."""
    fast = _orjson_indented(value, indent)
    if fast is not None:
        return fast.decode("utf-8")
    return json.dumps(value, ensure_ascii=False, indent=indent, sort_keys=True) + "\n"


def _orjson_indented(value: Any, indent: int) -> bytes | None:
    """What :func:`indented` returns, written by orjson; None where orjson would write
    other bytes than ``json`` or refuses the value."""
    if indent not in (1, 2):
        raise ValueError(f"indent {indent}: 1 or 2")
    levels = alike_levels(value) if orjson is not None else None
    if levels is None:
        return None
    try:
        out = orjson.dumps(value, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS)
    except TypeError:  # an integer past 64 bits, an unpaired surrogate, too deep
        return None
    return (halved(out, levels) if indent == 1 else out) + b"\n"


def halved(out: bytes, levels: int) -> bytes:
    """orjson's two spaces a level made one, in C: a line's indent (after a newline: orjson
    writes no raw newline, no raw NUL inside a string) of ``levels`` levels or fewer, the
    deepest first, each turned into NULs (which no shallower pattern matches), then every
    NUL into a space."""
    for k in range(levels, 0, -1):
        out = out.replace(b"\n" + b"  " * k, b"\n" + b"\0" * k)
    return out.replace(b"\0", b" ")


def canonical(doc: Any) -> bytes:
    """The canonical UTF-8 bytes of a JSON value (ValueError on NaN/Infinity)."""
    if plain_levels(doc) is not None or _spelled_alike(doc):
        fast = plain_canonical(doc)
        if fast is not None:
            return fast
    return _ENCODER.encode(doc).encode("utf-8")


#: the one spelling of a digest's algorithm in every document, report and record
SHA256 = "sha256:"


def sha256_prefixed(data: bytes) -> str:
    """``sha256:<64 hex>`` of ``data``: the one spelling of a digest in every document,
    report and record."""
    return SHA256 + hashlib.sha256(data).hexdigest()


#: what :func:`sha256_kept` keeps of a text it hashed: the text, how many of its first
#: bytes the kept hash has taken in, and that hash (never updated: copied)
Kept = tuple[bytes, int, Any]


def sha256_kept(data: bytes, at: int) -> tuple[str, Kept | None]:
    """(:func:`sha256_prefixed` of ``data``, the hash of its first ``at`` bytes kept for
    :func:`sha256_alike`), or no hash kept when ``at`` is not past the start."""
    if at <= 0:
        return sha256_prefixed(data), None
    view = memoryview(data)
    head = hashlib.sha256(view[:at])
    whole = head.copy()
    whole.update(view[at:])
    return SHA256 + whole.hexdigest(), (data, at, head)


def sha256_alike(data: bytes, kept: Kept | None) -> str:
    """:func:`sha256_prefixed` of ``data``; the first bytes of it not hashed again when they
    are those of the text ``kept`` was kept of (:func:`sha256_kept`: compared first)."""
    if kept is not None:
        first, at, head = kept
        if data[:at] == first[:at]:
            h = head.copy()
            h.update(memoryview(data)[at:])
            digest: str = h.hexdigest()
            return SHA256 + digest
    return sha256_prefixed(data)


def prefixed(hexdigest: str) -> str:
    """``sha256:<hex>`` of a SHA-256 already computed (hex, as ``hashlib`` gives it)."""
    return SHA256 + hexdigest


def hex_of(digest: str) -> str:
    """The hex of a ``sha256:<hex>`` digest (the text as is when it has no prefix)."""
    return digest.removeprefix(SHA256)


def self_hash(doc: dict[str, Any], key: str = "report_sha256") -> str:
    """The digest a document records of itself under ``key``: the canonical hash of the
    document without that key (replay reports; checked by ``verify``)."""
    return doc_sha256({k: v for k, v in doc.items() if k != key})


def doc_sha256(doc: Any) -> str:
    """``sha256:<hex>`` of the canonical form."""
    return sha256_prefixed(canonical(doc))


def document_json(doc: dict[str, Any]) -> str:
    """A document as written to disk: UTF-8 JSON, one-space indent, field order kept (what
    ``project``, ``ingest`` and every rewrite of a JSON document write), every control,
    format (a bidi override) or separator character a value holds written as its
    ``\\uXXXX`` escape (:func:`~risutools.printable.json_text`: the same value, and a
    pull request's diff shows it as it is: the file ``project -o`` writes is what
    ``project`` prints)."""
    return json_text(json.dumps(doc, ensure_ascii=False, indent=1, allow_nan=False)) + "\n"
