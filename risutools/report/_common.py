"""Helpers shared by the findings renderers (text, concise, json, github, sarif, junit)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from risutools.printable import display, no_commands

if TYPE_CHECKING:
    from risutools.contract.validate import Result


def one_line(text: str) -> str:
    """``text`` on one line: line breaks, other control characters and bidi/format
    characters escaped; spaces of every script (U+3000 ...) kept as they are."""
    return display(text)


def summary_line(result: Result) -> str:
    c = result.counts()
    unit = "module" if result.command == "analyze" else "document"
    parts = [
        f"{c['errors']} error{'s' if c['errors'] != 1 else ''}",
        f"{c['warnings']} warning{'s' if c['warnings'] != 1 else ''}",
        f"{c['documents']} {unit}{'s' if c['documents'] != 1 else ''}",
        f"{c['files']} file{'s' if c['files'] != 1 else ''}",
    ]
    line = ", ".join(parts)
    if result.skipped:
        line += f" ({len(result.skipped)} non-document file(s) skipped)"
    if result.same:
        more = f" and {len(result.same) - 1} more" if len(result.same) > 1 else ""
        line += (f" ({len(result.same)} link(s) to a file already read, read once as that "
                 f"file: {one_line(result.same[0])}{more})")
    if result.command == "verify":
        v = result.verifications
        ok = sum(1 for x in v if x.status == "verified")
        bad = sum(1 for x in v if x.status == "mismatch")
        away = sum(1 for x in v if x.status == "not_at_hand")
        line += f"; digests: {ok} verified, {bad} mismatched, {away} not at hand"
    return line + result.verdict()[1]


#: a piece of a report written line by line (text, Markdown, HTML, concise, GitHub) holds
#: at most this many lines, or the line that takes it past this many characters (the
#: report written as it is made)
PIECE_LINES, PIECE_CHARS = 1024, 1 << 20


def text_pieces(lines: Iterable[str], safe: bool = False) -> Iterator[str]:
    """``lines`` as pieces of whole lines, each ended by a line break: joined, the text
    ``"\n".join(lines) + "\n"``; ``safe``: each piece through :func:`no_commands`, which
    reads a line at a time (so the same as the whole text through it)."""
    for piece in line_pieces(lines):  # (text lines: text pieces)
        text = piece if isinstance(piece, str) else piece.decode("utf-8")
        yield no_commands(text) if safe else text


def line_pieces(lines: Iterable[str | bytes], *, none: str = "\n"
                ) -> Iterator[str | bytes]:
    """Each of ``lines`` followed by a line break, gathered into pieces of at most
    :data:`PIECE_LINES` lines or :data:`PIECE_CHARS` characters (one longer line alone); a
    ``bytes`` item is lines already ended by their breaks (UTF-8), given as it is.  No line
    at all gives ``none`` (a report's one line break; ``""``: nothing)."""
    batch: list[str] = []
    size, seen = 0, False
    for line in lines:
        seen = True
        if isinstance(line, bytes):
            if batch:
                yield "".join(batch)
                batch, size = [], 0
            yield line
            continue
        batch.append(line)
        batch.append("\n")
        size += len(line) + 1
        if len(batch) >= 2 * PIECE_LINES or size >= PIECE_CHARS:
            yield "".join(batch)
            batch, size = [], 0
    if batch:
        yield "".join(batch)
    elif not seen and none:  # (no line at all: the one line break "\n".join adds)
        yield none


def joined(pieces: Iterable[str | bytes]) -> str:
    """A report's pieces (text, or UTF-8 bytes) as one text."""
    return "".join(p if isinstance(p, str) else p.decode("utf-8") for p in pieces)
