"""Issue 23 (validate on 10,000 files named one by one): what the fast paths look for with
``find`` (not ``in``, which raises and clears a TypeError within) gives the same answers."""

from __future__ import annotations

import pytest

from risutools.jsonlines import _key_once
from risutools.values import _spells_a_colon


@pytest.mark.parametrize(("data", "spelled"), [
    (b'{"a": 1}', False), (b'{"a": "\\\\"}', False), (b'{"a\\u003a": 1}', True),
    (b'{"a": "\\u003A"}', True), (b"", False), (b"\\", False), (b"\\u003", True)])
def test_a_colon_spelled_as_an_escape(data: bytes, spelled: bool) -> None:
    assert _spells_a_colon(data) is spelled


def test_a_key_read_at_the_end_of_the_text() -> None:
    """The usual spelling (``": "`` then the value) is taken without the pattern; at the
    text's end (nothing after the space) the pattern decides, as before."""
    assert _key_once(b'{"a": 1}', b'"a"', 0) == (1, 6)
    assert _key_once(b'{"a": ', b'"a"', 0) == (1, 6)
    assert _key_once(b'{"a" :\n 1}', b'"a"', 0) == (1, 8)
    assert _key_once(b'{"a": 1, "a": 2}', b'"a"', 0) is None
