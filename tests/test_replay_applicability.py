"""R1, R2, R5, R6 and R7 count only the requests where they could have failed.

Each applies where its failure is possible (``docs/replay.md``, the invariants' table):
R1 where the input holds a protected message, R2 where the tail is not empty, R5 where
the previous enabled request dropped a non-protected message still in the input, R6
where something is dropped, R7 where a budget cut goes beyond continuity; elsewhere each
answers SKIP, so a run where none ever applies shows it not-checked, never passed.  R3
and R4 can always fail.  The counts are the same through the quick path (``appended_held``,
``changed_held``, its steady answer), the reference (``quick`` False) and the units asked
one by one (``fused`` False), and the plain oracle of test_replay_checker_incremental.py
agrees with them over its runs.
"""

from __future__ import annotations

import json
from pathlib import Path

from harness import SEED, run_cli

from risutools.replay.checker import InvariantChecker
from risutools.replay.fixture import Message
from risutools.replay.mirror import Change, Step
from risutools.replay.verdicts import NOT_CHECKED, PASSED
from risutools.settings.replay import build_config

IDS = ("R1", "R2", "R3", "R4", "R5", "R6", "R7", "R8", "R9")


def _three_ways(config: dict[str, object], obs: list[Change | Step]) -> dict[str, int]:
    """Each invariant's requests checked (failures none), alike the three ways."""
    cfg = build_config({"tokenizer_profile": 1, "message_overhead": 0, "trim_percent": 0,
                        **config})
    quick, plain, units = (InvariantChecker(cfg) for _ in range(3))
    plain.quick = False
    units.fused = units.quick = False
    for o in obs:
        for c in (quick, plain, units):
            c.check(o)
    got = [{k: (v.checked, v.failures) for k, v in c.verdicts.items()}
           for c in (quick, plain, units)]
    assert got[0] == got[1] == got[2]
    assert not any(f for _, f in got[0].values()), got[0]
    return {k: n for k, (n, _) in got[0].items()}


def _m(mid: str, role: str = "user", text: str = "") -> Message:
    return Message(mid, role, text or mid * 5)


def _checked(**counts: int) -> dict[str, int]:
    return {k: counts.get(k, 0) for k in IDS}


def test_nothing_protected_no_tail_nothing_dropped_is_not_checked() -> None:
    """The defect's conversation: no protected message, preserve_latest 0, nothing ever
    dropped: R1, R2, R5, R6 and R7 could not fail (they said passed, 2 requests each)."""
    hi, yo, more = _m("u1", "user", "hi"), _m("a1", "assistant", "yo"), _m("u2", "user", "more")
    got = _three_ways({"max_context": 100000, "preserve_latest": 0},
                      [Change(1, True, [hi, yo], sent=[hi, yo]),
                       Change(2, True, [more], sent=[more])])
    assert got == _checked(R3=2, R4=2)


def test_one_empty_turn_checks_only_r3_and_r4() -> None:
    got = _three_ways({"max_context": 100}, [Change(1, True)])
    assert got == _checked(R3=1, R4=1)


def test_each_applies_where_it_could_fail() -> None:
    """A system prompt (R1 from request 1), a tail of one (R2 from request 1), a trim at
    request 3 (R6 from 3; R7 at 3 only: at 4 the cut is continuity's), so R5 from 4; with
    the module off at 5 (nothing counted but R4).  One token a character."""
    s, u1, a1, u2, a2, u3 = (_m("s", "system", "sys"), _m("u1"), _m("a1", "assistant"),
                             _m("u2"), _m("a2", "assistant"), _m("u3", "user", "ok"))
    obs: list[Change | Step] = [
        Change(1, True, [s, u1], sent=[s, u1]),  # 3 + 10
        Change(2, True, [a1, u2], sent=[a1, u2]),  # 33
        Change(3, True, [a2], sent=[a2], withdrawn=["u1"]),  # 43 > 40: 33
        Change(4, True, [u3], sent=[u3]),  # 35
        Change(5, False, sent=[u1]),
    ]
    got = _three_ways({"max_context": 40, "preserve_latest": 1}, obs)
    assert got == _checked(R1=4, R2=4, R3=4, R4=5, R5=1, R6=2, R7=1)


def test_r5_stops_applying_once_every_message_dropped_before_is_deleted() -> None:
    """u1 dropped at request 2 (R5 applies at 3), a1 too at 3; both deleted at 4, so
    nothing dropped before is left to come back at 4 or 5."""
    u1, a1, u2, a2 = _m("u1"), _m("a1", "assistant"), _m("u2"), _m("a2", "assistant")
    u3 = _m("u3", "user", "ok")
    obs: list[Change | Step] = [
        Change(1, True, [u1, a1], sent=[u1, a1]),  # 20
        Change(2, True, [u2], sent=[u2], withdrawn=["u1"]),  # 30 > 25: 20
        Change(3, True, [a2], sent=[a2], withdrawn=["a1"]),  # 30 > 25: 20
        Change(4, True, deleted=["u1", "a1"]),
        Change(5, True, [u3], sent=[u3]),  # 22
    ]
    got = _three_ways({"max_context": 25, "preserve_latest": 1}, obs)
    assert got == _checked(R2=5, R3=5, R4=5, R5=1, R6=2, R7=2)


def test_a_first_protected_message_while_only_appending() -> None:
    """The steady answer (only messages sent as appended) knows R1 applies from the
    request a first protected message comes, and R5, R6 from the trim on."""
    msgs = [_m(f"m{i}", ("user", "assistant")[i % 2]) for i in range(5)]
    msgs += [_m("k1", "assistant", "ok"), _m("k2", "user", "ok")]
    sysm = _m("s", "system", "sys")
    obs: list[Change | Step] = [Change(i + 1, True, [m], sent=[m])
                                for i, m in enumerate(msgs[:3])]  # 30
    obs += [Change(4, True, [sysm], sent=[sysm]),  # 33
            Change(5, True, [msgs[3]], sent=[msgs[3]]),  # 43
            Change(6, True, [msgs[4]], sent=[msgs[4]], withdrawn=["m0"]),  # 53 > 50: 43
            Change(7, True, [msgs[5]], sent=[msgs[5]]),  # 45
            Change(8, True, [msgs[6]], sent=[msgs[6]])]  # 47
    got = _three_ways({"max_context": 50, "preserve_latest": 1}, obs)
    assert got == _checked(R1=5, R2=8, R3=8, R4=8, R5=2, R6=3, R7=1)


def test_whole_lists_count_the_same() -> None:
    """Observed as whole lists (:class:`Step`, any cutter), the same applicability."""
    u1, a1, u2 = _m("u1"), _m("a1", "assistant"), _m("u2")
    obs: list[Change | Step] = [Step(1, True, [u1, a1], [u1, a1]),
                                Step(2, True, [u1, a1, u2], [a1, u2]),  # 30 > 25: 20
                                Step(3, True, [u1, a1, u2], [a1, u2]),
                                Step(4, True, [a1, u2], [a1, u2])]  # (u1 deleted)
    got = _three_ways({"max_context": 25, "preserve_latest": 1}, obs)
    assert got == _checked(R2=4, R3=4, R4=4, R5=1, R6=2, R7=1)


def test_replay_run_reports_not_checked(tmp_path: Path) -> None:
    """``replay run`` end to end: the defect's fixture, and a fixture of one empty turn."""
    (tmp_path / "doc.json").write_bytes(SEED.read_bytes())
    (tmp_path / "u.yaml").write_text(
        "fixture: conversation-v1\nname: users\n"
        "config: {max_context: 100000, preserve_latest: 0}\nturns:\n"
        "  - append: [{role: user, content: hi}, {role: assistant, content: yo}]\n"
        "  - append: [{role: user, content: more}]\n", encoding="utf-8")
    (tmp_path / "e.yaml").write_text(
        "fixture: conversation-v1\nname: empty\nconfig: {max_context: 100}\n"
        "turns:\n  - {}\n", encoding="utf-8")
    for name, n in (("u", 2), ("e", 1)):
        r = run_cli("replay", "run", "doc.json", "-x", f"{name}.yaml", "-o", f"o/{name}.json",
                    cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        report = json.loads((tmp_path / "o" / f"{name}.json").read_text(encoding="utf-8"))
        got = {i["id"]: (i["verdict"], i["requests_checked"]) for i in report["invariants"]
               if i["id"].startswith("R")}
        assert got == {**dict.fromkeys(("R1", "R2", "R5", "R6", "R7", "R8", "R9"),
                                       (NOT_CHECKED, 0)),
                       "R3": (PASSED, n), "R4": (PASSED, n)}, name
