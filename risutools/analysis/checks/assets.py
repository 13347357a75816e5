"""RA4xx: assets whose bytes are not what they claim to be, oversized assets, and asset
frames out of step with ``module.assets`` (:mod:`risutools.analysis.assets` sniffs the
types)."""

from __future__ import annotations

from collections.abc import Iterator

from risutools.analysis.assets import OVERSIZED_ASSET_BYTES, compatible
from risutools.analysis.seen import Hit, Seen, reads
from risutools.checks.registry import check


@check("RA401", "warning", "module", "asset-type-mismatch")
@reads("assets")
def ra401(seen: Seen) -> Iterator[Hit]:
    """Asset bytes do not match the declared type (e.g. HTML saved as `.png`).

    Why: A file disguised as an image can be something else entirely when opened.

    Fix: Store the asset with its real type, or remove it.
    """
    for at, where, declared, sniffed, _size in seen.assets:
        if sniffed is not None and declared is not None and not compatible(declared, sniffed):
            yield Hit(at, f"asset declared as {declared} but its bytes are {sniffed}"
                      + (" (HTML saved under an image or sound name)"
                         if sniffed == "html" else ""), where)
        elif sniffed == "html" and declared is None:
            yield Hit(at, "asset bytes are HTML", where)


@check("RA402", "warning", "module", "asset-oversized")
@reads("assets")
def ra402(seen: Seen) -> Iterator[Hit]:
    """An asset is larger than 16 MiB (`OVERSIZED_ASSET_BYTES`).

    Why: Very large assets slow every load of the module and may hide unexpected content.

    Fix: Shrink or remove the asset.
    """
    for at, where, _declared, _sniffed, size in seen.assets:
        if size is not None and size > OVERSIZED_ASSET_BYTES:
            yield Hit(at, f"asset is {size} bytes, above the {OVERSIZED_ASSET_BYTES} byte "
                      "bound for one asset", where)


@check("RA403", "warning", "module", "asset-frames")
@reads("anomalies")
def ra403(seen: Seen) -> Iterator[Hit]:
    """Asset frames are out of step with `module.assets` (reader anomaly `asset-*`).

    Why: Assets that do not match their declarations may be lost or attached to the wrong name.

    Fix: Re-export the module from RisuAI.
    """
    for at, code, message, where in seen.anomalies:
        if code.startswith("asset"):
            yield Hit(at, f"asset frames are out of step with module.assets: {message}", where)
