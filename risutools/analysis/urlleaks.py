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

:func:`host_of` is the host of an address's authority as a browser reads it (WHATWG URL:
user info and port dropped, percent escapes decoded, mapped to ASCII, a number an IPv4
address); ``*`` when the host itself is built (``https://{{getvar::h}}/``).
:func:`address_host` and :func:`page_address_host` read one whole address (tabs and line
breaks dropped, the scheme in any case, any number of slashes either way).

Linear and bounded: each address is walked once from its start to its end and the search
goes on after it; at most ``MAX_DYNAMIC`` are kept a text.  Our own fixed patterns only;
nothing is rendered, run or fetched.
"""

from __future__ import annotations

import codecs
import re
import unicodedata
from collections.abc import Iterator
from functools import cache

#: addresses built from chat data kept a text
MAX_DYNAMIC = 100

#: tabs and line breaks, which a browser drops anywhere in an address before reading it
_TAB_NL = "[\t\n\r]*"
#: an http(s) address in running text and its authority (user info, host, port): its host
#: is :func:`host_of` the group (HTML, Lua and JavaScript strings alike); the scheme in
#: any case, tabs and line breaks inside it and among the slashes dropped, one or more
#: slashes, either way (a browser reads ``https:\\h``, ``https:/\\h``, ``https:///h`` as
#: ``https://h``); ASCII only (and the full-width letters, digits and full stops a browser
#: maps to ASCII: ``ｅvil。example``), so a word written right after it
#: (``https://h.example에서``) is not taken into the host
AUTHORITY = (_TAB_NL.join("http") + _TAB_NL + "(?:s" + _TAB_NL + ")?:" + _TAB_NL
             + r"[/\\][/\\\t\n\r]*([A-Za-z0-9_.\-~%@:\[\]"
             + "\uff0d\uff0e\uff10-\uff19\uff21-\uff3a\uff41-\uff5a\u3002\uff61]{1,300})")
#: where a remote address starts: ``http(s):`` and its slashes, ``//`` (the page's scheme)
_REMOTE = r"https?:[/\\]+|[/\\]{2,}"
#: schemes a browser reads as "special": any number of slashes (either way) before the host
SPECIAL_SCHEMES = frozenset({"http", "https", "ws", "wss", "ftp"})
#: a scheme at the start of an address (tabs and line breaks already dropped)
_SCHEME = r"([A-Za-z][A-Za-z0-9+.\-]*):"
#: what ends an address's authority
_AUTHORITY_END = r"[/\\?#]"
#: the tabs and line breaks a browser drops from an address, as a ``str.translate`` table
_DROP_TAB_NL = dict.fromkeys(map(ord, "\t\n\r"))
#: the most characters of a host's text (user info, port, tabs and the characters its
#: mapping ignores already dropped, percent escapes decoded) read further: a host name a
#: browser takes is at most 253 ASCII characters, and NFKC makes at most a few characters
#: one (a longer text is no host: no NFKC or punycode of megabytes)
MAX_HOST_TEXT = 253 * 4
#: characters a host's domain-to-ASCII mapping drops (UTS #46 "ignored")
_IGNORED_IN_HOST = dict.fromkeys(
    [0xAD, 0x34F, 0x180B, 0x180C, 0x180D, 0x200B, 0x2060, 0xFEFF, *range(0xFE00, 0xFE10)])
#: full stops a host's mapping reads as ``.`` (after NFKC)
_DOTS = {0x3002: ".", 0xFF0E: ".", 0xFF61: "."}
#: a regex replacement in a regex script's output (JavaScript's ``String.replace``; ``$$``
#: is a ``$`` written as itself, so a ``$`` after an odd run of them starts none)
_GROUP = r"(?<!\$)(?:\$\$)*\$(?:[0-9]{1,2}|&|<[^>]*>|`|')"
#: CBS tags that carry no chat data: line breaks, nothing, chance, the clock
NO_DATA = frozenset({"br", "newline", "blank", "none", "random", "randint", "dice", "roll",
                     "time", "date", "isotime", "isodate", "unixtime"})
#: a CBS tag's name (a block's ``#``/``/``/``:`` marks left out)
_CBS_NAME = r"\{\{\s*[#/:]?\s*([^\s:{}]*)"
#: where an address's authority ends
_PATH = r"[/\\?#]"
#: what the walk along an address stops at: what ends an address outside CBS tags (a
#: space, a quote, ``<``, ``>``, ``)``), a CBS tag's braces, a named group, the ``$'``
#: replacement (not a quote: it is replaced before the text is read)
_STOPS = r"[ \t\n\r\f\"'<>)]|\{\{|\}\}|\$<|\$'"
#: what a browser strips at the ends of an address: C0 controls and spaces
_C0_SPACE = "".join(map(chr, range(0x21)))
#: a host name or an IP literal, as it is kept
_HOST_OK = r"[a-z0-9_][a-z0-9_.\-]{0,252}|\[[0-9a-f:.]{2,45}\]"


@cache
def _rx() -> tuple[re.Pattern[str], ...]:
    """The patterns above, compiled when first needed (not at every command's start-up):
    remote, group, CBS name, path, host, stops, authority, scheme, authority end,
    slashes, hexadecimal digits (a run of percent escapes: :func:`_percent_run`'s own)."""
    return (re.compile(_REMOTE, re.IGNORECASE), re.compile(_GROUP), re.compile(_CBS_NAME),
            re.compile(_PATH), re.compile(_HOST_OK), re.compile(_STOPS),
            re.compile(AUTHORITY, re.IGNORECASE), re.compile(_SCHEME),
            re.compile(_AUTHORITY_END), re.compile(r"[/\\]*"), re.compile(r"[0-9A-Fa-f]+"))


def _no_tab_nl(text: str) -> str:
    """``text`` without tabs and line breaks (a browser drops them anywhere in an
    address)."""
    if "\t" in text or "\n" in text or "\r" in text:
        return text.translate(_DROP_TAB_NL)
    return text


#: percent escapes matched at most this many at a time: a group repeated per escape keeps a
#: backtracking mark per repetition (``%41`` * 4,000,000 took 490 MB in ``re`` alone)
PERCENT_RUN = 4096


@cache
def _percent_run() -> re.Pattern[str]:
    return re.compile(rf"(?:%[0-9A-Fa-f]{{2}}){{1,{PERCENT_RUN}}}")


def _percent_decoded(text: str) -> str:
    """``text`` with its percent escapes decoded (``urllib.parse.unquote``'s result: a run
    of escapes read as UTF-8, U+FFFD for a byte that is not), a run at a time, not an
    escape at a time (a megabyte of ``%41`` is one run), matched ``PERCENT_RUN`` escapes at
    a time (a longer run's pieces go through one incremental decoder: the same text)."""
    if "%" not in text:
        return text
    if len(text) < 3 * PERCENT_RUN:  # (no run can be cut)
        return _percent_run().sub(_decode_run, text)
    out: list[str] = []
    decoder = None
    pos = 0
    for m in _percent_run().finditer(text):
        if decoder is not None and m.start() != pos:  # a run ended
            out.append(decoder.decode(b"", True))
            decoder = None
        out.append(text[pos:m.start()])
        if decoder is None:
            decoder = codecs.getincrementaldecoder("utf-8")("replace")
        out.append(decoder.decode(bytes.fromhex(m.group().replace("%", ""))))
        pos = m.end()
    if decoder is not None:
        out.append(decoder.decode(b"", True))
    out.append(text[pos:])
    return "".join(out)


def _decode_run(m: re.Match[str]) -> str:
    return bytes.fromhex(m.group().replace("%", "")).decode("utf-8", "replace")


#: where an address is expected, a value that starts with a variable's value (the address
#: itself is then the variable's: a remote one for all a reader knows), or with the text of
#: a decoder whose argument is not literal (``{{xordecrypt::{{getvar::k}}}}``, folded into
#: ``{{\u2026}}``: :func:`~risutools.analysis.cbsfold.fold_cbs`)
_VARIABLE_ADDRESS = re.compile(r"[\x00-\x20]*(?:\{\{\s*(?:get_?var|get_?global_?var|"
                               r"get_?temp_?var|temp_?var)\s*::[^{}]*\}\}|\{\{\u2026\}\})",
                               re.IGNORECASE)


def _variable_address(text: str, groups: bool, group: re.Pattern[str]
                      ) -> tuple[int, str, str] | None:
    """An address that is a variable's value, then chat data (``{{getvar::u}}$1`` with
    ``u`` set to "https://h/?q="): (its offset, ``*``, what builds it), its host the
    variable's, unknown here; None when ``text`` is not one."""
    lead = _VARIABLE_ADDRESS.match(text)
    if lead is None:
        return None
    rest = text[lead.end():]
    what = ("CBS" if "{{" in rest and _carries_data(rest) else
            "the matched text" if groups and group.search(rest) else None)
    return (lead.start(), "*", what) if what is not None else None


def _carries_data(url: str) -> bool:
    """Whether a CBS tag of ``url`` may carry chat data: any but those of
    :data:`NO_DATA` (``{{random}}`` as a cache-buster does not)."""
    return any(m.group(1).lower() not in NO_DATA for m in _rx()[2].finditer(url))


def host_of(authority: str) -> str | None:
    """The host of an address's authority (what follows ``//``, up to the path) as a
    browser reads it: tabs and line breaks dropped, user info and port dropped, percent
    escapes decoded, mapped to ASCII (:func:`_domain_to_ascii`: lower case, full-width
    letters and dots, punycode), a number an IPv4 address (``0x7f.1`` is ``127.0.0.1``), a
    trailing dot dropped; ``*`` when a CBS tag builds it; None when it is not a host name or
    an IP literal (a browser refuses the address)."""
    if "{{" in authority:
        return "*"
    text = _percent_decoded(_no_tab_nl(authority).rpartition("@")[2])
    if text.startswith("["):
        text = text[:text.find("]") + 1].lower()
        return text if _rx()[4].fullmatch(text) else None
    host = _domain_to_ascii(text.partition(":")[0])
    if host is None:
        return None
    labels = host.split(".")
    if len(labels) > 1 and not labels[-1]:
        labels.pop()
    if labels and _ipv4_part(labels[-1]) is not None:
        return _ipv4(labels)
    host = host.rstrip(".")
    return host if _rx()[4].fullmatch(host) else None


def _domain_to_ascii(host: str) -> str | None:
    """A host name as a browser maps it to ASCII (UTS #46, in short): characters it ignores
    dropped, NFKC (``ｅ`` is ``e``), lower case, ideographic and full-width full stops read
    as ``.``, a label still not ASCII written in punycode (``xn--``); None when a label
    cannot be."""
    if host.isascii():
        return host.lower() if len(host) <= MAX_HOST_TEXT else None
    text = host.translate(_IGNORED_IN_HOST)
    if len(text) > MAX_HOST_TEXT:
        return None
    text = unicodedata.normalize("NFKC", text).lower()
    text = text.translate(_DOTS)
    out = []
    for label in text.split("."):
        if label.isascii():
            out.append(label)
            continue
        try:
            out.append("xn--" + label.encode("punycode").decode("ascii"))
        except UnicodeError:
            return None
    return ".".join(out)


def _ipv4_part(part: str) -> int | None:
    """One part of an IPv4 address as a browser reads it: decimal, ``0x`` hexadecimal, a
    leading ``0`` octal; None when it is not a number (no exception raised for a word: a
    host name's last label is asked about every time)."""
    if not part or not part.isascii() or len(part) > 42:
        return None
    if part[:2] in ("0x", "0X"):
        digits = part[2:]
        if not digits:
            return 0
        return int(digits, 16) if _rx()[10].fullmatch(digits) else None
    if not part.isdigit():
        return None
    if len(part) > 1 and part[0] == "0":
        return int(part[1:], 8) if "8" not in part and "9" not in part else None
    return int(part)


def _ipv4(labels: list[str]) -> str | None:
    """The host whose last label is a number: an IPv4 address in dotted decimal (``127.1``,
    ``0x7f000001``, ``2130706433`` are ``127.0.0.1``), None when it is not one."""
    nums = [_ipv4_part(label) for label in labels]
    if len(nums) > 4 or any(n is None for n in nums):
        return None
    values = [n for n in nums if n is not None]
    if any(n > 255 for n in values[:-1]) or values[-1] >= 256 ** (5 - len(values)):
        return None
    address = values[-1] + sum(n * 256 ** (3 - i) for i, n in enumerate(values[:-1]))
    return ".".join(str(address >> shift & 255) for shift in (24, 16, 8, 0))


def address_host(url: str) -> str | None:
    """The host of one whole address as a browser reads it with no page to resolve it
    against (``new URL(url)``): controls and spaces at its ends and tabs and line breaks
    anywhere dropped; an http(s), ws(s) or ftp scheme in any case, then any number of
    slashes either way (``https:\\\\h``, ``https:/\\h``, ``HTTPS:h``), and the host
    (:func:`host_of`).  None for another scheme, a relative address, or no host."""
    return _scheme_host(_no_tab_nl(url).strip(_C0_SPACE))


def _scheme_host(text: str) -> str | None:
    """:func:`address_host` of an address already cleaned (tabs, line breaks and the
    controls and spaces at its ends dropped)."""
    m = _rx()[7].match(text)
    if m is None or m.group(1).lower() not in SPECIAL_SCHEMES:
        return None
    return _authority_host(text, m.end())


def page_address_host(url: str) -> str | None:
    """The host of an address a page loads (an attribute's, CSS's): :func:`address_host`,
    or, without a scheme, two or more slashes either way (``//h``, ``\\\\h``, ``/\\h``: the
    page's own scheme, which is http(s))."""
    text = _no_tab_nl(url).strip(_C0_SPACE)
    if text[:2] in ("//", "\\\\", "/\\", "\\/"):
        return _authority_host(text, 0)
    return _scheme_host(text)


def _authority_host(text: str, at: int) -> str | None:
    """The host of the authority after the slashes at ``at`` (``*`` is no host here)."""
    n = len(text)
    slashes = _rx()[9].match(text, at)  # (it matches the empty text too)
    at = slashes.end() if slashes is not None else at
    end = _rx()[8].search(text, at)
    host = host_of(text[at:end.start() if end else n])
    return None if host == "*" else host


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
        elif tok == "$'":
            continue
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
    counts only with a dotted host name (``a //{{user}}`` in a sentence is not one); there
    its tabs and line breaks are dropped first, as a browser drops them from an address
    (the offsets are then of that text: a caller of ``bare`` reports the attribute's line)."""
    out: list[tuple[int, str, str]] = []
    if "{{" not in text and not (groups and "$" in text):
        return out
    if bare:
        text = _no_tab_nl(text)
    remote, group = _rx()[:2]
    if bare and (variable := _variable_address(text, groups, group)) is not None:
        return [variable]
    pos = 0
    while len(out) < MAX_DYNAMIC and (m := remote.search(text, pos)) is not None:
        end = _address_end(text, m.end())
        pos = max(end, m.end())
        url = text[m.start():end]
        what = ("CBS" if "{{" in url and _carries_data(url) else
                "the matched text" if groups and group.search(url) else None)
        if what is None:
            continue
        host = _kept_host(text[m.end():end], groups, bare or m.group()[0] in "hH")
        if host is not None:
            out.append((m.start(), host, what))
    return out


def _kept_host(address: str, groups: bool, schemed: bool) -> str | None:
    """The host of ``address`` (what follows its ``//``): ``*`` when a replacement or a CBS
    tag builds it; None when a browser refuses it, or (not ``schemed``: ``//h`` in running
    text) when it is no dotted name (``a //{{user}}`` in a sentence is not one)."""
    group, path = _rx()[1], _rx()[3]
    authority = path.split(address, maxsplit=1)[0]
    host = _built_host(address, groups, group) or host_of(authority)
    if host is None or not (schemed or "." in host or (host == "*" and "." in authority)):
        return None
    return host


def _built_host(address: str, groups: bool, group: re.Pattern[str]) -> str | None:
    """``*`` when a regex output's replacement (``$1``, ``$&``, ``$<name>``, ``$```,
    ``$'``) is in the host of ``address`` (what follows its ``//``): the matched chat text
    then names the host, a DNS label of it (``https://$1.h.example/``); else None.  The
    user info (up to the last ``@``) and the port (after a ``:``) are not the host."""
    if not groups or "$" not in address:
        return None
    masked = group.sub(lambda m: "$" * len(m.group()), address)
    stop = _rx()[3].search(masked)
    end = stop.start() if stop else len(masked)
    at = masked.rfind("@", 0, end) + 1
    colon = masked.find(":", at, end) if not masked.startswith("[", at) else -1
    host_end = colon if colon >= 0 else end
    inside = any(at <= g.start() < host_end for g in group.finditer(address, at, host_end))
    return "*" if inside else None
