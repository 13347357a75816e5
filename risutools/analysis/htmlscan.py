"""HTML RisuAI shows (background HTML, regex outputs, greetings, chat messages written by
triggers), read as a browser reads tags: the RA3xx checks' scan.

One reader (:func:`scan_html`) walks the text tag by tag: a tag's name, then its
attributes, each value quoted (``"..."``, ``'...'``) or not, so that a ``<`` or ``>``
inside a quoted value (``<img alt=">" onerror=...>``, ``title="{{? 1>0}}"``) does not end
the tag.  Attribute values are decoded (character references: ``&#106;``, ``&#x6A``,
``&colon;``, ``&Tab;`` ..., with or without the semicolon) before their URL scheme is
judged, as the browser does.  Background text goes through CBS before the browser sees it,
so the text is read twice: as written, and with every CBS tag removed
(``o{{blank}}nerror=``, ``<scr{{blank}}ipt>``); the findings of both are kept.

Linear and bounded: every step of the reader consumes at least one character, quoted values
are found with ``str.find``, patterns are our own fixed ones (no pattern is made of module
text), and a ``srcdoc`` document is read again at most ``MAX_SRCDOC_DEPTH`` deep.  Nothing
is rendered or run.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass, field
from html.entities import html5

from risutools.analysis.cbs import display_unescaped, strip_cbs
from risutools.analysis.cbsfold import Folded, fold_cbs
from risutools.analysis.cssscan import css_urls
from risutools.analysis.lualex import LineIndex
from risutools.analysis.urlleaks import dynamic_urls, page_address_host, url_hosts

#: lines kept per kind of finding in one text (counts past it are not kept)
MAX_LINES = 100
#: a ``srcdoc`` is a document of its own: read again, at most this many levels deep
MAX_SRCDOC_DEPTH = 3
#: URL hosts kept per text
MAX_HOSTS = 1000

_SCRIPT = re.compile(r"<\s*script\b", re.IGNORECASE)
_TAG_NAME = re.compile(r"[A-Za-z][^\s/>\x00]*")
_SPACE_SLASH = re.compile(r"[\s/]*")
_SPACE = re.compile(r"\s*")
_ATTR_NAME = re.compile(r"[^\s/>][^\s/>=]*")
_UNQUOTED = re.compile(r"[^\s>]*")
#: an event-handler attribute: ``on`` and letters, however many (HTML's longest,
#: ``oncontentvisibilityautostatechange``, fires with no user action: 32 after ``on``)
_HANDLER = re.compile(r"on[a-z]{2,}", re.IGNORECASE)
_JS_URL = re.compile(r"j\s*a\s*v\s*a\s*s\s*c\s*r\s*i\s*p\s*t\s*:", re.IGNORECASE)
#: an http(s) address in running text and its authority (user info, host, port)
#: a character reference: hex, decimal (any number of digits: judged in Python), named
_CHAR_REF = re.compile(r"&(?:#[xX]([0-9A-Fa-f]+)|#([0-9]+)|([A-Za-z][A-Za-z0-9]{0,31}));?")
#: what a browser removes from a URL before reading its scheme: tab and newlines anywhere,
#: C0 controls and spaces at the ends
_URL_DROP = re.compile(r"[\t\n\r]")
#: elements that embed a document of their own, and the attributes naming it
EMBEDDING = frozenset({"iframe", "frame", "object", "embed", "applet", "portal",
                       "fencedframe"})
_EMBED_SOURCES = ("src", "data", "code", "codebase", "archive")
#: schemes whose document can run script when embedded
_ACTIVE_SCHEMES = ("data:", "javascript:", "blob:", "vbscript:")
#: schemes that run script where a URL is followed (a CSS address: RA303)
_SCRIPT_SCHEMES = ("javascript:", "vbscript:")
#: where a ``<style>`` element's text ends
_STYLE_END = re.compile(r"</style", re.IGNORECASE)
#: attributes whose value is an address the browser loads or follows (``srcset``: a list of
#: addresses, each before its size; ``ping``: addresses between spaces)
URL_ATTRIBUTES = frozenset({"href", "src", "action", "formaction", "data", "poster",
                            "background", "cite", "longdesc", "ping", "srcset", "xlink:href",
                            "codebase", "lowsrc", "dynsrc", "manifest", "icon"})


@dataclass
class HtmlScan:
    """What :func:`scan_html` found in one text (lines of each kind)."""

    script_lines: list[int] = field(default_factory=list)
    handler_lines: list[int] = field(default_factory=list)
    js_url_lines: list[int] = field(default_factory=list)
    #: (line, what): a document embedded from data:/srcdoc ..., a meta refresh, a base
    #: href, a form's action (RA304)
    active_lines: list[tuple[int, str]] = field(default_factory=list)
    risu_triggers: list[tuple[str, int]] = field(default_factory=list)
    #: (value, line) of each ``risu-btn`` attribute with a value (its name in any case,
    #: quoted or not, its value decoded: what RisuAI's ``getAttribute`` gives)
    risu_btns: list[tuple[str, int]] = field(default_factory=list)
    url_hosts: list[tuple[str, int]] = field(default_factory=list)
    #: hosts of the addresses CSS loads (``url(...)``, ``@import``: cssscan) and of those in
    #: attribute values only their decoding shows (``https&#58;//h``), merged into
    #: ``url_hosts`` once both readings are done (each (host, line) once)
    decoded_hosts: list[tuple[str, int]] = field(default_factory=list)
    #: (line, host, what builds it): remote addresses built from chat data (RA305,
    #: :func:`~risutools.analysis.urlleaks.dynamic_urls`), each once
    leaks: list[tuple[int, str, str]] = field(default_factory=list)

    def flagged(self) -> bool:
        """Whether it found what the checks of shown HTML report (RA301-RA305)."""
        return bool(self.script_lines or self.handler_lines or self.js_url_lines
                    or self.active_lines or self.leaks)


def decode_refs(value: str) -> str:
    """``value`` with its character references decoded as a browser decodes an attribute
    value (numeric ones with or without ``;``, out-of-range ones as U+FFFD; named ones
    from HTML's table, also without ``;`` so that ``javascript&colon`` is not missed)."""
    if "&" not in value:
        return value
    return _CHAR_REF.sub(_decode_ref, value)


def _decode_ref(m: re.Match[str]) -> str:
    hex_digits, dec_digits, name = m.group(1), m.group(2), m.group(3)
    if name is not None:
        for key in (name + ";", name):
            if key in html5:
                return html5[key]
        return m.group()
    digits = (hex_digits or dec_digits).lstrip("0") or "0"
    if len(digits) > 7:  # past U+10FFFF whatever the base
        return "\ufffd"
    code = int(digits, 16 if hex_digits is not None else 10)
    if code == 0 or code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
        return "\ufffd"
    return chr(code)


def url_scheme_text(value: str) -> str:
    """A decoded attribute value as a browser reads a URL: tabs and newlines dropped,
    controls and spaces stripped at the ends, lower case."""
    return _URL_DROP.sub("", value).strip("\x00\x01\x02\x03\x04\x05\x06\x07\x08\x0b\x0c"
                                           "\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18"
                                           "\x19\x1a\x1b\x1c\x1d\x1e\x1f ").lower()


def scan_html(text: str, groups: bool = False, unescape: bool = False,
              visualize: bool = False) -> HtmlScan:
    """The script, handlers, ``javascript:`` URLs, active embeds, buttons, URL hosts and
    addresses built from chat data of ``text``, read as written, with its CBS tags
    removed, and with the tags whose text is known folded into it
    (:func:`~risutools.analysis.cbsfold.fold_cbs`: ``http{{u::3a}}//h``).  ``groups``:
    ``text`` is a regex script's output (``$1`` is the matched text); ``unescape``: ``text``
    is shown as a chat message, RisuAI's display map applied
    (:func:`~risutools.analysis.cbs.display_unescaped`: U+E9BE is ``:`` ...);
    ``visualize``: its CBS is evaluated for display (a chat message: ``{{file}}`` shows the
    file's name)."""
    out = HtmlScan()
    if not isinstance(text, str):
        return out
    if unescape:
        text = display_unescaped(text)
    if "<" not in text and "//" not in text and ":" not in text and "{{" not in text:
        return out
    lines = LineIndex(text)
    _Reader(out, lines.line, buttons=True, groups=groups).read(text, 0)
    if "{{" in text:
        stripped, starts, origins = strip_cbs(text)
        if stripped != text:
            def line_of(offset: int) -> int:
                k = bisect_right(starts, offset) - 1
                return lines.line(origins[k] + offset - starts[k])
            _Reader(out, line_of, buttons=False, groups=groups).read(stripped, 0)
        _read_folded(out, fold_cbs(text, visualize, unescape), lines, groups)
    for off, host, what in dynamic_urls(text, groups):
        _leak(out, (lines.line(off), host, what))
    for off, named in url_hosts(text):
        out.url_hosts.append((named, lines.line(off)))
        if len(out.url_hosts) >= MAX_HOSTS:
            break
    found = set(out.url_hosts)
    for item in dict.fromkeys(out.decoded_hosts):
        if item not in found and len(out.url_hosts) < MAX_HOSTS:
            out.url_hosts.append(item)
    out.script_lines.sort()
    out.handler_lines.sort()
    out.js_url_lines.sort()
    out.active_lines.sort()
    out.leaks.sort()
    return out


def _read_folded(out: HtmlScan, folded: Folded, lines: LineIndex, groups: bool) -> None:
    """The reading of a text whose known tags are folded (when any is): its tags, the
    addresses built from chat data and the hosts of its running text (a tag's output at
    the tag's line)."""
    if not any(folded.produced):
        return

    def line_of(offset: int) -> int:
        return lines.line(folded.origin(offset))
    _Reader(out, line_of, buttons=False, groups=groups).read(folded.text, 0)
    for off, host, what in dynamic_urls(folded.text, groups):
        _leak(out, (line_of(off), host, what))
    for off, named in url_hosts(folded.text):
        if len(out.decoded_hosts) >= MAX_HOSTS:
            break
        out.decoded_hosts.append((named, line_of(off)))


def _leak(out: HtmlScan, item: tuple[int, str, str]) -> None:
    """Record an address built from chat data (once; at most ``MAX_LINES``)."""
    if len(out.leaks) < MAX_LINES and item not in out.leaks:
        out.leaks.append(item)


class _Reader:
    """One reading of one text into ``out`` (``line_of`` maps an offset to a line)."""

    def __init__(self, out: HtmlScan, line_of: Callable[[int], int], buttons: bool,
                 groups: bool = False) -> None:
        self.out = out
        self.line_of = line_of
        self.buttons = buttons
        self.groups = groups

    def read(self, text: str, depth: int, at_line: int | None = None) -> None:
        """Every tag of ``text`` (a srcdoc's text: ``depth`` > 0, lines are ``at_line``)."""
        for m in _SCRIPT.finditer(text):
            if not self._add(self.out.script_lines, m.start(), at_line):
                break
        for m in _JS_URL.finditer(text):
            if not self._add(self.out.js_url_lines, m.start(), at_line):
                break
        pos = text.find("<")
        n = len(text)
        while 0 <= pos < n:
            tm = _TAG_NAME.match(text, pos + 1)
            if tm is None:
                pos = text.find("<", pos + 1)
                continue
            end, attrs = _attributes(text, tm.end())
            name = tm.group().lower()
            self._tag(text, pos, end, name, attrs, depth, at_line)
            if name == "style":  # its text is a style sheet (read as tags too, as before)
                close = _STYLE_END.search(text, end)
                self._css(text[end:close.start() if close else len(text)], end, pos,
                          at_line)
            pos = text.find("<", max(end, pos + 1))

    def _line(self, offset: int, at_line: int | None) -> int:
        return at_line if at_line is not None else self.line_of(offset)

    def _add(self, lines: list[int], offset: int, at_line: int | None) -> bool:
        """Record a line (once); False once ``MAX_LINES`` are kept."""
        if len(lines) >= MAX_LINES:
            return False
        line = self._line(offset, at_line)
        if line not in lines:
            lines.append(line)
        return True

    def _active(self, offset: int, at_line: int | None, what: str) -> None:
        act = self.out.active_lines
        item = (self._line(offset, at_line), what)
        if len(act) < MAX_LINES and item not in act:
            act.append(item)

    def _tag(self, text: str, start: int, end: int, name: str,
             attrs: list[tuple[str, str | None]], depth: int, at_line: int | None) -> None:
        out = self.out
        if name == "script":
            self._add(out.script_lines, start, at_line)
        values: dict[str, str] = {}
        for attr, raw in attrs:
            if raw is None:
                continue
            value = decode_refs(raw)
            values.setdefault(attr, value)
            if _HANDLER.fullmatch(attr):
                self._add(out.handler_lines, start, at_line)
            if _JS_URL.search(value):
                self._add(out.js_url_lines, start, at_line)
            if value is not raw and ":" in value:  # (hosts only the decoding shows)
                self._hosts(value, start, at_line)
            for host in attribute_hosts(attr, value):  # (``//h``, ``https:\\h`` ...)
                self._host(host, start, at_line)
            for _, host, what in dynamic_urls(value, self.groups, bare=True):
                _leak(out, (self._line(start, at_line), host, what))
        self._active_tag(name, values, start, depth, at_line)
        if "style" in values:
            self._css(values["style"], None, start, at_line)
        trigger = values.get("risu-trigger") if self.buttons and depth == 0 else None
        if trigger:  # (the whole value, as RisuAI's getAttribute gives it; CBS in it: "*")
            out.risu_triggers.append(("*" if "{{" in trigger else trigger,
                                      self._line(start, at_line)))
        btn = values.get("risu-btn") if self.buttons and depth == 0 else None
        if btn and len(out.risu_btns) < MAX_HOSTS:  # (Chat.svelte: an empty one calls nothing)
            out.risu_btns.append((btn, self._line(start, at_line)))

    def _hosts(self, value: str, start: int, at_line: int | None) -> None:
        """The http(s) hosts of a decoded attribute value (at the tag's line)."""
        for _, host in url_hosts(value):
            self._host(host, start, at_line)

    def _host(self, host: str, start: int, at_line: int | None) -> None:
        if len(self.out.decoded_hosts) < MAX_HOSTS:
            self.out.decoded_hosts.append((host, self._line(start, at_line)))

    def _css(self, css: str, base: int | None, start: int, at_line: int | None) -> None:
        """The addresses a style sheet (at offset ``base`` of the text) or a ``style``
        attribute (of the tag at ``start``) loads, CSS escapes decoded: a script URL is
        RA303, an http(s) host a URL host."""
        for u in css_urls(css):
            offset = start if base is None else base + u.offset
            url = url_scheme_text(u.url)
            if url.startswith(_SCRIPT_SCHEMES):
                self._add(self.out.js_url_lines, offset, at_line)
            host = css_host(url)
            if host is not None and len(self.out.decoded_hosts) < MAX_HOSTS:
                self.out.decoded_hosts.append((host, self._line(offset, at_line)))
            for _, leak_host, what in dynamic_urls(u.url, self.groups, bare=True):
                _leak(self.out, (self._line(offset, at_line), leak_host, what))

    def _active_tag(self, name: str, values: dict[str, str], start: int, depth: int,
                    at_line: int | None) -> None:
        """RA304: a document embedded from data:/javascript:/srcdoc, a meta refresh, a base
        href, a form's action; a srcdoc is read as HTML of its own."""
        if name in EMBEDDING:
            if "srcdoc" in values:
                self._active(start, at_line, f"<{name} srcdoc>")
                if depth < MAX_SRCDOC_DEPTH:
                    self.read(values["srcdoc"], depth + 1, self._line(start, at_line))
            for attr in _EMBED_SOURCES:
                url = url_scheme_text(values.get(attr, ""))
                scheme = next((s for s in _ACTIVE_SCHEMES if url.startswith(s)), None)
                if scheme is not None:
                    self._active(start, at_line, f"<{name} {attr}={scheme}>")
        elif name == "meta" and url_scheme_text(values.get("http-equiv", "")) == "refresh":
            self._active(start, at_line, "<meta http-equiv=refresh>")
        elif name == "base" and "href" in values:
            self._active(start, at_line, "<base href>")
        if name == "form" and "action" in values:
            self._active(start, at_line, "<form action>")
        if "formaction" in values:
            self._active(start, at_line, f"<{name} formaction>")


def css_host(url: str) -> str | None:
    """The host of an address CSS loads (``url`` decoded): ``https://h``, ``//h``, slashes
    either way, as a browser reads it (:func:`~risutools.analysis.urlleaks.page_address_host`);
    None for a relative address, another scheme, or a host that is not a name."""
    return page_address_host(url)


def attribute_hosts(name: str, value: str) -> list[str]:
    """The hosts of the addresses an attribute's decoded value holds when the attribute
    takes addresses (:data:`URL_ATTRIBUTES`): the whole value, each address of a ``srcset``
    (before its size) or of a ``ping``; ``//h`` is the page's scheme."""
    if name not in URL_ATTRIBUTES:
        return []
    if name == "srcset":
        urls = [part.split(None, 1)[0] for part in value.split(",")[:MAX_HOSTS] if part.split()]
    elif name == "ping":
        urls = value.split()[:MAX_HOSTS]
    else:
        urls = [value]
    return [h for h in map(page_address_host, urls) if h is not None]


def _attributes(text: str, pos: int) -> tuple[int, list[tuple[str, str | None]]]:
    """The attributes of the tag whose name ends at ``pos``: where the tag ends (after its
    ``>``, or the end of the text) and (lower-case name, raw value or None) pairs.

    A quoted value runs to its closing quote; one never closed runs to the next ``>`` (a
    browser would drop the tag; reading on keeps what follows visible)."""
    n = len(text)
    attrs: list[tuple[str, str | None]] = []
    while True:
        pos = _end(_SPACE_SLASH, text, pos)
        if pos >= n:
            return n, attrs
        if text[pos] == ">":
            return pos + 1, attrs
        nm = _ATTR_NAME.match(text, pos)
        if nm is None:  # cannot happen: the class takes every character but those skipped
            return pos + 1, attrs
        name = nm.group().lower()
        pos = _end(_SPACE, text, nm.end())
        if pos >= n or text[pos] != "=":
            attrs.append((name, None))
            continue
        pos = _end(_SPACE, text, pos + 1)
        if pos < n and text[pos] in "\"'":
            close = text.find(text[pos], pos + 1)
            if close < 0:
                close = text.find(">", pos + 1)
                close = n if close < 0 else close
                attrs.append((name, text[pos + 1 : close]))
                return min(close + 1, n), attrs
            attrs.append((name, text[pos + 1 : close]))
            pos = close + 1
        else:
            end = _end(_UNQUOTED, text, pos)
            attrs.append((name, text[pos:end]))
            pos = end


def _end(rx: re.Pattern[str], text: str, pos: int) -> int:
    """Where a match of ``rx`` (which may match empty) at ``pos`` ends."""
    m = rx.match(text, pos)
    return pos if m is None else m.end()
