"""Remote addresses in text RisuAI shows, and those built from chat data (RA305).

A displayed ``<img src="https://h/?q={{getvar::secret}}">``, a CSS
``url(https://h/{{lastmessage}})``, a Markdown image or link to ``https://h/$1`` in a regex
output: RisuAI fills the address in (CBS when it renders, the regex's groups when it
replaces) and the browser then loads it, or follows it on a click, so the chat's data goes
to that host.  :func:`dynamic_urls` finds the remote addresses of a text (``http(s)://h``,
``//h``; a backslash read as a slash, as a browser reads an http(s) address) whose text holds
such a part: a CBS tag (``{{...}}``) anywhere in it (but those of :data:`NO_DATA`, e.g.
``{{random}}``), or, in a regex output, a replacement (``$1`` .. ``$99``, ``$&``,
``$<name>``, ``$``` and ``$'``).  An address ends at a space, a quote, ``<``, ``>`` or ``)``
outside CBS tags and a ``$<name>`` (an attribute's, a Markdown link's or a CSS ``url()``'s
end); inside a CBS tag it goes on, so ``{{getvar::a b}}`` stays one part.

:func:`host_of` is the host of an address's authority as a browser reads it (user info and
port dropped, percent escapes decoded, lower case); ``*`` when the host itself is built
(``https://{{getvar::h}}/``).

Linear and bounded: each address is walked once from its start to its end and the search
goes on after it; at most ``MAX_DYNAMIC`` are kept a text.  Our own fixed patterns only;
nothing is rendered, run or fetched.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache
from urllib.parse import unquote

#: addresses built from chat data kept a text
MAX_DYNAMIC = 100

#: an http(s) address in running text and its authority (user info, host, port): its host
#: is :func:`host_of` the group (HTML, Lua and JavaScript strings alike); ASCII only, so a
#: word written right after it (``https://h.example에서``) is not taken into the host
AUTHORITY = r"https?:[/\\]{2}([A-Za-z0-9_.\-~%@:\[\]]{1,300})"
#: where a remote address starts: ``http(s)://``, ``//`` (the page's scheme), either slash
_REMOTE = r"(?:https?:)?[/\\]{2}"
#: a regex replacement in a regex script's output (JavaScript's ``String.replace``)
_GROUP = r"\$(?:[0-9]{1,2}|&|<[^>]*>|`|')"
#: CBS tags that carry no chat data: line breaks, nothing, chance, the clock
NO_DATA = frozenset({"br", "newline", "blank", "none", "random", "randint", "dice", "roll",
                     "time", "date", "isotime", "isodate", "unixtime"})
#: a CBS tag's name (a block's ``#``/``/``/``:`` marks left out)
_CBS_NAME = r"\{\{\s*[#/:]?\s*([^\s:{}]*)"
#: where an address's authority ends
_PATH = r"[/\\?#]"
#: what the walk along an address stops at: what ends an address outside CBS tags (a
#: space, a quote, ``<``, ``>``, ``)``), a CBS tag's braces, a named group
_STOPS = r"[ \t\n\r\f\"'<>)]|\{\{|\}\}|\$<"
#: a host name or an IP literal, as it is kept
_HOST_OK = r"[a-z0-9_][a-z0-9_.\-]{0,252}|\[[0-9a-f:.]{2,45}\]"


@cache
def _rx() -> tuple[re.Pattern[str], ...]:
    """The patterns above, compiled when first needed (not at every command's start-up):
    remote, group, CBS name, path, host, stops, authority."""
    return (re.compile(_REMOTE, re.IGNORECASE), re.compile(_GROUP), re.compile(_CBS_NAME),
            re.compile(_PATH), re.compile(_HOST_OK), re.compile(_STOPS),
            re.compile(AUTHORITY, re.IGNORECASE))


def _carries_data(url: str) -> bool:
    """Whether a CBS tag of ``url`` may carry chat data: any but those of
    :data:`NO_DATA` (``{{random}}`` as a cache-buster does not)."""
    return any(m.group(1).lower() not in NO_DATA for m in _rx()[2].finditer(url))


def host_of(authority: str) -> str | None:
    """The host of an address's authority (what follows ``//``, up to the path): user info
    and port dropped, percent escapes decoded, lower case, a trailing dot dropped; ``*``
    when a CBS tag builds it; None when it is not a host name or an IP literal."""
    if "{{" in authority:
        return "*"
    host = unquote(authority.rpartition("@")[2]).lower()
    host = host[:host.find("]") + 1] if host.startswith("[") else host.partition(":")[0]
    host = host.rstrip(".")
    return host if _rx()[4].fullmatch(host) else None


def url_hosts(text: str, start: int = 0, end: int | None = None) -> Iterator[tuple[int, str]]:
    """(offset, host) of each ``http(s)://`` address of ``text[start:end]`` whose
    authority names a host (:data:`AUTHORITY`, :func:`host_of`)."""
    for m in _rx()[6].finditer(text, start, len(text) if end is None else end):
        host = host_of(m.group(1))
        if host is not None and host != "*":
            yield m.start(), host


def _address_end(text: str, pos: int) -> int:
    """Where the address whose ``//`` ends at ``pos`` ends: at the first of
    :data:`_STOPS`' ends outside CBS tags (``{{`` opens one, ``}}`` closes it; a ``$<name>`` is
    read whole).  The search jumps from one of those to the next (a long address, an inline
    base64 image, is passed over in C, not a character at a time)."""
    stop = _rx()[5]
    depth = 0
    while (m := stop.search(text, pos)) is not None:
        tok, pos = m.group(), m.end()
        if tok == "{{":
            depth += 1
        elif tok == "}}":
            depth = max(depth - 1, 0)
        elif tok == "$<":
            close = text.find(">", pos, pos + 64)
            pos = close + 1 if close >= 0 else pos
        elif not depth:
            return m.start()
    return len(text)


def dynamic_urls(text: str, groups: bool, bare: bool = False) -> list[tuple[int, str, str]]:
    """(offset, host, what builds it) of each remote address of ``text`` built from chat
    data: ``"CBS"`` or, with ``groups`` (a regex output), ``"the matched text"``; at most
    :data:`MAX_DYNAMIC`.  ``bare``: ``text`` is where an address is expected (an
    attribute's value, a CSS address); else (running text) an address without a scheme
    counts only with a dotted host name (``a //{{user}}`` in a sentence is not one)."""
    out: list[tuple[int, str, str]] = []
    if "{{" not in text and not (groups and "$" in text):
        return out
    remote, group, _, path = _rx()[:4]
    pos = 0
    while len(out) < MAX_DYNAMIC and (m := remote.search(text, pos)) is not None:
        end = _address_end(text, m.end())
        pos = max(end, m.end())
        url = text[m.start():end]
        what = ("CBS" if "{{" in url and _carries_data(url) else
                "the matched text" if groups and group.search(url) else None)
        if what is None:
            continue
        authority = path.split(text[m.end():end], maxsplit=1)[0]
        host = host_of(authority)
        if host is None or not (bare or m.group()[0] in "hH" or (host != "*" and "." in host)):
            continue
        out.append((m.start(), host, what))
    return out
