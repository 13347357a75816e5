"""Documents read and checked a batch at a time (issue 23): ``loaders.load_batches`` keeps its
bounds and the files' order, ``validate_many`` finds what ``validate_document`` finds one
document at a time, and a review or a validation does not depend on the batches' size."""

from __future__ import annotations

import copy
import gc
import json
import sys
import weakref
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from harness import SEED

from risutools.catalog.catalog import Catalog
from risutools.catalog.review import review_catalog
from risutools.contract import loaders
from risutools.contract.loaders import (
    LoadedDocument,
    LoadOutcome,
    document_batches,
    file_batches,
    iter_documents,
    iter_file,
    load_batches,
)
from risutools.contract.readonce import ReadOnce
from risutools.contract.validate import validate_many, validate_paths
from risutools.findings import MAX_LISTED
from risutools.report.review_text import render_review_json


def _part(name: str, docs: int, size: int) -> LoadOutcome:
    made = [LoadedDocument(name, i + 1, {"n": i}, "json") for i in range(docs)]
    return LoadOutcome(documents=made, files=[name], size=size)


def _files(spec: list[list[tuple[int, int]]]) -> list[list[LoadOutcome]]:
    """Files of parts (documents, bytes) as a reader gives them."""
    return [[_part(f"f{i}.{k}", d, s) for k, (d, s) in enumerate(parts)]
            for i, parts in enumerate(spec)]


@pytest.mark.parametrize("spec", [
    [[(1, 10)]] * 10,  # one document a file
    [[(1, 10)], [], [(1, 10)], []],  # files without a part (nothing to read) end too
    [[(4, 0), (4, 0), (1, 0)], [(1, 10)], [(2, 5), (2, 5)]],  # NDJSON-like parts
    [[(1, 300)], [(1, 10)], [(1, 999)], [(1, 1)], [(1, 1)]],  # past the bytes
    [[(7, 0)], [(1, 1)]],  # one part past the documents alone
    [],
])
def test_batches_keep_the_order_and_the_bounds(spec: list[list[tuple[int, int]]],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Every part once, in order; each batch stops at the part that reaches BATCH documents
    or BATCH_BYTES (what it holds before that part stays under both); the files counted as
    read to their end never run ahead of the parts given, and add up to the files."""
    monkeypatch.setattr(loaders, "BATCH", 3)
    monkeypatch.setattr(loaders, "BATCH_BYTES", 100)
    files = _files(spec)
    batches = list(load_batches(iter(f) for f in files))
    assert [p for parts, _ in batches for p in parts] == [p for f in files for p in f]
    assert sum(ended for _, ended in batches) == len(files)
    for k, (parts, _ended) in enumerate(batches):
        docs = [len(p.documents) for p in parts]
        sizes = [p.size for p in parts]
        assert sum(docs[:-1]) < 3 and sum(sizes[:-1]) < 100
        if k < len(batches) - 1:  # (every batch but the last is full)
            assert sum(docs) >= 3 or sum(sizes) >= 100
    # the running count of files read to their end: at most the files given so far (a
    # file whose last part ends a batch is counted with the next: its end is known then)
    file_of = {id(p): i for i, f in enumerate(files) for p in f}
    done = 0
    for k, (parts, ended) in enumerate(batches):
        done += ended
        if parts and k < len(batches) - 1:  # (the last counts every file left)
            assert done <= file_of[id(parts[-1])] + 1


def test_batches_are_read_as_they_go() -> None:
    """A batch is given before the next file is read (a reader's file stays open only for
    its own parts; what is held is one batch)."""
    opened: list[int] = []

    def file(i: int) -> Any:
        opened.append(i)
        yield _part(f"f{i}", 200, 10)

    got = load_batches(file(i) for i in range(3))
    next(got)
    assert opened == [0]  # (200 documents: one file fills a batch)


def _documents() -> list[Any]:
    """Documents that exercise every rule and the paths around them, in one list."""
    seed = json.loads(SEED.read_text(encoding="utf-8"))
    docs: list[Any] = [seed, [1, 2], "text", None]
    broken = copy.deepcopy(seed)
    broken.pop("payload")  # the schema fails: no MC600 on top
    docs.append(broken)
    bare = copy.deepcopy(seed)
    for layer in ("situation", "core"):  # narrative missing: MC600
        bare["payload"]["idea_layers"].pop(layer)
    bare["payload"]["invariants"] = []
    docs.append(bare)
    many = copy.deepcopy(seed)
    many["capabilities"]["requires"] = [f"unknown.cap{i}" for i in range(MAX_LISTED + 5)]
    docs.append(many)  # past MAX_LISTED of a rule
    wrong = copy.deepcopy(seed)
    wrong["provenance"]["review_status"] = "approved"
    wrong["provenance"]["source_refs"] = [{"sha256": "sha256:" + "0" * 64}]
    docs.append(wrong)
    surrogate = copy.deepcopy(seed)
    surrogate["title"] = "\ud800"
    docs.append(surrogate)
    for i in range(40):  # the seed again, each copy a little off
        d = copy.deepcopy(seed)
        d["component_version"] = f"1.{i}.0" if i % 3 else i
        if i % 5 == 0:
            d["capabilities"]["provides"].append("not.in.vocabulary")
        docs.append(d)
    return docs


@pytest.mark.parametrize("loaded", [False, True])
@pytest.mark.parametrize("keep", [None, lambda rule: rule != "MC401"])
def test_validate_many_finds_what_one_at_a_time_finds(loaded: bool, keep: Any) -> None:
    """The rules run over all the documents rule by rule give each document the findings
    it has alone (which state is whose: the schema's failure, the counts past MAX_LISTED,
    the quiet rules, the lines looked for in order)."""
    docs = _documents()
    if loaded:  # (the loaders refuse an unpaired surrogate before the rules)
        docs = [d for d in docs if not (isinstance(d, dict) and d.get("title") == "\ud800")]
    asked: dict[int, list[str]] = {}

    def lines(i: int) -> Any:
        def line_of(pointer: str) -> int:
            asked.setdefault(i, []).append(pointer)
            return 1000 * i + len(pointer)
        return line_of

    items = [(d, f"d{i}.json", 1, lines(i), None) for i, d in enumerate(docs)]
    together = validate_many(items, loaded=loaded, keep=keep)
    asked_together, asked = asked, {}
    alone = [validate_many([item], loaded=loaded, keep=keep)[0] for item in items]
    assert together == alone
    assert asked_together == asked  # each document's lines asked for in the same order
    kinds = {f.rule for found in alone for f in found}
    assert {"MC100", "MC600"} <= kinds and ("MC401" in kinds) == (keep is None)
    assert any(len(found) > MAX_LISTED for found in alone) == (keep is None)


def _catalog(root: Path) -> Path:
    """A folder with JSON, YAML and NDJSON documents, a broken file and a file that is no
    document, in the order a review reads them."""
    seed = json.loads(SEED.read_text(encoding="utf-8"))
    root.mkdir()
    (root / "approvals").mkdir()
    for i in range(23):
        d = copy.deepcopy(seed)
        d["component_id"] = f"module.risu.batch-{i:02d}"
        if i % 4 == 0:
            d["capabilities"]["requires"].append("unknown.cap")
        (root / f"c{i:02d}.json").write_text(json.dumps(d, indent=1), encoding="utf-8")
    lines = []
    for i in range(9):
        d = copy.deepcopy(seed)
        d["component_id"] = f"module.risu.line-{i}"
        lines.append(json.dumps(d))
    (root / "c10x.ndjson").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (root / "c05x.json").write_text("{ not json", encoding="utf-8")
    (root / "c07x.yaml").write_text("title: a yaml file that is no component\n",
                                    encoding="utf-8")
    return root


@pytest.mark.parametrize("batch,size", [(1, 1 << 30), (2, 1 << 30), (5, 1 << 30),
                                        (1000, 1)])
def test_a_review_does_not_depend_on_the_batches(batch: int, size: int, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The same report whatever the batches hold (one document, a few, past a file's worth
    of bytes), in one process and on a pool; validate's too."""
    from risutools.catalog import review_pass

    root = _catalog(tmp_path / "cat")
    first = review_catalog(Catalog.open(root), jobs=1)
    reference = render_review_json(first)
    checked = validate_paths([root]).documents
    wrote = {f"module.risu.batch-{i:02d}" for i in range(23)} | \
        {f"module.risu.line-{i}" for i in range(9)}  # (every document written, once)
    assert sorted(d["component_id"] for d in first.data["documents"]) == sorted(wrote)
    assert sorted(d.component_id for d in checked) == sorted(wrote)
    monkeypatch.setattr(loaders, "BATCH", batch)
    monkeypatch.setattr(loaders, "BATCH_BYTES", size)
    monkeypatch.setattr(review_pass, "CHUNK", 4)
    monkeypatch.setattr(review_pass, "PARALLEL_MIN", 1)
    assert render_review_json(review_catalog(Catalog.open(root), jobs=1)) == reference
    assert render_review_json(review_catalog(Catalog.open(root), jobs=2)) == reference
    assert validate_paths([root]).documents == checked


def _shown(parts: list[LoadOutcome]) -> list[Any]:
    """Everything a part holds, comparable (its documents' strings for MC500 apart: see
    :func:`_texts_fewer`)."""
    return [([(d.file, d.line, d.fmt, json.dumps(d.doc, sort_keys=True), d.sha256, d.canon,
               d.parsed_bytes) for d in p.documents],
             [(f.rule, f.message, f.file, f.line, f.pointer) for f in p.problems],
             p.files, p.skipped) for p in parts]


def _texts_fewer(got: list[LoadOutcome], one: list[LoadOutcome]) -> None:
    """Each document's strings for MC500 (``texts``) as a batch read them: None (MC500
    looks for them), or some of those read one file at a time (the batch's known prose
    left out: tests/test_known_prose.py)."""
    for g, o in zip([d for p in got for d in p.documents],
                    [d for p in one for d in p.documents], strict=True):
        assert g.texts is None or not Counter(g.texts) - Counter(o.texts or [])


@pytest.mark.parametrize("batch,size", [(1, 1 << 30), (3, 1 << 30), (128, 1), (128, 3000),
                                        (128, 4 << 20)])
def test_files_read_first_give_what_one_file_at_a_time_gives(
        batch: int, size: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``file_batches`` and ``document_batches`` (a batch's files read, then parsed) give
    the parts ``iter_file`` and ``iter_documents`` give one file at a time, in order: a
    folder's listing and files, a missing file, a broken one, a file that is no document,
    NDJSON among them, whatever the batches hold; a batch holds at most BATCH_BYTES of
    files but for a larger file alone."""
    root = _catalog(tmp_path / "cat")
    monkeypatch.setattr(loaders, "BATCH", batch)
    monkeypatch.setattr(loaders, "BATCH_BYTES", size)
    files = [*sorted(p for p in root.iterdir() if p.is_file()), tmp_path / "gone.json"]
    for canon in (False, True):
        one = [p for f in files for p in iter_file(f, from_folder=True, canon=canon)]
        got = [p for parts, _ in file_batches(files, from_folder=True, canon=canon)
               for p in parts]
        assert _shown(got) == _shown(one)
        _texts_fewer(got, one)
    args = [root, root / "c03.json", tmp_path / "gone.json", root / "c10x.ndjson",
            root / "c07x.yaml", root / "c05x.json", root]
    for skip, hashed in ((False, True), (True, False)):
        once = ReadOnce()  # (a file the paths name again is read once: c03, root)
        one = [p for a in args
               for p in iter_documents(a, skip_non_documents=skip, hashed=hashed, once=once)]
        got = [p for parts, _ in document_batches(args, skip_non_documents=skip,
                                                  hashed=hashed) for p in parts]
        assert _shown(got) == _shown(one)
        _texts_fewer(got, one)
    ends = [n for _, n in file_batches(files, from_folder=True)]
    assert sum(ends) == len(files)
    for parts, _n in file_batches(files, from_folder=True):  # (a large file parsed alone)
        assert len(parts) <= batch
        assert sum(p.size for p in parts) <= size or len(parts) == 1


@pytest.mark.parametrize("at_once", [1, 3, 64])
def test_a_replay_report_does_not_depend_on_the_requests_taken_at_once(
        at_once: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """``replay_cutter`` takes requests a number at a time (each step over all of them):
    the report of every fixture, with the reference cutter and with broken ones (their
    failures and the rows they are first met on), is the one of a request at a time."""
    from test_replay_invariants import DropsTail, ForgetsEdits, IgnoresBudget

    from risutools.replay import run as replay_run
    from risutools.replay.fixture import load_fixture
    from risutools.settings.replay import load_replay_config

    fixtures = sorted((Path(__file__).resolve().parents[1] / "fixtures" / "replay").glob("*.yaml"))
    made: list[tuple[str, str, bytes, list[Any]]] = []
    for n in (1, at_once):
        monkeypatch.setattr(replay_run, "REQUESTS_AT_ONCE", n)
        for path in fixtures:
            fx = load_fixture(path)
            cfg = load_replay_config(None, fx.config)
            for factory in (replay_run.ContextCutter, DropsTail, ForgetsEdits, IgnoresBudget):
                seen: list[Any] = []  # (what a renderer is handed: each row, first failure)
                run = replay_run.replay_cutter(
                    fx, cfg, factory, watch=lambda row, first, still, seen=seen:
                    seen.append((row["request"], first, still)))
                report = replay_run.build_report(run, fx, cfg, None)
                made.append((path.name, factory.__name__, replay_run.report_bytes(report),
                             seen))
    one, many = made[:len(made) // 2], made[len(made) // 2:]
    assert many == one
    assert any(b'"failed"' in r for _, name, r, _ in one if name != "ContextCutter")
    assert any(first for *_, seen in one for _, first, _ in seen)


def test_the_collector_is_paused_a_batch_at_a_time(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """``validate_paths`` reads and checks each batch with the cycle collector paused, and
    collects once the batch ends: the cycles a batch makes (here, a thousand) are gone by
    the time the next batch is checked, so what a run holds of them is never more than a
    batch's worth whatever its length (a collector paused for the whole run would keep
    them all, and one that only froze what a batch left would keep them too); and the
    collector is on again after the run, with nothing left frozen."""
    from risutools.contract import validate as validate_module

    root = _catalog(tmp_path / "cat")
    monkeypatch.setattr(loaders, "BATCH", 2)
    real = validate_module.validate_many
    made: list[list[weakref.ref[Any]]] = []
    alive_then: list[int] = []

    class Ring:
        other: Any = None

    def making_cycles(docs: Any, **how: Any) -> Any:
        assert not gc.isenabled()
        alive_then.append(sum(r() is not None for refs in made for r in refs))
        rings = [Ring() for _ in range(1000)]
        for r in rings:
            r.other = r
        made.append([weakref.ref(r) for r in rings])
        return real(docs, **how)

    assert gc.isenabled()
    monkeypatch.setattr(validate_module, "validate_many", making_cycles)
    validate_paths([root])
    assert gc.isenabled()
    assert gc.get_freeze_count() == 0
    assert len(alive_then) >= 10
    assert max(alive_then) == 0, alive_then


@pytest.mark.parametrize("how", ["document_batches", "file_batches"])
def test_nothing_of_a_batch_is_held_while_it_is_out(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch,
                                                    how: str) -> None:
    """While its taker has a batch, the reader holds none of its documents (no name of its
    own across the ``yield``): once the taker lets the batch go, its documents are freed
    before the next batch is read, and the collector's pass at a batch's end (validate)
    walks what the run keeps, not the batch it just let go."""
    root = _catalog(tmp_path / "cat")
    monkeypatch.setattr(loaders, "BATCH", 4)
    batches = (document_batches([root]) if how == "document_batches"
               else file_batches(sorted(root.glob("c*.json"))))
    probe: list[Any] = [{}]
    [alone] = [sys.getrefcount(d) for d in probe]  # a dict held by a list alone
    seen = 0
    for parts, _ in batches:
        docs = [ld.doc for part in parts for ld in part.documents]
        del parts
        assert [sys.getrefcount(d) for d in docs] == [alone] * len(docs)
        seen += len(docs)
    assert seen >= 20
