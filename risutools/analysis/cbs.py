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
#: blocks whose content RisuAI does not evaluate (parser.svelte.ts ``blockStartMatcher``:
#: "pure", "pure-display", "escape"): tags inside them are text, not tags.  RisuAI compares
#: the tag's text exactly (``{{#PURE}}``, ``{{#pure }}``, ``{{ #pure}}`` are no such block:
#: the tags inside them run)
PURE_BLOCKS = frozenset({"#pure", "#puredisplay", "#pure_display", "#escape"})


@dataclass(frozen=True)
class CbsTag:
    """One CBS tag ``{{name::args}}`` and the line it starts on."""

    name: str  # lower-case tag name: getvar, setvar, button, #if, ?, ...
    args: tuple[str, ...]  # raw arguments (may contain nested tags)
    line: int

    def literal_arg(self, i: int) -> str | None:
        """Argument ``i`` when it holds no nested tag, else None."""
        if i < len(self.args) and "{{" not in self.args[i]:
            return self.args[i]
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
    pure = 0  # the depth of blocks inside a pure block (0: outside)
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
            body = "".join(pieces)
            tag = _tag(body, lines.line(start))
            if pure:  # inside a block RisuAI does not evaluate: nested blocks counted
                if not stack:
                    if tag.name.startswith(("#", ":")):
                        pure += 1
                    elif tag.name.startswith("/") and not tag.name.startswith("//"):
                        pure -= 1
                continue
            if not stack and body in PURE_BLOCKS:  # (the tag's text as written, exactly)
                pure = 1
            out.tags.append(tag)
    out.unbalanced += len(stack)
    out.tags.sort(key=lambda t: t.line)
    return out


#: what stands for a nested tag in the text of the tag around it
NESTED = "{{\u2026}}"


def _tag(body: str, line: int) -> CbsTag:
    """A tag's name and arguments as RisuAI's ``matcher`` reads them (parser.svelte.ts): a
    calculation only after ``? `` (a space), the arguments split on ``::`` when the first
    ``:`` is one, else on ``:`` (``{{getvar:hp}}``), the name lower-cased without blanks,
    ``_`` and ``-`` (``{{Get_Var::hp}}`` is ``getvar``); blocks as before."""
    if body.startswith("? "):
        return CbsTag("?", (body[2:],), line)
    stripped = body.strip()
    if stripped.startswith(("#", "/", ":")):
        head, _, rest = stripped.partition(" ")
        head2, sep, rest2 = head.partition("::")
        if sep:
            return CbsTag(head2.lower(), tuple(rest2.split("::")), line)
        return CbsTag(head.lower(), (rest,) if rest else (), line)
    colon = body.find(":")
    parts = _split_top(body, "::" if body[colon + 1:colon + 2] == ":" else ":")
    return CbsTag(_NAME_DROPS.sub("", parts[0].lower()), tuple(parts[1:]), line)


def tag_of(body: str) -> CbsTag:
    """The tag whose text between its braces is ``body`` (as :func:`scan_cbs` reads it;
    line 0)."""
    return _tag(body, 0)


_SPLIT = {sep: re.compile(r"\{\{|\}\}|" + sep) for sep in ("::", ":")}
#: what RisuAI drops from a tag's name (``replace(/[\s_-]/g, '')``)
_NAME_DROPS = re.compile(r"[\s_-]+")


def _split_top(body: str, sep: str = "::") -> list[str]:
    """Split on ``sep`` outside nested ``{{ }}``."""
    if "{{" not in body:
        return body.split(sep)
    parts: list[str] = []
    depth = 0
    cur = 0
    for m in _SPLIT[sep].finditer(body):
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


#: RisuAI's display map (parser.svelte.ts ``risuUnescape``, run on a chat message's HTML
#: after its Markdown, before DOMPurify): the characters CBS's display escapes give
#: (``{{dec}}`` U+E9BE, ``{{decbo}}`` U+E9B8 ...) and ``{{#escape}}`` leaves, shown as these
DISPLAY_UNESCAPE = {0xE9B8: "{", 0xE9B9: "}", 0xE9BA: "(", 0xE9BB: ")", 0xE9BC: "&lt;",
                    0xE9BD: "&gt;", 0xE9BE: ":", 0xE9BF: ";"}
_DISPLAY_ESCAPED = re.compile("[\ue9b8-\ue9bf]")


def display_unescaped(text: str) -> str:
    """``text`` as a chat message shows it (:data:`DISPLAY_UNESCAPE`); its line breaks are
    those of ``text``."""
    return text.translate(DISPLAY_UNESCAPE) if _DISPLAY_ESCAPED.search(text) else text


def evaluated(text: str) -> str:
    """``text`` as RisuAI may run it when each of its tags gives nothing (a pattern:
    ``(a+)+{{blank}}$`` is ``(a+)+$``): :func:`strip_cbs`' text, ``text`` itself when it
    holds no tag."""
    return strip_cbs(text)[0] if "{{" in text else text


def strip_cbs(text: str, fill: str = "") -> tuple[str, list[int], list[int]]:
    """``text`` with every CBS tag removed (a nested tag with the tag around it; a ``}}``
    without its ``{{`` is kept, a ``{{`` never closed removes the rest), as a browser may
    see text whose tags evaluate to nothing: ``o{{blank}}nerror=`` -> ``onerror=``.

    Also returns, for each piece kept, where it starts in the result and in ``text`` (so a
    caller can map an offset back); one pass over the braces, like :func:`scan_cbs`.
    ``fill`` stands for each tag removed (``hp_{{user}}`` -> ``hp_*`` with ``"*"``)."""
    pieces: list[str] = []
    starts: list[int] = []
    origins: list[int] = []
    depth = 0
    keep_from = 0
    size = 0
    for m in _BRACES.finditer(text):
        if m.group() == "{{":
            if depth == 0:
                starts.append(size)
                origins.append(keep_from)
                pieces.append(text[keep_from : m.start()])
                size += m.start() - keep_from
            depth += 1
        elif depth:
            depth -= 1
            if depth == 0:
                keep_from = m.end()
                if fill:
                    pieces.append(fill)
                    size += len(fill)
    if depth == 0:
        starts.append(size)
        origins.append(keep_from)
        pieces.append(text[keep_from:])
    return "".join(pieces), starts, origins


