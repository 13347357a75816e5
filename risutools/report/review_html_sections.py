"""The review page's interaction, lineage and risk parts (:mod:`risutools.report.review_html`
writes the page).  Every catalog value is HTML-escaped."""

from __future__ import annotations

import itertools
from typing import Any

from risutools.printable import html_value
from risutools.report.review_sections import GROUPS, risk_line

#: one colour per kind of interaction (what is broken red, conflicts rose, dependencies
#: blue, shared state violet, edit order yellow), and per lineage link
CSS = """
tr.k-unsatisfied td{background:#ffebee}tr.k-conflicts td{background:#fce4ec}
tr.k-dependencies td{background:#e3f2fd}tr.k-shared-state td{background:#f3e5f5}
tr.k-edit-order td{background:#fffde7}tr.k-repost td{background:#eceff1}
tr.k-new-version td{background:#e8f5e9}
.decide{display:flex;flex-wrap:wrap;gap:8px;margin:12px 0}
.decide a{display:block;padding:6px 10px;border-radius:4px;text-decoration:none;color:#222}
.d-errors{background:#ffcdd2}.d-conflicts{background:#fce4ec}.d-unsatisfied{background:#ffebee}
.d-risk{background:#fff3e0}.d-blocked{background:#e3f2fd}.d-ready{background:#c8e6c9}
tr.b-contract td,tr.b-digests td,tr.b-active-code td,tr.b-history td{background:#ffebee}
tr.b-conflict td,tr.b-active-conflict td,tr.b-exclusive td{background:#fce4ec}
tr.b-replay td{background:#f3e5f5}tr.b-approval td{background:#e3f2fd}
ul.path{margin:0;padding-left:16px}.path .missing{color:#b71c1c}.path .done{color:#1b5e20}
#findings tr.error td{background:#ffcdd2}#findings tr.warning td{background:#fff8e1}
td{overflow-wrap:anywhere}td.risk{font-size:12px}
#interactions td:nth-child(-n+2),#findings td:nth-child(-n+3){white-space:nowrap}
"""

JS = """
(function(){
  var box=document.getElementById('live-only');
  if(!box)return;
  function apply(){
    var shown=0;
    Array.prototype.forEach.call(document.getElementById('interactions').tBodies[0].rows,
      function(row){var ok=!box.checked||row.getAttribute('data-live')==='1';
        if(ok){row.removeAttribute('hidden');shown++;}else{row.setAttribute('hidden','');}});
    document.getElementById('interactions-shown').textContent=String(shown);
  }
  function fromHash(){
    if(/(^#|&)live=1(&|$)/.test(location.hash)){box.checked=true;}
    apply();
  }
  box.addEventListener('change',apply);
  window.addEventListener('hashchange',fromHash);
  fromHash();
})();
"""


def _e(v: Any) -> str:
    """Every value of these sections as the page shows any value: control characters
    shown escaped, then HTML-escaped (:func:`risutools.printable.html_value`)."""
    return html_value(v)


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
                       f"<td>{_e(r['component_id'])}</td><td>{_e(r['same_as'])}</td>"
                       f"<td>the same {_e(r['same'])}</td></tr>")
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


#: the board's rows in the order a decision is needed: a failing gate that is a defect
#: first, then conflicts, replay, and rows that wait only for a person's approval
BLOCK_ORDER = ("history", "contract", "digests", "active-code", "conflict", "active-conflict",
               "exclusive", "replay", "transition", "approval")


def board_order(b: dict[str, Any]) -> tuple[int, str]:
    if b["ready"]:
        return len(BLOCK_ORDER) + 1, b["component_id"]
    ranks = [BLOCK_ORDER.index(g) if g in BLOCK_ORDER else len(BLOCK_ORDER)
             for g in b["blocked_by"]]
    return min(ranks, default=len(BLOCK_ORDER)), b["component_id"]


def block_class(b: dict[str, Any]) -> str:
    """``ready``, or ``blocked b-<the gate that needs a decision first>``."""
    if b["ready"]:
        return "ready"
    first = min(b["blocked_by"], key=lambda g: BLOCK_ORDER.index(g) if g in BLOCK_ORDER
                else len(BLOCK_ORDER), default="")
    return f"blocked b-{_e(first)}"


def path_cell(b: dict[str, Any]) -> str:
    return '<ul class="path">' + "".join(
        f'<li class="{_e(p["state"]).replace("/", "")}">{_e(p["part"])}: {_e(p["state"])}'
        + (f" ({_e(p['detail'])})" if p["state"] != "done" else "") + "</li>"
        for p in b.get("path", ())) + "</ul>"


def decisions_html(d: dict[str, Any]) -> list[str]:
    """What needs a decision, most urgent first, each a link to its section."""
    c = d["counts"]
    rows = (d.get("interactions") or {}).get("relations", [])
    conflicts = len(d["graph"]) + sum(1 for r in rows if r["kind"] == "capability-conflict")
    unsat = sum(1 for r in rows if r["kind"] in ("toggle-unsatisfied", "lorebook-missing"))
    risky = sum(1 for doc in d["documents"] if _risky(doc.get("risk")))
    blocked = len(d["board"]) - c["ready"]
    items = [("d-errors", "#findings-h", f"{c['errors']} errors"),
             ("d-conflicts", "#interactions-h", f"{conflicts} conflicts"),
             ("d-unsatisfied", "#interactions-h", f"{unsat} unsatisfied"),
             ("d-risk", "#sort=risk-desc&status=&rule=&text=", f"{risky} components at risk"),
             ("d-blocked", "#board-h", f"{blocked} blocked"),
             ("d-ready", "#board=ready", f"{c['ready']} ready")]
    return ['<div class="decide" id="decide">'
            + "".join(f'<a class="{k}" href="{h}">{_e(t)}</a>' for k, h, t in items)
            + "</div>"]


def _risky(r: dict[str, Any] | None) -> bool:
    return bool(r and (r.get("low_level_access") or r.get("privileged_apis")
                       or r.get("hosts") or r.get("analysis_findings")
                       or any(x["resolves"] == "unresolved"
                              for x in r.get("dynamic_loading", ()))))


def risk_score(doc: dict[str, Any]) -> int:
    """A sort key for the documents table's risk column (more facts, higher)."""
    r = doc.get("risk") or {}
    return (4 * bool(r.get("low_level_access")) + 2 * len(r.get("privileged_apis", ()))
            + 2 * len(r.get("hosts", ())) + len(r.get("analysis_findings", ()))
            + sum(3 for x in r.get("dynamic_loading", ()) if x["resolves"] == "unresolved"))


def findings_html(d: dict[str, Any]) -> list[str]:
    """Every finding grouped by rule (and message when they are all the same), errors
    first, with its count: 21 identical MC600 warnings are one row."""
    # each (rule, severity): its first message, how many, its different messages (the
    # documents read once, in order; no finding held but a message not seen before)
    groups: dict[tuple[str, str], tuple[str, list[int], set[str]]] = {}
    for f in itertools.chain((f for doc in d["documents"] for f in doc["findings"]),
                             d["file_findings"]):
        group = groups.get(key := (f["rule"], f["severity"]))
        if group is None:
            groups[key] = (f["message"], [1], {f["message"]})
        else:
            group[1][0] += 1
            group[2].add(f["message"])
    order = {"error": 0, "warning": 1, "info": 2}
    keys = sorted(groups, key=lambda k: (order.get(k[1], 3), -groups[k][1][0], k[0]))
    out = [f'<h2 id="findings-h">Findings by rule ({len(keys)} rules, '
           f"{sum(g[1][0] for g in groups.values())} findings)</h2>",
           '<table id="findings"><thead><tr><th>rule</th><th>severity</th><th>count</th>'
           "<th>message</th></tr></thead><tbody>"]
    for rule, sev in keys:
        first, (n,), different = groups[(rule, sev)]
        text = first if len(different) == 1 else \
            f"{len(different)} different messages, e.g. {first}"
        out.append(f'<tr class="{_e(sev)}"><td>{_e(rule)}</td><td>{_e(sev)}</td>'
                   f"<td>{n}</td><td>{_e(text)}</td></tr>")
    out.append("</tbody></table>")
    return out
