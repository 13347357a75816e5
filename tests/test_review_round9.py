"""Round 9 of the review's speed (issue 23): each fast path against the reference path it
stands for, on varied and hostile inputs.

- the base hash sharing the hashing of the document's canonical bytes before its runtime
  field (``sha256_kept`` / ``sha256_alike``, ``runtime_mark``, the loader's ``canon``);
- a document's spool copy made of its file's bytes (``pack_parsed``);
- the JSON report's row blocks checked printable on their bytes and written as they are
  (``json_bytes``, pieces of bytes);
- what a worker sends back as ``marshal`` data (``_sent`` / ``_received``);
- the start-up of a review without ``concurrent.futures``, ``socket`` and ``logging``.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import unicodedata
from pathlib import Path
from typing import Any

import orjson
import pytest
from harness import run_cli
from test_catalog_support import MOOD, doc_path, fresh_catalog, load

from risutools.canonical import (
    canonical,
    doc_sha256,
    sha256_alike,
    sha256_kept,
    sha256_prefixed,
)
from risutools.catalog import review_pass
from risutools.catalog.catalog import Catalog, HeadIn, head_of, head_parts
from risutools.catalog.review import review_catalog
from risutools.contract.loaders import load_bytes
from risutools.printable import json_bytes, json_bytes_text, json_text
from risutools.report.output import write_out, write_report
from risutools.report.review_text import render_review_json, review_json_pieces
from risutools.rowspool import Rows, pack, pack_parsed, unpack
from risutools.settings import lifecycle

ROOT = Path(__file__).resolve().parents[1]


# --------------------------------------------------------------------------- hashes


def test_sha256_kept_and_alike_are_sha256_of_the_bytes() -> None:
    texts = [b"", b"a", b"x" * 63, b"x" * 64, b"x" * 65, "한국어 …".encode() * 50,
             bytes(range(256)) * 9]
    for data in texts:
        for at in (-1, 0, 1, len(data) // 2, len(data) - 1, len(data), len(data) + 5):
            digest, kept = sha256_kept(data, at)
            assert digest == sha256_prefixed(data)
            assert (kept is None) == (at <= 0)
            for other in texts:  # another text, its beginning alike or not: the same hash
                assert sha256_alike(other, kept) == sha256_prefixed(other)
                assert sha256_alike(data[:at] + other, kept) == \
                    sha256_prefixed(data[:at] + other)
            assert sha256_alike(data, kept) == sha256_prefixed(data)
            if at > 0 and data:  # one byte changed inside the kept beginning
                changed = bytes([data[0] ^ 1]) + data[1:]
                assert sha256_alike(changed, kept) == sha256_prefixed(changed)


def _variants() -> list[dict[str, Any]]:
    """Documents whose runtime field is where the base hash's sharing guesses it, and
    where it does not."""
    base = {"component_id": "module.risu.1.a", "contract": "risu-component-v1",
            "payload": {"title": "제목 …", "n": 3},
            "provenance": {"review_status": "candidate", "runtime_status": "inactive",
                           "source_kind": "risum"}}
    out = [base]

    def variant(change: Any) -> None:
        d = json.loads(json.dumps(base))
        change(d)
        out.append(d)

    variant(lambda d: d["payload"].update(runtime_status="earlier key of the same name"))
    variant(lambda d: d["provenance"].pop("runtime_status"))
    variant(lambda d: d.update(provenance={"runtime_status": "active"}))  # alone: first
    variant(lambda d: d["provenance"].update(zz="after it"))
    variant(lambda d: d.update(zzz={"runtime_status": "x"}))  # a key after provenance
    variant(lambda d: d["provenance"].update(runtime_status={"nested": ["a", 1]}))
    variant(lambda d: d.update(provenance="not an object"))
    variant(lambda d: d["provenance"].update(runtime_status="\"runtime_status\":"))
    return out


def test_the_base_hash_shared_with_the_documents_is_the_base_hash() -> None:
    docs = _variants()
    for doc in docs:
        canon = canonical(doc)
        mark = lifecycle.runtime_mark(canon)
        assert 0 <= mark < len(canon)
        digest, kept = sha256_kept(canon, mark)
        assert digest == doc_sha256(doc)
        assert lifecycle.plain_base_sha256(doc, kept) == lifecycle.base_sha256(doc)
        for other in docs:  # kept of another document: still this one's base hash
            assert lifecycle.plain_base_sha256(other, kept) == lifecycle.base_sha256(other)
    # the usual document shares all its bytes before its runtime field
    canon = canonical(docs[0])
    assert canon[:lifecycle.runtime_mark(canon)] == \
        canonical(lifecycle.without_runtime(docs[0]))[:lifecycle.runtime_mark(canon)]
    assert lifecycle.runtime_mark(canon) == canon.index(b',"runtime_status":')


def test_the_loader_leaves_the_canonical_bytes_to_hash() -> None:
    for doc in _variants():
        data = json.dumps(doc, ensure_ascii=False, indent=2).encode()
        [ld] = load_bytes(data, "x.json", fmt="json", canon=True).documents
        [hashed] = load_bytes(data, "x.json", fmt="json").documents
        assert ld.sha256 is None and ld.canon == canonical(doc)
        assert hashed.canon is None and hashed.sha256 == doc_sha256(doc)
        kept = review_pass._hashed(ld)
        assert ld.sha256 == hashed.sha256 and ld.canon is None
        assert lifecycle.plain_base_sha256(ld.doc, kept) == lifecycle.base_sha256(doc)
    # the exact path (a float, a byte-order mark) leaves nothing to hash later
    for data in (b'{"component_id": "a", "x": 1.5}', b'\xef\xbb\xbf{"component_id": "a"}'):
        [ld] = load_bytes(data, "x.json", fmt="json", canon=True).documents
        assert ld.canon is None and review_pass._hashed(ld) is None


# --------------------------------------------------------------------------- the spool


def _ordered(value: Any) -> Any:
    """``value`` with the order of every object's keys made visible."""
    if isinstance(value, dict):
        return [(k, _ordered(v)) for k, v in value.items()]
    if isinstance(value, list):
        return [_ordered(v) for v in value]
    return value


def test_a_spool_copy_of_the_files_bytes_reads_back_as_the_packed_document() -> None:
    texts = [b'{"b": 1, "a": [1, 2, {"z": null, "y": true}], "c": "\\u00e9\xed\x95\x9c"}',
             b'  {\n  "z" : "x" ,\n\t"a":{}}\n  ', b'[]', b'"s"', b'{"k": -9223372036854775808}']
    for doc in _variants():
        texts.append(json.dumps(doc, ensure_ascii=False, indent=1).encode())
    for text in texts:
        value = orjson.loads(text)
        back = unpack(pack_parsed(text))
        assert _ordered(back) == _ordered(value) == _ordered(unpack(pack(value)))
        assert json.dumps(back) == json.dumps(value)  # (the keys in the same order)


# --------------------------------------------------------------------------- the report


def _escaped_samples() -> list[str]:
    """Characters around every class :func:`json_text` escapes, and printable ones."""
    chars = ["a", " ", "~", "\n", "\t", "\x00", "\x1f", "\x7f", "\x80", "\x9f", "\xa0", "\xad",
             "\u0600", "\u061c", "\u06dd", "\u070f", "\u180e", "\u200b", "\u200f", "\u2028",
             "\u2029", "\u202e", "\u2060", "\u2066", "\ufeff", "\ufff9", "\ue000", "\u0378",
             "한", "…", "—", "é", "\U0001f600", "\U000e0041", "\U000110bd", "\U0010ffff"]
    # every character of the Basic Multilingual Plane whose category json_text escapes
    chars += [chr(o) for o in range(0x80, 0x10000) if not 0xD800 <= o <= 0xDFFF
              and unicodedata.category(chr(o)) in ("Cc", "Cf", "Zl", "Zp")]
    texts = [f'["x{c}y","{c}",{{"k{c}":1}}]' for c in chars]
    texts += ['["plain ascii"]', '["한국어 …"]', "", "[" + ",".join(f'"{c}"' for c in chars) + "]"]
    return texts


def test_json_bytes_is_json_text_of_the_decoded_bytes() -> None:
    for text in _escaped_samples():
        data = text.encode("utf-8")
        want = json_text(text)
        got = json_bytes(data)
        assert json_bytes_text(data) == want
        if isinstance(got, bytes):  # kept as they are only when nothing is escaped
            assert got is data and want == text
        else:
            assert got == want
        assert (want == text) == isinstance(got, bytes) or want == text


class _Review:
    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data


def test_the_report_pieces_of_bytes_are_the_reports_text(tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]
                                                         ) -> None:
    rows = Rows()
    for i, text in enumerate(_escaped_samples() * 3):
        rows.append({"i": i, "id": text, "n": None})
    plain = Rows([{"id": f"module.risu.{i}.한국…"} for i in range(600)])
    data = {"documents": rows, "board": plain, "counts": {"x\u202e": 1},
            "lineage": {"lineages": Rows([{"a": "\u2028"}]), "relations": []}}
    rv: Any = _Review(data)
    whole = {**data, "documents": list(rows), "board": list(plain),
             "lineage": {"lineages": [{"a": "\u2028"}], "relations": []}}
    text = json_text(canonical(whole).decode()) + "\n"
    assert render_review_json(rv) == text
    pieces = list(review_json_pieces(rv))
    assert any(isinstance(p, bytes) for p in pieces) and any(isinstance(p, str) for p in pieces)
    out = tmp_path / "r.json"
    write_report(str(out), iter(pieces))
    assert out.read_bytes() == text.encode()
    write_out(iter(pieces), None)
    assert capsys.readouterr().out == text


def test_a_review_report_is_the_same_text_in_pieces(tmp_path_factory: pytest.TempPathFactory,
                                                   tmp_path: Path) -> None:
    cat = fresh_catalog(tmp_path_factory, tmp_path)
    doc = load(doc_path(cat, MOOD))
    doc["component_id"] = "module.risu.186123400.odd\u202e\u0085-한국…"
    (cat / "odd.json").write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    rv = review_catalog(Catalog.open(cat), jobs=1)
    text = render_review_json(rv)
    assert "\\u202e" in text and "\u202e" not in text
    out = tmp_path / "r.json"
    write_report(str(out), review_json_pieces(rv))
    assert out.read_bytes() == text.encode()


# --------------------------------------------------------------------------- the workers


def test_what_a_worker_sends_back_is_what_it_made(tmp_path_factory: pytest.TempPathFactory,
                                                  tmp_path: Path) -> None:
    cat = fresh_catalog(tmp_path_factory, tmp_path)
    doc = load(doc_path(cat, MOOD))
    doc["component_id"] = "module.risu.186123400.odd\u202e\ud800-한국…"  # a lone surrogate
    (cat / "odd.json").write_text(json.dumps(doc), encoding="utf-8")
    (cat / "float.json").write_text(json.dumps({**doc, "component_id": "f", "x": 1.5}))
    from risutools.contract.loaders import list_folder
    from risutools.safeio import FolderFiles

    cfg = Catalog.open(cat).config
    _listing, paths = list_folder(cat, cfg.exclude)
    review_pass._SHARED = (cfg, None, FolderFiles(cat, "facts"))
    try:
        sent = review_pass._survey_files(paths)
    finally:
        review_pass._SHARED, review_pass._WORKER = None, None
    assert isinstance(sent, bytes)
    flats = review_pass._received(sent)
    import marshal

    assert marshal.loads(sent) == flats
    plain = review_pass._received(review_pass._sent(flats))
    assert plain == flats and [review_pass._unflat(f) for f in plain] == \
        [review_pass._unflat(f) for f in flats]

    class Sub(str):
        pass

    odd = [(*flats[0][:3], [(*flats[0][3][0][:4], Sub("sub"), *flats[0][3][0][5:])])]
    assert review_pass._sent(odd) is odd  # (a subclass: sent as it is, pickled)


def test_a_review_on_workers_equals_one_process(tmp_path_factory: pytest.TempPathFactory,
                                                tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(review_pass, "CHUNK", 5)
    monkeypatch.setattr(review_pass, "PARALLEL_MIN", 1)
    cat = fresh_catalog(tmp_path_factory, tmp_path)
    base = load(doc_path(cat, MOOD))
    for i, change in enumerate(_variants() * 3):
        doc = {**base, **{k: v for k, v in change.items() if k != "component_id"},
               "component_id": f"module.risu.186123400.v{i}\u202e-한"}
        (cat / f"v{i:02d}.json").write_text(json.dumps(doc, ensure_ascii=False, indent=1),
                                           encoding="utf-8")
    one = render_review_json(review_catalog(Catalog.open(cat), jobs=1))
    assert render_review_json(review_catalog(Catalog.open(cat), jobs=3)) == one


def test_an_entrys_head_read_from_its_whole_document_is_its_packed_head(
        tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    """A document orjson parsed keeps no head packed apart (``first_head``): its entry reads
    the head from the whole document (``HeadIn``), the value the packed head reads back as,
    in the same order; a document the exact path parsed (a float) keeps its packed head."""
    cat = fresh_catalog(tmp_path_factory, tmp_path)
    base = load(doc_path(cat, MOOD))
    for i, change in enumerate(_variants()):
        doc = {**base, **{k: v for k, v in change.items() if k != "component_id"},
               "component_id": f"module.risu.186123400.h{i}-한"}
        (cat / f"h{i:02d}.json").write_text(json.dumps(doc, ensure_ascii=False, indent=1),
                                            encoding="utf-8")
    (cat / "float.json").write_text(json.dumps({**base, "component_id": "f", "x": 1.5}))
    opened = Catalog.open(cat)
    review_catalog(opened, jobs=1)
    entries = [e for e in opened.entries() if e.held is None and e.head is not None]
    assert any(isinstance(e.head, HeadIn) for e in entries)
    assert any(not isinstance(e.head, HeadIn) and e.component_id == "f" for e in entries)
    for e in entries:
        doc = e.doc
        packed = unpack(head_of(doc, parsed_by_orjson=True))
        assert e.parts == packed == head_parts(doc) and list(e.parts) == list(packed)
        assert orjson.dumps(e.parts) == orjson.dumps(packed)


# --------------------------------------------------------------------------- start-up


def test_a_review_starts_without_the_pool_and_cluster_modules() -> None:
    code = ("import sys, risutools.cli, risutools.commands.review; "
            "print(sorted(m for m in ('concurrent.futures', 'socket', 'logging') "
            "if m in sys.modules))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True, cwd=ROOT).stdout.strip()
    assert loaded == "[]"


def test_hashlib_copy_keeps_the_state() -> None:
    """(What sha256_kept relies on: a copy goes on from the same state, the original
    unchanged.)"""
    h = hashlib.sha256(b"abc")
    c = h.copy()
    c.update(b"def")
    assert h.hexdigest() == hashlib.sha256(b"abc").hexdigest()
    assert c.hexdigest() == hashlib.sha256(b"abcdef").hexdigest()


# --------------------------------------------------------------------------- MC500's strings


def test_the_review_finds_active_code_as_validate_does(tmp_path: Path) -> None:
    """The review hands MC500 the strings its loader met (``texts``), as validate does: the
    same MC500 findings, at the same places, as validate's for each document, code put in a
    payload string, a projection string, a list item and a key's value of each."""
    seed = json.loads((ROOT / "fixtures" / "documents" / "seed-000-context-cutter.json")
                      .read_text(encoding="utf-8"))
    cat = tmp_path / "catalog"
    cat.mkdir()
    code = ['local n = getChatVar("omitted_count")', "<script>alert(1)</script>",
            "chat.filter(m => m.role !== 'system')", "{{setvar::omitted::1}}"]
    for n, text in enumerate(code):
        doc = json.loads(json.dumps(seed))
        doc["component_id"] = f"{doc['component_id']}-code-{n}"
        doc["payload"]["note"] = text
        doc["payload"]["notes"] = ["plain words", text]
        doc.setdefault("projection", {})["remark"] = {"inner": text}
        (cat / f"d{n}.json").write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    r = run_cli("review", str(cat), "-f", "json", "-j", "1", cwd=tmp_path)
    assert r.returncode in (0, 1), r.stderr
    v = run_cli("validate", "-f", "json", *sorted(map(str, cat.iterdir())), cwd=tmp_path)
    assert v.returncode in (0, 1), v.stderr

    def mc500(findings: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
        return sorted((Path(f["file"]).name, f["pointer"], f["message"]) for f in findings
                      if f["rule"] == "MC500")

    reviewed = mc500([f for d in json.loads(r.stdout)["documents"] for f in d["findings"]])
    validated = mc500(json.loads(v.stdout)["findings"])
    assert len(validated) >= 3 * len(code)
    assert reviewed == validated


def test_duplicates_and_collisions_leave_out_lone_groups_as_before() -> None:
    """``_duplicates`` and ``_collisions`` sort only the groups of two entries or more: the
    sections equal those of the reference (every group sorted, then the lone ones dropped)
    on entries sharing sources and ids every way, with and without a label."""
    import random

    from risutools.catalog import review
    from risutools.catalog.catalog import source_part

    class Fake:
        def __init__(self, i: int, cid: str, src: tuple[str, str] | None, labelled: bool
                     ) -> None:
            self.component_id, self.version = cid, f"1.{i % 3}"
            self._where = f"catalog/f{i:04d}.json"
            self.label = ("t", "risu:1", src) if labelled else None
            sha, part = src if src is not None else ("", "")
            self._refs = [{"sha256": sha, "member": part}] if src is not None else None

        def where(self) -> str:
            return self._where

        def get(self, *path: str) -> Any:
            return self._refs if path == ("provenance", "source_refs") else None

    def reference(entries: list[Any]) -> tuple[list[Any], list[Any]]:
        by: dict[Any, list[Any]] = {}
        for e in entries:
            src = e.label[2] if e.label is not None else source_part(
                e.get("provenance", "source_refs"))
            if src is not None:
                by.setdefault(src, []).append(e)
        dups = []
        for (s, _part), group in sorted(by.items()):
            ids = sorted({e.component_id for e in group})
            if len(ids) > 1:
                dups.append({"sha256": s, "components": ids,
                             "files": sorted(e.where() for e in group)})
        ids_by: dict[str, list[Any]] = {}
        for e in entries:
            ids_by.setdefault(e.component_id, []).append(e)
        cols = [{"component_id": cid, "files": sorted(e.where() for e in group),
                 "versions": sorted({e.version for e in group})}
                for cid, group in sorted(ids_by.items()) if len(group) > 1]
        return dups, cols

    rng = random.Random(23)
    for n in (0, 1, 2, 7, 60, 400):
        entries = [Fake(i, f"m.{rng.randrange(max(1, n // 2))}",
                        None if rng.random() < 0.1 else
                        (f"sha256:{rng.randrange(max(1, n // 3)):02x}", rng.choice(["", "a"])),
                        rng.random() < 0.8) for i in range(n)]
        rng.shuffle(entries)
        dups, cols = reference(entries)
        assert review._duplicates(entries) == dups  # type: ignore[arg-type]
        assert review._collisions(entries) == cols  # type: ignore[arg-type]
        if n >= 60:
            assert dups and cols  # (the sections are not empty)


@pytest.mark.parametrize(("select", "ignore"), [((), ()), (("MC4",), ()), ((), ("MC401",)),
                                                (("MC", "RV1"), ("MC5", "MC104")),
                                                (("MC000",), ("MC0",))])
def test_the_settled_findings_are_those_the_filter_keeps(
        select: tuple[str, ...], ignore: tuple[str, ...]) -> None:
    """``_settle`` asks ``--select``/``--ignore`` once a rule: every document keeps the
    findings the filter keeps, asked finding by finding (the reference), in order."""
    import random

    from risutools.catalog import review
    from risutools.contract.validate import DocumentInfo, Result
    from risutools.findings import Finding
    from risutools.settings.config import Settings

    rng = random.Random(",".join((*select, "|", *ignore)))
    rules = ["MC000", "MC001", "MC100", "MC104", "MC202", "MC305", "MC401", "MC402", "MC500",
             "MC600"]

    def some() -> list[Finding]:
        return [Finding(rng.choice(rules), "error", f"m{i}", file="f")
                for i in range(rng.randrange(4))]

    cfg = Settings(select=select, ignore=ignore)
    docs = [DocumentInfo("f", i, "c", "1", None, some()) for i in range(200)]
    result = Result("review", documents=docs, file_findings=some() + some())
    keep = cfg.rule_filter().keep
    before = sum(len(d.findings) for d in docs)
    want = ([f for f in result.file_findings if keep(f.rule)],
            [[f for f in d.findings if keep(f.rule)] for d in docs])
    review._settle(result, cfg)
    assert (result.file_findings, [d.findings for d in docs]) == want
    if select or ignore:
        assert sum(map(len, want[1])) < before  # (the filter drops some)
