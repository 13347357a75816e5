"""The review keeps summaries, not documents: the entries hold heads and read the rest back,
the report's long lists wait in row spools, and the JSON written in pieces is the whole
value's JSON."""

from __future__ import annotations

import io
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from test_catalog_support import (
    CUTTER,
    MOOD,
    approve_and_promote,
    doc_path,
    fresh_catalog,
    load,
    to_promoted,
)

from risutools import rowspool
from risutools.canonical import canonical
from risutools.catalog.catalog import HEAD, Catalog, Entry, head_of
from risutools.catalog.promote import plan
from risutools.catalog.review import review_catalog
from risutools.contract.loaders import iter_ndjson, load_ndjson_stream
from risutools.printable import json_text
from risutools.report import review_text
from risutools.report.output import write_report
from risutools.report.review_text import render_review_json, review_json_pieces
from risutools.rowspool import Rows, unpack
from risutools.settings.config import Settings


@pytest.fixture
def cat(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> Path:
    return fresh_catalog(tmp_path_factory, tmp_path)


def _whole(data: dict[str, Any]) -> dict[str, Any]:
    """The review's data with every row spool read back as a list (those of an object in
    it too: the lineage section's)."""
    return {k: list(v) if isinstance(v, Rows) else _whole(v) if isinstance(v, dict) else v
            for k, v in data.items()}


def test_review_entries_hold_heads_and_read_documents_back(cat: Path) -> None:
    to_promoted(cat)
    c = Catalog.open(cat)
    rv = review_catalog(c, jobs=1)
    entries = c.entries()
    assert entries and all(e.held is None and e.head is not None for e in entries)
    for e in entries:
        whole = load(e.path)
        assert e.doc == whole  # read back whole, equal to the file's document
        assert e.doc is not e.doc  # a new copy each time: nothing is kept
        # the head too is read back from the spool (not held: an entry reads it rarely),
        # equal to the head of the file's document
        assert not isinstance(e.head, bytes)
        assert e.parts == unpack(head_of(whole))
        assert e.component_id == whole["component_id"]
        assert e.version == whole["component_version"]
        assert e.review_status == whole["provenance"]["review_status"]
        assert e.runtime_status == whole["provenance"].get("runtime_status", "")
        assert e.caps("provides") == whole["capabilities"]["provides"]
        # what the head holds is answered from it; anything else from the whole document
        assert e.get("projection", "title") == whole["projection"]["title"]
        assert e.get("projection", "prompt") == whole["projection"]["prompt"]
        assert e.get("provenance", "source_kind") == whole["provenance"]["source_kind"]
        assert e.get("payload") == whole["payload"]
        assert e.get("provenance") == whole["provenance"]  # the whole part, not the head's
    assert rv.data["counts"]["documents"] == len(entries)


@pytest.mark.parametrize("doc", [
    {"component_id": "a", "component_version": "1",
     "provenance": {"review_status": "candidate", "runtime_status": "inactive"}},
    {"component_id": 7, "component_version": None, "provenance": {"review_status": ["x"]}},
    {"component_id": "a", "provenance": "not a mapping"},
    {},
])
def test_head_names_are_what_an_entry_reads_from_its_head(doc: dict[str, Any]) -> None:
    """What the first pass gives an entry at once is what the entry reads from its head."""
    from risutools.catalog.catalog import head_names

    e = Entry(Path("x.json"), None, "json", None, "h", head=head_of(doc), reload=lambda: doc)
    assert head_names(doc) == (e.component_id, e.version, e.review_status, e.runtime_status)


def test_head_keeps_only_what_it_names() -> None:
    doc = {"component_id": "a", "component_version": "1", "payload": {"big": "x" * 1000},
           "provenance": {"review_status": "candidate", "source_kind": "k", "source_refs": []},
           "capabilities": {"provides": ["p"]}, "projection": {"title": "t", "prompt": "p"}}
    head = unpack(head_of(doc))
    assert set(head) == set(HEAD)
    assert head["provenance"] == {"review_status": "candidate", "source_refs": []}
    assert head["projection"] == {"title": "t"}
    assert "payload" not in head
    e = Entry(Path("x.json"), None, "json", None, "h", head=head_of(doc), reload=lambda: doc)
    assert e.get("provenance", "source_kind") == "k"  # not in the head: the document's
    assert e.get("projection", "prompt") == "p"
    assert e.get("payload", "big") == "x" * 1000


def test_review_json_in_pieces_is_the_whole_values_json(cat: Path, tmp_path: Path) -> None:
    to_promoted(cat)
    rv = review_catalog(Catalog.open(cat), jobs=1)
    assert any(isinstance(v, Rows) for v in rv.data.values())
    assert isinstance(rv.data["lineage"]["lineages"], Rows)  # an object holding spools
    text = render_review_json(rv)
    whole = _whole(rv.data)
    assert text == json_text(canonical(whole).decode()) + "\n"
    assert json.loads(text) == whole
    out = tmp_path / "review.json"
    write_report(str(out), review_json_pieces(rv))  # written as it is made
    assert out.read_text(encoding="utf-8") == text


def test_review_json_pieces_fall_back_like_the_whole(cat: Path) -> None:
    """A value the canonical form refuses (a float that is not finite) is written by
    ``json`` in its piece, as the whole value's text would be."""
    rv = review_catalog(Catalog.open(cat), jobs=1)
    rv.data["extra"] = Rows([{"x": float("nan")}, {"y": "\u2028"}])
    text = render_review_json(rv)
    whole = json.dumps(_whole(rv.data), ensure_ascii=False, sort_keys=True,
                       separators=(",", ":"))
    assert text == json_text(whole) + "\n"
    assert "\u2028" not in text and "NaN" in text


def test_a_reviews_entries_hold_their_files_as_text(cat: Path) -> None:
    """A review's entries hold their files' paths as text (a ``Path`` is four objects), and
    give the same ``Path`` as an entry read without a review, the file resolved."""
    c = Catalog.open(cat)
    review_catalog(c, jobs=1)
    reviewed = c.entries()
    plain = Catalog.open(cat).entries()
    assert reviewed and all(type(e._path) is str for e in reviewed)
    assert all(isinstance(e._path, Path) for e in plain)
    assert [(e.path, e.where()) for e in reviewed] == [(e.path, e.where()) for e in plain]
    assert all(e.path == e.path.resolve() and e.path.is_file() for e in reviewed)


@pytest.mark.parametrize("count", [0, 1, 2, 3, 4, 5, 7, 9])
def test_long_lists_written_in_blocks_are_the_whole_lists_text(cat: Path, count: int) -> None:
    """A long list of the report (the duplicates, the interactions' relations), at the top
    or inside an object, is written an item at a time, the same text as the whole value's:
    with items that need escapes and a float ``json`` alone writes."""
    assert review_text.LIST_LONG == 1  # (every list of two or more items)
    rv = review_catalog(Catalog.open(cat), jobs=1)
    items: list[Any] = [{"i": i, "s": "\u2028" if i % 3 == 1 else "é" * i} for i in range(count)]
    if count > 4:
        items[4] = {"x": float("inf")}
    rv.data["extra"] = items
    rv.data["interactions"]["relations"] = list(items)
    pieces = list(review_json_pieces(rv))
    text = render_review_json(rv)
    whole = json.dumps(_whole(rv.data), ensure_ascii=False, sort_keys=True,
                       separators=(",", ":"))
    assert text == json_text(whole) + "\n"
    texts = [p.decode() if isinstance(p, bytes) else p for p in pieces]
    assert "".join(texts) == text
    # no piece holds more than one of the list's items (both lists: every item once)
    assert all(t.count('"i":') <= 1 for t in texts)
    assert sum(t.count('"i":') for t in texts) == 2 * sum("i" in x for x in items)


@pytest.mark.parametrize("count", [0, 1, 255, 256, 257, 1000])
def test_rows_read_back_in_order(count: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rowspool, "IN_MEMORY", 64)  # past it: the temporary folder
    rows = [{"i": i, "s": "\u00e9" * (i % 7), "l": [i, None, True, 1.5]} for i in range(count)]
    spool = Rows(rows[: count // 2])
    for r in rows[count // 2:]:
        spool.append(r)
    assert len(spool) == count and bool(spool) == bool(count)
    assert list(spool) == rows
    assert list(spool) == rows  # read again: the same
    assert [r for b in spool.blocks() for r in b] == rows
    for i in (0, count // 3, count - 1, -1):
        if count:
            assert spool[i] == rows[i]
    assert spool[1:4] == rows[1:4]
    with pytest.raises(IndexError):
        spool[count]
    got = spool[0] if count else None
    if got is not None:
        got["i"] = "changed"  # a copy: the spool's row is as it was
        assert spool[0] == rows[0]


def test_long_rows_weighed_make_blocks_of_at_most_a_batch_of_items() -> None:
    """Rows weighed by their lists' items (a lineage of thousands of reposts, a relation
    naming thousands of components) are stored in blocks of at most :data:`BATCH` items, a
    row alone when it holds more: a block is then never a batch of long rows (the 21
    lineages of 50,000 copies of the real corpus's documents, up to 2,381 members each,
    were one block: 17 MB of JSON, some 100,000 objects while pending, 170 MiB of the
    review's peak); read back, the same rows."""
    sizes = [0, 3, 300, 1, 2000, 5, 5, 255, 0, 40, 120, 120, 15] * 3
    rows = [{"members": [{"m": j} for j in range(n)], "keys": ["k"] * (n % 4), "n": n}
            for n in sizes]
    assert [rowspool.items(r) for r in rows[:4]] == [1, 1 + 3 + 3, 1 + 300, 1 + 1 + 1]
    spool = Rows(rows, weigh=rowspool.items)
    blocks = list(spool.blocks())
    assert [r for b in blocks for r in b] == rows and list(spool) == rows
    assert spool[4] == rows[4] and len(spool) == len(rows)
    weights = [sum(map(rowspool.items, b)) for b in blocks]
    for block, weight in zip(blocks, weights, strict=True):
        assert weight <= rowspool.BATCH or len(block) == 1, weight
    for row in rows:  # a row past a batch alone in its block
        if rowspool.items(row) > rowspool.BATCH:
            assert [row] in blocks
    for k in range(len(blocks) - 1):  # no block ended before it had to
        assert weights[k] >= rowspool.BATCH or \
            weights[k] + rowspool.items(blocks[k + 1][0]) > rowspool.BATCH
    assert len(blocks) > 6
    # unweighed, the same rows are one block a BATCH of rows (here all of them)
    assert [len(b) for b in Rows(rows).blocks()] == [len(rows)]


def test_ndjson_in_batches_is_the_whole_file() -> None:
    lines = [json.dumps({"component_id": f"c{i}", "contract": "x"}) for i in range(600)]
    lines[10] = "{broken"
    lines[300] = ""
    data = ("\n".join(lines) + "\n").encode()
    whole = load_ndjson_stream(io.BytesIO(data), "c.ndjson")
    parts = list(iter_ndjson(io.BytesIO(data), "c.ndjson", batch=256))
    assert [len(p.documents) for p in parts] == [256, 256, 86]
    assert [d.doc for p in parts for d in p.documents] == [d.doc for d in whole.documents]
    assert [d.line for p in parts for d in p.documents] == [d.line for d in whole.documents]
    assert [f.line for p in parts for f in p.problems] == [f.line for f in whole.problems] \
        == [11]
    empty = list(iter_ndjson(io.BytesIO(b"\n\n"), "e.ndjson"))
    assert [f.message for p in empty for f in p.problems] == \
        [f.message for f in load_ndjson_stream(io.BytesIO(b"\n\n"), "e.ndjson").problems]


@pytest.mark.parametrize("jobs", [1, 2])
def test_board_equals_a_plan_on_whole_documents(
        cat: Path, jobs: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each board row's gates, from what the first pass found (on all cores too) and the
    documents read back from the spool, are those ``promote --dry-run`` gives on the whole
    document (a catalog opened anew holds every document whole)."""
    from risutools.catalog import review_pass

    monkeypatch.setattr(review_pass, "PARALLEL_MIN", 1)
    monkeypatch.setattr(review_pass, "CHUNK", 2)
    path = doc_path(cat, MOOD)
    doc = load(path)
    doc["payload"]["invariants"] = []  # MC600: narrative incomplete
    path.write_text(json.dumps(doc), encoding="utf-8")
    approve_and_promote(cat, CUTTER, "request_review", "pending_human_review")
    pending = load(doc_path(cat, CUTTER))
    pending["payload"]["invariants"] = []  # the next step (approved) makes MC600 an error
    doc_path(cat, CUTTER).write_text(json.dumps(pending), encoding="utf-8")
    for severities in ({}, {"MC600": "off"}):  # off: the promotion gate alone makes it one

        def configure(_root: Path, sev: dict[str, str] = severities) -> Settings:
            return Settings(severities=sev)

        rv = review_catalog(Catalog.open(cat, configure=configure), jobs=jobs)
        board = {b["component_id"]: b for b in rv.data["board"]}
        assert {b["from"] for b in board.values()} == {"candidate", "pending_human_review"}
        assert any(g["gate"] == "contract" and "MC600" in g["reason"]
                   for g in board[CUTTER]["gates"])
        whole = Catalog.open(cat, configure=configure)
        for row in board.values():
            (e,) = whole.by_id(row["component_id"])
            assert e.held is not None
            p = plan(whole, e, row["to"])
            assert row["gates"] == [v.to_dict() for v in p.verdicts]
            assert row["ready"] == p.ok
        narrative = [p for p in board[MOOD]["path"] if p["part"] == "narrative"]
        # (missing either way: the contract gate checks the narrative from approved on
        # whatever the settings say, and the path says what that gate will find)
        assert narrative[0]["state"] == "missing"


def test_a_full_temporary_folder_is_unwritable_not_a_bug(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A full temporary folder, met by a row spool or by the review's document spool, is
    the error ``unwritable`` naming the folder (one line, exit 2), never a bug report."""
    from risutools.errors import RisuError

    def full(*_a: object, **_k: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(rowspool, "IN_MEMORY", 0)
    spool = Rows()
    monkeypatch.setattr(spool._file, "write", full)
    with pytest.raises(RisuError) as err:
        for i in range(rowspool.BATCH):
            spool.append({"i": i})
    assert err.value.code == "unwritable" and "No space left" in err.value.why
    docs = rowspool.Spool()
    monkeypatch.setattr(docs._file, "write", full)
    with pytest.raises(RisuError) as err:
        docs.put(b"j" + b"0" * rowspool.SPOOL_WRITE)
    assert err.value.code == "unwritable" and "TMPDIR" in err.value.why


def test_a_temporary_folder_it_cannot_write_is_one_line(cat: Path) -> None:
    """The whole command with a temporary folder it cannot write into: no traceback."""
    import subprocess
    import sys

    ro = cat.parent / "ro-tmp"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        if os.access(ro, os.W_OK):
            pytest.skip("root writes into read-only folders")
        env = dict(os.environ, TMPDIR=str(ro))
        r = subprocess.run([sys.executable, "-m", "risutools", "review", str(cat), "-f",
                            "json", "-q", "-o", str(cat.parent / "r.json"), "-j", "1"],
                           env=env, capture_output=True, text=True, check=False)
    finally:
        ro.chmod(0o700)
    assert r.returncode in (0, 1, 2)
    assert "Traceback" not in r.stderr and "please report" not in r.stderr


@pytest.mark.parametrize("jobs", [1, 2])
def test_board_base_hashes_made_in_the_first_pass_are_the_documents(
        cat: Path, jobs: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first pass gives each document on the board its base hash (the fast path's
    orjson form for a JSON file it parsed, the whole computation for any other: a float,
    YAML, a document whose runtime field is missing), and no other document one; each is
    the document's own base hash, computed again here from the file."""
    import yaml

    from risutools.catalog import review_pass
    from risutools.catalog.gates import gate_config, status_findings
    from risutools.catalog.promote import new_document
    from risutools.settings import lifecycle

    monkeypatch.setattr(review_pass, "PARALLEL_MIN", 1)  # the forked pool on a few files
    monkeypatch.setattr(review_pass, "CHUNK", 2)
    to_promoted(cat)  # one document past the board
    path = doc_path(cat, MOOD)
    doc = load(path)
    doc["payload"]["weight"] = 1e-05  # a float: not the fast path
    path.write_text(json.dumps(doc), encoding="utf-8")
    files = sorted(p for p in cat.glob("*.json") if p != path
                   and load(p)["provenance"]["review_status"] == "candidate")
    as_yaml = load(files[0])
    as_yaml["provenance"].pop("runtime_status", None)
    files[0].unlink()
    files[0].with_suffix(".yaml").write_text(yaml.safe_dump(as_yaml, allow_unicode=True),
                                             encoding="utf-8")
    c = Catalog.open(cat)
    first = review_pass.first_pass(c.root, c.config, None, jobs, None, None)
    seen = {"json": 0, "yaml": 0, "float": 0, "off": 0}
    for s in first.surveyed:
        if s.path is None:
            continue
        real = Path(s.path)  # (the real file, as text)
        whole = load(real) if s.fmt == "json" else yaml.safe_load(real.read_text("utf-8"))
        if whole["provenance"]["review_status"] in lifecycle.BOARD:
            assert s.base == lifecycle.base_sha256(whole), s.path
            to = lifecycle.next_step(whole["provenance"]["review_status"]).to
            found = status_findings(new_document(whole, to), gate_config(c.config, to))
            assert s.gate == (to, tuple(f for f in found if f.severity == "error"))
            seen["float" if "weight" in whole["payload"] else s.fmt] += 1
        else:
            assert s.base is None
            seen["off"] += 1
    assert all(seen.values()), seen
    rv = review_catalog(Catalog.open(cat), jobs=jobs)
    assert any("approval" in row["blocked_by"] for row in rv.data["board"])


def test_file_findings_wait_in_spools_and_read_back_whole() -> None:
    """The review's file findings are kept as the report writes them and whole: read back,
    each is the finding it was (an empty file name is not a missing one), and the errors
    and warnings are counted as they come."""
    from risutools.catalog.review import FileFindings, _f
    from risutools.findings import Finding

    made = [Finding("RV101", "error", "m\u2028", file="", line=0),
            Finding("RV201", "warning", "w", file=None, line=None, pointer="/a"),
            Finding("MC001", "error", "gone", file="x.json", code="not-found"),
            *[Finding("RV501", "info", f"repost {i}", file=f"c{i}.json", line=i + 1,
                      evidence="e") for i in range(rowspool.BATCH + 3)]]
    found = FileFindings(iter(made))
    assert list(found) == made and list(found) == made  # read back again: the same
    assert list(found.rows) == [_f(f) for f in made] and len(found) == len(made)
    assert (found.errors, found.warnings) == (2, 1)


def test_review_result_is_made_when_asked(cat: Path) -> None:
    """A review keeps its file findings in spools: the text formats read back only the
    errors and warnings; a findings format's result holds every finding, as the JSON's
    rows and counts say."""
    from risutools.catalog.review import SERIOUS, _f

    to_promoted(cat)
    (cat / "approvals" / "junk.yaml").write_text("- not a record\n")  # RV301, an error
    log = cat / "transitions.ndjson"
    log.write_text(log.read_text() + '{"component_id": "x", broken\n')  # RV2xx
    rv = review_catalog(Catalog.open(cat), jobs=1)
    assert rv.found is not None and rv.outline.file_findings == []
    serious = rv.serious()
    assert serious and rv.found is not None  # read back without making the result
    result = rv.result
    assert rv.found is None and rv.result is result
    assert [_f(f) for f in result.file_findings] == list(rv.data["file_findings"])
    assert rv.serious() == serious == [f for f in result.findings if f.severity in SERIOUS]
    everything = result.findings
    assert rv.data["counts"]["errors"] == sum(f.severity == "error" for f in everything) > 0
    assert rv.data["counts"]["warnings"] == sum(f.severity == "warning" for f in everything)


#: heads of every shape: what the first pass gives an entry must be what its head says
HOSTILE_HEADS: list[dict[str, Any]] = [
    {"capabilities": {"provides": ["a", "b"], "requires": ["c"], "conflicts": []},
     "projection": {"replay_status": "passed"}, "provenance": {"publishable": True}},
    {"capabilities": {"provides": ["a", 1, None, ["x"], {"y": 1}, "b", 2.5, True]}},
    {"capabilities": ["provides", "requires"], "projection": ["replay_status"]},
    {"capabilities": "provides", "projection": "x", "provenance": 7},
    {"capabilities": {"provides": "a", "requires": {"a": 1}, "conflicts": None}},
    {"capabilities": {"provides": []}, "projection": {"replay_status": None},
     "provenance": {"publishable": None}},
    {"projection": {"replay_status": 3}, "provenance": {"publishable": 1}},
    {"projection": {"replay_status": ["passed"]}, "provenance": {"publishable": "yes"}},
    {"projection": {"title": "t"}, "provenance": {"publishable": False}},
    {},
]


def _asked(e: Entry) -> list[Any]:
    """Everything the review's passes read of an entry's head, as it answers."""
    return [[e.caps(k) for k in ("provides", "requires", "conflicts", "other")],
            e.get("projection", "replay_status"), e.get("provenance", "publishable"),
            e.get("projection", "title"), e.get("capabilities", "provides"),
            e.get("capabilities"), e.get("provenance", "source_refs"), e.get("projection")]


@pytest.mark.parametrize("doc", HOSTILE_HEADS)
def test_head_values_are_what_an_entry_reads_from_its_head(doc: dict[str, Any]) -> None:
    """An entry given its head values (:func:`head_values`, shared) answers as one reading
    its head; a value they cannot hold gives none (the entry reads its head)."""
    from risutools.catalog.catalog import head_values, shared_head_values

    values = shared_head_values(head_values(doc))
    ref = Entry(Path("x.json"), None, "json", None, "h", head=head_of(doc), reload=lambda: doc)
    fast = Entry(Path("x.json"), None, "json", None, "h", head=head_of(doc), reload=lambda: doc,
                 _hv=values)
    assert _asked(fast) == _asked(ref)
    if values is not None:  # answered from the values: equal to the head's, by type too
        assert [list(k) for k in values[:3]] == [ref.caps(k) for k in
                                                 ("provides", "requires", "conflicts")]
        assert values[3:] == (ref.get("projection", "replay_status"),
                              ref.get("provenance", "publishable"))
        assert [type(v) for v in values[3:]] == [
            type(ref.get("projection", "replay_status")), type(ref.get("provenance",
                                                                      "publishable"))]
    proj, prov = doc.get("projection"), doc.get("provenance")
    replay = proj.get("replay_status") if isinstance(proj, dict) else None
    flag = prov.get("publishable") if isinstance(prov, dict) else None
    odd = not isinstance(replay, str | None) or not isinstance(flag, bool | None)
    assert (values is None) == odd
    e = Entry(Path("x.json"), None, "json", None, "h", head=head_of(doc), reload=lambda: doc,
              _hv=values)
    assert e.caps("provides") is not e.caps("provides")  # a new list each time, as before


def test_head_values_past_the_bound_are_their_entrys_own(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the bound of kept values, each is given as it is (its strings interned), and
    the table of shared ones grows no more."""
    from risutools.catalog import catalog

    monkeypatch.setattr(catalog, "_SHARED_VALUES", {})
    monkeypatch.setattr(catalog, "SHARED_VALUES_MAX", 2)
    docs = [{"capabilities": {"provides": [f"c{i}"]}} for i in range(3)]
    held = [catalog.shared_head_values(catalog.head_values(d)) for d in docs]
    assert held == [catalog.head_values(d) for d in docs]
    again = [catalog.shared_head_values(catalog.head_values(d)) for d in docs]
    assert again[0] is held[0] and again[1] is held[1]  # one tuple for all that are equal
    assert again[2] == held[2] and again[2] is not held[2]  # its own: not kept in the table
    assert held[2][0][0] is again[2][0][0] is sys.intern("c2")
    assert len(catalog._SHARED_VALUES) == 2


def test_each_kinds_list_is_kept_once_past_the_bound_of_values(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Values that all differ still share each kind's list when it is equal (the names come
    from one vocabulary), up to the same bound of different lists; past it, each its own."""
    from risutools.catalog import catalog

    monkeypatch.setattr(catalog, "_SHARED_VALUES", {})
    monkeypatch.setattr(catalog, "_SHARED_NAMES", {})
    monkeypatch.setattr(catalog, "SHARED_VALUES_MAX", 3)
    docs = [{"capabilities": {"provides": ["p.one", "p.two"], "requires": [f"r{i}"]}}
            for i in range(6)]
    held = [catalog.shared_head_values(catalog.head_values(d)) for d in docs]
    assert held == [catalog.head_values(d) for d in docs]
    assert all(h is not None for h in held)
    firsts = [h[0] for h in held if h is not None]
    assert all(p is firsts[0] for p in firsts)  # one provides list for all six documents
    assert len(catalog._SHARED_NAMES) == 3  # (the provides, r0 and the empty conflicts)
    requires = [h[1] for h in held if h is not None]
    assert requires[4] == ("r4",) and requires[4] is not catalog.shared_head_values(
        catalog.head_values(docs[4]))[1]


def test_a_head_without_its_values_is_held_the_others_read_back(
        cat: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An entry given what the passes read of its head has its head in the spool, past the
    bound of shared values too; one whose values a tuple cannot hold (a replay status that
    is no string) reads its head for them, so holds it (packed, in memory); each answers as
    the file's document says."""
    from risutools.catalog import catalog

    to_promoted(cat)
    odd = load(sorted(cat.glob("*.json"))[0])
    odd["component_id"] += "-odd"
    odd["projection"]["replay_status"] = 7
    (cat / "odd.json").write_text(json.dumps(odd), encoding="utf-8")
    monkeypatch.setattr(catalog, "_SHARED_VALUES", {})
    monkeypatch.setattr(catalog, "SHARED_VALUES_MAX", 1)
    c = Catalog.open(cat)
    review_catalog(c, jobs=1)
    entries = c.entries()
    assert len(catalog._SHARED_VALUES) == 1 and len(entries) > 2
    assert [e.path.name for e in entries if e._hv is None] == ["odd.json"]
    assert all(isinstance(e.head, bytes) == (e._hv is None) for e in entries)
    for e in entries:
        whole = load(e.path)
        assert e.parts == unpack(head_of(whole))
        assert e.caps("provides") == whole["capabilities"]["provides"]
        assert e.get("projection", "replay_status") == whole["projection"].get("replay_status")
        assert e.component_id == whole["component_id"]


@pytest.mark.parametrize("jobs", [1, 2])
def test_first_pass_head_values_equal_the_heads(
        tmp_path: Path, jobs: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The entries the first pass makes (in the parent and in the pool; JSON, YAML and
    NDJSON documents with hostile heads) answer every head question as they do reading
    their heads."""
    import yaml

    from risutools.catalog import review_pass

    monkeypatch.setattr(review_pass, "PARALLEL_MIN", 1)
    monkeypatch.setattr(review_pass, "CHUNK", 2)
    (tmp_path / "transitions.ndjson").write_text("", encoding="utf-8")
    docs = [{"component_id": f"c{i}", "component_version": "1", **d}
            for i, d in enumerate(HOSTILE_HEADS)]
    for i, d in enumerate(docs[:4]):
        (tmp_path / f"d{i}.json").write_text(json.dumps(d), encoding="utf-8")
    for i, d in enumerate(docs[4:7]):
        (tmp_path / f"y{i}.yaml").write_text(yaml.safe_dump(d), encoding="utf-8")
    (tmp_path / "z.ndjson").write_text("".join(json.dumps(d) + "\n" for d in docs[7:]),
                                       encoding="utf-8")
    c = Catalog.open(tmp_path)
    first = review_pass.first_pass(c.root, c.config, None, jobs, None, None)
    entries = review_pass.entries_of(first.surveyed)
    assert len(entries) == len(docs)
    assert sum(e._hv is not None for e in entries) >= 6  # the shortcut was taken
    for e in entries:
        ref = Entry(e.path, e.line, e.fmt, None, e.doc_sha256, head=e.head, reload=e.reload)
        assert _asked(e) == _asked(ref), e.where()
        whole = e.doc
        assert e.caps("requires") == Entry(e.path, e.line, e.fmt, whole, "h").caps("requires")


def _facts_catalog(root: Path, outside: Path) -> int:
    """A catalog whose documents (JSON, YAML, NDJSON) have facts of every kind: current,
    none, another component's, another source's, unreadable, a link leading outside, not
    an object, not parsed by the fast path; the number of documents."""
    import yaml

    from risutools.settings.catalog import FACTS_FORMAT

    (root / "transitions.ndjson").write_text("", encoding="utf-8")
    facts_dir = root / "facts"
    facts_dir.mkdir()

    def doc(i: int) -> dict[str, Any]:
        return {"component_id": f"c{i}", "component_version": "1",
                "provenance": {"review_status": "candidate",
                               "source_refs": [{"sha256": f"sha256:{i}"}]}}

    def facts(i: int, **more: Any) -> dict[str, Any]:
        return {"facts": FACTS_FORMAT, "component_id": f"c{i}", "source_sha256": f"sha256:{i}",
                "lorebook_entries": ["a", 1, "b"], "toggles_read": [], "module_id": "m",
                "button_names": ["x", "y"], "hosts": [], "findings": [{"rule": "R"}],
                "state": [{"scope": "chat", "key": "k", "read": True}], **more}

    bodies: dict[int, bytes | None] = {
        0: json.dumps(facts(0)).encode(), 1: None,
        2: json.dumps(facts(2, component_id="other")).encode(),
        3: json.dumps(facts(3, source_sha256="sha256:old")).encode(), 4: b"{not json",
        6: json.dumps(facts(6)).encode(), 7: json.dumps(facts(7)).encode(),
        8: json.dumps(facts(8, weight=1e400, module_id=["m", 2])).encode(),
        9: b"[1, 2]", 10: json.dumps(facts(10)).encode(),
    }
    for i, body in bodies.items():
        if body is not None:
            (facts_dir / f"c{i}.json").write_bytes(body)
    (outside / "c5.json").write_text(json.dumps(facts(5)), encoding="utf-8")
    (facts_dir / "c5.json").symlink_to(outside / "c5.json")
    for i in (0, 1, 2, 3, 4, 5, 8, 9):
        (root / f"d{i}.json").write_text(json.dumps(doc(i)), encoding="utf-8")
    (root / "y6.yaml").write_text(yaml.safe_dump(doc(6)), encoding="utf-8")
    (root / "z.ndjson").write_text(json.dumps(doc(7)) + "\n" + json.dumps(doc(10)) + "\n",
                                   encoding="utf-8")
    return 11


@pytest.mark.parametrize("jobs", [1, 2, "executor"])
def test_facts_found_in_the_first_pass_are_the_summaries_own(
        tmp_path: Path, jobs: int | str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The facts the first pass finds with each document (in the parent, in the pool, on
    an executor) make the summary that reading them from ``facts/`` makes: the same facts,
    members at hand, empty members and note, whatever the facts file holds."""
    from concurrent.futures import ThreadPoolExecutor

    from risutools.catalog import review_pass
    from risutools.catalog.interactions import HOT, FactsStore, facts_content, summarize_entry
    from risutools.safeio import FolderFiles

    monkeypatch.setattr(review_pass, "PARALLEL_MIN", 1)
    monkeypatch.setattr(review_pass, "CHUNK", 2)
    root, outside = tmp_path / "cat", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    count = _facts_catalog(root, outside)
    c = Catalog.open(root)
    with ThreadPoolExecutor(2) as pool:
        first = review_pass.first_pass(c.root, c.config, None, 2 if jobs == 2 else 1, None,
                                       pool if jobs == "executor" else None)
    entries = review_pass.entries_of(first.surveyed)
    assert len(entries) == count and all(e.found_facts is not None for e in entries)
    notes = set()
    for e in entries:
        got = summarize_entry(str(c.root), e, None, first.facts, e.found_facts)
        ref = summarize_entry(str(c.root), Entry(e.path, e.line, e.fmt, e.held, e.doc_sha256,
                                                 head=e.head, reload=e.reload),
                              FolderFiles(c.root, "facts"), FactsStore())
        assert (got.facts is None) == (ref.facts is None), e.component_id
        assert (got.facts_note, got.empty) == (ref.facts_note, ref.empty)
        notes.add(got.facts_note)
        if got.facts is not None and ref.facts is not None:
            assert not isinstance(got.facts, dict) and not isinstance(ref.facts, dict)
            assert got.facts.whole() == ref.facts.whole()
            for k in (*HOT, "state", "findings", "hosts", "weight", "facts"):
                assert got.member(k) == ref.member(k), k
                assert type(got.member(k)) is type(ref.member(k)), k
            assert facts_content(got) == facts_content(ref)
        assert got == ref or got.facts is not None  # (Facts of two stores: compared above)
    assert len(notes) >= 5, notes  # current, none, another's, another source, unreadable


def test_a_spool_read_short_or_failing_is_unwritable(monkeypatch: pytest.MonkeyPatch) -> None:
    """A spool read back that fails or gives fewer bytes is ``unwritable`` (one line), as
    the context of a write says it."""
    from risutools.errors import RisuError

    spool = rowspool.Spool()
    at = spool.add(rowspool.pack({"a": 1}))
    assert spool.read(at, len(rowspool.pack({"a": 1}))) == {"a": 1}
    for fake in (lambda fd, n, off: b"j", lambda fd, n, off: (_ for _ in ()).throw(
            OSError(5, "Input/output error"))):
        monkeypatch.setattr(rowspool.os, "pread", fake)
        with pytest.raises(RisuError) as err:
            spool.read(at, len(rowspool.pack({"a": 1})))
        assert err.value.code == "unwritable" and "TMPDIR" in err.value.why


def test_findings_sent_back_by_a_worker_are_the_same_findings() -> None:
    """What a worker sends back of a document (:func:`review_pass._flat`) is made again equal
    by the parent (:func:`review_pass._unflat`), each message kept once."""
    import sys

    from risutools.catalog import review_pass
    from risutools.contract.loaders import LoadOutcome
    from risutools.contract.validate import DocumentInfo
    from risutools.findings import Finding

    found = [Finding("MC101", "error", "m" + "x" * 3, "f.json", 3, "/a", "ev", "code"),
             Finding("MC102", "warning", "n")]
    gate = ("approved", tuple(found[::-1]))
    s = review_pass.Surveyed(DocumentInfo("f.json", None, "c", "1", "h", list(found)), [],
                             gate=gate)
    (_part, (back,)) = review_pass._unflat(review_pass._flat(LoadOutcome([], [], [], []), [s]))
    assert back.info.findings == found and back.gate == gate
    assert all(sys.intern(f.message) is f.message for f in back.info.findings)


def test_the_pool_keeps_texts_once_as_the_parent_does(
        cat: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What the first pass keeps of each document from the pool (made again by the parent,
    its texts kept once there) equals what it keeps reading them itself: findings, gates,
    verifications, facts; every message and pointer kept once (:func:`sys.intern`)."""
    import sys

    from risutools.catalog import review_pass

    monkeypatch.setattr(review_pass, "PARALLEL_MIN", 1)
    monkeypatch.setattr(review_pass, "CHUNK", 2)
    c = Catalog.open(cat)
    one = review_pass.first_pass(c.root, c.config, None, 1, None, None)
    pool = review_pass.first_pass(c.root, c.config, None, 2, None, None)
    assert len(one.surveyed) == len(pool.surveyed) > 2
    seen = {"verifications": 0, "findings": 0, "facts": 0}
    for a, b in zip(one.surveyed, pool.surveyed, strict=True):
        assert (a.info.findings, a.gate, a.verifications, a.names, a.values) == \
            (b.info.findings, b.gate, b.verifications, b.names, b.values)
        seen["verifications"] += len(a.verifications)
        seen["findings"] += len(a.info.findings)
        for f in [*b.info.findings, *(b.gate[1] if b.gate else ())]:
            assert sys.intern(f.message) is f.message
        assert all(sys.intern(v.pointer) is v.pointer for v in b.verifications)
        assert (a.facts is None) == (b.facts is None)
        if a.facts is not None and b.facts is not None and a.facts[0] is not None:
            fa, fb = a.facts[0], b.facts[0]
            assert fb is not None and fa.whole() == fb.whole() and fa.hot == fb.hot
            assert all(sys.intern(v) is v for v in fb.hot if isinstance(v, str))
            seen["facts"] += 1
    assert all(seen.values()), seen  # (each was compared)


def test_a_spooled_value_is_read_back_by_its_offset_and_size_in_one_number() -> None:
    """A spool's handle holds its offset and size as one number, and reads back at both as
    given, past 4 GiB of offset too; a value of 4 GiB or more is refused."""

    class Seen:
        def __init__(self) -> None:
            self.asked: list[tuple[int, int]] = []

        def read(self, offset: int, size: int) -> tuple[int, int]:
            self.asked.append((offset, size))
            return offset, size

    seen = Seen()
    for offset, size in ((0, 0), (7, 1), (5 << 32, (1 << 32) - 1), (123456789012, 4096)):
        handle = rowspool._Stored(seen, offset, size)  # type: ignore[arg-type]
        assert handle() == (offset, size)
    assert seen.asked[-1] == (123456789012, 4096)
    with pytest.raises(ValueError):
        rowspool._Stored(seen, 0, 1 << 32)  # type: ignore[arg-type]
    spool = rowspool.Spool()
    handles = [spool.put(rowspool.pack({"i": i, "s": "é" * i})) for i in range(300)]
    assert [h() for h in handles] == [{"i": i, "s": "é" * i} for i in range(300)]


def test_a_spool_reads_back_each_value_across_its_writes(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Values put between the spool's writes (held until SPOOL_WRITE bytes wait, then
    joined and written once) read back equal, whether asked before their write, after it,
    or in any order; the file holds the values in the order put, nothing in between."""
    monkeypatch.setattr(rowspool, "SPOOL_WRITE", 64)
    spool = rowspool.Spool()
    values = [{"i": i, "s": "é" * (i % 40)} for i in range(200)]
    handles = []
    for i, v in enumerate(values):
        handles.append(spool.put(rowspool.pack(v)))
        if i % 7 == 0:  # (one just put, still waiting to be written)
            assert handles[-1]() == v
        if i % 11 == 0:  # (an older one)
            assert handles[i // 2]() == values[i // 2]
    assert [h() for h in reversed(handles)] == values[::-1]
    spool._flush()
    whole = os.pread(spool._file.fileno(), 1 << 20, 0)
    assert whole == b"".join(rowspool.pack(v) for v in values)
