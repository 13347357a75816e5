"""Rows given by column written by ``RowShape.forms_of_columns`` (``replay/row_form.py``):
each column spelled by orjson on its own, its spellings joined between the template's
pieces, are json's bytes, or the batch is declined exactly where the rows' own writer
(``RowShape.forms``) declines it.

Each case puts one column of a kind the writer must tell apart into a batch of plain
columns: a bool among integers, an integer subclass, integers past 64 bits, both zeros,
floats among integers, floats of another spelling (NaN first or later, the infinities, an
exponent), strings with commas or ``%``, a surrogate, subclasses of str and float, a
column given as a tuple or another sequence, and a batch whose every column is one value
(written into the template whole)."""

from __future__ import annotations

import enum
import itertools
from collections.abc import Sequence
from typing import Any

import pytest
from replay_cases import FloatSub, IntSub, StrSub, json_row_forms

from risutools.canonical import floats_alike
from risutools.replay import row_form as row_form_mod
from risutools.replay.row_form import Nullable, RowShape

#: a shape with a key json writes with ``%`` in it, a nested object and a nullable one:
#: holes "a", "b", "c%s", "d.e", "d.f" (and "g.h" when "g" is there), in that order
SHAPE = RowShape({"a": None, "b": None, "c%s": None, "d": {"e": None, "f": None},
                  "g": Nullable({"h": None})})
NAN, INF = float("nan"), float("inf")


class _Level(enum.IntEnum):
    LOW = 1


class _Name(str, enum.Enum):
    X = "x"


class _Seq(Sequence[Any]):
    """A sequence that is neither a list nor a tuple."""

    def __init__(self, items: list[Any]) -> None:
        self.items = items

    def __getitem__(self, i: Any) -> Any:
        return self.items[i]

    def __len__(self) -> int:
        return len(self.items)


def _rows(columns: list[Sequence[Any]], present: bool) -> list[dict[str, Any]]:
    rows = []
    for v in zip(*columns, strict=True):
        rows.append({"a": v[0], "b": v[1], "c%s": v[2], "d": {"e": v[3], "f": v[4]},
                     "g": {"h": v[5]} if present else None})
    return rows


def _columns(n: int, present: bool) -> list[Sequence[Any]]:
    """Plain columns: varying integers, strings, one value throughout, bools and None."""
    columns: list[Sequence[Any]] = [list(range(n)), [f"s{i}" for i in range(n)], [7] * n,
                                    [i % 2 == 0 for i in range(n)],
                                    [None if i % 3 else i for i in range(n)]]
    if present:
        columns.append([i * 1000 for i in range(n)])
    return columns


#: (column, written): a column and whether the batch holding it must be written (True) or
#: left to the reference writers (False)
CASES: list[tuple[list[Any], bool]] = [
    ([1, True, 2], True),  # a bool in an int column: ``true``, not 1
    ([True, 1, False], True),
    ([1, IntSub(2), 3], False),  # an int subclass
    ([_Level.LOW, 2, 3], False),
    ([_Level.LOW] * 3, False),  # (one value throughout: not written into the template)
    ([1, 2**64, 3], False),  # past 64 bits: orjson refuses it
    ([2**64] * 3, False),
    ([-(2**63) - 1, 0, 1], False),
    ([2**64 - 1, -(2**63), 0], True),  # the bounds
    ([10**40] * 3, False),
    ([-0.0, -0.0, -0.0], True),  # floats are never one value (0.0 == -0.0)
    ([0.0, -0.0, 0.0], True),
    ([1, 2.5, 3], True),  # floats among integers
    ([1, 1e-05, 3], False),
    ([2, 1e16, 3], False),
    ([2.5, 98.75, 1.25], True),
    ([1e-4, 9999999999999998.0, 0.5], True),
    ([-1e-4, -9999999999999998.0, -0.5], True),
    ([9.9e-5, 1.0, 2.0], False),
    ([-9.9e-5, 1.0, 2.0], False),
    ([5e-324, 0.0, 1.0], False),
    ([NAN, 1.0, 2.0], False),  # NaN first, later, alone
    ([1.0, NAN, 2.0], False),
    ([1.0, 2.0, NAN], False),
    ([INF, 1.0, 2.0], False),
    ([1.0, 2.0, -INF], False),
    ([INF, -INF, 1.0], False),
    ([1e308, 1e308, 1.0], False),  # (their sum is infinite)
    ([FloatSub(0.5), 1.0, 2.0], False),
    (["a, b", "c", ","], True),  # commas: the column spelled one value a line
    (["a, b"] * 3, True),
    (["%s", "%%", "%"], True),  # ``%`` is no format here
    (["%s"] * 3, True),
    (["값", "é\u2028", 'q"u\\o'], True),
    (["\ud800", "a", "b"], False),  # a surrogate: orjson refuses it
    ([StrSub("s"), "a", "b"], False),
    ([_Name.X, "a", "b"], False),
    ([_Name.X] * 3, False),
    (["null", None, 0], True),
    ([[1], 2, 3], False),
    ([{"a": 1}, 2, 3], False),
    ([(1,), 2, 3], False),
    ([b"x", 2, 3], False),
]


@pytest.mark.parametrize("at", range(6))
@pytest.mark.parametrize(("column", "written"), CASES)
def test_each_kind_of_column_at_each_hole(column: list[Any], written: bool, at: int) -> None:
    """Each case's column at each hole (of rows with and without their nullable object):
    json's bytes when written, declined as the rows' own writer declines."""
    for present in (True, False):
        columns = _columns(len(column), present)
        if at >= len(columns):
            continue
        columns[at] = column
        got = SHAPE.forms_of_columns(columns, (present,))
        rows = _rows(columns, present)
        assert got == SHAPE.forms(rows)
        assert (got is not None) == written
        if got is not None:
            assert got == json_row_forms(rows)


@pytest.mark.parametrize("n", [1, 2, 5, 600])
def test_plain_batches_of_every_size_and_container(n: int) -> None:
    """Batches of plain columns (one row, many rows; columns as lists, tuples and other
    sequences), and batches whose every column is one value (no hole left)."""
    for present in (True, False):
        columns = _columns(n, present)
        rows = _rows(columns, present)
        ref = json_row_forms(rows)
        assert ref is not None
        assert SHAPE.forms_of_columns(columns, (present,)) == ref
        assert SHAPE.forms_of_columns([tuple(c) for c in columns], (present,)) == ref
        assert SHAPE.forms_of_columns([_Seq(list(c)) for c in columns], (present,)) == ref
        same: list[Sequence[Any]] = [[c[0]] * n for c in columns]
        assert SHAPE.forms_of_columns(same, (present,)) == json_row_forms(_rows(same, present))
    assert SHAPE.forms_of_columns(_columns(3, True), (False,)) is None  # (not its holes)


def test_batches_alike_and_not_reuse_their_pieces() -> None:
    """A batch's pieces are kept for the next batches alike (same template, rows and
    columns of one value), made anew for another, a few kept (the one used longest ago let
    go first): each batch written as json writes it."""
    shape = RowShape({"a": None, "b": None, "c%s": None, "d": {"e": None, "f": None},
                      "g": Nullable({"h": None})})
    for n, one, present in itertools.product((3, 4), (7, "%s", None), (True, False)):
        for _ in range(2):
            columns = _columns(n, present)
            columns[2] = [one] * n
            assert shape.forms_of_columns(columns, (present,)) == json_row_forms(
                _rows(columns, present))
            assert 0 < len(shape._baked) <= row_form_mod._KEPT


def test_a_column_of_floats_is_read_as_value_by_value() -> None:
    """``_column_alike`` (three calls for most columns) says what ``floats_alike`` says of
    every list of up to three floats of the edges: both zeros, 1e-4 and below, 1e16 and
    below, the least subnormal, NaN and the infinities, anywhere."""
    edges = [0.0, -0.0, 1e-4, -1e-4, 9.9e-5, 1e16, 9999999999999998.0, -1e16, NAN, INF, -INF,
             98.75, -3.5, 5e-324, 1e308]
    for size in (1, 2, 3):
        for floats in itertools.product(edges, repeat=size):
            values = list(floats)
            assert row_form_mod._column_alike(values) == floats_alike(
                values, [float] * size), values
