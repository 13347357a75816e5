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
    concatenation whose first part is either and already holds the whole host
    (``"https://h.example/q?d=" .. secret``: the rest is computed, the host is not), or a
    name assigned such a concatenation once (``template``: ``local url = "https://..." ..
    q``, :class:`~risutools.analysis.luaflow.Templates`), or the argument itself (``at``:
    the call and its place) built as one (``string.format("https://h.example/%s", q)``)."""
    first = a.parts[0] if a.parts else None
    url = a.literal if first is None else first[1] if first[0] == LIT else None
    ref = a.name if first is None else first[1] if first[0] == REF else None
    got = None
    if url is None and ref:
        url = constants.get(ref)
        got = template(ref) if url is None and template is not None and first is None \
            else None
    elif url is None and template is not None and at is not None:
        got = template.argument(*at)
    if got and got[0][0] == LIT:
        url, first = got[0][1], (got[0] if len(got) > 1 else None)
    if url is None or (first is not None and not _HOST_ENDS.search(re.sub("[\t\n\r]", "",
                                                                             url))):
        return None
    return url_host(url)
