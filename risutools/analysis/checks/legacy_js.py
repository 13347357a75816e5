"""RA5xx: legacy custom JavaScript (``cjs``): its presence, code it builds at run time, the
network it uses (:func:`~risutools.analysis.js.scan_js` finds the names)."""

from __future__ import annotations

from collections.abc import Iterator

from risutools.analysis.js import DYNAMIC_CODE, NETWORK
from risutools.analysis.seen import Hit, Seen, reads
from risutools.checks.registry import check


@check("RA501", "warning", "module", "legacy-js")
@reads("legacy_js")
def ra501(seen: Seen) -> Iterator[Hit]:
    """Legacy custom JavaScript (`cjs`) is present (size given).

    Why: Legacy JS runs with the client's privileges and is not part of the Lua sandbox.

    Fix: Port the behaviour to Lua triggers.
    """
    if seen.legacy_js is not None:
        at, size, _scan = seen.legacy_js
        yield Hit(at, f"carries legacy custom JavaScript ({size} characters)", "cjs")


@check("RA502", "warning", "module", "legacy-js-dynamic")
@reads("legacy_js")
def ra502(seen: Seen) -> Iterator[Hit]:
    """Legacy JS builds code at run time (`eval`, `Function`, `import`).

    Why: Code built at run time cannot be reviewed.

    Fix: Remove eval, Function and import from the script.
    """
    if seen.legacy_js is None:
        return
    at, _size, scan = seen.legacy_js
    names = scan.names
    dyn = sorted(n for n in names if n in DYNAMIC_CODE)
    if dyn:
        yield Hit(at, f"legacy JavaScript builds code at run time ({', '.join(dyn)})",
                  f"cjs line {names[dyn[0]][0]}")


@check("RA503", "warning", "module", "legacy-js-network")
@reads("legacy_js")
def ra503(seen: Seen) -> Iterator[Hit]:
    """Legacy JS uses the network (`fetch`, `XMLHttpRequest`, `WebSocket`, ...).

    Why: Client-side network access can send chat content anywhere.

    Fix: Remove the network calls, or justify them in the curator notes.
    """
    if seen.legacy_js is None:
        return
    at, _size, scan = seen.legacy_js
    names = scan.names
    netn = sorted(n for n in names if n in NETWORK)
    if netn:
        hosts = sorted({h for h, _ in scan.url_hosts})
        yield Hit(at, f"legacy JavaScript uses the network ({', '.join(netn)})"
                  + (f"; literal hosts: {', '.join(hosts[:10])}" if hosts else ""),
                  f"cjs line {names[netn[0]][0]}")
