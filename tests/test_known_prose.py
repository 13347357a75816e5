"""MC500 over a batch at once (issue 23): a batch's JSON files walked together
(``values.fast_json_texts_many``: the guards' level walk once over them all) and their
strings looked at together (``rules.known_prose``), with the same values, bytes and
findings as one file at a time.  The prose memory is emptied for each test."""

from __future__ import annotations

import copy
import json
import random
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from harness import SEED

from risutools.canonical import plain_levels_texts
from risutools.contract import rules
from risutools.contract.loaders import document_batches
from risutools.contract.rules import active_code, known_prose
from risutools.contract.validate import validate_document, validate_paths
from risutools.values import fast_json_texts, fast_json_texts_many

KEYS = rules.ACTIVE_CODE_SECTIONS

#: three sentences that are prose each, but trip the detector's statement counts together
#: (an assignment and three ``;``): one document's prose among many others'
SEMI_A = "The lorebook adds no hook; it only keeps notes; the chat reads them on its own."
SEMI_B = "It adds no hook; its notes are read by the chat itself, like any lorebook."
ASSIGN = "The summary runs only when the chat variable auto_sum = 1."
CODE = "local n = 0; for i = 1, 3 do n = n + i end; return n"


@pytest.fixture(autouse=True)
def _nothing_known(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rules, "_PROSE", {})
    monkeypatch.setattr(rules, "_PROSE_SHAPES", {})


def _doc(i: int, summary: str | None = None, namespace: str | None = None) -> dict[str, Any]:
    d: dict[str, Any] = json.loads(SEED.read_text(encoding="utf-8"))
    d["component_id"] = f"module.risu.prose-{i}"
    if summary is not None:
        d["projection"]["summary"] = summary
    if namespace is not None:
        d["payload"]["namespace"] = namespace
    return d


def _found(docs: list[dict[str, Any]]) -> list[str]:
    texts: list[str] = []
    for d in docs:
        one = plain_levels_texts(d, KEYS)
        assert one is not None and one[1] is not None
        texts += one[1]
    return texts


def test_prose_is_known_then_remembered() -> None:
    docs = [_doc(i, f"A plain sentence about document {i}.") for i in range(5)]
    assert known_prose(docs, _found(docs))
    assert "A plain sentence about document 3." in rules._PROSE or rules._PROSE_SHAPES
    assert known_prose(docs, _found(docs))


def test_code_in_one_document_is_not_prose() -> None:
    docs = [_doc(0, "plain words"), _doc(1, CODE), _doc(2, "more plain words")]
    assert not known_prose(docs, _found(docs))
    assert CODE not in rules._PROSE
    assert [bool(list(active_code(d, None))) for d in docs] == [False, True, False]


def test_prose_that_trips_the_detector_only_joined_is_prose() -> None:
    """The join of many documents' strings may pass the detector's thresholds where no
    string does: each is then asked alone."""
    docs = [_doc(0, SEMI_A), _doc(1, SEMI_B), _doc(2, ASSIGN)]
    assert rules.find_active_code("\n".join([SEMI_A, SEMI_B, ASSIGN])) is not None
    assert known_prose(docs, _found(docs))  # (first: active_code remembers what it reads)
    assert SEMI_A in rules._PROSE
    rules._PROSE.clear()
    assert all(not list(active_code(d, None)) for d in docs)


def test_a_skipped_field_is_skipped_once_a_document() -> None:
    """Code in a field MC500 skips (payload.namespace) is no finding; the same code in
    another document's field that MC500 reads is one."""
    alone = [_doc(0, namespace=CODE), _doc(1)]
    assert known_prose(alone, _found(alone))
    both = [_doc(0, namespace=CODE), _doc(1, summary=CODE)]
    assert not known_prose(both, _found(both))
    assert [bool(list(active_code(d, None))) for d in both] == [False, True]


def test_less_skipped_is_a_multiset_difference() -> None:
    """_less_skipped: each string of ``fresh`` as many times fewer as ``skipped`` holds it
    (kept when any is left), once, in ``fresh``'s order: with every string once in
    ``fresh`` (a set says it) and with some repeated (counted)."""
    rng = random.Random(3)
    words = ["risu.module", "user", CODE, "a", "b", "c", "sha256:" + "0" * 64, "ok"]
    for _ in range(300):
        fresh = [rng.choice(words) for _ in range(rng.randrange(0, 9))]
        if rng.random() < 0.5:
            fresh = list(dict.fromkeys(fresh))
        skipped = [rng.choice(words) for _ in range(rng.randrange(0, 9))]
        left = Counter(fresh) - Counter(skipped)
        want = [t for t in dict.fromkeys(fresh) if left[t] > 0]
        assert rules._less_skipped(list(fresh), list(skipped)) == want, (fresh, skipped)


def test_a_skipped_fields_repeated_prose_is_remembered_and_its_code_is_not() -> None:
    """The strings every document has in a skipped field: remembered as prose when they are
    (the next batches leave them out at once), never when they look like code; and code in
    a skipped field is still no finding while the same code elsewhere is one."""
    docs = [_doc(i, namespace="risu.module") for i in range(4)]
    assert known_prose(docs, _found(docs))
    assert "risu.module" in rules._PROSE
    coded = [_doc(i, namespace=CODE) for i in range(4)]
    assert known_prose(coded, _found(coded))
    assert CODE not in rules._PROSE
    mixed = [*coded, _doc(9, summary=CODE)]
    assert not known_prose(mixed, _found(mixed))
    assert [bool(list(active_code(d, None))) for d in mixed] == [False] * 4 + [True]


def _texts(docs: list[Any]) -> list[bytes]:
    return [json.dumps(d, ensure_ascii=False).encode() for d in docs]


@pytest.mark.parametrize("odd", [
    None,
    b'{"a": 1.5, "payload": {"x": "y"}}',  # a float: every text walked alone
    b'[' * 70 + b']' * 70,  # too deep: the same
    b'{"payload": {"x": "y", "x": "z"}}',  # a repeated key: this one alone refused
    b'{"payload": "\\u003a"}',  # a ":" that may be spelled as an escape
    b'{ not json',
    b'["a list", {"payload": "x"}]',  # no object: walked, no sections
])
@pytest.mark.parametrize("sort", [True, False])
def test_many_texts_walk_as_each_alone(odd: bytes | None, sort: bool) -> None:
    """Each text's value and bytes are fast_json_texts's (None where it refuses); the
    strings are those of the values it takes (and maybe of one it refuses later)."""
    datas = _texts([_doc(i, f"summary {i}") for i in range(4)])
    if odd is not None:
        datas.insert(2, odd)
    parsed, found = fast_json_texts_many(datas, KEYS, sort=sort)
    alone = [fast_json_texts(d, KEYS, sort=sort) for d in datas]
    assert [None if p is None else p for p in parsed] == [
        None if a is None else (a[0], a[1]) for a in alone]
    wanted = Counter(t for a in alone if a is not None for t in a[2] or [])
    assert not wanted - Counter(found)
    assert set(found) <= {t for d in datas for t in _all_strings(d)}


def _all_strings(data: bytes) -> list[str]:
    try:
        value = json.loads(data)
    except ValueError:
        return []
    out: list[str] = []
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            out.append(v)
        elif isinstance(v, dict):  # (a dict's keys may be met too: plain_levels_texts)
            stack += [*v, *v.values()]
        elif isinstance(v, list):
            stack += v
    return out


def _write(root: Path, docs: list[dict[str, Any]]) -> list[Path]:
    root.mkdir()
    paths = []
    for i, d in enumerate(docs):
        p = root / f"d{i:02d}.json"
        p.write_text(json.dumps(d, ensure_ascii=False, indent=1), encoding="utf-8")
        paths.append(p)
    return paths


@pytest.mark.parametrize("twice", [False, True])
def test_a_batch_finds_what_each_document_alone_finds(tmp_path: Path, twice: bool) -> None:
    """validate over a folder (its files a batch) gives each document the findings
    validate_document gives it alone, MC500 looking for its strings itself: code among
    prose, prose that trips the detector only joined, code in a skipped field, and the
    same again once the prose is known."""
    docs = [_doc(0, SEMI_A), _doc(1, SEMI_B), _doc(2, ASSIGN), _doc(3, CODE),
            _doc(4, namespace=CODE), *[_doc(i, f"Plain words, {i} of them.")
                                       for i in range(5, 12)]]
    paths = _write(tmp_path / "cat", docs)
    alone = {str(p): validate_document(copy.deepcopy(d), file=str(p))
             for p, d in zip(paths, docs, strict=True)}
    for _ in range(2 if twice else 1):
        got = {d.file: [(f.rule, f.pointer) for f in d.findings]
               for d in validate_paths([tmp_path / "cat"]).documents}
        assert got == {str(p): [(f.rule, f.pointer) for f in alone[str(p)]] for p in paths}
    assert [f.pointer for f in alone[str(paths[3])] if f.rule == "MC500"] == [
        "/projection/summary"]
    assert not any(f.rule == "MC500" for p in paths if p != paths[3]
                   for f in alone[str(p)])


def test_the_loader_leaves_out_a_batch_of_known_prose(tmp_path: Path) -> None:
    """A batch of prose: its documents' strings for MC500 left out (nothing to look at);
    a batch with code: looked for by MC500 itself."""
    prose = _write(tmp_path / "prose", [_doc(i, f"Plain words {i}.") for i in range(3)])
    code = _write(tmp_path / "code", [_doc(0, "plain"), _doc(1, CODE)])
    for paths, texts in ((prose, []), (code, None)):
        docs = [d for parts, _ in document_batches(paths) for p in parts for d in p.documents]
        assert [d.texts for d in docs] == [texts] * len(paths)
