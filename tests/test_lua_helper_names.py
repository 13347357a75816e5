"""The calls read for the helper follower (luaflow ``_Helpers.every_call``): the arguments
of only the functions it may follow (``may_follow``) give the keys that reading the
arguments of every function's calls gives."""

from __future__ import annotations

import random

import pytest

from risutools.analysis import luaflow
from risutools.analysis.analyzer import analyze
from risutools.analysis.model import Analysis
from risutools.formats.model import Module

TEXTS = [
    # helpers of helpers, a field and a method helper, pcall, a helper named in a string
    "local function h1(id, k) setChatVar(id, k, '1') end\n"
    "local function h2(id, k) h1(id, 'p_' .. k) end\n"
    "local t = {}\nfunction t.put(id, k) h2(id, k) end\n"
    "function t:get(id, k) return getChatVar(id, k) end\n"
    "local function other(a, b, c) return a end\n"
    "function onStart(id)\n  h1(id, 'a') ; other(1, 2, h2(id, 'b'))\n"
    "  t.put(id, 'c') ; t:get(id, 'd') ; pcall(h1, id, 'e') ; print('h1(id, \"s\")')\nend",
    # a function of _G (called where its name is not written: every function read)
    "function _G.put(id, k) setChatVar(id, k, '1') end\nlocal K = 'put'\n"
    "local function mid(id, k) _G[K](id, k) end\n"
    "function onStart(id) mid(id, 'x') ; _G.put(id, 'y') end",
    # a qualified call of a deeper field, a helper never called, one called by name only
    "local function w(id, k) setState(id, k, 1) end\nlocal function unused(id, k) w(id, k) end\n"
    "function onStart(id) a.b.w(id, 'q') ; w(id, 'r') ; local f = w ; f(id, 's') end",
]


def _lua(code: str) -> Analysis:
    return analyze(Module({"name": "T", "trigger": [{"type": "start", "conditions": [],
                                                     "effect": [{"type": "triggerlua",
                                                                 "code": code}]}]}))


def _keys(code: str) -> object:
    a = _lua(code)
    return [(s.key, s.reads, s.writes) for s in a.state + a.computed_state]


def _random_texts(n: int) -> list[str]:
    rng = random.Random(46)
    names = ["h1", "h2", "h3", "w", "t.h1", "t:h2", "g"]
    out = []
    for _ in range(n):
        lines = ["local t = {}"]
        for fn in rng.sample(names, 4):
            inner = rng.choice(["setChatVar(id, k, '1')", "getState(id, k)",
                                *(f"{m}(id, '{rng.choice('xy')}' .. k)" for m in names)])
            lines.append(f"function {fn}(id, k) {inner} end")
        calls = [f"{rng.choice(names)}(id, '{rng.choice('abc')}')" for _ in range(4)]
        calls.append(f"pcall({rng.choice(['h1', 'w', 'g'])}, id, 'p')")
        lines.append("function onStart(id) " + " ; ".join(calls) + " end")
        out.append("\n".join(lines))
    return out


@pytest.mark.parametrize("code", TEXTS + _random_texts(150))
def test_only_the_helpers_followed_give_the_same_keys(code: str,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    fast = _keys(code)
    monkeypatch.setattr(luaflow._Helpers, "may_follow", lambda _self: None)
    assert _keys(code) == fast


def test_the_names_followed_are_fewer_than_every_function() -> None:
    got: list[set[str] | None] = []
    original = luaflow._Helpers.may_follow

    def spy(self: luaflow._Helpers) -> set[str] | None:
        got.append(original(self))
        return got[-1]

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(luaflow._Helpers, "may_follow", spy)
        _lua(TEXTS[0])
        _lua(TEXTS[1])
    assert got[0] == {"h1", "h2", "put", "get", "onStart"}  # not ``other``
    assert got[1] is None  # a function of _G: every function
