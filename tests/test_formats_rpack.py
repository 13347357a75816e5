"""RPack: the table checks from the spec, and round trips."""

from __future__ import annotations

import hashlib

from hypothesis import given, settings
from hypothesis import strategies as st

from risutools.formats import rpack


def test_table_hashes_match_spec() -> None:
    assert (
        hashlib.sha256(rpack.DECODE_TABLE).hexdigest()
        == "541399aa080429e113232c7e33190d61b2c10d3505a7eb4769bd778a84d18989"
    )
    assert (
        hashlib.sha256(rpack.ENCODE_TABLE).hexdigest()
        == "2d880e6ead42e267fd55b03cb961491c21576ceba38eb09ea71906e0ef1b3af9"
    )


def test_tables_are_inverse_permutations() -> None:
    assert sorted(rpack.DECODE_TABLE) == list(range(256))
    assert all(rpack.DECODE_TABLE[rpack.ENCODE_TABLE[b]] == b for b in range(256))
    assert all(rpack.ENCODE_TABLE[rpack.DECODE_TABLE[b]] == b for b in range(256))


def test_known_encoding_from_spec() -> None:
    assert rpack.encode(b'{"a":1}') == bytes.fromhex("e620d32097c17b")
    assert rpack.decode(bytes.fromhex("e620d32097c17b")) == b'{"a":1}'


def test_accepts_bytearray_and_memoryview() -> None:
    assert rpack.encode(bytearray(b'{"a":1}')) == bytes.fromhex("e620d32097c17b")
    assert rpack.decode(memoryview(bytes.fromhex("e620d32097c17b"))) == b'{"a":1}'


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=2048))
def test_round_trip_keeps_length(data: bytes) -> None:
    enc = rpack.encode(data)
    assert len(enc) == len(data)
    assert rpack.decode(enc) == data
