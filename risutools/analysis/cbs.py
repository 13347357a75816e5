"""CBS ("curly braced syntax") tag scanning, with nesting, and HTML checks.

``{{getvar::{{? 1+1}}}}`` is one ``getvar`` tag whose argument holds another
tag; the scanner pairs ``{{`` with ``}}`` on a stack.  Only our own fixed,
linear patterns are used; nothing is evaluated.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from risutools.analysis.lualex import LineIndex

_BRACES = re.compile(r"\{\{|\}\}")
_MAX_DEPTH = 64
_MAX_TAGS = 50000


@dataclass(frozen=True)
class CbsTag:
    """One CBS tag ``{{name::args}}`` and the line it starts on."""

    name: str  # lower-case tag name: getvar, setvar, button, #if, ?, ...
    args: tuple[str, ...]  # raw arguments (may contain nested tags)
    line: int

    def literal_arg(self, i: int) -> str | None:
        """Argument ``i`` when it holds no nested tag, else None."""
        if i < len(self.args) and "{{" not in self.args[i]:
            return self.args[i].strip()
        return None


@dataclass
class CbsScan:
    """The CBS tags of one text (:func:`scan_cbs`)."""

    tags: list[CbsTag] = field(default_factory=list)
    unbalanced: int = 0  # "{{" without "}}" (or the reverse)


def scan_cbs(text: str) -> CbsScan:
    """Every CBS tag of ``text``, in one pass (time and memory linear in the text).

    A tag's arguments are read from its *own* text: a nested tag inside it is
    replaced by ``{{…}}`` (it is a tag of its own), so each character is copied
    into at most one tag, however deep the nesting."""
    out = CbsScan()
    if not isinstance(text, str) or "{{" not in text:
        return out
    lines = LineIndex(text)
    # one frame per open "{{": [offset of "{{", pieces of its own text, where the next
    # piece starts]
    stack: list[tuple[int, list[str], list[int]]] = []
    for m in _BRACES.finditer(text):
        if m.group() == "{{":
            if len(stack) >= _MAX_DEPTH:
                out.unbalanced += 1
                continue
            if stack:
                _, pieces, nxt = stack[-1]
                pieces.append(text[nxt[0] : m.start()])
            stack.append((m.start(), [], [m.start() + 2]))
        else:
            if not stack:
                out.unbalanced += 1
                continue
            start, pieces, nxt = stack.pop()
            if stack:
                stack[-1][1].append(NESTED)
                stack[-1][2][0] = m.end()
            if len(out.tags) >= _MAX_TAGS:
                continue
            pieces.append(text[nxt[0] : m.start()])
            out.tags.append(_tag("".join(pieces), lines.line(start)))
    out.unbalanced += len(stack)
    out.tags.sort(key=lambda t: t.line)
    return out


#: what stands for a nested tag in the text of the tag around it
NESTED = "{{\u2026}}"


def _tag(body: str, line: int) -> CbsTag:
    stripped = body.strip()
    if stripped.startswith("?"):
        return CbsTag("?", (stripped[1:],), line)
    if stripped.startswith(("#", "/", ":")):
        head, _, rest = stripped.partition(" ")
        head2, sep, rest2 = head.partition("::")
        if sep:
            return CbsTag(head2.lower(), tuple(rest2.split("::")), line)
        return CbsTag(head.lower(), (rest,) if rest else (), line)
    parts = _split_top(body)
    return CbsTag(parts[0].strip().lower(), tuple(parts[1:]), line)


_SPLIT = re.compile(r"\{\{|\}\}|::")


def _split_top(body: str) -> list[str]:
    """Split on ``::`` outside nested ``{{ }}``."""
    if "{{" not in body:
        return body.split("::")
    parts: list[str] = []
    depth = 0
    cur = 0
    for m in _SPLIT.finditer(body):
        two = m.group()
        if two == "{{":
            depth += 1
        elif two == "}}":
            depth = max(0, depth - 1)
        elif depth == 0:
            parts.append(body[cur : m.start()])
            cur = m.end()
    parts.append(body[cur:])
    return parts


# -- HTML ------------------------------------------------------------------------

_SCRIPT = re.compile(r"<\s*script\b", re.IGNORECASE)
_TAG = re.compile(r"<[A-Za-z][^<>]*")
_ON_ATTR = re.compile(r"(?:^|[\s/\"'])on[a-z]{2,30}\s*=", re.IGNORECASE)
_JS_URL = re.compile(r"j\s*a\s*v\s*a\s*s\s*c\s*r\s*i\s*p\s*t\s*:", re.IGNORECASE)
_RISU_TRIGGER = re.compile(r"risu-trigger\s*=\s*[\"']?\s*([A-Za-z_][A-Za-z0-9_]*)", re.IGNORECASE)
_RISU_BTN = re.compile(r"risu-btn\s*=", re.IGNORECASE)
_URL_HOST = re.compile(r"https?://([A-Za-z0-9][A-Za-z0-9.\-]{0,252})", re.IGNORECASE)


@dataclass
class HtmlScan:
    """What :func:`scan_html` found in one text (lines of each kind)."""

    script_lines: list[int] = field(default_factory=list)
    handler_lines: list[int] = field(default_factory=list)
    js_url_lines: list[int] = field(default_factory=list)
    risu_triggers: list[tuple[str, int]] = field(default_factory=list)
    url_hosts: list[tuple[str, int]] = field(default_factory=list)


def scan_html(text: str) -> HtmlScan:
    out = HtmlScan()
    if not isinstance(text, str) or ("<" not in text and "://" not in text):
        return out
    lines = LineIndex(text)
    for m in _SCRIPT.finditer(text):
        out.script_lines.append(lines.line(m.start()))
        if len(out.script_lines) >= 100:
            break
    for m in _TAG.finditer(text):
        tag = m.group()
        if "on" in tag.lower() and _ON_ATTR.search(tag) and len(out.handler_lines) < 100:
            out.handler_lines.append(lines.line(m.start()))
        if "risu-trigger" in tag.lower():
            for tm in _RISU_TRIGGER.finditer(tag):
                out.risu_triggers.append((tm.group(1), lines.line(m.start())))
    for m in _JS_URL.finditer(text):
        out.js_url_lines.append(lines.line(m.start()))
        if len(out.js_url_lines) >= 100:
            break
    for m in _URL_HOST.finditer(text):
        out.url_hosts.append((m.group(1).lower().rstrip("."), lines.line(m.start())))
        if len(out.url_hosts) >= 1000:
            break
    return out
