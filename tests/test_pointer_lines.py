"""``jsonlines.pointer_line`` (the walk that stops at a pointer) answers as the full
``jsonlines.scan`` did for every pointer of a document, present or missing, in every
layout a parser accepts."""

from __future__ import annotations

import json
import random
from typing import Any

from risutools.jsonlines import escape_pointer_token, pointer_line, scan


def _scan_line(text: str, pointer: str) -> int | None:
    """The lookup the loaders did before: the full scan, then the nearest parent."""
    lines = scan(text).lines
    p = pointer
    while True:
        if p in lines:
            return lines[p]
        if not p:
            return None
        p = p.rsplit("/", 1)[0]


def _pointers(v: Any, p: str = "") -> list[str]:
    out = [p]
    if isinstance(v, dict):
        for k, x in v.items():
            out += _pointers(x, f"{p}/{escape_pointer_token(k)}")
        out.append(f"{p}/missing")
    elif isinstance(v, list):
        for i, x in enumerate(v):
            out += _pointers(x, f"{p}/{i}")
        out += [f"{p}/{len(v)}", f"{p}/01", f"{p}/-"]
    return out


_KEYS = ["a", "b/c", "~t", "ключ", "키", "\"q\"", "back\\slash", "", "0", "é\u0301", "😀",
         "tab\t", "x" * 30]


def _value(rng: random.Random, depth: int) -> Any:
    kind = rng.random()
    if depth > 4 or kind < 0.35:
        return rng.choice(["s", "with \"quote\" and \\", "줄\n바꿈", "", 0, -1.5e3, True,
                           None, False, 12345678901234567890, "{[}]", "😀 \u2028", "/"])
    if kind < 0.7:
        return {rng.choice(_KEYS) + str(rng.randrange(3)): _value(rng, depth + 1)
                for _ in range(rng.randrange(5))}
    return [_value(rng, depth + 1) for _ in range(rng.randrange(5))]


def _layouts(doc: Any, rng: random.Random) -> list[str]:
    return [
        json.dumps(doc, ensure_ascii=False, indent=1),
        json.dumps(doc, ensure_ascii=True, indent=2),
        json.dumps(doc, ensure_ascii=False),
        json.dumps(doc, ensure_ascii=False, indent=1, separators=(" ,\n", " :\r\n\t")),
        "\n\n  " + json.dumps(doc, ensure_ascii=True, indent="\t") + "\n \n",
    ]


def test_pointer_line_answers_as_the_full_scan() -> None:
    rng = random.Random(23)
    checked = 0
    for _ in range(120):
        doc = _value(rng, 0)
        for text in _layouts(doc, rng):
            for p in _pointers(doc):
                assert pointer_line(text, p) == _scan_line(text, p), (text, p)
                checked += 1
    assert checked > 4_000


def test_pointer_line_on_the_fixture_documents() -> None:
    from pathlib import Path

    root = Path(__file__).resolve().parents[1] / "fixtures"
    for f in sorted(root.rglob("*.json")):
        text = f.read_text("utf-8", errors="replace")
        try:
            doc = json.loads(text)
        except (ValueError, RecursionError):
            continue
        for p in _pointers(doc)[:400]:
            assert pointer_line(text, p) == _scan_line(text, p), (f, p)


def test_pointer_line_on_text_that_is_not_json_answers_as_the_scan() -> None:
    for text in ['{"a": [1, 2', '{"a" 1}', '[1,, 2]', '{"a": "open', '}{', "", "  "]:
        for p in ("", "/a", "/a/1", "/0"):
            assert pointer_line(text, p) == _scan_line(text, p), (text, p)
