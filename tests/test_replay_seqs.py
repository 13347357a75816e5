"""The sorted lists of message positions the cutter and the checker's mirror keep
(``replay/seqs.py``): a :class:`Blocked` list answers as the plain list does; the moves of
deletes and inserts are counted and, past their allowance, a long one makes its list
blocked; a replay whose every list is made blocked at its first move says what the plain
one says (and what the plain-pass oracle says); the anchor is found as the step-by-step
search found it; and a fixture that deletes a long history from its oldest message moves
no more than the allowance."""

from __future__ import annotations

import bisect
import random
from typing import Any

import pytest
from replay_cases import toggled

from risutools.replay import seqs
from risutools.replay.checker import WARNINGS, InvariantChecker
from risutools.replay.cutter import ContextCutter, CutterState
from risutools.replay.fixture import Fixture, build_fixture
from risutools.replay.run import apply_turn, iterate_cutter
from risutools.replay.seqs import Blocked, Moves, rank
from risutools.replay.synth import synthesize
from risutools.settings.replay import build_config, load_replay_config
from tests.test_replay_checker_incremental import run_three_ways, summary


def _blocked(values: list[int]) -> list[int]:
    made: Any = Blocked(values)
    return made  # type: ignore[no-any-return]


@pytest.mark.parametrize("seed", range(6))
def test_a_blocked_list_answers_as_the_plain_one(seed: int) -> None:
    """Every operation the callers make (append of the largest, insert at the bisected
    place, del of an index, an index, a slice, len, rank with and without bounds), at
    random, on a plain list and a Blocked one (past a block's size)."""
    rng = random.Random(seed)
    plain: list[int] = []
    blocked = _blocked([])
    top = 0
    for _ in range(6000):
        op = rng.random()
        if op < 0.45 or not plain:
            top += rng.randint(1, 3)
            plain.append(top)
            blocked.append(top)
        elif op < 0.6:
            v = rng.randint(0, top)  # (below the largest: appends stay the largest)
            if v not in plain:
                at = bisect.bisect_left(plain, v)
                plain.insert(at, v)
                blocked.insert(rank(blocked, v), v)
        elif op < 0.85:
            at = rng.randrange(len(plain)) if rng.random() < 0.5 else 0
            del plain[at]
            del blocked[at]
        else:
            v = rng.randint(-1, top + 2)
            lo = rng.randint(0, len(plain))
            hi = rng.randint(lo, len(plain))
            assert rank(blocked, v) == rank(plain, v) == bisect.bisect_left(plain, v)
            assert rank(blocked, v, lo, hi) == bisect.bisect_left(plain, v, lo, hi)
            assert rank(plain, v, lo, hi) == bisect.bisect_left(plain, v, lo, hi)
            assert blocked[lo:hi] == plain[lo:hi]
            if plain:
                i = rng.randrange(len(plain))
                assert blocked[i] == plain[i] and blocked[-1] == plain[-1]
        assert len(blocked) == len(plain)
    assert list(blocked) == plain and len(plain) > 1500
    bisect.insort(blocked, top + 10)  # (bisect's own insort: Blocked.insert, sorted place)
    bisect.insort(blocked, -5)
    assert list(blocked) == [-5, *plain, top + 10]


def test_short_moves_are_not_counted_and_long_ones_past_the_allowance_block() -> None:
    moves = Moves()
    values = list(range(seqs.MOVES_AT_ONCE * 4))
    # a move of at most MOVES_AT_ONCE entries: never counted, the list stays as it is
    assert moves.ready(values, len(values) - seqs.MOVES_AT_ONCE, 10) is values
    assert moves.moved == 0
    # a longer one: counted; within the allowance, the same list
    assert moves.ready(values, 0, 0) is values
    assert moves.moved == len(values)
    # past the allowance (MOVES_FREE, and MOVES_A_MESSAGE a message): a Blocked list
    moves.moved = seqs.MOVES_FREE + seqs.MOVES_A_MESSAGE * 10
    made = moves.ready(values, 0, 10)
    assert type(made) is Blocked and list(made) == values and made is not values
    assert moves.ready(values, 0, 10 ** 6) is values  # (more messages: more allowed)
    # a Blocked one is handed back as it is, its moves not counted
    counted = moves.moved
    assert moves.ready(made, 0, 10) is made and moves.moved == counted


@pytest.fixture
def every_list_blocked(monkeypatch: pytest.MonkeyPatch) -> list[Blocked]:
    """Each list made Blocked at its first move (no allowance); the lists made so."""
    monkeypatch.setattr(seqs, "MOVES_AT_ONCE", 0)
    monkeypatch.setattr(seqs, "MOVES_FREE", 0)
    monkeypatch.setattr(seqs, "MOVES_A_MESSAGE", 0)
    made: list[Blocked] = []

    class Counted(Blocked):
        def __init__(self, values: list[int]) -> None:
            super().__init__(values)
            made.append(self)

    monkeypatch.setattr(seqs, "Blocked", Counted)
    return made


def _few_texts(seed: int, messages: int) -> dict[str, Any]:
    """A conversation of a few texts said again and again (long lists of equal texts),
    tool calls and their results, edits into those texts and deletes, the oldest often."""
    rng = random.Random(seed)
    texts = ["네.", "ok", "알겠어요, 계속할게요.", "the sword went back into its sheath."]
    live: list[str] = []
    turns: list[dict[str, Any]] = []
    n = 0
    while n < messages:
        turn: dict[str, Any] = {}
        roles = ["user", "assistant"] + (["tool"] if rng.random() < 0.15 else [])
        turn["append"] = [{"id": f"m{n + i}", "role": r, "content": rng.choice(texts)}
                          for i, r in enumerate(roles)]
        live += [m["id"] for m in turn["append"]]
        n += len(roles)
        if live and rng.random() < 0.3:
            turn["edit"] = [{"id": rng.choice(live), "content": rng.choice(texts)}]
        if len(live) > 8 and rng.random() < 0.35:
            gone = live.pop(0 if rng.random() < 0.7 else rng.randrange(len(live) - 4))
            turn["delete"] = [{"id": gone}]
        turns.append(turn)
    return {"fixture": "conversation-v1", "name": f"few-texts-{seed}",
            "messages": [{"id": "s", "role": "system", "content": "x"}], "turns": turns,
            "config": {"max_context": 160, "preserve_latest": 3, "tokenizer_profile": 1,
                       "message_overhead": 2}}


def _fixtures() -> list[tuple[str, Fixture]]:
    synth = synthesize(7, 900, edit_rate=0.3, delete_rate=0.2, tool_rate=0.15,
                       config={"max_context": 700, "preserve_latest": 4})
    return [("few-texts", build_fixture(_few_texts(1, 1200))),
            ("few-texts-switched", build_fixture(toggled(_few_texts(2, 1200), 50, 20, 30))),
            ("synth", build_fixture(toggled(synth, 60, 20, 35)))]


def _replayed(fx: Fixture) -> list[Any]:
    """Each request's result and output, and the checkers' verdicts (the quick one, the
    reference one), request by request."""
    cfg = load_replay_config(None, fx.config)
    quick, plain = InvariantChecker(cfg), InvariantChecker(cfg)
    plain.quick = False
    said: list[Any] = []
    for turn, res, obs in iterate_cutter(fx, cfg):
        assert obs is not None
        quick.check(obs)
        plain.check(obs)
        said.append((turn.number, res))
    said.append((summary(quick), summary(plain)))
    assert said[-1][0] == said[-1][1]
    return said


def test_a_replay_with_every_list_blocked_says_the_same(
        every_list_blocked: list[Blocked], monkeypatch: pytest.MonkeyPatch) -> None:
    blocked = {name: _replayed(fx) for name, fx in _fixtures()}
    made = list(every_list_blocked)
    monkeypatch.undo()
    for name, fx in _fixtures():
        assert _replayed(fx) == blocked[name], name
    # not vacuous: lists were made blocked, and grew long so (the positions' lists)
    assert len(made) > 100 and max(map(len, made)) > 200, len(made)


@pytest.mark.parametrize("blocked", [False, True])
def test_the_plain_pass_oracle_agrees_with_lists_blocked_or_not(
        blocked: bool, every_list_blocked: list[Blocked], monkeypatch: pytest.MonkeyPatch) -> None:
    """The reference cutter, the checker fed lists and the one fed changes, against the
    oracle that reads each request's lists whole (anchors and cuts by their definitions)."""
    if not blocked:
        monkeypatch.undo()
    fx = build_fixture(_few_texts(3, 500))
    for layer in ({"max_context": 120, "preserve_latest": 2, "tokenizer_profile": 1},
                  {"max_context": 300, "preserve_latest": 5, "trim_percent": 40,
                   "tokenizer_profile": 1}):
        want, by_list, by_change = run_three_ways(fx, build_config(layer), ContextCutter)
        assert by_list == want and by_change == want, layer
        # (R9, a warning, fails here: results kept whose call was cut, as the spec allows)
        assert all(f == 0 for k, (f, _, _) in want.items() if k not in WARNINGS), layer
    assert bool(every_list_blocked) == blocked


def _searched(poses: list[int], t: int) -> tuple[int, int]:
    """The step-by-step search the anchor was found by (before stop 54): the first of
    ``poses`` (non-decreasing) at or past ``t``, then the nearer of it and the one before,
    ties to the later; (its index, its position)."""
    lo, hi = 0, len(poses)
    while lo < hi:
        mid = (lo + hi) // 2
        if poses[mid] >= t:
            hi = mid
        else:
            lo = mid + 1
    pick = lo
    if lo == len(poses) or (lo > 0 and t - poses[lo - 1] < poses[lo] - t):
        pick = lo - 1
    return pick, poses[pick]


def _both(fx: Fixture) -> tuple[ContextCutter, InvariantChecker]:
    """A cutter given every operation of the fixture (no request made), and the checker
    after the whole replay."""
    cfg = load_replay_config(None, fx.config)
    cutter = ContextCutter(cfg)
    for m in fx.messages:
        cutter.append(m)
    for turn in fx.turns:
        apply_turn(cutter, turn)
    checker = InvariantChecker(cfg)
    for _turn, _res, obs in iterate_cutter(fx, cfg):
        assert obs is not None
        checker.check(obs)
    return cutter, checker


@pytest.mark.parametrize("seed", [4, 5])
@pytest.mark.parametrize("blocked", [False, True])
def test_the_anchor_is_found_where_the_search_found_it(
        seed: int, blocked: bool, every_list_blocked: list[Blocked],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The cutter's continuity step and the mirror's, for every text said several times,
    every omitted count and several caps, against the step-by-step search."""
    if not blocked:
        monkeypatch.undo()
    cutter, checker = _both(build_fixture(_few_texts(seed, 700)))
    m = checker.mirror
    m._index_upto()  # (every live message in ``texts``: it indexes them when asked)
    n_np = m.n_np
    asked = 0
    for sig, at in list(cutter._sigs.items()):
        for n_r in (0, n_np // 3, n_np - 2, n_np):
            poses = [min(cutter._cnt.prefix(s), n_r) for s in at]
            for t in range(0, n_np + 2, 3):
                cutter.state = CutterState(t, sig, 0)
                assert cutter.continuity(n_r) == (_searched(poses, t)[1], "found")
                asked += 1
    texts = [(k, v) for k, v in m.texts.items() if not isinstance(v, int)]
    for _sig, at in texts:
        for n_r in (0, n_np // 3, n_np - 2, n_np):
            poses = [min(bisect.bisect_left(list(m.np_seqs), s), n_r) for s in at]
            for t in range(0, n_np + 2, 3):
                pick, want = _searched(poses, t)
                assert m._nearest(at, t, n_r) == want
                assert m._before_anchor[0] == at[pick]
                asked += 1
    assert asked > 1000 and any(len(at) > 50 for _, at in texts)
    assert bool(every_list_blocked) == blocked


def test_deleting_a_long_history_from_its_oldest_moves_within_the_allowance(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """3,000 messages of one text deleted from the oldest, one a turn: with an allowance
    of 2 entries a message, the lists are made blocked and what the deletes moved stays
    within it (each delete would move the whole list: 4.5 million entries)."""
    monkeypatch.setattr(seqs, "MOVES_AT_ONCE", 16)
    monkeypatch.setattr(seqs, "MOVES_FREE", 0)
    monkeypatch.setattr(seqs, "MOVES_A_MESSAGE", 2)
    n = 3000
    turns: list[dict[str, Any]] = [{"append": [{"id": f"m{i}", "role": "user",
                                                "content": "ok"} for i in range(n)]}]
    turns += [{"delete": [{"id": f"m{i}"}]} for i in range(n - 1)]
    fx = build_fixture({"fixture": "conversation-v1", "name": "oldest-first",
                        "messages": [{"id": "s", "role": "system", "content": "x"}],
                        "turns": turns, "config": {"max_context": 100000}})
    cutter, checker = _both(fx)
    for moves in (cutter._moves, checker.mirror._moves):
        # (past the allowance by one move at most a list: the one that made it blocked)
        assert 2 * (n + 1) < moves.moved <= 2 * (n + 1) + 2 * n, moves.moved
    assert type(checker.mirror.np_seqs) is Blocked
    assert all(type(at) is Blocked for at in cutter._sigs.values())
    assert not checker.failed() and checker.verdicts["R1"].checked == n
