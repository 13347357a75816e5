"""Where a Lua ``request`` points: the host of a literal address, of a constant holding
one, or of a concatenation whose first part already holds the whole host."""

from __future__ import annotations

import re

from risutools.analysis.lua import LIT, REF, Arg, Call
from risutools.analysis.luaflow import Templates
from risutools.analysis.urlleaks import address_host

#: an address whose host has ended (a path, a query, a port or a fragment follows it): a
#: scheme, its slashes either way, the authority and what ends it (tabs and line breaks
#: dropped first, as a browser drops them)
_HOST_ENDS = re.compile(r"^\s*[A-Za-z][A-Za-z0-9+.-]*:[/\\]*[^/\\?#:]+[/\\?#:]")


def url_host(url: str) -> str | None:
    """The host of an ``http(s)``/``ws(s)`` (or ``ftp``) URL as a browser reads it
    (:func:`~risutools.analysis.urlleaks.address_host`: ``https:\\\\h``, ``HTTPS:///h``,
    tabs inside), or None."""
    return address_host(url)


def address(a: Arg, constants: dict[str, str], template: Templates | None = None,
            at: tuple[Call, int] | None = None) -> str | None:
    """The host an argument names: a literal address, a constant holding one, or a
    concatenation whose literal head (its first literals and constants, side by side:
    ``"https://" .. "h.example" .. "/q?d=" .. secret``) already holds the whole host (the
    rest is computed, the host is not), or a name assigned such a concatenation once
    (``template``: ``local url = "https://..." .. q``,
    :class:`~risutools.analysis.luaflow.Templates`), or the argument itself (``at``: the
    call and its place) built as one (``string.format("https://h.example/%s", q)``)."""
    url, more, ref = a.literal, False, a.name
    if a.parts:
        url, more = literal_head(a.parts, constants)
        ref = None
    got = None
    if url is None and ref:
        url = constants.get(ref)
        got = template(ref) if url is None and template is not None else None
    elif url is None and template is not None and at is not None:
        got = template.argument(*at)
    if got and got[0][0] == LIT:
        url, more = got[0][1], len(got) > 1
    if url is None or (more and not _HOST_ENDS.search(re.sub("[\t\n\r]", "", url))):
        return None
    return url_host(url)


def literal_head(parts: tuple[tuple[int, str], ...], constants: dict[str, str]
                 ) -> tuple[str | None, bool]:
    """The text a concatenation's parts start with (its literals and the constants among
    its names, up to the first other part; None when it starts with one), and whether
    other parts follow it."""
    head: list[str] = []
    for kind, text in parts:
        value = text if kind == LIT else constants.get(text) if kind == REF else None
        if value is None:
            return ("".join(head) if head else None), True
        head.append(value)
    return "".join(head), False
