"""Round 9 of ``validate``'s fast paths (issue 23): each answers as the reference path it
stands for, on the fixtures, on mutated documents and on hostile ones.

- :func:`~risutools.contract.preconditions.quiet_rules`: a rule it names finds nothing (so
  ``validate_document`` may skip it): the findings with it equal those of every rule run.
- the loader's level walk hands MC500 the strings of payload and projection
  (:func:`~risutools.canonical.plain_levels_texts`, :func:`~risutools.values.fast_json_texts`,
  :attr:`LoadedDocument.texts`): the same levels as :func:`plain_levels`, the same strings
  as MC500's own walk, the same findings, the same documents (and hashes) as
  :func:`fast_json`; ``sort=False`` refuses exactly what the sorted guard refuses.
"""

from __future__ import annotations

import copy
import json
import random
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from harness import FIXTURES
from test_validate_fast import HOSTILE

from risutools.contract.loaders import iter_documents, load_bytes
from risutools.contract.preconditions import PRECONDITIONED, quiet_rules
from risutools.contract.rules import DOCUMENT_RULES
from risutools.contract.validate import doc_hash, validate_document
from risutools.settings.config import Settings

ZERO = "sha256:" + "0" * 64
GOOD = "sha256:" + "ab" * 32

#: values a mutated field takes: the statuses, kinds and names the rules compare with,
#: their near misses, and every JSON type
POOL: list[Any] = [
    None, True, False, 0, 1, 2.5, "", " ", "x", [], {}, ["x"], {"a": 1},
    "candidate", "pending_human_review", "approved", "promoted", "retired", "rejected",
    "active", "inactive", "untested", "available", "unavailable", "not_run", "stale",
    "passed", "failed", "static_preserve_no_execute", "risu_attachment", "risu_web",
    "module", "preset", "character", "lorebook", "widget", "risu.module", "risu.preset",
    "module.risu.1.x", "preset.risu.1.x", "risu:1", "risu:2", "web:1", "1", "2",
    ZERO, GOOD, GOOD.upper(), "sha256:pending", GOOD + " ", "sha256:abc",
    "hook.edit_request", "chat_state_kv", "Bad-Name", "context.memory", "made.up",
    ["hook.edit_request", "hook.edit_request"], ["hook.edit_request", 3, {"a": 1}],
    ["chat_state_kv", "made.up"], ["Bad-Name"], [["x"]], ["context.memory"],
]

#: the fields the rules MC101-MC401 read (each a path of keys or list indices)
FIELDS: list[tuple[Any, ...]] = [
    ("component_type",), ("component_id",), ("payload",), ("payload", "namespace"),
    ("provenance",), ("provenance", "review_status"), ("provenance", "runtime_status"),
    ("provenance", "publishable"), ("provenance", "source_kind"),
    ("provenance", "active_code_policy"), ("provenance", "static_analysis_only"),
    ("provenance", "availability_verdict"), ("provenance", "source_refs"),
    ("provenance", "source_refs", 0), ("provenance", "source_refs", 0, "sha256"),
    ("provenance", "source_refs", 0, "source_id"), ("projection",),
    ("projection", "prompt_sha256"), ("projection", "replay_status"),
    ("projection", "prompt"), ("payload", "idea_layers"),
    ("payload", "idea_layers", "lineage"),
    ("payload", "idea_layers", "lineage", "promotion_status"),
    ("payload", "idea_layers", "evidence"),
    ("payload", "idea_layers", "evidence", "code_executed"),
    ("payload", "idea_layers", "evidence", "source_post"),
    ("capabilities",), ("capabilities", "provides"), ("capabilities", "requires"),
    ("capabilities", "conflicts"), ("capabilities", "provides", 0),
    ("capabilities", "conflicts", 0),
]


def _base_documents() -> list[dict[str, Any]]:
    """Every object document of the fixtures (good, bad, the documents folder)."""
    out: list[dict[str, Any]] = []
    for p in (FIXTURES / "documents", FIXTURES / "contract" / "good",
              FIXTURES / "contract" / "bad", FIXTURES / "contract" / "catalog"):
        for part in iter_documents(p):
            out += [d.doc for d in part.documents if isinstance(d.doc, dict)]
    assert len(out) >= 5
    return out


def _set(doc: dict[str, Any], path: tuple[Any, ...], value: Any) -> bool:
    """``doc`` with the field at ``path`` set to ``value`` (False when the path does not
    lead to a place: a parent missing or of another type)."""
    cur: Any = doc
    for step in path[:-1]:
        try:
            cur = cur[step]
        except (KeyError, IndexError, TypeError):
            return False
    last = path[-1]
    if isinstance(cur, dict) and isinstance(last, str):
        cur[last] = copy.deepcopy(value)
        return True
    if isinstance(cur, list) and isinstance(last, int) and last < len(cur):
        cur[last] = copy.deepcopy(value)
        return True
    return False


def _mutants(seed: int, count: int) -> Iterator[dict[str, Any]]:
    """Documents of the fixtures with one to four fields set from :data:`POOL`."""
    rng = random.Random(seed)
    bases = _base_documents()
    for _ in range(count):
        doc = copy.deepcopy(rng.choice(bases))
        for _ in range(rng.randint(1, 4)):
            _set(doc, rng.choice(FIELDS), rng.choice(POOL))
        yield doc


RULES = dict(DOCUMENT_RULES)
CONFIGS = [Settings(), Settings(extra_capabilities=frozenset({"made.up", "context.memory"}))]


def _outcome(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """What ``fn`` gives, or the type of what it raises (no rule should raise:
    ``tests/test_contract_wrong_types.py``; if one did, the fast path must raise it alike)."""
    try:
        return fn(*args, **kwargs)
    except Exception as exc:  # (compared, not hidden)
        return type(exc)


def _assert_quiet_is_quiet(doc: dict[str, Any]) -> None:
    quiet = quiet_rules(doc)
    assert not quiet & {"MC100", "MC500", "MC600"}
    assert quiet <= PRECONDITIONED  # (where none of those runs, it is not asked)
    for cfg in CONFIGS:
        for rule in quiet:
            assert list(RULES[rule](doc, cfg)) == [], (rule, json.dumps(doc)[:300])
        assert _outcome(validate_document, doc, config=cfg) == \
            _outcome(validate_document, doc, config=cfg, every_rule=True)


def test_quiet_rules_on_the_fixtures() -> None:
    seen: set[str] = set()
    for doc in _base_documents():
        _assert_quiet_is_quiet(doc)
        seen |= quiet_rules(doc)
    assert len(seen) >= 10  # (the precondition is not vacuous)


@pytest.mark.parametrize("seed", range(4))
def test_quiet_rules_on_mutated_documents(seed: int) -> None:
    skipped = 0
    fired = 0
    for doc in _mutants(seed, 400):
        _assert_quiet_is_quiet(doc)
        quiet = quiet_rules(doc)
        skipped += len(quiet)
        fired += sum(1 for r in RULES if r not in quiet and r != "MC100"
                     and _outcome(list, RULES[r](doc, CONFIGS[0])))
    assert skipped > 1000 and fired > 100  # both sides of every precondition are seen


def test_quiet_rules_on_hostile_documents() -> None:
    for name, data in HOSTILE:
        out = load_bytes(data, name, fmt="ndjson" if name.endswith(".ndjson") else None)
        for d in out.documents:
            if isinstance(d.doc, dict):
                _assert_quiet_is_quiet(d.doc)
    # odd shapes the loaders never give: a value the rules compare is unhashable, a
    # dict subclass, a str subclass
    class Sub(dict[str, Any]):
        pass

    class Text(str):
        pass

    odd: list[dict[str, Any]] = [
        {"component_type": "module", "capabilities": {"provides": [["x"]], "conflicts": [{}]}},
        {"provenance": Sub(review_status="candidate", runtime_status="active"),
         "payload": Sub(namespace="risu.x")},
        {"component_type": Text("module"), "component_id": Text("preset.a.b.c"),
         "capabilities": Sub(provides=[Text("made.up")])},
        {"provenance": [], "payload": "x", "projection": 3, "capabilities": None},
    ]
    for doc in odd:
        _assert_quiet_is_quiet(doc)


def test_quiet_rules_mutation_check_would_fail(monkeypatch: pytest.MonkeyPatch) -> None:
    """A precondition that says too much is caught: MC301 said quiet always."""
    from risutools.contract import preconditions, validate

    def too_quiet(doc: dict[str, Any]) -> set[str]:
        return quiet_rules(doc) | {"MC301"}

    monkeypatch.setattr(validate, "quiet_rules", too_quiet)
    doc = {"provenance": {"review_status": "candidate", "runtime_status": "active"}}
    assert validate_document(doc) != validate_document(doc, every_rule=True)
    assert "MC301" not in preconditions.quiet_rules(doc)


# --------------------------------------------------------------------------- MC500's strings


def _deep(n: int) -> Any:
    v: Any = "s"
    for i in range(n):
        v = [v, "t"] if i % 2 else {"k": v, "u": "w"}
    return v


#: values for the level walk: hostile shapes (deep, floats, odd types, str subclasses,
#: keys that are not strings, a missing section, sections that are not objects)
WALKED: list[Any] = [
    {}, [], "x", 3, None, {"payload": "p"}, {"projection": ["a", ["b", {"c": "d"}]]},
    {"payload": {"a": 1.5}}, {"x": 1.5, "payload": {}}, {"payload": _deep(70)},
    {"provenance": _deep(70), "payload": {"a": "b"}}, {"payload": _deep(300)},
    {"payload": {"a": (1, 2)}}, {1: "a", "payload": {"b": "c"}}, {"payload": {1: "z"}},
    {"payload": {"n": "risu.module", "t": ["x", "y", {"q": "r"}]}, "projection": "z",
     "other": ["o", {"p": "q"}]},
]


def _reference_levels(value: Any) -> tuple[int, list[str] | None] | None:
    """plain_levels, and MC500's own walk when the value is a dict (of plain keys)."""
    from risutools.canonical import plain_levels
    from risutools.contract.rules import _plain_strings

    levels = plain_levels(value)
    if levels is None:
        return None
    walked = type(value) is dict and all(type(k) in (str, int, bool, type(None))
                                         for k in value)
    return levels, (_plain_strings([value.get("payload"), value.get("projection")])
                    if walked else None)


def test_level_walk_with_texts_is_plain_levels_and_mc500s_walk() -> None:
    from risutools.canonical import plain_levels_texts

    values = WALKED + _base_documents() + list(_mutants(9, 200))
    for v in values:
        assert plain_levels_texts(v, ("payload", "projection")) == _reference_levels(v), v


def test_level_walk_of_a_batch_is_each_values_walk() -> None:
    """plain_levels_many of a batch: None when a value is not plain or the list of them
    nests past 256 levels; else one more level than the deepest value's (0 for none) and
    the strings below each dict's payload and projection, all together (as a multiset:
    the walk meets them a level at a time across the batch)."""
    from risutools.canonical import plain_levels, plain_levels_many, plain_levels_texts

    keys = ("payload", "projection")
    values = WALKED + [{1.5: "f", "payload": {}}, {(1, 2): "t"}, {"projection": {2.5: "g"}}] \
        + [{"payload": _deep(n)} for n in (252, 253, 254, 255)] \
        + [_deep(n) for n in (253, 254, 255)] + _base_documents() + list(_mutants(7, 120))
    rng = random.Random(5)
    batches = [[v] for v in values] + [[]] + [rng.sample(values, k) for k in (2, 5, 40)
                                               for _ in range(30)]
    for batch in batches:
        each = [plain_levels(v) for v in batch]
        want: tuple[int, Counter[str]] | None = None
        if None not in each and 1 + max(each, default=-1) <= 256:
            texts: Counter[str] = Counter()
            for v in batch:
                one = plain_levels_texts(v, keys)
                assert one is not None
                texts.update(one[1] or ())
            want = (1 + max(each, default=-1), texts)
        got = plain_levels_many(batch, keys)
        assert (None if got is None else (got[0], Counter(got[1]))) == want, batch


def _files() -> list[tuple[str, bytes]]:
    out = [(n, d) for n, d in HOSTILE if n.endswith(".json")]
    out += [(f"w{i}.json", json.dumps(v).encode()) for i, v in enumerate(WALKED)
            if not isinstance(v, dict) or all(isinstance(k, str) for k in v)]
    out += [(f"m{i}.json", json.dumps(d, indent=1, ensure_ascii=i % 2 == 0).encode())
            for i, d in enumerate(_mutants(11, 100))]
    out += [
        ("dup-deep.json", b'{"payload": {"a": {"b": 1, "b": 2}}}'),
        ("dup-colon.json", b'{"payload": {"a": "x:y", "a": "z"}}'),
        ("escaped-colon.json", b'{"payload": {"a\\u003a": 1, "a:": 2}}'),
        ("escaped.json", b'{"payload": {"a": "\\n\\"q\\""}, "projection": {"b": "\\u00e9"}}'),
        ("float.json", b'{"payload": {"x": 1e400}}'),
        ("surrogate.json", b'{"payload": {"x": "\\udc00"}}'),
        ("bad-utf8.json", b'{"payload": {"x": "\xff"}}'),
        ("bom.json", b'\xef\xbb\xbf{"payload": {"x": "y"}}'),
        ("big-int.json", b'{"payload": {"x": 123456789012345678901234567890}}'),
    ]
    return out


def test_fast_json_texts_is_fast_json() -> None:
    from risutools.canonical import plain_canonical
    from risutools.values import fast_json, fast_json_texts

    seen_none = seen_texts = 0
    for name, data in _files():
        ref = fast_json(data)
        for sort in (True, False):
            got = fast_json_texts(data, ("payload", "projection"), sort=sort)
            assert (got is None) == (ref is None), (name, sort)
            if got is None or ref is None:
                seen_none += 1
                continue
            assert got[0] == ref[0] and json.dumps(got[0]) == json.dumps(ref[0])
            assert got[1] == ref[1] if sort else plain_canonical(got[0]) == ref[1]
            assert got[2] == (_reference_levels(ref[0]) or (0, None))[1], name
            assert got[2] is not None or not isinstance(got[0], dict)  # (orjson's dicts)
            seen_texts += got[2] is not None
    assert seen_none >= 8 and seen_texts >= 50


def test_loaded_texts_give_the_same_findings(tmp_path: Path) -> None:
    from risutools.contract import rules

    for i, (name, data) in enumerate(_files()):
        for hashed in (True, False):
            out = load_bytes(data, name, fmt="json", hashed=hashed)
            ref = load_bytes(data, name, fmt=None, hashed=hashed)  # (the sniffing path)
            assert [d.doc for d in out.documents] == [d.doc for d in ref.documents] \
                or name == "bom.json" or not data.startswith(b"{")  # (sniffed: YAML)
            for d in out.documents:  # (the sniffing path reads "x" as YAML: no hash)
                assert d.sha256 in (None, doc_hash(d.doc))  # (the exact path: maybe none)
                if d.texts is not None:  # the fast path: a hash exactly when asked for
                    assert (d.sha256 is not None) == hashed
            assert out.problems == ref.problems or name == "bom.json" or not data.startswith(b"{")
            for d in out.documents:
                rules._PROSE.clear()
                rules._PROSE_SHAPES.clear()
                with_texts = _outcome(validate_document, d.doc, file=name, line_of=d.line_of,
                                      loaded=True, texts=d.texts)
                rules._PROSE.clear()
                rules._PROSE_SHAPES.clear()
                reference = _outcome(validate_document, d.doc, file=name, line_of=d.line_of,
                                     loaded=True, every_rule=True)
                assert with_texts == reference, (i, name)


def test_mc500_reads_the_texts_it_is_given() -> None:
    """MC500 with the loader's strings finds code there (it reads them, not its own walk:
    the mutation check of the hand-off: its fast path remembers them as prose), and on
    the real strings finds as without."""
    from risutools.contract import rules
    from risutools.contract.rules import active_code, mc500

    doc = {"payload": {"a": "local x = 1\nfunction f() return x end"}, "projection": {}}
    assert list(active_code(doc, None)) == list(mc500(doc, Settings()))
    assert list(active_code(doc, None))
    prose = {"payload": {"a": "A sentence."}, "projection": {}}
    assert not list(active_code(prose, ["A sentence.", "Handed over."]))
    assert "Handed over." in rules._PROSE  # it read them
    # a code string handed over sends it to the exact path, over the document's own
    assert not list(active_code(prose, ["local x = getChatVar('a')"]))
