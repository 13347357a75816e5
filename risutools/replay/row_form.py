"""Rows of one known shape written from a template: both of a batch's forms in a few C calls.

A replay's rows all have the same keys, nested the same way; only their scalars change.  A
:class:`RowShape` names those keys (a :data:`Spec`) and keeps, for each way its optional
objects can be present or ``null``, the row's canonical and indented text with a hole
(``%s``) where each scalar goes.  The holes' text is the scalars' own JSON spelling, by
orjson in one call for the whole batch (the scalars in the order ``sort_keys`` visits them:
the order of the holes), split at its commas (when a string holds a comma the pieces are
not one a scalar, which counting them tells: each scalar is then spelled by a call of its
own); the batch's forms are then its rows' templates, joined, filled in one ``%`` each.
Rows given by column (:meth:`RowShape.forms_of_columns`, a replay's batches) are spelled a
column at a time instead, each column's spellings put in every other place of a list of
the template's pieces, joined (once with the canonical pieces, once with the indented).

The templates are written by ``json`` itself from a skeleton row whose every scalar is a
marker, so their keys, separators and indentation are ``json``'s.  The scalars' spellings
are ``json``'s where orjson's are taken as exact elsewhere
(:func:`~risutools.canonical.alike_levels`): exact ``str``, ``int``, ``bool``, ``None``, and
floats that ``repr`` writes without an exponent.  Anything else in a batch leaves it to the
reference writers (:meth:`RowShape.forms` gives None): a key missing or extra, an object
where a scalar goes or the reverse, another type, a float of another spelling, an integer
past 64 bits, an unpaired surrogate.
"""

from __future__ import annotations

import gc
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import cached_property
from itertools import chain, compress, product, repeat
from operator import is_, is_not, itemgetter, ne
from typing import TYPE_CHECKING, Any

from risutools.canonical import floats_alike

try:
    import orjson
except ImportError:  # pragma: no cover - orjson is a dependency; the reference path is exact
    orjson = None  # type: ignore[assignment]


class Nullable:
    """An object of the shape that may be ``null`` instead (its values are scalars)."""

    def __init__(self, spec: Mapping[str, None]) -> None:
        self.spec = spec


if TYPE_CHECKING:  # (a runtime alias of forward references would compile them at import)
    #: a shape's keys: each a scalar (None), a nested object (its spec), or one that may be
    #: null
    Spec = Mapping[str, "Spec" | Nullable | None]

#: the types whose orjson spelling is json's (floats checked one by one)
_SCALARS = frozenset({str, int, bool, type(None), float})
#: the batches' pieces a shape keeps (:meth:`RowShape._pieces`)
_KEPT = 4
#: the marker standing for a scalar in the skeleton row, and its json spelling
_MARK = "\0"
_HOLE = json.dumps(_MARK).encode()


class _Node:
    """One object of the shape: where it hangs (its parent's index and key), its keys."""

    def __init__(self, parent: int, key: str, spec: Mapping[str, Any], optional: bool) -> None:
        self.parent = parent
        self.key = key
        self.spec = spec
        self.optional = optional


class RowShape:
    """A row's shape (``spec``), its templates for a row two levels deep in the file (as a
    report's rows are)."""

    def __init__(self, spec: Spec) -> None:
        self.nodes: list[_Node] = [_Node(-1, "", spec, False)]
        #: (node, its scalar keys in a run), in the order json writes them
        self.segments: list[tuple[int, tuple[str, ...]]] = []
        self._walk(0)
        self.optional = [i for i, n in enumerate(self.nodes) if n.optional]
        self._getters = [_getter(self.nodes[i].optional, keys) for i, keys in self.segments]
        #: the last batch's joined templates, by (template, rows) (:meth:`_joined`)
        self._kept: dict[tuple[tuple[bool, ...], int], tuple[bytes, bytes]] = {}
        #: the last batches' rows' canonical and indented text cut at their holes, their
        #: one-value columns written in, by (template, rows, those columns' spellings),
        #: the one used last last (:meth:`_pieces`)
        self._baked: dict[tuple[Any, ...], tuple[list[bytes], list[bytes]]] = {}

    def _walk(self, index: int) -> None:
        run: list[str] = []
        for key in sorted(self.nodes[index].spec):
            sub = self.nodes[index].spec[key]
            if sub is None:
                run.append(key)
                continue
            if run:
                self.segments.append((index, tuple(run)))
                run = []
            if self.nodes[index].optional:
                raise ValueError("an optional object holds scalars only")
            optional = isinstance(sub, Nullable)
            self.nodes.append(_Node(index, key, sub.spec if optional else sub, optional))
            self._walk(len(self.nodes) - 1)
        if run:
            self.segments.append((index, tuple(run)))

    @cached_property
    def templates(self) -> dict[tuple[bool, ...], tuple[bytes, bytes]]:
        """The row's canonical and indented templates, by which optional objects are there
        (written when first needed: not at every start-up)."""
        return {present: self._template(present)
                for present in product((True, False), repeat=len(self.optional))}

    @cached_property
    def holes(self) -> dict[tuple[bool, ...], int]:
        """The scalars of a row of each template."""
        at = {node: k for k, node in enumerate(self.optional)}  # (optional: scalars only)
        return {kind: sum(len(keys) for node, keys in self.segments
                          if node not in at or kind[at[node]]) for kind in self.templates}

    def _skeleton(self, index: int, present: dict[int, bool]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, sub in self.nodes[index].spec.items():
            if sub is None:
                out[key] = _MARK
                continue
            child = next(i for i, n in enumerate(self.nodes)
                         if n.parent == index and n.key == key)
            out[key] = self._skeleton(child, present) if present.get(child, True) else None
        return out

    def _template(self, present: tuple[bool, ...]) -> tuple[bytes, bytes]:
        """The row's canonical and indented text (two levels deep), holes for scalars."""
        canon, text = self._texts(present)
        return _holed(canon), _holed(text)

    def _texts(self, present: tuple[bool, ...]) -> tuple[bytes, bytes]:
        """The row's canonical and indented text (two levels deep), a marker for each
        scalar (:data:`_HOLE`)."""
        skeleton = self._skeleton(0, dict(zip(self.optional, present, strict=True)))
        canon = json.dumps(skeleton, ensure_ascii=False, sort_keys=True,
                           separators=(",", ":")).encode()
        text = json.dumps([[skeleton]], ensure_ascii=False, indent=1, sort_keys=True).encode()
        return canon, text[5:-5]  # "[\n [\n" ... "\n ]\n]"

    def forms(self, rows: Sequence[dict[str, Any]]) -> tuple[bytes, bytes] | None:
        """The rows' canonical forms (comma between) and their indented forms (``,\\n``
        between), as :func:`~risutools.canonical.canonical` and
        :func:`~risutools.canonical.indented` write them; None when a row is not of the
        shape or holds a value whose spelling is left to ``json``."""
        if orjson is None or not rows:
            return None
        try:
            lists = self._objects(rows)
            if lists is None:
                return None
            segments = [get(lists[i]) for get, (i, _) in zip(self._getters, self.segments,
                                                              strict=True)]
            # each row's scalars, in the order of its template's holes
            flat = list(chain.from_iterable(chain.from_iterable(zip(*segments, strict=True))))
        except (KeyError, TypeError):  # a key missing, not a dict
            return None
        return self._written(flat, self._kinds(lists, len(rows)))

    def forms_of(self, values: Sequence[tuple[Any, ...]],
                 kinds: Sequence[tuple[bool, ...]]) -> tuple[bytes, bytes] | None:
        """:meth:`forms` of rows of the shape given by their scalars, each row's in the order
        of its template's holes (what :meth:`forms` reads of a row), and which of its
        optional objects each holds (``kinds``, in the order of :attr:`optional`); the
        caller's word that they are rows of the shape (their objects dicts of exactly the
        shape's keys): their values are checked as :meth:`forms` checks them."""
        if orjson is None or not values:
            return None
        first = kinds[0]
        if kinds.count(first) == len(kinds) and self.holes.get(first):
            return self._uniform(values, first)
        return self._written(list(chain.from_iterable(values)), kinds)

    def _uniform(self, values: Sequence[tuple[Any, ...]], kind: tuple[bool, ...]
                 ) -> tuple[bytes, bytes] | None:
        """:meth:`forms_of` of rows all of template ``kind``: :meth:`forms_of_columns` of
        their columns."""
        if set(map(len, values)) != {self.holes[kind]}:
            return None
        return self.forms_of_columns(list(zip(*values, strict=False)), kind)

    def forms_of_columns(self, columns: Sequence[Sequence[Any]], kind: tuple[bool, ...]
                         ) -> tuple[bytes, bytes] | None:
        """:meth:`forms_of` of rows all of template ``kind`` given by column (``columns``:
        each hole's values, one a row; the caller's word that they are rows of the shape),
        read a column at a time: each column's types checked as :func:`_alike` checks
        them, and a column of one value of one type (not a float: ``0.0 == -0.0``)
        written into the batch's template once, not into a hole a row (its spelling
        orjson's, as a hole's would be).  Each other column is spelled by an orjson call of
        its own (:func:`_spelled`: no list of the rows' values in their order is made), its
        spellings put in their places (one a row) in a list whose other places are the
        pieces of the rows' text between two holes (:meth:`_pieces`), joined (one
        ``b"".join``: no ``%`` to parse at each hole), then joined again with the indented
        text's pieces in those places."""
        if orjson is None or not columns or len(columns) != self.holes.get(kind):
            return None
        n = len(columns[0])
        if not n or set(map(len, columns)) != {n}:
            return None
        plan = _plan(columns, n)
        if plan is None:
            return None
        holes, baked = plan
        canon, indent = self._pieces(kind, n, baked)
        if not holes:
            return canon[0], indent[0]
        width = len(holes)
        out: list[bytes] = [b""] * (2 * width * n + 1)
        for k, j in enumerate(holes):  # a column's spellings: every other place of a row's
            col = columns[j]
            spelled = _spelled(col if isinstance(col, list | tuple) else list(col))
            if spelled is None:
                return None
            out[2 * k + 1::2 * width] = spelled
        out[::2] = canon
        canon_form = b"".join(out)
        out[::2] = indent
        return canon_form, b"".join(out)

    def _pieces(self, kind: tuple[bool, ...], n: int, baked: dict[int, bytes]
                ) -> tuple[list[bytes], list[bytes]]:
        """The canonical and indented text of ``n`` rows of template ``kind`` (comma,
        ``,\\n`` between) cut at their holes, the holes ``baked`` spells written in; those
        of the last :data:`_KEPT` batches of other templates, rows or columns written in
        kept (a run's batches come back to a few: at 100,000 messages, 118 batches of 29
        kinds, made 30 times with four kept, 80 times with one)."""
        key = (kind, n, tuple(baked.items()))
        pieces = self._baked.pop(key, None)
        if pieces is None:
            canon, indent = self.literals[kind]
            pieces = (_rows_pieces(_filled(canon, baked), b",", n),
                      _rows_pieces(_filled(indent, baked), b",\n", n))
            if len(self._baked) >= _KEPT:
                del self._baked[next(iter(self._baked))]
        self._baked[key] = pieces  # (the last used last)
        return pieces

    @cached_property
    def literals(self) -> dict[tuple[bool, ...], tuple[list[bytes], list[bytes]]]:
        """The row's canonical and indented text of each template cut at its holes (one
        more piece than holes)."""
        out = {}
        for present in self.templates:
            canon, text = self._texts(present)
            out[present] = (canon.split(_HOLE), text.split(_HOLE))
        return out

    def _written(self, flat: list[Any], kinds: Sequence[tuple[bool, ...]]
                 ) -> tuple[bytes, bytes] | None:
        """The forms of the rows of templates ``kinds`` whose scalars are ``flat``, in order
        (None: a value whose spelling is left to ``json``, or not as many as the holes)."""
        if sum(map(self.holes.__getitem__, kinds)) != len(flat):
            return None
        if not _alike(flat, len(kinds), kinds.count(kinds[0]) == len(kinds)):
            return None
        parts = _spelled(flat)
        if parts is None:
            return None
        canon, indent = self._joined(kinds)
        values = tuple(parts)
        return canon % values, indent % values

    def _joined(self, kinds: Sequence[tuple[bool, ...]]) -> tuple[bytes, bytes]:
        """The rows' templates joined (comma, ``,\n`` between); a batch's of one template
        kept for the next batch of as many rows (a run's batches are most often alike)."""
        first, n = kinds[0], len(kinds)
        if kinds.count(first) == n:
            key = (first, n)
            if key not in self._kept:
                canon, indent = self.templates[first]
                self._kept = {key: (b",".join([canon] * n), b",\n".join([indent] * n))}
            return self._kept[key]
        chosen = list(map(self.templates.__getitem__, kinds))
        return b",".join([c for c, _ in chosen]), b",\n".join([t for _, t in chosen])

    def _kinds(self, lists: list[list[Any]], n: int) -> list[tuple[bool, ...]]:
        """Each row's template (which of its optional objects are there)."""
        if not self.optional:
            return [()] * n
        return list(zip(*([obj is not None for obj in lists[i]] for i in self.optional),
                        strict=True))

    def _objects(self, rows: Sequence[dict[str, Any]]) -> list[list[Any]] | None:
        """Each node's objects, one a row (None where an optional one is null), when each
        is a dict whose keys are all ``str`` (the collector then lists its values alone:
        another key shows up, as for :func:`~risutools.canonical.plain_levels`) and which
        hold as many values together as the node has keys for each: as every key of the
        node is read from each (its getters', its children's: a KeyError if missing), each
        holds exactly the node's keys."""
        lists: list[list[Any]] = []
        for node in self.nodes:
            objs = list(rows) if node.parent < 0 else list(
                map(itemgetter(node.key), lists[node.parent]))
            present = objs
            if node.optional:
                present = list(compress(objs, map(is_not, objs, repeat(None))))
            width = len(node.spec)
            if (set(map(type, present)) - {dict}
                    or len(gc.get_referents(*present)) != width * len(present)):
                return None
            lists.append(objs)
        return lists


def _spelled(flat: Sequence[Any]) -> list[bytes] | None:
    """Each value's JSON spelling by orjson (one call, split at its commas); when a string
    holds a comma (the pieces then not one a value), the list written one value a line and
    split at its line breaks, which no scalar's spelling holds (a string's line break is
    written ``\\n``): one call more, never a call a value (each of whose bytes orjson
    keeps in a buffer of 4 KiB: 10 MB for a batch of alerts, bench/RESULTS.md round 28).
    None when orjson refuses one (an integer past 64 bits, a surrogate)."""
    if not flat:
        return []
    try:
        parts = orjson.dumps(flat)[1:-1].split(b",")
        if len(parts) != len(flat):  # ("[\n  " ... "\n]")
            parts = orjson.dumps(flat, option=orjson.OPT_INDENT_2)[4:-2].split(b",\n  ")
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        return None
    return parts if len(parts) == len(flat) else None


def _holed(text: bytes) -> bytes:
    return text.replace(b"%", b"%%").replace(_HOLE, b"%s")


def _filled(pieces: list[bytes], baked: dict[int, bytes]) -> list[bytes]:
    """A row's text cut at its holes (``pieces``: one more than holes), hole ``j`` written
    in where ``baked`` gives its spelling: the pieces between the other holes."""
    out = [pieces[0]]
    for j, piece in enumerate(pieces[1:]):
        if j in baked:
            out[-1] += baked[j] + piece
        else:
            out.append(piece)
    return out


def _rows_pieces(pieces: list[bytes], sep: bytes, n: int) -> list[bytes]:
    """The text of ``n`` rows (``sep`` between) cut at their holes, of a row's
    ``pieces``: the first row's first piece, the pieces between two holes of a row, and
    between two rows a row's last piece, ``sep`` and its first (the last row's last
    piece after the last hole); one piece for rows without holes."""
    if len(pieces) == 1:
        return [sep.join([pieces[0]] * n)]
    out = [*pieces[1:-1], pieces[-1] + sep + pieces[0]] * n
    out[-1] = pieces[-1]
    out.insert(0, pieces[0])
    return out


def _plan(columns: Sequence[Sequence[Any]], n: int
          ) -> tuple[list[int], dict[int, bytes]] | None:
    """The holes of a batch of ``n`` rows of one template (its ``columns``): the columns
    that vary (or hold floats), and the spelling of each other one's value; None when a
    value is not spelled alike (:func:`_alike`)."""
    holes: list[int] = []
    baked: dict[int, bytes] = {}
    for j, col in enumerate(columns):
        kinds = list(map(type, col))
        first = kinds[0]
        types = {first} if kinds.count(first) == n else set(kinds)
        if not _SCALARS.issuperset(types):
            return None
        if float in types:
            floats = col if len(types) == 1 else list(
                compress(col, map(is_, kinds, repeat(float))))
            if not _column_alike(floats):
                return None
            holes.append(j)
        elif len(types) == 1 and col[-1] == col[0] and col.count(col[0]) == n:
            try:
                baked[j] = orjson.dumps(col[0])
            except TypeError:  # (as a hole's: orjson's refusal)
                return None
        else:
            holes.append(j)
    return holes, baked


def _alike(flat: list[Any], n: int, uniform: bool) -> bool:
    """Whether the values (``n`` rows', all of one template when ``uniform``) are all
    scalars orjson spells as ``json`` does (:data:`_SCALARS`, the floats as
    :func:`~risutools.canonical.floats_alike` says).  Rows of one template are read a
    position at a time: the types of each column, and its floats, in a few C calls."""
    types = list(map(type, flat))
    if not uniform:
        return _SCALARS.issuperset(types) and floats_alike(flat, types)
    width = len(flat) // n
    for j in range(width):
        column = types[j::width]
        first = column[0]
        kinds = {first} if column.count(first) == n else set(column)
        if not _SCALARS.issuperset(kinds):
            return False
        if float in kinds:
            floats = flat[j::width]
            if len(kinds) > 1:
                floats = list(compress(floats, map(is_, column, repeat(float))))
            if not _column_alike(floats):
                return False
    return True


def _column_alike(floats: Sequence[float]) -> bool:
    """:func:`~risutools.canonical.floats_alike` of floats, in a few C calls: finite (no
    NaN, which is not equal to itself), and each not zero from 1e-4 to below 1e16.  Most
    columns (sizes, percentages) are read by three calls: their sum (NaN when one is, or
    both infinities are), their least and their greatest."""
    total = sum(floats, 0.0)
    if total == total and min(floats) >= 1e-4 and max(floats) < 1e16:
        return True
    sizes = list(map(abs, floats))
    if any(map(ne, sizes, sizes)):
        return False
    some = list(filter(None, sizes))  # (a zero, of either sign, is spelled alike)
    return not some or (min(some) >= 1e-4 and max(some) < 1e16)


def _getter(optional: bool, keys: tuple[str, ...]) -> Callable[[list[Any]], Iterable[Any]]:
    """The values of ``keys`` of each object of a list, a tuple an object (an empty one
    for a null)."""
    get = itemgetter(*keys)
    if optional:
        def values(objs: list[Any]) -> Iterable[Any]:
            return [() if o is None else _tupled(get(o), len(keys)) for o in objs]
        return values
    if len(keys) == 1:
        return lambda objs: zip(map(get, objs))
    return lambda objs: map(get, objs)


def _tupled(v: Any, n: int) -> tuple[Any, ...]:
    return v if n > 1 else (v,)
