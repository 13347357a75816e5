"""``jsonlines.pointer_line`` (the walk that stops at a pointer) answers as the full
``jsonplaces.scan`` did for every pointer of a document, present or missing, in every
layout a parser accepts."""

from __future__ import annotations

import functools
import json
import random
from typing import Any

import pytest

from risutools import jsonlines
from risutools.jsonlines import pointer_line
from risutools.jsonplaces import escape_pointer_token, scan


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
        # (a key's colon without a space, and with two spaces after it)
        json.dumps(doc, ensure_ascii=False, separators=(",", ":")),
        json.dumps(doc, ensure_ascii=False, indent=1, separators=(",", ":  ")),
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
        try:  # (a fixture nested past the recursion limit: json or this walk refuses it)
            doc = json.loads(text)
            pointers = _pointers(doc)[:400]
        except (ValueError, RecursionError):
            continue
        for p in pointers:
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
        try:  # (as above)
            doc = json.loads(data.decode("utf-8"))
            pointers = _pointers(doc)[:400]
        except (ValueError, RecursionError):
            continue
        text = data.decode("utf-8")
        for p in pointers:
            assert pointer_line_bytes(data, p, doc) == _scan_line(text, p), (f, p)


# --------------------------------------------------------------------------- many pointers


def _asked_all(finder: jsonlines.PointerLines, pointers: list[str]) -> list[int | None]:
    return [finder.line(p) for p in pointers]


@pytest.mark.parametrize("block", [jsonlines.LINE_BLOCK, 1, 7])
def test_pointer_lines_answers_as_the_full_scan(monkeypatch: pytest.MonkeyPatch,
                                                block: int) -> None:
    """Many pointers of one document (every pointer, present or missing, shuffled and each
    asked twice, so most are answered from what earlier walks kept), over its bytes and
    over its text: every line is the full scan's (the line table's blocks as they are, of
    one character and of seven)."""
    monkeypatch.setattr(jsonlines, "LINE_BLOCK", block)
    rng = random.Random(2325 + block)
    checked = kept = 0
    for _ in range(150):
        for doc in (_plain_value(rng, 0), _value(rng, 0)):
            for text in _layouts(doc, rng):
                pointers = _pointers(doc) * 2
                rng.shuffle(pointers)
                want = [_scan_line(text, p) for p in pointers]
                by_bytes = jsonlines.PointerLines(doc, data=text.encode("utf-8"))
                by_text = jsonlines.PointerLines(doc, text=text)
                assert _asked_all(by_bytes, pointers) == want, text
                assert _asked_all(by_text, pointers) == want, text
                checked += len(pointers)
                kept += max(0, len(pointers) - jsonlines.FEW_LOOKUPS)
    assert checked > 20_000 and kept > 10_000  # most answered from what was kept


def test_pointer_lines_from_a_line_after_the_first() -> None:
    """An NDJSON-style start line is added to every answer, kept or not."""
    doc = {"a": [{"b": i} for i in range(30)]}
    text = json.dumps(doc, indent=1)
    finder = jsonlines.PointerLines(doc, text=text, first_line=41)
    for i in range(30):
        assert finder.line(f"/a/{i}/b") == 40 + _scan_line(text, f"/a/{i}/b")  # type: ignore[operator]


def test_pointer_lines_takes_bytes_or_text() -> None:
    with pytest.raises(ValueError):
        jsonlines.PointerLines({}, data=b"{}", text="{}")
    with pytest.raises(ValueError):
        jsonlines.PointerLines({})


def _count(v: Any) -> int:
    """The values of ``v``, itself included."""
    inner = v.values() if isinstance(v, dict) else v if isinstance(v, list) else ()
    return 1 + sum(_count(x) for x in inner)


@pytest.mark.parametrize("shape", ["array", "object"])
def test_pointer_lines_walks_a_container_once(monkeypatch: pytest.MonkeyPatch,
                                              shape: str) -> None:
    """A document with thousands of findings in one container (an array of 3,000 objects,
    or an object of 3,000 members) is walked once, whatever order its pointers are asked
    in: the values skipped stay within the document's values once, and once more for
    each of the first few lookups (walked from the start, nothing kept), where a walk from
    the start for every pointer skips about 4.5 million (and took 30 s for 16,000 unknown
    capabilities before)."""
    n = 3000
    inner: Any = ([{"k": i, "s": "x"} for i in range(n)] if shape == "array"
                  else {f"key{i}": [i] for i in range(n)})
    doc = {"head": "h", "many": inner}
    pointers = ([f"/many/{i}/k" for i in range(n)] if shape == "array"
                else [f"/many/key{i}/0" for i in range(n)])
    skipped = 0
    real = jsonlines._skip

    def counted(text: str, pos: int) -> int:
        nonlocal skipped
        skipped += 1
        return real(text, pos)

    monkeypatch.setattr(jsonlines, "_skip", counted)
    text = json.dumps(doc, indent=2)
    values = _count(doc)
    for order in (pointers, pointers[::-1]):
        skipped = 0
        finder = jsonlines.PointerLines(doc, data=text.encode("utf-8"))
        got = [finder.line(p) for p in order]
        assert got == [_scan_line(text, p) for p in order]
        assert skipped <= (jsonlines.FEW_LOOKUPS + 2) * values < n * n // 40, skipped


@pytest.mark.parametrize("escaped", [False, True])
def test_validate_gives_each_of_thousands_of_findings_its_own_line(
        tmp_path: Any, escaped: bool) -> None:
    """A document with 2,500 unknown capabilities (an MC401 warning each), written one to a
    line: the first 1,000 are listed (``MAX_LISTED``), each at the line its value is
    written on, counted here from the text (with a backslash in the text too: the loaders
    then keep the text, not the bytes); one more MC401 finding, at the document's line,
    says 1,500 more are not listed."""
    from pathlib import Path

    from risutools.contract.validate import MAX_LISTED, validate_paths

    root = Path(__file__).resolve().parents[1]
    doc = json.loads((root / "fixtures" / "documents" / "seed-000-context-cutter.json")
                     .read_text("utf-8"))
    n = 2500
    doc["capabilities"]["requires"] = [f"hook.not_known_{i}" for i in range(n)]
    if escaped:
        doc["payload"]["note"] = "a \\ backslash"
    text = json.dumps(doc, ensure_ascii=False, indent=2)
    f = tmp_path / "many.json"
    f.write_text(text, "utf-8")
    written = {line.strip().rstrip(","): i
               for i, line in enumerate(text.splitlines(), 1) if "hook.not_known_" in line}
    result = validate_paths([f])
    mc401 = [x for d in result.documents for x in d.findings if x.rule == "MC401"]
    listed = [x for x in mc401 if "not_known" in x.message]
    assert MAX_LISTED == 1000 and len(listed) == MAX_LISTED
    for x in listed:
        i = int(x.pointer.rsplit("/", 1)[1])
        assert i < MAX_LISTED and x.line == written[f'"hook.not_known_{i}"'], x
    rest = [x for x in mc401 if "not_known" not in x.message]
    assert [(x.line, x.pointer, x.severity) for x in rest] == [(1, "", "warning")]
    assert rest[0].message.startswith("1,500 more MC401 findings in this document")


def test_the_walk_past_long_runs_answers_as_the_full_scan() -> None:
    """Past the walk's windows (``WINDOW`` strings or escapes a match): arrays of more
    strings than a window, strings and keys of more escapes than a window (and than the
    16 a string inside a container takes in one match), at every pointer."""
    w = jsonlines.WINDOW
    many = "\\" + '"' + "\n\t"
    doc = {
        "strings": [f"s{i}" for i in range(3 * w + 5)],
        "escaped": ["\n" * n for n in (0, 1, 15, 16, 17, 40, w - 1, w, w + 1, 3 * w)],
        many * w: {"after": [many * (w + 3), {"k": many * 17}]},
        "mixed": [{"a": many * n, many * n: n} for n in range(0, 2 * w, 37)],
        "last": True,
    }
    for text in (json.dumps(doc, indent=1), json.dumps(doc, ensure_ascii=False)):
        pointers = _pointers(doc)
        finder = jsonlines.PointerLines(doc, text=text)
        for p in pointers:
            want = _scan_line(text, p)
            assert pointer_line(text, p, doc=doc) == want, p[:80]
            assert pointer_line(text, p) == want, p[:80]
            assert finder.line(p) == want, p[:80]


def test_the_walk_holds_no_memory_for_a_run(tmp_path: Any) -> None:
    """The values skipped to reach a pointer are matched a window at a time: a long array
    of strings and a string of 2 million escapes add no more than a few MB to a process
    (the unbounded patterns held about 400 MB for each; in a child, so the peak is
    its own)."""
    import subprocess
    import sys
    from pathlib import Path

    script = (
        "import json, sys\n"
        "from risutools.jsonlines import pointer_line\n"
        # (VmHWM: this process's own peak; ru_maxrss starts at the test runner's, carried
        # over the exec, and a growth below it would read 0)
        "def hwm():\n"
        "    return int(next(ln for ln in open('/proc/self/status')"
        " if ln.startswith('VmHWM')).split()[1])\n"
        "t = json.dumps({'a': ['u%d' % i for i in range(700000)], 'b': '\\n' * 2000000,"
        " 'c': 1})\n"
        "before = hwm()\n"
        "assert pointer_line(t, '/c') == 1\n"
        "print(hwm() - before)\n")
    root = Path(__file__).resolve().parents[1]
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"}, check=True)
    assert int(done.stdout) < 20_000, done.stdout  # KiB


@pytest.mark.parametrize(("text", "want"), [
    (b'{"k": 1}', (1, 6)),  # (the usual spelling, read without the pattern)
    (b'{"k":1}', (1, 5)),
    (b'{"k" : 1}', (1, 7)),
    (b'{"k":  1}', (1, 7)),  # (two spaces: the value after both)
    (b'{"k": \n  1}', (1, 9)),
    (b'{"k":\t1}', (1, 6)),
    (b'{"k": ', (1, 6)),  # (the text ends after the colon's space)
    (b'{"a": "k"}', None),  # (found, but a value: no colon follows)
    (b'{"k": 1, "x": {"k": 2}}', None),  # (found twice)
    (b'{"x": 1}', None),
])
def test_key_once_finds_the_value_past_the_colon(text: bytes, want: tuple[int, int] | None
                                                 ) -> None:
    """Where the key starts and where its value does, whatever the spaces around the colon
    (the usual ``": "`` read without the pattern, the same answer)."""
    assert jsonlines._key_once(text, b'"k"', 0) == want
