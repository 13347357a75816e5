"""MC500's fast path lists a section's strings a level at a time (``_all_texts``): every
string the pointer walk (``_texts``) gives is there, whatever the value holds."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path
from typing import Any

from risutools.contract import rules


class _Dict(dict):  # type: ignore[type-arg]
    pass


class _List(list):  # type: ignore[type-arg]
    pass


class _Str(str):
    pass


def _value(rng: random.Random, depth: int) -> Any:
    k = rng.random()
    if depth > 5 or k < 0.4:
        return rng.choice(["a", "", "키", _Str("sub"), 1, 2.5, None, True, ("t", "u"),
                           "namespace", "x = y;"])
    if k < 0.7:
        d: dict[Any, Any] = rng.choice([dict, _Dict])()
        for _ in range(rng.randrange(5)):
            key = rng.choice(["namespace", "controller", "prompt_sha256", "k", "v", 3,
                              _Str("s")])
            d[key] = _value(rng, depth + 1)
        return d
    return rng.choice([list, _List])(_value(rng, depth + 1) for _ in range(rng.randrange(5)))


def test_every_string_of_the_walk_is_listed() -> None:
    rng = random.Random(500)
    for _ in range(3000):
        section = rng.choice(["payload", "projection", "other"])
        v = _value(rng, 0)
        walked = Counter(rules._texts(section, v))
        listed = Counter(rules._all_texts(section, v))
        assert not walked - listed, (section, v)


def test_plain_documents_list_exactly_the_walk() -> None:
    root = Path(__file__).resolve().parents[1] / "fixtures" / "documents"
    for f in sorted(root.glob("*.json")):
        doc = json.loads(f.read_text("utf-8"))
        for section in ("payload", "projection"):
            assert Counter(rules._all_texts(section, doc.get(section))) == \
                Counter(rules._texts(section, doc.get(section))), f


def test_fresh_texts_hold_every_string_checked_that_is_not_known_prose() -> None:
    """The fast path's strings (``_fresh_texts``): every string of the pointer walk of
    payload and projection that is not remembered as prose, as many times as the walk
    gives it, whatever the document holds (subclasses, tuples, other keys: the slow
    listing); for plain documents exactly those."""
    rng = random.Random(501)
    saved, saved_shapes = dict(rules._PROSE), dict(rules._PROSE_SHAPES)
    try:
        rules._PROSE.clear()
        rules._PROSE_SHAPES.clear()  # (the shapes: their own test below)
        rules._PROSE.update(dict.fromkeys(["a", "namespace"]))
        for _ in range(3000):
            doc = {name: _value(rng, 0) for name in ("payload", "projection", "other")
                   if rng.random() < 0.8}
            walked = Counter(t for name in ("payload", "projection")
                             for t in rules._texts(name, doc.get(name))
                             if t not in rules._PROSE)
            listed = Counter(rules._fresh_texts(doc))
            assert not walked - listed, doc
        root = Path(__file__).resolve().parents[1] / "fixtures" / "documents"
        for f in sorted(root.glob("*.json")):
            doc = json.loads(f.read_text("utf-8"))
            doc["payload"]["x-copy"] = [doc["projection"].get("prompt_sha256"), "a", "b"]
            walked = Counter(t for name in ("payload", "projection")
                             for t in rules._texts(name, doc.get(name))
                             if t not in rules._PROSE)
            assert Counter(rules._fresh_texts(doc)) == walked, f
    finally:
        rules._PROSE.clear()
        rules._PROSE.update(saved)
        rules._PROSE_SHAPES.update(saved_shapes)


def test_prose_remembered_by_shape_and_code_never() -> None:
    """A sentence known to be prose is known with other numbers too (not looked at
    again); code is never remembered, whatever its numbers; a text with ``v2`` is
    remembered as itself only."""
    from risutools.settings.config import Settings

    saved, saved_shapes = dict(rules._PROSE), dict(rules._PROSE_SHAPES)
    looked: list[str] = []
    real = rules.find_active_code

    def counted(text: str) -> str | None:
        looked.append(text)
        return real(text)

    def mc500(summary: str) -> list[tuple[str, str]]:
        doc = {"payload": {}, "projection": {"summary": summary}}
        looked.clear()
        return list(rules.mc500(doc, Settings()))

    try:
        rules._PROSE.clear()
        rules._PROSE_SHAPES.clear()
        rules.find_active_code = counted  # type: ignore[assignment]
        assert mc500("It carries 6 lorebook entries (3 of them always on).") == []
        assert looked
        assert mc500("It carries 8 lorebook entries (7 of them always on).") == []
        assert looked == [""]  # nothing fresh: the join of no strings
        assert mc500("It carries 12 lorebook entries (7 of them always on).") == []
        assert looked and looked[0] != ""  # another shape: one digit more
        for n in ("1", "2"):
            found = mc500(f"local x = {n}\nif x == {n} then print(x) end")
            assert found and found[0][0] == "/projection/summary"
        assert mc500("uses the v2 API (3 calls)") == []
        assert mc500("uses the v2 API (4 calls)") == []
        assert looked and looked[0] == "uses the v2 API (4 calls)"  # looked at again
    finally:
        rules.find_active_code = real  # type: ignore[assignment]
        rules._PROSE.clear()
        rules._PROSE.update(saved)
        rules._PROSE_SHAPES.clear()
        rules._PROSE_SHAPES.update(saved_shapes)
