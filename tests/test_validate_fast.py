"""The fast paths of ``validate`` (issue 23): each answers as the reference path it stands
for, on the fixtures and on hostile documents."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from harness import FIXTURES

from risutools import jsonlines
from risutools.canonical import doc_sha256
from risutools.contract.loaders import iter_documents
from risutools.contract.validate import validate_paths
from risutools.jsonlines import pointer_line_bytes
from risutools.jsonplaces import scan

#: hostile and awkward documents (file name, bytes): duplicate keys, NaN, deep nesting,
#: lone surrogates, a byte-order mark, huge integers, bytes that are not UTF-8, floats
HOSTILE: list[tuple[str, bytes]] = [
    ("dup.json", b'{"contract": "matrix-component-v1", "a": 1, "a": 2}'),
    ("dup-escaped.json", b'{"component_id": "x", "a": 1, "\\u0061": 2}'),
    ("nan.json", b'{"component_id": "x", "n": NaN}'),
    ("deep.json", b'{"component_id": "x", "d": ' + b"[" * 70 + b"]" * 70 + b"}"),
    ("deep-ok.json", b'{"component_id": "x", "d": ' + b"[" * 60 + b"]" * 60 + b"}"),
    ("surrogate.json", b'{"component_id": "x", "s": "\\ud800"}'),
    ("bom.json", b'\xef\xbb\xbf{"component_id": "x", "k": 1}'),
    ("huge.json", b'{"component_id": "x", "n": ' + b"9" * 40 + b"}"),
    ("latin1.json", b'{"component_id": "caf\xe9"}'),
    ("float.json", b'{"component_id": "x", "f": 1.5e-7, "g": 2.0}'),
    ("lines.ndjson", b'{"component_id": "a"}\n{"component_id": "b", "x": 1, "x": 2}\n'
                     b'{"component_id": "c", "f": 0.1}\n'),
    ("doc.yaml", b"component_id: y\ncontract: matrix-component-v1\n"),
]


def _hostile(tmp_path: Path) -> Path:
    folder = tmp_path / "hostile"
    folder.mkdir()
    for name, data in HOSTILE:
        (folder / name).write_bytes(data)
    return folder


def _paths(tmp_path: Path) -> list[Path]:
    return [FIXTURES / "documents", FIXTURES / "contract" / "good",
            FIXTURES / "contract" / "bad", FIXTURES / "contract" / "catalog",
            _hostile(tmp_path)]


def test_loading_without_hashes_gives_the_same_documents(tmp_path: Path) -> None:
    for p in _paths(tmp_path):
        with_hash = list(iter_documents(p))
        without = list(iter_documents(p, hashed=False))
        assert len(with_hash) == len(without)
        for a, b in zip(with_hash, without, strict=True):
            assert a.problems == b.problems and a.files == b.files
            assert a.skipped == b.skipped
            assert [(d.file, d.line, d.fmt, json.dumps(d.doc)) for d in a.documents] == \
                [(d.file, d.line, d.fmt, json.dumps(d.doc)) for d in b.documents]
            for d in b.documents:
                assert d.sha256 is None or d.fmt == "json"  # (a BOM's exact path hashes)
            for d in a.documents:  # the hash given is the reference one
                assert d.sha256 is None or d.sha256 == doc_sha256(d.doc)


@pytest.mark.parametrize("index", range(5))
def test_validate_without_hashes_finds_the_same(tmp_path: Path, index: int) -> None:
    p = _paths(tmp_path)[index]
    full = validate_paths([p])
    light = validate_paths([p], hashes=False)
    assert full.file_findings == light.file_findings
    assert full.files == light.files and full.skipped == light.skipped
    assert len(full.documents) == len(light.documents)
    for a, b in zip(full.documents, light.documents, strict=True):
        assert (a.file, a.line, a.component_id, a.component_version, a.findings, a.path,
                a.candidate) == (b.file, b.line, b.component_id, b.component_version,
                                 b.findings, b.path, b.candidate)
        assert b.sha256 in (None, a.sha256)
    assert full.findings == light.findings


def test_documents_past_candidate_keep_their_hash() -> None:
    """MC305 reads whether a document past candidate has a hash: it always gets it."""
    light = validate_paths([FIXTURES / "contract" / "catalog"], hashes=False)
    full = validate_paths([FIXTURES / "contract" / "catalog"])
    past = [(a, b) for a, b in zip(full.documents, light.documents, strict=True)
            if not a.candidate]
    assert past
    for a, b in past:
        assert b.sha256 == a.sha256 is not None


def _scan_line(text: str, pointer: str) -> int | None:
    """The reference: the full scan's line of ``pointer`` or of its nearest parent."""
    lines = scan(text).lines
    while pointer not in lines and pointer:
        pointer = pointer.rsplit("/", 1)[0]
    return lines.get(pointer)


_ELEMENTS = ["s", "", ",", "]", "[", "{", "}", "a, b", " ] , [", 0, -12, 1.5, True, False,
             None, "줄", "😀", "\u2028", "x\ty", 12345678901234567890]


def _array_doc(rng: random.Random) -> dict[str, Any]:
    items: list[Any] = [rng.choice(_ELEMENTS) for _ in range(rng.randrange(7))]
    if rng.random() < 0.3 and items:  # a container among them: the text walk answers
        items.insert(rng.randrange(len(items)), rng.choice([{"k": [1, ","]}, ["]", 2], {}]))
    if rng.random() < 0.3:  # an object in the array, with its own members
        items.append({"caps": [rng.choice(_ELEMENTS) for _ in range(3)], "n": "]"})
    return {"capabilities": {"requires": items, "provides": list(items)}, "k": "]"}


def test_array_elements_over_the_bytes_answer_as_the_scan(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """An element of an array of strings and scalars is found over the bytes (no text
    made): the scan's line, in every layout, with strings of brackets and commas."""
    rng = random.Random(2301)
    answered = [0, 0, 0, 0]  # lookups the bytes answered, by layout
    layout = [0]  # the layout being read
    real = jsonlines._element_bytes

    def counted(*a: Any) -> int | None:
        got = real(*a)
        answered[layout[0]] += got is not None
        return got

    monkeypatch.setattr(jsonlines, "_element_bytes", counted)
    checked = 0
    for _ in range(150):
        doc = _array_doc(rng)
        for i, text in enumerate((
                json.dumps(doc, ensure_ascii=False, indent=1),
                json.dumps(doc, ensure_ascii=False),
                json.dumps(doc, ensure_ascii=False, indent=2, separators=(" ,\r\n", " :\t")),
                "\n " + json.dumps(doc, ensure_ascii=False, indent="\t") + "\n")):
            if "\\" in text:
                continue  # (the text walk's case: covered by test_pointer_lines.py)
            layout[0] = i
            data = text.encode("utf-8")
            for p in _all_pointers(doc):
                assert pointer_line_bytes(data, p, doc) == _scan_line(text, p), (text, p)
                checked += 1
    assert checked > 5_000 and min(answered) > 500, answered


def _all_pointers(v: Any, p: str = "") -> list[str]:
    out = [p]
    if isinstance(v, dict):
        for k, x in v.items():
            out += _all_pointers(x, f"{p}/{k}")
    elif isinstance(v, list):
        for i, x in enumerate(v):
            out += _all_pointers(x, f"{p}/{i}")
        out += [f"{p}/{len(v)}", f"{p}/01", f"{p}/-", f"{p}/\u0661"]
    return out


_NAMES = ["a.json", "catalog/x.json", "a//b.json", "./a.json", "a/./b", "a/../b", "../a",
          "..", ".", "a/", "/abs/a.json", "/", "c/..", "...", "a/.../b", "..a/b..", "x\\y",
          "caf\udce9.json", "키/문서.json", "a\nb", " sp /a", "a/b/c/d/e.json"]


def _shown(name: str | Path) -> str:
    from risutools.contract.shown import display_path

    try:
        return display_path(name)  # type: ignore[arg-type]  # (a str too: catalog callers)
    except AttributeError as exc:  # (a str outside the folder: the long way reads .parent)
        return f"crash: {exc}"


def test_display_path_of_a_clean_relative_name_is_the_long_way(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A relative name normpath keeps as it is is shown as itself: what the walk through
    the normalized absolute path gives (asked for every name, as a Path and as a str, in a
    folder and at /)."""
    from risutools.contract import shown

    for cwd in (tmp_path, Path("/")):
        for name in [*_NAMES, *map(Path, _NAMES)]:
            monkeypatch.chdir(cwd)
            fast = _shown(name)
            monkeypatch.setattr(shown, "_clean_relative", lambda _n: False)
            assert fast == _shown(name), (cwd, name)
            monkeypatch.undo()
    assert sum(shown._clean_relative(n) for n in _NAMES) >= 8


def test_lazy_patterns_search_as_the_compiled_ones() -> None:
    """Every pattern of the detector's tables is compiled on its first search and answers
    as the same pattern compiled at once (flags kept), at every position and window."""
    import re

    from risutools.contract import activecode as ac

    texts = ["local x = 1", "JavaScript:alert(1)", "<SCRIPT src=x>", "a\n^abc$\nb",
             "if x then\n", "foo(bar)", "{{setvar::a::1}}", "x = y", "[^abc]", "(?:a)",
             "prose only, nothing here", "", "한글 (설명) 1.5", "a --  comment"]
    table = [rx for _, _, rx in ac._STRONG + ac._WEAK] + [ac._JS_URL]
    for lazy in table:
        fresh = ac.LazyPattern(lazy.pattern, lazy.flags)
        assert "search" not in vars(fresh)
        ref = re.compile(lazy.pattern, lazy.flags)
        for text in texts:
            for pos, end in ((0, len(text)), (1, len(text)), (0, max(0, len(text) - 2))):
                want = ref.search(text, pos, end)
                for lazy_one in (ac.LazyPattern(lazy.pattern, lazy.flags), fresh):
                    got = lazy_one.search(text, pos, end)  # a first search, and a later one
                    assert (got.span() if got else None) == (want.span() if want else None)
        assert "search" in vars(fresh)  # compiled once, then its own search in place
    assert any(rx.flags & re.IGNORECASE for rx in table)
    assert any(rx.flags & re.MULTILINE for rx in table)


def test_the_json_report_shows_every_documents_hash(tmp_path: Path) -> None:
    """``validate -f json`` (the format that shows them: ``Reporter.shows_hashes``) gives
    each document its canonical hash, a candidate's too, whatever the other formats skip."""
    from harness import run_cli

    from risutools.report.reporters import REPORTER_BY_NAME, shows_hashes

    assert [n for n, r in REPORTER_BY_NAME.items() if r.shows_hashes] == ["json"]
    assert shows_hashes("json") and not shows_hashes("concise")
    paths = _paths(tmp_path)
    p = run_cli("validate", "-f", "json", *map(str, paths))
    assert p.returncode in (0, 1), p.stderr
    shown = json.loads(p.stdout)["documents"]
    wanted = [d for path in paths for part in iter_documents(path) for d in part.documents]
    assert len(shown) == len(wanted) > 10
    for d, ld in zip(shown, wanted, strict=True):
        assert d["sha256"] == doc_sha256(ld.doc), d["file"]
