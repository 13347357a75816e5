"""The review's own formats (text, Markdown, HTML) written as they are made: what a section
reads of a long list (the documents, the board, the lineages) is read in order and not
held, so a review of 50,000 documents renders in the memory its JSON does (bench/RESULTS.md,
round 33: 506 MB text, 849 MB Markdown, 1.67 GB HTML before).  Each section's new code is
checked against the code it replaced (kept here as the reference), on generated rows."""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from harness import ROOT, run_cli, traced_peak

from risutools.catalog.catalog import Catalog
from risutools.catalog.review import Review, review_catalog
from risutools.printable import no_commands
from risutools.report import (
    _common,
    review_html,
    review_html_sections,
    review_sections,
    review_text,
)
from risutools.report.review_sections import MAX_ROWS, board_lines, one_line, risk_line
from risutools.rowspool import Rows

FORMATS = {
    "text": (review_text.render_review_text, review_text.review_text_pieces),
    "markdown": (review_text.render_review_markdown,
                 lambda rv, color=False: review_text.review_markdown_pieces(rv)),
    "html": (review_html.render_review_html,
             lambda rv, color=False: review_html.review_html_pieces(rv)),
}


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cat = tmp_path_factory.mktemp("pieces") / "catalog"
    for src in ("interactions", "interactions-repost", "sources"):
        assert run_cli("ingest", ROOT / "fixtures" / src, "-o", cat, "-q").returncode == 0
    return cat


class Counted(Sequence[dict[str, Any]]):
    """A long list as the review keeps it (a row spool), that counts the passes over it
    and refuses to be indexed (a slice of a spool reads the whole of it)."""

    def __init__(self, rows: list[dict[str, Any]]) -> None:
        self.rows, self.passes = rows, 0

    def __iter__(self) -> Iterator[dict[str, Any]]:
        self.passes += 1
        for row in self.rows:
            yield dict(row)  # (a spool reads each row back new)

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, i: Any) -> Any:
        raise AssertionError("a long list indexed")


def _counted(rv: Review) -> dict[str, Counted]:
    d = rv.data
    lists = {"documents": Counted(list(d["documents"])), "board": Counted(list(d["board"])),
             "lineages": Counted(list(d["lineage"]["lineages"]))}
    d["documents"], d["board"] = lists["documents"], lists["board"]
    d["lineage"] = {**d["lineage"], "lineages": lists["lineages"]}
    return lists


@pytest.mark.parametrize("fmt", FORMATS)
def test_each_long_list_is_read_in_order_a_few_times_never_indexed(catalog: Path,
                                                                   fmt: str) -> None:
    whole, pieces = FORMATS[fmt]
    rv = review_catalog(Catalog.open(catalog), jobs=1)
    lists = _counted(rv)
    assert lists["documents"].rows and lists["board"].rows and lists["lineages"].rows
    text = whole(rv)
    before = {k: v.passes for k, v in lists.items()}
    got = list(pieces(rv))
    assert "".join(p if isinstance(p, str) else p.decode() for p in got) == text
    assert all((p if isinstance(p, str) else p.decode()).endswith("\n") for p in got)
    passes = {k: v.passes - before[k] for k, v in lists.items()}
    # the HTML page reads the documents five times (decisions, findings, the board's titles,
    # the table's filters, its rows) and the board twice; the others once each at most
    most = {"text": (1, 1, 1), "markdown": (1, 1, 1), "html": (5, 2, 1)}[fmt]
    assert (passes["documents"], passes["board"], passes["lineages"]) <= most, passes
    assert all(n <= m for n, m in zip(passes.values(), most, strict=True)), passes


def _many(rv: Review, n: int) -> None:
    """``n`` documents and board rows (copies of the review's first, each a few findings
    and gates), in row spools, in place of the review's own."""
    d = rv.data
    doc0, row0 = next(iter(d["documents"])), next(iter(d["board"]))
    docs, board = Rows(), Rows()
    for i in range(n):
        cid = f"m.many.{i:05d}"
        docs.append({**doc0, "component_id": cid, "file": f"{cid}.json",
                     "findings": [{"rule": "MC600", "severity": "warning",
                                   "message": f"{i} {k} " + "x" * 200, "pointer": "/payload"}
                                  for k in range(3)],
                     "risk": {**(doc0.get("risk") or {}), "title": f"t{i}",
                              "hosts": [f"h{i}.example"]}})
        board.append({**row0, "component_id": cid, "file": f"{cid}.json",
                      "gates": [{"gate": g, "verdict": "fail", "reason": f"{i} " + "y" * 200}
                                for g in ("approval", "replay", "contract")]})
    d["documents"], d["board"] = docs, board


@pytest.mark.parametrize("fmt", FORMATS)
def test_rendering_holds_a_piece_not_the_lists(catalog: Path, fmt: str) -> None:
    """6,000 documents and board rows: the pieces, taken one at a time and let go, keep
    the traced peak at a fraction of what the two lists take read back whole (the code
    before held every document row for its risk section, every board row for its groups
    or its order, and the whole text)."""
    _whole, pieces = FORMATS[fmt]
    rv = review_catalog(Catalog.open(catalog), jobs=1)
    _many(rv, 6000)
    d = rv.data
    held = traced_peak(lambda: (list(d["documents"]), list(d["board"])))
    written = [0]

    def render() -> None:
        for p in pieces(rv):
            written[0] += len(p)

    peak = traced_peak(render)
    assert held > 20_000_000, held  # (the lists are large: the test measures something)
    assert written[0] > 0
    assert peak < held / 4, (fmt, peak, held, written[0])


# --------------------------------------------------------------------------- references
# The code each section had before it read its list once (kept as it was).


def _ref_risk_lines(d: dict[str, Any]) -> list[str]:
    rows = [(doc, risk_line(doc["risk"])) for doc in d["documents"] if doc.get("risk")]
    shown = [(doc, line) for doc, line in rows if line]
    if not rows:
        return []
    out = ["", f"risk ({len(shown)} of {len(d['documents'])} component(s)):"]
    for doc, line in shown[:MAX_ROWS * 5]:
        out.append(f"  {one_line(doc['component_id'])} \"{one_line(doc['risk']['title'])}\": "
                   f"{line}")
    if len(shown) > MAX_ROWS * 5:
        out.append(f"  ... and {len(shown) - MAX_ROWS * 5} more (-f json lists them all)")
    return out


def _ref_board_lines(d: dict[str, Any]) -> list[str]:
    board = d["board"]
    out = ["", f"promotion board ({len(board)}; {d['counts']['ready']} ready):"]
    if not board:
        return [*out, "  (no candidate or pending component)"]
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for b in board:
        groups.setdefault(review_sections._board_key(b), []).append(b)
    for rows in sorted(groups.values(), key=lambda g: (g[0]["ready"], -len(g),
                                                       g[0]["component_id"])):
        b = rows[0]
        state = "READY" if b["ready"] else f"blocked by {', '.join(b['blocked_by'])}"
        if len(rows) == 1:
            out.append(f"  {one_line(b['component_id'])}  {b['from']} -> {b['to']}  {state}")
        else:
            names = ", ".join(one_line(r["component_id"]) for r in rows[:8])
            more = f" and {len(rows) - 8} more" if len(rows) > 8 else ""
            out.append(f"  {len(rows)} components {b['from']} -> {b['to']}  {state}: "
                       f"{names}{more}")
        for g in b["gates"]:
            if g["verdict"] == "fail":
                reason = str(g["reason"])
                if len(rows) > 1:
                    reason = review_sections._BASE.sub(" for each one's base", reason.replace(
                        b["component_id"], "<component>"))
                out.append(f"      FAIL {g['gate']}: {one_line(reason)}")
        if b.get("path"):
            out.append(f"      path to approved: {review_sections.path_line(b)}")
    return out


def _ref_findings_html(d: dict[str, Any]) -> list[str]:
    _e = review_html_sections._e
    groups: dict[tuple[str, str], list[str]] = {}
    for doc in d["documents"]:
        for f in doc["findings"]:
            groups.setdefault((f["rule"], f["severity"]), []).append(f["message"])
    for f in d["file_findings"]:
        groups.setdefault((f["rule"], f["severity"]), []).append(f["message"])
    order = {"error": 0, "warning": 1, "info": 2}
    keys = sorted(groups, key=lambda k: (order.get(k[1], 3), -len(groups[k]), k[0]))
    out = [f'<h2 id="findings-h">Findings by rule ({len(keys)} rules, '
           f"{sum(len(v) for v in groups.values())} findings)</h2>",
           '<table id="findings"><thead><tr><th>rule</th><th>severity</th><th>count</th>'
           "<th>message</th></tr></thead><tbody>"]
    for rule, sev in keys:
        msgs = groups[(rule, sev)]
        same = len(set(msgs)) == 1
        text = msgs[0] if same else f"{len(set(msgs))} different messages, e.g. {msgs[0]}"
        out.append(f'<tr class="{_e(sev)}"><td>{_e(rule)}</td><td>{_e(sev)}</td>'
                   f"<td>{len(msgs)}</td><td>{_e(text)}</td></tr>")
    out.append("</tbody></table>")
    return out


# --------------------------------------------------------------------------- generated rows

_GATES = [*review_html_sections.BLOCK_ORDER, "other"]


def _board(rng: random.Random, n: int, ordered: bool) -> list[dict[str, Any]]:
    rows = []
    for i in range(n):
        blocked = rng.sample(_GATES, rng.randint(0, 3))
        cid = f"m.{rng.randint(0, n // 3):04d}"  # (ids repeat: ties keep their order)
        rows.append({"component_id": cid, "file": f"f{i}.json", "from": "candidate",
                     "to": "approved", "ready": not blocked, "blocked_by": blocked,
                     "gates": [{"gate": g, "verdict": "fail",
                                "reason": f"{g} of {cid} for base sha256:{'a' * 8}…"
                                if i % 2 else f"no record ({i % 3})"} for g in blocked]
                     + [{"gate": "history", "verdict": "pass", "reason": "ok"}],
                     "path": [{"part": "approval", "state": "missing", "detail": str(i % 4)}]
                     if i % 5 else []})
    if ordered:
        rows.sort(key=lambda b: b["component_id"])
    return rows


def _documents(rng: random.Random, n: int) -> list[dict[str, Any]]:
    docs = []
    for i in range(n):
        risk = None if i % 7 == 0 else {
            "title": f"t{i}", "hosts": [f"h{i % 3}"] if i % 2 else [],
            "low_level_access": i % 11 == 0, "privileged_apis": [], "dynamic_loading": [],
            "analysis_findings": [], "analysis_infos": {}, "coverage": []}
        docs.append({"component_id": f"m.{i:04d}", "risk": risk,
                     "findings": [{"rule": rng.choice(["MC600", "MC401", "MC100"]),
                                   "severity": rng.choice(["error", "warning", "info"]),
                                   "message": rng.choice(["a", "b", f"c{i % 5}"])}
                                  for _ in range(rng.randint(0, 3))]})
    return docs


@pytest.mark.parametrize("seed", range(12))
def test_sections_read_once_are_the_sections_they_replaced(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.choice([0, 1, 5, 30, 250, 600])
    for ordered in (True, False):
        board = _board(rng, n, ordered)
        d = {"documents": _documents(rng, n), "board": board,
             "counts": {"ready": sum(b["ready"] for b in board)},
             "file_findings": [{"rule": "RV301", "severity": "error", "message": "x"}] * (seed % 3)}
        assert review_sections.risk_lines(d) == _ref_risk_lines(d)
        assert board_lines(d) == _ref_board_lines(d)
        assert review_html_sections.findings_html(d) == _ref_findings_html(d)
        titles = {doc["component_id"]: doc["risk"]["title"] for doc in d["documents"]
                  if doc.get("risk")}
        got = b"".join(review_html._in_board_order(board, titles)).decode()
        want = "".join(review_html._board_row(b, titles.get(b["component_id"], "")) + "\n"
                       for b in sorted(board, key=review_html_sections.board_order))
        assert got == want, (seed, ordered)


@pytest.mark.parametrize("lines", [[], [""], ["a"], ["::error x", "  ::warning y", "b::c"],
                                   [f"{i}" * (i % 5) for i in range(5000)],
                                   ["x" * 700_000, "y", "z" * 700_000, "::w"]])
def test_pieces_are_whole_lines_and_join_to_the_text(lines: list[str]) -> None:
    whole = no_commands("\n".join(lines) + "\n")
    got = list(_common.text_pieces(lines, safe=True))
    assert "".join(got) == whole
    assert all(p.endswith("\n") for p in got)
    assert all(p.count("\n") <= _common.PIECE_LINES for p in got)
    # at most PIECE_CHARS before its last line (the line that takes it past them)
    assert all(len(p) - len(p[:-1].rpartition("\n")[2]) - 1 < _common.PIECE_CHARS
               for p in got)
