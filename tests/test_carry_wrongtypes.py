"""Re-projection carries an existing document's replay evidence (``catalog.carry``); the
existing document is the catalog's, untrusted: a ``replay_status`` of any JSON type is no
evidence to carry, never a crash (a list was asked for in a table: TypeError, which made
``ingest`` an internal error on such a catalog)."""

from __future__ import annotations

from typing import Any

import pytest

from risutools.catalog.carry import carry


@pytest.mark.parametrize("status", [[], ["passed"], {}, {"a": 1}, 3, 2.5, None, True])
def test_a_replay_status_of_any_json_type_carries_nothing(status: Any) -> None:
    existing = {"projection": {"replay_status": status},
                "provenance": {"source_refs": [{"source_id": "replay:x"}]}}
    new: dict[str, Any] = {"projection": {}, "provenance": {}}
    assert carry(existing, new) == (None, "", "")


def test_a_known_status_is_still_carried() -> None:
    existing = {"projection": {"replay_status": "passed"},
                "provenance": {"source_refs": [{"source_id": "replay:x"}]}}
    new: dict[str, Any] = {"projection": {}, "provenance": {}}
    out, how, _ = carry(existing, new)
    assert out is not None and how in ("kept", "stale")
