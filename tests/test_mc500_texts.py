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
