"""What a replay spells only when it is needed, against spelling it every time.

M2 (``monitor_invariants.monitor_alerts``) spells why an alert was due or not only when it
fails: its answer must be what spelling it at every request answered (the reference: M2
as it was written before, kept here, over every combination of level, last alert (none,
each level, an unknown level), alert raised or not, elapsed requests and debounce).  The
page's table cells take an integer's digits without escaping them: each cell must be its
escaped text."""

from __future__ import annotations

import itertools
from typing import Any

from risutools.replay.monitor_invariants import _SEVERITY, MonitorRequest, monitor_alerts
from risutools.replay.verdicts import HELD, SKIP, Answer
from risutools.settings.replay import ReplayConfig, build_config


def _reference(c: ReplayConfig, r: MonitorRequest) -> Answer:
    if r.metrics != "fresh":
        return SKIP
    last, level = r.last_alert, r.want
    if level == "NORMAL":
        due, why = False, "at NORMAL"
    elif last is None:
        due, why = True, "first WARNING/CRITICAL"
    elif _SEVERITY[level] > _SEVERITY.get(last[1], 0):
        due, why = True, f"escalation {last[1]} -> {level}"
    else:
        elapsed = r.request - last[0]
        due = elapsed >= c.debounce
        why = f"{elapsed} request(s) since the last alert, debounce {c.debounce}"
    if bool(r.event.get("alert")) != due:
        return ("no alert" if due else "an alert") + f" ({why})"
    return HELD


def test_m2_answers_as_it_did() -> None:
    levels = ["NORMAL", "WARNING", "CRITICAL"]
    lasts: list[tuple[int, str] | None] = [None]
    lasts += [(at, lvl) for at in (1, 7, 10, 11) for lvl in [*levels, "None", "odd"]]
    alerts: list[Any] = [True, False, None, 0, 1]
    answers = set()
    for debounce, kind, want, last, alert, request in itertools.product(
            (0, 1, 3, 5), ("fresh", "stale", "missing"), levels, lasts, alerts, (1, 11, 13, 40)):
        c = build_config({"debounce": debounce})
        event = {"alert": alert, "level": want}
        r = MonitorRequest(request, kind, event, want=want, last_alert=last)
        got, ref = monitor_alerts(c, r), _reference(c, r)
        assert got == ref, (debounce, kind, want, last, alert, request)
        answers.add(ref)
    # every case was met: held, skipped, and each kind of failure
    assert {SKIP, HELD} <= answers
    for why in ("(at NORMAL)", "(first WARNING/CRITICAL)", "(escalation", "since the last"):
        assert any(isinstance(a, str) and why in a for a in answers), why


def test_an_html_cell_is_its_escaped_text() -> None:
    """The page's table cells: an integer's digits taken as they are, anything else
    escaped; each the same as escaping its text (``_txt``)."""
    from html import escape

    from risutools.replay.render_html import _cell, _txt

    class Int(int):  # an int subclass whose text needs escaping: never taken as digits
        def __str__(self) -> str:
            return "<b>&"

    values: list[Any] = [0, 1, -1, 7, 10**30, -(10**30), True, False, None, 0.5, -2.0,
                         float("inf"), "", "a<b>&\"'", "plain", ["x<", 3, None], [],
                         {"k": "<v>", "n": 2}, {}, Int(3)]
    seen: dict[str, str] = {}
    for v in values + values:
        assert _cell(v) == _cell(v, seen) == escape(_txt(v)), v
    assert _cell(Int(3)) == "&lt;b&gt;&amp;"
