"""The review page's interaction, lineage and risk parts (:mod:`risutools.report.review_html`
writes the page).  Every catalog value is HTML-escaped."""

from __future__ import annotations

import html
from typing import Any

from risutools.report.review_sections import GROUPS, risk_line

#: one colour per kind of interaction (what is broken red, conflicts rose, dependencies
#: blue, shared state violet, edit order yellow), and per lineage link
CSS = """
tr.k-unsatisfied td{background:#ffebee}tr.k-conflicts td{background:#fce4ec}
tr.k-dependencies td{background:#e3f2fd}tr.k-shared-state td{background:#f3e5f5}
tr.k-edit-order td{background:#fffde7}tr.k-repost td{background:#eceff1}
tr.k-new-version td{background:#e8f5e9}
td{overflow-wrap:anywhere}td.risk{font-size:12px}
#interactions td:nth-child(-n+2){white-space:nowrap}
"""

JS = """
(function(){
  var box=document.getElementById('live-only');
  if(!box)return;
  box.addEventListener('change',function(){
    var shown=0;
    Array.prototype.forEach.call(document.getElementById('interactions').tBodies[0].rows,
      function(row){var ok=!box.checked||row.getAttribute('data-live')==='1';
        if(ok){row.removeAttribute('hidden');shown++;}else{row.setAttribute('hidden','');}});
    document.getElementById('interactions-shown').textContent=String(shown);
  });
})();
"""


def _e(v: Any) -> str:
    return html.escape(str(v), quote=True)


def interactions_html(d: dict[str, Any]) -> list[str]:
    """The families, then every interaction, grouped by kind (unsatisfied first)."""
    sec = d.get("interactions") or {"relations": [], "families": [], "without_facts": 0}
    rows = sec["relations"]
    out = [f'<h2 id="interactions-h">Interactions ({len(rows)})</h2>',
           "<p>How components act on each other, candidates included: what one needs that "
           "no component has, conflicts, dependencies (lorebook code, toggles, buttons), "
           "shared chat and global variables, and edit hooks several components transform."
           + (f" {sec['without_facts']} document(s) have no facts summary (ingest writes "
              "<code>facts/</code>), so they are not related here." if sec["without_facts"]
              else "") + "</p>"]
    if sec["families"]:
        out.append('<table id="families"><thead><tr><th>family</th><th>backend</th>'
                   "<th>extensions</th></tr></thead><tbody>")
        out += [f"<tr><td>{_e(f['title'])}</td><td>{_e(f['backend'])}</td><td>"
                + ", ".join(_e(m) for m in f["members"] if m != f["backend"])
                + "</td></tr>" for f in sec["families"]]
        out.append("</tbody></table>")
    out.append('<p><label><input type="checkbox" id="live-only"> live only (active or '
               f'promoted on both sides)</label> (<span id="interactions-shown">{len(rows)}'
               "</span> shown)</p>")
    out.append('<table id="interactions"><thead><tr><th>kind</th><th>rule</th>'
               "<th>component</th><th>with</th><th>what</th></tr></thead><tbody>")
    for name, kinds in GROUPS:
        for r in rows:
            if r["kind"] in kinds:
                out.append(_row(name, r))
    out.append("</tbody></table>")
    return out


def _row(group: str, r: dict[str, Any]) -> str:
    cls = "k-" + group.replace(" ", "-")
    return (f'<tr class="{cls}" data-kind="{_e(r["kind"])}" data-live="{int(r["live"])}">'
            f"<td>{_e(group)}</td><td>{_e(r['rule'])}</td>"
            f"<td>{_e(r['component_id'])}<br>{_e(r['title'])}</td>"
            f"<td>{'<br>'.join(_e(t) for t in r['targets'][:12])}</td>"
            f"<td>{_e(r['message'])}</td></tr>")


def lineage_html(d: dict[str, Any]) -> list[str]:
    """Each module seen more than once: its members oldest first, reposts, drifts."""
    groups = (d.get("lineage") or {}).get("lineages", [])
    out = [f'<h2 id="lineage-h">Versions and reposts ({len(groups)})</h2>']
    if not groups:
        return [*out, '<p class="none">none</p>']
    out.append('<table id="lineage"><thead><tr><th>module</th><th>link</th><th>newer</th>'
               "<th>older</th><th>what changed</th></tr></thead><tbody>")
    for g in groups:
        for r in g["reposts"]:
            out.append(f'<tr class="k-repost"><td>{_e(g["name"])}</td><td>repost</td>'
                       f"<td>{_e(r['component_id'])}</td><td>{_e(r['same_bytes_as'])}</td>"
                       "<td>the same bytes</td></tr>")
        for s in g["supersedes"]:
            drift = "<br>".join(
                f"<b>{_e(k)}</b> " + " ".join(f"+{_e(x)}" for x in v["added"])
                + " " + " ".join(f"−{_e(x)}" for x in v["removed"])
                for k, v in s["drift"].items()) or "no drift in the facts"
            out.append(f'<tr class="k-new-version"><td>{_e(g["name"])}</td>'
                       f"<td>supersedes</td><td>{_e(s['newer'])}</td>"
                       f"<td>{_e(s['older'])}</td><td>{drift}</td></tr>")
    out.append("</tbody></table>")
    return out


def risk_cell(doc: dict[str, Any]) -> str:
    """A document row's risk facts (escaped), or a dash."""
    r = doc.get("risk")
    return (risk_line(r, _e) or "-") if r else "-"


def title_cell(doc: dict[str, Any]) -> str:
    r = doc.get("risk")
    return _e(r["title"]) if r and r.get("title") else "-"
