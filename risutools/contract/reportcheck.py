"""A replay report read back before a digest check trusts it (MC203, and through MC203 the
promotion gate G6).

A ``replay:`` reference names a file by its SHA-256, so the file it names is the one
``replay run --update`` wrote.  Having that digest proves only that the bytes have not
changed since; it does not prove they are a report.  Before this check, a file with the
right digest was verified whatever it held: a line of text, a report cut short, or a report
that says ``failed`` with its ``report_sha256`` worked out again.  The report is now read as
the writer writes it: :func:`risutools.canonical.indented` of the report, keys sorted, one
space a level.  Every member and every item must read back as exactly those bytes, the head
and each item of its long lists must satisfy ``schemas/replay-report-v1.schema.json``,
``report_sha256`` must be the hash of the rest, the component must be the document's (a
report naming none is not its replay) and the simulation the one the document's capabilities
select (:mod:`risutools.settings.simulations`: a monitor run is no cutter's evidence), and
the summary's counts must be the counts of its lists, its fixture the one the document's
reference names (``replay:<name>``), and its summary's verdict, ``failed_invariants`` and
``warned_invariants`` those its own invariants give (each invariant's verdict from its
counts, the summary from :func:`risutools.checks.outcomes.summary_of`, which the writer
uses too): a summary edited to ``passed`` over a failed R5 is refused.  The report's own
verdict is returned to the caller; gate G6 requires ``passed``.

Bounded, read once in order: the file is at most :data:`MAX_REPORT_BYTES`, a line at most
:data:`MAX_LINE`, a member outside the long lists at most :data:`MAX_MEMBER_BYTES`, and an
item of a long list at most :data:`MAX_ITEM_BYTES`.  A long list (a member whose line ends in
``[``: the requests, the alerts) is read one item at a time and hashed as it goes.  Memory is
one item and the head; time is linear in the file's size.  The bytes read are hashed too,
and must have the digest asked for: a file changed after the store hashed it is not trusted.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import IO, Any

from risutools.canonical import canonical, indented
from risutools.checks.outcomes import summary_of, verdict_of
from risutools.jsonplaces import pointer_of
from risutools.resources import load_schema
from risutools.safeio import CHUNK, FileRefused, open_regular

try:
    import orjson
except ImportError:  # pragma: no cover - orjson is a dependency
    orjson = None  # type: ignore[assignment]

#: the largest report read (a report of a million requests is about 800 MB)
MAX_REPORT_BYTES = 1 << 30
#: the longest line of a report
MAX_LINE = 1 << 20
#: the largest member read whole (every member but a long list's items)
MAX_MEMBER_BYTES = 8 << 20
#: the largest item of a long list
MAX_ITEM_BYTES = 1 << 20
SCHEMA = "replay-report-v1.schema.json"
#: the items of a long list read, checked and hashed together
BATCH = 512
#: the long lists whose items are kept (the invariants), and how many at most
KEPT = ("invariants",)
MAX_KEPT = 64
#: what a report that is not as the writer writes it is told
NOT_WRITTEN = "not a replay report as `risutools replay run` writes it"


@dataclass(frozen=True)
class ReportRead:
    """What :func:`read_report` found: ``problem`` None when the file is a trusted report;
    ``verdict``: its summary's verdict (None when it is not)."""

    problem: str | None
    verdict: str | None = None
    #: a trusted report's head (every member but its long lists) and its invariants; None
    #: when not trusted
    head: dict[str, Any] | None = field(default=None, compare=False)


class _Bad(Exception):
    """The report is not trusted: why."""


@cache
def _validators() -> tuple[Any, dict[str, Any]]:
    """The schema's validator for the head (every long list empty) and one for the items
    of each list the schema declares."""
    import jsonschema_rs  # (here: only a report's check needs it)

    schema = load_schema(SCHEMA)
    items = {k: jsonschema_rs.Draft202012Validator({"type": "array", "items": v["items"]})
             for k, v in schema.get("properties", {}).items()
             if isinstance(v, dict) and v.get("type") == "array" and "items" in v}
    return jsonschema_rs.Draft202012Validator(schema), items


def _first_error(validator: Any, value: Any) -> str | None:
    """The first schema error of the report's head, at its JSON pointer."""
    for err in validator.iter_errors(value):
        return f"not a replay-report-v1: {pointer_of(err.instance_path) or '/'}: {err.message}"
    return None


class _Lines:
    """The file read in order, a line or a block at a time, each bounded, all hashed."""

    def __init__(self, f: IO[bytes]) -> None:
        self.f = f
        self.number = 0  # the lines taken
        self.digest = hashlib.sha256()
        self.data = b""
        self.at = 0
        self.eof = False

    def more(self) -> bool:
        """Read on (False at the end of the file); what was taken is let go."""
        if self.eof:
            return False
        chunk = self.f.read(CHUNK)
        self.eof = not chunk
        self.data = self.data[self.at:] + chunk
        self.at = 0
        return bool(chunk)

    def _find(self, what: bytes, bound: int) -> int:
        """Where ``what`` starts, from :attr:`at`, within ``bound`` bytes (-1: not there)."""
        searched = 0  # (bytes from ``at`` already searched)
        while True:
            hit = self.data.find(what, self.at + searched, self.at + bound + len(what))
            if hit >= 0 or len(self.data) - self.at > bound:
                return hit
            searched = max(0, len(self.data) - self.at - len(what) + 1)
            if not self.more():
                return -1

    def _take(self, end: int) -> bytes:
        out = self.data[self.at:end]
        self.at = end
        self.digest.update(out)
        self.number += out.count(b"\n")
        return out

    def next(self) -> bytes:
        """The next line (b"" at the end of the file)."""
        hit = self._find(b"\n", MAX_LINE)
        if hit >= 0:
            return self._take(hit + 1)
        if len(self.data) - self.at > MAX_LINE:
            raise _Bad(f"line {self.number + 1} is longer than {MAX_LINE} bytes: {NOT_WRITTEN}")
        return self._take(len(self.data))

    def through(self, closer: bytes, bound: int) -> bytes | None:
        """Up to the end of the first line that is ``closer`` then ``\n`` or ``,\n``
        (None: none within ``bound`` bytes)."""
        hit = self._find(b"\n" + closer, bound)
        if hit < 0:
            return None
        rel = hit + 1 + len(closer) - self.at  # (from ``at``: reading on moves the data)
        while len(self.data) - self.at < rel + 2 and self.more():
            pass
        end = self.at + rel
        tail = self.data[end:end + 2]
        if tail[:1] == b"\n":
            return self._take(end + 1)
        if tail == b",\n":
            return self._take(end + 2)
        return None


def _loads(text: bytes, where: str) -> Any:
    try:
        return orjson.loads(text) if orjson is not None else json.loads(text)
    except (ValueError, TypeError, RecursionError):
        raise _Bad(f"{where}: not JSON: {NOT_WRITTEN}") from None


#: a member's first line: one space, its key (a JSON string: a backslash takes the next
#: character), ``": "``; linear, on the report's own lines
_KEY = re.compile(rb' ("(?:[^"\\\n]|\\.)*"): ')


def _key_of(line: bytes, number: int) -> tuple[str, bytes]:
    """A member's key and what follows ``": "`` on its first line."""
    found = _KEY.match(line)
    key = _loads(found.group(1), f"line {number}") if found else None
    if not isinstance(key, str) or found is None:
        raise _Bad(f"line {number}: no member's key: {NOT_WRITTEN}")
    return key, line[found.end():]


def _block(lines: _Lines, first: bytes, indent: int, bound: int, where: str) -> bytes:
    """A value that starts on ``first`` (at ``indent`` spaces): that line alone, or up to
    the line at the same indent that closes it (each line within deeper is indented more:
    the first line that is the indent and the closing bracket is the value's end)."""
    opened = first.rstrip(b",\n")[-1:]
    if opened not in (b"{", b"["):
        return first
    rest = lines.through(b" " * indent + (b"}" if opened == b"{" else b"]"),
                         bound - len(first))
    if rest is None:
        raise _Bad(f"{where} is cut short or larger than {bound} bytes: {NOT_WRITTEN}")
    return first + rest


class _Reading:
    """One report read (see the module's text)."""

    def __init__(self, f: IO[bytes]) -> None:
        self.lines = _Lines(f)
        self.head: dict[str, Any] = {}
        self.counts: dict[str, int] = {}
        #: the items of :data:`KEPT` lists (the invariants: a report's verdict follows from
        #: them), at most :data:`MAX_KEPT`
        self.kept: dict[str, list[Any]] = {}
        self.hash = hashlib.sha256(b"{")
        self.hashed = 0  # members hashed

    def read(self) -> None:
        lines = self.lines
        if lines.next() != b"{\n":
            raise _Bad(f"line 1 is not '{{': {NOT_WRITTEN}")
        line, last = lines.next(), None
        while line != b"}\n":
            if not line.startswith(b' "'):
                raise _Bad(f"line {lines.number}: {NOT_WRITTEN}")
            key, rest = _key_of(line, lines.number)
            if last is not None and key <= last:
                raise _Bad(f"line {lines.number}: {key!r} out of order: {NOT_WRITTEN}")
            last = key
            more = self._list(key) if rest == b"[\n" else self._member(key, line, rest)
            line = lines.next()
            if more == (line == b"}\n"):  # (a comma, then the end; no comma, then more)
                raise _Bad(f"line {lines.number}: {NOT_WRITTEN}")
        if lines.at < len(lines.data) or lines.more():
            raise _Bad(f"line {lines.number}: more after the report's end: {NOT_WRITTEN}")
        self.hash.update(b"}")

    def _start(self, key: str) -> None:
        if key != "report_sha256":
            self.hash.update((b"," if self.hashed else b"") + canonical(key) + b":")

    def _member(self, key: str, first: bytes, rest: bytes) -> bool:
        """A member read whole (True: another follows); ``rest``: its first line after
        ``"key": ``."""
        text = _block(self.lines, first, 1, MAX_MEMBER_BYTES, f"member {key!r}")
        more = text.endswith(b",\n")
        value = _loads((rest + text[len(first):]).removesuffix(b"\n").removesuffix(b","),
                       f"member {key!r}")
        if (indented({key: value})[2:-3] + (b",\n" if more else b"\n")) != text:
            raise _Bad(f"member {key!r} is not written as the writer writes it: {NOT_WRITTEN}")
        self.head[key] = value
        if key != "report_sha256":
            self._start(key)
            self.hash.update(canonical(value))
            self.hashed += 1
        return more

    def _list(self, key: str) -> bool:
        """A long list read :data:`BATCH` items at a time (True: another member follows)."""
        lines = self.lines
        self._start(key)
        self.hash.update(b"[")
        n, size = 0, 0
        batch: list[bytes] = []
        while True:
            line = lines.next()
            if not line.startswith(b"  ") or line[2:3] in (b" ", b""):
                raise _Bad(f"line {lines.number}: {key!r}: {NOT_WRITTEN}")
            text = _block(lines, line, 2, MAX_ITEM_BYTES, f"{key}/{n + len(batch)}")
            batch.append(text)
            size += len(text)
            last = not text.endswith(b",\n")
            if last or len(batch) == BATCH or size > MAX_MEMBER_BYTES:
                self._batch(key, n, batch)
                n, batch, size = n + len(batch), [], 0
            if last:  # (no comma: the list closes next)
                line = lines.next()
                if line not in (b" ]\n", b" ],\n"):
                    raise _Bad(f"line {lines.number}: {key!r} not closed: {NOT_WRITTEN}")
                break
        self.hash.update(b"]")
        self.hashed += 1
        self.head[key] = []
        self.counts[key] = n
        return line.endswith(b",\n")

    def _batch(self, key: str, n: int, texts: list[bytes]) -> None:
        """Items ``n``... of list ``key`` (their texts, each with its line end): parsed,
        compared with the writer's bytes, checked against the schema, hashed."""
        text = b"".join(texts).removesuffix(b"\n").removesuffix(b",")
        where = f"{key}/{n}" if len(texts) == 1 else f"{key}/{n}-{n + len(texts) - 1}"
        items = _loads(b"[" + text + b"]", where)
        if not isinstance(items, list) or len(items) != len(texts):
            raise _Bad(f"{where}: {NOT_WRITTEN}")
        head = b"{\n " + canonical(key) + b": [\n"
        written = indented({key: items})
        if not written.startswith(head) or written[len(head):-len(b"\n ]\n}\n")] != text:
            raise _Bad(f"{where} is not written as the writer writes it: {NOT_WRITTEN}")
        check = _validators()[1].get(key)
        if check is not None:
            for err in check.iter_errors(items):
                path = list(err.instance_path)
                at = n + path[0] if path and isinstance(path[0], int) else n
                raise _Bad(f"not a replay-report-v1: {pointer_of([key, at, *path[1:]])}: "
                           f"{err.message}")
        self.hash.update((b"," if n else b"") + canonical(items)[1:-1])
        if key in KEPT:
            kept = self.kept.setdefault(key, [])
            kept += items
            if len(kept) > MAX_KEPT:
                raise _Bad(f"{key}: more than {MAX_KEPT} items: {NOT_WRITTEN}")


def read_report(path: str | Path, want_hex: str, component_id: str | None,
                fixture: str | None = None, *, simulation: str | None) -> ReportRead:
    """The report at ``path`` read (see the module's text); ``want_hex``: the digest its
    bytes must have; ``component_id``: the document's; ``fixture``: the fixture the
    document's reference names (``replay:<name>``; None: it names none); ``simulation``:
    the one the document's capabilities select
    (:func:`~risutools.settings.simulations.select_simulation`; None: none applies)."""
    try:
        f = open_regular(path, limit=MAX_REPORT_BYTES)
    except FileRefused as exc:
        return ReportRead(f"not read: {exc.why}")
    reading = _Reading(f)
    try:
        with f:
            reading.read()
    except _Bad as exc:
        return ReportRead(str(exc))
    except OSError as exc:
        return ReportRead(f"not read: {exc.strerror or exc}")
    if reading.lines.digest.hexdigest() != want_hex:
        return ReportRead("the file changed while it was read; run the check again")
    return _judged(reading, component_id, fixture, simulation)


def _judged(reading: _Reading, component_id: str | None, fixture: str | None,
            simulation: str | None) -> ReportRead:
    head = reading.head
    problem = _first_error(_validators()[0], head)
    if problem:
        return ReportRead(problem)
    declared = head["report_sha256"]
    actual = "sha256:" + reading.hash.hexdigest()
    if actual != declared:
        return ReportRead(f"report_sha256 {declared[:19]}… does not match its content "
                          f"({actual[:19]}…); the report was edited after it was written")
    problem = _not_its_replay(head, component_id, simulation)
    if problem:
        return ReportRead(problem)
    summary = head["summary"]
    for key in ("requests", "alerts"):
        if summary.get(key) != reading.counts.get(key, 0):
            return ReportRead(f"its summary counts {summary.get(key)!r} {key}, the report "
                              f"holds {reading.counts.get(key, 0)}: {NOT_WRITTEN}")
    name = head["fixture"]["name"]
    if fixture is None or name != fixture:
        named = f"replay:{fixture}" if fixture is not None else "no fixture (no 'replay:<name>')"
        return ReportRead(f"the report is of fixture {name!r}, the reference names {named}")
    problem = _unfounded(summary, reading.kept.get("invariants", []))
    if problem:
        return ReportRead(problem)
    return ReportRead(None, summary["verdict"],
                      {**head, "invariants": reading.kept.get("invariants", [])})


def _not_its_replay(head: dict[str, Any], component_id: str | None,
                    simulation: str | None) -> str | None:
    """Why the report is not a replay of this document (None: it is): another component,
    none (``replay monitor`` without a document), or another simulation than the one the
    document's capabilities select (a monitor run checks none of a cutter's invariants)."""
    rid = head.get("component_id")
    if component_id is not None and rid != component_id:
        return (f"the report is for {rid!r}, not {component_id!r}" if isinstance(rid, str)
                else f"the report names no component, not {component_id!r} (a replay "
                "without a document); run `risutools replay run DOC --update`")
    sim = head.get("simulation")
    if sim != simulation:
        want = (f"the {simulation} its capabilities select" if simulation is not None else
                "none: its capabilities.provides select no simulation")
        return (f"the report replays the {sim}, the document's replay is {want}; run "
                "`risutools replay run DOC --update`")
    return None


def _unfounded(summary: dict[str, Any], invariants: list[dict[str, Any]]) -> str | None:
    """Why the summary's verdict does not follow from the report's own invariants (each
    verdict from its counts, the summary from the verdicts and the severities:
    :func:`risutools.checks.outcomes.summary_of`), or None."""
    seen: set[str] = set()
    for inv in invariants:
        if inv["id"] in seen:
            return f"invariant {inv['id']} is listed twice: {NOT_WRITTEN}"
        seen.add(inv["id"])
        own = verdict_of(inv["requests_checked"], inv["failures"])
        if inv["verdict"] != own:
            return (f"invariant {inv['id']} says {inv['verdict']!r} over "
                    f"{inv['failures']} failure(s) in {inv['requests_checked']} request(s) "
                    f"checked ({own!r}): {NOT_WRITTEN}")
    due = summary_of(invariants)
    for key, value in due.items():
        if summary.get(key, [] if key == "warned_invariants" else None) != value:
            return (f"its summary says {key} {summary.get(key)!r}, its invariants say "
                    f"{value!r}: the verdict does not follow from the checks; {NOT_WRITTEN}")
    return None
