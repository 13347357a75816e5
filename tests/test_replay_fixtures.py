"""The hand-written fixtures, checked against numbers computed by hand.

Every fixture uses ``tokenizer_profile: 1`` and ``message_overhead: 0``, so a
message's estimate is its length in characters.  The comments give the
arithmetic; none of these numbers were copied from the code's output.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from risutools.replay.fixture import load_fixture
from risutools.replay.run import build_report, replay_cutter
from risutools.settings.replay import load_replay_config

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "replay"


def rows(name: str) -> list[dict[str, Any]]:
    fx = load_fixture(FIX / name)
    run = replay_cutter(fx, load_replay_config(None, fx.config))
    assert run.checker is not None
    assert run.checker.failed() == [], run.checker.verdicts
    return run.rows


def run_fixture(path: Path) -> dict[str, Any]:
    fx = load_fixture(path)
    cfg = load_replay_config(None, fx.config)
    return build_report(replay_cutter(fx, cfg), fx, cfg, None)


def brief(r: dict[str, Any]) -> tuple[Any, ...]:
    # tokens in, tokens out, dropped, continuity, budget, anchor, unreachable, omitted after
    return (
        r["tokens_in"],
        r["tokens_out"],
        r["dropped"],
        r["continuity_dropped"],
        r["budget_dropped"],
        r["anchor"],
        r["budget_unreachable"],
        r["state"]["omitted_count"],
    )


def test_anchor_lost_by_edit() -> None:
    rs = rows("anchor-edit.yaml")
    assert [brief(r) for r in rs] == [
        # s0 10 + m1..m4 4*20 = 90 <= 100: nothing to do; first request has no anchor
        (90, 90, 0, 0, 0, "none", False, 0),
        # + m5 20 = 110 > 100; R = m1 m2 m3 (tail m4 m5); drop m1 (90), m2 (70 <= 80)
        (110, 70, 2, 0, 2, "found", False, 2),
        # m3 (the anchor) edited, same length: lost -> drop omitted_count = 2 -> 70
        (110, 70, 2, 2, 0, "lost", False, 2),
        # + m6 10 = 120; R = m1..m4; edited m3 found at position 2 -> 120 - 40 = 80
        (120, 80, 2, 2, 0, "found", False, 2),
    ]
    assert rs[2]["fallback"] is True and rs[1]["fallback"] is False
    assert rs[1]["state"]["anchor"]["role"] == "user"
    assert rs[1]["state"]["anchor"]["length"] == 20


def test_anchor_lost_by_delete() -> None:
    rs = rows("anchor-delete.yaml")
    assert [brief(r) for r in rs] == [
        (110, 70, 2, 0, 2, "none", False, 2),
        # m3 deleted: 90; R = m1 m2 (tail m4 m5); lost -> drop 2 -> 50
        (90, 50, 2, 2, 0, "lost", False, 2),
        # + m6 20 = 110; R = m1 m2 m4; anchor m4 at position 2 -> 110 - 40 = 70
        (110, 70, 2, 2, 0, "found", False, 2),
        # m1 (dropped) deleted: 90; R = m2 m4; m4 at position 1 -> 90 - 20 = 70
        (90, 70, 1, 1, 0, "found", False, 1),
    ]
    assert [r["messages_in"] for r in rs] == [6, 5, 6, 5]
    assert [r["messages_out"] for r in rs] == [4, 3, 4, 4]


def test_toggle_off_and_on() -> None:
    rs = rows("toggle.yaml")
    assert [r["enabled"] for r in rs] == [True, False, False, True, True]
    assert [brief(r) for r in rs] == [
        (110, 70, 2, 0, 2, "none", False, 2),
        # off: everything passes through (130, 140) and the state is kept
        (130, 130, 0, 0, 0, "none", False, 2),
        (140, 140, 0, 0, 0, "none", False, 2),
        # on again: anchor m3 at position 2 -> 140 - 40 = 100, exactly max_context: no cut
        (140, 100, 2, 2, 0, "found", False, 2),
        # + m8 20 = 160; 160 - 40 = 120 > 100 -> to 80: drop m3 (100), m4 (80)
        (160, 80, 4, 2, 2, "found", False, 4),
    ]
    assert rs[1]["state"]["anchor"] == rs[0]["state"]["anchor"]


def test_protected_in_the_middle_and_tool_results() -> None:
    rs = rows("protected-tools.yaml")
    assert [brief(r) for r in rs] == [
        # 10+20+15+10+20+5+20+20 = 120; R = m1 m2 m4 m6 (tail m7); target 100: drop m1
        (120, 100, 1, 0, 1, "none", False, 1),
        # + function 30 = 150; anchor m2 at 1 -> 130 > 100; need 50: m1 m2 m4 (55) -> 95
        (150, 95, 3, 1, 2, "found", False, 3),
    ]
    # request 2 keeps the tool result m3 whose calling assistant m2 was dropped
    assert [r["orphaned_tool_results"] for r in rs] == [0, 1]
    assert [r["messages_out"] for r in rs] == [7, 6]
    # which R9 (the checker, on its own) reports as a warning: the replay still passes
    report = run_fixture(FIX / "protected-tools.yaml")
    [r9] = [i for i in report["invariants"] if i["id"] == "R9"]
    assert (r9["verdict"], r9["failures"], r9["requests_checked"]) == ("failed", 1, 2)
    assert r9["first_failure"]["request"] == 2
    assert r9["first_failure"]["detail"].endswith("(called by m2)")
    s = report["summary"]
    assert (s["verdict"], s["failed_invariants"], s["warned_invariants"]) == ("passed", [],
                                                                             ["R9"])


def test_tail_larger_than_budget() -> None:
    rs = rows("budget-unreachable.yaml")
    assert [brief(r) for r in rs] == [
        # 70 > 50, R empty (the tail is all three)
        (70, 70, 0, 0, 0, "none", True, 0),
        # 90; R = m1; drop it -> 70, still > 50
        (90, 70, 1, 0, 1, "found", True, 1),
        # 95; R = m1 m2; anchor m2 at 1 -> 75 > 50; drop m2 too -> 55 > 50
        (95, 55, 2, 1, 1, "found", True, 2),
    ]


def test_duplicate_signatures_nearest_then_later() -> None:
    rs = rows("duplicates.yaml")
    assert [brief(r) for r in rs] == [
        # 130; R = m1..m7; need 30: m1 10, m2 20 -> 100
        (130, 100, 2, 0, 2, "none", False, 2),
        # 150; "ok" at positions 2 (m3), 4 (m5), 6 (m7): nearest 2 -> 120 > 100;
        # need 50: m1 m2 m3 m4 = 60 -> 90
        (150, 90, 4, 2, 2, "found", False, 4),
        # m2 deleted: 130; "ok" at 1, 3, 5; omitted 4: 3 and 5 tie -> the later, 5;
        # dropped m1 m3 m4 m5 m6 = 70 -> 60
        (130, 60, 5, 5, 0, "found", False, 5),
        # + "ok" m10 (tail, position 8): m7 at 5 is exact -> 140 - 70 = 70
        (140, 70, 5, 5, 0, "found", False, 5),
    ]


def test_anchor_twin_is_not_the_anchor() -> None:
    rs = rows("anchor-twin.yaml")
    assert [brief(r) for r in rs] == [
        # s0 10 + m1 10 + m2 20 + m3 10 + m4 20 + m5 10 + m6 30 = 110; R = m1..m5 (tail m6);
        # target 100: drop m1 -> 100; anchor m2 (assistant, 20, "b"*20), omitted 1
        (110, 100, 1, 0, 1, "none", False, 1),
        # m2 deleted: 90; m4 has the same role and length but other text: the anchor is
        # lost, drop omitted_count = 1 (m1) -> 80, not 2 (m1 m3, up to the twin) -> 70
        (90, 80, 1, 1, 0, "lost", False, 1),
    ]
    assert rs[1]["state"]["anchor"]["length"] == 10  # m3 "c"*10 is now the first survivor


@pytest.mark.parametrize(
    "name",
    [
        "anchor-twin.yaml",
        "anchor-edit.yaml",
        "anchor-delete.yaml",
        "toggle.yaml",
        "protected-tools.yaml",
        "budget-unreachable.yaml",
        "duplicates.yaml",
        "monitor.yaml",
    ],
)
def test_fixtures_match_the_schema(name: str) -> None:
    data = yaml.safe_load((FIX / name).read_text(encoding="utf-8"))
    conversation_validator().validate(data)


def conversation_validator() -> Any:
    import jsonschema
    from referencing import Registry, Resource

    from risutools.resources import load_schema

    conv = load_schema("conversation-v1.schema.json")
    cfg = load_schema("replay-config-v1.schema.json")
    registry: Registry[Any] = Registry().with_resources(
        [(s["$id"], Resource.from_contents(s)) for s in (conv, cfg)]
    )
    return jsonschema.Draft202012Validator(conv, registry=registry)
