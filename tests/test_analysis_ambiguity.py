"""An alternation under ``*``/``+`` is catastrophic only when the repetition can match one
text in two ways (RA201 "overlapping-alternation").  Branches that merely start with the
same character (``(ab|a)*c``, ``(a|ab)*``, ``(ab|ac)*``) split every text one way only: a
backtracking engine tries a polynomial number of splits, and they are not reported any
more; ``(a|a)*``, ``(aa|a)*``, ``(a|ab|b)*`` still are.  Every pattern here is our own."""

from __future__ import annotations

import itertools
import random

import pytest

from risutools.analysis import analyze, regexcheck
from risutools.analysis.regexcheck import checked_risks
from risutools.formats.model import Module

OVERLAP = "overlapping-alternation"


def shapes(pattern: str, flags: str = "") -> set[str]:
    return {r.shape for r in checked_risks(pattern, flags)}


@pytest.mark.parametrize(("safe", "risky"), [
    ("(ab|a)*c", "(a|a)*c"),            # a before b is "ab", any other a is "a"
    ("(a|ab)*$", "(a|ab|b)*$"),         # "ab": one branch, or "a" then "b"
    ("(ab|ac)*", "(ab|a[bc])*"),        # the same first letter, different second ones
    ("(x(ab|a))*", "(x(ab|a)|xa)*"),
    ("((ab|a)*x)*", "((ab|a)*x|a)*"),   # the inner loop is read with the outer one
    ("((ab|a)c?)*", "((ab|a)b?)*"),
    ("(?:https?|ht)+:", "(?:https?|http)+:"),
    ("(abc|ab)*", "(abc|ab|c)*"),
    ("(ab|a){2,}$", "(aa|a){2,}$"),
    (r"(\w\d|[a-z])*!", r"(\w\d|\w)*!"),  # "a1": one pair, or \w twice
    ("(a[]|a)*", "(a|a[]?)*"),          # a branch that never matches is no second way
])
def test_only_an_alternation_that_splits_a_text_two_ways_is_reported(safe: str,
                                                                      risky: str) -> None:
    assert OVERLAP not in shapes(safe), safe
    assert OVERLAP in shapes(risky), risky


def test_flags_are_read_by_the_ambiguity_too() -> None:
    assert OVERLAP not in shapes("(ab|a)*c", "i") and OVERLAP in shapes("(ab|a|b)*c", "i")
    assert OVERLAP in shapes("(Ab|a|B)*c", "i") and OVERLAP not in shapes("(Ab|a|B)*c")


@pytest.mark.parametrize(("safe", "risky"), [
    ("(a(?=b)b|a)*", "(a(?=b)|a)*"),   # a lookaround is read as matching anything
    ("(a^b|a)*", "(a^|a)*"),
    ("(a$b|a)*", r"(a\1|a)*"),         # a back-reference matches any text
    ("(ab{2}|a)*", "(a{2}|aa)*"),      # a count loops like + here
])
def test_what_the_reading_cannot_follow_stays_reported(safe: str, risky: str) -> None:
    assert OVERLAP not in shapes(safe), safe
    assert OVERLAP in shapes(risky), risky


def _words_ambiguous(words: list[str], longest: int) -> bool:
    """Whether some text of at most ``longest`` letters splits into ``words`` two ways
    (counted by brute force)."""
    for n in range(1, longest + 1):
        for text in map("".join, itertools.product("ab", repeat=n)):
            ways = [1] + [0] * n
            for i in range(1, n + 1):
                ways[i] = sum(ways[i - len(w)] for w in words
                              if len(w) <= i and text[i - len(w):i] == w)
            if ways[n] > 1:
                return True
    return False


def test_word_alternations_agree_with_counting_the_splits() -> None:
    """``(w1|w2|...)*`` over a, b: reported exactly when some text splits two ways."""
    rng = random.Random(44)
    told = {True: 0, False: 0}
    for _ in range(400):
        words = ["".join(rng.choice("ab") for _ in range(rng.randint(1, 3)))
                 for _ in range(rng.randint(2, 4))]
        if len({w[0] for w in words}) == len(words):
            continue  # disjoint first letters: never reported (the old rule already)
        expected = _words_ambiguous(words, 12)
        told[expected] += 1
        pattern = "(" + "|".join(words) + ")*"
        assert (OVERLAP in shapes(pattern)) is expected, pattern
    assert told[True] > 50 and told[False] > 20


def test_the_reading_is_bounded_and_charged(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past its steps the answer is "reported" (never a missed risk), and the steps it took
    are the pattern's budget's."""
    wide = "(" + "|".join("ab" + chr(0xAC00 + i) for i in range(3000)) + "|a)*c"
    assert OVERLAP not in shapes(wide)  # 9,001 positions sharing "a": told within the steps
    monkeypatch.setattr(regexcheck, "_AMBIGUITY_STEPS", 50)
    assert OVERLAP in shapes(wide)  # not told: reported as before
    budget = regexcheck.Budget(regexcheck.steps_allowed(len(wide)))
    root = regexcheck.parse_pattern(wide, "", budget)
    checker = regexcheck._Checker(False, budget)
    before = budget.used
    checker.ambiguous(root.items[0] if root.kind == "seq" else root)
    assert budget.used > before


def test_a_regex_script_with_a_split_one_way_is_not_ra201() -> None:
    def ra201(pattern: str) -> bool:
        m = Module({"name": "R", "id": "r", "regex": [
            {"comment": "c", "in": pattern, "out": "x", "type": "editdisplay", "flag": "g"}]})
        return any(f.rule == "RA201" for f in analyze(m).findings)

    assert not ra201("(ab|a)*c") and not ra201("(?:<br>|<b>)+")
    assert ra201("(a|ab|b)*c") and ra201("(?:<br>|<br>)+")
