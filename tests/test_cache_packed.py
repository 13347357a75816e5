"""A packed outcome of the ingest cache unpacked by msgpack's C unpacker, within bounds
(``catalog/cache_packed.py``): what fits comes back, what does not is None (the source is
projected again), for every way the bytes can be hostile; the bounds are the shape walk's."""

from __future__ import annotations

import msgpack
import pytest

from risutools.catalog import cache_packed
from risutools.catalog.cache_packed import nesting_within, unpack_outcome
from risutools.formats.risup import MAX_DEPTH, msgpack_shape


def _nested(levels: int) -> object:
    """A value of ``levels`` non-empty containers, lists and maps in turn, a string inside."""
    value: object = "x"
    for i in range(levels):
        value = [value] if i % 2 else {"k": value}
    return value


def _outcome(inner: object) -> bytes:
    return msgpack.packb([[{"component_id": "a.b.c.d", "v": inner}], [{}]])


def test_an_outcome_of_the_usual_shape_comes_back() -> None:
    doc = {"component_id": "a.b.c.d", "n": 1, "f": 1.5, "t": True, "z": None,
           "l": [1, "두", {"x": []}], "e": {}, "b": b"\x00"}
    assert unpack_outcome(msgpack.packb([[doc], [{"k": 1}]]), ["a.b.c.d"]) == ([doc], [{"k": 1}])


@pytest.mark.parametrize("levels", [1, 2, 3, 10, 199, 200, 201, 202, 600])
def test_nesting_is_counted_as_the_shape_walk_counts_it(levels: int) -> None:
    """The level walk and :func:`msgpack_shape` agree on every depth around the bound."""
    data = msgpack.packb(_nested(levels))
    try:
        msgpack_shape(data, "x")
        walked = True
    except Exception:
        walked = False
    assert nesting_within(msgpack.unpackb(data, raw=False), MAX_DEPTH) is walked
    assert walked is (levels <= MAX_DEPTH)


@pytest.mark.parametrize("value, levels", [
    ("x", 0), (1, 0), ([], 0), ({}, 0), ([[]], 1), ([[], {}], 1), ([[1]], 2),
    ({"a": {"b": []}}, 2), ([1, [2, [3]]], 3), ({"a": [{"b": {"c": "d"}}]}, 4),
])
def test_the_levels_of_non_empty_containers(value: object, levels: int) -> None:
    assert nesting_within(value, levels)
    if levels:
        assert not nesting_within(value, levels - 1)


@pytest.mark.parametrize("depth, fits", [(MAX_DEPTH - 2, True), (MAX_DEPTH - 1, False),
                                         (500, False)])
def test_a_deep_document_does_not_fit(depth: int, fits: bool) -> None:
    """The outcome's own two levels, its documents list, a document: then the value."""
    inner = _nested(depth - 1)
    got = unpack_outcome(_outcome(inner), ["a.b.c.d"])
    assert (got is not None) is fits


def test_nesting_past_msgpacks_own_stack_does_not_fit() -> None:
    data = b"\x92\x91" + b"\x91" * 5000 + b"\xc0" + b"\x90"
    assert unpack_outcome(data, ["a.b.c.d"]) is None


@pytest.mark.parametrize("data", [
    b"",
    b"\xc1",  # never used
    _outcome("x")[:-1],  # truncated
    _outcome("x") + b"\xc0",  # extra bytes
    b"\x92\x91\xd4\x01\x00\x91\x80",  # an ext value
    msgpack.packb([[{"component_id": "a.b.c.d", 1: 2}], [{}]]),  # a key that is no string
    msgpack.packb([[{"component_id": "a.b.c.d"}], [{}], []]),  # three members
    msgpack.packb({"docs": 1}),
    msgpack.packb([[{"component_id": "other"}], [{}]]),
    msgpack.packb([[{"component_id": "a.b.c.d"}], []]),
    msgpack.packb([[["component_id"]], [{}]]),
    b"\x92\xdd\xff\xff\xff\xff\x91\x80",  # an array declaring 4 billion values
    b"\x92\x91\xdf\xff\xff\xff\xff\x91\x80",  # a map declaring 4 billion pairs
    b"\x92\x91\x81\xdb\xff\xff\xff\xff",  # a string declaring 4 GB
])
def test_hostile_bytes_do_not_fit(data: bytes) -> None:
    assert unpack_outcome(data, ["a.b.c.d"]) is None


def test_more_values_than_the_bound_do_not_fit(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past :data:`MAX_PACKED_VALUES` bytes the shape is walked first, and stops at the
    bound: a long outcome of few values fits, one of too many does not."""
    monkeypatch.setattr(cache_packed, "MAX_PACKED_VALUES", 50)
    few = _outcome("x" * 500)
    many = _outcome(list(range(60)))
    assert len(few) > 50 and len(many) > 50
    assert unpack_outcome(few, ["a.b.c.d"]) is not None
    assert unpack_outcome(many, ["a.b.c.d"]) is None
    monkeypatch.setattr(cache_packed, "MAX_PACKED_VALUES", 100)
    assert unpack_outcome(many, ["a.b.c.d"]) is not None
