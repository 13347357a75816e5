"""RA3xx: HTML RisuAI shows (regex outputs, the background, card greetings) that holds
script: ``<script>``, ``on*=`` handlers, ``javascript:`` URLs (found by
:func:`~risutools.analysis.cbs.scan_html`)."""

from __future__ import annotations

from collections.abc import Iterator

from risutools.analysis.seen import Hit, Seen, reads
from risutools.checks.registry import check


@check("RA301", "warning", "module", "html-script")
@reads("script_html")
def ra301(seen: Seen) -> Iterator[Hit]:
    """HTML with `<script>` (regex `out`, `backgroundEmbedding`).

    Why: Script in displayed HTML runs in the user's client.

    Fix: Remove the script; use triggers or CBS for behaviour.
    """
    for at, where, scan in seen.script_html:
        lines = scan.script_lines
        if lines:
            yield Hit(at, f"HTML with a <script> element ({len(lines)} in all)",
                      f"{where} line {lines[0]}")


@check("RA302", "warning", "module", "html-event-handler")
@reads("script_html")
def ra302(seen: Seen) -> Iterator[Hit]:
    """HTML with `on*=` event-handler attributes.

    Why: Event handlers are script that runs in the user's client.

    Fix: Remove the handler attributes; use `risu-trigger` buttons instead.
    """
    for at, where, scan in seen.script_html:
        lines = scan.handler_lines
        if lines:
            yield Hit(at, f"HTML with on* event-handler attributes ({len(lines)} element(s))",
                      f"{where} line {lines[0]}")


@check("RA303", "warning", "module", "html-javascript-url")
@reads("script_html")
def ra303(seen: Seen) -> Iterator[Hit]:
    """HTML with `javascript:` URLs.

    Why: A javascript: link runs script when clicked.

    Fix: Use a normal link or a `risu-trigger` button.
    """
    for at, where, scan in seen.script_html:
        lines = scan.js_url_lines
        if lines:
            yield Hit(at, f"HTML with javascript: URLs ({len(lines)} in all)",
                      f"{where} line {lines[0]}")
