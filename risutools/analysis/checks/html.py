"""RA3xx: HTML RisuAI shows (regex outputs, the background, card greetings) that holds
script: ``<script>``, ``on*=`` handlers, ``javascript:`` URLs, active embeds, and remote
addresses built from chat data (found by :func:`~risutools.analysis.htmlscan.scan_html`)."""

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
    """HTML with `javascript:` URLs (in an attribute, or an address its CSS loads:
    `url(...)`, `@import`, escapes decoded).

    Why: A javascript: link runs script when clicked.

    Fix: Use a normal link or a `risu-trigger` button.
    """
    for at, where, scan in seen.script_html:
        lines = scan.js_url_lines
        if lines:
            yield Hit(at, f"HTML with javascript: URLs ({len(lines)} in all)",
                      f"{where} line {lines[0]}")


@check("RA304", "warning", "module", "html-active-embed")
@reads("script_html")
def ra304(seen: Seen) -> Iterator[Hit]:
    """HTML that embeds a document able to run script (`<iframe srcdoc>`, `<iframe>`,
    `<object>` or `<embed>` from a `data:`, `javascript:` or `blob:` URL), redirects the page
    (`<meta http-equiv=refresh>`), changes where its links go (`<base href>`) or sends a form
    somewhere (`<form action>`, `formaction`).

    Why: An embedded document runs its own script, and a redirect, a base URL or a form
    action sends the user or their input to another page.

    Fix: Remove the element; show content with plain HTML and CSS, use `risu-trigger`
    buttons for behaviour.
    """
    for at, where, scan in seen.script_html:
        found = scan.active_lines
        if found:
            kinds = sorted({what for _, what in found})
            shown = ", ".join(kinds[:4]) + (" ..." if len(kinds) > 4 else "")
            yield Hit(at, f"HTML that embeds a document or sends the page elsewhere: {shown} "
                          f"({len(found)} in all)", f"{where} line {found[0][0]}")


@check("RA305", "warning", "module", "html-url-with-chat-data")
@reads("script_html")
def ra305(seen: Seen) -> Iterator[Hit]:
    """Displayed HTML, CSS or Markdown loads or links to a remote address built from chat
    data: a CBS tag in the address (`{{getvar::...}}`, `{{user}}`, `{{lastmessage}}` ...; not
    `{{random}}` and the like), or in a regex output a replacement (`$1`, `$&`, `$<name>`):
    the host named, `*` when the host itself is built.

    Why: RisuAI fills the address in when it shows the text, and the browser loads it (an
    image, a style sheet, a CSS `url()`) or follows it on a click: the chat's variables, the
    persona's name or the matched message go to that host.

    Fix: Load fixed addresses only (ship images as the module's assets); keep chat data out
    of remote addresses.
    """
    for at, where, scan in seen.script_html:
        found = scan.leaks
        if found:
            hosts = sorted({host for _, host, _ in found})
            kinds = " and ".join(sorted({what for _, _, what in found}))
            shown = ", ".join(hosts[:4]) + (" ..." if len(hosts) > 4 else "")
            yield Hit(at, f"a remote address built from chat data ({kinds}) to {shown} "
                          f"({len(found)} in all)", f"{where} line {found[0][0]}")
