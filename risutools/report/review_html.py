"""A self-contained HTML page of ``risutools review`` for people.

Everything is in the page (no network): counts, the capability graph problems, the
transition log and approval problems, duplicates and id collisions, the promotion board
(filtered by what blocks a row), and a table of every document that can be sorted (click a
header) and filtered by review status, by finding rule, and by text.  The page's own script
reads the filters from the URL fragment too (``#status=candidate&rule=MC600&sort=errors``)
so a link keeps a view.  Every value from the catalog goes through
:func:`risutools.printable.html_value` (control characters shown escaped, then
HTML-escaped); nothing from a document is ever executed.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from operator import itemgetter
from typing import IO, TYPE_CHECKING, Any

from risutools.printable import html_value
from risutools.report._common import joined, line_pieces
from risutools.report.review_html_sections import CSS as SECTIONS_CSS
from risutools.report.review_html_sections import JS as SECTIONS_JS
from risutools.report.review_html_sections import (
    block_class,
    board_order,
    decisions_html,
    findings_html,
    interactions_html,
    lineage_html,
    path_cell,
    risk_cell,
    risk_score,
    title_cell,
)
from risutools.rowspool import temporary_folder

if TYPE_CHECKING:
    from risutools.catalog.review import Review


_CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#222;background:#fff}
h1{font-size:22px;margin:0 0 8px}h2{font-size:17px;margin:28px 0 8px}
table{border-collapse:collapse;width:100%;margin:6px 0}
th,td{border:1px solid #ccd;padding:4px 6px;text-align:left;vertical-align:top}
th{background:#e8eaf6;cursor:pointer;user-select:none}
tr.err td.n-err{background:#ffcdd2;font-weight:bold}
.pass{color:#1b5e20}.fail{color:#b71c1c;font-weight:bold}.na{color:#777}
.ready{background:#c8e6c9}.blocked{background:#fff3e0}
.counts span{display:inline-block;margin:0 14px 4px 0;padding:3px 8px;background:#eceff1;
border-radius:4px}
#filters{margin:8px 0}#filters label{margin-right:14px}
code{font-size:12px}
nav{margin:10px 0 0}nav a{margin-right:14px}
details summary{cursor:pointer;color:#555}.none{color:#777;font-style:italic}
td.state{white-space:nowrap}
#board-filters{margin:8px 0}
"""

_JS = """
(function(){
  var table=document.getElementById('documents');
  var body=table.tBodies[0];
  var st=document.getElementById('status-filter');
  var ru=document.getElementById('rule-filter');
  var tx=document.getElementById('text-filter');
  function apply(){
    var s=st.value,r=ru.value,t=tx.value.toLowerCase(),shown=0;
    Array.prototype.forEach.call(body.rows,function(row){
      var ok=(!s||row.getAttribute('data-status')===s)&&
             (!r||(' '+row.getAttribute('data-rules')+' ').indexOf(' '+r+' ')>=0)&&
             (!t||row.textContent.toLowerCase().indexOf(t)>=0);
      if(ok){row.removeAttribute('hidden');shown++;}else{row.setAttribute('hidden','');}
    });
    document.getElementById('shown').textContent=String(shown);
  }
  function sortBy(col,desc){
    var rows=Array.prototype.slice.call(body.rows);
    var th=table.tHead.rows[0].cells[col];var num=th.getAttribute('data-type')==='num';
    rows.sort(function(a,b){
      var x=a.cells[col].getAttribute('data-v')||a.cells[col].textContent;
      var y=b.cells[col].getAttribute('data-v')||b.cells[col].textContent;
      var c=num?(Number(x)-Number(y)):(x<y?-1:x>y?1:0);
      return desc?-c:c;
    });
    rows.forEach(function(row){body.appendChild(row);});
    table.setAttribute('data-sorted',th.getAttribute('data-key')+(desc?'-desc':''));
  }
  Array.prototype.forEach.call(table.tHead.rows[0].cells,function(th,i){
    th.addEventListener('click',function(){
      var desc=table.getAttribute('data-sorted')===th.getAttribute('data-key');
      sortBy(i,desc);
    });
  });
  [st,ru].forEach(function(el){el.addEventListener('change',apply);});
  tx.addEventListener('input',apply);
  var bf=document.getElementById('board-filter');
  function applyBoard(){
    var v=bf.value,shown=0;
    Array.prototype.forEach.call(document.getElementById('board').tBodies[0].rows,function(row){
      var ok=!v||(v==='ready'?row.className==='ready':
        (' '+row.getAttribute('data-blocked')+' ').indexOf(' '+v+' ')>=0);
      if(ok){row.removeAttribute('hidden');shown++;}else{row.setAttribute('hidden','');}
    });
    document.getElementById('board-shown').textContent=String(shown);
  }
  if(bf)bf.addEventListener('change',applyBoard);
  // the view in the URL fragment: on load, and when a link on the page changes it
  function fromHash(){
    var h={};location.hash.replace(/^#/,'').split('&').forEach(function(kv){
      var p=kv.split('=');if(p[0])h[decodeURIComponent(p[0])]=decodeURIComponent(p[1]||'');
    });
    if(h.status!==undefined)st.value=h.status;if(h.rule!==undefined)ru.value=h.rule;
    if(h.text!==undefined)tx.value=h.text;
    if(h.sort){var key=h.sort.replace(/-desc$/,'');
      Array.prototype.forEach.call(table.tHead.rows[0].cells,function(th,i){
        if(th.getAttribute('data-key')===key)sortBy(i,/-desc$/.test(h.sort));});}
    apply();
    if(bf){if(h.board!==undefined)bf.value=h.board;applyBoard();}
    return h;
  }
  var first=fromHash();
  window.addEventListener('hashchange',function(){
    var h=fromHash();
    if(h.sort||h.status!==undefined||h.rule!==undefined||h.text!==undefined)
      document.getElementById('documents-h').scrollIntoView();
    else if(h.board!==undefined)document.getElementById('board-h').scrollIntoView();
  });
  if(first.sort||first.status||first.rule||first.text)
    document.getElementById('documents-h').scrollIntoView();
  document.body.setAttribute('data-ready','1');
})();
"""


def _e(v: Any) -> str:
    return html_value(v)


def _counts(d: dict[str, Any]) -> str:
    return ", ".join(f"{_e(k)} {_e(v)}" for k, v in d.items()) or "none"


def _gate(g: dict[str, Any]) -> str:
    cls = "na" if g["verdict"] == "n/a" else g["verdict"]
    return (f'<span class="{cls}">{_e(g["verdict"])}</span> <b>{_e(g["gate"])}</b>: '
            f'{_e(g["reason"])}')


_SECTIONS = (("graph", "Capability graph"), ("chain", "Transition log"),
             ("duplicates", "Duplicate sources"), ("id_collisions", "Id collisions"))


def render_review_html(rv: Review) -> str:
    """The page whole (:func:`review_html_pieces` joined)."""
    return joined(review_html_pieces(rv))


def review_html_pieces(rv: Review) -> Iterator[str | bytes]:
    """The page in pieces, written as they are made: the head and counts, a table of
    contents, the problems first (short lists, the most urgent), then the promotion board,
    then every document.  What a section reads of a long list (the documents, the board,
    the lineages) is read once, in order, and not held: the board's rows wait in temporary
    files, one for each place in the board's order (:func:`_board`)."""
    return line_pieces(_page(rv))


def _page(rv: Review) -> Iterator[str | bytes]:
    """The page's lines (joined with a line break after each), and blocks of lines."""
    d = rv.data
    bad_appr = [a for a in d["approvals"] if a["severity"] in ("error", "warning")]
    yield from _head(d)
    yield from decisions_html(d)
    yield _nav(d, bad_appr)
    yield from findings_html(d)
    yield from _problems("graph", "Capability graph", d["graph"])
    yield from interactions_html(d)
    yield from lineage_html(d)
    for key, title in _SECTIONS[1:]:
        yield from _problems(key, title, d[key], d["counts"].get("log_entries")
                             if key == "chain" else None)
    yield from _approvals(bad_appr)
    yield from _board(d)
    yield from _documents(d["documents"])
    data = json.dumps(d["counts"], ensure_ascii=True, sort_keys=True).replace("<", "\\u003c")
    yield f'<script type="application/json" id="review-counts">{data}</script>'
    yield f"<script>{_JS}{SECTIONS_JS}</script></body></html>"


def _head(d: dict[str, Any]) -> list[str]:
    """The document head, the title and the counts."""
    c = d["counts"]
    return ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
            f"<title>risutools review: {_e(d['catalog'])}</title>",
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
            "style-src 'unsafe-inline'; script-src 'unsafe-inline'\">",
            f"<style>{_CSS}{SECTIONS_CSS}</style></head><body>",
            f"<h1>Catalog review: {_e(d['catalog'])}</h1>",
            '<div class="counts">',
            f'<span id="n-documents">{c["documents"]} documents</span>',
            f'<span id="n-errors"><a href="#sort=errors-desc&amp;status=&amp;rule=&amp;text=">'
            f'{c["errors"]} errors</a></span>',
            f'<span id="n-warnings"><a href="#sort=warnings-desc&amp;status=&amp;rule=&amp;'
            f'text=">{c["warnings"]} warnings</a></span>',
            f"<span>review: {_counts(c['review_status'])}</span>",
            f"<span>runtime: {_counts(c['runtime_status'])}</span>",
            f"<span>approvals: {_counts(c['approvals'])}</span>",
            f"<span>signatures: {_counts(c['signatures'])}</span>",
            f"<span>digests: {_counts(c['verifications'])}</span>",
            "</div>"]


def _nav(d: dict[str, Any], bad_appr: list[dict[str, Any]]) -> str:
    """One link per section, with its count."""
    nav = [("findings-h", "Findings by rule")]
    nav += [(f"{key.replace('_', '-')}-h", f"{title} ({len(d[key])})")
            for key, title in _SECTIONS]
    nav.append(("approvals-h", f"Approvals needing attention ({len(bad_appr)})"))
    nav.append(("interactions-h", "Interactions "
                f"({len((d.get('interactions') or {}).get('relations', []))})"))
    nav.append(("lineage-h", "Versions and reposts "
                f"({len((d.get('lineage') or {}).get('lineages', []))})"))
    nav += [("board-h", f"Promotion board ({d['counts']['ready']} of {len(d['board'])} ready)"),
            ("documents-h", f"Documents ({len(d['documents'])})")]
    return "<nav>" + "".join(f'<a href="#{a}">{_e(t)}</a>' for a, t in nav) + "</nav>"


def _problem_text(key: str, g: dict[str, Any]) -> str:
    if g.get("message"):
        cid = g.get("component_id")
        return g["message"] if not cid or g["message"].startswith(cid) \
            else f"{cid}: {g['message']}"
    if key == "duplicates":
        return (f"{', '.join(g['components'])} are built from one source "
                f"({g['sha256'][:19]}…): " + ", ".join(g.get("files", [])))
    return f"{g.get('component_id')}: " + ", ".join(g.get("files", [])) + \
        (f" (versions {', '.join(g['versions'])})" if g.get("versions") else "")


def _problems(key: str, title: str, items: list[dict[str, Any]],
              entries: int | None = None) -> list[str]:
    """One problem section (graph, transition log, duplicates, id collisions) as a list;
    ``entries``: how many lines the transition log has (its problems are counted apart)."""
    slug = key.replace("_", "-")
    head = f"{title} ({len(items)})" if entries is None else \
        f"{title}: {entries} entries, {len(items)} problem(s)"
    out = [f'<h2 id="{slug}-h">{head}</h2><ul id="{slug}">']
    for g in items:
        sev = g.get("severity", "warning")
        where = g.get("file") or (f"transitions.ndjson line {g['line']}"
                                  if g.get("line") else "")
        out.append(f'<li class="{_e(sev)}"><b>{_e(sev)}</b> '
                   + (f"<code>{_e(where)}</code> " if where else "")
                   + f"{_e(_problem_text(key, g))}</li>")
    return _closed_list(out, items)


def _closed_list(out: list[str], items: list[dict[str, Any]]) -> list[str]:
    if not items:
        out.append('<li class="none">none</li>')
    out.append("</ul>")
    return out


def _approvals(bad_appr: list[dict[str, Any]]) -> list[str]:
    """The approval records that are in error or warn."""
    out = [f'<h2 id="approvals-h">Approvals needing attention ({len(bad_appr)})</h2>'
           '<ul id="approvals">']
    out += [f'<li class="{_e(a["severity"])}"><b>{_e(a["severity"])}</b> '
            f'<code>{_e(a["file"])}</code>: {_e(a["message"])}</li>' for a in bad_appr]
    return _closed_list(out, bad_appr)


def _board(d: dict[str, Any]) -> Iterator[str | bytes]:
    """The promotion board: the gates that block first, the ones that pass folded away.
    Its rows in :func:`board_order` (the place of the gate that blocks first, then the
    component): the board is in component order, so each place's rows are written, as
    they come, to a temporary file of that place's, and the files follow each other."""
    board = d["board"]
    blocking = sorted({g for b in board for g in b["blocked_by"]})
    yield from (
        f'<h2 id="board-h">Promotion board ({d["counts"]["ready"]} of {len(board)} ready)'
        "</h2>",
        "<p>Every candidate and pending component with each gate of its next step. "
        "A blocked row names the gates that fail and why; what a reviewer runs to "
        "clear the approval gate is in its reason.</p>",
        '<div id="board-filters"><label>show <select id="board-filter">'
        '<option value="">all</option><option value="ready">ready</option>'
        + "".join(f'<option value="{_e(g)}">blocked by {_e(g)}</option>'
                  for g in blocking)
        + f'</select></label> (<span id="board-shown">{len(board)}</span> shown)'
        "</div>",
        '<table id="board"><thead><tr><th>component</th><th>step</th><th>state</th>'
        "<th>gates</th><th>path to approved</th></tr></thead><tbody>")
    titles = {doc["component_id"]: doc["risk"]["title"] for doc in d["documents"]
              if doc.get("risk")}
    yield from _in_board_order(board, titles)
    yield "</tbody></table>"


def _in_board_order(board: Iterable[dict[str, Any]], titles: dict[str, str]
                    ) -> Iterator[bytes]:
    """The board's rows (:func:`_board_row`, a line each), as ``sorted(board,
    key=board_order)`` orders them, none held: each row written as it comes to a temporary
    file of its place (the gate that blocks it first), with its component and where it is
    in the file; then each place's rows in component order (ties in board order, as the
    sort keeps them).  The board is made in component order, so a place's file is read
    back as it is, a MiB at a time; a board in another order is read back a row at a
    time, in the order its components sort."""
    with contextlib.ExitStack() as files:
        places: dict[int, tuple[IO[bytes], list[tuple[str, int, int]]]] = {}
        for b in board:
            place, cid = board_order(b)
            got = places.get(place)
            if got is None:
                with temporary_folder():
                    got = places[place] = (files.enter_context(tempfile.TemporaryFile()), [])
            out, rows = got
            data = (_board_row(b, titles.get(b["component_id"], "")) + "\n").encode("utf-8")
            rows.append((cid, rows[-1][1] + rows[-1][2] if rows else 0, len(data)))
            with temporary_folder():
                out.write(data)
        for place in sorted(places):
            out, rows = places[place]
            with temporary_folder():
                out.flush()
                if all(a[0] <= b[0] for a, b in itertools.pairwise(rows)):
                    out.seek(0)
                    while block := out.read(PIECE_BYTES):
                        yield block
                    continue
                fd = out.fileno()
                for _cid, at, size in sorted(rows, key=itemgetter(0)):
                    yield os.pread(fd, size, at)


#: bytes of board rows read back at a time
PIECE_BYTES = 1 << 20


def _board_row(b: dict[str, Any], title: str) -> str:
    failed = [g for g in b["gates"] if g["verdict"] == "fail"]
    others = [g for g in b["gates"] if g["verdict"] != "fail"]
    gates = "<br>".join(_gate(g) for g in failed)
    if others:
        n_pass = sum(1 for g in others if g["verdict"] == "pass")
        n_na = len(others) - n_pass
        label = f"{n_pass} pass" + (f", {n_na} n/a" if n_na else "")
        gates += (f"<details><summary>{label}</summary>"
                  + "<br>".join(_gate(g) for g in others) + "</details>")
    state = block_class(b)
    why = ("<b>blocked by</b><br>" + "<br>".join(_e(g) for g in b["blocked_by"])
           if b["blocked_by"] else "<b>ready</b>")
    return (f'<tr class="{state}" data-component="{_e(b["component_id"])}" '
            f'data-blocked="{_e(" ".join(b["blocked_by"]))}">'
            f'<td>{_e(b["component_id"])}<br>{_e(title)}<br><code>{_e(b["file"])}</code></td>'
            f'<td>{_e(b["from"])} → {_e(b["to"])}</td>'
            f'<td class="state">{why}</td><td>{gates}</td><td>{path_cell(b)}</td></tr>')


def _documents(docs: Sequence[dict[str, Any]]) -> Iterator[str]:
    """Every document, in a table the page's script sorts and filters (the documents read
    twice, in order: the filters' choices, then the rows, each written as it is made)."""
    rules: set[str] = set()
    statuses: set[str] = set()
    for doc in docs:
        rules.update(f["rule"] for f in doc["findings"])
        statuses.add(doc["review_status"] or "")
    yield (f'<h2 id="documents-h">Documents (<span id="shown">{len(docs)}</span>'
           " shown)</h2><p>Click a column header to sort (again: descending).</p>")
    yield ('<div id="filters"><label>status <select id="status-filter">'
           '<option value="">all</option>'
           + "".join(f'<option value="{_e(s)}">{_e(s)}</option>' for s in sorted(statuses))
           + '</select></label><label>finding <select id="rule-filter">'
           '<option value="">all</option>'
           + "".join(f'<option value="{_e(r)}">{_e(r)}</option>' for r in sorted(rules))
           + '</select></label><label>text <input id="text-filter" type="search">'
           "</label></div>")
    yield ('<table id="documents"><thead><tr>'
           '<th data-key="component">component</th><th data-key="title">title</th>'
           '<th data-key="file">file</th>'
           '<th data-key="status">review</th><th data-key="runtime">runtime</th>'
           '<th data-key="errors" data-type="num">errors</th>'
           '<th data-key="warnings" data-type="num">warnings</th>'
           '<th data-key="risk" data-type="num">risk</th><th>findings</th></tr></thead><tbody>')
    yield from map(_document_row, docs)
    yield "</tbody></table>"


def _document_row(doc: dict[str, Any]) -> str:
    where = doc["file"] + (f":{doc['line']}" if doc.get("line") and
                           doc["file"].endswith((".ndjson", ".jsonl")) else "")
    fs = "<br>".join(f'<b>{_e(f["rule"])}</b> <code>{_e(f.get("pointer", ""))}</code> '
                     f'{_e(f["message"])}' for f in doc["findings"]
                     if f["severity"] in ("error", "warning"))
    drules = " ".join(sorted({f["rule"] for f in doc["findings"]}))
    cls = ' class="err"' if doc["errors"] else ""
    return (f'<tr{cls} data-status="{_e(doc["review_status"] or "")}" '
            f'data-rules="{_e(drules)}"><td>{_e(doc["component_id"] or "-")}</td>'
            f"<td>{title_cell(doc)}</td><td>{_e(where)}</td>"
            f"<td>{_e(doc['review_status'] or '-')}</td>"
            f"<td>{_e(doc['runtime_status'] or '-')}</td>"
            f'<td class="n-err" data-v="{doc["errors"]}">{doc["errors"]}</td>'
            f'<td data-v="{doc["warnings"]}">{doc["warnings"]}</td>'
            f'<td class="risk" data-v="{risk_score(doc)}">{risk_cell(doc)}</td>'
            f'<td>{fs}</td></tr>')
