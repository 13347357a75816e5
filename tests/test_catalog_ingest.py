"""Batch ingest: discovery by content, bad files, de-duplication, cache, determinism."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from harness import SOURCES

from risutools.catalog.ingest import ingest
from risutools.contract.validate import validate_document
from risutools.formats.risum import write_risum


def _module(name: str, **extra: object) -> dict[str, object]:
    mod: dict[str, object] = {
        "name": name,
        "description": "test module",
        "id": "00000000-0000-4000-8000-000000000001",
        "lorebook": [{"key": "k", "content": "hello", "comment": "c", "mode": "normal"}],
    }
    mod.update(extra)
    return mod


def _risum(path: Path, name: str, assets: list[bytes] | None = None) -> Path:
    assets = assets or []
    mod = _module(name, assets=[[f"a{i}", "", "png"] for i in range(len(assets))])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(write_risum(mod, assets))
    return path


def _tree(tmp: Path) -> Path:
    src = tmp / "src"
    shutil.copytree(SOURCES, src)
    return src


def _catalog_bytes(out: Path) -> dict[str, bytes]:
    return {
        p.relative_to(out).as_posix(): p.read_bytes()
        for p in sorted(out.rglob("*"))
        if p.is_file() and ".risutools-cache" not in p.parts
    }


def test_ingest_fixture_sources_every_document_valid(tmp_path: Path) -> None:
    out = tmp_path / "cat"
    result = ingest(SOURCES, out, jobs=1)
    assert result.ok, [s.error for s in result.failures] + result.collisions
    docs = sorted(out.glob("*.json"))
    assert len(docs) >= 5
    for p in docs:
        doc = json.loads(p.read_text(encoding="utf-8"))
        errors = [f for f in validate_document(doc, file=p.name) if f.severity == "error"]
        assert errors == [], (p.name, errors)
        assert doc["provenance"]["review_status"] == "candidate"
    # the card's embedded module became a component of its own, controlled by the character
    card_docs = [
        json.loads(p.read_text(encoding="utf-8"))
        for p in docs
        if "!module.risum" in p.read_text(encoding="utf-8")
    ]
    assert card_docs and all(d["payload"]["controller"] == "character" for d in card_docs)


def test_ingest_is_deterministic_across_job_counts(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    ingest(SOURCES, a, jobs=1, use_cache=False)
    ingest(SOURCES, b, jobs=2, use_cache=False)
    assert _catalog_bytes(a) == _catalog_bytes(b)
    c = tmp_path / "c"
    ingest(SOURCES, c, ndjson=True, use_cache=False, jobs=1)
    d = tmp_path / "d"
    ingest(SOURCES, d, ndjson=True, use_cache=False, jobs=2)
    assert (c / "components.ndjson").read_bytes() == (d / "components.ndjson").read_bytes()
    lines = (c / "components.ndjson").read_text(encoding="utf-8").splitlines()
    ids = [json.loads(line)["component_id"] for line in lines]
    assert ids == sorted(ids) and len(ids) == len(set(ids))


def test_bad_files_are_reported_and_the_run_goes_on(tmp_path: Path) -> None:
    src = tmp_path / "src"
    _risum(src / "1001_good.risum", "Good One")
    (src / "2002_truncated.risum").write_bytes(b"\x6f\x00\xff\xff\x00\x00abc")
    (src / "bad_magic.risum").write_bytes(b"\x6f\x07" + b"\x00" * 10)
    (src / "notes.txt").write_text("not a risu file", encoding="utf-8")
    (src / "empty.risum").write_bytes(b"")
    result = ingest(src, tmp_path / "cat", jobs=1)
    assert not result.ok
    failed = {s.path for s in result.failures}
    assert "2002_truncated.risum" in failed
    assert all(s.error and "\n" not in s.error for s in result.failures)
    assert [s.path for s in result.sources if s.status == "ok"] == ["1001_good.risum"]
    assert "notes.txt" in result.skipped
    assert len(list((tmp_path / "cat").glob("*.json"))) == 1


def test_duplicates_keep_the_larger_post_id(tmp_path: Path) -> None:
    src = tmp_path / "src"
    first = _risum(src / "100_cutter.risum", "Cutter")
    shutil.copy(first, src / "250_cutter-copy.risum")
    result = ingest(src, tmp_path / "cat", jobs=1)
    by_path = {s.path: s for s in result.sources}
    assert by_path["100_cutter.risum"].duplicate_of == "250_cutter-copy.risum"
    assert by_path["250_cutter-copy.risum"].status == "ok"
    names = [p.name for p in (tmp_path / "cat").glob("*.json")]
    assert len(names) == 1 and ".250." in names[0]


def test_cache_rerun_reads_only_new_files(tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from risutools.catalog import cache as cache_mod

    # (the sources were just written: recorded at once, not a second later)
    monkeypatch.setattr(cache_mod, "RACY_NS", 0)
    src = tmp_path / "src"
    for i in range(5):
        _risum(src / f"{300 + i}_m{i}.risum", f"Module {i}", [os.urandom(64)])
    out = tmp_path / "cat"
    first = ingest(src, out, jobs=1)
    assert first.counts()["cached"] == 0
    before = _catalog_bytes(out)
    _risum(src / "999_new.risum", "Brand New")
    second = ingest(src, out, jobs=1)
    cached = {s.path for s in second.sources if s.cached}
    assert cached == {f"{300 + i}_m{i}.risum" for i in range(5)}
    after = _catalog_bytes(out)
    assert {k: v for k, v in after.items() if k in before} == before
    assert len(after) == len(before) + 2  # its document and its facts (facts/)
    # a corrupted cache is ignored, not fatal
    (out / ".risutools-cache" / "ingest.msgpack").write_bytes(b"\xc1garbage")
    third = ingest(src, out, jobs=1)
    assert third.ok and third.counts()["cached"] == 0


def test_reviewed_documents_are_never_overwritten(tmp_path: Path) -> None:
    src = tmp_path / "src"
    _risum(src / "4242_keep.risum", "Keep Me")
    out = tmp_path / "cat"
    ingest(src, out, jobs=1)
    (doc_path,) = out.glob("*.json")
    doc = json.loads(doc_path.read_text(encoding="utf-8"))
    doc["provenance"]["review_status"] = "approved"
    doc["payload"]["idea_layers"]["lineage"]["promotion_status"] = "approved"
    doc_path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    reviewed = doc_path.read_bytes()
    result = ingest(src, out, jobs=1, use_cache=False, lang="ko")
    assert result.kept_reviewed == [doc["component_id"]]
    assert doc_path.read_bytes() == reviewed


def test_any_executor_can_run_the_batch(tmp_path: Path) -> None:
    out_a, out_b = tmp_path / "a", tmp_path / "b"
    with ThreadPoolExecutor(2) as pool:
        ingest(SOURCES, out_a, executor=pool, use_cache=False)
    ingest(SOURCES, out_b, jobs=1, use_cache=False)
    assert _catalog_bytes(out_a) == _catalog_bytes(out_b)


def test_cli_ingest_exit_codes_and_json(tmp_path: Path) -> None:
    src = tmp_path / "src"
    _risum(src / "77_ok.risum", "Fine")
    cmd = [sys.executable, "-m", "risutools", "ingest", str(src), "-o", str(tmp_path / "c")]
    ok = subprocess.run([*cmd, "--json", "-j", "1"], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    report = json.loads(ok.stdout)
    assert report["counts"]["ok"] == 1
    (src / "78_bad.risum").write_bytes(b"\x6f\x00\x10\x00\x00\x00")
    bad = subprocess.run([*cmd, "-j", "1"], capture_output=True, text=True)
    assert bad.returncode == 1
    assert "78_bad.risum" in bad.stderr and "Traceback" not in bad.stderr
    missing = subprocess.run(
        [sys.executable, "-m", "risutools", "ingest", str(tmp_path / "nope"), "-o", "x"],
        capture_output=True,
        text=True,
    )
    assert missing.returncode == 2 and "Traceback" not in missing.stderr


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_generated_documents_carry_no_module_code(tmp_path: Path, lang: str) -> None:
    from risutools.formats import read_path

    out = tmp_path / lang
    ingest(SOURCES, out, jobs=1, lang=lang, use_cache=False)
    text = "\n".join(p.read_text(encoding="utf-8") for p in sorted(out.glob("*.json")))
    for src in sorted(SOURCES.iterdir()):
        try:
            modules = read_path(src)
        except Exception:
            continue
        for module in modules:
            for trig in module.trigger:
                for eff in trig.get("effect", []) if isinstance(trig, dict) else []:
                    code = eff.get("code") if isinstance(eff, dict) else None
                    if isinstance(code, str):
                        for line in code.splitlines():
                            if len(line.strip()) > 10:
                                assert line.strip() not in text, (src.name, line)
            for script in module.regex:
                pat = script.get("in") if isinstance(script, dict) else None
                if isinstance(pat, str) and len(pat) > 3:
                    assert json.dumps(pat, ensure_ascii=False)[1:-1] not in text


@pytest.fixture(scope="module")
def settled_source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One module written more than a second ago: every run records it (a source changed
    less than a second before a run is not), so the caches compared below are alike
    whatever the clock says between the runs."""
    src = tmp_path_factory.mktemp("settled") / "src"
    _risum(src / "300_m.risum", "Module")
    time.sleep(1.1)
    return src


@pytest.mark.parametrize(
    "payload, why",
    [
        (b"\xc1garbage", "not a valid cache"),
        (b"\xdd\xff\xff\xff\xff", "not a valid cache"),  # a 4-billion-slot array claim
        (b"\xdb\xff\xff\xff\xff", "not a valid cache"),  # a 4 GiB string claim
        (b"\x91" * 1000 + b"\xc0", "not a valid cache"),  # nesting
        (b"\xdc\xff\xff" + b"\x90" * 0xFFFF, "not a valid cache"),  # 64 K empty lists
        (b"\x83\xa6format\x02\xa4tool\xa1x\xa4stat\x01", "ignored"),  # an earlier format
        (b"\x92\x03\xa1x", "ignored"),  # another tool version's header
        (b"", "not a valid cache"),
    ],
)
def test_hostile_cache_is_one_line_and_rebuilt(tmp_path: Path, payload: bytes, why: str,
                                               settled_source: Path) -> None:
    from risutools import __version__
    from risutools.catalog import cache as cache_mod

    src = settled_source
    out = tmp_path / "cat"
    ingest(src, out, jobs=1)
    ingest(src, out, jobs=1)  # (the catalog files are recorded by the run after a write)
    cache_file = out / ".risutools-cache" / "ingest.msgpack"
    good = cache_file.read_bytes()
    cache_file.write_bytes(payload)
    run = ingest(src, out, jobs=1)
    assert run.ok and run.counts()["cached"] == 0
    if why == "ignored":  # well-formed msgpack of another format or tool: dropped quietly
        assert run.notices == []
    else:
        (line,) = run.notices
        assert "\n" not in line and why in line and "cache" in line and "rebuilt" in line
    assert cache_file.read_bytes() == good  # rebuilt, byte for byte
    # the right tool version with a record of the wrong shape: one line too
    import msgpack

    cache_file.write_bytes(msgpack.packb([cache_mod.CACHE_FORMAT, __version__])
                           + msgpack.packb([0, "x", 1]))
    (line,) = ingest(src, out, jobs=1).notices
    assert "cache-unreadable" in line and "expected shape" in line


def test_cache_bounds_are_enforced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from risutools.catalog import cache as cache_mod

    monkeypatch.setattr(cache_mod, "RACY_NS", 0)  # (the source was just written)
    src = tmp_path / "src"
    _risum(src / "300_m.risum", "Module")
    out = tmp_path / "cat"
    ingest(src, out, jobs=1)
    cache_file = out / ".risutools-cache" / "ingest.msgpack"
    assert ingest(src, out, jobs=1).counts()["cached"] == 1
    # too many entries: refused
    monkeypatch.setattr(cache_mod, "MAX_CACHE_ENTRIES", 1)
    run = ingest(src, out, jobs=1)
    (line,) = run.notices
    assert "more than 1 entries" in line
    assert run.counts()["cached"] == 0
    monkeypatch.undo()
    monkeypatch.setattr(cache_mod, "RACY_NS", 0)
    # an array longer than a record may hold: refused by msgpack itself
    monkeypatch.setattr(cache_mod, "MAX_CACHE_ITEMS", 2)
    (line,) = ingest(src, out, jobs=1).notices
    assert "cache-unreadable" in line and "exceeds" in line
    monkeypatch.undo()
    monkeypatch.setattr(cache_mod, "RACY_NS", 0)
    # too many bytes: never read past the bound
    monkeypatch.setattr(cache_mod, "MAX_CACHE_BYTES", 16)
    (line,) = ingest(src, out, jobs=1).notices
    assert "16" in line and cache_file.name in line
    monkeypatch.undo()
    monkeypatch.setattr(cache_mod, "RACY_NS", 0)
    # not a regular file (a FIFO in its place: never opened for reading, which would block)
    cache_file.unlink()
    os.mkfifo(cache_file)
    from risutools.catalog.cache import IngestCache

    problem = IngestCache.load(cache_file).problem
    assert problem is not None and cache_file.name in problem and "\n" not in problem
    cache_file.unlink()
    # a cache that is fine is used with no notice
    ingest(src, out, jobs=1)
    run = ingest(src, out, jobs=1)
    assert run.notices == [] and run.counts()["cached"] == 1


def test_one_module_in_two_containers_is_one_component(tmp_path: Path) -> None:
    """A module exported as JSON and as .risum (same post id): one document, no collision;
    the same post id with another module's content stays a collision."""
    from risutools.formats import read_path

    src = tmp_path / "src"
    src.mkdir()
    risum = SOURCES / "174678332_context-cutter.risum"
    shutil.copy(risum, src / "174678332_cutter.risum")
    (module,) = read_path(risum)
    data = dict(module.data)
    data["type"] = "risuModule"
    data.pop("assets", None)
    (src / "174678332_cutter.json").write_text(json.dumps(data, ensure_ascii=False), "utf-8")
    res = ingest(src, tmp_path / "cat", jobs=1, use_cache=False)
    assert res.ok and res.collisions == []
    docs = sorted((tmp_path / "cat").glob("*.json"))
    assert [d.name for d in docs] == ["module.risu.174678332.context-cutter.json"]
    noted = [w for s in res.sources for w in s.warnings if "same module" in w]
    assert len(noted) == 1

    # another module under the same post id and name: it also carries a lorebook entry
    data["lorebook"] = [*data.get("lorebook", []), {"key": "x", "content": "a note",
                                                     "comment": "x", "mode": "normal"}]
    (src / "174678332_cutter.json").write_text(json.dumps(data, ensure_ascii=False), "utf-8")
    res = ingest(src, tmp_path / "cat2", jobs=1, use_cache=False)
    assert not res.ok and len(res.collisions) == 1 and "id-collision" in res.collisions[0]


def test_one_card_in_two_containers_is_named_a_character(tmp_path: Path) -> None:
    """The same card as a .charx and as a card JSON export: one document, and the warning
    names the component's kind (a character), not "module"."""
    import zipfile

    src = tmp_path / "src"
    src.mkdir()
    with zipfile.ZipFile(SOURCES / "184500112_heroine-card.charx") as z:
        card = json.loads(z.read("card.json"))
    card["data"].setdefault("extensions", {}).setdefault("risuai", {})["backgroundHTML"] = (
        "<div>{{getvar::mood}}</div>")  # active content of the card's own: a component
    text = json.dumps(card, ensure_ascii=False)
    with zipfile.ZipFile(src / "184500112_card.charx", "w") as z:
        z.writestr("card.json", text)
    (src / "184500112_card.json").write_text(text, "utf-8")
    res = ingest(src, tmp_path / "cat", jobs=1, use_cache=False)
    assert res.ok and res.collisions == []
    assert [d.name for d in (tmp_path / "cat").glob("*.json")] == [
        "character.risu.184500112.seorin.json"]
    noted = [w for s in res.sources for w in s.warnings if "another container" in w]
    assert len(noted) == 1 and "the same character as in 184500112_card.charx" in noted[0]


# -- the document text: the fast renderer is canonical.document_json, byte for byte --------

_ODD_TEXT = [
    "", "plain", 'quote " and back\\slash', "\x00\x01\x1f\x7f\b\f\n\r\t", "\u2028\u2029",
    "한국어 텍스트", "emoji \U0001f600", "lone \ud800 surrogate", "</script>", "a/b",
]


@pytest.mark.parametrize("value", [
    {"k": _ODD_TEXT, "nested": {"empty_list": [], "empty_map": {}, "deep": [[[{"a": [1]}]]]}},
    {"ints": [0, -1, 2**63, -(2**70), 10**30], "flags": [True, False, None]},
    {t: t for t in _ODD_TEXT},  # keys need the same escaping as values
    [],
    {},
    "top-level string",
])
def test_render_is_dumps_byte_for_byte(value: object) -> None:
    from risutools.canonical import document_json as dumps
    from risutools.catalog.ingest import render

    assert render(value, False) == dumps(value)  # type: ignore[arg-type]


@pytest.mark.parametrize("value", [
    {"f": 1.5, "g": [1e16, -0.0, 1e-7]},  # floats: left to json
    {1: "int key", "s": "x"},  # a key json coerces
    {"t": ("a", "tuple")},
    {"b": True, 2: None},
])
def test_render_leaves_what_it_does_not_take_to_json(value: object) -> None:
    from risutools.canonical import document_json as dumps
    from risutools.catalog.ingest import render

    assert render(value, False) == dumps(value)  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", [{"x": float("nan")}, {"x": float("inf")}, {"x": object()}])
def test_render_refuses_what_dumps_refuses(bad: object) -> None:
    from risutools.canonical import document_json as dumps
    from risutools.catalog.ingest import render

    with pytest.raises((ValueError, TypeError)) as fast:
        render(bad, False)  # type: ignore[arg-type]
    with pytest.raises((ValueError, TypeError)) as slow:
        dumps(bad)  # type: ignore[arg-type]
    assert type(fast.value) is type(slow.value)


def test_rendered_fixture_documents_are_dumps_byte_for_byte(tmp_path: Path) -> None:
    from risutools.canonical import document_json as dumps
    from risutools.catalog.ingest import render

    result = ingest(SOURCES, tmp_path / "cat", jobs=1, use_cache=False, lang="ko")
    docs = [d for s in result.sources for d in s.documents]
    assert len(docs) >= 8
    for doc in docs:
        assert render(doc, False) == dumps(doc)
    for p in (tmp_path / "cat").glob("*.json"):
        assert p.read_text(encoding="utf-8") == dumps(json.loads(p.read_text(encoding="utf-8")))


def test_a_folder_that_cannot_be_listed_is_a_failed_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Never a silent gap: the folder is reported (exit 1), the rest is ingested."""
    src = tmp_path / "src"
    (src / "locked").mkdir(parents=True)
    (src / "locked" / "hidden-from-us.risum").write_bytes(write_risum({"name": "H", "id": "h"}, []))
    shutil.copy(SOURCES / "186123400_mood-tracker.json", src / "186123400_mood-tracker.json")
    real_scandir = os.scandir

    def scandir(path: str | int) -> object:
        # (the walk lists a folder through its descriptor where it can)
        name = os.readlink(f"/proc/self/fd/{path}") if isinstance(path, int) \
            else os.fsdecode(path)
        if name.endswith("locked"):
            raise PermissionError(13, "Permission denied", name)
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    result = ingest(src, tmp_path / "out", jobs=1)
    assert not result.ok
    (failed,) = result.failures
    assert failed.path == "locked/"
    why = "unreadable: cannot list the folder: Permission denied"
    assert failed.error == f"{src / 'locked'}: {why}"
    assert [s.path for s in result.sources if s.status == "ok"] == ["186123400_mood-tracker.json"]


def test_an_entry_whose_type_cannot_be_told_is_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from risutools.catalog import walk as ingest_mod

    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(SOURCES / "186123400_mood-tracker.json", src / "a.json")
    shutil.copy(SOURCES / "186123400_mood-tracker.json", src / "b.json")
    real = ingest_mod._regular

    def regular(top: str, entry: os.DirEntry[str], prefix: str,
                unlisted: list[tuple[str, str]]) -> bool:
        if entry.name == "b.json":
            class Odd:
                name = entry.name
                path = entry.path

                def is_symlink(self) -> bool:
                    raise OSError(5, "Input/output error")

            return real(top, Odd(), prefix, unlisted)  # type: ignore[arg-type]
        return real(top, entry, prefix, unlisted)

    monkeypatch.setattr(ingest_mod, "_regular", regular)
    result = ingest(src, tmp_path / "out", jobs=1)
    assert [(s.path, s.error) for s in result.failures] == [
        ("b.json", f"{src / 'b.json'}: unreadable: cannot tell what it is: Input/output error")
    ]
    assert [s.path for s in result.sources if s.status == "ok"] == ["a.json"]
