"""Markdown summary of a ``replay-report-v1`` (for a pull request)."""

from __future__ import annotations

import re
from collections.abc import Callable, Container, Iterable
from typing import Any

from risutools.printable import markdown_code, markdown_value

MAX_ROWS = 60
_NUMBER = re.compile(r"-?[0-9]+(?:\.[0-9]+)?(?:/[0-9]+)?")


def _cell(v: Any) -> str:
    """A value in a table cell: text (a component's, a fixture's) shown, never markup
    (:func:`risutools.printable.markdown_value`)."""
    if v is None or v == "-":
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, (int, float)) or _NUMBER.fullmatch(str(v)):
        return str(v)  # (a number, as written: nothing in it is markup)
    if isinstance(v, dict):
        v = ", ".join(f"{k}={_plain(x)}" for k, x in v.items())
    if isinstance(v, list):
        v = ", ".join(_plain(x) for x in v) or "none"
    return markdown_value(v)


def _plain(v: Any) -> str:
    return "-" if v is None else str(v)


def interesting(row: dict[str, Any]) -> bool:
    mon = row.get("monitor") or {}
    return bool(
        row.get("budget_dropped")
        or row.get("anchor") == "lost"
        or row.get("budget_unreachable")
        or mon.get("alert")
        or row.get("ops", {}).get("toggle") is not None
        or row.get("orphaned_tool_results")
    )


#: rows picked for a table, and how many rows qualified (:func:`pick_rows`)
Picked = tuple[list[dict[str, Any]], int]


class Picker:
    """:func:`pick_rows` fed one row at a time (``first``: the row's request is that of a
    first failure), so the rows can be picked as a replay makes them."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.first: list[dict[str, Any]] = []
        self.rest: list[dict[str, Any]] = []
        self.total = 0
        self._ordered = True  # ``rest`` is in request order (as a replay makes its rows)

    def add(self, r: dict[str, Any], first: bool, worth: bool | None = None) -> None:
        """``worth``: :func:`interesting` of the row, when the caller has it."""
        if first:
            self.first.append(r)
        elif worth if worth is not None else interesting(r):
            rest = self.rest
            if rest:
                last: int = rest[-1]["request"]
                if r["request"] < last:
                    self._ordered = False
                elif self._ordered and len(rest) >= self.cap:
                    # the earliest cap are kept, and this one comes after them (after
                    # those of its request too: the sort is stable): counted, not kept
                    self.total += 1
                    return
            rest.append(r)
            if len(rest) >= 2 * self.cap:  # the earliest cap stay
                rest.sort(key=_request)
                self.total += len(rest) - self.cap
                del rest[self.cap:]

    def qualified(self) -> int:
        """How many rows qualified (:meth:`picked`'s count, nothing sorted)."""
        return self.total + len(self.first) + len(self.rest)

    def picked(self) -> Picked:
        """The rows picked, in request order, and how many rows qualified."""
        total = self.qualified()
        chosen = sorted(self.first, key=_request) + sorted(self.rest, key=_request)
        return sorted(chosen[:self.cap], key=_request), total


def pick_rows(rows: Iterable[dict[str, Any]], failing: Container[int], cap: int) -> Picked:
    """The rows of a first failure (a request in ``failing``), then the :func:`interesting`
    ones, at most ``cap`` in all, in request order; and how many rows are either.  One pass,
    keeping at most ``2 * cap`` rows beside those of a first failure (a few: one an
    invariant at most)."""
    picker = Picker(cap)
    for r in rows:
        picker.add(r, r["request"] in failing)
    return picker.picked()


def _request(row: dict[str, Any]) -> int:
    n: int = row["request"]
    return n


def verdict_text(inv: dict[str, Any], warned: Iterable[str] = ()) -> str:
    """``passed (m)``, ``failed (n of m)``, ``warning (n of m)`` for an invariant of warning
    severity that failed (in ``warned``), or ``not checked (no request applied)``."""
    if inv["verdict"] == "failed":
        word = "warning" if inv["id"] in warned else "failed"
        return f"{word} ({inv['failures']} of {inv['requests_checked']})"
    if inv["verdict"] == "not-checked":
        return "not checked (no request applied)"
    return "passed"


def _req(row: dict[str, Any], failing: dict[int, str]) -> str:
    """The request number, with the invariant whose first failure it is."""
    n = row["request"]
    return f"**{n}** (first failure of {failing[n]})" if n in failing else str(n)


def render_markdown(report: dict[str, Any], picked: Picked | None = None) -> str:
    """The heading and verdict, the summary, the invariants, the configuration, and the
    requests worth a look (``picked``: those rows as :func:`pick_rows` gives them for the
    report, picked while the replay ran; None: picked here, from the report's rows)."""
    out = _heading(report)
    out += _table("Summary", ("measure", "value"),
                  [(key, _cell(report["summary"][key])) for key in sorted(report["summary"])])
    out += _invariants(report["invariants"], report["summary"].get("warned_invariants", []))
    out += _table("Configuration", ("key", "value"),
                  [(key, _cell(report["config"][key])) for key in sorted(report["config"])])
    out += _requests(report, picked)
    out.append("")
    return "\n".join(out)


def _heading(report: dict[str, Any]) -> list[str]:
    s = report["summary"]
    comp = report.get("component") or {}
    fx = report["fixture"]
    title = comp.get("component_id") or "(no component)"
    out = [f"# Replay of {markdown_code(title)} on {markdown_code(fx['name'])}", "",
           f"**Verdict: {s['verdict']}** · simulation {markdown_code(report['simulation'])} · "
           f"{s['requests']} request(s)", ""]
    if s["verdict"] == "not-checked":
        out += ["No invariant applied to any request: nothing was verified, so this replay "
                "is not a pass (and `--update` does not record it).", ""]
    out.append(f"- fixture: {markdown_code(fx['file'])} ({fx['sha256']})")
    if comp:
        out.append(f"- component document: {comp.get('doc_sha256')}")
    out += [f"- report: {report['report_sha256']}", ""]
    return out


def _table(title: str, header: tuple[str, ...], rows: list[tuple[Any, ...]]) -> list[str]:
    """A section: ``## title``, then a Markdown table (cells already escaped)."""
    out = [f"## {title}", "", "| " + " | ".join(header) + " |",
           "|" + " --- |" * len(header)]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    out.append("")
    return out


def _invariants(invariants: list[dict[str, Any]], warned: list[str]) -> list[str]:
    if not invariants:
        return []
    rows = []
    for inv in invariants:
        first = inv["first_failure"]
        ff = f"{first['request']}: {first['detail']}" if first else "-"
        rows.append((inv["id"], verdict_text(inv, warned), inv["requests_checked"], _cell(ff),
                     _cell(inv["text"])))
    return _table("Invariants", ("id", "verdict", "requests checked", "first failing request",
                                 "invariant"), rows)


def _first_failures(invariants: list[dict[str, Any]]) -> dict[int, str]:
    """Request number -> the ids of the invariants whose first failure it is."""
    failing: dict[int, str] = {}
    for inv in invariants:
        if inv["first_failure"]:
            n = inv["first_failure"]["request"]
            failing[n] = f"{failing[n]}, {inv['id']}" if n in failing else inv["id"]
    return failing


def _requests(report: dict[str, Any], picked: Picked | None) -> list[str]:
    """The requests with a first failure first, then the interesting ones, at most
    :data:`MAX_ROWS`, in request order."""
    failing = _first_failures(report["invariants"])
    rows, total = (picked if picked is not None
                   else pick_rows(report["requests"], failing, MAX_ROWS))
    out = ["## Requests with a first failure, a cut, an anchor loss, a toggle, an alert or an "
           "orphaned tool result", ""]
    if not rows:
        return [*out, "None."]
    cell = _seen_cells()
    if report["simulation"] == "context-cutter":
        out += ["| request | messages in/out | tokens in/out | dropped (continuity+budget) "
                "| anchor | unreachable | level | alert |",
                "| --- | --- | --- | --- | --- | --- | --- | --- |"]
        out += [_cutter_row(r, failing, cell) for r in rows]
    else:
        out += ["| request | messages | tokens | used % | level | alert |",
                "| --- | --- | --- | --- | --- | --- |"]
        out += [_monitor_row(r, failing, cell) for r in rows]
    if total > MAX_ROWS:
        out += ["", f"... and {total - MAX_ROWS} more (see the JSON report)."]
    return out


def _seen_cells() -> Callable[[Any], str]:
    """:func:`_cell`, a string's spelled once (a column's few words: a level, a reason)."""
    seen: dict[str, str] = {}

    def cell(v: Any) -> str:
        if type(v) is not str:
            return _cell(v)
        out = seen.get(v)
        if out is None:
            out = seen[v] = _cell(v)
        return out
    return cell


def _cutter_row(r: dict[str, Any], failing: dict[int, str],
                cell: Callable[[Any], str] = _cell) -> str:
    mon = r["monitor"]
    return (f"| {_req(r, failing)} | {r['messages_in']}/{r['messages_out']} "
            f"| {r['tokens_in']}/{r['tokens_out']} | {r['dropped']} "
            f"({r['continuity_dropped']}+{r['budget_dropped']}) | {r['anchor']}"
            f"{' (fallback)' if r['fallback'] else ''} | {cell(r['budget_unreachable'])} "
            f"| {cell(mon['level'])} | {cell(mon['alert_reason'])} |")


def _monitor_row(r: dict[str, Any], failing: dict[int, str],
                 cell: Callable[[Any], str] = _cell) -> str:
    mon = r["monitor"]
    return (f"| {_req(r, failing)} | {r['messages_in']} | {r['tokens_in']} "
            f"| {cell(mon['used_pct'])} | {cell(mon['level'] or mon['metrics'])} "
            f"| {cell(mon['alert_reason'])} |")
