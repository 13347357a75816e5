"""A packed outcome of the ingest cache (:mod:`risutools.catalog.cache`) unpacked: its
documents and facts, after the packed bytes' shape is walked and bounded
(:func:`risutools.formats.risup.msgpack_shape`) and the values checked against what the
cache recorded of them."""

from __future__ import annotations

from typing import Any

from risutools.formats.risup import msgpack_shape

# at most this many msgpack values in one packed outcome (a source's documents and facts)
MAX_PACKED_VALUES = 2_000_000


def unpack_outcome(packed: bytes, ids: list[str]
                   ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]] | None:
    """(documents, facts) of a packed outcome, each a list of maps, one a component id,
    the documents' ids those recorded; None when it does not fit."""
    import msgpack

    try:
        msgpack_shape(packed, "a cached outcome", max_items=MAX_PACKED_VALUES)
        n = len(packed)
        value = msgpack.unpackb(packed, raw=False, strict_map_key=True, max_str_len=n,
                                max_bin_len=n, max_array_len=n, max_map_len=n, max_ext_len=0)
    except Exception:  # msgpack raises many types; the walk raises RisuError
        return None
    if not (isinstance(value, list) and len(value) == 2):
        return None
    docs, facts = value
    if not (isinstance(docs, list) and isinstance(facts, list)
            and len(docs) == len(facts) == len(ids)):
        return None
    for doc, f, cid in zip(docs, facts, ids, strict=True):
        if not (isinstance(doc, dict) and isinstance(f, dict) and doc.get("component_id") == cid):
            return None
    return docs, facts
