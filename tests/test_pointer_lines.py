"""``jsonlines.pointer_line`` (the walk that stops at a pointer) answers as the full
``jsonlines.scan`` did for every pointer of a document, present or missing, in every
layout a parser accepts."""

from __future__ import annotations

import functools
import json
import random
from typing import Any

import pytest

from risutools import jsonlines
from risutools.jsonlines import escape_pointer_token, pointer_line, scan


@functools.lru_cache(maxsize=64)
def _lines(text: str) -> dict[str, int]:
    return scan(text).lines


def _scan_line(text: str, pointer: str) -> int | None:
    """The lookup the loaders did before: the full scan, then the nearest parent."""
    lines = _lines(text)
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
                assert pointer_line(text, p, doc=doc) == _scan_line(text, p), (text, p)
                checked += 1
    assert checked > 4_000


_PLAIN_KEYS = ["a", "b/c", "~t", "키", "", "0", "1e5", ",", "true", ": ", "x y", "null", "😀",
               "p q", "a0", "k"]


def _plain_value(rng: random.Random, depth: int) -> Any:
    """Values without a backslash in their JSON text (the key lookup's case), with strings
    equal to keys and keys made of what lies between strings."""
    kind = rng.random()
    if depth > 4 or kind < 0.35:
        return rng.choice(["a0", "k1", '"', "s", "줄", "", 0, -1.5e3, True, None, ", ", "k",
                           "{[}]", "/", "true", "p q2", ": 0"])
    if kind < 0.7:
        return {rng.choice(_PLAIN_KEYS) + rng.choice(["", "0", "1", "2"]):
                _plain_value(rng, depth + 1) for _ in range(rng.randrange(6))}
    return [_plain_value(rng, depth + 1) for _ in range(rng.randrange(5))]


def test_pointer_line_with_the_document_answers_as_the_full_scan(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """With the parsed value at hand, a member is found by its quoted key when that text is
    there once (no backslash in the text): the same line as the scan, on texts built to
    mislead that lookup (strings equal to keys, keys of punctuation and literals, the same
    key at several depths)."""
    rng = random.Random(2323)
    checked = fast = 0
    found = []
    real = jsonlines._unique_key
    monkeypatch.setattr(jsonlines, "_unique_key",
                        lambda *a: found.append(real(*a)) or found[-1])
    for _ in range(300):
        doc = _plain_value(rng, 0)
        for text in _layouts(doc, rng):
            for p in _pointers(doc):
                want = _scan_line(text, p)
                assert pointer_line(text, p, doc=doc) == want, (text, p)
                checked += 1
                fast += "\\" not in text
    assert checked > 8_000 and fast > 4_000
    assert sum(f is not None for f in found) > 2_000  # the key lookup answered
    assert sum(f is None for f in found) > 500  # and declined


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
            assert pointer_line(text, p, doc=doc) == _scan_line(text, p), (f, p)


def test_pointer_line_on_text_that_is_not_json_answers_as_the_scan() -> None:
    for text in ['{"a": [1, 2', '{"a" 1}', '[1,, 2]', '{"a": "open', '}{', "", "  "]:
        for p in ("", "/a", "/a/1", "/0"):
            assert pointer_line(text, p) == _scan_line(text, p), (text, p)


def test_pointer_line_bytes_answers_as_the_full_scan(monkeypatch: pytest.MonkeyPatch) -> None:
    """The walk over a document's UTF-8 bytes gives every pointer the scan's line, on the
    same misleading texts (and on texts with backslashes and arrays, which it hands to the
    walk over the text); most lookups are answered over the bytes."""
    from risutools.jsonlines import pointer_line_bytes

    rng = random.Random(2324)
    checked = handed = 0
    real = jsonlines.pointer_line

    def counted(*a: Any, **k: Any) -> int | None:
        nonlocal handed
        handed += 1
        return real(*a, **k)

    monkeypatch.setattr(jsonlines, "pointer_line", counted)
    for _ in range(200):
        for doc in (_plain_value(rng, 0), _value(rng, 0)):
            for text in _layouts(doc, rng):
                data = text.encode("utf-8")
                for p in _pointers(doc):
                    assert pointer_line_bytes(data, p, doc) == _scan_line(text, p), (text, p)
                    checked += 1
    assert checked > 8_000
    assert checked - handed > 1_000 and handed > 2_000  # both ways taken


def test_pointer_line_bytes_on_the_fixture_documents() -> None:
    from pathlib import Path

    from risutools.jsonlines import pointer_line_bytes

    root = Path(__file__).resolve().parents[1] / "fixtures"
    for f in sorted(root.rglob("*.json")):
        data = f.read_bytes()
        try:
            doc = json.loads(data.decode("utf-8"))
        except (ValueError, RecursionError):
            continue
        text = data.decode("utf-8")
        for p in _pointers(doc)[:400]:
            assert pointer_line_bytes(data, p, doc) == _scan_line(text, p), (f, p)
