"""Text and Markdown renderings of ``risutools review`` (the JSON is the data itself)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from risutools.canonical import canonical
from risutools.printable import (
    json_bytes,
    json_bytes_text,
    json_text,
    markdown_value,
    text_value,
)
from risutools.report._common import joined, text_pieces
from risutools.report.color import painter
from risutools.report.review_sections import (
    board_lines,
    interaction_lines,
    lineage_lines,
    markdown_sections,
    risk_lines,
)
from risutools.rowspool import Rows

if TYPE_CHECKING:
    from risutools.catalog.review import Review


#: every value from the catalog (ids, statuses, files, messages, reasons) goes through the
#: one escaping of its output kind (:mod:`risutools.printable`): text for the text report,
#: Markdown for the Markdown one; the JSON is escaped whole
_clean = text_value


class ReviewProgress:
    """A rich progress bar on stderr (files read); a no-op off a terminal."""

    def __init__(self, enabled: bool = True) -> None:
        import sys

        self.enabled = enabled and sys.stderr.isatty()
        self._progress: Any = None
        self._task: Any = None

    def __enter__(self) -> ReviewProgress:
        if self.enabled:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

            self._progress = Progress(TextColumn("review"), BarColumn(), MofNCompleteColumn(),
                                      TextColumn("files"), console=Console(stderr=True),
                                      transient=True)
            self._progress.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.__exit__(None, None, None)

    def update(self, done: int, total: int) -> None:
        if self._progress is None:
            return
        if self._task is None:
            self._task = self._progress.add_task("review", total=total)
        self._progress.update(self._task, completed=done)


def _counts_line(d: dict[str, Any]) -> str:
    return ", ".join(f"{_clean(k)} {v}" for k, v in d.items()) or "none"


def render_review_json(rv: Review) -> str:
    """The review as one JSON text (:func:`review_json_pieces` joined)."""
    return joined(review_json_pieces(rv))


def review_json_pieces(rv: Review) -> Iterator[str | bytes]:
    """Compact, keys sorted (``python -m json.tool`` or jq pretty-print it), in pieces: each
    top-level value, a long list of rows (:class:`~risutools.rowspool.Rows`) a block at a
    time, and any other list of two or more items an item at a time (:func:`_list_pieces`),
    so the whole text is never in memory.  Each piece is the
    canonical form's bytes (orjson when it spells the values as ``json`` does, else json's C
    encoder), or ``json.dumps`` itself for a value the canonical form refuses (a float that
    is not finite): joined, the same text as the whole value's.  A block of rows whose canonical
    bytes need no escape (:func:`~risutools.printable.json_bytes`) is given as those bytes
    (UTF-8: written as they are, never decoded)."""
    yield from _object_pieces(rv.data)
    yield "\n"


#: a list longer than this many items is written an item at a time (:func:`_list_pieces`):
#: any list of two or more (a few rows can be megabytes, each naming thousands of components)
LIST_LONG = 1


def _object_pieces(obj: dict[str, Any]) -> Iterator[str | bytes]:
    """An object of the report, keys sorted: a row spool a block at a time, a long list in
    pieces, an object that holds either (the lineage and interactions sections) the same
    way, any other value whole."""
    yield "{"
    for n, key in enumerate(sorted(obj)):
        value = obj[key]
        yield ("," if n else "") + _compact(key) + ":"
        if isinstance(value, Rows):
            yield from _rows_pieces(value)
        elif _long(value):
            yield from _list_pieces(value)
        elif isinstance(value, dict) and any(isinstance(v, Rows) or _long(v)
                                             for v in value.values()):
            yield from _object_pieces(value)
        else:
            yield _compact(value)
    yield "}"


def _long(value: Any) -> bool:
    return isinstance(value, list) and len(value) > LIST_LONG


def _list_pieces(items: list[Any]) -> Iterator[str | bytes]:
    """A long list spelled an item at a time, as the whole list spells each (the same text,
    never the whole of it at once: a catalog's duplicates run to megabytes, and a few
    relations can, each naming thousands of components; the writer gathers the pieces)."""
    yield "["
    for n, item in enumerate(items):
        try:
            text: str | bytes = json_bytes(canonical(item))
        except ValueError:  # (json's spelling)
            text = _compact(item)
        if n:
            yield b"," if isinstance(text, bytes) else ","
        yield text
    yield "]"


def _rows_pieces(rows: Rows) -> Iterator[str | bytes]:
    yield "["
    first = True
    for block in rows.canonical_blocks():
        if block:
            text = json_bytes(block) if isinstance(block, bytes) else _compact(block)
            if isinstance(text, bytes):
                yield (b"" if first else b",") + text[1:-1]
            else:
                yield ("" if first else ",") + text[1:-1]
            first = False
    yield "]"


def _compact(value: Any) -> str:
    try:
        data = canonical(value)
    except ValueError:
        text = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
        return json_text(text)
    return json_bytes_text(data)


def render_review_text(rv: Review, color: bool = False) -> str:
    """The text report whole (:func:`review_text_pieces` joined)."""
    return "".join(review_text_pieces(rv, color))


def review_text_pieces(rv: Review, color: bool = False) -> Iterator[str]:
    """The text report in pieces of lines, written as they are made: what a section reads
    of a long list (the documents, the board, the lineages) is read once, in order, and
    only what it shows is kept (memory: bench/RESULTS.md, round 33)."""
    return text_pieces(_text_lines(rv, color), safe=True)  # (a finding's line opens with its file)


def _text_lines(rv: Review, color: bool) -> Iterator[str]:
    paint = painter(color)
    d = rv.data
    c = d["counts"]
    yield from (f"review of {_clean(d['catalog'])}: {c['documents']} document(s); "
                f"{c['errors']} error(s), "
                f"{c['warnings']} warning(s)",
                f"  review status: {_counts_line(c['review_status'])}",
                f"  runtime status: {_counts_line(c['runtime_status'])}",
                f"  approvals: {_counts_line(c['approvals'])}; signatures: "
                f"{_counts_line(c['signatures'])}",
                f"  digests: {_counts_line(c['verifications'])}",
                f"  transition log: {c.get('log_entries', 0)} entries, "
                f"{len(d['chain'])} problem(s)",
                f"  ready to move on: {c['ready']} of {len(d['board'])} on the board")
    shown = rv.serious()
    if shown:
        yield from ("", "findings:")
        for f in shown:
            where = _clean(f.file or "") + (f":{f.line}" if f.line else "")
            ptr = f" {_clean(f.pointer)}" if f.pointer else ""
            yield (f"  {where}  {paint(f.severity, f'{f.severity:<7}')} "
                   f"{paint('bold', f.rule)}{ptr}  {_clean(f.message)}")
    del shown
    for key, title in (("duplicates", "duplicate sources"), ("id_collisions", "id collisions")):
        if d[key]:
            yield from ("", f"{title}:")
            for g in d[key]:
                head = _clean(g.get("sha256") or g.get("component_id"))
                yield f"  {head}: {', '.join(_clean(x) for x in g['files'])}"
    yield from interaction_lines(d)
    yield from lineage_lines(d)
    yield from risk_lines(d)
    yield from board_lines(d)


_MARK = {"pass": "pass", "fail": "**FAIL**", "n/a": "n/a"}


_md = markdown_value


def render_review_markdown(rv: Review) -> str:
    """The Markdown report whole (:func:`review_markdown_pieces` joined)."""
    return "".join(review_markdown_pieces(rv))


def review_markdown_pieces(rv: Review) -> Iterator[str]:
    """The Markdown report in pieces of lines, written as they are made (as
    :func:`review_text_pieces`)."""
    return text_pieces(_markdown_lines(rv))


def _markdown_lines(rv: Review) -> Iterator[str]:
    d = rv.data
    c = d["counts"]
    yield from (f"# Catalog review: {_md(d['catalog'])}", "",
                f"{c['documents']} document(s), **{c['errors']} error(s)**, {c['warnings']} "
                "warning(s).", "",
                "| count | values |", "| --- | --- |",
                f"| review status | {_md(_counts_line(c['review_status']))} |",
                f"| runtime status | {_md(_counts_line(c['runtime_status']))} |",
                f"| approvals | {_md(_counts_line(c['approvals']))} |",
                f"| signatures | {_md(_counts_line(c['signatures']))} |",
                f"| digests | {_md(_counts_line(c['verifications']))} |",
                f"| transition log | {c.get('log_entries', 0)} entries, {len(d['chain'])} "
                "problem(s) |", "",
                "## Promotion board", "")
    if d["board"]:
        yield from ("| component | step | state | gates |", "| --- | --- | --- | --- |")
        for b in d["board"]:
            gates = "<br>".join(f"{_MARK[g['verdict']]} {g['gate']}: {_md(g['reason'])}"
                                for g in b["gates"])
            state = "ready" if b["ready"] else "blocked"
            yield (f"| {_md(b['component_id'])} | {_md(b['from'])} → {b['to']} | {state} | "
                   f"{gates} |")
    else:
        yield "No candidate or pending component."
    yield from ("", "## Findings", "")
    shown = rv.serious()
    if shown:
        yield from ("| file | line | severity | rule | pointer | message |",
                    "| --- | --- | --- | --- | --- | --- |")
        yield from (f"| {_md(f.file or '')} | {f.line or ''} | {f.severity} | {f.rule} | "
                    f"{_md(f.pointer)} | {_md(f.message)} |" for f in shown)
    else:
        yield "None."
    del shown
    for key, title in (("graph", "Capability graph"), ("duplicates", "Duplicate sources"),
                       ("id_collisions", "Id collisions"), ("chain", "Transition log")):
        yield from ("", f"## {title}", "")
        if not d[key]:
            yield "None."
        for g in d[key]:
            yield f"- {_md(g.get('message') or ', '.join(g.get('files', [])))}"
    yield from markdown_sections(d, _md)
