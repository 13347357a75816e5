"""The analyser's checks are units (risutools/analysis/checks/): each RA check is a function
that reads one event of the walk, and the analyser keeps the first findings in walk order."""

from __future__ import annotations

from risutools.analysis import analyze
from risutools.analysis.checks import module_checks
from risutools.analysis.seen import Seen, event_read_by
from risutools.commands.checks import every_check
from risutools.formats.model import Module


def test_every_ra_check_is_a_function_that_reads_an_event() -> None:
    ra = [c for c in every_check().values() if c.family == "RA"]
    assert [c.id for c in module_checks()] == [c.id for c in ra]
    for c in ra:
        assert c.scope == "module" and c.run is not None, c.id
        assert c.run.__module__.startswith("risutools.analysis.checks."), c.id
        assert event_read_by(c.run) in Seen.EVENTS, c.id
    seen = Seen(Module({"name": "x"}))
    assert all(not getattr(seen, event) for event in Seen.EVENTS)  # nothing seen yet


def test_the_first_findings_in_walk_order_are_kept() -> None:
    """6,000 requests (RA103, in the trigger's Lua) and RA101 (found at the lowLevelAccess
    step, after the code): the 5,000 findings kept are the first requests."""
    code = "\n".join(f'request("https://h{i}.example/")' for i in range(6000))
    a = analyze(Module({"name": "x", "trigger": [{"type": "start", "conditions": [], "effect": [
        {"type": "triggerlua", "code": code}]}]}))
    assert len(a.findings) == 5000
    assert {f.rule for f in a.findings} == {"RA103"}
    lines = sorted(int(f.evidence.rsplit(" ", 1)[1]) for f in a.findings)
    assert lines == list(range(1, 5001))
